"""The classic coordinator's rebalance: members joining, the join phase, the sync phase (§2.1-§2.3, §3, §4).

Theory of operation
-------------------
One part of :class:`~groupspec.reference.classic.GroupCoordinator` (a base class of it, holding no state
of its own): member bookkeeping (member ids, parked JoinGroup / SyncGroup requests, adding and removing
members, the leader), the rebalance machinery (``prepareRebalance``, the join-phase timers, completing the
join phase and starting the next generation, propagating the leader's assignment), JoinGroup for new,
known and static members (KIP-394 two-step join, KIP-345 static membership, KIP-814 ``skip_assignment``)
and SyncGroup. The timers, the log and the output queue are the coordinator's (``coordinator.py``);
session expiry, Heartbeat and LeaveGroup are ``sessions.py``. Section numbers refer to docs/protocol.md;
the rules are the Scala ``GroupCoordinator``'s, as the module docstring of ``coordinator.py`` says.
"""
from __future__ import annotations

import uuid
import random
from collections.abc import Hashable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import Error, GroupspecProtocolError
from .messages import JoinGroupMember, JoinGroupRequest, JoinGroupResponse, SyncGroupRequest, SyncGroupResponse
from .group import VALID_PREVIOUS_STATES, GroupMetadata, GroupStatus, MemberMetadata, Waiter

if TYPE_CHECKING:
    from .group import Timer, TimerKey
    from .messages import Response

__all__ = ["JoinSyncPhase"]

_E, _PR, _CR, _ST, _D = (GroupStatus.EMPTY, GroupStatus.PREPARING_REBALANCE,
                         GroupStatus.COMPLETING_REBALANCE, GroupStatus.STABLE, GroupStatus.DEAD)


class GroupSettings(Protocol):
    """The broker settings the join and sync phases read (``coordinator.CoordinatorConfig``; not imported:
    that module imports this one)."""

    @property
    def initial_rebalance_delay_ms(self) -> int: ...

    @property
    def min_session_timeout_ms(self) -> int: ...

    @property
    def max_session_timeout_ms(self) -> int: ...

    @property
    def new_member_join_timeout_ms(self) -> int: ...

    @property
    def max_size(self) -> int: ...


