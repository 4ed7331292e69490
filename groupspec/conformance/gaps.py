"""The known model gaps: reference steps the model cannot take, each matched by its one shape.

Every entry here names a documented gap (docs/conformance.md, "Known model gaps"): the step is accepted,
the refinement check resumes from the abstract state after it, and invariants and trace checks go on.
A matcher must recognise only the shape it describes.

May import: ``groupspec.model``, ``groupspec.reference``, ``.refinement``.
"""
from __future__ import annotations

from dataclasses import replace

from groupspec.model import (
    NO_GENERATION,
    GroupStatus as GS,
    Id,
    MemberStatus as MS,
    State,
)
from groupspec.reference.errors import Error
from groupspec.reference.classic import HeartbeatResponse, JoinGroupRequest

from .refinement import match, project
from .harness_fields import HarnessFields


class KnownGapsMixin(HarnessFields):
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

    def _completed_without_pending(self, pre: State, post: State) -> str | None:
        """KNOWN MODEL GAP 8: a join phase completed (at the rebalance timeout) while a new member's pending
        id (KIP-394) still waited for its second JoinGroup.

        alpha reads a pending id as joined while the group prepares a rebalance (the harness's model runs
        without its two-step join); Kafka completes without it (it is no member yet). The shape: the group
        was preparing a rebalance with members shown joined by a pending id, the step completes the join
        phase (the generation up by one) with none of them a member, and it is a model step from the
        state in which those members hold no id yet. The gap's name, or None."""
        pend = self._pre_pending
        if not pend or pre.group.status != GS.PREPARING_REBALANCE \
                or post.group.generation != pre.group.generation + 1 \
                or any(post.group.records[k] is not None for k in pend):
            return None
        clients, records = list(pre.clients), list(pre.group.records)
        for k in pend:
            records[k] = None
            # (connect-keep-work: a worker that has not joined yet still runs the work it reports)
            clients[k] = replace(clients[k], status=MS.UNJOINED, id=Id.NONE, generation=NO_GENERATION,
                                 owned=clients[k].owned if self.proto.keep_work_on_reset else 0, rejoin=False, inbox=None)
        unjoined = replace(pre, group=replace(pre.group, records=tuple(records)), clients=tuple(clients))
        if match(self.proto, unjoined, post, self.depth) is None:
            return None
        who = ", ".join(self.names[k] for k in sorted(pend))
        return f"join phase completed without the pending member id of {who} (KIP-394)"

    def _duplicate_rejoin(self) -> bool:
        """Gap 4's dynamic shape: the step delivered a duplicated *copy* of a running process's JoinGroup that
        carries a member id, on the connection the process still uses, after the process stopped waiting
        for it (its original was answered: the correlation id is no longer in flight), and the coordinator
        accepted the copy (answered it NONE at once, or parked it): a rejoin of that member the process
        never sent, whose answer it will ignore (found by connect-keep-work, ``--hypothesis-seed=53``). A
        TCP connection never delivers a request twice; the model has no step for it."""
        head = self._head
        if head is None or head[2] != "deliver":
            return False
        env = head[3]
        if env.is_reply or not env.copy or not isinstance(env.payload, JoinGroupRequest) \
                or not env.payload.member_id or env.src not in self.slot:
            return False
        p = self._process(env.src)
        if p is None or not p.alive or p.consumer.closed:
            return False
        if env.conn != p.incarnation * 1_000_000 + p.consumer.connection or env.corr in p.consumer.inflight:
            return False  # an abandoned connection, or a request its sender still waits for
        for _at, _seq, kind, out, _b in self.sim._queue:
            if kind == "deliver" and out.is_reply and out.dst == env.src and out.conn == env.conn and out.corr == env.corr:
                return out.payload.error is Error.NONE
        return self._parked((env.src, env.conn, env.corr))

    def _static_reset_only(self, pre: State, post: State, slots: list[int]) -> bool:
        """Gap 7: the step's one change is the reset of the static members in ``slots`` (told
        UNKNOWN_MEMBER_ID); everything else, the group included, is as before."""
        probe = replace(pre, clients=tuple(post.clients[k] if k in slots else c for k, c in enumerate(pre.clients)))
        return project(probe) == project(post)

    def _known_gap(self, pre: State, post: State) -> str | None:
        """The name of the known model gap this unmatched step is, or None (then it is a failure)."""
        if self.orphan_gap:
            why = self.orphan_gap if isinstance(self.orphan_gap, str) else \
                "a join completion held back by an orphaned pending member id while the group changed"
            self.orphan_gap = False
            return why
        head = self._head
        if head is not None and head[2] == "deliver" and not head[3].is_reply and head[3].copy \
                and isinstance(head[3].payload, JoinGroupRequest) and not head[3].payload.member_id \
                and head[3].payload.group_instance_id is not None:
            # A duplicated first JoinGroup of a static member: the copy, carrying no member id, replaces
            # the member id the original just got (KIP-345) and fences the process's own request. A TCP
            # connection never delivers a request twice; the model has no step for it.
            return "duplicated static JoinGroup"
        if self._duplicate_rejoin():
            return f"duplicated JoinGroup of {head[3].src} taken as a rejoin after its original was answered"
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
        for i, a in enumerate(pre.clients):
            p = self._process(self.names[i])
            if not a.rejoin and a.status == MS.STABLE and a.id == Id.CURRENT and i != pre.group.leader \
                    and p is not None and p.consumer.assignment_snapshot is not None and match(
                        self.proto, replace(pre, clients=pre.clients[:i] + (replace(a, rejoin=True),) + pre.clients[i + 1:]),
                        post, self.depth) is not None:
                # The same notice where the poll that noticed also sent the JoinGroup (its revocation done first, as
                # eager members do), so the step shows no rejoin flag but what follows it: the former leader's
                # rejoin, then model steps (found by --hypothesis-seed=4273733211, static-range: c1, leader of
                # generation 1, paused through a rebalance that elected c2 and two added partitions, resumed and
                # rejoined at once).
                return "a former leader notices the metadata changed and rejoins"
        return None

