"""The real-stack harness: a small real subset (a real client against a real coordinator), the
coordinator interface, and that nothing it starts outlives it. The full matrix is `make realstack`."""
from __future__ import annotations

import json
import re
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from groupspec.realstack import COORDINATORS, SCENARIOS, HarnessError, harness, run
from groupspec.realstack.harness import KAFKAJS_DIR
from groupspec.realstack.coordinators import Coordinator, CoordinatorError, ProcessCoordinator, Tansu
from groupspec.reference.sim import SCENARIOS as SIM_SCENARIOS
from groupspec.trace import check_paths

GS = str(Path(sys.executable).parent / "groupspec")


TOKEN = f"gs-realstack-test-{os.getpid()}"
os.environ["GROUPSPEC_TEST_OWNER"] = TOKEN  # inherited by every process the harness starts


def _children() -> set[int]:
    """Live processes started by this test run (they carry its token in their environment), but not itself."""
    mine = set()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            env = (d / "environ").read_bytes()
            state = (d / "stat").read_text().split(")")[-1].split()[0]
        except OSError:
            continue
        if f"GROUPSPEC_TEST_OWNER={TOKEN}".encode() in env and state != "Z":
            mine.add(int(d.name))
    return mine


def test_scenario_names_follow_the_simulator():
    shared = set(SCENARIOS) & set(SIM_SCENARIOS)
    assert {"new-consumer-joins", "consumer-leaves-permanently", "static-member-restart", "rolling-restart"} <= shared


def test_real_run_confluent_kafka_on_tansu(tmp_path: Path):
    before = _children()
    res = run("consumer-leaves-permanently", "confluent-kafka", "tansu", out_dir=str(tmp_path), coordinator_log=True)
    assert _children() <= before, "the harness left processes behind"
    # --coordinator-log: Tansu's debug log of its group coordinator is kept apart from the workers' log
    coord_log = Path(res.trace_path).with_suffix(".coordinator.log").read_text()
    assert "tansu_broker::coordinator::group" in coord_log and "join_outcome=None" in coord_log
    assert "tansu_broker::coordinator" not in Path(res.trace_path).with_suffix(".log").read_text()
    assert res.ok, json.dumps(res.verdict, indent=1)[:3000]
    lines = [json.loads(x) for x in Path(res.trace_path).read_text().splitlines()]
    kinds = {(e.get("member"), e["event"]) for e in lines}
    assert {("c1", "joined"), ("c2", "joined"), ("c3", "joined"), ("c3", "left")} <= kinds
    assert any(e["event"] == "assigned" for e in lines) and any(e["event"] == "snapshot" for e in lines)
    assert [e["ts_ms"] for e in lines] == sorted(e["ts_ms"] for e in lines)
    verdict = json.loads(Path(res.verdict_path).read_text())
    assert verdict["ok"] is True and verdict["client"] == "confluent-kafka" and verdict["partitions"] == 6
    assert "groupspec realstack run consumer-leaves-permanently" in verdict["reproduce"]
    # the recorded trace is a trace like any other
    assert check_paths([res.trace_path]).ok
    g = verdict["groups"][0]
    assert g["periods"][-1]["members"] == ["c1", "c2"] and g["periods"][-1]["converged_at_ms"] is not None


def test_real_crash_is_sigkill_and_recorded(tmp_path: Path):
    """confluent-kafka against librdkafka's mock cluster; c3, which owned partitions, is SIGKILLed and the harness
    writes its left line. (kafka-python cannot connect to the mock: docs/findings.md, finding 8.)"""
    res = run("consumer-crashes", "confluent-kafka", "librdkafka-mock", out_dir=str(tmp_path))
    lines = [json.loads(x) for x in Path(res.trace_path).read_text().splitlines()]
    left = [e for e in lines if e["event"] == "left" and e.get("member") == "c3"]
    assert left and left[0].get("reason") == "SIGKILL"
    assert any(e["event"] == "assigned" and e.get("member") == "c3" and e["partitions"] for e in lines)
    assert {e.get("session_timeout_ms") for e in lines if e["event"] == "joined"} == {6000}
    assert res.ok and not res.silent and res.judged, json.dumps(res.verdict, indent=1)[:3000]
    assert res.verdict["groups"][0]["starved_members"] == []


