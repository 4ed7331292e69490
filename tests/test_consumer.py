"""The sans-IO consumer client, driven by hand-written coordinator responses (coordinator.md §5).

Each test plays the coordinator's part exactly, so the member's reactions (requests sent, listener
calls in order, state) can be asserted one step at a time. Every fault switch is shown to change
the observable behaviour (mutation testing).
"""
from __future__ import annotations

from typing import Any

import pytest

from groupspec.reference.assignors import get
from groupspec.reference.classic import (
    COOPERATIVE, EAGER, Consumer, ConsumerConfig, MemberState, Send, rebalance_protocol,
    validate_cooperative_assignment,
)
from groupspec.reference.classic import (
    Assignment, Subscription, decode_subscription, encode_assignment, encode_subscription,
)
from groupspec.reference.errors import Error
from groupspec.reference.classic import (
    FindCoordinatorRequest, FindCoordinatorResponse, HeartbeatRequest, HeartbeatResponse, JoinGroupMember,
    JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, OffsetCommitRequest, OffsetCommitResponse,
    SyncGroupRequest, SyncGroupResponse,
)

TOPICS = {"t": 6}


class MovingAssignor:
    """A cooperative-capable assignor that moves still-owned partitions directly (unsafe)."""

    name = "mover"
    protocol = "cooperative"
    supported_protocols = ("eager", "cooperative")

    def __init__(self) -> None:
        self.seen: dict[str, Any] = {}

    def assign(self, counts: dict[str, int], subs: dict[str, dict[str, Any]]) -> dict[str, list[tuple[str, int]]]:
        self.seen = subs
        members = sorted(subs)
        out: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
        for p in range(counts["t"]):
            out[members[p % len(members)]].append(("t", p))
        return out


def factory(name: str) -> Any:
    return MovingAssignor() if name == "mover" else get(name)


def make(assignors: tuple[str, ...] = ("range",), faults: frozenset[str] = frozenset(), **cfg: Any) -> Consumer:
    config = ConsumerConfig(
        assignors=assignors,
        session_timeout_ms=10000,
        heartbeat_interval_ms=3000,
        max_poll_interval_ms=60000,
        enable_auto_commit=cfg.pop("enable_auto_commit", False),
        **cfg,
    )
    return Consumer("c1", config, lambda: TOPICS, factory, faults=faults)


def only(sends: list[Send], kind: type) -> Send:
    matching = [s for s in sends if isinstance(s.request, kind)]
    assert len(matching) == 1, sends
    return matching[0]


def found(c: Consumer, now: int = 0) -> list[Send]:
    sends = c.start(now)
    s = only(sends, FindCoordinatorRequest)
    # poll() goes straight on from finding the coordinator to the JoinGroup
    return c.receive(now, s.corr, FindCoordinatorResponse(Error.NONE, node_id=1))


def join_as_leader(c: Consumer, members: dict[str, Subscription], gen: int = 1, now: int = 0) -> Send:
    """From a fresh consumer to a SyncGroup sent as leader ``m1`` of ``members``."""
    sends = found(c, now)
    j = only(sends, JoinGroupRequest)
    assert j.request.member_id == ""
    sends = c.receive(now, j.corr, JoinGroupResponse(Error.MEMBER_ID_REQUIRED, member_id="m1"))
    j = only(sends, JoinGroupRequest)
    assert j.request.member_id == "m1"
    name = j.request.protocols[0][0]
    resp = JoinGroupResponse(
        Error.NONE,
        generation_id=gen,
        protocol_type="consumer",
        protocol_name=name,
        leader="m1",
        member_id="m1",
        members=tuple(JoinGroupMember(mid, None, encode_subscription(s)) for mid, s in members.items()),
    )
    return only(c.receive(now, j.corr, resp), SyncGroupRequest)


def finish_sync(c: Consumer, sync: Send, parts: list[tuple[str, int]], now: int = 0) -> list[Send]:
    blob = encode_assignment(Assignment(tuple(parts)))
    return c.receive(now, sync.corr, SyncGroupResponse(Error.NONE, blob, "consumer", sync.request.protocol_name))


def kinds(c: Consumer) -> list[tuple[str, tuple[Any, ...]]]:
    return [(e.event, e.partitions) for e in c.events if e.event in ("assigned", "revoked", "lost")]


SUB2 = {"m1": Subscription(("t",)), "m2": Subscription(("t",))}


