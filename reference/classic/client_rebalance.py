"""The classic client's rebalance: joining, the leader's assignment, SyncGroup, the listener calls (§5).

Theory of operation
-------------------
One part of :class:`~groupspec.reference.classic.Consumer` (a base class of it, holding no state of its
own): ``AbstractCoordinator.joinGroupIfNeeded`` and ``ConsumerCoordinator.onJoinPrepare`` (the eager
member revokes everything, the cooperative one what it no longer may own; commits before revoking),
JoinGroup and its answer (MEMBER_ID_REQUIRED, fencing, fatal errors), the leader's assignment (the
assignors run on every member's subscription, the cooperative validation, withholding transferred
partitions), SyncGroup and ``onJoinComplete`` (what is assigned, revoked or lost, the listener called in
Kafka's order, a cooperative member rejoining after it revoked), and ``onLeavePrepare``. The public inputs,
the requests in flight, coordinator discovery, heartbeats, LeaveGroup and commits are ``client.py``'s.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from .consumer_protocol import (
    Assignment,
    ConsumerProtocolError,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    encode_subscription,
)
from ..errors import Error
from .messages import JoinGroupRequest, JoinGroupResponse, Response, SyncGroupRequest, SyncGroupResponse
from .client_types import (
    COOPERATIVE,
    COORDINATOR_ERRORS,
    EAGER,
    FATAL_JOIN_ERRORS,
    NO_GENERATION,
    TP,
    Generation,
    InFlight,
    MemberState,
    Send,
    member_data,
    validate_cooperative_assignment,
)

if TYPE_CHECKING:
    from .client_types import AssignorFactory, ConsumerConfig, MetadataSource, RebalanceListener
    from .messages import Request

__all__ = ["ClientRebalance"]


class ClientRebalance:
    """The join and sync part of the classic client (a base of :class:`~groupspec.reference.classic.Consumer`,
    whose state it reads and changes)."""

    if TYPE_CHECKING:  # what it uses of Consumer (client.py): its fields and helpers
        protocol_type: ClassVar[str]
        config: ConsumerConfig
        metadata: MetadataSource
        assignor_factory: AssignorFactory
        listener: RebalanceListener
        faults: frozenset[str]
        state: MemberState
        generation: Generation
        owned: tuple[TP, ...]
        rejoin_needed: bool
        needs_join_prepare: bool
        is_leader: bool
        assignment_snapshot: tuple[tuple[str, int], ...] | None
        group_topics: tuple[str, ...] | None
        fatal: str | None
        protocol: str
        positions: dict[TP, int]
        committed: dict[TP, int]
        last_heartbeat_ok_ms: int
        next_heartbeat_ms: int
        next_auto_commit_ms: int
        retry_at_ms: int
        join_prepare_deadline_ms: int | None
        joined_topics: tuple[str, ...] | None
        _prepare_committed: bool
        _assignors: dict[str, Any]
        _assignor_memory: dict[str, tuple[tuple[TP, ...] | None, int]]

        def _send(self, now: int, dest: str, kind: str, req: Request, out: list[Send], purpose: str = "") -> int: ...
        def _kind_inflight(self, kind: str) -> InFlight | None: ...
        def _mark_coordinator_unknown(self) -> None: ...
        def _event(self, now: int, kind: str, partitions: tuple[Any, ...] = (), **extra: Any) -> None: ...
        def _metadata_snapshot(self) -> tuple[tuple[str, int], ...]: ...
        def _commit(self, now: int, parts: tuple[TP, ...], purpose: str, out: list[Send]) -> None: ...

    # ------------------------------------------------------------------ join / sync

    def _join_group_if_needed(self, now: int, out: list[Send]) -> None:
        """One pass of ``AbstractCoordinator.joinGroupIfNeeded``."""
        if self._kind_inflight("join") is not None or self._kind_inflight("sync") is not None:
            return
        if now < self.retry_at_ms:
            return
        if self.needs_join_prepare:
            self.needs_join_prepare = False
            if not self._on_join_prepare(now, out):
                self.needs_join_prepare = True  # waiting for the auto-commit; JoinGroup not sent yet
                return
        if not self._revoke_commit_done(now):
            return
        self.join_prepare_deadline_ms = None
        self._send_join(now, out)

    def _prepare_deadline(self, now: int) -> int:
        """``joinPrepareTimer``: onJoinPrepare waits for commits at most the rebalance timeout."""
        if self.join_prepare_deadline_ms is None:
            self.join_prepare_deadline_ms = now + self.config.max_poll_interval_ms
        return self.join_prepare_deadline_ms

    def _revoke_commit_done(self, now: int) -> bool:
        """A commit made by the revocation callback (commit_on_revoke) is synchronous in the
        application: the JoinGroup waits for it, up to the rebalance timeout."""
        f = self._kind_inflight("commit")
        if f is None or f.purpose != "revoke":
            return True
        return now >= self._prepare_deadline(now)

    def _subscription_user_data(self, name: str) -> bytes | None:
        """``ConsumerPartitionAssignor.subscriptionUserData`` of assignor ``name``."""
        previous, generation = self._assignor_memory.get(name, (None, -1))
        if name == "sticky":
            return None if previous is None else encode_sticky_user_data(previous, generation)
        if name == "cooperative-sticky":
            return encode_cooperative_user_data(generation)
        return None

    def _send_join(self, now: int, out: list[Send]) -> None:
        protocols = []
        owned = tuple(sorted(self.owned))
        for name in self.config.assignors:
            sub = Subscription(
                topics=tuple(sorted(self.config.topics)),
                user_data=self._subscription_user_data(name),
                owned_partitions=owned,
                generation_id=self.generation.generation_id,
                rack_id=self.config.rack_id,
            )
            protocols.append((name, encode_subscription(sub)))
        self.joined_topics = tuple(sorted(self.config.topics))
        req = JoinGroupRequest(
            group_id=self.config.group_id,
            member_id=self.generation.member_id,
            protocol_type=self.protocol_type,
            protocols=tuple(protocols),
            session_timeout_ms=self.config.session_timeout_ms,
            rebalance_timeout_ms=self.config.max_poll_interval_ms,
            group_instance_id=self.config.group_instance_id,
            version=self.config.join_group_version,
            client_id=self.config.client_id,
        )
        self.state = MemberState.PREPARING_REBALANCE
        self._send(now, "coordinator", "join", req, out)

    def _on_join_prepare(self, now: int, out: list[Send]) -> bool:
        """§5.4 ``ConsumerCoordinator.onJoinPrepare``; False while its auto-commit is outstanding."""
        if self.config.enable_auto_commit:
            pending = self._kind_inflight("commit")
            if pending is None or pending.purpose != "prepare":
                if not self._prepare_committed:
                    self._prepare_committed = True
                    self._commit(now, self.owned, "prepare", out)
                    pending = self._kind_inflight("commit")
            if pending is not None and pending.purpose == "prepare" and now < self._prepare_deadline(now):
                return False
        self._prepare_committed = False
        g = self.generation
        if g.generation_id == -1 or g.member_id == "":
            if self.owned:
                lost = self.owned
                self.listener.on_partitions_lost(lost)
                self._event(now, "lost", lost)
                self._drop(lost)
        elif self.protocol == EAGER:
            if "skip_revoke_before_join" in self.faults:
                pass  # FAULT: keep consuming across the rebalance
            else:
                revoked = self.owned
                self._revoke(now, revoked, out)
                self.owned = ()
        else:
            subscribed = set(self.config.topics)
            revoked = tuple(tp for tp in self.owned if tp[0] not in subscribed)
            if revoked:
                self._revoke(now, revoked, out)
        self.is_leader = False
        return True

    def _revoke(self, now: int, parts: tuple[TP, ...], out: list[Send]) -> None:
        if self.config.commit_on_revoke and parts:
            self._commit(now, parts, "revoke", out)
        self.listener.on_partitions_revoked(parts)
        self._event(now, "revoked", parts)
        self._drop(parts)

    def _drop(self, parts: tuple[TP, ...]) -> None:
        gone = set(parts)
        self.owned = tuple(tp for tp in self.owned if tp not in gone)

    def _reset_generation(self, keep_member_id: bool) -> None:
        """``resetStateAndRejoin``: forget the generation (and maybe the member id), rejoin, and run
        ``onJoinPrepare`` again first - it will report the owned partitions lost."""
        self.state = MemberState.UNJOINED
        self.generation = Generation(-1, self.generation.member_id, None) if keep_member_id else NO_GENERATION
        self.rejoin_needed = True
        self.needs_join_prepare = True

    def _fenced(self, now: int, err: Error) -> None:
        self._event(now, "fenced", error=err.name)

    def _on_join(self, now: int, f: InFlight, resp: Response, out: list[Send]) -> None:
        assert isinstance(resp, JoinGroupResponse)
        err = resp.error
        if err is Error.NONE:
            if self.state is not MemberState.PREPARING_REBALANCE:
                self.rejoin_needed = True  # UnjoinedGroupException: retry
                return
            self.generation = Generation(resp.generation_id, resp.member_id, resp.protocol_name)
            self.state = MemberState.COMPLETING_REBALANCE
            self.last_heartbeat_ok_ms = now
            self.next_heartbeat_ms = now + self.config.heartbeat_interval_ms  # HeartbeatThread.enable
            if resp.is_leader and not resp.skip_assignment:
                self.is_leader = True
                self._on_leader_elected(now, resp, out)
            else:
                self.is_leader = resp.is_leader
                if resp.is_leader:  # skipAssignment: the static leader keeps the stored assignment
                    self.assignment_snapshot = self._metadata_snapshot()
                self._send_sync(now, (), out)
        elif err is Error.MEMBER_ID_REQUIRED:
            self.generation = Generation(-1, resp.member_id, None)
            self._join_group_if_needed(now, out)  # rejoin immediately
        elif err is Error.UNKNOWN_MEMBER_ID:
            if f.generation == self.generation:
                self._fenced(now, err)
                self._reset_generation(keep_member_id=False)
            self._join_group_if_needed(now, out)
        elif err in (Error.REBALANCE_IN_PROGRESS, Error.ILLEGAL_GENERATION):
            self.rejoin_needed = True
            self._join_group_if_needed(now, out)
        elif err in COORDINATOR_ERRORS:
            self._mark_coordinator_unknown()
        elif err is Error.COORDINATOR_LOAD_IN_PROGRESS:
            self.retry_at_ms = now + self.config.retry_backoff_ms
        elif err in FATAL_JOIN_ERRORS:
            if err is Error.FENCED_INSTANCE_ID:
                self._fenced(now, err)
            self.fatal = err.name
        else:
            self.fatal = err.name

    def _on_leader_elected(self, now: int, resp: JoinGroupResponse, out: list[Send]) -> None:
        """§5.6 ``onLeaderElected`` + ``performAssignment``."""
        name = resp.protocol_name or ""
        assignor = self._assignors.get(name)
        if assignor is None:
            self.fatal = "IllegalStateException: coordinator selected an assignor this member does not have"
            return
        subs: dict[str, dict[str, Any]] = {}
        owned_by: dict[str, tuple[TP, ...]] = {}
        try:
            for m in resp.members:
                s = decode_subscription(m.metadata)
                owned, generation = member_data(name, s)
                if "ignore_owned" in self.faults:
                    owned = ()
                owned_by[m.member_id] = tuple(s.owned_partitions)
                subs[m.member_id] = {
                    "topics": list(s.topics),
                    "owned": [list(tp) for tp in owned],
                    "generation": generation,
                    "instance_id": m.group_instance_id,
                    "rack": s.rack_id,
                }
        except ConsumerProtocolError as e:
            self.fatal = f"SchemaException: {e}"
            return
        self.group_topics = tuple(sorted({t for s in subs.values() for t in s["topics"]}))
        self.assignment_snapshot = self._metadata_snapshot()
        counts = {t: n for t, n in self.metadata().items()}
        same_round = "same_round_transfer" in self.faults and self.protocol == COOPERATIVE
        if same_round and name == "cooperative-sticky":
            assignor = self.assignor_factory("sticky")  # FAULT: the one-shot target, nothing withheld
        result = assignor.assign(counts, subs)
        assignment = {mid: [tuple(tp) for tp in parts] for mid, parts in result.items()}
        if self.protocol == COOPERATIVE and name != "cooperative-sticky" and not same_round:
            bad = validate_cooperative_assignment(owned_by, assignment)
            if bad:
                self.fatal = f"IllegalStateException: assignor {name} moved still-owned partitions {bad}"
                return
        blobs = tuple(
            (mid, encode_assignment(Assignment(tuple(sorted(parts)))))
            for mid, parts in assignment.items()
        )
        self._send_sync(now, blobs, out)

    def _send_sync(self, now: int, assignments: tuple[tuple[str, bytes], ...], out: list[Send]) -> None:
        g = self.generation
        req = SyncGroupRequest(
            group_id=self.config.group_id,
            member_id=g.member_id,
            generation_id=g.generation_id,
            assignments=assignments,
            group_instance_id=self.config.group_instance_id,
            protocol_type=self.protocol_type,
            protocol_name=g.protocol_name,
        )
        self._send(now, "coordinator", "sync", req, out)

    def _on_sync(self, now: int, f: InFlight, resp: Response, out: list[Send]) -> None:
        assert isinstance(resp, SyncGroupResponse)
        err = resp.error
        if err is Error.NONE:
            if self.state is not MemberState.COMPLETING_REBALANCE or f.generation != self.generation:
                # the heartbeat thread reset us meanwhile: raised as ILLEGAL_GENERATION, rejoin now
                self.rejoin_needed = True
                self._join_group_if_needed(now, out)
                return
            if resp.protocol_name is not None and resp.protocol_name != self.generation.protocol_name:
                self.fatal = Error.INCONSISTENT_GROUP_PROTOCOL.name
                return
            self.state = MemberState.STABLE
            self.rejoin_needed = False
            self.needs_join_prepare = True
            self.last_heartbeat_ok_ms = now
            self._apply_sync_assignment(now, resp.assignment, out)
        elif err is Error.REBALANCE_IN_PROGRESS:
            self.rejoin_needed = True
            self._join_group_if_needed(now, out)
        elif err in (Error.ILLEGAL_GENERATION, Error.UNKNOWN_MEMBER_ID):
            if f.generation == self.generation:
                self._fenced(now, err)
                self._reset_generation(keep_member_id=err is Error.ILLEGAL_GENERATION)
            self.rejoin_needed = True
            self._join_group_if_needed(now, out)
        elif err in COORDINATOR_ERRORS:
            self._mark_coordinator_unknown()
        elif err is Error.FENCED_INSTANCE_ID:
            self._fenced(now, err)
            self.fatal = err.name
        else:
            self.fatal = err.name

    def _apply_sync_assignment(self, now: int, blob: bytes, out: list[Send]) -> None:
        """The SyncGroup answer's assignment bytes: decode them and run ``onJoinComplete``."""
        if len(blob) < 2:
            # ConsumerCoordinator.onJoinComplete: no version prefix means the leader's assignor
            # left this member out - IllegalStateException, thrown from poll
            self.fatal = "IllegalStateException: insufficient bytes in the SyncGroup assignment"
            return
        try:
            asg = decode_assignment(blob)
        except ConsumerProtocolError as e:
            self.fatal = f"SchemaException: {e}"
            return
        self._on_join_complete(now, tuple(asg.partitions), out)

    def _on_join_complete(self, now: int, assigned: tuple[TP, ...], out: list[Send]) -> None:
        """§5.7 ``onJoinComplete``."""
        if not self.is_leader:
            self.assignment_snapshot = None
            self.group_topics = None  # SubscriptionState.resetGroupSubscription
        subscribed = set(self.config.topics)
        if any(tp[0] not in subscribed for tp in assigned):
            self.rejoin_needed = True
            return
        assigned = tuple(sorted(set(assigned)))
        if self.protocol == COOPERATIVE:
            keep = set(assigned)
            revoked = tuple(tp for tp in self.owned if tp not in keep)
            if revoked:
                self._revoke(now, revoked, out)
                if "no_rejoin_after_revoke" not in self.faults:
                    self.rejoin_needed = True
            have = set(self.owned)
            added = tuple(tp for tp in assigned if tp not in have)
        else:
            if self.owned:  # only with the skip_revoke_before_join fault: a late, silent drop
                late = self.owned
                self.listener.on_partitions_revoked(late)
                self._event(now, "revoked", late)
                self.owned = ()
            added = assigned
        self.owned = tuple(sorted(set(self.owned) | set(added)))
        for tp in added:
            self.positions.setdefault(tp, self.committed.get(tp, 0))
        # ConsumerPartitionAssignor.onAssignment, on the selected assignor only
        self._assignor_memory[self.generation.protocol_name or ""] = (assigned, self.generation.generation_id)
        self.next_auto_commit_ms = now + self.config.auto_commit_interval_ms
        self.listener.on_partitions_assigned(added)
        self._event(now, "assigned", added)
        if self.rejoin_needed:
            # joinGroupIfNeeded loops while rejoinNeededOrPending(): the follow-up JoinGroup goes
            # out within the same poll.
            self._join_group_if_needed(now, out)

    def _on_leave_prepare(self, now: int) -> None:
        g = self.generation
        if not self.owned:
            return
        # AbstractCoordinator.rebalanceInProgress
        rebalancing = self.state in (MemberState.PREPARING_REBALANCE, MemberState.COMPLETING_REBALANCE)
        parts = self.owned
        if g.generation_id == -1 or g.member_id == "" or rebalancing:
            self.listener.on_partitions_lost(parts)
            self._event(now, "lost", parts)
        else:
            self.listener.on_partitions_revoked(parts)
            self._event(now, "revoked", parts)
        self.owned = ()
