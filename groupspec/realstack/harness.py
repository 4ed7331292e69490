"""The harness: run one scenario with one client library against one coordinator, record, check.

Theory of operation
-------------------
1. Start the coordinator (its own process group) and make topic ``t`` with the scenario's partition
   count (and any topic a member subscribes to later).
2. Fix the clock origin (wall-clock ms now). Follow the schedule: ``start`` spawns a worker process
   (``groupspec.realstack.worker``, its own process group) for the member; ``leave`` tells it to close
   cleanly; ``crash`` SIGKILLs its process group and writes ``left`` for it at that moment (a crash
   releases whatever it owned: the process is gone); ``pause`` makes it stop polling; ``freeze`` stops
   its whole process group (SIGSTOP: heartbeat thread and all, as a long GC pause or a suspended VM would)
   for the step's seconds, then lets it run on (SIGCONT), and writes a ``frozen`` line (``seconds``) for it;
   ``subscribe`` changes its subscription (and adds the topic's ``topic`` line).
3. After the schedule the run lasts at least the scenario's story (``duration_s``), then ends as
   soon as the group has converged or at the scenario's limit (``limit_s``), whichever comes first
   (``ending.py``; the verdict's ``ended`` says which: ``converged`` or ``limit``). Then every worker is killed and lines after the end are dropped (the
   harness's own shutdown is not part of the story); an ``end`` line marks the moment, so what was
   still unowned or unconverged then is measured until the end of the recording. A worker's ``joined``
   line gets the member's ``session_timeout_ms`` (the checker's ``starved_members`` notice uses it; not
   with ``consumer``, whose session timeout is the broker's). A member started that recorded no line at
   all (its client never came up) is *silent*: the verdict's notes name it, and a run where every member
   is silent judged nothing. The workers' lines and the harness's are merged
   by time into one trace, written to ``OUT/RUN.jsonl`` with its verdict (the trace checker's JSON plus
   the run's description) in ``OUT/RUN.verdict.json``, each written under a temporary name and renamed.
   The processes' output is ``OUT/RUN.log``; with ``coordinator_log`` the coordinator is asked for its
   debug log of the group protocol (``Coordinator.verbose``) and its output is ``OUT/RUN.coordinator.log``.
4. Whatever happens (an error, Ctrl-C), every process started is stopped: workers and coordinator are
   killed by process group in a ``finally``, and the run's scratch directory is removed. A Ctrl-C is held
   while a process is started (until its handle is kept) and while everything is stopped
   (``interrupts_held``), so neither step is cut in two.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groupspec.trace import check_events

from .coordinators import COORDINATORS, CoordinatorError, interrupts_held, kill_group
from .ending import SETTLE_S, Ownership, read_new
from .scenarios import SCENARIOS, RealScenario, Step

__all__ = ["CLIENTS", "PROTOCOLS", "RunResult", "run", "run_id", "HarnessError", "supported"]

CLIENTS = ("confluent-kafka", "kafka-python", "aiokafka", "kafkajs", "java", "franz-go", "sarama")  # java: Apache
# Kafka's KafkaConsumer; franz-go and sarama: Go clients (groupspec/realstack/franzgo/, sarama/, built with the machine's Go)
KAFKAJS_DIR = Path(sys.prefix) / "node"  # `make kafkajs` installs the npm package kafkajs here
PROTOCOLS = ("eager", "cooperative", "static", "consumer", "consumer-range", "consumer-static", "static-cooperative")
# consumer: group.protocol=consumer (KIP-848) with the broker's default assignor (uniform); consumer-range: with
# group.remote.assignor=range; consumer-static: with a group.instance.id (the trace's protocol is consumer for all three)
CONSUMER_PROTOCOLS = ("consumer", "consumer-range", "consumer-static")
GROUP = "g"
CRASH_WAIT_S = 20.0  # how long a crash step waits, past its time, for its member to have been assigned partitions


def _wait_assigned(path: Path, deadline: float) -> bool:
    """Wait until the worker writing ``path`` has recorded an assignment with partitions, or ``deadline``
    (``time.time()``) passes; whether it has. A crash step kills a member that owns something: on a loaded
    machine the first rebalance can take longer than the scenario's schedule allows, and a member killed before
    it was ever assigned is another scenario (it leaves nothing to move)."""
    offset = 0
    while True:
        lines, offset = read_new(path, offset)
        if any(e.get("event") == "assigned" and e.get("partitions") for e in lines):
            return True
        if time.time() >= deadline:
            return False
        time.sleep(0.1)


class HarnessError(RuntimeError):
    """The stack could not run (coordinator did not start, a client library is missing)."""


class ClientMissing(HarnessError):
    """The client library a run needs is not installed (the message says which, in one line)."""


_CLIENT_MODULES = {"confluent-kafka": "confluent_kafka", "kafka-python": "kafka", "aiokafka": "aiokafka"}


def _check_client(client: str) -> None:
    """Raise :class:`ClientMissing` when ``client``'s Python library cannot be imported here (the worker
    processes import it with the same interpreter)."""
    if client in _GO_CLIENTS:  # built once per source version, before the run (not at the first worker's start)
        try:
            _go_binary(client)
        except RuntimeError as e:
            raise ClientMissing(str(e)) from None
        return
    module = _CLIENT_MODULES.get(client)
    if module is None:
        return  # kafkajs: node and the npm package are checked when the worker is started
    import importlib

    try:
        importlib.import_module(module)
    except ImportError as e:
        raise ClientMissing(f"client {client}: the Python package {client} is not installed "
                            f"(import {module}: {e}); install it with: pip install {client}") from None


_GO_CLIENTS = ("franz-go", "sarama")


def _go_binary(client: str) -> Path:
    """The built Go worker of ``client`` (FranzGoError or SaramaError, one line, when Go is missing or the build fails)."""
    if client == "sarama":
        from .sarama import sarama_binary

        return sarama_binary()
    from .franzgo import franzgo_binary

    return franzgo_binary()


def supported(client: str, protocol: str) -> str | None:
    """Why ``client`` cannot run ``protocol`` here (None when it can)."""
    if client == "java":
        return None  # Apache Kafka's own consumer: every protocol
    if client == "franz-go":
        if protocol in CONSUMER_PROTOCOLS:
            return "franz-go has no group.protocol=consumer (KIP-848) client in the harness"
        return None  # classic: range, cooperative-sticky, static
    if client == "sarama":
        if protocol in CONSUMER_PROTOCOLS:
            return "sarama has no group.protocol=consumer (KIP-848) client"
        return None  # classic: range, cooperative-sticky (sarama >= 1.61), static, static with cooperative-sticky
    if protocol == "static-cooperative" and client != "confluent-kafka":
        return f"{client} has no cooperative-sticky assignor for the classic protocol in the harness"
    if protocol in CONSUMER_PROTOCOLS and client != "confluent-kafka":
        return f"{client} has no group.protocol=consumer (KIP-848) client in the harness"
    if protocol == "cooperative" and client != "confluent-kafka":
        return f"{client} has no cooperative-sticky assignor for the classic protocol in the harness"
    if client == "kafkajs" and protocol == "static":
        return "kafkajs has no static membership (no group.instance.id)"
    return None


def _java_worker_command(spec: dict[str, Any]) -> list[str]:
    """Apache Kafka's Java consumer (groupspec/kafka/java/groupspec/kafka/consumer/Worker.java, compiled at set-up)."""
    from groupspec.kafka import KafkaSetupError, classpath, java_binary

    try:
        java, cp = java_binary(), classpath(fetch=False)
    except KafkaSetupError as e:
        raise HarnessError(f"java: {e}") from None
    return [java, "-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", cp,
            "groupspec.kafka.consumer.Worker", json.dumps(spec)]


