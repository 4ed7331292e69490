"""Bugs that hide in bigger groups or outside one call, each planted in an assignor (tests/planted_assignors.py)
and caught with a shrunk counterexample; the correct twin of each passes the whole check."""
from __future__ import annotations

import os

import pytest

from groupspec import check_assignor
from groupspec.assignorcheck.load import load_candidate

PLANTED = [
    # target, property, what the shrunk counterexample must show
    ("planted_assignors:string_generations", "I6'", "generation 10"),
    ("planted_assignors:string_sorted_range", "I7", "t0-10"),
    ("planted_assignors:ClassStateAssignor", "I10i", "one process"),
    ("planted_assignors:hash_seed_roundrobin", "I10p", "PYTHONHASHSEED"),
]

CONTROLS = [
    "planted_assignors:int_generations",
    "planted_assignors:number_sorted_range",
    "planted_assignors:InstanceStateAssignor",
    "planted_assignors:sorted_roundrobin",
]


@pytest.mark.parametrize("target, pid, words", PLANTED, ids=[p[1] for p in PLANTED])
def test_planted_bug_is_caught_with_a_shrunk_counterexample(target, pid, words):
    rep = check_assignor(target, examples=200, seed=1, properties=[pid], quality=False)
    (res,) = rep.properties
    assert res.verdict == "violated", (target, res)
    cx = res.counterexample
    assert words in cx["explanation"]
    subs = cx["input"]["subscriptions"]
    ppt = cx["input"]["partitions_per_topic"]
    # shrunk: far below the large groups the strategies also draw (up to 40 members, 48 partitions a topic)
    assert len(subs) <= 6 and sum(ppt.values()) <= 12, cx["input"]


@pytest.mark.parametrize("target", CONTROLS)
def test_correct_twin_passes_every_property(target):
    rep = check_assignor(target, examples=60, seed=3, quality=False)
    assert rep.ok, [(p.id, (p.counterexample or {}).get("explanation")) for p in rep.violations]
    applicable = {p.id for p in rep.properties if p.verdict == "held"}
    assert {"I10", "I10p"} <= applicable
    if target.endswith("Assignor") or target.endswith("range") or target.endswith("generations"):
        assert "I10i" in applicable


def test_hash_seed_bug_is_invisible_in_one_process():
    """The hash-seed bug passes the in-process I10: only I10p (worker processes) sees it."""
    rep = check_assignor("planted_assignors:hash_seed_roundrobin", examples=100, seed=1, properties=["I10"],
                         quality=False)
    assert rep["I10"].verdict == "held"


def test_class_state_bug_is_invisible_to_one_member_at_a_time():
    """Driven one member at a time (the adapter's default), the class-level state does no harm: I10 holds."""
    rep = check_assignor("planted_assignors:ClassStateAssignor", examples=100, seed=1, properties=["I10"],
                         quality=False)
    assert rep["I10"].verdict == "held"


def test_nondeterministic_ok_makes_determinism_not_applicable():
    import random

    def coin(ppt, subs):
        rnd = random.Random()
        members = sorted(subs)
        out = {m: [] for m in members}
        for t in sorted({t for s in subs.values() for t in s["topics"] if t in ppt}):
            takers = [m for m in members if t in subs[m]["topics"]]
            for p in range(ppt[t]):
                out[rnd.choice(takers)].append((t, p))
        return out

    bad = check_assignor(coin, examples=40, seed=1, properties=["I10"], quality=False)
    assert bad["I10"].verdict == "violated"
    ok = check_assignor(coin, examples=40, seed=1, nondeterministic_ok=True, quality=False)
    assert ok.ok
    assert {ok[p].verdict for p in ("I10", "I10p", "I10i")} == {"not applicable"}


def test_strategies_reach_large_groups_big_generations_and_tricky_topic_names():
    from hypothesis import given, settings

    from groupspec import strategies as gs

    seen = {"members": 0, "partitions": 0, "gen10": False, "big_gen": False, "tricky_topic": False,
            "partition_ge_10": False, "rack": False}

    @settings(max_examples=400, database=None, deadline=None)
    @given(gs.group_states(history=True))
    def collect(state):
        ppt, subs = state
        seen["members"] = max(seen["members"], len(subs))
        seen["partitions"] = max(seen["partitions"], sum(ppt.values()))
        gens = {s["generation"] for s in subs.values()}
        seen["gen10"] |= {9, 10} <= gens
        seen["big_gen"] |= any(g > 2**30 for g in gens)
        seen["tricky_topic"] |= any(t not in [f"t{i}" for i in range(8)] for t in ppt)
        seen["partition_ge_10"] |= any(n > 10 for n in ppt.values())
        seen["rack"] |= any(s["rack"] for s in subs.values())

    collect()
    assert seen["members"] >= 20 and seen["partitions"] >= 100, seen
    assert all(seen[k] for k in ("gen10", "big_gen", "tricky_topic", "partition_ge_10", "rack")), seen


def test_declared_domain_is_respected():
    from hypothesis import given, settings

    from groupspec import strategies as gs

    @settings(max_examples=100, database=None, deadline=None)
    @given(gs.group_states(topics_per_member=1, static=False, unusual=True))
    def check(state):
        _, subs = state
        assert all(len(s["topics"]) == 1 and s["instance_id"] is None for s in subs.values())

    check()


