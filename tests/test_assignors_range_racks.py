"""Rack-aware range (KIP-881, KAFKA-14451/KAFKA-14891): hand-worked examples from Kafka's rules, and the
guarantees the rack mode keeps (per-topic balance, co-partitioning, racks ignored when the mode is off),
checked against the plain range spec of the assignor checker (an independent implementation)."""
from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from groupspec.assignorcheck.core import expected_range
from groupspec.reference.assignors import get
from groupspec.reference.assignors.range_assignor import topic_needs_racks

RANGE = get("range")


def sub(topics, rack=None, instance=None):
    return {"topics": topics, "rack": rack, "instance_id": instance}


def test_co_partitioned_topics_follow_the_racks_together():
    # RangeAssignor's Javadoc: partition 0 of all topics on rack 'a', partition 1 on 'b': each partition of
    # every topic goes to the consumer on its rack; without racks c0 would take partition 0.
    subs = {"c0": sub(["t1", "t2"], "b"), "c1": sub(["t1", "t2"], "a")}
    racks = {"t1": [["a"], ["b"]], "t2": [["a"], ["b"]]}
    out = RANGE.assign({"t1": 2, "t2": 2}, subs, partition_racks=racks)
    assert out == {"c0": [("t1", 1), ("t2", 1)], "c1": [("t1", 0), ("t2", 0)]}
    assert RANGE.assign({"t1": 2, "t2": 2}, subs) == {"c0": [("t1", 0), ("t2", 0)], "c1": [("t1", 1), ("t2", 1)]}


def test_the_extra_partition_goes_to_whoever_fills_first():
    # 3 partitions, 2 consumers: quotas 2 and 1. Rack pass: c0 (rack b) takes p2; c1 (rack a) takes p0, p1 and
    # with them the one extra slot. Plain range would give c0 the extra one (p0, p1).
    subs = {"c0": sub(["t"], "b"), "c1": sub(["t"], "a")}
    out = RANGE.assign({"t": 3}, subs, partition_racks={"t": [["a"], ["a"], ["b"]]})
    assert out == {"c0": [("t", 2)], "c1": [("t", 0), ("t", 1)]}


def test_balance_wins_over_rack_alignment():
    # every partition on rack a, one consumer on a: it gets its quota (2 of 4), the rest go mis-aligned.
    subs = {"c0": sub(["t"], "a"), "c1": sub(["t"], "b")}
    out = RANGE.assign({"t": 4}, subs, partition_racks={"t": [["a"], ["a"], ["a"], ["b", "c"]]})
    assert Counter(len(v) for v in out.values()) == Counter([2, 2])
    assert out["c1"] == [("t", 2), ("t", 3)] or ("t", 3) in out["c1"]


def test_a_consumer_without_a_rack_matches_every_partition():
    subs = {"c0": sub(["t"]), "c1": sub(["t"], "a")}
    # rack pass in member order: c0 (no rack) takes p0 (it matches everything); c1 (a) wants p0, gone; the
    # plain pass then gives c1 p1, mis-aligned. Kafka's greedy order, not an optimum.
    out = RANGE.assign({"t": 2}, subs, partition_racks={"t": [["a"], ["b"]]})
    assert out == {"c0": [("t", 0)], "c1": [("t", 1)]}


def test_kip881_conditions():
    assert not topic_needs_racks(set(), [frozenset("a"), frozenset("b")])          # no consumer rack
    assert not topic_needs_racks({"x"}, [frozenset("a"), frozenset("b")])          # racks do not meet
    assert not topic_needs_racks({"a"}, [frozenset("ab"), frozenset("ab")])        # all on the same racks
    assert topic_needs_racks({"a"}, [frozenset("ab"), frozenset("b")])
    # an empty rack string is no rack; a missing partition row means no replica racks
    subs = {"c0": sub(["t"], ""), "c1": sub(["t"], "a")}
    assert RANGE.assign({"t": 2}, subs, partition_racks={"t": [["a"]]}) == RANGE.assign({"t": 2}, subs)


RACKS = st.sampled_from([None, "a", "b", "c"])
REPLICAS = st.lists(st.sampled_from("abc"), max_size=3, unique=True)


@st.composite
def racked_inputs(draw):
    topics = [f"t{i}" for i in range(draw(st.integers(1, 3)))]
    ppt = {t: draw(st.integers(1, 7)) for t in topics}
    if draw(st.booleans()) and len(topics) > 1:  # make co-partitioned topics likely
        n = ppt[topics[0]]
        ppt = {t: n for t in topics}
    members = [f"c{i}" for i in range(draw(st.integers(1, 5)))]
    uniform = draw(st.booleans())
    common = draw(st.lists(st.sampled_from(topics), min_size=1, unique=True))
    subs = {m: sub(common if uniform else draw(st.lists(st.sampled_from(topics), min_size=1, unique=True)),
                   draw(RACKS), f"i{draw(st.integers(0, 9))}-{m}" if draw(st.booleans()) else None)
            for m in members}
    racks = {t: [draw(REPLICAS) for _ in range(n)] for t, n in ppt.items()}
    return ppt, subs, racks


@settings(max_examples=300, deadline=None)
@given(racked_inputs())
def test_rack_mode_keeps_ranges_guarantees(case):
    ppt, subs, racks = case
    out = RANGE.assign(ppt, subs, partition_racks=racks)
    plain = expected_range(ppt, subs)
    owner = {tp: m for m, tps in out.items() for tp in tps}
    assert sum(map(len, out.values())) == len(owner)  # no partition twice
    assert set(owner) == {tp for tps in plain.values() for tp in tps}  # the same partitions, all assigned
    for t in ppt:
        # per-topic balance: the same multiset of per-member counts as plain range
        got = Counter(sum(1 for tt, _ in out[m] if tt == t) for m in subs if t in subs[m]["topics"])
        want = Counter(sum(1 for tt, _ in plain[m] if tt == t) for m in subs if t in subs[m]["topics"])
        assert got == want, t
        assert all(t in subs[owner[(t, p)]]["topics"] for p in range(ppt[t]) if (t, p) in owner)
    # co-partitioning: same subscribers and partition count => partition p of each goes to one member
    by_key: dict = {}
    for t, n in ppt.items():
        who = tuple(sorted(m for m in subs if t in subs[m]["topics"]))
        if who:
            by_key.setdefault((who, n), []).append(t)
    for (_, n), ts in by_key.items():
        for p in range(n):
            assert len({owner[(t, p)] for t in ts}) == 1, (ts, p)
    # racks ignored when no topic meets KIP-881's conditions
    def needs(t):
        mr = {s["rack"] for s in subs.values() if t in s["topics"] and s["rack"]}
        return topic_needs_racks(mr, [frozenset(r) for r in racks[t]]) if mr else False
    if not any(needs(t) for t in ppt):
        assert {m: sorted(v) for m, v in out.items()} == {m: sorted(v) for m, v in plain.items()}