# ---------------------------------------------------------------------------- protocol choice


def test_rebalance_protocol_is_highest_common() -> None:
    assert rebalance_protocol([("eager",)]) == EAGER
    assert rebalance_protocol([("eager", "cooperative")]) == COOPERATIVE
    assert rebalance_protocol([("eager",), ("eager", "cooperative")]) == EAGER
    with pytest.raises(ValueError):
        rebalance_protocol([("cooperative",), ("eager",)])
    assert make(("range", "cooperative-sticky")).protocol == EAGER
    assert make(("cooperative-sticky",)).protocol == COOPERATIVE


def test_unknown_fault_rejected() -> None:
    with pytest.raises(ValueError, match="unknown consumer fault"):
        make(faults=frozenset({"nope"}))


def test_validate_cooperative_assignment() -> None:
    owned = {"a": (("t", 0), ("t", 1)), "b": ()}
    assert validate_cooperative_assignment(owned, {"a": [("t", 0)], "b": [("t", 1)]}) == [("t", 1)]
    assert validate_cooperative_assignment(owned, {"a": [("t", 0)], "b": []}) == []


# ---------------------------------------------------------------------------- eager happy path


def test_eager_join_as_leader_runs_assignor_and_sends_metadata() -> None:
    c = make(("range",))
    sync = join_as_leader(c, SUB2)
    assert c.state is MemberState.COMPLETING_REBALANCE and c.is_leader
    got = {mid: blob for mid, blob in sync.request.assignments}
    assert set(got) == {"m1", "m2"}
    from groupspec.reference.classic import decode_assignment

    assert decode_assignment(got["m1"]).partitions == (("t", 0), ("t", 1), ("t", 2))
    finish_sync(c, sync, [("t", 0), ("t", 1), ("t", 2)])
    assert c.state is MemberState.STABLE and c.owned == (("t", 0), ("t", 1), ("t", 2))
    assert kinds(c) == [("assigned", (("t", 0), ("t", 1), ("t", 2)))]


def test_join_metadata_is_a_v3_subscription_with_owned_and_generation() -> None:
    c = make(("cooperative-sticky",))
    sync = join_as_leader(c, {"m1": Subscription(("t",))}, gen=4)
    finish_sync(c, sync, [("t", 1), ("t", 0)])
    c.rejoin_needed = True
    j = only(c.poll(10), JoinGroupRequest)
    sub = decode_subscription(j.request.protocols[0][1])
    assert sub.owned_partitions == (("t", 0), ("t", 1)) and sub.generation_id == 4 and sub.version == 3
    assert j.request.rebalance_timeout_ms == 60000 and j.request.version == 9


def test_eager_revokes_everything_before_rejoining() -> None:
    c = make(("range",))
    finish_sync(c, join_as_leader(c, SUB2), [("t", 0), ("t", 1), ("t", 2)])
    hb = only(c.tick(3000), HeartbeatRequest)
    c.receive(3001, hb.corr, HeartbeatResponse(Error.REBALANCE_IN_PROGRESS))
    assert c.rejoin_needed and c.state is MemberState.STABLE
    sends = c.poll(3002)
    only(sends, JoinGroupRequest)
    assert kinds(c)[-1] == ("revoked", (("t", 0), ("t", 1), ("t", 2)))
    assert c.owned == ()


def test_mutant_skip_revoke_before_join_keeps_partitions() -> None:
    c = make(("range",), faults=frozenset({"skip_revoke_before_join"}))
    finish_sync(c, join_as_leader(c, SUB2), [("t", 0), ("t", 1), ("t", 2)])
    c.rejoin_needed = True
    only(c.poll(10), JoinGroupRequest)
    assert c.owned == (("t", 0), ("t", 1), ("t", 2))
    assert [k for k, _ in kinds(c)] == ["assigned"]


def test_eager_revocation_callback_called_even_when_empty() -> None:
    c = make(("range",))
    finish_sync(c, join_as_leader(c, SUB2), [])
    c.rejoin_needed = True
    c.poll(10)
    assert kinds(c) == [("assigned", ()), ("revoked", ())]


# ---------------------------------------------------------------------------- cooperative


