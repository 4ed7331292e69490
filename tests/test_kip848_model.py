"""The KIP-848 model (model/consumer.py): it holds where it should, and each broken variant is caught."""
from __future__ import annotations

import pytest

from groupspec.checker import check
from groupspec.model import BROKEN, CORRECT, Config, make
from groupspec.model.consumer import ConsumerGroupHeartbeat, MemberState, RevokePartitions


def run(protocol, members=2, partitions=2, faults=frozenset(), budget=1, assignor="uniform"):
    _p, res = check(protocol, assignor=assignor, members=members, partitions=partitions, faults=faults,
                    budget=budget, engine="python", with_symmetry_factor=False)
    return res


def test_registered():
    assert "consumer" in CORRECT and "consumer-static" in CORRECT
    assert {"consumer-no-wait-release", "consumer-unfenced-commits", "consumer-no-epoch-bump"} <= set(BROKEN)


@pytest.mark.parametrize("protocol,assignor,faults", [
    ("consumer", "uniform", {"crash", "timeout", "zombie"}),
    ("consumer", "range", {"crash", "leave", "join"}),
    ("consumer-static", "uniform", {"join", "leave", "crash", "zombie"}),
])
def test_correct_variants_hold(protocol, assignor, faults):
    res = run(protocol, members=3, partitions=3, faults=frozenset(faults), budget=2, assignor=assignor)
    assert res.ok, {n: (v.held, v.explanation) for n, v in res.verdicts.items()}
    assert res.verdicts["convergence"].held is True and res.verdicts["sometimes_all_stable"].held is True


def test_two_topics_subscription_and_partitions_hold():
    _p, res = check("consumer", members=2, partitions=3, topics=2, faults=frozenset({"subscription", "partitions", "crash"}),
                    budget=2, engine="python", with_symmetry_factor=False)
    assert res.ok


@pytest.mark.parametrize("protocol,faults,budget", [
    ("consumer-no-wait-release", frozenset(), 0),
    ("consumer-unfenced-commits", frozenset({"zombie"}), 1),
    ("consumer-no-epoch-bump", frozenset(), 0),
])
def test_broken_variants_caught_with_a_timeline(protocol, faults, budget):
    from groupspec.checker import timeline

    res = run(protocol, members=2, partitions=2, faults=faults, budget=budget)
    expect = BROKEN[protocol].expect_violation
    v = res.verdicts[expect]
    assert v.held is False and v.trace
    proto = make(protocol, Config(members=2, partitions=2, faults=faults, budget=budget, assignor="uniform"))
    lines = timeline.render(proto, v.trace, v.loop_start)
    assert lines[0].strip().startswith("0.") and any("heartbeats" in ln for ln in lines)


def test_partition_goes_to_new_owner_only_after_revocation():
    """The reconciliation rule, step by step: c2 gets t-1 only after c1 acknowledged revoking it."""
    proto = make("consumer", Config(members=2, partitions=2, assignor="uniform"))
    s = proto.init_states()[0]
    s = proto.step(s, ConsumerGroupHeartbeat(0))
    assert s.clients[0].owned == 0b11
    s = proto.step(s, ConsumerGroupHeartbeat(1))  # c2 joins: epoch 2, c1 must give one up first
    r2 = s.group.members[1]
    assert s.group.epoch == 2 and r2.state == MemberState.UNRELEASED_PARTITIONS and r2.assigned == 0
    s = proto.step(s, ConsumerGroupHeartbeat(0))  # c1 learns it must revoke: same epoch
    r1 = s.group.members[0]
    assert r1.state == MemberState.UNREVOKED_PARTITIONS and r1.epoch == 1 and r1.revoking
    # nothing is free for c2 yet: its heartbeat gives it nothing; reconciled again at epoch 2 its previous epoch
    # becomes 2 (Kafka 4.3.1: updateMemberEpoch in every outcome of computeNextAssignment), and then it is a no-op
    assert s.group.members[1].previous_epoch == 0
    s2 = proto.step(s, ConsumerGroupHeartbeat(1))
    assert s2.group.members[1].assigned == 0 and s2.group.members[1].previous_epoch == 2
    assert ConsumerGroupHeartbeat(1) not in proto.enabled(s2)
    s = proto.step(s, RevokePartitions(0))
    s = proto.step(s, ConsumerGroupHeartbeat(0))  # the acknowledgement: c1 moves to epoch 2
    assert s.group.members[0].epoch == 2 and s.group.members[0].previous_epoch == 1
    s = proto.step(s, ConsumerGroupHeartbeat(1))
    assert s.clients[1].owned and not s.clients[0].owned & s.clients[1].owned
    assert proto.converged(s)


def test_unsupported_assignor_is_a_value_error():
    with pytest.raises(ValueError):
        check("consumer", assignor="roundrobin", members=2, partitions=2)


def test_proofs_consumer_hold_and_broken_ones_fail():
    from groupspec.proofs.consumer import VARIANTS, check_all

    good = check_all(VARIANTS["consumer"])
    assert good and all(o.ok for o in good), [o.label for o in good if not o.ok]
    assert [o.label for o in check_all("no_wait_release") if not o.ok] == ["HeartbeatAdvance preserves one holder per partition"]
    assert [o.label for o in check_all("unfenced_commits") if not o.ok] == ["invariant implies commit_fencing (a commit sent now)"]
