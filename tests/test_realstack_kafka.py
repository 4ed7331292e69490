"""Apache Kafka in the loop: the pinned release's broker (``apache-kafka``) and its Java consumer (``java``) in the
real-stack harness. The broker is started once per test run and xdist worker at most (a session fixture, started by
the first test that needs it) and every run attaches to it with a group of its own."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
import sys
from pathlib import Path

import pytest

from groupspec import kafka
from groupspec.realstack import COORDINATORS, SCENARIOS, HarnessError, run
from groupspec.realstack import apache_kafka
from groupspec.realstack.apache_kafka import GROUP_SETTINGS, ApacheKafka, KafkaBroker, shared_broker
from groupspec.realstack.coordinators import CoordinatorError
from groupspec.realstack.scenarios import RealScenario, Step
from groupspec.trace import check_events, check_paths

GS = str(Path(sys.executable).parent / "groupspec")
TOKEN = f"gs-kafka-test-{os.getpid()}"
os.environ.setdefault("GROUPSPEC_TEST_OWNER", TOKEN)


def _children() -> set[int]:
    """Live processes that carry this test run's token in their environment (the broker, workers), not itself."""
    mine = set()
    owner = f"GROUPSPEC_TEST_OWNER={os.environ['GROUPSPEC_TEST_OWNER']}".encode()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            env = (d / "environ").read_bytes()
            state = (d / "stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        if owner in env and state != "Z":
            mine.add(int(d.name))
    return mine


# pair-joins with time for JVMs: a Java worker took up to 6.5 s to start on the busy 2-core machine (load ~15)
PAIR = RealScenario("pair-joins-jvm", "two consumers join 1 s apart, 16 s", (Step(0, "start", "c1"), Step(1, "start", "c2")), 16)


@pytest.fixture(autouse=True)
def _pair_scenario(monkeypatch):
    monkeypatch.setitem(SCENARIOS, PAIR.name, PAIR)


@pytest.fixture(scope="session")
def broker():
    with shared_broker() as b:
        print(f"apache-kafka {kafka.KAFKA_VERSION} started in {b.start_seconds:.1f} s")
        yield b


def _lines(res) -> list[dict]:
    return [json.loads(x) for x in Path(res.trace_path).read_text().splitlines()]


@pytest.mark.parametrize("client,protocol", [("java", "eager"), ("confluent-kafka", "eager"), ("java", "cooperative"),
                                             ("java", "consumer"), ("confluent-kafka", "consumer"),
                                             ("franz-go", "cooperative")])
def test_pair_joins_on_apache_kafka(broker, tmp_path: Path, client: str, protocol: str):
    before = _children()
    res = run(PAIR.name, client, "apache-kafka", protocol, out_dir=str(tmp_path))
    assert _children() <= before, "the harness left processes behind (the shared broker is older than the run)"
    assert res.ok and res.judged and not res.silent, json.dumps(res.verdict, indent=1)[:3000]
    lines = _lines(res)
    header = lines[0]
    assert header["event"] == "coordinator" and header["coordinator"] == "apache-kafka"
    assert header["version"] == kafka.KAFKA_VERSION and header["settings"] == GROUP_SETTINGS
    trace_protocol = "consumer" if protocol == "consumer" else protocol
    assigned = [e for e in lines if e["event"] == "assigned" and e["partitions"]]
    assert {e["member"] for e in assigned} == {"c1", "c2"}  # both got partitions from the real coordinator
    assert {e["protocol"] for e in assigned} == {trace_protocol}
    assert all(e["group"] == "g" for e in lines)  # the run's own group id on the shared broker is not in the trace
    assert all(e.get("member_id") for e in assigned)
    if client == "java" or protocol == "consumer":  # librdkafka tells no generation under the classic protocol
        assert all(type(e.get("generation")) is int and e["generation"] > 0 for e in assigned)
        assert min(e["generation"] for e in assigned) <= 2  # a fresh group: no earlier run's generations in it
    g = res.verdict["groups"][0]
    assert g["periods"][-1]["members"] == ["c1", "c2"] and g["periods"][-1]["converged_at_ms"] is not None
    if client == "java":  # the Java worker's commits: accepted by the broker, or refused with its error
        commits = [e for e in lines if e["event"] == "commit"]  # (REBALANCE_IN_PROGRESS during a join phase)
        assert {e["member"] for e in commits if e["accepted"]} == {"c1", "c2"}, commits[:3]
        assert all(e["accepted"] or e["error"] for e in commits)
    assert check_paths([res.trace_path]).ok  # the recorded trace is a trace like any other


def test_java_static_member_has_its_instance_id(broker, tmp_path: Path):
    res = run(PAIR.name, "java", "apache-kafka", "consumer-static", out_dir=str(tmp_path))
    assert res.ok, json.dumps(res.verdict, indent=1)[:3000]
    joined = [e for e in _lines(res) if e["event"] == "joined"]
    assert sorted((e["member"], e["instance_id"]) for e in joined) == [("c1", "c1-static"), ("c2", "c2-static")]
    assert "session_timeout_ms" not in joined[0]  # the consumer protocol's session timeout is the broker's


def test_a_coordinator_line_is_a_header_and_not_a_defect():
    base = [{"ts_ms": 0, "event": "topic", "topic": "t", "partitions": 1},
            {"ts_ms": 1, "member": "c1", "event": "joined"},
            {"ts_ms": 2, "member": "c1", "event": "assigned", "partitions": [["t", 0]]}]
    assert check_events([{"ts_ms": 0, "event": "coordinator", "coordinator": "apache-kafka"}, *base]).ok
    other = check_events([{"ts_ms": 0, "event": "banner"}, *base]).to_dict()  # any other member-less kind is
    wf = [p for p in other["groups"][0]["properties"] if p["id"] == "well_formed"][0]
    assert wf["verdict"] == "violated"


def test_migration_policy_is_settable_and_written(tmp_path: Path):
    b = KafkaBroker({"group.consumer.migration.policy": "upgrade"})
    b.dir = tmp_path
    text = b._write_config(1, 2).read_text()
    assert "group.consumer.migration.policy=upgrade\n" in text and "group.initial.rebalance.delay.ms=0\n" in text
    assert b.header()["settings"]["group.consumer.migration.policy"] == "upgrade"


def test_a_taken_port_is_one_line(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(apache_kafka, "_SHARED", [])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        monkeypatch.setenv("GROUPSPEC_KAFKA_PORT", str(port))
        with pytest.raises(HarnessError, match=rf"^port 127\.0\.0\.1:{port} is taken$"):
            run("pair-joins", "java", "apache-kafka", out_dir=str(tmp_path))
        p = subprocess.run([GS, "realstack", "run", "pair-joins", "--client", "java", "--coordinator", "apache-kafka",
                            "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 3 and p.stderr == f"groupspec: error: apache-kafka: port 127.0.0.1:{port} is taken\n"


def test_no_java_is_one_line_and_starts_nothing(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    monkeypatch.setattr(apache_kafka, "_SHARED", [])  # not the session's broker: a broker of its own
    before = _children()
    coord = COORDINATORS["apache-kafka"]()
    with pytest.raises(CoordinatorError, match=r"^Java not found on JAVA_HOME=.*no-jdk: Apache Kafka 4\.3\.1 needs"):
        coord.start()
    assert _children() <= before
    assert coord.broker is not None and coord.broker.dir is None  # its temporary directory is gone


def test_jars_not_fetched_is_one_line(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("GROUPSPEC_CACHE", str(tmp_path))
    monkeypatch.setattr(apache_kafka, "_SHARED", [])
    with pytest.raises(CoordinatorError, match=r"^Apache Kafka 4\.3\.1's jars are not fetched yet: run"):
        ApacheKafka().start()
    with pytest.raises(HarnessError, match=r"^java: Apache Kafka .* not fetched yet"):
        run("pair-joins", "java", "librdkafka-mock", out_dir=str(tmp_path))


def test_a_broker_that_dies_at_start_says_why(tmp_path: Path):
    b = KafkaBroker({"group.consumer.migration.policy": "sideways"})  # refused by Kafka's config validation
    with pytest.raises(CoordinatorError, match=r"(sideways|SIDEWAYS|migration)"):
        b.start()
    assert b.proc is None and b.dir is None  # stopped and cleaned


@pytest.mark.parametrize("args,says", [
    (["--broker-config", "policy"], "--broker-config 'policy': expected KEY=VALUE"),
    (["--broker-config", "group.consumer.migration.policy=upgrade", "--coordinator", "tansu"],
     "--broker-config: only the apache-kafka coordinator takes broker settings (not tansu)"),
])
def test_broker_config_bad_input_is_one_line(tmp_path: Path, args: list[str], says: str):
    base = ["realstack", "run", "pair-joins", "--client", "java", "--out", str(tmp_path / "out")]
    if "--coordinator" not in args:
        base += ["--coordinator", "apache-kafka"]
    p = subprocess.run([GS, *base, *args], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stderr == f"groupspec: error: {says}\n", p.stderr
    assert not (tmp_path / "out").exists()  # refused before any work


def test_a_scenario_for_some_clients_refuses_the_others(tmp_path: Path):
    with pytest.raises(HarnessError, match="^scenario static-member-left-behind runs with java, confluent-kafka only$"):
        run("static-member-left-behind", "kafka-python", "apache-kafka", out_dir=str(tmp_path))


@pytest.mark.parametrize("after_s", [0.0, 1.0, 4.5])  # after the broker's directory appears: while the storage is
# formatted / the broker starts or runs (counted from the directory, not from the start: on a loaded machine the
# CLI's own imports can take longer than a fixed delay, and a Ctrl-C then lands before any broker exists)
def test_ctrl_c_stops_the_broker_and_cleans_up(tmp_path: Path, after_s: float):
    import signal
    import time

    before = _children()
    dirs = set(Path(tempfile.gettempdir()).glob("gs-kafka-*"))
    p = subprocess.Popen([GS, "realstack", "run", "pair-joins", "--client", "java", "--coordinator", "apache-kafka",
                          "--out", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not set(Path(tempfile.gettempdir()).glob("gs-kafka-*")) - dirs and p.poll() is None:
        assert time.monotonic() < deadline, "the broker's directory never appeared"
        time.sleep(0.05)
    time.sleep(after_s)
    p.send_signal(signal.SIGINT)
    _out, err = p.communicate(timeout=120)
    assert p.returncode == 130 and "interrupted" in err, err
    assert _children() <= before, "a broker or worker outlived the Ctrl-C"
    assert set(Path(tempfile.gettempdir()).glob("gs-kafka-*")) <= dirs  # the broker's directory is gone
