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
from groupspec.reference.classic import HeartbeatResponse, JoinGroupRequest


def _converged(name: str = "eager", members: int = 2):  # type: ignore[no-untyped-def]
    proto = make(name, Config(members=members, partitions=2, budget=0))
    s = proto.init_states()[0]
    for _ in range(60):
        if proto.converged(s):
            return proto, s
        s = next(t for _a, t in proto.successors(s))
    raise AssertionError("did not converge")


def _bare(proto, head=None, procs=None):  # type: ignore[no-untyped-def]
    h = Harness.__new__(Harness)
    h.proto, h.depth = proto, 4
    h.names = [f"c{i + 1}" for i in range(proto.cfg.members)]
    h.slot = {n: i for i, n in enumerate(h.names)}
    h._head = head
    h.orphan_gap = False
    h.sim = NS(procs=procs or {})
    return h


def _deliver(payload, dst="c1", reply=True, copy=False, src="broker-1", conn=1_000_000, corr=3):  # type: ignore[no-untyped-def]
    return (0, 0, "deliver", NS(is_reply=reply, src=src, dst=dst, payload=payload, copy=copy, conn=conn, corr=corr))


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



def test_emptied_hold_only_for_connect_after_the_member_it_waited_for_left() -> None:
    """Gap 9's second shape: pending ids of running workers hold a completion after the last member it
    waited for left: no real member is left (--hypothesis-seed=43), or a member shown not yet joined is gone
    from the coordinator while the others have joined (--hypothesis-seed=78)."""
    from groupspec.conformance.abstraction import _EMPTIED

    proto, s = _converged()
    h = _bare(proto)
    h.state = s  # the state shown: c1 and c2 STABLE members, neither joined to a phase
    h.connect = NS(_ids={0: "c1-1", 1: "c2-1"})
    pending = {"c3-pending"}
    emptied = NS(members=[], pending=pending)
    assert h._emptied_hold(emptied)
    c1_left = NS(members=[NS(member_id="c2-1", awaiting_join=True)], pending=pending)
    assert h._emptied_hold(c1_left)
    # nearby: every member shown is still in the group (nobody left: the model's completion waits for them)
    assert not h._emptied_hold(NS(members=[NS(member_id="c1-1", awaiting_join=True),
                                           NS(member_id="c2-1", awaiting_join=True)], pending=pending))
    # nearby: the member that left had already joined the phase in the state shown (its departure did not
    # make the completion due: the model orders it after the completion)
    joined = replace(s, group=replace(s.group, records=(replace(s.group.records[0], joined=True),) + s.group.records[1:]))
    h.state = joined
    assert not h._emptied_hold(c1_left)
    h.state = s
    # nearby: a consumer variant (no Connect view): not this shape
    h.connect = None
    assert not h._emptied_hold(emptied) and not h._emptied_hold(c1_left)
    # the flag names this shape, for one step
    h.orphan_gap = _EMPTIED
    changed = _with_client(s, 1, rejoin=True)
    assert h._known_gap(s, changed) == _EMPTIED
    assert h._known_gap(s, changed) is None

# -- closed gaps 2, 6 and 10: the model takes the step (model/formation.py), refinement checks it ----------
def _timers(name: str, members: int = 2, faults: frozenset = frozenset()):  # type: ignore[no-untyped-def]
    from groupspec.conformance.harness import TIMERS

    return make(name, Config(members=members, partitions=2, faults=TIMERS | faults, budget=10))


