"""Each known-gap matcher of the conformance harness (groupspec/conformance/gaps.py, and Connect's in
groupspec/conformance/connect.py) accepts the one shape it describes and rejects a nearby shape.

The matchers are methods of the harness; here they run on a bare harness object carrying only what each
one reads (the event being processed, slots and names, processes), with model states built from real runs
of the model."""
from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace as NS

import pytest

from groupspec.conformance.connect import ConnectView
from groupspec.conformance.harness import Harness
from groupspec.model import Config, make
from groupspec.model.core import GroupStatus as GS, MemberStatus as MS
from groupspec.reference.errors import Error
from groupspec.reference.messages import HeartbeatResponse, JoinGroupRequest


def _converged(name: str = "eager", members: int = 2):  # type: ignore[no-untyped-def]
    proto = make(name, Config(members=members, partitions=2, budget=0))
    s = proto.init_states()[0]
    for _ in range(60):
        if proto.converged(s):
            return proto, s
        s = next(t for _a, t in proto.successors(s))
    raise AssertionError("did not converge")


def _bare(proto, head=None, procs=None, stale_sync=False):  # type: ignore[no-untyped-def]
    h = Harness.__new__(Harness)
    h.proto, h.depth = proto, 4
    h.names = [f"c{i + 1}" for i in range(proto.cfg.members)]
    h.slot = {n: i for i, n in enumerate(h.names)}
    h._head = head
    h.orphan_gap = False
    h._stale_sync = stale_sync
    h.sim = NS(procs=procs or {})
    return h


def _deliver(payload, dst="c1", reply=True, copy=False):  # type: ignore[no-untyped-def]
    return (0, 0, "deliver", NS(is_reply=reply, dst=dst, payload=payload, copy=copy))


def _with_client(s, i, **kw):  # type: ignore[no-untyped-def]
    return replace(s, clients=s.clients[:i] + (replace(s.clients[i], **kw),) + s.clients[i + 1:])


# -- gap 13: a late heartbeat answer --------------------------------------------------------------
def test_late_rebalance_in_progress_answer_only_sets_the_rejoin_flag() -> None:
    proto, s = _converged()
    head = _deliver(HeartbeatResponse(Error.REBALANCE_IN_PROGRESS))
    h = _bare(proto, head)
    assert h._late_heartbeat_answer(s, _with_client(s, 0, rejoin=True))
    # nearby: the answer also changed another member
    assert not h._late_heartbeat_answer(s, _with_client(_with_client(s, 0, rejoin=True), 1, owned=0))
    # nearby: not late (the group is preparing a rebalance of the member's own generation: a model step)
    prep = replace(s, group=replace(s.group, status=GS.PREPARING_REBALANCE))
    assert not h._late_heartbeat_answer(prep, _with_client(prep, 0, rejoin=True))
    # nearby: another answer type
    assert not _bare(proto, _deliver(NS(error=Error.REBALANCE_IN_PROGRESS)))._late_heartbeat_answer(
        s, _with_client(s, 0, rejoin=True))


def test_late_illegal_generation_answer_is_exactly_a_reset() -> None:
    proto, s = _converged()
    h = _bare(proto, _deliver(HeartbeatResponse(Error.ILLEGAL_GENERATION)))
    reset = _with_client(s, 0, status=MS.UNJOINED, generation=-1, owned=0, rejoin=False)
    assert h._late_heartbeat_answer(s, reset)
    # nearby: the member kept a partition through the reset
    assert not h._late_heartbeat_answer(s, _with_client(reset, 0, owned=s.clients[0].owned or 1))


# -- gap 9: orphaned pending member id ---------------------------------------------------------------
def test_orphan_gap_only_when_flagged() -> None:
    proto, s = _converged()
    h = _bare(proto)
    changed = _with_client(s, 1, rejoin=True)
    assert h._known_gap(s, changed) is None
    h.orphan_gap = True
    assert "orphaned pending member id" in h._known_gap(s, changed)
    assert h.orphan_gap is False  # one step only
    assert h._known_gap(s, changed) is None


