"""Conformance: the reference (in the simulator) refines the model; the trace checks; the mutants.

* ``test_trace_*``: the trace checker on hand-written traces (each check shown to fire and not to fire).
* ``test_harness_*``: a fixed scenario passes every check; a broken abstraction step is reported with the
  numbered timeline and the simulator seed.
* ``test_conformance_state_machine[variant]``: the Hypothesis stateful suite (active profile), one per
  protocol variant the simulator runs.
* ``test_baseline_passes`` / ``test_mutant_caught``: the mutation check (the one table, every family). The
  same derandomized runs the mutation table uses must pass on the correct reference and catch every fault
  switch.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import settings
from groupspec.conformance import (
    MUTANTS,
    VARIANTS,
    ConformanceFailure,
    Harness,
    Mutant,
    make_machine,
    match,
    project,
    run_machine,
    run_mutant,
)
from groupspec.conformance.trace_checks import check_trace


def ev(ts, member, event, parts=(), gen=1, **kw):
    e = {"ts_ms": ts, "member": member, "event": event, "generation": gen, "protocol": kw.pop("protocol", "eager")}
    if parts:
        e["partitions"] = [["t", p] if not isinstance(p, tuple) else ["t", *p] for p in parts]
    e.update(kw)
    return e


# ------------------------------------------------------------------------------------------- trace
def test_trace_clean_rebalance_has_no_violation():
    t = [ev(0, "a", "joined"), ev(1, "b", "joined"), ev(5, "a", "assigned", [0, 1]), ev(9, "a", "revoked", [0, 1], gen=1),
         ev(12, "a", "assigned", [0], gen=2), ev(12, "b", "assigned", [1], gen=2)]
    assert check_trace(t) == []


def test_trace_double_owner_is_reported_unless_one_is_a_zombie():
    t = [ev(0, "a", "joined"), ev(0, "b", "joined"), ev(5, "a", "assigned", [0]), ev(8, "b", "assigned", [0], gen=2),
         ev(9, "a", "assigned", [1], gen=2)]
    v = check_trace(t)
    assert [x.check for x in v] == ["exclusive_ownership"] and v[0].members == ("a", "b")
    zombie = t[:4] + [ev(9, "a", "fenced", error="UNKNOWN_MEMBER_ID")]
    assert check_trace(zombie) == []
    assert [x.check for x in check_trace(zombie, notes=True)] == ["zombie_overlap"]
    # on a prefix the overlap is undecided until an owner shows what it was
    assert check_trace(t[:4], final=False) == []


def test_trace_member_left_behind_by_a_join_phase_is_a_zombie():
    """A static member kept by the rebalance timeout without rejoining (KAFKA-8220) still owns t-1 from
    generation 1 when c2 gets it in generation 2; it gives it up in generation 1 (eager revoke before
    it rejoins): a zombie overlap, not a violation. Had it given it up only after taking part in
    generation 2 (its revoke carrying generation 2, as a same-round transfer would), it is one."""
    t = [ev(0, "a", "joined"), ev(0, "b", "joined"), ev(5, "a", "assigned", [0, 1]), ev(8, "b", "assigned", [1], gen=2),
         ev(9, "a", "revoked", [0, 1], gen=1), ev(12, "a", "assigned", [0], gen=3), ev(12, "b", "assigned", [1], gen=3)]
    assert check_trace(t) == []
    assert [x.check for x in check_trace(t, notes=True)] == ["zombie_overlap"]
    assert check_trace(t[:4], final=False) == []  # undecided until a shows what it was
    late = [dict(e) for e in t]
    late[4]["generation"] = 2
    assert [x.check for x in check_trace(late)] == ["exclusive_ownership"]
    same = [dict(e) for e in t]
    same[3]["generation"] = 1  # the same generation: never left behind
    assert [x.check for x in check_trace(same)] == ["exclusive_ownership"]


def test_trace_zombie_applying_a_late_answer_is_still_a_zombie():
    """c1 (cooperative) slept through its removal; c3 got t-1 in generation 10. Waking, c1 applies its
    SyncGroup answer of generation 8 (an ``assigned`` line, nothing added) and is then told it is
    unknown: it loses t-1. The late line of an older generation does not make it a live owner."""
    coop = {"protocol": "cooperative"}
    t = [ev(0, "c1", "joined", **coop), ev(0, "c3", "joined", **coop), ev(5, "c1", "assigned", [1], gen=7, **coop),
         ev(40, "c3", "assigned", [1], gen=10, **coop), ev(42, "c1", "assigned", [], gen=8, **coop),
         ev(43, "c1", "lost", [1], gen=-1, **coop)]
    assert check_trace(t) == []
    t[4]["generation"] = 10  # an answer of c3's generation: c1 took part in it while owning t-1
    assert [x.check for x in check_trace(t)] == ["exclusive_ownership"]


def test_trace_zombie_commit_during_overlap_is_a_fencing_violation():
    t = [ev(0, "a", "joined"), ev(0, "b", "joined"), ev(5, "a", "assigned", [0]), ev(8, "b", "assigned", [0], gen=2),
         ev(9, "a", "commit", [(0, 42)], gen=2, accepted=True), ev(10, "a", "fenced", error="ILLEGAL_GENERATION")]
    assert [x.check for x in check_trace(t)] == ["commit_fencing"]
    t[4]["accepted"] = False
    assert check_trace(t) == []
    # a commit of the older generation may have been accepted before the hand-over: not reported
    t[4].update(accepted=True, generation=1)
    assert check_trace(t) == []


def test_trace_generation_must_not_go_down_without_a_reset():
    t = [ev(0, "a", "joined"), ev(5, "a", "assigned", [0], gen=3), ev(6, "a", "revoked", [0], gen=3),
         ev(7, "a", "assigned", [0], gen=2)]
    assert [x.check for x in check_trace(t)] == ["generation_monotonic"]
    t.insert(3, ev(6, "a", "fenced", gen=3, error="UNKNOWN_MEMBER_ID"))
    assert check_trace(t) == []


def test_trace_defects_are_reported_not_raised():
    t = [{"ts_ms": 0}, {"ts_ms": 1, "event": "assigned"}, ev(2, "a", "revoked", [3]), ev(3, "a", "left"),
         ev(4, "a", "assigned", [1])]
    kinds = [x.check for x in check_trace(t)]
    assert kinds == ["well_formed"] * 4


# ------------------------------------------------------------------------------------------- harness
def _boot(h: Harness) -> None:
    for n in h.names:
        h.act("start", n, config=h.consumer_config(n))
        h.run_for(300)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_harness_scenario_passes_and_converges(variant):
    h = Harness(variant, seed=7)
    _boot(h)
    taken, bound = h.quiesce()
    assert h.converged() and h.state.group.generation >= 1
    h.act("crash", "c2")
    h.run_for(2000)
    taken, bound = h.quiesce()
    # connect-delayed: no model bound (the model has no Connect assignor), convergence within the limit
    assert (bound is None and taken > 0) if h.connect is not None else (bound is not None and taken <= bound)
    assert h.model_steps > 5 and h.stutters > 0
    g = h.state.group
    assert sum(1 for r in g.records if r is not None) == 2  # c2 was removed


def test_harness_failure_prints_timeline_and_seed():
    h = Harness("eager-range", seed=11)
    _boot(h)
    h.quiesce()
    # Break the reference behind the harness's back: a member silently forgets its partitions.
    h.sim.procs["c1"].consumer.owned = ()
    with pytest.raises(ConformanceFailure) as info:
        h.run_for(50)
        h.act("partitions", topic="t", count=4)
        h.quiesce()
    text = str(info.value)
    assert info.value.check == "refinement"
    assert "simulator seed 11" in text and " 1. " in text and "<-- refinement" in text


# Schedules found by randomized runs on the correct reference (tests/conformance_regressions.json: what
# was wrong, which seed found it), replayed rule by rule: each must pass. Where the fix is a method of
# the harness, the schedule is also replayed with that method switched back to its earlier behaviour,
# and must then fail as it did (so the test can fail).
REGRESSIONS = {r["name"]: r for r in json.loads((Path(__file__).parent / "conformance_regressions.json").read_text())}
_UNFIXED = {"_misdirected": lambda: False, "_pausing": lambda: False, "_dropped_answers": lambda *a: None,
            "_late_perturbation": lambda: False, "_late_heartbeat_answer": lambda *a: False,
            "connect._departures_shown": lambda: True, "_resumes_first": lambda: None,
            "_emptied_hold": lambda *a: False, "_duplicate_rejoin": lambda *a: False,
            "Consumer._heartbeat_lookup_ms": lambda self: 10**12, "connect._revocation_not_taken": lambda *a: False,
            "_two_rejoins": lambda *a: False, "_paused_sender": lambda *a: False,
            "Consumer._stopped_by_error": lambda self, now: None, "_note_leader": lambda *a: None}


def _replay(r: dict, unfixed: bool, monkeypatch: pytest.MonkeyPatch | None = None) -> Harness:
    machine = make_machine(r["variant"], topics=r["topics"])()
    machine.boot(seed=r["seed"])
    if unfixed:
        for fix in r["fix"].split(","):
            owner, _dot, name = fix.rpartition(".")  # "connect.x": a method of the harness's ConnectView
            if owner == "Consumer":  # a rule of the reference's consumer (the class, restored after the test)
                from groupspec.reference.classic import Consumer

                assert monkeypatch is not None
                monkeypatch.setattr(Consumer, name, _UNFIXED[fix])
                continue
            setattr(getattr(machine.h, owner) if owner else machine.h, name, _UNFIXED[fix])
    for call in r["rules"]:
        rule, args = re.fullmatch(r"(\w+)\((.*)\)", call).groups()
        kwargs = {k: (v.strip("'") if v.startswith("'") else int(v))
                  for k, v in (a.split("=") for a in args.split(", ") if a)}
        getattr(machine, rule)(**kwargs)
    machine.teardown()
    return machine.h


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regression_schedule_passes(name):
    assert _replay(REGRESSIONS[name], unfixed=False).converged()


@pytest.mark.parametrize("name", sorted(n for n, r in REGRESSIONS.items() if r["fix"]))
def test_regression_schedule_fails_unfixed(name, monkeypatch):
    r = REGRESSIONS[name]
    with pytest.raises(ConformanceFailure, match=r["unfixed_fails"]):
        _replay(r, unfixed=True, monkeypatch=monkeypatch)


def test_match_finds_stutters_and_model_steps():
    h = Harness("eager-range", seed=3)
    s0 = h.state
    assert match(h.proto, s0, s0) == []
    h.act("start", "c1", config=h.consumer_config("c1"))
    assert [a.name for a in match(h.proto, s0, h.state)] == ["Start"]
    assert project(s0) != project(h.state)


# ------------------------------------------------------------------------------------------- stateful
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_conformance_state_machine(variant):
    """The randomized suite (active profile; the run's seed is in the pytest header). ``start_slow`` is
    only generated in paired mutation runs (docs/conformance.md: it still meets abstraction edge cases on
    the correct reference)."""
    machine = make_machine(variant, slow_starts=False)
    run_machine(machine, settings(settings.default))


@pytest.mark.parametrize("variant", sorted(v for v in VARIANTS if not VARIANTS[v].connect))  # workers subscribe to nothing
def test_conformance_subscriptions(variant):
    """The same suite on two topics, where members also change their subscription (drop the second
    topic, take it back) and the second topic grows."""
    machine = make_machine(variant, slow_starts=False, topics=2)
    run_machine(machine, settings(settings.default))


_SCHEDULE = """
import json, sys
sys.path.insert(0, sys.argv[1])
for name in sys.argv[2:]:
    __import__(name)
from hypothesis import HealthCheck, Phase, settings
import groupspec.conformance as C
examples = []
init = C.Harness.__init__
def record(self, *a, **k):
    init(self, *a, **k)
    examples.append(self)
C.Harness.__init__ = record
cfg = settings(max_examples=100, stateful_step_count=2, deadline=None, database=None, derandomize=True,
               phases=[Phase.generate], suppress_health_check=list(HealthCheck))
try:
    C.run_machine(C.make_machine("eager-range"), cfg)
except Exception as e:
    examples.append(type(e).__name__)
print(json.dumps([x if isinstance(x, str) else [x.seed, x.rules] for x in examples]))
"""


def test_generation_ignores_imports(tmp_path):
    """What a derandomized run (or a run with a given --hypothesis-seed) generates does not depend on
    which local modules the process has imported. Hypothesis draws some integers from a pool of the
    constants in every local module's source; the machine keeps its draws where that pool cannot reach
    (``simulator_seeds``). Here one process imports nothing more, the other the CLI and a local module
    full of large integer constants: the examples must be the same."""
    import json
    import subprocess
    import sys

    (tmp_path / "many_constants.py").write_text(
        "TABLE = [" + ", ".join(str(1000 + 7919 * k) for k in range(300)) + ", 4294967295, 2147483648]\n"
        # 100..254: the range of a stateful run's swarm-testing draw (FeatureFlags), see pinned_constants
        "SMALL = [" + ", ".join(str(k) for k in range(100, 255, 3)) + "]\n")
    runs = [
        subprocess.run([sys.executable, "-c", _SCHEDULE, str(tmp_path), *extra], capture_output=True, text=True,
                       check=True).stdout
        for extra in ([], ["groupspec.cli", "many_constants"])
    ]
    plain, loaded = (json.loads(r.splitlines()[-1]) for r in runs)
    assert len(plain) >= 100 and plain == loaded


# ------------------------------------------------------------------------------------------- mutants
@pytest.mark.parametrize("family,variant", sorted({(m.family, m.variant) for m in MUTANTS}))
def test_baseline_passes(family, variant):
    """The derandomized runs of the mutation table (every family's), on the correct reference (no paired run)."""
    row = run_mutant(Mutant("", "consumer", variant, "no fault", family), "ci")
    assert not row["caught"], row


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.switch for m in MUTANTS])
def test_mutant_caught(mutant):
    row = run_mutant(mutant, "ci")
    assert row["caught"] and not str(row["check"]).startswith("crash"), row
    print(f"{mutant.switch}: caught by {row['check']} after {row['examples']} examples (simulator seed {row['seed']})")