def _worker_command(client: str, spec: dict[str, Any]) -> tuple[list[str], dict[str, str] | None]:
    if client == "java":
        return _java_worker_command(spec), None
    if client in _GO_CLIENTS:
        try:
            return [str(_go_binary(client)), json.dumps(spec)], None
        except RuntimeError as e:
            raise HarnessError(str(e)) from None
    if client != "kafkajs":
        return [sys.executable, "-m", "groupspec.realstack.worker", json.dumps(spec)], None
    node = shutil.which("node")
    modules = KAFKAJS_DIR / "node_modules"
    if node is None or not (modules / "kafkajs").is_dir():
        raise HarnessError(f"kafkajs needs node and the kafkajs package in {modules} (run: make kafkajs)")
    env = dict(os.environ, NODE_PATH=str(modules))
    return [node, str(Path(__file__).with_name("kafkajs_worker.js")), json.dumps(spec)], env


def run_id(scenario: str, client: str, coordinator: str, protocol: str) -> str:
    return f"{scenario}--{client}--{coordinator}--{protocol}"


@dataclass
class RunResult:
    scenario: str
    client: str
    coordinator: str
    protocol: str
    ok: bool
    trace_path: str | None
    verdict_path: str | None
    verdict: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    partitions: int = 0
    silent: list[str] = field(default_factory=list)  # started, but recorded nothing
    judged: bool = True  # False when every member started was silent: the verdict is about nobody
    ended: str = "converged"  # why the run ended: "converged" (the group had) or "limit" (the limit passed)

    def summary(self) -> dict[str, Any]:
        violated = sorted({p["id"] for g in self.verdict.get("groups", []) for p in g["properties"]
                           if p["verdict"] == "violated"})
        return {"scenario": self.scenario, "client": self.client, "coordinator": self.coordinator,
                "protocol": self.protocol, "ok": self.ok, "violated": violated, "trace": self.trace_path,
                "verdict": self.verdict_path, "partitions": self.partitions, "notes": self.notes,
                "seconds": round(self.seconds, 1), "ended": self.ended, **({"silent": self.silent} if self.silent else {}),
                **({} if self.judged else {"judged": False})}