# -- gap 2: initial delayed join -----------------------------------------------------------------------
def test_initial_delayed_join_shape() -> None:
    proto = make("eager", Config(members=2, partitions=2, budget=0))
    s = proto.init_states()[0]
    assert s.group.status == GS.EMPTY
    t = next(t for a, t in proto.successors(s) if a.name == "SendJoinGroup")  # EMPTY -> a join phase
    prep = replace(t, group=replace(t.group, status=GS.PREPARING_REBALANCE, generation=s.group.generation))
    h = _bare(proto)
    assert h._known_gap(s, prep) == "initial delayed join"
    # nearby: somebody gains a partition on the way out of EMPTY
    assert h._known_gap(s, _with_client(prep, 0, owned=1)) is None
    # nearby: the generation jumps by two
    assert h._known_gap(s, replace(prep, group=replace(prep.group, generation=s.group.generation + 2))) is None
    # nearby: out of EMPTY straight into STABLE
    assert h._known_gap(s, replace(prep, group=replace(prep.group, status=GS.STABLE))) is None


# -- gap 4: duplicated static first JoinGroup -------------------------------------------------------------
@pytest.mark.parametrize("copy, member_id, instance, expect", [
    (True, "", "i1", True),
    (False, "", "i1", False),  # the original, not a copy
    (True, "m-1", "i1", False),  # carries a member id
    (True, "", None, False),  # a dynamic member
])
def test_duplicated_static_join_shape(copy, member_id, instance, expect) -> None:  # type: ignore[no-untyped-def]
    proto, s = _converged("static")
    req = JoinGroupRequest("g", member_id, "consumer", (("range", b""),), group_instance_id=instance)
    h = _bare(proto, _deliver(req, reply=False, copy=copy))
    got = h._known_gap(s, _with_client(s, 0, owned=0, status=MS.UNJOINED))
    assert (got == "duplicated static JoinGroup") is expect


# -- gap 5: a former leader notices a metadata change -------------------------------------------------------
def test_former_leader_notices_shape() -> None:
    proto, s = _converged()
    follower = 1 - s.group.leader
    name = f"c{follower + 1}"
    with_snapshot = {name: NS(consumer=NS(assignment_snapshot=object()))}
    post = _with_client(s, follower, rejoin=True)
    assert _bare(proto, procs=with_snapshot)._known_gap(s, post) == "a former leader notices the metadata changed"
    # nearby: it never computed an assignment (no snapshot)
    assert _bare(proto, procs={name: NS(consumer=NS(assignment_snapshot=None))})._known_gap(s, post) is None
    # nearby: the current leader
    leader = s.group.leader
    lname = f"c{leader + 1}"
    assert _bare(proto, procs={lname: NS(consumer=NS(assignment_snapshot=object()))})._known_gap(
        s, _with_client(s, leader, rejoin=True)) is None
    # nearby: the rejoin flag comes with another change the model cannot take
    assert _bare(proto, procs=with_snapshot)._known_gap(s, _with_client(post, follower, owned=3)) is None


# -- gap 6: pending-sync expiry of a replaced static member id ----------------------------------------------
def test_pending_sync_expiry_shape() -> None:
    proto, s = _converged("static")
    post = replace(s, group=replace(s.group, status=GS.PREPARING_REBALANCE))
    wake = (0, 0, "bwake", None)
    assert _bare(proto, wake, stale_sync=True)._known_gap(s, post) == "pending-sync expiry of a replaced static member id"
    # nearby: no stale pending-sync id
    assert _bare(proto, wake, stale_sync=False)._known_gap(s, post) is None
    # nearby: not the broker's timer
    assert _bare(proto, _deliver(HeartbeatResponse(Error.NONE)), stale_sync=True)._known_gap(s, post) is None
    # nearby: the "rebalance" removes a member
    gone = replace(post, group=replace(post.group, records=(post.group.records[0], None)))
    assert _bare(proto, wake, stale_sync=True)._known_gap(s, gone) is None


# -- gap 12 (Connect): a worker's rejoin after a delay with no work to take -----------------------------------
def test_connect_rejoin_after_a_delay_shape() -> None:
    proto, s = _converged("connect-delayed")
    i = 1 - s.group.leader
    post = _with_client(s, i, rejoin=True)

    def view(delay):  # type: ignore[no-untyped-def]
        procs = {f"c{k + 1}": NS(consumer=NS(last_assignment=NS(delay=delay))) for k in range(2)}
        v = ConnectView.__new__(ConnectView)
        v.h = _bare(proto, procs=procs)
        return v

    assert "rejoined when the delay in its assignment" in view(1600).known_gap(s, post)
    assert view(0).known_gap(s, post) is None  # nearby: its assignment carried no delay
    assert view(1600).known_gap(_with_client(s, i, rejoin=True), post) is None  # nearby: already rejoining
    assert view(1600).known_gap(s, _with_client(post, i, owned=3)) is None  # nearby: more than the rejoin