def test_cooperative_revokes_only_what_moves_then_rejoins() -> None:
    c = make(("cooperative-sticky",))
    finish_sync(c, join_as_leader(c, {"m1": Subscription(("t",))}), [("t", 0), ("t", 1), ("t", 2)])
    c.rejoin_needed = True
    j = only(c.poll(10), JoinGroupRequest)  # cooperative: nothing revoked before JoinGroup
    assert kinds(c) == [("assigned", (("t", 0), ("t", 1), ("t", 2)))]
    resp = JoinGroupResponse(Error.NONE, 2, "consumer", "cooperative-sticky", "m0", "m1")
    sync = only(c.receive(11, j.corr, resp), SyncGroupRequest)
    j2 = only(finish_sync(c, sync, [("t", 0), ("t", 1)], now=12), JoinGroupRequest)
    assert kinds(c)[1:] == [("revoked", (("t", 2),)), ("assigned", ())]
    assert c.state is MemberState.PREPARING_REBALANCE
    assert decode_subscription(j2.request.protocols[0][1]).owned_partitions == (("t", 0), ("t", 1))


def test_mutant_no_rejoin_after_revoke() -> None:
    c = make(("cooperative-sticky",), faults=frozenset({"no_rejoin_after_revoke"}))
    finish_sync(c, join_as_leader(c, {"m1": Subscription(("t",))}), [("t", 0), ("t", 1)])
    c.rejoin_needed = True
    j = only(c.poll(10), JoinGroupRequest)
    sync = only(c.receive(11, j.corr, JoinGroupResponse(Error.NONE, 2, "consumer", "cooperative-sticky", "m0", "m1")), SyncGroupRequest)
    assert finish_sync(c, sync, [("t", 0)], now=12) == []
    assert kinds(c)[-2] == ("revoked", (("t", 1),))
    assert not c.rejoin_needed and c.state is MemberState.STABLE


def test_leader_validates_cooperative_assignment_for_other_assignors() -> None:
    subs = {"m1": Subscription(("t",), owned_partitions=(("t", 0), ("t", 1), ("t", 2))), "m2": Subscription(("t",))}
    c = make(("mover",))
    assert c.protocol == COOPERATIVE
    sends = found(c)
    j = only(sends, JoinGroupRequest)
    resp = JoinGroupResponse(
        Error.NONE, 1, "consumer", "mover", "m1", "m1",
        tuple(JoinGroupMember(mid, None, encode_subscription(s)) for mid, s in subs.items()),
    )
    assert c.receive(0, j.corr, resp) == []  # no SyncGroup
    assert c.fatal is not None and c.fatal.startswith("IllegalStateException")
    # mutant: the same moves are handed out in the same round
    m = make(("mover",), faults=frozenset({"same_round_transfer"}))
    j = only(found(m), JoinGroupRequest)
    only(m.receive(0, j.corr, resp), SyncGroupRequest)
    assert m.fatal is None


def test_mutant_ignore_owned_hides_ownership_from_the_assignor() -> None:
    subs = {"m1": Subscription(("t",), owned_partitions=(("t", 4),))}
    for faults, expect in ((frozenset(), [["t", 4]]), (frozenset({"ignore_owned"}), [])):
        c = make(("mover",), faults=faults)
        join_as_leader(c, subs)
        assert c._assignors["mover"].seen["m1"]["owned"] == expect


# ---------------------------------------------------------------------------- errors (§5.2)


def test_sync_illegal_generation_keeps_member_id_unknown_member_clears_it() -> None:
    for err, kept in ((Error.ILLEGAL_GENERATION, "m1"), (Error.UNKNOWN_MEMBER_ID, "")):
        c = make(("range",))
        sync = join_as_leader(c, SUB2)
        sends = c.receive(1, sync.corr, SyncGroupResponse(err))
        j = only(sends, JoinGroupRequest)
        assert j.request.member_id == kept and c.generation.generation_id == -1
        assert c.events[-1].event == "fenced" and c.events[-1].error == err.name


def test_fenced_instance_id_on_join_is_fatal() -> None:
    c = make(("range",), group_instance_id="i1")
    j = only(found(c), JoinGroupRequest)
    assert j.request.group_instance_id == "i1"
    c.receive(1, j.corr, JoinGroupResponse(Error.FENCED_INSTANCE_ID))
    assert c.fatal == "FENCED_INSTANCE_ID" and c.poll(2) == [] and c.tick(2) == []


