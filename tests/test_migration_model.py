"""The migration model (model/migration.py, ``classic-to-consumer``): conversions step by step, Kafka's
two double-ownership paths, the proposed fix holding, and the broken variants caught with a timeline."""
from __future__ import annotations

import pytest

from groupspec.checker import check, timeline
from groupspec.model import BROKEN, CORRECT, Config, make
from groupspec.model.consumer import ConsumerGroupHeartbeat, MemberState
from groupspec.model.core import GroupStatus
from groupspec.model.migration import ClassicHeartbeat, Downgrade, JoinGroup, Kind, Phase, SyncGroup, Upgrade


def run(protocol, members=3, partitions=3, faults=frozenset(), budget=2):
    return check(protocol, assignor="uniform", members=members, partitions=partitions, faults=frozenset(faults),
                 budget=budget, engine="python", with_symmetry_factor=False)


def test_registered():
    assert {"classic-to-consumer", "classic-to-consumer-acked"} <= set(CORRECT)
    assert {"classic-to-consumer-sync-target", "classic-to-consumer-no-rejoin"} <= set(BROKEN)


def test_online_upgrade_step_by_step():
    """c1 restarts with the consumer protocol; its first heartbeat converts the classic group: members keep
    their stored assignment at member epoch = generation, the group epoch is bumped for c1."""
    proto = make("classic-to-consumer", Config(members=2, partitions=2, budget=1))
    s = proto.init_states()[0]
    assert s.kind == Kind.CLASSIC and s.classic.status == GroupStatus.STABLE and s.classic.generation == 1
    s = proto.step(s, Upgrade(0))  # LeaveGroup: the classic group rebalances
    assert s.classic.status == GroupStatus.PREPARING_REBALANCE and s.clients[0].epoch == 0
    s = proto.step(s, ConsumerGroupHeartbeat(0))
    assert s.kind == Kind.CONSUMER and s.group.epoch == 2
    c2 = s.group.members[1]
    assert c2.classic and c2.epoch == 1 and c2.state == MemberState.STABLE and c2.assigned == 0b10
    # c2 is told to rejoin, its JoinGroup is answered at once with its member epoch as the generation.
    s = proto.step(s, ClassicHeartbeat(1))
    assert s.clients[1].phase == Phase.JOIN
    s = proto.step(s, JoinGroup(1))
    assert s.clients[1].phase == Phase.SYNC and s.clients[1].epoch == s.group.members[1].epoch
    s = proto.step(s, SyncGroup(1))
    assert s.clients[1].owned == s.group.members[1].assigned


def test_online_downgrade_when_the_last_consumer_member_leaves():
    proto = make("classic-to-consumer", Config(members=2, partitions=2, budget=2))
    s = proto.init_states()[0]
    s = proto.step(s, Upgrade(0))
    s = proto.step(s, ConsumerGroupHeartbeat(0))
    epoch = s.group.epoch
    s = proto.step(s, Downgrade(0))  # epoch -1: only a classic member remains
    assert s.kind == Kind.CLASSIC and s.classic.generation == epoch
    assert s.classic.status == GroupStatus.PREPARING_REBALANCE and s.classic.members == 0b10


def test_upgrade_refused_while_a_member_has_no_stored_assignment():
    """A member added in the current join phase has EMPTY_ASSIGNMENT: fromClassicGroup cannot parse it,
    the heartbeat is answered GROUP_ID_NOT_FOUND, fatal for the consumer."""
    proto = make("classic-to-consumer", Config(members=2, partitions=2, budget=3, faults=frozenset({"leave", "join"})))
    s = proto.init_states()[0]
    s = proto.step(s, Upgrade(0))
    from groupspec.model import actions as A

    s = proto.step(s, A.LeaveGroup(1))
    s = proto.step(s, A.Start(1))
    s = proto.step(s, JoinGroup(1))  # a new member: no stored assignment yet (then the join phase completes)
    assert s.classic.unsynced == 0b10
    s = proto.step(s, ConsumerGroupHeartbeat(0))
    assert s.kind == Kind.CLASSIC and s.clients[0].proc.name == "DOWN"


