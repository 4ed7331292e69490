"""The rebalance-listener snippets of docs/listeners.md, run for real: each writes a trace that
`groupspec trace check` accepts.

For every snippet (confluent-kafka, kafka-python, aiokafka in docs/snippets/*.py; Java's
docs/snippets/TraceListener.java, compiled with javac against the pinned Kafka jars) the test starts
`groupspec serve`, runs one consumer until it owns all six partitions, a second one until the two
share them, stops the second until the first owns all six again, stops the first, puts the two
files together as the page says (`cat`) and runs `groupspec trace check` on the result: exit 0, with
both members seen joining, being assigned, revoked and leaving, and the topic's partition count.
"""
from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = ROOT / "docs" / "snippets"
EXE = str(Path(sys.executable).with_name("groupspec"))


def load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"snippet_{name}", SNIPPETS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def served():
    proc = subprocess.Popen([EXE, "serve", "--port", "0", "--json", "--initial-rebalance-delay-ms", "300",
                             "--partitions", "t=6"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line, proc.stderr.read()
        yield json.loads(line)["bootstrap"]
    finally:
        proc.terminate()
        proc.wait(30)


def owned(path: Path) -> set[tuple[str, int]]:
    """What the member of one trace file owns after its last line (the contract's reading of the events)."""
    mine: set[tuple[str, int]] = set()
    if not path.exists():
        return mine
    for line in path.read_text().splitlines():
        e = json.loads(line)
        parts = {(t, p) for t, p in e.get("partitions", [])} if e["event"] != "topic" else set()
        if e["event"] == "assigned":
            mine = parts if e.get("protocol", "eager") == "eager" else mine | parts
        elif e["event"] in ("revoked", "lost"):
            mine -= parts
        elif e["event"] == "left":
            mine = set()
    return mine


def wait_for(cond: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def confluent(bootstrap: str, path: Path, name: str, stop: threading.Event) -> None:
    from confluent_kafka import Consumer

    snip = load("trace_confluent_kafka")
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "g", "client.id": name, "session.timeout.ms": 10000,
                  "heartbeat.interval.ms": 300, "auto.offset.reset": "earliest"})
    trace = snip.TraceWriter(str(path), member=name, group="g")
    snip.subscribe_with_trace(c, ["t"], trace)
    try:
        while not stop.is_set():
            c.poll(0.1)
    finally:
        c.close()
        trace.close()


def kafka_python(bootstrap: str, path: Path, name: str, stop: threading.Event) -> None:
    from kafka import KafkaConsumer

    snip = load("trace_kafka_python")
    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id="g", client_id=name, session_timeout_ms=10000,
                      heartbeat_interval_ms=300, retry_backoff_ms=50)
    trace = snip.TraceWriter(str(path), member=name, group="g")
    c.subscribe(["t"], listener=snip.TraceListener(c, trace))
    try:
        while not stop.is_set():
            c.poll(1000)  # kafka-python 3.0.12 strands a member whose rejoin outlasts a poll (findings.md, 7)
    finally:
        c.close()
        trace.close()


def aiokafka(bootstrap: str, path: Path, name: str, stop: threading.Event) -> None:
    from aiokafka import AIOKafkaConsumer

    snip = load("trace_aiokafka")

    async def main() -> None:
        c = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id="g", client_id=name, session_timeout_ms=10000,
                             heartbeat_interval_ms=300, retry_backoff_ms=50)
        trace = snip.TraceWriter(str(path), member=name, group="g")
        c.subscribe(["t"], listener=snip.TraceListener(c, trace))
        await c.start()
        try:
            while not stop.is_set():
                await c.getmany(timeout_ms=100)
        finally:
            await c.stop()
            trace.close()

    asyncio.run(main())


ALL = {("t", p) for p in range(6)}


