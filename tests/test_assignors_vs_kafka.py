"""The reference's range and roundrobin give exactly Kafka's answer (the pinned kafka-clients jar, run in one JVM by
``groupspec.kafka.assignors.JavaAssignors``) on generated groups: member order by instance and member id in Java's
UTF-16 order, uneven subscriptions, topics without metadata, owned partitions, and KIP-881 replica racks."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupspec.kafka.assignors import JavaAssignors
from groupspec.reference.assignors import get
from groupspec.reference.assignors.range_assignor import RangeAssignor

RACKS = ["r0", "r1", "r2"]
NAMES = st.sampled_from(["a", "b", "B", "m1", "m10", "m2", "é", "\U0001f600", "ｚ", "x-y"])


@pytest.fixture(scope="module")
def java():
    with JavaAssignors(heap="256m") as j:
        yield j


@st.composite
def groups(draw, racks: bool):
    topics = draw(st.dictionaries(st.sampled_from(["t0", "t1", "t2", "t3"]), st.integers(0, 12), min_size=1, max_size=4))
    known = list(topics) + ["missing"]
    members = {}
    for mid in draw(st.lists(NAMES, min_size=1, max_size=6, unique=True)):
        sub: dict = {"topics": draw(st.lists(st.sampled_from(known), max_size=5))}
        if draw(st.booleans()):
            sub["instance_id"] = draw(st.sampled_from(["i1", "i2", "I", "ü"]))
        if racks and draw(st.booleans()):
            sub["rack"] = draw(st.sampled_from(RACKS))
        if draw(st.booleans()):
            sub["owned"] = [[t, p] for t, n in topics.items() for p in range(n) if draw(st.booleans())][:5]
            sub["generation"] = draw(st.integers(1, 3))
        members[mid] = sub
    if len({s.get("instance_id") for s in members.values() if s.get("instance_id")}) != sum(
            1 for s in members.values() if s.get("instance_id")):
        for i, s in enumerate(members.values()):  # a real group has each instance id once
            if "instance_id" in s:
                s["instance_id"] = f"inst{i}"
    partition_racks = None
    if racks:
        partition_racks = {t: [draw(st.lists(st.sampled_from(RACKS), max_size=2, unique=True)) for _ in range(n)]
                           for t, n in topics.items()}
    return topics, members, partition_racks


def ours(name, topics, members, partition_racks=None):
    out = get(name).assign(topics, members, partition_racks) if partition_racks is not None else get(name).assign(topics, members)
    return {m: [tuple(tp) for tp in tps] for m, tps in out.items()}


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", ["range", "roundrobin"])
@SETTINGS
@given(g=groups(racks=False))
def test_same_as_kafka_on_generated_groups(java, name, g):
    topics, members, _ = g
    assert ours(name, topics, members) == java.assign(name, topics, members)


@SETTINGS
@given(g=groups(racks=True))
def test_range_with_racks_same_as_kafka(java, g):
    topics, members, partition_racks = g
    assert ours("range", topics, members, partition_racks) == java.assign("range", topics, members, partition_racks)


def test_large_uniform_range_same_as_kafka(java):
    """The fast path (every member on the same topics, a fresh pass per topic) at a size where q > 1 and r > 0."""
    topics = {f"topic{i}": 50 + i for i in range(30)}
    members = {f"consumer{i}": {"topics": list(topics)} for i in range(17)}
    assert ours("range", topics, members) == java.assign("range", topics, members)


def _last_get_extra(self, result):
    """A mutant of the fast path: the ``r`` extra partitions go to the last members instead of the first."""
    topic, q, extra, start, k = self.topic, self.q, self.extra, 0, len(self.members)
    for i, m in enumerate(self.members):
        size = q + 1 if i >= k - extra else q
        result[m] += [(topic, p) for p in range(start, start + size)]
        start += size
    self.n_taken = self.n


def test_the_comparison_catches_a_mutant(java, monkeypatch):
    from groupspec.reference.assignors import range_assignor

    topics = {"t0": 7, "t1": 4}
    members = {"a": {"topics": ["t0", "t1"]}, "b": {"topics": ["t0", "t1"]}, "c": {"topics": ["t0"]}}
    assert ours("range", topics, members) == java.assign("range", topics, members)
    monkeypatch.setattr(range_assignor._Topic, "fresh_range", _last_get_extra)
    assert ours("range", topics, members) != java.assign("range", topics, members)
