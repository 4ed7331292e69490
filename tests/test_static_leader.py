"""A static leader's metadata refresh through its assignment snapshot (model/static_leader.py): model and
reference agree that a static leader back with skipAssignment never notices a partition added while it was
down (docs/conformance.md, finding 3)."""
from __future__ import annotations

from groupspec.checker import check
from groupspec.conformance import Harness
from groupspec.conformance.refinement import TOPIC

FAULTS = frozenset({"crash", "join", "partitions"})


def test_the_snapshot_variant_deadlocks_where_kafka_does_and_static_does_not():
    _p, old = check("static", members=2, partitions=3, faults=FAULTS, budget=3, engine="python")
    assert old.ok  # the static variant's leader notices any unassigned partition: rosier than Kafka
    _p, res = check("static-leader-snapshot", members=2, partitions=3, faults=FAULTS, budget=3)
    assert res.engine == "python"
    failed = {k for k, v in res.verdicts.items() if v.held is False}
    assert failed == {"convergence"}
    v = res.verdicts["convergence"]
    assert v.explanation.startswith("deadlock") and len(v.trace) - 1 == 6
    names = [type(st.action).__name__ for st in v.trace[1:]]
    assert names == ["SendJoinGroup", "ReceiveJoinResponse", "Crash", "Start", "AddPartition", "SendJoinGroup"]


def test_a_leader_that_assigned_still_notices_a_new_partition():
    _p, res = check("static-leader-snapshot", members=2, partitions=3, faults=frozenset({"join", "partitions"}),
                    budget=2)
    assert res.ok and res.verdicts["sometimes_all_stable"].held is True


def test_a_partition_of_a_topic_nobody_subscribes_to_is_not_watched():
    """Kafka's leader snapshots the partition counts of the group's subscribed topics only."""
    _p, res = check("static-leader-snapshot", members=2, partitions=3, topics=2,
                    faults=frozenset({"subscription", "partitions", "join"}), budget=2)
    assert res.ok


def _story(variant: str) -> Harness:
    """Boot three static members, close the leader, grow the topic, start the leader again."""
    h = Harness(variant, seed=5)
    for n in h.names:
        h.act("start", n, config=h.consumer_config(n))
        h.run_for(300)
    h.quiesce()
    name = h.names[h.state.group.leader]
    h.act("close", name)
    h.run_for(1000)
    h.act("partitions", topic=TOPIC, count=bin(h.state.group.partitions).count("1") + 1)
    h.run_for(1000)
    h.act("start", name, config=h.consumer_config(name))
    h.run_for(30000)
    return h


def test_model_and_reference_agree_on_the_static_leader_that_never_notices():
    h = _story("static-range-snapshot")  # every step refined against static-leader-snapshot
    assert not h.converged() and h.state.group.status.name == "STABLE" and not h.gaps
    mask = (1 << h.proto.cfg.partitions) - 1  # above: the topics it was taken with
    assert h.state.group.snapshot & mask == h.state.group.partitions  # the leader's snapshot has the new partition
    assert h.model_bound() is None  # the model does not converge from here either
    # the static variant disagrees: it promises convergence within a bound the reference never meets
    assert _story("static-range").model_bound() is not None
