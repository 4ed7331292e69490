"""The classic coordinator's sessions: member expiry, Heartbeat, LeaveGroup (§2.4, §2.5, §3.5, §3.9).

Theory of operation
-------------------
One part of :class:`~groupspec.reference.classic.GroupCoordinator` (a base class of it, holding no state
of its own): what the session, pending-member and pending-sync timers do when they fire, the Heartbeat
answer (the group's state and generation told to a live member), and LeaveGroup for one or a batch of
members (KIP-345). Removing a member and rebalancing is ``join_sync.py``'s; the timers are the
coordinator's (``coordinator.py``). Section numbers refer to docs/protocol.md.
"""
from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING

from ..errors import Error
from .messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    LeaveMemberResponse,
    MemberIdentity,
)
from .group import GroupMetadata, GroupStatus

if TYPE_CHECKING:
    from .group import MemberMetadata, TimerKey
    from .messages import Response

__all__ = ["Sessions"]

_E, _PR, _CR, _ST, _D = (GroupStatus.EMPTY, GroupStatus.PREPARING_REBALANCE,
                         GroupStatus.COMPLETING_REBALANCE, GroupStatus.STABLE, GroupStatus.DEAD)
# the answer to a heartbeat is its error alone: one (frozen) response per error, not one made per heartbeat
_HEARTBEAT_RESPONSE = {e: HeartbeatResponse(e) for e in Error}


class Sessions:
    """Session expiry, Heartbeat and LeaveGroup of the classic coordinator (a base of
    :class:`~groupspec.reference.classic.coordinator.GroupCoordinator`, whose state it reads and changes)."""

    if TYPE_CHECKING:  # what it uses of GroupCoordinator (and of its other base, JoinSyncPhase)
        faults: frozenset[str]
        _groups: dict[str, GroupMetadata]

        def _send(self, destination: Hashable, response: Response) -> None: ...
        def _cancel(self, key: TimerKey) -> None: ...
        def _group_status_error(self, group_id: str, empty_id_invalid: bool) -> Error | None: ...
        def _validate_member(self, group: GroupMetadata, member_id: str, instance_id: str | None) -> Error | None: ...
        def _remove_member(self, group: GroupMetadata, member_id: str) -> None: ...
        def _remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata) -> None: ...
        def _remove_pending_member_and_update_group(self, group: GroupMetadata, member_id: str) -> None: ...
        def _prepare_rebalance(self, group: GroupMetadata) -> None: ...
        def _maybe_prepare_rebalance(self, group: GroupMetadata) -> None: ...
        def _schedule_heartbeat(self, group: GroupMetadata, member: MemberMetadata,
                                timeout_ms: int | None = None) -> None: ...

    # ------------------------------------------------------------------ session and pending timers (§3.5, §3.9)

    def _on_expire_heartbeat(self, group: GroupMetadata, member_id: str) -> None:
        """[GC] ``onExpireHeartbeat`` (§3.5): remove unless the heartbeat is satisfied."""
        if group.is_(_D):
            return
        member = group.members.get(member_id)
        if member is None:
            return
        satisfied = not member.is_new and (member.join_waiter is not None or member.sync_waiter is not None)
        if not satisfied:
            self._remove_member_and_update_group(group, member)

    def _on_expire_pending(self, group: GroupMetadata, member_id: str) -> None:
        if group.is_(_D) or member_id not in group.pending:
            return
        self._remove_pending_member_and_update_group(group, member_id)

    def _on_expire_pending_sync(self, group: GroupMetadata, generation: int) -> None:
        """[GC] ``onExpirePendingSync`` (§3.9)."""
        if generation != group.generation or group.status not in (_CR, _ST) or not group.pending_sync:
            return
        for member_id in list(group.pending_sync):
            self._remove_member(group, member_id)
            self._cancel(("heartbeat", group.group_id, member_id))
        self._prepare_rebalance(group)

    # ------------------------------------------------------------------ Heartbeat (§2.4)

    def _handle_heartbeat(self, sender: Hashable, req: HeartbeatRequest) -> None:
        self._send(sender, _HEARTBEAT_RESPONSE[self._heartbeat_error(req)])

    def _heartbeat_error(self, req: HeartbeatRequest) -> Error:
        error = self._group_status_error(req.group_id, empty_id_invalid=True)
        if error is Error.COORDINATOR_LOAD_IN_PROGRESS:
            return Error.NONE
        if error is not None:
            return error
        group = self._groups.get(req.group_id)
        if group is None:
            return Error.UNKNOWN_MEMBER_ID
        # (group.status compared directly, not through group.is_: the most frequent request, three calls fewer)
        if group.status is _D:
            return Error.COORDINATOR_NOT_AVAILABLE
        error = self._validate_member(group, req.member_id, req.group_instance_id)
        if error is None and req.generation_id != group.generation:
            error = Error.ILLEGAL_GENERATION
        if error is not None:
            return error
        if group.status is _E:
            return Error.UNKNOWN_MEMBER_ID
        self._schedule_heartbeat(group, group.members[req.member_id])
        if group.status is _PR and "heartbeat_none_in_prepare" not in self.faults:
            return Error.REBALANCE_IN_PROGRESS
        return Error.NONE

    # ------------------------------------------------------------------ LeaveGroup (§2.5)

    def _handle_leave(self, sender: Hashable, req: LeaveGroupRequest) -> None:
        response = self._leave(req)
        if req.version < 3:
            error = response.error
            if error is Error.NONE:
                error = next((m.error for m in response.members if m.error is not Error.NONE), Error.NONE)
            response = LeaveGroupResponse(error)
        self._send(sender, response)

    def _leave(self, req: LeaveGroupRequest) -> LeaveGroupResponse:
        def result(identity: MemberIdentity, error: Error) -> LeaveMemberResponse:
            return LeaveMemberResponse(identity.member_id, identity.group_instance_id, error)

        error = self._group_status_error(req.group_id, empty_id_invalid=True)
        if error is not None:
            return LeaveGroupResponse(error)
        group = self._groups.get(req.group_id)
        if group is None:
            return LeaveGroupResponse(Error.NONE, tuple(result(m, Error.UNKNOWN_MEMBER_ID) for m in req.members))
        if group.is_(_D):
            return LeaveGroupResponse(Error.COORDINATOR_NOT_AVAILABLE)
        results = []
        for identity in req.members:
            results.append(result(identity, self._leave_one(group, identity)))
        return LeaveGroupResponse(Error.NONE, tuple(results))

    def _leave_one(self, group: GroupMetadata, identity: MemberIdentity) -> Error:
        if identity.member_id == "":
            current = group.static.get(identity.group_instance_id) if identity.group_instance_id is not None else None
            if current is None:
                return Error.UNKNOWN_MEMBER_ID
            self._remove_member_and_update_group(group, group.members[current])
            return Error.NONE
        if identity.member_id in group.pending:
            self._remove_pending_member_and_update_group(group, identity.member_id)
            if group.status in (_ST, _CR):
                # Kafka 4.3.1 (classicGroupLeaveToClassicGroup): a pending member that leaves counts as a member
                # that left, so a Stable or CompletingRebalance group rebalances (the Scala coordinator did not);
                # found by the Kafka oracle's differential run
                self._maybe_prepare_rebalance(group)
            return Error.NONE
        error = self._validate_member(group, identity.member_id, identity.group_instance_id)
        if error is not None:
            return error
        self._remove_member_and_update_group(group, group.members[identity.member_id])
        return Error.NONE