def test_one_topic_per_member_assignor_is_flagged_only_outside_its_declared_domain():
    def one_topic(ppt, subs):
        out = {m: [] for m in subs}
        for t in sorted(ppt):
            takers = sorted(m for m, s in subs.items() if t in s["topics"])
            if not takers:
                continue
            if any(len(subs[m]["topics"]) != 1 for m in takers):
                raise ValueError("only one topic per member is supported")
            for p in range(ppt[t]):
                out[takers[p % len(takers)]].append((t, p))
        return out

    anywhere = check_assignor(one_topic, examples=60, seed=2, properties=["I11"], quality=False)
    assert anywhere["I11"].verdict == "violated"
    declared = check_assignor(one_topic, examples=60, seed=2, properties=["I11", "I4", "C1"], quality=False,
                              topics_per_member=1)
    assert declared.ok, [(p.id, p.counterexample) for p in declared.violations]


def test_class_needing_arguments_is_a_load_error_and_no_argument_class_is_instantiated():
    import sys
    import types

    from groupspec.assignorcheck.load import LoadError

    mod = types.ModuleType("gs_classes_mod")

    class NeedsApp:
        def __init__(self, app, replicas):
            self.app = app

        def assign(self, ppt, subs):
            return {m: [] for m in subs}

    class NoArgs:
        protocol = "eager"

        def assign(self, ppt, subs):
            out = {m: [] for m in subs}
            members = sorted(subs)
            for t in sorted(ppt):
                takers = [m for m in members if t in subs[m]["topics"]]
                for p in range(ppt[t]):
                    if takers:
                        out[takers[p % len(takers)]].append((t, p))
            return out

    mod.NeedsApp, mod.NoArgs = NeedsApp, NoArgs
    sys.modules["gs_classes_mod"] = mod
    try:
        with pytest.raises(LoadError, match=r"needs constructor arguments \(app, replicas\)"):
            load_candidate("gs_classes_mod:NeedsApp")
        cand = load_candidate("gs_classes_mod:NoArgs")
        assert cand.instances is not None
        rep = check_assignor("gs_classes_mod:NoArgs", examples=30, seed=1, properties=["I1", "I10i"],
                             quality=False)
        assert rep.ok and rep["I10i"].verdict == "held"
    finally:
        del sys.modules["gs_classes_mod"]


# Rack-awareness (KIP-881): each planted variant breaks one rule; the correct twin passes the whole check.
RACK_PLANTED = [
    ("planted_assignors:RackModeAlwaysRange", "I12", "rack mode off"),
    ("planted_assignors:RacklessMatchesNothingRange", "I7", "project's range assignor"),
    ("planted_assignors:LocalityOverBalanceRange", "I7", "project's range assignor"),
]


@pytest.mark.parametrize("target, pid, words", RACK_PLANTED, ids=[t.split(":")[1] for t, _, _ in RACK_PLANTED])
def test_planted_rack_bug_is_caught_with_a_shrunk_counterexample(target, pid, words):
    rep = check_assignor(target, examples=200, seed=1, properties=[pid], quality=False)
    (res,) = rep.properties
    assert res.verdict == "violated", (target, res)
    cx = res.counterexample
    assert words in cx["explanation"]
    assert "partition_racks" in cx["input"]  # the counterexample shows the replica racks it needs
    assert len(cx["input"]["subscriptions"]) <= 6 and sum(cx["input"]["partitions_per_topic"].values()) <= 6, cx


def test_rack_aware_twin_passes_every_property_and_i12_applies():
    rep = check_assignor("planted_assignors:RackAwareRange", examples=60, seed=3, quality=False)
    assert rep.ok, [(p.id, (p.counterexample or {}).get("explanation")) for p in rep.violations]
    assert rep["I12"].verdict == "held" and rep["I7"].verdict == "held"


def test_racks_are_drawn_only_for_candidates_that_declare_them():
    plain = check_assignor("planted_assignors:sorted_roundrobin", examples=20, seed=3, properties=["I12"],
                           quality=False)
    assert plain["I12"].verdict == "not applicable"
    declared = check_assignor("planted_assignors:RackModeAlwaysRange", examples=20, seed=3, properties=["I12"],
                              quality=False, rack_aware=False)
    assert declared["I12"].verdict == "not applicable"


def test_the_hash_seed_workers_get_the_call_limit_times_the_workers_per_core(monkeypatch):
    # I10p's eight workers compute each input at once: on two cores a call that takes a quarter of a second
    # alone takes a second there, so the workers' limit is the call limit times the workers per core (found by
    # trying it as a stranger would: examples were skipped as the candidate's failures while I11 held)
    from groupspec.assignorcheck import determinism

    limits = []

    class Recorded(determinism.ProcessWorker):
        def __init__(self, target, hash_seed, call_timeout, *args, **kwargs):
            limits.append(call_timeout)
            super().__init__(target, hash_seed, call_timeout, *args, **kwargs)

    monkeypatch.setattr(determinism, "ProcessWorker", Recorded)
    rep = check_assignor("planted_assignors:sorted_roundrobin", examples=2, seed=1, properties=["I10p"],
                         call_timeout=0.5, quality=False)
    assert rep["I10p"].verdict == "held"
    cores = len(os.sched_getaffinity(0))
    assert limits == [0.5 * max(1, -(-8 // cores))] * 8


def test_the_workers_limit_is_the_call_limit_times_the_workers_per_core():
    from groupspec.assignorcheck.determinism import worker_call_timeout

    assert worker_call_timeout(5.0, 8, cpus=2) == 20.0
    assert worker_call_timeout(5.0, 16, cpus=3) == 30.0
    assert worker_call_timeout(5.0, 8, cpus=16) == 5.0