# -- gap 7: a static member whose instance id the group no longer knows (the harness and alpha's halves) -------
def test_unknown_static_member_reset_shape() -> None:
    from groupspec.model.core import Id
    from groupspec.reference.messages import JoinGroupResponse

    proto, s = _converged("static")
    pre = replace(_with_client(s, 0, id=Id.STALE), group=replace(s.group, records=(None,) + s.group.records[1:]))
    reset = _with_client(pre, 0, id=Id.NONE, generation=-1, owned=0, status=MS.UNJOINED, rejoin=False, inbox=None)
    h = _bare(proto)
    assert h._static_reset_only(pre, reset, [0])
    # nearby: the group changed too (not only the member's reset)
    assert not h._static_reset_only(pre, replace(reset, group=replace(reset.group, status=GS.PREPARING_REBALANCE)), [0])
    # nearby: another member changed as well
    assert not h._static_reset_only(pre, _with_client(reset, 1, owned=0), [0])
    # alpha's half: a JoinGroup answer UNKNOWN_MEMBER_ID to that static member, shown stale with no record
    unknown = _deliver(JoinGroupResponse(Error.UNKNOWN_MEMBER_ID, member_id=""))
    h = _bare(proto, unknown)
    h.variant = NS(static=True)
    shown = pre.clients[0]
    assert h._unknown_static(unknown, "c1", shown, None)
    # nearby: another error, another message, a member the group still knows, a dynamic variant
    fenced = _deliver(JoinGroupResponse(Error.FENCED_INSTANCE_ID, member_id=""))
    assert not h._unknown_static(fenced, "c1", shown, None)
    assert not h._unknown_static(_deliver(HeartbeatResponse(Error.UNKNOWN_MEMBER_ID)), "c1", shown, None)
    assert not h._unknown_static(unknown, "c1", shown, s.group.records[0])
    assert not h._unknown_static(unknown, "c2", shown, None)
    h.variant = NS(static=False)
    assert not h._unknown_static(unknown, "c1", shown, None)


# -- gap 8: a join phase completes without a pending member id --------------------------------------------------
def test_completion_without_a_pending_member_id_shape() -> None:
    from groupspec.model import actions as A
    from groupspec.model.core import Id, Record

    proto = make("eager", Config(members=2, partitions=2, budget=0))
    u = proto.init_states()[0]
    done = proto.step(u, A.SendJoinGroup(0))  # c1's JoinGroup completes the join phase without c2
    # alpha showed c2's pending member id as joined while the group prepared the rebalance
    pre = replace(_with_client(u, 1, status=MS.PREPARING_REBALANCE, id=Id.CURRENT),
                  group=replace(u.group, status=GS.PREPARING_REBALANCE, records=(None, Record(joined=True))))
    h = _bare(proto)
    assert h._completed_without_pending(pre, done, [1])
    # nearby: the pending member gains a partition in the same step
    assert not h._completed_without_pending(pre, _with_client(done, 1, owned=1), [1])
    # nearby: the wrong member is taken as pending (c1's own join is then not a model step)
    assert not h._completed_without_pending(pre, done, [0])


# -- gap 10: a member expired soon after a GC pause --------------------------------------------------------------
def test_expired_after_a_pause_shape() -> None:
    from groupspec.model.core import Proc

    proto, s = _converged("static")
    paused = _with_client(s, 0, proc=Proc.PAUSED)
    expired = _with_client(proto._expire(paused, 0), 0, proc=Proc.UP)  # its session ran out; it runs again
    h = _bare(proto)
    assert h._expired_after_pause(s, expired, [0])
    # nearby: the other member, which was never paused, is removed too
    both = replace(expired, group=replace(expired.group, records=(None, None)))
    assert not h._expired_after_pause(s, both, [0])
    # nearby: the member taken as late is not the one expired
    assert not h._expired_after_pause(s, expired, [1])