def test_not_coordinator_forgets_coordinator_and_ignores_stale_replies() -> None:
    c = make(("range",))
    sync = join_as_leader(c, SUB2)
    finish_sync(c, sync, [("t", 0)])
    hb = only(c.tick(3000), HeartbeatRequest)
    c2 = c.connection
    c.receive(3001, hb.corr, HeartbeatResponse(Error.NOT_COORDINATOR))
    assert not c.coordinator_known and c.connection == c2 + 1
    only(c.poll(3002), FindCoordinatorRequest)
    # a late reply to the abandoned heartbeat changes nothing
    before = c.snapshot()
    assert c.receive(3003, hb.corr, HeartbeatResponse(Error.UNKNOWN_MEMBER_ID)) == []
    assert c.snapshot() == before


def test_heartbeat_unknown_member_then_partitions_lost_on_next_poll() -> None:
    c = make(("cooperative-sticky",))
    finish_sync(c, join_as_leader(c, {"m1": Subscription(("t",))}), [("t", 0), ("t", 1)])
    hb = only(c.tick(3000), HeartbeatRequest)
    c.receive(3001, hb.corr, HeartbeatResponse(Error.UNKNOWN_MEMBER_ID))
    assert c.state is MemberState.UNJOINED and c.generation.member_id == ""
    j = only(c.poll(3002), JoinGroupRequest)
    assert kinds(c)[-1] == ("lost", (("t", 0), ("t", 1)))
    assert decode_subscription(j.request.protocols[0][1]).owned_partitions == ()


# ---------------------------------------------------------------------------- timers (§5.8)


def test_poll_timeout_dynamic_member_leaves() -> None:
    c = make(("range",))
    finish_sync(c, join_as_leader(c, SUB2), [("t", 0)])
    for t in range(3000, 60000, 3000):  # heartbeats keep the session alive, but no poll
        hb = only(c.tick(t), HeartbeatRequest)
        c.receive(t, hb.corr, HeartbeatResponse(Error.NONE))
    sends = c.tick(60001)
    leave = only(sends, LeaveGroupRequest)
    assert leave.request.members[0].member_id == "m1"
    assert c.state is MemberState.UNJOINED
    only(c.poll(60002), JoinGroupRequest)
    assert kinds(c)[-1] == ("lost", (("t", 0),))


def test_poll_timeout_static_member_sends_no_leave() -> None:
    c = make(("range",), group_instance_id="i1")
    finish_sync(c, join_as_leader(c, SUB2), [("t", 0)])
    c.last_heartbeat_ok_ms = 60000
    assert c.tick(60001) == [] and c.state is MemberState.UNJOINED
    j = only(c.poll(60002), JoinGroupRequest)
    assert j.request.member_id == "" and j.request.group_instance_id == "i1"


def test_local_session_timeout_marks_coordinator_unknown() -> None:
    c = make(("range",))
    finish_sync(c, join_as_leader(c, SUB2), [("t", 0)])
    c.last_poll_ms = 10**6
    c.inflight.clear()
    c.next_heartbeat_ms = 10**6
    assert c.next_timer_ms() == 10001
    c.tick(10001)
    assert not c.coordinator_known


def test_auto_commit_before_rejoin_gates_the_join() -> None:
    c = make(("range",), enable_auto_commit=True)
    finish_sync(c, join_as_leader(c, SUB2), [("t", 0)])
    c.poll(100)
    c.poll(200)
    c.rejoin_needed = True
    sends = c.poll(300)
    commit = only(sends, OffsetCommitRequest)
    assert not any(isinstance(s.request, JoinGroupRequest) for s in sends)
    assert commit.request.offsets == (("t", 0, 2),) and commit.request.generation_id == 1
    assert c.poll(301) == []  # still waiting for the commit
    assert [k for k, _ in kinds(c)] == ["assigned"]  # partitions are revoked only after the commit
    c.receive(302, commit.corr, OffsetCommitResponse((("t", 0, Error.NONE),)))
    only(c.poll(303), JoinGroupRequest)
    assert kinds(c)[-1] == ("revoked", (("t", 0),))
    commits = [e for e in c.events if e.event == "commit"]
    assert commits[-1].accepted is True and c.committed == {("t", 0): 2}


def test_close_revokes_and_leaves() -> None:
    c = make(("range",))
    finish_sync(c, join_as_leader(c, SUB2), [("t", 0)])
    only(c.close(50), LeaveGroupRequest)
    assert [e.event for e in c.events][-2:] == ["revoked", "left"]