def test_formerly_gap_2_group_formation_is_matched_step_by_step() -> None:
    from groupspec.conformance.refinement import match

    proto = _timers("eager", 3)
    s = proto.init_states()[0]
    for name in ("SendJoinGroup(0)", "SendJoinGroup(1)", "InitialDelayExpired()"):
        s = next(t for a, t in proto.successors(s) if repr(a) == name)
    start = proto.init_states()[0]
    # alpha shows the group Empty until the delayed join completes: one reference step, three model steps
    assert [repr(a) for a in match(proto, start, s, 3)] == ["SendJoinGroup(0)", "SendJoinGroup(1)", "InitialDelayExpired()"]
    assert sum(r is not None for r in s.group.records) == 2 and s.group.generation == 1
    # nearby: somebody owns a partition out of EMPTY; the generation jumps by two; the group is STABLE at once
    assert match(proto, start, _with_client(s, 0, owned=1), 3) is None
    assert match(proto, start, replace(s, group=replace(s.group, generation=2)), 3) is None
    assert match(proto, start, replace(s, group=replace(s.group, status=GS.STABLE)), 3) is None
    # and the model without the initial delay has no such step (what used to be the gap) ...
    plain = make("eager", Config(members=3, partitions=2, budget=10))
    assert match(plain, start, s, 3) is None
    # ... and no matcher accepts an unmatched step out of EMPTY any more: it is a refinement failure
    assert _bare(plain)._known_gap(start, s) is None


def _form_three(model_faults: frozenset | None = None):  # type: ignore[no-untyped-def]
    """Three consumers start within a 3 s initial delay; the harness's model with (or without) the delay."""
    import re

    from groupspec.conformance.harness import Harness

    h = Harness("eager-range", seed=1, initial_delay_ms=3000)
    if model_faults is not None:
        h.cfg = Config(members=h.cfg.members, partitions=h.cfg.partitions, topics=h.cfg.topics,
                       faults=model_faults, budget=h.cfg.budget, assignor=h.cfg.assignor)
        h.proto = make(h.variant.model, h.cfg)
    for n in h.names:
        h.act("start", n, config=h.consumer_config(n))
    h.run_for(4000)
    h.quiesce()
    return h, [re.sub(r".*model ", "", line.action.text) for line in h.timeline
               if line.action is not None and "InitialDelayExpired" in getattr(line.action, "text", "")]


def test_formerly_gap_2_a_three_member_first_generation_refines_in_the_harness() -> None:
    from groupspec.conformance import ConformanceFailure

    h, formed = _form_three()
    assert formed == ["SendJoinGroup(0), SendJoinGroup(1), SendJoinGroup(2), InitialDelayExpired()"]
    assert h.gaps == [] and h.converged()
    # the same run against the model without the initial delay is a refinement failure (no matcher hides it)
    faults = h.cfg.faults - {"initial-delay"}
    with pytest.raises(ConformanceFailure) as info:
        _form_three(faults)
    assert info.value.check == "refinement"


def test_formerly_gap_6_a_stale_pending_sync_id_forces_a_rebalance_that_removes_nobody() -> None:
    from groupspec.conformance.refinement import match

    proto, s = _converged("static")
    proto = _timers("static")
    stale = replace(s, group=replace(s.group, stale_sync=True))
    post = next(t for a, t in proto.successors(stale) if a.name == "PendingSyncExpired")
    assert post.group.status == GS.PREPARING_REBALANCE and [r is None for r in post.group.records] == [False, False]
    assert [a.name for a in match(proto, stale, post, 3)] == ["PendingSyncExpired"]
    # nearby: no stale id (nothing forces the rebalance)
    assert match(proto, s, post, 1) is None
    # nearby: the "rebalance" removes a member
    gone = replace(post, group=replace(post.group, records=(post.group.records[0], None)))
    assert match(proto, stale, gone, 1) is None


def test_formerly_gap_10_a_resumed_member_is_expired_only_before_its_session_is_refreshed() -> None:
    from groupspec.conformance.refinement import match

    _plain, s = _converged("eager")
    proto = _timers("eager", faults=frozenset({"zombie"}))
    woke = _with_client(s, 0, woke=True)
    expired = next(t for a, t in proto.successors(woke) if repr(a) == "SessionExpired(0)")
    assert expired.group.records[0] is None
    assert [repr(a) for a in match(proto, woke, expired, 1)] == ["SessionExpired(0)"]
    # nearby: its session was refreshed (not woke): a running member is not expired
    assert match(proto, s, replace(expired, clients=s.clients[:0] + (replace(expired.clients[0], woke=False),)
                                   + expired.clients[1:]), 1) is None


