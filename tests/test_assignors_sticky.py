"""Sticky and cooperative-sticky: Kafka's worked examples (assignors.md §1.4), invariants (§2), convergence."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from groupspec.reference.assignors import get
from groupspec.reference.assignors.properties import (
    check_all,
    check_cooperative,
    check_generation_validated,
    check_movability,
    check_no_two_cycles,
    converge,
    next_subscriptions,
)
from groupspec.reference.assignors.sticky import java_hash, java_hashmap_order, sticky_assign

BOTH = ["sticky", "cooperative-sticky"]


def parts(spec: str) -> list[tuple[str, int]]:
    out = []
    for item in spec.replace(" ", "").split(","):
        if item:
            topic, _, p = item.rpartition("-")
            out.append((topic, int(p)))
    return sorted(out)


def sub(topics, owned="", generation=-1):
    return {"topics": list(topics), "owned": [list(tp) for tp in parts(owned)], "generation": generation}


def final(name, counts, subs):
    """The converged result: the eager answer for sticky, follow-up rounds for cooperative."""
    if name == "sticky":
        return get(name).assign(counts, subs)
    rounds, out = converge(get(name).assign, counts, subs)
    assert rounds <= 4
    return out


# ---------------------------------------------------------------- Java HashMap order (walk order of Kafka's maps)

def test_java_hash_matches_known_values():
    assert java_hash("") == 0
    assert java_hash("a") == 97
    assert java_hash("consumer1") == 0xE6E7FAFB
    assert java_hash("\U0001f600") == (0xD83D * 31 + 0xDE00)


def test_java_hashmap_order_consumers():
    # Buckets 12, 11, 10 in a 16-slot table: Java iterates consumer3, consumer2, consumer1.
    keys = ["consumer1", "consumer2", "consumer3"]
    assert [keys[i] for i in java_hashmap_order(keys)] == ["consumer3", "consumer2", "consumer1"]
    rev = list(reversed(keys))
    assert [rev[i] for i in java_hashmap_order(rev)] == ["consumer3", "consumer2", "consumer1"]


# ---------------------------------------------------------------- §1.4 examples (AbstractStickyAssignorTest)

@pytest.mark.parametrize("name", BOTH)
def test_multiple_consumers_mixed_topic_subscriptions(name):
    counts = {"topic1": 3, "topic2": 2}
    subs = {"consumer1": sub(["topic1"]), "consumer2": sub(["topic1", "topic2"]), "consumer3": sub(["topic1"])}
    d = get(name).assign_detailed(counts, subs)
    assert d.path == "general" and d.transfers == {}
    assert d.round_one == d.ideal == {"consumer1": parts("topic1-0,topic1-2"), "consumer2": parts("topic2-0,topic2-1"),
                                      "consumer3": parts("topic1-1")}


@pytest.mark.parametrize("name", BOTH)
def test_two_consumers_two_topics_six_partitions(name):
    out = get(name).assign({"topic1": 3, "topic2": 3}, {"consumer1": sub(["topic1", "topic2"]), "consumer2": sub(["topic1", "topic2"])})
    assert out == {"consumer1": parts("topic1-0,topic1-2,topic2-1"), "consumer2": parts("topic1-1,topic2-0,topic2-2")}


@pytest.mark.parametrize("name", BOTH)
def test_consumer_owning_min_quota_expected_max_quota(name):
    t = ["topic1", "topic2"]
    d = get(name).assign_detailed({"topic1": 2, "topic2": 3}, {"consumer1": sub(t, "topic1-0,topic2-1", 1), "consumer2": sub(t, "topic1-1,topic2-2", 1)})
    assert d.transfers == {} and d.path == "constrained"
    assert d.round_one == d.ideal == {"consumer1": parts("topic1-0,topic2-1,topic2-0"), "consumer2": parts("topic1-1,topic2-2")}


def test_max_quota_consumer_more_than_expected_max_capacity_members():
    t = ["topic1", "topic2"]
    counts = {"topic1": 2, "topic2": 2}
    subs = {"consumer1": sub(t, "topic1-0,topic2-0", 1), "consumer2": sub(t, "topic1-1,topic2-1", 1), "consumer3": sub(t, "", 1)}
    d = sticky_assign(counts, subs)
    assert d.transfers == {("topic2", 0): "consumer3"}
    assert d.ideal == {"consumer1": parts("topic1-0"), "consumer2": parts("topic1-1,topic2-1"), "consumer3": parts("topic2-0")}
    assert get("cooperative-sticky").assign(counts, subs)["consumer3"] == []
    assert final("cooperative-sticky", counts, subs) == d.ideal


@pytest.mark.parametrize("name", BOTH)
def test_all_consumers_are_under_min_quota(name):
    t = ["topic1", "topic2"]
    d = get(name).assign_detailed({"topic1": 2, "topic2": 3}, {"consumer1": sub(t, "topic1-0", 1), "consumer2": sub(t, "topic1-1", 1), "consumer3": sub(t, "", 1)})
    assert d.transfers == {}
    assert d.round_one == {"consumer1": parts("topic1-0,topic2-1"), "consumer2": parts("topic1-1,topic2-2"), "consumer3": parts("topic2-0")}


@pytest.mark.parametrize("name", BOTH)
def test_add_remove_two_consumers_two_topics(name):
    t = ["topic1", "topic2"]
    counts = {"topic1": 3, "topic2": 4}
    first = get(name).assign(counts, {"consumer1": sub(t), "consumer2": sub(t)})
    assert first == {"consumer1": parts("topic1-0,topic1-2,topic2-1,topic2-3"), "consumer2": parts("topic1-1,topic2-0,topic2-2")}
    own = lambda out, m: ",".join(f"{a}-{b}" for a, b in out[m])  # noqa: E731
    subs = {"consumer1": sub(t, own(first, "consumer1"), 1), "consumer2": sub(t, own(first, "consumer2"), 1),
            "consumer3": sub(t, "", 1), "consumer4": sub(t, "", 1)}
    d = get(name).assign_detailed(counts, subs)
    assert d.transfers == {("topic1", 2): "consumer3", ("topic2", 3): "consumer3", ("topic2", 2): "consumer4"}
    second = final(name, counts, subs)
    assert second == {"consumer1": parts("topic1-0,topic2-1"), "consumer2": parts("topic2-0,topic1-1"),
                      "consumer3": parts("topic1-2,topic2-3"), "consumer4": parts("topic2-2")}
    subs = {"consumer3": sub(t, own(second, "consumer3"), 2), "consumer4": sub(t, own(second, "consumer4"), 2)}
    d = get(name).assign_detailed(counts, subs)
    assert d.transfers == {}
    assert d.round_one == {"consumer3": parts("topic1-2,topic2-3,topic1-0,topic2-1"), "consumer4": parts("topic2-2,topic1-1,topic2-0")}


@pytest.mark.parametrize("name", BOTH)
def test_topic_balance_after_reassignment(name):
    """KAFKA-16277: at every step every consumer holds the same number of partitions of each topic."""
    t = ["topic1", "topic2"]
    counts = {"topic1": 12, "topic2": 12}

    def per_topic(out, expected):
        for plist in out.values():
            assert sum(1 for tp in plist if tp[0] == "topic1") == expected
            assert sum(1 for tp in plist if tp[0] == "topic2") == expected

    def owned(out, m, gen):
        return {"topics": t, "owned": [list(tp) for tp in out[m]], "generation": gen}

    out = final(name, counts, {"consumer1": sub(t)})
    per_topic(out, 12)
    out = final(name, counts, {"consumer1": owned(out, "consumer1", 1), "consumer2": sub(t, "", 1)})
    per_topic(out, 6)
    out = final(name, counts, {"consumer1": owned(out, "consumer1", 5), "consumer2": owned(out, "consumer2", 5),
                               "consumer3": sub(t, "", 5), "consumer4": sub(t, "", 5)})
    per_topic(out, 3)
    out = final(name, counts, {"consumer3": owned(out, "consumer3", 9), "consumer4": owned(out, "consumer4", 9)})
    per_topic(out, 6)


@pytest.mark.parametrize("name", BOTH)
def test_all_consumers_reach_expected_quota_and_are_considered_filled(name):
    d = get(name).assign_detailed({"topic": 4}, {"consumer1": sub(["topic"], "topic-0,topic-1", 1), "consumer2": sub(["topic"], "topic-2", 1),
                                                 "consumer3": sub(["topic"], "", 1)})
    assert d.transfers == {}
    assert d.round_one == {"consumer1": parts("topic-0,topic-1"), "consumer2": parts("topic-2"), "consumer3": parts("topic-3")}


@pytest.mark.parametrize("name", BOTH)
@pytest.mark.parametrize("stale", [9, -1])
def test_owned_partitions_invalidated_for_consumer_with_stale_generation(name, stale):
    t = ["topic", "topic2"]
    d = get(name).assign_detailed({"topic": 3, "topic2": 3}, {"consumer1": sub(t, "topic-0,topic-2,topic2-1", 10),
                                                              "consumer2": sub(t, "topic-0,topic-2,topic2-1", stale)})
    assert d.transfers == {}
    assert d.round_one == {"consumer1": parts("topic-0,topic-2,topic2-1"), "consumer2": parts("topic-1,topic2-0,topic2-2")}


@pytest.mark.parametrize("n,sticky_c1,coop_c1", [(3, "topic-1", "topic-1"), (4, "topic-1,topic-3", "topic-1,topic-3")])
def test_partition_claimed_by_multiple_consumers_in_same_generation(n, sticky_c1, coop_c1):
    counts = {"topic": n}
    subs = {"consumer1": sub(["topic"], "topic-0,topic-1", 1), "consumer2": sub(["topic"], "topic-0,topic-2", 1), "consumer3": sub(["topic"], "", 1)}
    d = sticky_assign(counts, subs)
    assert d.transfers == {("topic", 0): "consumer3"}
    assert d.ideal == {"consumer1": parts(sticky_c1), "consumer2": parts("topic-2"), "consumer3": parts("topic-0")}
    assert d.round_one == {"consumer1": parts(coop_c1), "consumer2": parts("topic-2"), "consumer3": []}


@pytest.mark.parametrize("name", BOTH)
def test_ensure_partitions_assigned_to_highest_generation(name):
    t = ["topic", "topic2", "topic3"]
    d = get(name).assign_detailed({"topic": 3, "topic2": 3, "topic3": 3}, {
        "consumer1": sub(t, "topic-0,topic2-0,topic3-0", 10),
        "consumer2": sub(t, "topic-1,topic2-1,topic3-1", 9),
        "consumer3": sub(t, "topic2-1,topic3-0,topic3-2", 8)})
    assert d.transfers == {}
    assert d.round_one == {"consumer1": parts("topic-0,topic2-0,topic3-0"), "consumer2": parts("topic-1,topic2-1,topic3-1"),
                           "consumer3": parts("topic-2,topic2-2,topic3-2")}


@pytest.mark.parametrize("name", BOTH)
def test_no_reassignment_on_current_members(name):
    t = ["topic", "topic2", "topic3", "topic1"]
    d = get(name).assign_detailed({"topic": 3, "topic1": 3, "topic2": 3, "topic3": 3}, {
        "consumer1": sub(t, "", -1),
        "consumer2": sub(t, "topic-0,topic2-0,topic1-0", 9),
        "consumer3": sub(t, "topic3-2,topic2-2,topic1-1", 8),
        "consumer4": sub(t, "topic3-1,topic-1,topic-2", 7)})
    assert d.transfers == {}
    assert d.round_one["consumer1"] == parts("topic1-2,topic2-1,topic3-0")
    assert check_all({"topic": 3, "topic1": 3, "topic2": 3, "topic3": 3}, {m: sub(t) for m in d.round_one}, d.round_one) == []


@pytest.mark.parametrize("name", BOTH)
def test_owned_partitions_invalidated_for_consumer_with_multiple_generation(name):
    t = ["topic", "topic2"]
    d = get(name).assign_detailed({"topic": 3, "topic2": 3}, {"consumer1": sub(t, "topic-0,topic2-1,topic-1", 10),
                                                              "consumer2": sub(t, "topic-0,topic2-1,topic2-2", 8)})
    assert d.transfers == {}
    assert d.round_one == {"consumer1": parts("topic-0,topic2-1,topic-1"), "consumer2": parts("topic-2,topic2-2,topic2-0")}


@pytest.mark.parametrize("name", BOTH)
def test_rack_test_non_rack_uniform_subscription(name):
    all3 = ["t1", "t2", "t3"]
    out = get(name).assign({"t1": 6, "t2": 7, "t3": 2}, {f"consumer{i}": sub(all3) for i in range(3)})
    assert out == {"consumer0": parts("t1-0,t1-3,t2-0,t2-3,t2-6"), "consumer1": parts("t1-1,t1-4,t2-1,t2-4,t3-0"),
                   "consumer2": parts("t1-2,t1-5,t2-2,t2-5,t3-1")}


@pytest.mark.parametrize("name", BOTH)
def test_rack_test_non_rack_non_equal_subscription(name):
    all3 = ["t1", "t2", "t3"]
    counts = {"t1": 6, "t2": 7, "t3": 2}
    topics = {"consumer0": all3, "consumer1": all3, "consumer2": ["t1", "t3"]}
    out = get(name).assign(counts, {m: sub(ts) for m, ts in topics.items()})
    assert out == {"consumer0": parts("t1-5,t2-0,t2-2,t2-4,t2-6"), "consumer1": parts("t1-3,t2-1,t2-3,t2-5,t3-0"),
                   "consumer2": parts("t1-0,t1-1,t1-2,t1-4,t3-1")}


def test_rack_test_non_equal_subscription_cooperative_two_steps():
    all3 = ["t1", "t2", "t3"]
    counts = {"t1": 6, "t2": 7, "t3": 2}
    topics = {"consumer0": all3, "consumer1": all3, "consumer2": ["t1", "t3"]}
    owned = {"consumer0": "t1-0,t1-1,t1-2,t1-3,t1-4", "consumer1": "t1-5,t2-0,t2-1,t2-2,t2-3", "consumer2": "t2-4,t2-5,t2-6,t3-0,t3-1"}
    coop = get("cooperative-sticky")
    r1 = coop.assign(counts, {m: sub(topics[m], owned[m], 1) for m in topics})
    assert r1 == {"consumer0": parts("t1-2,t1-3,t1-4"), "consumer1": parts("t2-0,t2-1,t2-2,t2-3"), "consumer2": parts("t3-0,t3-1")}
    r2 = coop.assign(counts, {m: {"topics": topics[m], "owned": [list(tp) for tp in r1[m]], "generation": 2} for m in topics})
    assert r2 == {"consumer0": parts("t1-2,t1-3,t1-4,t2-4,t2-5"), "consumer1": parts("t2-0,t2-1,t2-2,t2-3,t2-6"),
                  "consumer2": parts("t1-0,t1-1,t1-5,t3-0,t3-1")}


def test_assignor_with_old_version_subscriptions():
    """CST: V1 subscriptions carry owned partitions but no generation."""
    out = get("cooperative-sticky").assign({"topic1": 3}, {"consumer1": sub(["topic1"], "topic1-0"), "consumer2": sub(["topic1"], "topic1-1"),
                                                           "consumer3": sub(["topic1"])})
    assert out == {"consumer1": parts("topic1-0"), "consumer2": parts("topic1-1"), "consumer3": parts("topic1-2")}


@pytest.mark.parametrize("name", BOTH)
def test_sticky_javadoc_examples(name):
    t = [f"t{i}" for i in range(4)]
    out = get(name).assign({x: 2 for x in t}, {f"C{i}": sub(t) for i in range(3)})
    assert out == {"C0": parts("t0-0,t1-1,t3-0"), "C1": parts("t0-1,t2-0,t3-1"), "C2": parts("t1-0,t2-1")}
    out = get(name).assign({"t0": 1, "t1": 2, "t2": 3}, {"C0": sub(["t0"]), "C1": sub(["t0", "t1"]), "C2": sub(["t0", "t1", "t2"])})
    assert out == {"C0": parts("t0-0"), "C1": parts("t1-0,t1-1"), "C2": parts("t2-0,t2-1,t2-2")}


# ---------------------------------------------------------------- differences from Kafka kept on purpose

def test_empty_subscription_walked_first_does_not_force_constrained_path():
    subs = {"consumer3": {"topics": []}, "consumer1": {"topics": ["t"]}}
    d = sticky_assign({"t": 4}, subs)
    assert d.path == "general"
    assert d.ideal == {"consumer3": [], "consumer1": parts("t-0,t-1,t-2,t-3")}


def test_out_of_range_and_unknown_claims_are_ignored():
    subs = {"a": {"topics": ["t"], "owned": [["t", 7], ["t", -1], ["gone", 0], ["t", 0], ["t", 0]], "generation": 3},
            "b": {"topics": ["t"], "generation": 3}}
    d = sticky_assign({"t": 2}, subs)
    assert d.ideal == {"a": [("t", 0)], "b": [("t", 1)]} and d.transfers == {}


def test_generation_validated_deferral_on_general_path():
    """I6': u-0 is claimed by both members in the same generation. Kafka's general path gives it to
    consumer1 at once (consumer1 lists it as owned, so it is not "newly added"); we withhold it one round."""
    counts = {"t": 1, "u": 2}
    subs = {"c1": {"topics": ["u"], "owned": [["u", 0]], "generation": 2},
            "c2": {"topics": ["t", "u"], "owned": [["u", 0]], "generation": 2}}
    d = get("cooperative-sticky").assign_detailed(counts, subs)
    assert d.path == "general"
    assert d.ideal == {"c1": [("u", 0), ("u", 1)], "c2": [("t", 0)]}
    assert d.transfers == {("u", 0): "c1"}
    assert d.round_one == {"c1": [("u", 1)], "c2": [("t", 0)]}
    kafka_round_one = d.ideal  # what Kafka's raw-owned transfer rule would hand out
    assert check_cooperative(subs, kafka_round_one) is None  # Kafka's own check (I6) cannot see the problem
    assert check_generation_validated(subs, kafka_round_one) is not None  # I6' does
    assert check_generation_validated(subs, d.round_one) is None
    rounds, out = converge(get("cooperative-sticky").assign, counts, subs)
    assert rounds == 1 and out == d.ideal


def test_result_independent_of_input_member_order():
    t = ["x", "y"]
    subs = {"m1": sub(t, "x-0,x-1,y-0", 4), "m2": sub(t, "x-0,y-1", 4), "m3": sub(t, "y-1,y-2", 6), "m4": sub(["x"])}
    a = sticky_assign({"x": 3, "y": 3}, subs)
    b = sticky_assign({"x": 3, "y": 3}, dict(reversed(list(subs.items()))))
    assert a == b


# ---------------------------------------------------------------- property tests (I1–I5, I9, I10) and convergence

TOPICS = ["a", "b", "c", "d", "e"]


@st.composite
def groups(draw, uniform=None):
    counts = {t: draw(st.integers(0, 6)) for t in TOPICS}
    n = draw(st.integers(1, 7))
    members = [f"m{i}" for i in range(n)]
    uni = draw(st.booleans()) if uniform is None else uniform
    shared = draw(st.lists(st.sampled_from(TOPICS + ["ghost"]), min_size=1, max_size=4, unique=True))
    all_parts = [(t, p) for t in TOPICS for p in range(-1, counts[t] + 1)]
    subs = {}
    for m in members:
        topics = shared if uni else draw(st.lists(st.sampled_from(TOPICS + ["ghost"]), max_size=4))
        owned = draw(st.lists(st.sampled_from(all_parts), max_size=6)) if all_parts else []
        subs[m] = {"topics": list(topics), "owned": [list(tp) for tp in owned], "generation": draw(st.integers(-1, 3)),
                   "instance_id": draw(st.none() | st.sampled_from(["i1", "i2"]))}
    return counts, subs


@pytest.mark.parametrize("name", BOTH)
@given(g=groups())
def test_invariants_on_random_groups(name, g):
    counts, subs = g
    out = get(name).assign(counts, subs)
    coop = name == "cooperative-sticky"
    assert check_all(counts, subs, out, complete=not coop, balanced=not coop, cooperative=coop, sticky=True) == []
    assert get(name).assign(counts, dict(reversed(list(subs.items())))) == out  # I10


@given(g=groups())
def test_cooperative_converges_within_four_rounds_to_a_valid_balanced_assignment(g):
    counts, subs = g
    problems: list[str] = []

    def each_round(s, out):
        problems.extend(check_all(counts, s, out, complete=False, balanced=False, cooperative=True))

    rounds, out = converge(get("cooperative-sticky").assign, counts, subs, on_round=each_round)
    assert problems == []
    assert rounds <= 4
    assert check_all(counts, subs, out) == []


@given(g=groups(), data=st.data())
def test_membership_churn_keeps_invariants(g, data):
    """Members leave and join over several rebalances; each converged state is valid and balanced."""
    counts, subs = g
    out = get("sticky").assign(counts, subs)
    for step in range(3):
        subs = next_subscriptions(subs, out)
        if len(subs) > 1 and data.draw(st.booleans(), label=f"leave{step}"):
            subs.pop(data.draw(st.sampled_from(sorted(subs)), label=f"who{step}"))
        if data.draw(st.booleans(), label=f"join{step}"):
            subs[f"new{step}"] = {"topics": data.draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=3), label=f"topics{step}")}
        out = get("sticky").assign(counts, subs)
        assert check_all(counts, subs, out, sticky=True) == []


# ---------------------------------------------------------------- the checks above catch broken assignors (mutants)

def _drop_last(out):
    return {m: ps[:-1] if ps else ps for m, ps in out.items()}


def test_checks_catch_mutants():
    counts = {"t": 4}
    subs = {"a": sub(["t"], "t-0,t-1", 1), "b": sub(["t"], "t-2,t-3", 1), "c": sub(["t"], "", 1)}
    good = get("sticky").assign(counts, subs)
    assert check_all(counts, subs, good, sticky=True) == []
    # I4: a partition dropped
    assert any(p.startswith("I4") for p in check_all(counts, subs, _drop_last(good)))
    # I2: a partition given twice
    dup = {**good, "c": good["c"] + [good["a"][0]]}
    assert any(p.startswith("I2") for p in check_all(counts, subs, dup))
    # I3: an unsubscribed partition
    assert any(p.startswith("I3") for p in check_all({"t": 4, "u": 1}, subs, {**good, "c": good["c"] + [("u", 0)]}))
    # I1: a member missing
    assert any(p.startswith("I1") for p in check_all(counts, subs, {k: v for k, v in good.items() if k != "c"}))
    # I5: everything on one member
    assert check_movability(counts, subs, {"a": parts("t-0,t-1,t-2,t-3"), "b": [], "c": []})
    # I6: a partition moved directly in one cooperative round (the eager answer used as round 1)
    assert check_cooperative(subs, good) and check_cooperative(subs, get("cooperative-sticky").assign(counts, subs)) is None
    # I9: a swap both ways
    two = {"a": sub(["t"], "t-0,t-1", 1), "b": sub(["t"], "t-2,t-3", 1)}
    assert check_no_two_cycles(two, {"a": parts("t-0,t-2"), "b": parts("t-1,t-3")})


def test_convergence_driver_catches_an_assignor_that_never_settles():
    """A mutant that moves the partition to the other member every round: never converges (I8), and I6 fails."""
    def ping_pong(counts, subs):
        owned = {m: [tuple(x) for x in s.get("owned", [])] for m, s in subs.items()}
        ms = sorted(subs)
        holder = next((m for m in ms if owned[m]), ms[1])
        other = ms[1] if holder == ms[0] else ms[0]
        return {holder: [], other: [("t", 0)]}

    seen: list[str] = []
    rounds, _ = converge(ping_pong, {"t": 1}, {"x": {"topics": ["t"], "owned": [["t", 0]]}, "y": {"topics": ["t"]}}, max_rounds=6,
                         on_round=lambda s, out: seen.extend(check_all({"t": 1}, s, out, complete=False, balanced=False, cooperative=True)))
    assert rounds > 4
    assert seen and seen[0].startswith("I6")


@pytest.mark.parametrize("name", BOTH)
@given(g=groups(uniform=False))
def test_both_least_loaded_indexes_give_the_same_result(name, g):
    """The per-class and per-topic least-loaded indexes are interchangeable (same choices, same output)."""
    import groupspec.reference.assignors._sticky_general as general_mod

    counts, subs = g
    results = []
    saved = general_mod.INDEX_KIND
    try:
        for kind in ("class", "topic"):
            general_mod.INDEX_KIND = kind
            results.append(get(name).assign(counts, subs))
    finally:
        general_mod.INDEX_KIND = saved
    assert results[0] == results[1]


@pytest.mark.parametrize("kind", ["class", "topic"])
@given(data=st.data())
def test_least_loaded_index_matches_brute_force(kind, data):
    """Random load changes (up and down): ``least(t)`` is always the min (load, member id) subscriber of t."""
    from groupspec.reference.assignors import _sticky_general as sg, _sticky_problem as sp
    from groupspec.reference.assignors._frame import normalize

    n = data.draw(st.integers(1, 6), label="members")
    subs = {f"m{i}": {"topics": data.draw(st.lists(st.sampled_from(["a", "b", "c"]), max_size=3), label=f"topics{i}")} for i in range(n)}
    prob = sp.encode({"a": 2, "b": 2, "c": 2}, normalize(subs))
    load = [0] * n
    index = sg.load_index(prob, load, kind)
    for _ in range(data.draw(st.integers(1, 30), label="steps")):
        m = data.draw(st.integers(0, n - 1))
        index.set_load(m, max(0, load[m] + data.draw(st.sampled_from([-2, -1, 1, 2]))))
        for t in range(len(prob.topics)):
            eligible = [x for x in range(n) if t in prob.subs[x]]
            expected = min(eligible, key=lambda x: (load[x], prob.rank[x])) if eligible else -1
            assert index.least(t) == expected


def test_least_loaded_index_check_catches_a_mutant():
    """An index that ignores load decreases gives a wrong minimum."""
    from groupspec.reference.assignors import _sticky_general as sg, _sticky_problem as sp
    from groupspec.reference.assignors._frame import normalize

    prob = sp.encode({"a": 1}, normalize({"x": {"topics": ["a"]}, "y": {"topics": ["a"]}}))
    load = [0, 0]
    index = sg.load_index(prob, load, "topic")
    index.set_load(0, 3)
    index.set_load(1, 2)
    assert index.least(0) == 1
    index.set_load(0, 1)
    assert index.least(0) == 0
    broken = sg.load_index(prob, [0, 0], "topic")
    broken.set_load(0, 3)
    broken.set_load(1, 2)
    assert broken.least(0) == 1
    broken.load[0] = 1  # a decrease the index is not told about (the mutant's behaviour)
    assert broken.least(0) != 0


# ------------------------------------------------------------------ the fresh group in closed form
def _fresh_group(counts: list[int], members: list[int], shared: bool):
    topics = [f"t{i}" for i in range(len(counts))]
    subs = {f"m{j}": {"topics": topics if shared else list(topics)} for j in members}  # one list object, or copies
    return {f"t{i}": c for i, c in enumerate(counts)}, subs


fresh_groups = st.builds(
    _fresh_group,
    st.lists(st.integers(0, 9), min_size=1, max_size=6),
    st.lists(st.integers(0, 120), min_size=1, max_size=25, unique=True),
    st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(fresh_groups)
def test_fresh_group_closed_form_is_the_dealing_loop(group):
    """A fresh group (nothing owned, equal subscriptions) is dealt in closed form by list slices:
    the same outcome, member order and list order as the constrained path's dealing loop."""
    from groupspec.reference.assignors.sticky import _sticky_assign

    counts, subs = group
    fast = _sticky_assign(counts, subs)
    slow = _sticky_assign(counts, subs, closed_form=False)
    assert fast == slow
    assert list(fast.ideal) == list(slow.ideal) and list(fast.round_one) == list(slow.round_one)


