"""The known model gaps: reference steps the model cannot take, each matched by its one shape.

Every entry here names a documented gap (docs/conformance.md, "Known model gaps"): the step is accepted,
the refinement check resumes from the abstract state after it, and invariants and trace checks go on.
A matcher must recognise only the shape it describes.

May import: ``groupspec.model``, ``groupspec.reference``, ``.refinement``.
"""
from __future__ import annotations

from dataclasses import replace

from groupspec.model.core import (
    NO_GENERATION,
    GroupStatus as GS,
    Id,
    MemberStatus as MS,
    Proc,
    State,
)
from groupspec.reference.errors import Error
from groupspec.reference.messages import (
    HeartbeatResponse,
    JoinGroupRequest,
)

from .refinement import SESSION_MS, match, project


class KnownGapsMixin:
    """The known model gaps of :class:`~groupspec.conformance.harness.Harness`."""

    def _late_heartbeat_answer(self, pre: State, post: State) -> bool:
        head = self._head
        if head is None or head[2] != "deliver" or not head[3].is_reply or head[3].dst not in self.slot:
            return False
        resp = head[3].payload
        if not isinstance(resp, HeartbeatResponse):
            return False
        i = self.slot[head[3].dst]
        a, b = pre.clients[i], post.clients[i]
        if resp.error is Error.REBALANCE_IN_PROGRESS:
            if pre.group.status == GS.PREPARING_REBALANCE and a.generation == pre.group.generation:
                return False  # not late: the model's Heartbeat takes it
            expect = replace(a, rejoin=True)
        elif resp.error in (Error.ILLEGAL_GENERATION, Error.UNKNOWN_MEMBER_ID):
            # generationUnchanged(): the member resets even in the middle of its next join attempt
            expect = replace(a, status=MS.UNJOINED, generation=NO_GENERATION, owned=0, rejoin=False, inbox=b.inbox,
                             id=Id.NONE if resp.error is Error.UNKNOWN_MEMBER_ID else a.id)
            expect = replace(expect, id=b.id) if b.id in (Id.NONE, a.id) else expect
        else:
            return False
        probe = replace(pre, clients=pre.clients[:i] + (expect,) + pre.clients[i + 1:])
        return project(probe) == project(post)

    def _stale_pending_sync(self) -> bool:
        sim = self.sim
        group = sim.brokers[sim.leader]._groups.get(sim.config.group_id) if sim.leader is not None else None
        return group is not None and any(mid not in group.members for mid in group.pending_sync)

    def _resumed_recently(self, name: str) -> bool:
        """``name``'s process came back from a GC pause less than a session timeout ago."""
        p = self._process(name)
        if p is None or not p.alive or p.paused_until > self.sim.now:
            return False
        started = self._pause_started.get(name)
        return started is not None and self.sim.now - p.paused_until < SESSION_MS

    def _static_reset_only(self, pre: State, post: State, slots: list[int]) -> bool:
        """Gap 7: the step's one change is the reset of the static members in ``slots`` (told
        UNKNOWN_MEMBER_ID); everything else, the group included, is as before."""
        probe = replace(pre, clients=tuple(post.clients[k] if k in slots else c for k, c in enumerate(pre.clients)))
        return project(probe) == project(post)

    def _completed_without_pending(self, pre: State, post: State, pending: set[int] | list[int]) -> bool:
        """Gap 8: the step is a model step from ``pre`` with the members in ``pending`` (pending member
        ids, shown joined by alpha) not joined yet: no record, unjoined, no member id."""
        clients, records = list(pre.clients), list(pre.group.records)
        for k in pending:
            records[k] = None
            clients[k] = replace(clients[k], status=MS.UNJOINED, id=Id.NONE, generation=NO_GENERATION,
                                 owned=0, rejoin=False, inbox=None)
        unjoined = replace(pre, group=replace(pre.group, records=tuple(records)), clients=tuple(clients))
        return match(self.proto, unjoined, post, self.depth) is not None

    def _expired_after_pause(self, pre: State, post: State, late: list[int]) -> bool:
        """Gap 10: the step is a model step with the members in ``late`` (resumed from a GC pause less than
        a session timeout ago) still shown paused, before and after."""
        def paused(st: State) -> State:
            return replace(st, clients=tuple(replace(c, proc=Proc.PAUSED) if k in late else c
                                             for k, c in enumerate(st.clients)))
        return match(self.proto, paused(pre), paused(post), self.depth) is not None

    def _known_gap(self, pre: State, post: State) -> str | None:
        """The name of the known model gap this unmatched step is, or None (then it is a failure)."""
        if self.orphan_gap:
            self.orphan_gap = False
            return "a join completion held back by an orphaned pending member id while the group changed"
        if pre.group.status == GS.EMPTY and post.group.status in (GS.PREPARING_REBALANCE, GS.COMPLETING_REBALANCE) \
                and post.group.generation - pre.group.generation in (0, 1) \
                and all(not (b.owned & ~a.owned) for a, b in zip(pre.clients, post.clients)):
            # The model completes a join phase that starts from EMPTY at the first JoinGroup; Kafka's
            # initial delayed join (even at delay 0, and while a pending member id holds it back) lets
            # several members form the first generation together. Its shape: out of EMPTY into a join
            # phase, the generation up by at most one, and nobody gains a partition (none is assigned
            # before the first SyncGroup).
            return "initial delayed join"
        head = self._head
        if head is not None and head[2] == "deliver" and not head[3].is_reply and head[3].copy \
                and isinstance(head[3].payload, JoinGroupRequest) and not head[3].payload.member_id \
                and head[3].payload.group_instance_id is not None:
            # A duplicated first JoinGroup of a static member: the copy, carrying no member id, replaces
            # the member id the original just got (KIP-345) and fences the process's own request. A TCP
            # connection never delivers a request twice; the model has no step for it.
            return "duplicated static JoinGroup"
        for i, (a, b) in enumerate(zip(pre.clients, post.clients)):
            p = self._process(self.names[i])
            if b.rejoin and not a.rejoin and i != post.group.leader and p is not None \
                    and p.consumer.assignment_snapshot is not None and match(
                        self.proto, pre, replace(post, clients=post.clients[:i] + (replace(b, rejoin=False),)
                                                 + post.clients[i + 1:]), self.depth) is not None:
                # A member that computed an earlier generation's assignment (a leader then, not now:
                # it was paused or away while another member took over) compares the metadata with its
                # own snapshot of that assignment and rejoins (ConsumerCoordinator.rejoinNeededOrPending).
                # The model's leader notices only partitions nobody is assigned (NoticeMetadata).
                return "a former leader notices the metadata changed"
        if self._stale_sync and head is not None and head[2] == "bwake" \
                and pre.group.status in (GS.STABLE, GS.COMPLETING_REBALANCE) \
                and post.group.status == GS.PREPARING_REBALANCE \
                and [r is None for r in pre.group.records] == [r is None for r in post.group.records]:
            # The pending-sync timer of a generation in which a static member was replaced before it
            # sent SyncGroup: Kafka keeps the old member id in pendingSyncMembers, the new id's
            # SyncGroup does not clear it, and the timer forces a rebalance that removes nobody (checked:
            # the same members before and after). The
            # model's records have no pending-sync set; it has no such step.
            return "pending-sync expiry of a replaced static member id"
        return None