# -- gap 8: a join phase completes without a pending member id (KIP-394) -----------------------------
def test_completion_without_a_pending_id_shape() -> None:
    from groupspec.model.core import Id, Proc, Record

    proto, s = _converged("eager", 3)
    g = s.group
    # alpha's picture: c1 joined, c2 shown joined by its pending id (its first JoinGroup), c3 crashed unjoined
    pre = replace(s, group=replace(g, status=GS.PREPARING_REBALANCE, target=None, records=(
        replace(g.records[0], joined=True), Record(joined=True, topics=1), replace(g.records[2], joined=False))),
        clients=(replace(s.clients[0], status=MS.PREPARING_REBALANCE, owned=0),
                 replace(s.clients[1], status=MS.PREPARING_REBALANCE, id=Id.CURRENT, generation=-1, owned=0),
                 replace(s.clients[2], proc=Proc.DOWN)))
    unjoined = replace(pre, group=replace(pre.group, records=(pre.group.records[0], None, pre.group.records[2])),
                       clients=(pre.clients[0], replace(pre.clients[1], id=Id.NONE, status=MS.UNJOINED),
                                pre.clients[2]))
    post = next(t for a, t in proto.successors(unjoined) if a.name == "RebalanceTimeout")
    h = _bare(proto)
    h._pre_pending = {1}
    assert "without the pending member id of c2" in h._completed_without_pending(pre, post)
    # nearby: no member was shown joined by a pending id
    h._pre_pending = set()
    assert h._completed_without_pending(pre, post) is None
    h._pre_pending = {1}
    # nearby: the pending member is a member after the step
    kept = replace(post, group=replace(post.group, records=(post.group.records[0], Record(), None)))
    assert h._completed_without_pending(pre, kept) is None
    # nearby: no completion (the generation did not move)
    assert h._completed_without_pending(pre, replace(post, group=replace(post.group, generation=g.generation))) is None
    # nearby: a completion the model cannot take from there (the crashed member kept)
    assert h._completed_without_pending(pre, replace(post, group=replace(
        post.group, records=(post.group.records[0], None, replace(g.records[2], joined=False))))) is None


def test_completion_without_a_pending_id_keeps_a_keep_work_workers_work() -> None:
    """connect-keep-work: the pending worker still runs the work it reports, through the completion without
    it (gap 8's probe keeps it); a step that also drops that work is the nearby shape, rejected."""
    from groupspec.model.core import Id, Proc, Record

    proto, s = _converged("connect-keep-work", 3)
    g = s.group
    work = s.clients[1].owned
    assert work
    pre = replace(s, group=replace(g, status=GS.PREPARING_REBALANCE, target=None, records=(
        replace(g.records[0], joined=True), Record(joined=True, topics=1), replace(g.records[2], joined=False))),
        clients=(replace(s.clients[0], status=MS.PREPARING_REBALANCE),
                 replace(s.clients[1], status=MS.PREPARING_REBALANCE, id=Id.CURRENT, generation=-1),
                 replace(s.clients[2], proc=Proc.DOWN)))
    unjoined = replace(pre, group=replace(pre.group, records=(pre.group.records[0], None, pre.group.records[2])),
                       clients=(pre.clients[0], replace(pre.clients[1], id=Id.NONE, status=MS.UNJOINED),
                                pre.clients[2]))
    post = next(t for a, t in proto.successors(unjoined) if a.name == "RebalanceTimeout")
    assert post.clients[1].owned == work
    h = _bare(proto)
    h._pre_pending = {1}
    assert "without the pending member id of c2" in h._completed_without_pending(pre, post)
    dropped = replace(post, clients=(post.clients[0], replace(post.clients[1], owned=0), post.clients[2]))
    assert h._completed_without_pending(pre, dropped) is None


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