class JoinSyncPhase:
    """Member bookkeeping, the join phase and the sync phase of the classic coordinator (a base of
    :class:`~groupspec.reference.classic.coordinator.GroupCoordinator`, whose state it reads and changes)."""

    if TYPE_CHECKING:  # what it uses of GroupCoordinator (and of its other base, Sessions)
        config: GroupSettings
        faults: frozenset[str]
        incarnation: int
        id_owner: dict[str, Hashable]
        _groups: dict[str, GroupMetadata]
        _timers: dict[TimerKey, Timer]
        _id_counter: int
        _id_random: random.Random | None

        def _send(self, destination: Hashable, response: Response) -> None: ...
        def _schedule(self, key: TimerKey, delay_ms: int, **payload: Any) -> None: ...
        def _cancel(self, key: TimerKey) -> None: ...
        def _store_group(self, group: GroupMetadata, assignment: Mapping[str, bytes]) -> Error: ...
        def _group_status_error(self, group_id: str, empty_id_invalid: bool) -> Error | None: ...
        def _validate_member(self, group: GroupMetadata, member_id: str, instance_id: str | None) -> Error | None: ...

    # ------------------------------------------------------------------ member bookkeeping

    def _new_member_id(self, prefix: str, sender: Hashable) -> str:
        self._id_counter += 1
        if self._id_random is None:
            member_id = f"{prefix}-{uuid.UUID(int=(self.incarnation << 64) | self._id_counter)}"
        else:  # Kafka: clientId + "-" + UUID.randomUUID()
            member_id = f"{prefix}-{uuid.UUID(int=self._id_random.getrandbits(128), version=4)}"
        self.id_owner[member_id] = sender
        return member_id

    def _set_join_waiter(self, group: GroupMetadata, member: MemberMetadata, waiter: Waiter | None) -> None:
        if waiter is not None and (member.join_waiter is None or "double_count_rejoin" in self.faults):
            group.num_awaiting_join += 1
        elif waiter is None and member.join_waiter is not None:
            group.num_awaiting_join -= 1
        member.join_waiter = waiter

    def _answer_join(self, group: GroupMetadata, member: MemberMetadata, response: JoinGroupResponse) -> bool:
        """[GM] ``maybeInvokeJoinCallback``: answer a parked JoinGroup, if any."""
        waiter = member.join_waiter
        if waiter is None:
            return False
        self._set_join_waiter(group, member, None)
        self._send(waiter.destination, response)
        return True

    def _answer_sync(self, member: MemberMetadata, response: SyncGroupResponse) -> bool:
        """[GM] ``maybeInvokeSyncCallback``."""
        waiter = member.sync_waiter
        if waiter is None:
            return False
        member.sync_waiter = None
        self._send(waiter.destination, response)
        return True

    def _add_member(self, group: GroupMetadata, member: MemberMetadata) -> None:
        """[GM] ``add``: first member fixes the protocol type; first member added becomes leader."""
        if not group.members:
            group.protocol_type = member.protocol_type
        if member.instance_id is not None:
            if member.instance_id in group.static:
                raise GroupspecProtocolError(f"static member {member.instance_id} already mapped")
            group.static[member.instance_id] = member.member_id
        if group.leader is None:
            group.leader = member.member_id
        waiter = member.join_waiter
        member.join_waiter = None
        group.members[member.member_id] = member
        group.count_protocols(member, +1)
        self._set_join_waiter(group, member, waiter)
        group.pending.pop(member.member_id, None)

    def _remove_member(self, group: GroupMetadata, member_id: str) -> None:
        """[GM] ``remove``: member, its static mapping, pending/pending-sync entries; leader moves."""
        member = group.members.pop(member_id, None)
        if member is not None:
            group.count_protocols(member, -1)
            if member.join_waiter is not None:
                group.num_awaiting_join -= 1
                member.join_waiter = None
            if member.instance_id is not None and group.static.get(member.instance_id) == member_id:
                del group.static[member.instance_id]
        if group.leader == member_id:
            group.leader = next(iter(group.members), None)
        group.pending.pop(member_id, None)
        group.pending_sync.pop(member_id, None)

    def _schedule_heartbeat(self, group: GroupMetadata, member: MemberMetadata, timeout_ms: int | None = None) -> None:
        """[GC] ``completeAndScheduleNextExpiration``: (re)arm the member's session timer."""
        delay = member.session_timeout_ms if timeout_ms is None else timeout_ms
        self._schedule(("heartbeat", group.group_id, member.member_id), delay)

    def _join_response(self, group: GroupMetadata, member_id: str, *, members: bool,
                       leader: str | None = None, skip: bool = False) -> JoinGroupResponse:
        listed: tuple[JoinGroupMember, ...] = ()
        if members:
            assert group.protocol_name is not None
            listed = tuple(JoinGroupMember(m.member_id, m.instance_id, m.metadata(group.protocol_name))
                           for m in group.members.values())
        return JoinGroupResponse(
            error=Error.NONE, generation_id=group.generation, protocol_type=group.protocol_type,
            protocol_name=group.protocol_name, leader=(group.leader if leader is None else leader) or "",
            member_id=member_id, members=listed, skip_assignment=skip,
        )

    # ------------------------------------------------------------------ rebalance machinery

    def _maybe_prepare_rebalance(self, group: GroupMetadata) -> None:
        if group.status in VALID_PREVIOUS_STATES[_PR]:
            self._prepare_rebalance(group)

    def _prepare_rebalance(self, group: GroupMetadata) -> None:
        """[GC] ``prepareRebalance`` (§1.3, §3.4, §3.6)."""
        if group.is_(_CR):
            self._reset_and_propagate_assignment_error(group, Error.REBALANCE_IN_PROGRESS)
        self._remove_sync_expiration(group)
        initial = group.is_(_E)
        group.transition(_PR)
        timeout = group.rebalance_timeout_ms()
        key = ("join", group.group_id)
        if initial:
            delay = self.config.initial_rebalance_delay_ms
            self._schedule(key, delay, initial=True, delay=delay, remaining=max(timeout - delay, 0))
        else:
            self._schedule(key, timeout, initial=False)
            self._try_complete_join(group)

    def _try_complete_join(self, group: GroupMetadata) -> None:
        """``joinPurgatory.checkAndComplete``: complete a (non-initial) join phase once all joined."""
        if not group.is_(_PR):
            return
        timer = self._timers.get(("join", group.group_id))
        if timer is None or timer.payload.get("initial"):
            return
        if group.has_all_members_joined("forget_pending_member" in self.faults):
            self._cancel(("join", group.group_id))
            self._complete_join(group)

    def _on_join_timer(self, group: GroupMetadata, payload: dict[str, Any]) -> None:
        """Expiry of ``DelayedJoin`` / ``InitialDelayedJoin`` ([DJ])."""
        if payload.get("initial") and group.new_member_added and payload["remaining"] != 0:
            group.new_member_added = False
            delay = min(self.config.initial_rebalance_delay_ms, payload["remaining"])
            remaining = max(payload["remaining"] - payload["delay"], 0)
            self._schedule(("join", group.group_id), delay, initial=True, delay=delay, remaining=remaining)
            return
        self._complete_join(group)

    def _complete_join(self, group: GroupMetadata) -> None:
        """[GC] ``onCompleteJoin`` (§3.4)."""
        if group.is_(_D):
            return
        if "keep_missed_member" not in self.faults:
            missed = [m.member_id for m in group.members.values() if m.join_waiter is None and m.instance_id is None]
            for member_id in missed:
                self._remove_member(group, member_id)
                self._cancel(("heartbeat", group.group_id, member_id))
        if not self._maybe_elect_new_joined_leader(group) and group.members:
            self._schedule(("join", group.group_id), group.rebalance_timeout_ms(), initial=False)
            return
        self._init_next_generation(group)
        if group.is_(_E):
            self._store_group(group, {})  # a failure is only logged by Kafka
            return
        for member in list(group.members.values()):
            is_leader = member.member_id == group.leader
            self._answer_join(group, member, self._join_response(group, member.member_id, members=is_leader))
            self._schedule_heartbeat(group, member)
            member.is_new = False
            group.pending_sync[member.member_id] = None
        self._schedule(("sync", group.group_id), group.rebalance_timeout_ms(), generation=group.generation)

    def _maybe_elect_new_joined_leader(self, group: GroupMetadata) -> bool:
        """[GM] ``maybeElectNewJoinedLeader``; NOTE(determinism): first joined member in insertion order."""
        if group.leader is None:
            return False
        leader = group.members.get(group.leader)
        if leader is not None and leader.join_waiter is not None:
            return True
        for member in group.members.values():
            if member.join_waiter is not None:
                group.leader = member.member_id
                return True
        return False

    def _init_next_generation(self, group: GroupMetadata) -> None:
        """[GM] ``initNextGeneration`` (§3.3)."""
        if "no_generation_bump" not in self.faults:
            group.generation += 1
        if group.members:
            group.protocol_name = group.select_protocol()
            group.transition(_CR)
        else:
            group.protocol_name = None
            group.transition(_E)
        group.pending_sync.clear()

    def _reset_and_propagate_assignment_error(self, group: GroupMetadata, error: Error) -> None:
        """[GC] ``resetAndPropagateAssignmentError``: clear assignments, answer parked syncs with ``error``."""
        if not group.is_(_CR):
            raise GroupspecProtocolError(f"group {group.group_id} must be CompletingRebalance, is {group.status.value}")
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: GroupMetadata, error: Error) -> None:
        """[GC] ``propagateAssignment``: every parked SyncGroup answered (``_answer_sync``) and that member's session
        timer re-armed (``_schedule_heartbeat``); both inlined, as this runs once per member when a round completes."""
        ptype, pname = (group.protocol_type, group.protocol_name) if error is Error.NONE else (None, None)
        group_id, send, schedule = group.group_id, self._send, self._schedule
        for member in list(group.members.values()):
            waiter = member.sync_waiter
            if waiter is None:
                continue
            member.sync_waiter = None
            send(waiter.destination, SyncGroupResponse(error, member.assignment, ptype, pname))
            schedule(("heartbeat", group_id, member.member_id), member.session_timeout_ms)

    def _remove_sync_expiration(self, group: GroupMetadata) -> None:
        group.pending_sync.clear()
        self._cancel(("sync", group.group_id))

    def _remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata) -> None:
        """[GC] ``removeMemberAndUpdateGroup`` (§2.5)."""
        self._answer_join(group, member, JoinGroupResponse(Error.UNKNOWN_MEMBER_ID, member_id=""))
        self._remove_member(group, member.member_id)
        self._cancel(("heartbeat", group.group_id, member.member_id))
        if group.status in (_ST, _CR):
            self._maybe_prepare_rebalance(group)
        elif group.is_(_PR):
            self._try_complete_join(group)

    def _remove_pending_member_and_update_group(self, group: GroupMetadata, member_id: str) -> None:
        self._remove_member(group, member_id)
        self._cancel(("pending", group.group_id, member_id))
        if group.is_(_PR):
            self._try_complete_join(group)


    # ------------------------------------------------------------------ JoinGroup (§2.1, §2.2, §4)

    def _handle_join(self, sender: Hashable, req: JoinGroupRequest) -> None:
        def reply(error: Error, member_id: str) -> None:
            self._send(sender, JoinGroupResponse(error, member_id=member_id))

        error = self._group_status_error(req.group_id, empty_id_invalid=True)
        if error is not None:
            # Kafka 4.3.1: errors raised by the coordinator runtime (partition not owned or loading) reach the
            # client through GroupCoordinatorService's exception handler, which sets no member id
            runtime = error in (Error.NOT_COORDINATOR, Error.COORDINATOR_LOAD_IN_PROGRESS)
            reply(error, "" if runtime else req.member_id)
            return
        if not self.config.min_session_timeout_ms <= req.session_timeout_ms <= self.config.max_session_timeout_ms:
            reply(Error.INVALID_SESSION_TIMEOUT, req.member_id)
            return
        is_new = req.member_id == ""
        group = self._groups.get(req.group_id)
        if group is None:
            if not is_new:
                reply(Error.UNKNOWN_MEMBER_ID, req.member_id)
                return
            group = self._groups[req.group_id] = GroupMetadata(req.group_id)
        if not self._accept_joining_member(group, req.member_id):
            self._cancel(("heartbeat", group.group_id, req.member_id))
            self._remove_member(group, req.member_id)
            reply(Error.GROUP_MAX_SIZE_REACHED, "")
        elif is_new:
            self._join_new_member(group, sender, req)
        else:
            self._join_current_member(group, sender, req)
        if group.is_(_PR):
            self._try_complete_join(group)

    def _accept_joining_member(self, group: GroupMetadata, member_id: str) -> bool:
        """[GC] ``acceptJoiningMember`` (§2.2)."""
        max_size = self.config.max_size
        if group.status in (_E, _D):
            return True
        member = group.members.get(member_id)
        if group.is_(_PR):
            return (member is not None and member.join_waiter is not None) or group.num_awaiting_join < max_size
        return member is not None or len(group.members) < max_size

    def _join_new_member(self, group: GroupMetadata, sender: Hashable, req: JoinGroupRequest) -> None:
        if group.is_(_D):
            self._send(sender, JoinGroupResponse(Error.COORDINATOR_NOT_AVAILABLE, member_id=""))
            return
        if not group.supports_protocols(req.protocol_type, req.protocols):
            self._send(sender, JoinGroupResponse(Error.INCONSISTENT_GROUP_PROTOCOL, member_id=""))
            return
        prefix = req.group_instance_id if req.group_instance_id is not None else req.client_id
        new_id = self._new_member_id(prefix, sender)
        if req.group_instance_id is not None:
            old_id = group.static.get(req.group_instance_id)
            if old_id is not None:
                self._update_static_member_and_rebalance(group, sender, req, old_id, new_id)
            else:
                self._add_member_and_rebalance(group, sender, req, new_id)
        elif req.version >= 4:
            group.pending[new_id] = None
            self._schedule(("pending", group.group_id, new_id), req.session_timeout_ms)
            self._send(sender, JoinGroupResponse(Error.MEMBER_ID_REQUIRED, member_id=new_id))
        else:
            self._add_member_and_rebalance(group, sender, req, new_id)

    def _join_current_member(self, group: GroupMetadata, sender: Hashable, req: JoinGroupRequest) -> None:
        def reply(error: Error) -> None:
            self._send(sender, JoinGroupResponse(error, member_id=req.member_id))

        if group.is_(_D):
            reply(Error.COORDINATOR_NOT_AVAILABLE)
            return
        if not group.supports_protocols(req.protocol_type, req.protocols):
            reply(Error.INCONSISTENT_GROUP_PROTOCOL)
            return
        if req.member_id in group.pending:
            if req.group_instance_id is not None:
                # Kafka throws IllegalStateException here ("pending member cannot be a static
                # member"); the service's exception handler answers UNKNOWN_SERVER_ERROR with no member id.
                self._send(sender, JoinGroupResponse(Error.UNKNOWN_SERVER_ERROR, member_id=""))
                return
            self._add_member_and_rebalance(group, sender, req, req.member_id)
            return
        error = self._validate_member(group, req.member_id, req.group_instance_id)
        if error is not None:
            reply(error)
            return
        member = group.members[req.member_id]
        waiter = Waiter(sender, req.version)
        if group.is_(_PR):
            self._update_member_and_rebalance(group, member, req, waiter)
        elif group.is_(_CR):
            if member.matches(req.protocols):
                is_leader = member.member_id == group.leader
                self._send(sender, self._join_response(group, member.member_id, members=is_leader))
            else:
                self._update_member_and_rebalance(group, member, req, waiter)
        elif group.is_(_ST):
            if member.member_id == group.leader or not member.matches(req.protocols):
                self._update_member_and_rebalance(group, member, req, waiter)
            else:
                self._send(sender, self._join_response(group, member.member_id, members=False))
        else:
            reply(Error.UNKNOWN_MEMBER_ID)

    def _add_member_and_rebalance(self, group: GroupMetadata, sender: Hashable, req: JoinGroupRequest, member_id: str) -> None:
        """[GC] ``addMemberAndRebalance`` (§3.6, §3.7)."""
        member = MemberMetadata(member_id, req.group_instance_id, req.client_id, req.client_host, req.rebalance_timeout_ms,
                         req.session_timeout_ms, req.protocol_type, req.protocols, is_new=True,
                         join_waiter=Waiter(sender, req.version))
        # Kafka 4.3.1 (GroupMetadataManager.addMemberThenRebalanceOrCompleteJoin): the initial delay is extended
        # whenever the group came to PreparingRebalance from Empty (the Scala coordinator: generation 0 only);
        # found by the Kafka oracle (tests/replay/26_initial_delay_extension.jsonl)
        if group.is_(_PR) and group.previous_status is _E:
            group.new_member_added = True
        self._cancel(("pending", group.group_id, member_id))
        self._add_member(group, member)
        self._schedule_heartbeat(group, member, self.config.new_member_join_timeout_ms)
        self._maybe_prepare_rebalance(group)

    def _update_member(self, group: GroupMetadata, member: MemberMetadata, protocols: tuple[tuple[str, bytes], ...],
                       rebalance_timeout_ms: int, session_timeout_ms: int, waiter: Waiter | None) -> None:
        """[GM] ``updateMember``."""
        group.count_protocols(member, -1)
        member.protocols = protocols
        group.count_protocols(member, +1)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        self._set_join_waiter(group, member, waiter)

    def _update_member_and_rebalance(self, group: GroupMetadata, member: MemberMetadata, req: JoinGroupRequest, waiter: Waiter) -> None:
        self._update_member(group, member, req.protocols, req.rebalance_timeout_ms, req.session_timeout_ms, waiter)
        self._maybe_prepare_rebalance(group)

    def _replace_static_member(self, group: GroupMetadata, instance_id: str, old_id: str, new_id: str) -> MemberMetadata:
        """[GM] ``replaceStaticMember`` (§4): re-key, fence whatever the old id had parked."""
        member = group.members.pop(old_id)
        if "no_static_fence" in self.faults:
            zombie = replace(member, join_waiter=None, sync_waiter=None)
            if member.join_waiter is not None:
                group.num_awaiting_join -= 1
                member.join_waiter = None
            group.members[old_id] = zombie
            group.count_protocols(zombie, +1)
            member.sync_waiter = None
        else:
            self._send_fenced(group, member, old_id)
        member.member_id = new_id
        group.members[new_id] = member
        if group.leader == old_id:
            group.leader = new_id
        # NOTE(pending-sync): Kafka does not move a pending-sync entry to the new id. If the old id
        # had not synced yet, it stays in the set: the new id's SyncGroup does not clear it, and the
        # pending-sync timer later finds it and forces a rebalance (tests/replay/24).
        group.static[instance_id] = new_id
        return member

    def _send_fenced(self, group: GroupMetadata, member: MemberMetadata, old_id: str) -> None:
        if member.join_waiter is not None:
            waiter = member.join_waiter
            self._set_join_waiter(group, member, None)
            self._send(waiter.destination, JoinGroupResponse(Error.FENCED_INSTANCE_ID, member_id=old_id))
        self._answer_sync(member, SyncGroupResponse(Error.FENCED_INSTANCE_ID))

    def _update_static_member_and_rebalance(self, group: GroupMetadata, sender: Hashable, req: JoinGroupRequest,
                                            old_id: str, new_id: str) -> None:
        """[GC] ``updateStaticMemberAndRebalance`` (§4)."""
        assert req.group_instance_id is not None
        instance_id = req.group_instance_id
        current_leader = group.leader
        member = self._replace_static_member(group, instance_id, old_id, new_id)
        self._cancel(("heartbeat", group.group_id, old_id))
        self._schedule_heartbeat(group, member)
        old_timeouts = (member.rebalance_timeout_ms, member.session_timeout_ms)
        waiter = Waiter(sender, req.version)
        self._update_member(group, member, req.protocols, req.rebalance_timeout_ms, req.session_timeout_ms, waiter)
        # NOTE(revert): Kafka reads the "old" protocols *after* updateMember, so a failed store
        # restores the old timeouts but keeps the new protocols; done the same way here.
        old = (member.protocols, *old_timeouts)
        if group.is_(_ST):
            if group.select_protocol() == group.protocol_name:
                self._static_rejoin_stable(group, member, instance_id, old_id, current_leader, old)
            else:
                self._maybe_prepare_rebalance(group)
        elif group.is_(_CR):
            self._prepare_rebalance(group)
        elif group.status in (_E, _D):
            raise GroupspecProtocolError(f"group {group.group_id} in {group.status.value} with a known static member")

    def _static_rejoin_stable(self, group: GroupMetadata, member: MemberMetadata, instance_id: str, old_id: str,
                              current_leader: str | None, old: tuple[Any, int, int]) -> None:
        new_id = member.member_id
        error = self._store_group(group, {m.member_id: m.assignment for m in group.members.values()})
        if error is not Error.NONE:
            waiter = member.join_waiter
            self._update_member(group, member, old[0], old[1], old[2], None)
            reverted = self._replace_static_member(group, instance_id, new_id, old_id)
            self._cancel(("heartbeat", group.group_id, new_id))
            self._schedule_heartbeat(group, reverted)
            assert waiter is not None
            self._send(waiter.destination, JoinGroupResponse(
                error, generation_id=group.generation, protocol_type=group.protocol_type,
                protocol_name=group.protocol_name, leader=current_leader or "", member_id=""))
            return
        version = member.join_waiter.version if member.join_waiter is not None else 0
        if version >= 9:
            is_leader = group.leader == new_id
            response = self._join_response(group, new_id, members=is_leader, skip=is_leader)
        else:
            response = self._join_response(group, new_id, members=False, leader=current_leader or "")
        self._answer_join(group, member, response)

    # ------------------------------------------------------------------ SyncGroup (§2.3)

    def _handle_sync(self, sender: Hashable, req: SyncGroupRequest) -> None:
        def reply(error: Error) -> None:
            self._send(sender, SyncGroupResponse(error))

        # Kafka 4.3.1 passes COORDINATOR_LOAD_IN_PROGRESS through (GroupCoordinatorService.syncGroup maps
        # only write errors); the Scala coordinator's REBALANCE_IN_PROGRESS conversion is gone (the Kafka
        # oracle showed it: tests/replay/19_failover.jsonl)
        error = self._group_status_error(req.group_id, empty_id_invalid=True)
        if error is not None:
            reply(error)
            return
        group = self._groups.get(req.group_id)
        if group is None:
            reply(Error.UNKNOWN_MEMBER_ID)
            return
        error = self._validate_sync(group, req)
        if error is not None:
            reply(error)
            return
        if group.is_(_E):
            reply(Error.UNKNOWN_MEMBER_ID)
        elif group.is_(_PR):
            reply(Error.REBALANCE_IN_PROGRESS)
        elif group.is_(_CR):
            member = group.members[req.member_id]
            member.sync_waiter = Waiter(sender, req.version)
            group.pending_sync.pop(req.member_id, None)
            if req.member_id == group.leader:
                self._leader_sync(group, req.assignments)
        elif group.is_(_ST):
            group.pending_sync.pop(req.member_id, None)
            member = group.members[req.member_id]
            self._send(sender, SyncGroupResponse(Error.NONE, member.assignment, group.protocol_type, group.protocol_name))
            self._schedule_heartbeat(group, member)
        else:  # pragma: no cover - Dead is caught by validation
            raise GroupspecProtocolError(f"SyncGroup reached Dead group {group.group_id}")

    def _validate_sync(self, group: GroupMetadata, req: SyncGroupRequest) -> Error | None:
        if group.is_(_D):
            return Error.COORDINATOR_NOT_AVAILABLE
        error = self._validate_member(group, req.member_id, req.group_instance_id)
        if error is not None:
            return error
        if req.generation_id != group.generation:
            return Error.ILLEGAL_GENERATION
        if req.protocol_type is not None and req.protocol_type != group.protocol_type:
            return Error.INCONSISTENT_GROUP_PROTOCOL
        if req.protocol_name is not None and req.protocol_name != group.protocol_name:
            return Error.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _leader_sync(self, group: GroupMetadata, assignments: tuple[tuple[str, bytes], ...]) -> None:
        full = dict(assignments)  # (req.assignment_map(), without a second copy)
        for member_id in group.members:
            full.setdefault(member_id, b"")
        error = self._store_group(group, full)
        if error is not Error.NONE:
            self._reset_and_propagate_assignment_error(group, error)
            self._maybe_prepare_rebalance(group)
            return
        for member in group.members.values():
            member.assignment = full[member.member_id]
        self._propagate_assignment(group, Error.NONE)
        group.transition(_ST)
