"""``GroupCoordinator.restore_group`` (reference/classic/coordinator.py): a group held as if loaded from
``__consumer_offsets`` and, on request, moved mid-rebalance by its own transition table (issue 26: the public loader
``groupspec.specmut.migration_commits`` and ``migration_classic`` use instead of the coordinator's private groups)."""
from __future__ import annotations

import pytest

from groupspec.reference.classic import (Assignment, GroupCoordinator, GroupMetadataLog, GroupRecord, GroupStatus,
                                         HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, MemberRecord,
                                         OffsetCommitRequest, OffsetCommitResponse, Subscription, SyncGroupRequest,
                                         SyncGroupResponse, decode_assignment, encode_assignment, encode_subscription)
from groupspec.reference.errors import Error

SUB = encode_subscription(Subscription(topics=("t",)))


def _record(members: int = 2, generation: int = 3) -> GroupRecord:
    recs = tuple(MemberRecord(f"m{k}", None, f"m{k}", "/h", 300_000, 45_000, SUB,
                              encode_assignment(Assignment((("t", k),)))) for k in range(members))
    return GroupRecord("g", "consumer", generation, "range" if members else None, "m0" if members else None, recs)


def _answer(c: GroupCoordinator, sender: str, req: object) -> object:
    (out,) = c.handle(0, sender, req)  # type: ignore[arg-type]
    return out.response


def test_a_restored_group_is_the_group_a_failover_loads() -> None:
    log = GroupMetadataLog()
    log.groups["g"] = _record()
    loaded = GroupCoordinator(log=log).group("g")
    c = GroupCoordinator()
    assert c.restore_group(_record()) == loaded == c.group("g")
    assert loaded is not None and loaded.status is GroupStatus.STABLE and loaded.generation == 3
    assert decode_assignment(loaded.member("m1").assignment).partitions == (("t", 1),)
    assert _answer(c, "a", HeartbeatRequest("g", "m1", 3)).error is Error.NONE  # type: ignore[attr-defined]


def test_restored_preparing_rebalance_asks_members_to_rejoin_and_completes_when_all_joined() -> None:
    c = GroupCoordinator()
    view = c.restore_group(_record(), GroupStatus.PREPARING_REBALANCE)
    assert view.status is GroupStatus.PREPARING_REBALANCE and view.generation == 3
    assert all(m.assignment for m in view.members)  # the stored assignments stay
    assert _answer(c, "a", HeartbeatRequest("g", "m0", 3)).error is Error.REBALANCE_IN_PROGRESS  # type: ignore[attr-defined]
    assert c.handle(0, "a", JoinGroupRequest("g", "m0", "consumer", (("range", SUB),))) == []  # parked
    answers = {o.destination: o.response for o in c.handle(0, "b", JoinGroupRequest("g", "m1", "consumer", (("range", SUB),)))}
    assert set(answers) == {"a", "b"}
    assert all(isinstance(r, JoinGroupResponse) and r.error is Error.NONE and r.generation_id == 4 for r in answers.values())
    assert c.group("g").status is GroupStatus.COMPLETING_REBALANCE  # type: ignore[union-attr]


def test_restored_completing_rebalance_refuses_commits_until_the_leader_syncs() -> None:
    c = GroupCoordinator()
    assert c.restore_group(_record(), GroupStatus.COMPLETING_REBALANCE).status is GroupStatus.COMPLETING_REBALANCE
    resp = _answer(c, "b", OffsetCommitRequest("g", (("t", 0, 1),), "m1", 3))
    assert isinstance(resp, OffsetCommitResponse) and resp.partitions[0][2] is Error.REBALANCE_IN_PROGRESS
    asg = tuple((f"m{k}", encode_assignment(Assignment((("t", 1 - k),)))) for k in range(2))
    resp = _answer(c, "a", SyncGroupRequest("g", "m0", 3, asg, protocol_type="consumer", protocol_name="range"))
    assert isinstance(resp, SyncGroupResponse) and resp.error is Error.NONE
    view = c.group("g")
    assert view is not None and view.status is GroupStatus.STABLE
    assert decode_assignment(view.member("m1").assignment).partitions == (("t", 0),)


@pytest.mark.parametrize("status", [GroupStatus.DEAD, GroupStatus.EMPTY])
def test_a_status_the_loaded_group_cannot_be_in_is_refused_and_nothing_is_held(status: GroupStatus) -> None:
    c = GroupCoordinator()
    with pytest.raises(ValueError, match="cannot be restored as"):
        c.restore_group(_record(), status)  # (a group with members loads STABLE: EMPTY is not it)
    assert c.group("g") is None and "g" not in c.log.groups


def test_an_empty_group_restores_empty_and_a_group_already_held_is_refused() -> None:
    c = GroupCoordinator()
    assert c.restore_group(_record(members=0), GroupStatus.EMPTY).status is GroupStatus.EMPTY
    with pytest.raises(ValueError, match="already held"):
        c.restore_group(_record())
    with pytest.raises(ValueError, match="cannot be restored as"):
        GroupCoordinator().restore_group(_record(members=0), GroupStatus.STABLE)


def test_a_group_over_its_max_size_restored_mid_rebalance_is_preparing_once() -> None:
    from groupspec.reference.classic import CoordinatorConfig

    c = GroupCoordinator(config=CoordinatorConfig(group_max_size=1))
    assert c.restore_group(_record(), GroupStatus.PREPARING_REBALANCE).status is GroupStatus.PREPARING_REBALANCE
