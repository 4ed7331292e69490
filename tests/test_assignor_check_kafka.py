"""kafka-python assignors as candidates (form 2): loading, protocol detection, wire round trip, and a
deliberately broken kafka-python subclass caught by the checker."""
from __future__ import annotations

import pytest

pytest.importorskip("kafka")

from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor  # noqa: E402
from kafka.coordinator.assignors.range import RangePartitionAssignor  # noqa: E402
from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor  # noqa: E402
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor  # noqa: E402

from groupspec import check_assignor  # noqa: E402
from groupspec.assignorcheck.load import CallRunner, FakeCluster, candidate_from_object, load_candidate  # noqa: E402


def test_forms_and_protocol_read_from_the_assignor():
    c = load_candidate("kafka.coordinator.assignors.cooperative_sticky:CooperativeStickyAssignor")
    assert (c.protocol, c.kind, c.name) == ("cooperative", "sticky", "cooperative-sticky")
    assert candidate_from_object(RangePartitionAssignor).protocol == "eager"
    assert candidate_from_object(StickyPartitionAssignor()).kind == "sticky"  # an instance works too


def test_kafka_range_matches_kafkas_worked_example():
    # RA testTwoConsumersTwoTopicsSixPartitions (assignors.md §1.4)
    cand = candidate_from_object(RangePartitionAssignor)
    subs = {m: {"topics": ["t1", "t2"], "owned": [], "generation": -1, "instance_id": None, "rack": None}
            for m in ("c1", "c2")}
    res = CallRunner(5).run(cand, {"t1": 3, "t2": 3}, subs)
    assert {m: sorted(v) for m, v in res.assignment.items()} == {
        "c1": [("t1", 0), ("t1", 1), ("t2", 0), ("t2", 1)], "c2": [("t1", 2), ("t2", 2)]}


def test_sticky_owned_partitions_travel_through_user_data():
    cand = candidate_from_object(StickyPartitionAssignor)
    subs = {"a": {"topics": ["t"], "owned": [["t", 2], ["t", 3]], "generation": 4, "instance_id": None},
            "b": {"topics": ["t"], "owned": [["t", 0], ["t", 1]], "generation": 4, "instance_id": None}}
    res = CallRunner(5).run(cand, {"t": 4}, subs)
    assert sorted(res.assignment["a"]) == [("t", 2), ("t", 3)]  # stickiness proves the history arrived


def test_fake_cluster_flags_internal_topics_like_kafka():
    c = FakeCluster({"t": 1, "__consumer_offsets": 2})
    assert c.topics() == {"t"} and c.topics(exclude_internal_topics=False) == {"t", "__consumer_offsets"}
    assert c.partitions_for_topic("gone") is None and c.partitions_for_topic("t") == {0}


class DropsLastPartition(RoundRobinPartitionAssignor):
    name = "roundrobin-drops-one"

    @classmethod
    def assign(cls, cluster, members):
        out = super().assign(cluster, members)
        for a in out.values():
            if a.assigned_partitions:
                topic, parts = a.assigned_partitions[-1]
                a.assigned_partitions[-1] = (topic, parts[:-1])
                break
        return out


def test_broken_kafka_subclass_is_caught():
    rep = check_assignor(DropsLastPartition, examples=30, seed=3, properties=["I4"], quality=False)
    assert rep["I4"].verdict == "violated"


def test_kafka_cooperative_runs_every_cooperative_property():
    rep = check_assignor(CooperativeStickyAssignor, examples=15, seed=2, properties=["I6", "I8"], quality=False)
    assert rep.protocol == "cooperative"
    assert rep["I6"].verdict == "held" and rep["I8"].verdict == "held"  # kafka-python withholds moving partitions
    assert rep["I6"].examples > 0


# ----------------------------------------------------------------------------------------------- aiokafka

# aiokafka is a test dependency (pyproject [test] extra): these tests run, they are never skipped.


def test_aiokafka_forms_worked_example_and_history():
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor as AioRange
    from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor as AioSticky

    cand = load_candidate("aiokafka.coordinator.assignors.roundrobin:RoundRobinPartitionAssignor")
    assert (cand.protocol, cand.kind) == ("eager", "roundrobin")
    subs = {m: {"topics": ["t1", "t2"], "owned": [], "generation": -1, "instance_id": None, "rack": None}
            for m in ("c1", "c2")}
    res = CallRunner(5).run(candidate_from_object(AioRange), {"t1": 3, "t2": 3}, subs)
    assert {m: sorted(v) for m, v in res.assignment.items()} == {
        "c1": [("t1", 0), ("t1", 1), ("t2", 0), ("t2", 1)], "c2": [("t1", 2), ("t2", 2)]}
    owned = {"a": {"topics": ["t"], "owned": [["t", 2], ["t", 3]], "generation": 4, "instance_id": None},
             "b": {"topics": ["t"], "owned": [["t", 0], ["t", 1]], "generation": 4, "instance_id": None}}
    res = CallRunner(5).run(candidate_from_object(AioSticky), {"t": 4}, owned)
    assert sorted(res.assignment["a"]) == [("t", 2), ("t", 3)]  # history arrived through user_data


def test_broken_aiokafka_subclass_is_caught():
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor as AioRR

    class Duplicates(AioRR):
        name = "aio-duplicates"

        @classmethod
        def assign(cls, cluster, members):
            out = super().assign(cluster, members)
            firsts = [a for a in out.values() if a.assignment]
            if firsts and len(out) > 1:
                topic, parts = firsts[0].assignment[0]
                other = next(a for a in out.values() if a is not firsts[0])
                other.assignment = list(other.assignment) + [(topic, parts[:1])]
            return out

    rep = check_assignor(Duplicates, examples=30, seed=3, properties=["I2"], quality=False)
    assert rep["I2"].verdict == "violated"
