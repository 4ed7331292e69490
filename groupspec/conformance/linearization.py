"""Linearization: when a request in flight in the reference takes effect as one model step.

The model handles a request in the step that sends it; the reference has it in flight. The mixin here
decides, before and after each simulator event, which client the abstraction shows *as it was* (frozen)
until its request is accepted, answered or abandoned (see the package docstring and
docs/conformance.md, "Linearization").

May import: ``groupspec.model``, ``groupspec.reference``, ``.refinement``.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from groupspec.model import (
    NO_GENERATION,
    Client,
    Id,
    MemberStatus as MS,
    Proc,
    Record,
    Reply,
    State,
)
from groupspec.reference.classic import GroupStatus as RefStatus
from groupspec.reference.errors import Error
from groupspec.reference.classic import (
    JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, SyncGroupRequest, SyncGroupResponse,
)

from .refinement import REQUEST_MS
from .harness_fields import HarnessFields
from .harness_fields import Tracking as Tracking  # (defined with the fields that name it; read from here)


# --------------------------------------------------------------------------------------------------
# The harness
# --------------------------------------------------------------------------------------------------


class LinearizationMixin(HarnessFields):
    """Linearization bookkeeping of :class:`~groupspec.conformance.harness.Harness`."""

    # ------------------------------------------------------------------ linearization bookkeeping
    def _kinds(self, name: str) -> dict[int, str]:
        p = self._process(name)
        if p is None or not p.alive:
            return {}
        return {corr: f.kind for corr, f in p.consumer.inflight.items() if f.kind in ("join", "sync")}

    def _before_step(self) -> tuple[Any, dict[str, dict[int, str]], dict[str, Any], int]:
        head = self.sim._queue[0] if self.sim._queue else None
        kinds = {n: self._kinds(n) for n in self.names}
        prep: dict[str, Any] = {n: self._prepared(n) for n in self.names}
        for n in self.names:
            p = self._process(n)
            prep["_alive_" + n] = p is not None and p.alive and not p.consumer.closed
            if p is not None:
                prep["_inflight_" + n] = dict(p.consumer.inflight)
                prep["_conn_" + n] = p.incarnation * 1_000_000 + p.consumer.connection
        return head, kinds, prep, len(self.sim._transcript)

    def _prepared(self, name: str) -> bool:
        p = self._process(name)
        return p is not None and p.alive and not p.consumer.needs_join_prepare

    def _after_step(self, before: tuple[Any, dict[str, dict[int, str]], dict[str, Any], int], pre: State) -> None:
        head, kinds, prep, tlen = before
        for i, name in enumerate(self.names):
            tr = self.track[name]
            p = self._process(name)
            if tr.frozen_kind == "leave" and tr.frozen is not None:
                env: Any = head[3] if head is not None and head[2] == "deliver" else None  # (read once mine says it is there)
                mine = env is not None and not env.is_reply and env.src == name and env.conn == tr.conn \
                    and env.corr in tr.corrs
                again = mine and env.corr in tr.handled  # a duplicated copy of a request already handled
                if mine:
                    tr.handled.add(env.corr)
                if mine and self._answered_at_once(env, error=True):
                    tr.quiet.add(env.corr)  # an error answer at once: part of the model's step, no inbox
                if mine and not again and isinstance(env.payload, JoinGroupRequest) and self._member_of(name):
                    # its JoinGroup, sent before it stopped, reached the coordinator: SendJoinGroup
                    f = tr.frozen
                    if f.inbox is not None and f.inbox.reply == Reply.JOIN and f.id == Id.CURRENT:
                        # sent after its SyncGroup was refused (REBALANCE_IN_PROGRESS): the model's
                        # ReceiveJoinResponse comes first, from the state shown before this step
                        shown = replace(pre, clients=pre.clients[:i] + (f,) + pre.clients[i + 1:])
                        f = self.proto._receive_join(shown, i).clients[i]
                    owned = f.owned if (self.proto.rebalance == "cooperative" and f.generation != NO_GENERATION) else 0
                    if self.variant.keep_work:
                        owned = f.owned  # connect-keep-work: a reset worker reports the work it still runs
                    tr.frozen = replace(f, status=MS.PREPARING_REBALANCE, rejoin=False, owned=owned, id=Id.CURRENT)
                elif mine and not again and isinstance(env.payload, SyncGroupRequest) and tr.frozen.inbox is not None \
                        and tr.frozen.inbox.reply == Reply.JOIN:
                    # its SyncGroup, sent on the JoinGroup answer before it stopped, reached the
                    # coordinator: the model's ReceiveJoinResponse (which sends SyncGroup), from the
                    # state shown before this step
                    shown = replace(pre, clients=pre.clients[:i] + (tr.frozen,) + pre.clients[i + 1:])
                    tr.frozen = self.proto._receive_join(shown, i).clients[i]
                alive = p is not None and p.alive and not p.consumer.closed and p.consumer.fatal is None
                if not self._leave_in_flight(name, only_leave=alive):
                    tr.frozen = None  # delivered (the model's LeaveGroup step) or lost (a crash)
                    if alive and not p.consumer.needs_join_prepare:  # type: ignore[union-attr]  # (alive: p is not None)
                        # it is already joining again as a fresh member (Start, then SendJoinGroup; for
                        # connect-keep-work the model's PollTimeoutLeave, the worker still running its work)
                        kept = self._mask(p.consumer.owned) if self.variant.keep_work else 0  # type: ignore[union-attr]
                        tr.frozen, tr.frozen_kind = Client(proc=Proc.UP, topics=self._subscribed(name), owned=kept), "join"
                continue
            gone = p is None or not p.alive or p.consumer.closed
            if gone and prep.get("_alive_" + name) and self._leave_in_flight(name):
                # close() or crash with a LeaveGroup/JoinGroup/SyncGroup still in flight: in the model
                # the process sent it before stopping, so it stays shown as running (as it was) until
                # the coordinator has handled (or the network lost) those requests. A client frozen before
                # its request is shown with its process and member-id status as they were shown last (a
                # GC pause that ended, a record that went away), not as they were when it was frozen.
                # One shown joined by its pending member id (its second JoinGroup still travelling) stays so.
                as_shown = tr.frozen
                if i in self._shown_pending:
                    as_shown = pre.clients[i]
                elif as_shown is not None and pre.clients[i].proc != Proc.DOWN:
                    as_shown = replace(as_shown, proc=pre.clients[i].proc, id=pre.clients[i].id)
                self._freeze_leaver(name, tr, as_shown or pre.clients[i], prep.get("_inflight_" + name, {}),
                                    prep.get("_conn_" + name, -1))
                continue
            if p is None or not p.alive or p.consumer.fatal is not None:
                tr.frozen = None
                continue
            c = p.consumer
            now_kinds = self._kinds(name)
            new = {k for corr, k in now_kinds.items() if corr not in kinds[name]}
            if tr.frozen is not None and tr.frozen_kind == "sync" and self.variant.keep_work \
                    and self._left_now(c, prep.get("_inflight_" + name, {})):
                # connect-keep-work: its poll timeout fired just after it sent SyncGroup (LeaveGroup, reset,
                # work kept). In the model the SyncGroup is ReceiveJoinResponse at its delivery and the
                # LeaveGroup PollTimeoutLeave at its own: shown as before both until then, like a leaver
                # (as it was shown last: its process and member-id status may have changed since it froze).
                self._freeze_leaver(name, tr, pre.clients[i], prep.get("_inflight_" + name, {}), prep.get("_conn_" + name, -1))
                continue
            if tr.frozen is None:
                if any(f.kind == "leave" for f in c.inflight.values()) and self._leave_in_flight(name) \
                        and pre.clients[i].id == Id.CURRENT:
                    # max.poll.interval expired: a dynamic member sends LeaveGroup and resets. The model
                    # has it as LeaveGroup then Start (a fresh member): linearized at the delivery.
                    self._freeze_leaver(name, tr, pre.clients[i], prep.get("_inflight_" + name, {}),
                                        prep.get("_conn_" + name, -1))
                    continue
                if "join" in new or (self._prepared(name) and not prep[name]):
                    tr.frozen, tr.frozen_kind = pre.clients[i], "join"
                elif "sync" in new:
                    tr.frozen, tr.frozen_kind = pre.clients[i], "sync"
                continue
            # Unfreeze: the request took effect at the coordinator, or the attempt is over.
            if tr.frozen_kind == "static":
                if not now_kinds:
                    tr.frozen = None  # its SyncGroup answer (the stored assignment) arrived, or an error
                elif self._sync_refused(head, name, Error.REBALANCE_IN_PROGRESS) and "join" in now_kinds.values():
                    # The group began a rebalance after the replacement: its SyncGroup is refused and it
                    # rejoins at once. The model's member (STABLE since the replacement) learns it from a
                    # heartbeat (Heartbeat: rejoin) and then sends JoinGroup when this one takes effect.
                    tr.frozen, tr.frozen_kind = replace(tr.frozen, rejoin=True), "join"
                elif self._sync_reset(head, name):
                    # Its record went away after the replacement (it expired, or was replaced again): its
                    # SyncGroup is refused and it resets. The model's member learns it from a heartbeat
                    # (Heartbeat: UNKNOWN_MEMBER_ID resets it, or ILLEGAL_GENERATION); it rejoins at once.
                    err = head[3].payload.error
                    reset = replace(tr.frozen, generation=NO_GENERATION, owned=0, status=MS.UNJOINED, rejoin=False,
                                    inbox=None, id=Id.NONE if err is Error.UNKNOWN_MEMBER_ID else tr.frozen.id)
                    tr.frozen = reset if "join" in now_kinds.values() else None
                    tr.frozen_kind = "join"
            elif self._took_effect(head, name, tlen):
                view = self._group_view()
                if tr.frozen_kind == "join" and c.config.group_instance_id is not None and view is not None \
                        and view.status == RefStatus.STABLE and not self._parked((head[3].src, head[3].conn, head[3].corr)):
                    # KIP-345 replacement in a Stable group: answered at once, then SyncGroup returns the
                    # stored assignment. The model does both in one step (_static_replace), here, where the
                    # coordinator replaced the member id: the client is shown as the model's after that step
                    # (STABLE in the group's generation, owning the stored assignment) until its SyncGroup
                    # is answered; other members may change the group meanwhile.
                    stored = next((self._assignment_mask(mv.assignment) for mv in view.members
                                   if self._member_slot(mv) == i), 0)
                    # A stored assignment outside its (narrower) subscription: onJoinComplete applies nothing
                    # and requests a rejoin, in Kafka as in the model (formerly known model gap 14).
                    outside = stored & ~self.cfg.subscribed_partitions(tr.frozen.topics, self.state.group.partitions | stored)
                    tr.frozen = replace(tr.frozen, status=MS.STABLE, id=Id.CURRENT, generation=view.generation,
                                        owned=0 if outside else stored, rejoin=bool(outside), inbox=None)
                    tr.frozen_kind = "static"
                else:
                    tr.frozen = None
            elif tr.frozen_kind == "join":
                if self._unknown_static(head, name, tr.frozen, pre.group.records[i]):
                    # KNOWN MODEL GAP 7 (docs/conformance.md): a static member whose instance id the
                    # group no longer knows (its record expired) joins with its old member id; Kafka
                    # answers UNKNOWN_MEMBER_ID and the member rejoins with no member id. The model
                    # fences it (FENCED_INSTANCE_ID, fatal). Shown reset from here; _check records it.
                    self.unknown_static.append(name)
                    reset = replace(tr.frozen, id=Id.NONE, generation=NO_GENERATION, owned=0, status=MS.UNJOINED,
                                    rejoin=False, inbox=None)
                    tr.frozen = None if c.needs_join_prepare else reset
                elif c.needs_join_prepare:
                    tr.frozen = None  # the attempt ended without effect: onJoinPrepare will run again
            elif "sync" not in now_kinds.values():
                if self._sync_reset(head, name) and tr.frozen.inbox is not None \
                        and tr.frozen.inbox.reply == Reply.JOIN:
                    # SyncGroup refused with UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION: the member reset.
                    # That is the model's ReceiveJoinResponse (which sends SyncGroup and takes the
                    # refusal in one step), taken now, from the state shown before this step; the
                    # JoinGroup it sends at once is a new attempt (SendJoinGroup when it takes effect).
                    shown = replace(pre, clients=pre.clients[:i] + (tr.frozen,) + pre.clients[i + 1:])
                    after = self.proto._receive_join(shown, i).clients[i]
                    tr.frozen = after if "join" in now_kinds.values() else None
                    tr.frozen_kind = "join"
                elif "join" in now_kinds.values():
                    tr.frozen_kind = "join"  # SyncGroup refused (REBALANCE_IN_PROGRESS): rejoined at once
                else:
                    tr.frozen = None  # answered with an error, or abandoned

    @staticmethod
    def _left_now(c: Any, before: dict[int, Any]) -> bool:
        """The member sent LeaveGroup in this step (it had none in flight before)."""
        return any(f.kind == "leave" for f in c.inflight.values()) and not any(f.kind == "leave" for f in before.values())

    def _unknown_static(self, head: Any, name: str, shown: Client, record: Record | None) -> bool:
        """Model gap 7: the step delivered to the static member ``name``, shown with a stale member id and
        no record, a JoinGroup answer UNKNOWN_MEMBER_ID (its instance id is unknown to the group)."""
        if not self.variant.static or record is not None or shown.id != Id.STALE or shown.proc == Proc.DOWN:
            return False
        if head is None or head[2] != "deliver":
            return False
        env = head[3]
        return env.is_reply and env.dst == name and isinstance(env.payload, JoinGroupResponse) \
            and env.payload.error is Error.UNKNOWN_MEMBER_ID

    def _sync_refused(self, head: Any, name: str, error: Error) -> bool:
        """The step delivered to ``name`` a SyncGroup answer with ``error``."""
        if head is None or head[2] != "deliver":
            return False
        env = head[3]
        return env.is_reply and env.dst == name and isinstance(env.payload, SyncGroupResponse) \
            and env.payload.error is error

    def _sync_reset(self, head: Any, name: str) -> bool:
        """The step delivered to ``name`` a SyncGroup answer that resets the member (UNKNOWN_MEMBER_ID or
        ILLEGAL_GENERATION)."""
        if head is None or head[2] != "deliver":
            return False
        env = head[3]
        return env.is_reply and env.dst == name and isinstance(env.payload, SyncGroupResponse) \
            and env.payload.error in (Error.UNKNOWN_MEMBER_ID, Error.ILLEGAL_GENERATION)

    def _member_of(self, name: str) -> bool:
        view = self._group_view()
        return view is not None and any(self._member_slot(mv) == self.slot[name] for mv in view.members)

    def _lossy_requests(self) -> bool:
        """A request sent before the network healed is still outstanding (it may have been lost, and
        its timeout will still change what the member does)."""
        for p in self.sim.procs.values():
            if not p.alive:
                continue
            for f in p.consumer.inflight.values():
                if f.kind != "join" and f.deadline_ms - REQUEST_MS < self.loss_end:
                    return True
        return False

    def _leave_in_flight(self, name: str, only_leave: bool = False) -> bool:
        """A LeaveGroup (or, unless ``only_leave``, a JoinGroup or SyncGroup) from ``name`` is still on
        its way to the coordinator."""
        kinds = (LeaveGroupRequest,) if only_leave else (LeaveGroupRequest, JoinGroupRequest, SyncGroupRequest)
        # a duplicated copy of a LeaveGroup the coordinator has already handled changes nothing
        return any(kind == "deliver" and not env.is_reply and env.src == name and isinstance(env.payload, kinds)
                   and (env.src, env.conn, env.corr) not in self._left
                   for _at, _seq, kind, env, _b in self.sim._queue)

    def _took_effect(self, head: Any, name: str, tlen: int) -> bool:
        """The step delivered ``name``'s JoinGroup/SyncGroup to the coordinator and it was accepted
        (parked, or answered NONE)."""
        if head is None or head[2] != "deliver":
            return False
        env = head[3]
        if env.is_reply or env.src != name:
            return False
        req = env.payload
        if isinstance(req, JoinGroupRequest):
            api = "JoinGroup"
        elif isinstance(req, SyncGroupRequest):
            api = "SyncGroup"
        else:
            return False
        p = self._process(name)
        conn = p.incarnation * 1_000_000 + p.consumer.connection if p else -1
        if env.conn != conn or env.corr not in p.consumer.inflight:  # type: ignore[union-attr]  # (p None: conn -1, no match)
            return False  # an abandoned or duplicate request
        sender = (env.src, env.conn, env.corr)
        for _at, _seq, kind, out, _b in self.sim._queue:
            if kind == "deliver" and out.is_reply and out.dst == name and out.conn == env.conn \
                    and out.corr == env.corr:
                return out.payload.error is Error.NONE  # answered at once
        return self._parked(sender)

    def _answered_at_once(self, env: Any, error: bool) -> bool:
        """The request ``env`` just delivered was answered at once (with an error, if ``error``)."""
        for _at, _seq, kind, out, _b in self.sim._queue:
            if kind == "deliver" and out.is_reply and out.dst == env.src and out.conn == env.conn \
                    and out.corr == env.corr:
                return not error or out.payload.error is not Error.NONE
        return False

    def _parked(self, sender: tuple[Any, ...]) -> bool:
        """The coordinator holds a JoinGroup/SyncGroup from ``sender`` (its waiter points to it)."""
        sim = self.sim
        if sim.leader is None:
            return False
        group = sim.brokers[sim.leader]._groups.get(sim.config.group_id)
        if group is None:
            return False
        for m in group.members.values():
            for w in (m.join_waiter, m.sync_waiter):
                if w is not None and w.destination == sender:
                    return True
        return False