def test_fresh_group_closed_form_check_catches_a_mutant(monkeypatch):
    """Dealing by member order instead of member-id order differs from the loop, and the comparison sees it."""
    from groupspec.reference.assignors import sticky

    counts = {"t0": 7, "t1": 5}
    subs = {f"m{j}": {"topics": ["t0", "t1"]} for j in (3, 10, 2)}  # id order m10 < m2 < m3
    assert sticky._sticky_assign(counts, subs) == sticky._sticky_assign(counts, subs, closed_form=False)
    real = sticky._fresh_constrained

    def by_position(prob):
        prob.rank = list(range(len(prob.members)))
        return real(prob)

    monkeypatch.setattr(sticky, "_fresh_constrained", by_position)
    assert sticky._sticky_assign(counts, subs) != sticky._sticky_assign(counts, subs, closed_form=False)



# ------------------------------------------------------------------ claims sent as tuples: a member's own pairs back
def _as_tuples(subs, which):
    """``subs`` with the claims of the members ``which`` picks sent as ``(topic, partition)`` tuples."""
    return {m: {**s, "owned": [tuple(tp) for tp in s.get("owned") or []]} if which(m) else s for m, s in subs.items()}


@pytest.mark.parametrize("name", BOTH)
@given(g=groups(), data=st.data())
def test_claims_sent_as_tuples_give_the_same_outcome(name, g, data):
    """A member that sends its claims as ``(str, int)`` tuples and is given exactly them gets a copy of its own list
    back (``sticky._given_as_sent``): the outcome (ideal, round one, transfers) equals the one for the same claims
    sent as lists, pair for pair and in order, every pair a tuple. Over three rounds, each member handing back its
    previous result or not, members leaving and joining: some keep all they sent, some part, some more."""
    from groupspec.reference.assignors.sticky import _sticky_assign

    counts, subs = g
    if data.draw(st.booleans(), label="valid claims only"):  # else a claim that is not valid takes the other path
        # in one generation, a partition two members claim is taken from both: then a member may be dealt as many
        # partitions as it sent, not the same ones
        gen = data.draw(st.sampled_from([None, 1]), label="one generation")
        subs = {m: {**s, "owned": [tp for tp in s["owned"] if 0 <= tp[1] < counts.get(tp[0], 0)],
                    "generation": s["generation"] if gen is None else gen} for m, s in subs.items()}
    for step in range(3):
        tuples = set(data.draw(st.lists(st.sampled_from(sorted(subs)), unique=True), label=f"tuples{step}"))
        sent = _as_tuples(subs, tuples.__contains__)
        want = _sticky_assign(counts, subs)
        got = _sticky_assign(counts, sent)
        assert got == want
        assert all(type(p) is tuple and type(p[0]) is str and type(p[1]) is int for ps in got.ideal.values() for p in ps)
        out = want.ideal if name == "sticky" else want.round_one
        subs = next_subscriptions(subs, out)
        if len(subs) > 1 and data.draw(st.booleans(), label=f"leave{step}"):
            subs.pop(data.draw(st.sampled_from(sorted(subs)), label=f"who{step}"))
        if data.draw(st.booleans(), label=f"join{step}"):
            subs[f"new{step}"] = {"topics": data.draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=3), label=f"t{step}")}