def test_a_client_that_never_comes_up_is_silent_and_judges_nothing(tmp_path: Path):
    """kafka-python cannot decode the mock cluster's ApiVersions answer (finding 8): no consumer records a line, and
    the run says so instead of a verdict about nobody."""
    p = subprocess.run([GS, "realstack", "run", "pair-joins", "--client", "kafka-python", "--coordinator",
                        "librdkafka-mock", "--out", str(tmp_path)], capture_output=True, text=True)
    assert p.returncode == 3 and "no consumer recorded anything" in p.stderr, p.stdout + p.stderr
    verdict = json.loads((tmp_path / "pair-joins--kafka-python--librdkafka-mock--eager.verdict.json").read_text())
    assert verdict["silent"] == ["c1", "c2"]
    assert any("c1, c2 started but recorded nothing" in n for n in verdict["notes"])
    assert "Unable to decode response" in (tmp_path / "pair-joins--kafka-python--librdkafka-mock--eager.log").read_text()


@pytest.mark.deep
def test_kafka_python_subscription_change_starves_the_member(tmp_path: Path):
    """docs/findings.md, finding 7: kafka-python's c3 changes its subscription and never takes part again; the
    checker's starved_members notice names it. The group never converges, so the run ends at its limit and
    says so; topic u, which only c3 subscribes to, is never owned (completeness)."""
    res = run("subscription-change", "kafka-python", "groupspec", out_dir=str(tmp_path))
    starved = res.verdict["groups"][0]["starved_members"]
    assert "c3" in [s["member"] for s in starved], json.dumps(res.verdict, indent=1)[:3000]
    c3 = next(s for s in starved if s["member"] == "c3")
    assert c3["open"] and c3["waiting_from_ms"] >= 10_000 and c3["session_timeout_ms"] == 6000
    assert res.ended == "limit" and res.verdict["ended"] == "limit"
    props = {p["id"]: p for p in res.verdict["groups"][0]["properties"]}
    assert {v["topic"] for v in props["completeness"]["violations"]} >= {"u"}
    assert props["exclusive_ownership"]["verdict"] == "held"


class _Broken(ProcessCoordinator):
    name = "broken"

    def command(self, port: int) -> list[str]:
        return [sys.executable, "-c", "import sys; sys.exit(4)"]


def test_a_coordinator_that_does_not_start_is_an_error_and_leaves_nothing(tmp_path: Path, monkeypatch):
    monkeypatch.setitem(COORDINATORS, "broken", _Broken)
    before = _children()
    with pytest.raises(HarnessError, match="exited at start with status 4"):
        run("consumer-leaves-permanently", "confluent-kafka", "broken", out_dir=str(tmp_path))
    assert _children() <= before


def test_tansu_debug_log_only_when_asked(monkeypatch):
    monkeypatch.delenv("RUST_LOG", raising=False)
    t = Tansu()
    assert t.environment() is None
    t.verbose = True
    env = t.environment()
    assert env is not None and env["RUST_LOG"] == Tansu.DEBUG_LOG and env["PATH"] == os.environ["PATH"]
    monkeypatch.setenv("RUST_LOG", "debug")
    assert t.environment()["RUST_LOG"] == "debug"  # the user's own filter wins


def test_coordinator_interface_registers_a_third_one():
    """A new coordinator is a subclass with a command; this one is Tansu under another name."""
    class Other(Tansu):
        name = "other"

    c: Coordinator = Other()
    boot = c.start()
    try:
        assert boot.startswith("127.0.0.1:")
        assert c.create_topic("x", 3) == 3
    finally:
        c.stop()
    with pytest.raises(CoordinatorError, match="exited at start"):
        _Broken().start()


def _as_from_a_terminal(argv: list[str]) -> list[str]:
    """``argv`` with Ctrl-C (SIGINT) at its default action, as a shell starts a command in the foreground.

    A child inherits an ignored SIGINT, and Python then installs no KeyboardInterrupt handler: when the test
    run itself was started with SIGINT ignored (a shell without job control does that to a command it starts
    with ``&``, e.g. ``make test &`` in a script), the command ignored the
    test's SIGINT and ran to its normal end (exit 0). ``execv`` keeps the process id."""
    reset = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
    return [sys.executable, "-c", reset, *argv]


