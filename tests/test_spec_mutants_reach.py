"""Which checks a mutant is run by (groupspec.specmut.reach): only those that execute its change on the model.

* the traced baseline records the lines of model/ a check executes, and ``plan`` leaves out a check that never
  executed the changed statement; that is sound: such a check, run on the mutant, gives the baseline's verdict;
* a mutant whose statement a check does execute is planned with it, and killed by it;
* a statement's span covers a guard's whole ``if`` (its body runs only after its test).
"""
from __future__ import annotations

from groupspec.specmut import generate
from groupspec.specmut.campaign import baseline, plan, relevant, run_one
from groupspec.specmut.killers import killers, run_killer
from groupspec.specmut.loader import applied
from groupspec.specmut.reach import reached, reaches, span

RANGE = "assignor:range"


def _mutant(name: str):
    return next(m for m in generate() if m.name == name)


def test_a_check_that_never_executes_the_change_is_not_planned_and_could_not_kill():
    base = baseline(only=[RANGE])
    k = [x for x in killers() if x.name == RANGE]
    reach = base[RANGE]["reach"]
    assert reach.get("assignors"), "the range oracle executes the model's assignors"
    sticky = _mutant("assignors.sticky:drop-guard#3")  # the sticky assignor's balancing loop: range never runs it
    rng = next(m for m in generate() if m.module == "assignors" and "range" in m.name.split(":")[0]
               and m.operator == "negate-guard")
    assert relevant(sticky, k) and not plan(sticky, k, base), "the module is read, the statement never executed"
    assert plan(rng, k, base), rng.name
    with applied(sticky):  # soundness on this one: run anyway, the range oracle cannot tell it from the model
        assert run_killer(k[0])["failure"] is None
    row = run_one(rng, base)
    assert row["status"] == "killed" and row["killer"] == RANGE, row
    row = run_one(sticky, base)
    assert row["tried"] == [] and "no check executes" in row["detail"], row


def test_reached_records_lines_and_a_guard_span_covers_its_if():
    m = _mutant("assignors.sticky:drop-guard#3")
    lo, hi = span(m)
    assert lo == m.line and hi > lo  # the whole if statement
    assert reaches({"assignors": [hi]}, m) and not reaches({"assignors": [lo - 1, hi + 1]}, m)
    assert not reaches({"classic": [m.line]}, m)
    from groupspec.model import ASSIGNORS, Config

    with reached() as rec:
        ASSIGNORS["sticky"](Config(members=2, partitions=3), [(0, 1, 0, 0, False), (1, 1, 0, 0, False)], 7)
    assert reaches(rec.total(), m)
    assert rec.total()["assignors"] and not rec.segments


def test_the_per_mutant_alarm_fires_again_when_its_first_timeout_is_swallowed():
    """A TimeoutError raised where exceptions are ignored (a garbage-collector callback) must not end the limit."""
    import signal
    import time

    from groupspec.specmut.campaign import _alarm

    old = signal.signal(signal.SIGALRM, _alarm)
    caught = 0
    try:
        signal.alarm(1)
        deadline = time.monotonic() + 10
        while caught < 2 and time.monotonic() < deadline:
            try:
                time.sleep(0.05)
            except TimeoutError:
                caught += 1  # the first is "swallowed" here: the alarm must come again
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert caught == 2


def test_a_kafka_walk_job_is_traced_walk_by_walk_and_a_mutant_sent_along_the_walks_that_reach_it():
    name = "kafka:static-cooperative·sticky 2m×3p 200×40"
    base = baseline(only=[name])
    b = base[name]
    assert b["failure"] is None and len(b["walks"]) == 200, "every walk traced as its own segment"
    k = [x for x in killers() if x.name == name]
    m = _mutant("join_phase.JoinPhase._remove:wrong-error#0")  # a parked JoinGroup of a removed member
    (planned, only), = plan(m, k, base)
    assert only is not None and 0 < len(only) < 200, "only the walks that executed its statement"
    row = run_one(m, base)
    assert row["status"] == "killed" and row["killer"] == name and f"({len(only)} of its runs)" in row["tried"][0], row
