"""The abstraction function ``alpha``: the reference's state (coordinator, consumers, network), read as a model state.

Owns :class:`AbstractionMixin`, the part of the harness that reads the simulator: members' configuration,
the group view on the current coordinator, and :meth:`AbstractionMixin.abstract` (records, targets,
clients and their inboxes, leavers frozen until their requests are handled). See docs/conformance.md,
"The abstraction".

May import: ``groupspec.model``, ``groupspec.reference``, ``.refinement``, ``.linearization``.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable

from groupspec.model import (
    NO_GENERATION,
    Client,
    Group,
    GroupStatus as GS,
    Id,
    Inbox,
    MemberStatus as MS,
    Proc,
    Record,
    Reply,
    State,
)
from groupspec.reference.classic import ConsumerConfig, GroupView, MemberState
from groupspec.reference.sim import SimProc
from groupspec.reference.classic import (
    ConsumerProtocolError, decode_assignment, decode_subscription, decode_sticky_user_data,
)
from groupspec.reference.classic import GroupStatus as RefStatus
from groupspec.reference.errors import Error
from groupspec.reference.classic import JoinGroupRequest, JoinGroupResponse, SyncGroupRequest, SyncGroupResponse

from .refinement import HEARTBEAT_MS, REBALANCE_MS, REQUEST_MS, SESSION_MS, TOPIC, project
from .refinement import INBOX_ERRORS, CLASSIC_MEMBER_STATE, GROUP_STATUS
from .linearization import Tracking
from .harness_fields import HarnessFields

# Known model gap 9, second shape (Connect): why a held join completion is no longer shown held.
_EMPTIED = ("a join completion held back by pending member ids after the last member it waited for left, while the group changed "
            "(the model completes at the departure)")


class AbstractionMixin(HarnessFields):
    """The abstraction function of :class:`~groupspec.conformance.harness.Harness`."""

    # ------------------------------------------------------------------ configuration of members
    def consumer_config(self, name: str) -> ConsumerConfig:
        v = self.variant
        if self.connect is not None:
            from groupspec.conformance.connect import worker_config
            return worker_config(name, TOPIC, SESSION_MS, HEARTBEAT_MS, REBALANCE_MS, REQUEST_MS, keep_work=v.keep_work)
        return ConsumerConfig(
            group_id="g", client_id=name, topics=self.subscriptions[name], assignors=(v.assignor,),
            group_instance_id=f"{name}-instance" if v.static else None,
            session_timeout_ms=SESSION_MS, heartbeat_interval_ms=HEARTBEAT_MS,
            max_poll_interval_ms=REBALANCE_MS, request_timeout_ms=REQUEST_MS,
            enable_auto_commit=True, auto_commit_interval_ms=1000, commit_on_revoke=True,
        )

    # ------------------------------------------------------------------ inspection helpers
    def _group_view(self) -> GroupView | None:
        sim = self.sim
        if sim.leader is None:
            return None
        b = sim.brokers[sim.leader]
        if sim.partition in getattr(b, "_loading", set()):
            return None
        return b.group(sim.config.group_id)

    def _mask(self, parts: Iterable[Any]) -> int:
        if self.connect is not None:
            return self.connect.mask(parts, TOPIC, self.max_partitions)
        m = 0
        for t, p in parts:
            if t in self.topic_base and 0 <= int(p) < self.topic_max[t]:
                m |= 1 << (self.topic_base[t] + int(p))
        return m

    def topic_mask(self, topics: Iterable[str]) -> int:
        """A subscription (topic names) as the model's topic bit mask."""
        return sum(1 << k for k, t in enumerate(self.topics) if t in set(topics))

    def _subscribed(self, name: str) -> int:
        """The topics ``name`` subscribes to (a stopped process restarts with its last subscription, as
        the model's does)."""
        if self.connect is not None:
            return self.cfg.all_topics  # a Connect worker has no subscription: all its work is wanted
        p = self._process(name)
        if p is not None and p.alive and not p.consumer.closed:
            return self.topic_mask(p.consumer.config.topics)
        return self.topic_mask(self.subscriptions[name])

    def _assignment_mask(self, blob: bytes) -> int:
        if len(blob) < 2:
            return 0
        try:
            return self._mask(decode_assignment(blob).partitions)
        except ConsumerProtocolError:
            return 0

    def _member_slot(self, mv: Any) -> int | None:
        key = mv.group_instance_id[: -len("-instance")] if mv.group_instance_id else mv.client_id
        return self.slot.get(key)

    def _process(self, name: str) -> SimProc | None:
        return self.sim.procs.get(name)

    # ------------------------------------------------------------------ the abstraction function
    def abstract(self) -> State:
        """alpha: the reference's state (coordinator, consumers, messages in flight) as a model state."""
        s = self._abstract(allow_hold=True)
        if not self.holding:
            self._hold_real = None
        return s

    def _abstract(self, allow_hold: bool) -> State:
        n = self.members
        if self.connect is not None:
            self.connect.pinned = None  # set by _target if the leader's assignment is readable
        view = self._group_view()
        records: list[Record | None] = [None] * n
        ids: dict[int, str] = {}
        pending: set[str] = set()
        self.doubled = ""
        self.pending_joined: set[int] = set()
        self.holding = False  # alpha shows the state from before a join completion that is still due
        if view is None:
            if self.suspended and hasattr(self, "state"):
                group = self.state.group  # the group is being loaded: nobody can see it change
                ids, pending = self._last_ids
            else:
                group = Group(records=(None,) * n, partitions=self._existing())
        else:
            pending = set(view.pending)
            for mv in view.members:
                i = self._member_slot(mv)
                if i is None:
                    continue
                if records[i] is not None:
                    self.doubled = f"the coordinator has two member ids for {self.names[i]}: {ids[i]} and {mv.member_id}"
                records[i] = self._record(view, mv)
                ids[i] = mv.member_id
            self._last_ids = (ids, pending)
            self.pending_joined = set()
            if view.status == RefStatus.PREPARING_REBALANCE:
                # KIP-394: a pending member id holds back the join phase like a joined member. The
                # model has no two-step join: while the group prepares a rebalance, the first
                # JoinGroup (answered MEMBER_ID_REQUIRED) is the member's SendJoinGroup.
                for i, name in enumerate(self.names):
                    pid = self._pending_id(name, pending)
                    if records[i] is None and pid is not None:
                        records[i] = Record(static=False, joined=True, topics=self._subscribed(name))
                        ids[i] = pid
                        self.pending_joined.add(i)
                self._last_ids = (ids, pending)
                orphans = self._orphans(pending)
                if hasattr(self, "state") and all(mv.awaiting_join for mv in view.members) and all(
                        pid in {ids[i] for i in self.pending_joined} or pid in orphans for pid in pending):
                    # Every member has joined (a pending one by its first JoinGroup) and the completion
                    # waits only for the coordinator's timer (the initial delayed join, at delay 0), a
                    # pending member's second JoinGroup, or the expiry of orphaned pending ids: the
                    # model completes the join phase inside the last JoinGroup (or, out of EMPTY, in the
                    # InitialDelayExpired step right after it: one reference event, the whole path), so
                    # the state before it is shown until the completion.
                    emptied = self._emptied_hold(view)
                    if allow_hold:
                        if pending & orphans or emptied:
                            # KNOWN MODEL GAP 9: an orphaned pending id holds the completion back for as
                            # long as it lives (the session timeout) or until the rebalance timeout. Held
                            # as above only while nothing else changes; once something does (a member
                            # starts, leaves, a partition is added ...), the model cannot order it before
                            # the completion it already made: the gap is recorded (_known_gap).
                            real = self._abstract(allow_hold=False)
                            key = project(real)
                            if self._hold_real is None:
                                self._hold_real = key
                            elif key != self._hold_real:
                                self.orphan_gap = True if pending & orphans else _EMPTIED
                                return real
                        self.pending_joined = set(self._held_pending)
                        self.holding = True
                        return self.state
            self._held_pending = set(self.pending_joined)
            leader = -1
            for mv in view.members:
                if mv.member_id == view.leader:
                    leader = self._member_slot(mv) if self._member_slot(mv) is not None else -1  # type: ignore[assignment]  # (not None: tested)
            group = Group(
                status=GROUP_STATUS[view.status], generation=view.generation, leader=leader,
                records=tuple(records), target=self._target(view), partitions=self._existing(),
                forming=self._forming(view), stale_sync=self._stale_pending_id(view),
            )
            if getattr(self.proto, "leader_snapshot", False) and leader >= 0:
                # model/static_leader.py: the leader's assignmentSnapshot, as the partitions it counts.
                group = replace(group, snapshot=self._snapshot_mask(self.names[leader]))
            if group.status == GS.COMPLETING_REBALANCE and group.target is None:
                # The leader has not computed it yet: the model's own assignor stands in (only a
                # search path that takes the leader's SyncGroup in the same event can read it).
                present = [i for i, r in enumerate(records) if r is not None]
                group = replace(group, target=self.proto.compute_target(group, present))
        clients = tuple(self._client(name, ids.get(i), pending) for i, name in enumerate(self.names))
        if view is not None:
            clients = tuple(c.but(woke=True) if self._woke(name, c, records[i], ids.get(i)) else c
                            for i, (name, c) in enumerate(zip(self.names, clients)))
        return State(group=group, clients=clients, budget=10**9)

    # -- the coordinator's timers, as the model's formation and timer faults see them (model/formation.py)
    def _join_timer(self, view: Any) -> Any:
        return self.sim.brokers[self.sim.leader]._timers.get(("join", view.group_id))  # type: ignore[index]  # (a group view has a leader)

    def _forming(self, view: Any) -> bool:
        """The initial delayed join runs (KIP-134): the group prepares its first rebalance since Empty."""
        timer = self._join_timer(view) if view.status == RefStatus.PREPARING_REBALANCE else None
        return timer is not None and bool(timer.payload.get("initial"))

    @staticmethod
    def _stale_pending_id(view: Any) -> bool:
        """pendingSyncMembers names an id that is no member (a static member replaced before its SyncGroup)."""
        if view.status not in (RefStatus.COMPLETING_REBALANCE, RefStatus.STABLE):
            return False
        members = {mv.member_id for mv in view.members}
        return any(mid not in members for mid in view.pending_sync)

    def _woke(self, name: str, c: Client, record: Record | None, member_id: str | None) -> bool:
        """``late-expiry``: ``name`` runs again after a GC pause, and the coordinator has not refreshed its
        session since before the pause began (its session timer is still the one armed before it)."""
        started = self._pause_started.get(name)
        if started is None or record is None or member_id is None or c.proc != Proc.UP or c.id != Id.CURRENT:
            return False
        # (a record: there is a leader)
        timer = self.sim.brokers[self.sim.leader]._timers.get(("heartbeat", self.sim.config.group_id, member_id))  # type: ignore[index]
        return timer is not None and timer.deadline - SESSION_MS <= started

    def _pending_id(self, name: str, pending: set[str]) -> str | None:
        """The pending member id (KIP-394) the coordinator holds for the running process ``name``: the
        one it knows, or the one whose MEMBER_ID_REQUIRED answer is still on its way to it."""
        p = self._process(name)
        if p is None or not p.alive or p.consumer.closed or p.consumer.fatal is not None:
            tr = self.track.get(name)
            if tr is not None and tr.frozen is not None and tr.frozen_kind == "leave":
                # It stopped between its two JoinGroups with the second still travelling: the coordinator
                # takes it as a member when it arrives (the model's process joined, then stopped).
                for _at, _seq, kind, env, _b in self.sim._queue:
                    if kind == "deliver" and not env.is_reply and env.src == name and env.conn == tr.conn \
                            and isinstance(env.payload, JoinGroupRequest) and env.payload.member_id in pending:
                        return env.payload.member_id
            return None
        if p.consumer.member_id in pending:
            return p.consumer.member_id
        if p.consumer.member_id:
            return None
        owners = self.sim.brokers[self.sim.leader].id_owner if self.sim.leader is not None else {}
        conn = p.incarnation * 1_000_000 + p.consumer.connection
        for pid in sorted(pending):  # sorted: a set's order would depend on the process's hash seed
            owner = owners.get(pid)
            if isinstance(owner, tuple) and owner[:2] == (name, conn) and owner[2] in p.consumer.inflight:
                return pid
        return None

    def _emptied_hold(self, view: Any) -> bool:
        """Known model gap 9, second shape (Connect): the last member the join phase waited for left (a
        worker's poll-timeout leave) while pending ids of running workers hold the completion back (Kafka's
        hasAllMembersJoined needs no pending member). The model, which reads them as joined, completes
        inside that departure; shown held while nothing else changes, but once something does (the worker
        rejoins as a new member before the pending ids' second JoinGroups) the model cannot order it after
        that completion either. Either no real member is left (found by connect-keep-work,
        ``--hypothesis-seed=43``, profile sweep), or the departed one had not joined the phase in the state
        shown and every member left has (``--hypothesis-seed=78``)."""
        if self.connect is None:
            return False
        if not view.members:
            return True
        members = {mv.member_id for mv in view.members}
        shown = self.connect._ids  # the member ids of the state shown (not updated while it is held)
        return any(r is not None and not r.joined and i in shown and shown[i] not in members
                   for i, r in enumerate(self.state.group.records))

    def _orphans(self, pending: set[str]) -> set[str]:
        """Pending member ids no running process will ever use: created by a duplicated first JoinGroup,
        or by a process that stopped or reconnected before its second JoinGroup. The model has no such
        id; the coordinator keeps it until it expires, and it holds back the join phase meanwhile."""
        held = {self._pending_id(name, pending) for name in self.names}
        return {pid for pid in pending if pid not in held}

    @staticmethod
    def _completion_due(view: Any) -> bool:
        return (view.status == RefStatus.PREPARING_REBALANCE and bool(view.members) and not view.pending
                and all(mv.awaiting_join for mv in view.members))

    def _snapshot_mask(self, name: str) -> int:
        """The partitions in process ``name``'s assignment snapshot (0 if it has none), and above them the topics it
        was taken with (model/static_leader.py: the leader watches those topics)."""
        p = self._process(name)
        snap = getattr(p.consumer, "assignment_snapshot", None) if p is not None and p.alive else None
        if not snap:
            return 0
        counts = dict(snap)
        m = 0
        for k, t in enumerate(self.topics):
            n = min(counts.get(t, 0), self.topic_max[t])
            m |= ((1 << n) - 1) << self.topic_base[t]
            if t in counts:
                m |= 1 << (self.proto.cfg.partitions + k)
        return m

    def _existing(self) -> int:
        if self.connect is not None:
            count = min(self.sim.topic_counts.get(TOPIC, 0), self.max_partitions)
            return self.connect.existing(count)
        m = 0
        for t in self.topics:
            n = min(self.sim.topic_counts.get(t, 0), self.topic_max[t])
            m |= ((1 << n) - 1) << self.topic_base[t]
        return m

    def _record(self, view: Any, mv: Any) -> Record:
        if self.connect is not None:
            return self.connect.record(view, mv, self._member_slot(mv))
        topics, owned, gen = 0, 0, NO_GENERATION
        proto_name = view.protocol_name or (mv.protocols[0][0] if mv.protocols else None)
        for name, blob in mv.protocols:
            if name != proto_name:
                continue
            try:
                sub = decode_subscription(blob)
            except ConsumerProtocolError:
                break
            topics = self.topic_mask(sub.topics)
            owned = self._mask(sub.owned_partitions)
            gen = sub.generation_id
            if name == "sticky":
                prev, g = decode_sticky_user_data(sub.user_data)
                owned |= self._mask(prev)
        pending_sync = mv.member_id in view.pending_sync
        status = view.status
        return Record(
            static=mv.group_instance_id is not None,
            joined=mv.awaiting_join and status == RefStatus.PREPARING_REBALANCE,
            awaiting_sync=mv.awaiting_sync,
            synced=status in (RefStatus.COMPLETING_REBALANCE, RefStatus.STABLE) and not pending_sync,
            topics=topics, owned=owned, generation=gen,
            assignment=self._assignment_mask(mv.assignment),
        )

    def _target(self, view: Any) -> tuple[int, ...] | None:
        """The assignment the reference leader computed for this generation (from its SyncGroup request)."""
        if view.status != RefStatus.COMPLETING_REBALANCE:
            return None
        requests: list[Any] = [env.payload for _at, _seq, kind, env, _b in self.sim._queue
                    if kind == "deliver" and not env.is_reply and isinstance(env.payload, SyncGroupRequest)]
        for name in self.names:
            p = self._process(name)
            if p is not None and p.alive:
                requests += [f.request for f in p.consumer.inflight.values() if f.kind == "sync"]
        for req in requests:
            if isinstance(req, SyncGroupRequest) and req.assignments and req.member_id == view.leader \
                    and req.generation_id == view.generation:
                target = [0] * self.members
                by_id = {mv.member_id: self._member_slot(mv) for mv in view.members}
                for mid, blob in req.assignments:
                    i = by_id.get(mid)
                    if i is not None:
                        target[i] = self._assignment_mask(blob) if self.connect is None \
                            else self.connect.target_mask(view, mid, blob, i)
                if self.connect is not None:
                    self.connect.pinned = tuple(target)
                return tuple(target)
        return None

    def _client(self, name: str, record_id: str | None, pending: set[str]) -> Client:
        p = self._process(name)
        tr = self.track[name]
        if tr.frozen is not None and tr.frozen_kind == "leave":
            # Answers the coordinator parked for it still travel (the model has the process up until
            # its last requests are handled). One that reaches the stopped process is dropped there;
            # the model's process, stopped too, never takes it out of its inbox: it stays shown.
            inbox = self._leaver_inbox(name, tr)
            if inbox is not None:
                tr.frozen = replace(tr.frozen, inbox=inbox)
            if tr.frozen.id == Id.CURRENT and record_id is None:
                # its record went away meanwhile (expired): the id it will leave with is stale
                tr.frozen = replace(tr.frozen, id=Id.STALE)
            if self.variant.keep_work and self.slot[name] in self.pending_joined and tr.frozen.id == Id.NONE \
                    and tr.frozen.status == MS.UNJOINED:
                # it stopped between its two JoinGroups while the group was stable; the group now prepares a
                # rebalance, so its pending id shows it joined (its SendJoinGroup). (Kept to connect-keep-work,
                # where the stall rule met it; the other variants generate what they did.)
                tr.frozen = replace(tr.frozen, status=MS.PREPARING_REBALANCE, id=Id.CURRENT)
            return tr.frozen
        if p is None or not p.alive or p.consumer.fatal is not None or p.consumer.closed:
            return Client(proc=Proc.DOWN, topics=self._subscribed(name))
        if tr.frozen is not None and self.slot[name] not in self.pending_joined:
            # Shown as before its request, but a GC pause shows (the model's Pause/Resume), and so does
            # the coordinator dropping its record meanwhile (its member id is then stale).
            f = tr.frozen
            fid = Id.STALE if f.id == Id.CURRENT and record_id is None else f.id
            proc = Proc.PAUSED if p.paused_until > self.sim.now and fid != Id.NONE else Proc.UP
            return f if (proc, fid) == (f.proc, f.id) else replace(f, proc=proc, id=fid)
        c = p.consumer
        mid = c.member_id
        if self.slot[name] in self.pending_joined:
            proc = Proc.PAUSED if p.paused_until > self.sim.now else Proc.UP
            return Client(proc=proc, status=MS.PREPARING_REBALANCE, id=Id.CURRENT, generation=c.generation.generation_id,
                          owned=self._mask(c.owned) if self.variant.keep_work else 0, topics=self._subscribed(name))
        if mid == "" and c.config.group_instance_id is not None and any(f.kind == "join" for f in c.inflight.values()):
            # a static member learns its member id from the JoinGroup answer: it holds that id already
            cid = Id.CURRENT if record_id is not None else Id.STALE
        elif mid == "" or mid in pending:
            cid = Id.NONE
        elif record_id == mid:
            cid = Id.CURRENT
        else:
            cid = Id.STALE
        status = CLASSIC_MEMBER_STATE[c.state]
        # A GC pause shows only for a process that holds a member id: the model's Pause is a member's
        # (the zombie story); a process that has none yet only has its next steps delayed.
        proc = Proc.PAUSED if p.paused_until > self.sim.now and cid != Id.NONE else Proc.UP
        return Client(
            proc=proc, status=status, id=cid, generation=c.generation.generation_id,
            # A reset member (no generation or no member id) has lost its partitions; Kafka reports
            # it at the next onJoinPrepare, the model at once (it cannot commit in between).
            # A Connect worker that keeps its work (connect-keep-work) keeps it through the reset, as the model's.
            owned=0 if (c.generation.generation_id == NO_GENERATION or mid == "") and not self.variant.keep_work
            else self._mask(c.owned),
            topics=self._subscribed(name),
            # the subscription changed since the last JoinGroup: the next poll rejoins (the model's
            # ChangeSubscription sets rejoin with the new subscription, in one step)
            rejoin=(c.rejoin_needed or (c.joined_topics is not None and c.joined_topics != tuple(sorted(c.config.topics))))
            and status == MS.STABLE,
            inbox=self._inbox(name),
        )

    def _inbox(self, name: str) -> Inbox | None:
        """A parked answer (JoinGroup/SyncGroup, or its error) on its way to ``name``'s live connection."""
        p = self._process(name)
        c = p.consumer  # type: ignore[union-attr]  # (asked of a live process only)
        conn = p.incarnation * 1_000_000 + c.connection  # type: ignore[union-attr]
        best = None
        for at, seq, kind, env, _b in self.sim._queue:
            if kind != "deliver" or not env.is_reply or env.dst != name or env.conn != conn:
                continue
            f = c.inflight.get(env.corr)
            if f is None or f.kind not in ("join", "sync"):
                continue
            if self.variant.keep_work and c.state is MemberState.UNJOINED and f.generation != c.generation:
                # connect-keep-work: the answer to a request from before the worker reset itself (its poll
                # timeout): it only makes it rejoin, which it does anyway (the model's PollTimeoutLeave
                # leaves no inbox)
                continue
            if best is None or (at, seq) < best[0]:
                best = ((at, seq), env.payload, f)
        if best is None:
            return None
        return self._as_inbox(best[1], c.generation.generation_id, name)

    def _leaver_inbox(self, name: str, tr: Tracking) -> Inbox | None:
        """The first answer travelling to a stopped process's JoinGroup/SyncGroup from before it stopped."""
        best = None
        for at, seq, kind, env, _b in self.sim._queue:
            if kind != "deliver" or not env.is_reply or env.dst != name or env.conn != tr.conn \
                    or env.corr not in tr.corrs or env.corr in tr.quiet:
                continue
            if best is None or (at, seq) < best[0]:
                best = ((at, seq), env.payload, env.corr)
        if best is None:
            return None
        return self._as_inbox(best[1], tr.corrs[best[2]], name)

    def _as_inbox(self, resp: Any, sync_generation: int, name: str = "") -> Inbox | None:
        """A travelling JoinGroup/SyncGroup answer as the model's inbox (``sync_generation``: the
        generation a SyncGroup answer belongs to, which the answer itself does not carry)."""
        if isinstance(resp, JoinGroupResponse):
            if resp.error is Error.NONE:
                return Inbox(Reply.JOIN, resp.generation_id)
        elif isinstance(resp, SyncGroupResponse):
            if resp.error is Error.NONE:
                if self.connect is not None:  # an incremental assignment: the allocation it leads to
                    return Inbox(Reply.SYNC, sync_generation, self.connect.sync_answer(name, sync_generation, resp.assignment))
                return Inbox(Reply.SYNC, sync_generation, self._assignment_mask(resp.assignment))
        reply = INBOX_ERRORS.get(resp.error)
        return None if reply is None else Inbox(reply)

    def _freeze_leaver(self, name: str, tr: Tracking, shown: Client, inflight: dict[int, Any], conn: int) -> None:
        """``name`` stopped (or reset) with requests travelling: show ``shown`` until they are handled."""
        corrs = {corr: getattr(f.request, "generation_id", NO_GENERATION)
                 for corr, f in inflight.items() if f.kind in ("join", "sync")}
        for _at, _seq, kind, env, _b in self.sim._queue:
            if kind == "deliver" and not env.is_reply and env.src == name and env.conn == conn \
                    and isinstance(env.payload, (JoinGroupRequest, SyncGroupRequest)):
                corrs.setdefault(env.corr, getattr(env.payload, "generation_id", NO_GENERATION))
        tr.frozen, tr.frozen_kind = shown, "leave"
        tr.conn, tr.corrs, tr.quiet, tr.handled = conn, corrs, set(), set()