def check_merged(tmp: Path, files: list[Path]) -> None:
    merged = tmp / "group.jsonl"
    merged.write_text("".join(f.read_text() for f in files))  # `cat traces/*.jsonl > group.jsonl`
    events = [json.loads(line) for line in merged.read_text().splitlines()]
    for f in files:
        member = f.stem
        kinds = {e["event"] for e in events if e["member"] == member}
        assert {"joined", "assigned", "revoked", "left"} <= kinds, (member, kinds)
    assert {"event": "topic", "topic": "t", "partitions": 6}.items() <= next(e for e in events if e["event"] == "topic").items()
    r = subprocess.run([EXE, "trace", "check", str(merged), "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[:3000] + r.stderr
    report = json.loads(r.stdout)
    (group,) = report["traces"][0]["groups"]
    assert sorted(group["members"]) == sorted(f.stem for f in files)
    assert all(p["verdict"] == "held" for p in group["properties"]), group["properties"]
    # and the check has teeth on this very trace: a listener that forgot to write its revocations, read
    # incrementally, leaves the first member owning what the second is given
    first = files[0].stem
    broken = tmp / "broken.jsonl"
    broken.write_text("".join(line.replace('"eager"', '"cooperative"') + "\n" for line in merged.read_text().splitlines()
                              if not (json.loads(line)["member"] == first and json.loads(line)["event"] == "revoked")))
    r = subprocess.run([EXE, "trace", "check", str(broken), "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout[:3000] + r.stderr
    verdicts = {p["id"]: p["verdict"] for p in json.loads(r.stdout)["traces"][0]["groups"][0]["properties"]}
    assert verdicts["exclusive_ownership"] == "violated", verdicts


def scenario(tmp: Path, start: Callable[[str, Path, threading.Event], None]) -> None:
    """One consumer owns everything; a second joins and they share; the second leaves; the first owns everything."""
    a, b = tmp / "m0.jsonl", tmp / "m1.jsonl"
    stop_a, stop_b = threading.Event(), threading.Event()
    ta = threading.Thread(target=start, args=("m0", a, stop_a), daemon=True)
    tb = threading.Thread(target=start, args=("m1", b, stop_b), daemon=True)
    try:
        ta.start()
        wait_for(lambda: owned(a) == ALL, "the first consumer to own all six partitions")
        tb.start()
        wait_for(lambda: owned(a) | owned(b) == ALL and len(owned(a)) == len(owned(b)) == 3, "the two to share them")
        stop_b.set()
        tb.join(60)
        wait_for(lambda: owned(a) == ALL, "the first to own all six again")
    finally:
        stop_a.set()
        stop_b.set()
        ta.join(60)
        tb.join(60)
    assert not ta.is_alive() and not tb.is_alive()
    check_merged(tmp, [a, b])


@pytest.mark.parametrize("client", [confluent, kafka_python, aiokafka], ids=["confluent-kafka", "kafka-python", "aiokafka"])
def test_python_snippet_writes_a_trace_that_trace_check_accepts(client, served, tmp_path):
    scenario(tmp_path, lambda name, path, stop: client(served, path, name, stop))


def test_java_snippet_compiles_and_writes_a_trace_that_trace_check_accepts(served, tmp_path):
    from groupspec import kafka
    from groupspec.kafka.jars import _javac

    jars = kafka.ensure_jars()
    java = kafka.java_binary()
    cp = os.pathsep.join(str(j) for j in sorted(Path(jars).glob("*.jar")))
    classes = tmp_path / "classes"
    r = subprocess.run([_javac(java), "-d", str(classes), "-cp", cp, str(SNIPPETS / "TraceListener.java"),
                        str(ROOT / "tests" / "listener_java" / "TracedConsumers.java")], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    cp = os.pathsep.join([str(classes), cp])
    a, b = tmp_path / "java-0.jsonl", tmp_path / "java-1.jsonl"
    stop_a, stop_b = tmp_path / "stop-a", tmp_path / "stop-b"

    def start(name: str, stop: Path) -> subprocess.Popen:
        return subprocess.Popen([java, "-cp", cp, "TracedConsumers", served, str(tmp_path), str(stop), name],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    pa = start("java-0", stop_a)
    pb = None
    try:
        wait_for(lambda: owned(a) == ALL, "the first Java consumer to own all six partitions", 120)
        pb = start("java-1", stop_b)
        wait_for(lambda: len(owned(a)) == len(owned(b)) == 3 and owned(a) | owned(b) == ALL, "the two to share them", 120)
        stop_b.touch()
        assert pb.wait(60) == 0, pb.stderr.read()
        wait_for(lambda: owned(a) == ALL, "the first to own all six again", 120)
    finally:
        stop_a.touch()
        stop_b.touch()
        for p in (pa, pb):
            if p is not None:
                p.wait(60)
    assert pa.returncode == 0, pa.stderr.read()
    check_merged(tmp_path, [a, b])