def test_kafka_recreates_an_expired_classic_member_that_still_owns_partitions():
    """Path 3: a classic member expired while it was about to rejoin sends JoinGroup with its old member
    id; the consumer group creates it again and does not look at the partitions it reports owned."""
    _proto, res = run("classic-to-consumer", faults={"crash", "timeout", "zombie"})
    assert res.states == 37_703  # 28,006 before issue 29's KIP-848 previous-epoch fix
    v = res.verdicts["exclusive_ownership"]
    assert v.held is False and len(v.trace) - 1 == 5
    assert isinstance(v.trace[-1].action, JoinGroup)
    assert res.verdicts["commit_fencing"].held is False
    assert res.verdicts["generation_monotonic"].held is True and res.verdicts["convergence"].held is True


def test_kafka_gives_a_partition_a_follower_still_owns():
    """Path 1, step by step (the checker's 11-step counterexample before path 3 was modelled): the
    leader's SyncGroup stores c3's new assignment without t-2; c3 has not applied it; c1's first
    heartbeat converts the group and gets t-2."""
    from groupspec.model import actions as A
    from groupspec.model.properties import exclusive_ownership

    proto = make("classic-to-consumer", Config(members=3, partitions=3, budget=2, faults=frozenset({"timeout"})))
    s = proto.init_states()[0]
    for a in (Upgrade(0), A.ExpireLive(1), ClassicHeartbeat(1), ClassicHeartbeat(2), JoinGroup(2), SyncGroup(2),
              JoinGroup(1), ClassicHeartbeat(2), JoinGroup(2), SyncGroup(1)):
        s = proto.step(s, a)
    assert s.classic.status == GroupStatus.STABLE and s.clients[2].phase == Phase.SYNC
    assert s.clients[2].owned == 0b111 and s.classic.assignment[2] == 0b011
    assert exclusive_ownership(proto, s) is None
    s = proto.step(s, ConsumerGroupHeartbeat(0))
    assert s.clients[0].owned & 0b100 and "t-2" in exclusive_ownership(proto, s)


def test_the_downgrade_stores_targets_a_later_upgrade_trusts():
    """The second path: the downgrade stores targets (not what members still own); the next upgrade trusts them."""
    _proto, res = run("classic-to-consumer", faults={"join", "leave", "crash"}, budget=3)
    v = res.verdicts["exclusive_ownership"]
    assert v.held is False
    assert any(isinstance(st.action, Downgrade) for st in v.trace)


@pytest.mark.parametrize("faults,budget,states", [
    ({"crash", "timeout", "zombie"}, 2, 34_325),  # 25,378 and 72,397 before issue 29's previous-epoch fix
    ({"join", "leave", "crash"}, 3, 101_236),
])
def test_the_proposed_fix_holds(faults, budget, states):
    _proto, res = run("classic-to-consumer-acked", faults=faults, budget=budget)
    assert res.ok, {n: (v.held, v.explanation) for n, v in res.verdicts.items()}
    assert res.states == states and res.verdicts["convergence"].held is True


@pytest.mark.parametrize("protocol,members,partitions,budget", [
    ("classic-to-consumer-sync-target", 3, 3, 2),
    ("classic-to-consumer-no-rejoin", 2, 2, 1),
])
def test_broken_variants_caught_with_a_timeline(protocol, members, partitions, budget):
    proto, res = run(protocol, members=members, partitions=partitions, budget=budget)
    expect = BROKEN[protocol].expect_violation
    v = res.verdicts[expect]
    assert v.held is False and v.trace
    lines = timeline.render(proto, v.trace, v.loop_start)
    assert lines[0].strip().startswith("0.") and any("consumer group" in ln for ln in lines)
    # the same bounds hold without the bug
    _p, ok = run("classic-to-consumer-acked", members=members, partitions=partitions, budget=budget)
    assert ok.ok


def test_unsupported_faults_and_topics_refused():
    with pytest.raises(ValueError, match="subscription"):
        make("classic-to-consumer", Config(members=2, partitions=2, faults=frozenset({"subscription"})))
    with pytest.raises(ValueError, match="one topic"):
        make("classic-to-consumer", Config(members=2, partitions=2, topics=2))