class _Worker:
    def __init__(self, member: str, proc: subprocess.Popen[str]) -> None:
        self.member = member
        self.proc = proc


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:  # an error or Ctrl-C: no half-written file stays behind
        tmp.unlink(missing_ok=True)
        raise


def run(scenario: str, client: str, coordinator: str, protocol: str | None = None, out_dir: str | None = None,
        progress: Callable[[str], None] | None = None, coordinator_log: bool = False,
        coordinator_settings: dict[str, str] | None = None) -> RunResult:
    """Run ``scenario``; raise :class:`HarnessError` when the stack cannot run at all.

    ``coordinator_settings``: settings for a coordinator that takes them (``apache-kafka``: broker settings, e.g.
    ``group.consumer.migration.policy``), written in the trace's header line."""
    sc: RealScenario = SCENARIOS[scenario]
    protocol = protocol or sc.default_protocol
    if sc.clients and client not in sc.clients:
        raise HarnessError(f"scenario {scenario} runs with {', '.join(sc.clients)} only")
    why = supported(client, protocol)
    if why:
        raise HarnessError(why)
    say = progress or (lambda _m: None)
    _check_client(client)
    t_start = time.monotonic()
    rid = run_id(scenario, client, coordinator, protocol)
    out = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="groupspec-realstack-"))
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"gs-{rid}-"))
    log = open(work / "processes.log", "w", encoding="utf-8")
    clog = open(work / "coordinator.log", "w", encoding="utf-8") if coordinator_log else log
    coord = COORDINATORS[coordinator](log=clog)
    coord.verbose = coordinator_log
    if coordinator_settings:
        if not hasattr(coord, "overrides"):
            log.close()
            clog.close()
            shutil.rmtree(work, ignore_errors=True)
            raise HarnessError(f"{coordinator} takes no coordinator settings")
        coord.overrides = dict(coordinator_settings)
    workers: dict[str, _Worker] = {}
    harness_lines: list[dict[str, Any]] = []
    finished = False
    try:
        say(f"starting {coordinator}")
        try:
            bootstrap = coord.start()
            group_id = coord.group_id(GROUP) if hasattr(coord, "group_id") else GROUP  # a shared broker: one per run
            parts = coord.create_topic("t", sc.partitions)
            extra = {t: coord.create_topic(t, n) for t, n in sc.extra_topics.items()}
        except CoordinatorError as e:
            raise HarnessError(str(e)) from None
        origin = time.time() * 1000

        def now() -> int:
            return int(time.time() * 1000 - origin)

        header = coord.header() if hasattr(coord, "header") else None
        if header:  # the coordinator and its settings, as the trace's first line
            harness_lines.append({"ts_ms": 0, "group": GROUP, "event": "coordinator", **header})
        harness_lines.append({"ts_ms": 0, "group": GROUP, "event": "topic", "topic": "t", "partitions": parts})
        subs: dict[str, list[str]] = {}
        protocols: dict[str, str] = {}  # member -> the protocol its worker runs (written on its subscribed lines)
        for step in _schedule(sc):
            delay = origin / 1000 + step.at_s - time.time()
            if delay > 0:
                time.sleep(delay)
            say(f"{step.at_s:5.1f}s {step.action} {step.member}")
            w = workers.get(step.member)
            if step.action == "start":
                # "protocol=P": this start uses protocol P (an online upgrade or downgrade), not the run's
                opts = [o for o in step.arg.split(";") if o]
                member_protocol = next((o.split("=", 1)[1] for o in opts if o.startswith("protocol=")), protocol)
                own_topics = [o for o in opts if o != "idle" and not o.startswith("protocol=")]
                if own_topics:  # topics of its own
                    subs[step.member] = own_topics[0].split(",")
                    for t in subs[step.member]:
                        if t in extra:
                            harness_lines.append({"ts_ms": now(), "group": GROUP, "event": "topic", "topic": t,
                                                  "partitions": extra[t]})
                spec: dict[str, Any] = {
                    "client": client, "bootstrap": bootstrap, "group": group_id, "member": step.member,
                    "topics": [] if "idle" in opts else subs.get(step.member, ["t"]),
                    **({"revoke_delay_ms": sc.revoke_delay_ms} if sc.revoke_delay_ms else {}),
                    "protocol": "consumer" if member_protocol in CONSUMER_PROTOCOLS
                    else "cooperative" if member_protocol in ("cooperative", "static-cooperative") else "eager",
                    **({"assignor": "range"} if member_protocol == "consumer-range" else {}),
                    "instance_id": f"{step.member}-static"
                    if member_protocol in ("static", "consumer-static", "static-cooperative") else None,
                    "origin_ms": origin, "out": str(work / f"{step.member}.jsonl"), **sc.client_timeouts,
                }
                # its subscription, for the balance check (a member that subscribes to fewer topics owns fewer)
                protocols[step.member] = spec["protocol"]
                harness_lines.append({"ts_ms": now(), "group": GROUP, "member": step.member, "event": "subscribed",
                                      "topics": spec["topics"], "protocol": spec["protocol"]})
                cmd, env = _worker_command(client, spec)
                with interrupts_held():  # no worker runs without its handle in `workers`
                    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=log, stderr=log, text=True,
                                            start_new_session=True, env=env)
                    workers[step.member] = _Worker(step.member, proc)
            elif w is None or w.proc.poll() is not None:
                continue
            elif step.action == "freeze":
                os.killpg(w.proc.pid, signal.SIGSTOP)
                harness_lines.append({"ts_ms": now(), "group": GROUP, "member": step.member, "event": "frozen",
                                      "seconds": float(step.arg)})
            elif step.action == "thaw":
                os.killpg(w.proc.pid, signal.SIGCONT)
            elif step.action == "crash":
                t0 = time.time()
                if not _wait_assigned(work / f"{step.member}.jsonl", t0 + CRASH_WAIT_S):
                    say(f"{step.member} was assigned no partitions in {CRASH_WAIT_S:.0f} s past its crash time: killed anyway")
                elif time.time() - t0 > 0.5:
                    say(f"{step.member} was assigned its partitions {time.time() - t0:.1f} s past its crash time: killed now")
                os.killpg(w.proc.pid, 9)
                w.proc.wait(10)
                harness_lines.append({"ts_ms": now(), "group": GROUP, "member": step.member, "event": "left",
                                      "reason": "SIGKILL"})
            elif step.action in ("leave", "pause", "subscribe"):
                order = step.action if step.action == "leave" else f"{step.action} {step.arg}"
                if step.action == "subscribe":
                    subs[step.member] = step.arg.split(",")
                    harness_lines.append({"ts_ms": now(), "group": GROUP, "member": step.member,
                                          "event": "subscribed", "topics": subs[step.member],
                                          "protocol": protocols.get(step.member, "eager")})
                    for t in subs[step.member]:
                        if t in extra:
                            harness_lines.append({"ts_ms": now(), "group": GROUP, "event": "topic", "topic": t,
                                                  "partitions": extra[t]})
                assert w.proc.stdin is not None
                w.proc.stdin.write(order + "\n")
                w.proc.stdin.flush()
                if step.action == "leave":
                    try:
                        w.proc.wait(15)
                    except subprocess.TimeoutExpired:
                        pass
        ended = _until_converged(sc, origin, workers, work, harness_lines, say)
        end = now()
        finished = True
    finally:
        with interrupts_held():  # a second Ctrl-C waits until everything started is stopped
            for w in workers.values():
                kill_group(w.proc, grace_s=0)
            coord.stop()
            log.close()
            clog.close()
            if not finished:
                shutil.rmtree(work, ignore_errors=True)
    lines = list(harness_lines)
    silent = []
    for member in sorted({w.member for w in workers.values()}):
        f = work / f"{member}.jsonl"
        own = [json.loads(raw) for raw in f.read_text(encoding="utf-8").splitlines() if raw.strip()] if f.exists() else []
        if not own:
            silent.append(member)
        for ev in own:
            if ev.get("group") == group_id:
                ev["group"] = GROUP
            if ev.get("event") == "joined" and ev.get("protocol", protocol) not in CONSUMER_PROTOCOLS:
                ev.setdefault("session_timeout_ms", sc.client_timeouts["session_timeout_ms"])
        lines.extend(own)
    lines = [e for e in lines if e.get("ts_ms", 0) <= end]
    lines.append({"ts_ms": end, "group": GROUP, "event": "end"})
    lines.sort(key=lambda e: e["ts_ms"])
    trace_path = out / f"{rid}.jsonl"
    verdict_path = out / f"{rid}.verdict.json"
    _write_atomic(trace_path, "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in lines))
    result = check_events(lines, source=str(trace_path))
    verdict = result.to_dict()
    notes = list(coord.notes)
    started_at = coord.started_at() if hasattr(coord, "started_at") else None
    first = min((e["ts_ms"] for e in lines if e.get("event") == "assigned" and e.get("partitions")), default=None)
    if started_at is not None and first is not None:  # the figure: broker start to first assignment
        notes.append(f"{coordinator} start to first assignment: {(origin + first) / 1000 - started_at:.1f} s")
    if ended == "limit":
        notes.append(f"the group had not converged when the run's limit ({sc.limit_s:g} s) passed")
    if silent:
        notes.append(f"{', '.join(silent)} started but recorded nothing: the client never subscribed (see the run's .log)")
    errors = sorted({e.get("error", "") for e in lines if e.get("event") == "error"})
    if errors:
        notes.append("client errors: " + "; ".join(errors)[:500])
    doc = {"scenario": scenario, "client": client, "coordinator": coordinator, "protocol": protocol,
           "partitions": parts, "ended": ended, "seconds": round(end / 1000, 1), "notes": notes,
           **({"coordinator_header": header} if header else {}), **({"silent": silent} if silent else {}), **verdict,
           "reproduce": f"groupspec realstack run {scenario} --client {client} --coordinator {coordinator} --protocol {protocol}"}
    _write_atomic(verdict_path, json.dumps(doc, indent=1) + "\n")
    (work / "processes.log").replace(out / f"{rid}.log")
    if coordinator_log:
        (work / "coordinator.log").replace(out / f"{rid}.coordinator.log")
    for p in work.iterdir():
        p.unlink()
    work.rmdir()
    return RunResult(scenario, client, coordinator, protocol, result.ok, str(trace_path), str(verdict_path), doc,
                     notes, time.monotonic() - t_start, parts, silent,
                     judged=not workers or len(silent) < len({w.member for w in workers.values()}), ended=ended)


def _schedule(sc: RealScenario) -> list[Step]:
    """The scenario's steps in time order, each ``freeze`` followed by the ``thaw`` that ends it."""
    steps = list(sc.steps) + [Step(s.at_s + float(s.arg), "thaw", s.member) for s in sc.steps if s.action == "freeze"]
    return sorted(steps, key=lambda s: s.at_s)


def _until_converged(sc: RealScenario, origin: float, workers: dict[str, _Worker], work: Path,
                     harness_lines: list[dict[str, Any]], say: Callable[[str], None]) -> str:
    """Wait until the story has been told (``duration_s``), then until the group has converged (held
    ``SETTLE_S``) or ``limit_s`` has passed; return ``"converged"`` or ``"limit"`` (``ending.py``)."""
    own = Ownership()
    for e in harness_lines:
        own.feed(e)
    offsets: dict[str, int] = {}
    fed_harness = len(harness_lines)
    while True:
        t = time.time() - origin / 1000
        fresh: list[dict[str, Any]] = list(harness_lines[fed_harness:])
        fed_harness = len(harness_lines)
        for member in list(workers):
            lines, offsets[member] = read_new(work / f"{member}.jsonl", offsets.get(member, 0))
            fresh.extend(lines)
        for e in sorted(fresh, key=lambda e: e.get("ts_ms", 0)):
            own.feed(e)
        live = {m for m, w in workers.items() if w.proc.poll() is None}
        if t >= sc.duration_s:
            if own.converged(live) and t * 1000 - own.changed_ms >= SETTLE_S * 1000:
                return "converged"
            if t >= sc.limit_s:
                return "limit"
            say(f"{t:5.1f}s waiting for the group to converge (limit {sc.limit_s:g} s)")
        time.sleep(min(0.2, max(0.01, sc.duration_s - t)))