def _stable_coop(parts: list[tuple[str, int]]) -> tuple[Consumer, Send]:
    """A cooperative member owning ``parts``, rejoining: returns it with its SyncGroup in flight."""
    c = make(("cooperative-sticky",))
    finish_sync(c, join_as_leader(c, {"m1": Subscription(("t",))}), parts)
    c.rejoin_needed = True
    j = only(c.poll(10), JoinGroupRequest)
    resp = JoinGroupResponse(Error.NONE, 2, "consumer", "cooperative-sticky", "m0", "m1")
    return c, only(c.receive(11, j.corr, resp), SyncGroupRequest)


def test_sync_illegal_generation_reports_owned_partitions_lost_before_rejoining() -> None:
    """AbstractCoordinator.resetStateAndRejoin sets needsJoinPrepare: onJoinPrepare runs again."""
    c, sync = _stable_coop([("t", 0), ("t", 1)])
    j = only(c.receive(12, sync.corr, SyncGroupResponse(Error.ILLEGAL_GENERATION)), JoinGroupRequest)
    assert kinds(c)[-1] == ("lost", (("t", 0), ("t", 1)))
    sub = decode_subscription(j.request.protocols[0][1])
    assert j.request.member_id == "m1" and sub.owned_partitions == () and sub.generation_id == -1


def test_sync_rebalance_in_progress_rejoins_keeping_partitions() -> None:
    c, sync = _stable_coop([("t", 0), ("t", 1)])
    j = only(c.receive(12, sync.corr, SyncGroupResponse(Error.REBALANCE_IN_PROGRESS)), JoinGroupRequest)
    assert [k for k, _ in kinds(c)] == ["assigned"]
    sub = decode_subscription(j.request.protocols[0][1])
    assert sub.owned_partitions == (("t", 0), ("t", 1)) and sub.generation_id == 2


def test_empty_assignment_bytes_are_an_illegal_state() -> None:
    c = make(("range",))
    sync = join_as_leader(c, SUB2)
    assert c.receive(1, sync.corr, SyncGroupResponse(Error.NONE, b"", "consumer", "range")) == []
    assert c.fatal is not None and c.fatal.startswith("IllegalStateException")
    c2 = make(("range",))
    sync = join_as_leader(c2, SUB2)
    c2.receive(1, sync.corr, SyncGroupResponse(Error.NONE, b"\x00\x00\x00\x00\x00\x05", "consumer", "range"))
    assert c2.fatal is not None and c2.fatal.startswith("SchemaException")


class RecordingSticky(MovingAssignor):
    name = "sticky"
    protocol = "eager"
    supported_protocols = ("eager",)


def test_eager_sticky_previous_assignment_travels_in_user_data() -> None:
    """StickyAssignor: an eager member owns nothing when it joins, so the leader learns the previous
    assignment (and its generation) from the user data."""
    rec = RecordingSticky()
    c = Consumer("c1", ConsumerConfig(assignors=("sticky",), enable_auto_commit=False), lambda: TOPICS,
                 lambda n: rec if n == "sticky" else get(n))
    j = only(found(c), JoinGroupRequest)
    assert decode_subscription(j.request.protocols[0][1]).user_data is None  # nothing assigned yet
    sends = c.receive(0, j.corr, JoinGroupResponse(Error.MEMBER_ID_REQUIRED, member_id="m1"))
    j = only(sends, JoinGroupRequest)
    resp = JoinGroupResponse(Error.NONE, 3, "consumer", "sticky", "m0", "m1")
    sync = only(c.receive(1, j.corr, resp), SyncGroupRequest)
    finish_sync(c, sync, [("t", 2), ("t", 4)], now=2)
    c.rejoin_needed = True
    j = only(c.poll(10), JoinGroupRequest)
    sub = decode_subscription(j.request.protocols[0][1])
    assert sub.owned_partitions == ()  # revoked before joining
    from groupspec.reference.classic import decode_sticky_user_data

    assert decode_sticky_user_data(sub.user_data) == ((("t", 2), ("t", 4)), 3)
    # as leader, it hands the assignor what the user data says
    members = (JoinGroupMember("m1", None, j.request.protocols[0][1]),)
    c.receive(11, j.corr, JoinGroupResponse(Error.NONE, 4, "consumer", "sticky", "m1", "m1", members))
    assert rec.seen["m1"]["owned"] == [["t", 2], ["t", 4]] and rec.seen["m1"]["generation"] == 3