def test_claims_sent_as_tuples_check_catches_mutants(monkeypatch):
    """Handing a member its own pairs back when it is given as many partitions as it sent, not the same ones
    (the gid comparison dropped), or in another order, differs from the claims sent as lists, and the comparison
    above sees it."""
    from groupspec.reference.assignors import sticky

    counts = {"t": 4}
    # t-1 claimed by both in one generation: a keeps t-0 and is dealt t-1 back (all it sent); b keeps t-2 and is
    # dealt t-3 (as many as it sent, not the same ones)
    subs = {"a": sub(["t"], "t-0,t-1", 1), "b": sub(["t"], "t-1,t-2", 1)}
    sent = _as_tuples(subs, lambda m: True)
    assert sticky._sticky_assign(counts, sent) == sticky._sticky_assign(counts, subs)
    assert sticky._sticky_assign(counts, subs).ideal == {"a": parts("t-0,t-1"), "b": parts("t-2,t-3")}
    real = sticky._given_as_sent

    def by_count(prob, order, lens):  # the mutant: kept when the lengths agree
        kept = real(prob, order, lens)
        starts = prob.sent_starts
        if starts is None:
            return kept
        return np.array([starts[m + 1] - starts[m] == lens[m] and prob.sent_pairs[m] is not None
                         for m in range(len(lens))], dtype=np.bool_)

    def shuffled(prob, order, lens):  # the mutant: the pairs sent, in reverse order
        kept = real(prob, order, lens)
        if kept is not None:
            prob.sent_pairs = [None if p is None else p[::-1] for p in prob.sent_pairs]
        return kept

    monkeypatch.setattr(sticky, "_given_as_sent", by_count)
    assert sticky._sticky_assign(counts, sent) != sticky._sticky_assign(counts, subs)
    monkeypatch.setattr(sticky, "_given_as_sent", shuffled)
    assert sticky._sticky_assign(counts, sent) != sticky._sticky_assign(counts, subs)