def test_duplicated_dynamic_join_taken_as_a_rejoin_shape() -> None:
    """Gap 4's dynamic shape (connect-keep-work, --hypothesis-seed=53): a duplicated copy of c1's JoinGroup
    (correlation id 3) with its member id reaches the coordinator after the original was answered (c1 now
    waits for its SyncGroup, correlation id 4), and the coordinator answers the copy NONE: a rejoin c1
    never sent."""
    from groupspec.reference.classic import JoinGroupResponse

    proto, s = _converged()

    def harness(copy=True, member_id="c1-1", inflight=(4,), alive=True, error=Error.NONE, connection=0):  # type: ignore[no-untyped-def]
        req = JoinGroupRequest("g", member_id, "consumer", (("range", b""),))
        head = _deliver(req, dst="broker-1", reply=False, copy=copy, src="c1", conn=1_000_000, corr=3)
        proc = NS(alive=alive, incarnation=1, consumer=NS(closed=False, connection=connection,
                                                          inflight=dict.fromkeys(inflight), assignment_snapshot=None))
        h = _bare(proto, head, procs={"c1": proc})
        answer = NS(is_reply=True, dst="c1", conn=1_000_000, corr=3, payload=JoinGroupResponse(error, member_id="c1-1"))
        h.sim._queue = [(0, 0, "deliver", answer, None)]
        h.sim.leader = None  # nothing parked
        return h

    rejoined = _with_client(s, 0, rejoin=True)
    assert harness()._known_gap(s, rejoined) == "duplicated JoinGroup of c1 taken as a rejoin after its original was answered"
    # nearby: the original request, not a copy
    assert harness(copy=False)._known_gap(s, rejoined) is None
    # nearby: a copy of a request its sender still waits for (correlation id 3 in flight)
    assert harness(inflight=(3,))._known_gap(s, rejoined) is None
    # nearby: a copy with no member id (a first JoinGroup: gap 9's orphaned pending id, or gap 4's static shape)
    assert harness(member_id="")._known_gap(s, rejoined) is None
    # nearby: the coordinator refused the copy
    assert harness(error=Error.UNKNOWN_MEMBER_ID)._known_gap(s, rejoined) is None
    # nearby: a copy sent on a connection the process has since dropped (abandoned, not answered)
    assert harness(connection=1)._known_gap(s, rejoined) is None
    # nearby: the sender has stopped (the leaver's linearization handles its copies)
    assert harness(alive=False)._known_gap(s, rejoined) is None


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


def test_former_leader_notices_and_rejoins_in_one_step_shape() -> None:
    """Gap 5 where the poll that noticed also sent the JoinGroup: no rejoin flag is shown, only what follows it
    (--hypothesis-seed=4273733211, static-range)."""
    from groupspec.model import actions as A

    proto, s = _converged()
    follower = 1 - s.group.leader
    name = f"c{follower + 1}"
    with_snapshot = {name: NS(consumer=NS(assignment_snapshot=object()))}
    flagged = _with_client(s, follower, rejoin=True)
    post = next(t for a, t in proto.successors(flagged) if isinstance(a, A.SendJoinGroup) and a.member == follower)
    assert _bare(proto, procs=with_snapshot)._known_gap(s, post) == \
        "a former leader notices the metadata changed and rejoins"
    # nearby: it never computed an assignment (no snapshot)
    assert _bare(proto, procs={name: NS(consumer=NS(assignment_snapshot=None))})._known_gap(s, post) is None
    # nearby: the current leader
    leader = s.group.leader
    lpost = next(t for a, t in proto.successors(_with_client(s, leader, rejoin=True))
                 if isinstance(a, A.SendJoinGroup) and a.member == leader)
    assert _bare(proto, procs={f"c{leader + 1}": NS(consumer=NS(assignment_snapshot=object()))})._known_gap(
        s, lpost) is None
    # nearby: the rejoin comes with another change the model cannot take
    assert _bare(proto, procs=with_snapshot)._known_gap(s, _with_client(post, leader, owned=3)) is None


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
    from groupspec.reference.classic import JoinGroupResponse

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