def test_cli_ctrl_c_stops_everything(tmp_path: Path):
    before = _children()
    p = subprocess.Popen(_as_from_a_terminal([GS, "realstack", "run", "rolling-restart", "--client", "confluent-kafka",
                                              "--coordinator", "tansu", "--out", str(tmp_path)]),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(_children() - before - {p.pid}) < 3:
        time.sleep(0.3)
    assert len(_children() - before - {p.pid}) >= 3  # the coordinator and workers are up
    os.kill(p.pid, signal.SIGINT)
    p.wait(60)
    time.sleep(0.5)
    assert _children() <= before, "Ctrl-C left processes behind"
    assert p.returncode == 130
    assert p.stderr is not None and p.stderr.read().decode().endswith("groupspec: interrupted\n")
    assert list(tmp_path.iterdir()) == []  # nothing of the run was written


@pytest.fixture
def ctrl_c_raises():
    """SIGINT raises KeyboardInterrupt in this process for the test (whatever the test run was started with).

    With the garbage collector off: a KeyboardInterrupt raised inside a gc callback (Hypothesis installs one) is
    printed and swallowed ("Exception ignored in: gc_callback"), and the test's Ctrl-C would be lost."""
    import gc

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("moment", ["the coordinator starts", "a worker starts", "a second one while stopping"])
def test_ctrl_c_at_any_moment_leaves_nothing(tmp_path: Path, monkeypatch, ctrl_c_raises, moment):
    """Ctrl-C just after a child is forked, before Popen returns its handle (without the handle the harness
    cannot stop the child: Tansu ran on for good); and a second Ctrl-C while the harness stops everything."""
    before = _children()
    forked: list[int] = []
    real_execute_child = subprocess.Popen._execute_child
    real_kill_group = harness.kill_group

    def execute_child(self, *args, **kwargs):
        real_execute_child(self, *args, **kwargs)
        forked.append(self.pid)
        if (moment, len(forked)) in (("the coordinator starts", 1), ("a worker starts", 2)):
            signal.raise_signal(signal.SIGINT)

    def progress(message: str) -> None:
        if moment == "a second one while stopping" and message.endswith("start c2"):
            signal.raise_signal(signal.SIGINT)  # the first Ctrl-C: c1 and the coordinator are up

    def kill_group(proc, grace_s=3.0):
        signal.raise_signal(signal.SIGINT)  # another Ctrl-C while each worker is being stopped
        real_kill_group(proc, grace_s)

    monkeypatch.setattr(subprocess.Popen, "_execute_child", execute_child)
    monkeypatch.setattr(harness, "kill_group", kill_group)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the run makes its scratch directory
    (tmp_path / "out").mkdir()
    try:
        with pytest.raises(KeyboardInterrupt):
            run("pair-joins", "confluent-kafka", "tansu", out_dir=str(tmp_path / "out"), progress=progress)
        assert len(forked) == {"the coordinator starts": 1}.get(moment, 2)
        assert _children() <= before, "Ctrl-C left processes behind"
        assert [f.name for f in tmp_path.iterdir()] == ["out"] and list((tmp_path / "out").iterdir()) == []
    finally:
        for pid in _children() - before:
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("args,needle", [
    (["realstack", "run", "no-such", "--client", "confluent-kafka", "--coordinator", "tansu"], "unknown scenario"),
    (["realstack", "run", "consumer-crashes", "--client", "nope", "--coordinator", "tansu"], "unknown client"),
    (["realstack", "run", "consumer-crashes", "--client", "aiokafka", "--coordinator", "tansu", "--protocol",
      "cooperative"], "cooperative"),
])
def test_cli_bad_input(args, needle):
    p = subprocess.run([GS, *args], capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == "" and needle in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_real_run_confluent_kafka_consumer_protocol_on_the_mock(tmp_path: Path):
    """group.protocol=consumer (KIP-848) against librdkafka's mock cluster: member epochs in `generation`,
    protocol "consumer", checked by the trace checker and against the model."""
    from groupspec.trace import check_events

    before = _children()
    res = run("pair-joins", "confluent-kafka", "librdkafka-mock", "consumer", out_dir=str(tmp_path))
    assert _children() <= before, "the harness left processes behind"
    assert res.ok, json.dumps(res.verdict, indent=1)[:3000]
    lines = [json.loads(x) for x in Path(res.trace_path).read_text().splitlines()]
    member_lines = [e for e in lines if e.get("member")]
    assert member_lines and all(e["protocol"] == "consumer" for e in member_lines)
    epochs = [e["generation"] for e in lines if e["event"] == "assigned"]
    assert epochs and all(isinstance(g, int) and g > 0 for g in epochs)
    owners = {e["member"] for e in lines if e["event"] == "assigned" and e["partitions"]}
    assert owners == {"c1", "c2"}  # c2 got its share, after c1 revoked it
    model = check_events(lines, source=res.trace_path, against_model=True).to_dict()
    am = model["groups"][0]["against_model"]
    assert am["explained"] is True and am["first_unexplained"] is None, am
    assert "--protocol consumer" in res.verdict["reproduce"]


def test_tansu_keeps_a_departed_leader_while_forming(tmp_path: Path):
    """Finding 4: the leader closes (LeaveGroup) while Tansu's group is still forming; Tansu keeps it as
    leader, so every SyncGroup of the others is answered REBALANCE_IN_PROGRESS and nobody is assigned.
    The leader's close must land before the first join phase completes: a race that a loaded machine can
    lose (the group forms first and then Tansu rightly drops the departed leader), so up to three runs;
    the one that stalls must show, in Tansu's own log, the departed member still named leader."""
    for attempt in range(3):
        out = tmp_path / str(attempt)
        res = run("leader-leaves-mid-rebalance", "confluent-kafka", "tansu", out_dir=str(out), coordinator_log=True)
        violated = {p["id"] for g in res.verdict["groups"] for p in g["properties"] if p["verdict"] == "violated"}
        if "completeness" in violated:
            break
    assert "completeness" in violated, "the stall did not show in three runs"
    log = re.sub(r"\x1b\[[0-9;]*m", "", Path(res.trace_path).with_suffix(".coordinator.log").read_text())
    left = re.findall(r'DEBUG leave\{group_id="g" member_id=Some\("([^"]+)"\)\}', log)
    leaders = re.findall(r'state\.leader=Some\("([^"]+)"\) sync_outcome=RebalanceInProgress', log)
    assert left and leaders and leaders[-1] == left[0], (left, leaders[-3:])


@pytest.mark.deep
@pytest.mark.skipif(not (KAFKAJS_DIR / "node_modules" / "kafkajs").is_dir(), reason="kafkajs not installed (make kafkajs)")
def test_kafkajs_changes_its_subscription(tmp_path: Path):
    """The kafkajs worker carries out `subscribe` (stop, subscribe, run again: a new member) instead of ignoring it;
    kafkajs's leader then assigns only the topics it subscribes to itself, so u stays unowned (finding 9)."""
    res = run("subscription-change", "kafkajs", "groupspec", out_dir=str(tmp_path))
    lines = [json.loads(x) for x in Path(res.trace_path).read_text().splitlines()]
    c3 = [e for e in lines if e.get("member") == "c3" and e["event"] in ("revoked", "assigned") and e["ts_ms"] > 10_000]
    assert [e["event"] for e in c3[:2]] == ["revoked", "assigned"], c3
    before = {e["member_id"] for e in lines if e.get("member") == "c3" and e["event"] == "assigned" and e["ts_ms"] < 10_000}
    assert c3[1]["member_id"] not in before  # it rejoined as a new member
    assert not any(p[0] == "u" for e in lines if e["event"] == "assigned" for p in e["partitions"])


def test_a_frozen_member_is_stopped_whole_and_runs_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``freeze``: the harness SIGSTOPs a worker's process group (librdkafka's own threads too, so no heartbeat
    goes out), writes a ``frozen`` line, and SIGCONTs it later. The coordinator expires the frozen member at its
    session timeout (6 s) and starts a rebalance (librdkafka's mock: c1 revokes, eager); the frozen process records
    nothing meanwhile and goes on after."""
    from groupspec.realstack.scenarios import RealScenario, Step

    sc = RealScenario("freeze-one", "c2 frozen for 9 s", (Step(0, "start", "c1"), Step(1, "start", "c2"),
                                                         Step(5, "freeze", "c2", "9")), 20, limit=45)
    monkeypatch.setitem(SCENARIOS, sc.name, sc)
    before = _children()
    res = run(sc.name, "confluent-kafka", "librdkafka-mock", out_dir=str(tmp_path))
    assert _children() <= before, "the harness left processes behind"
    lines = [json.loads(x) for x in Path(res.trace_path).read_text().splitlines()]
    frozen = [e for e in lines if e["event"] == "frozen"]
    assert [(e["member"], e["seconds"]) for e in frozen] == [("c2", 9.0)]
    start, thaw = frozen[0]["ts_ms"], frozen[0]["ts_ms"] + 9000
    c2 = [e["ts_ms"] for e in lines if e.get("member") == "c2" and e["event"] != "frozen"]
    assert not [t for t in c2 if start + 200 < t < thaw - 200], "the frozen process wrote lines"
    assert [t for t in c2 if t >= thaw - 200], "the process did not run on after the freeze"
    c1_moved = [e for e in lines if e.get("member") == "c1" and e["event"] in ("revoked", "assigned")
                and start < e["ts_ms"] < thaw]
    assert c1_moved, "no rebalance while c2 was frozen: the coordinator did not expire it (its heartbeats went on)"
