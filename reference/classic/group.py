"""A classic group as the coordinator holds it: states and legal transitions, members, the log, views.

Theory of operation
-------------------
Kafka's ``GroupMetadata`` and ``MemberMetadata`` (the Scala coordinator) as mutable dataclasses
(:class:`GroupMetadata`, :class:`MemberMetadata`: the group's state, generation, protocol, leader, members,
static-member map, pending and pending-sync members, offsets), the legal-transition table of the group
states (``VALID_PREVIOUS_STATES``, §1.3 of docs/protocol.md), the records written to the
``__consumer_offsets`` log that outlive a coordinator (:class:`GroupMetadataLog`), and the frozen views a
driver inspects (:class:`GroupView`, :class:`MemberView`). Only the coordinator (``coordinator.py``,
``join_sync.py``, ``sessions.py``) changes a group; nothing here sends, schedules or reads a clock.
"""
from __future__ import annotations

import enum
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from ..errors import GroupspecProtocolError, IllegalStateTransition

__all__ = [
    "GroupStatus", "VALID_PREVIOUS_STATES", "MemberView", "GroupView", "MemberRecord", "GroupRecord",
    "GroupMetadataLog", "Waiter", "MemberMetadata", "GroupMetadata", "TimerKey", "Timer",
]

# ---------------------------------------------------------------------------------------------
# Group states and the legal-transition table (§1.3)
# ---------------------------------------------------------------------------------------------

class GroupStatus(enum.Enum):
    """Classic group states; the value is Kafka's state name."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


_E, _PR, _CR, _ST, _D = (GroupStatus.EMPTY, GroupStatus.PREPARING_REBALANCE,
                         GroupStatus.COMPLETING_REBALANCE, GroupStatus.STABLE, GroupStatus.DEAD)

#: target state -> the states it may be entered from (Kafka's ``validPreviousStates``).
VALID_PREVIOUS_STATES: dict[GroupStatus, frozenset[GroupStatus]] = {
    _PR: frozenset({_ST, _CR, _E}),
    _CR: frozenset({_PR}),
    _ST: frozenset({_CR}),
    _E: frozenset({_PR}),
    _D: frozenset({_ST, _PR, _CR, _E, _D}),
}


# ---------------------------------------------------------------------------------------------
# Inspection views
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemberView:
    member_id: str
    group_instance_id: str | None
    client_id: str
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]
    assignment: bytes
    session_timeout_ms: int
    rebalance_timeout_ms: int
    awaiting_join: bool
    awaiting_sync: bool
    is_new: bool


@dataclass(frozen=True)
class GroupView:
    """A read-only snapshot of one group, for tests and the conformance mapping to the model."""

    group_id: str
    status: GroupStatus
    generation: int
    protocol_type: str | None
    protocol_name: str | None
    leader: str | None
    members: tuple[MemberView, ...]
    pending: tuple[str, ...]
    pending_sync: tuple[str, ...]
    static: tuple[tuple[str, str], ...]
    offsets: tuple[tuple[str, int, int], ...]
    num_awaiting_join: int
    new_member_added: bool

    @property
    def member_ids(self) -> tuple[str, ...]:
        return tuple(m.member_id for m in self.members)

    @property
    def assignments(self) -> dict[str, bytes]:
        return {m.member_id: m.assignment for m in self.members}

    def member(self, member_id: str) -> MemberView:
        for m in self.members:
            if m.member_id == member_id:
                return m
        raise KeyError(member_id)




# ---------------------------------------------------------------------------------------------
# The log: what survives a coordinator (GroupMetadataManager.storeGroup / storeOffsets)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True, init=False)
class MemberRecord:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes

    # a group record holds one per member, written at every sync: an __init__ that writes the instance dict (the
    # frozen dataclass's sets each field through object.__setattr__, several times the cost)
    def __init__(self, member_id: str, group_instance_id: str | None, client_id: str, client_host: str,
                 rebalance_timeout_ms: int, session_timeout_ms: int, subscription: bytes, assignment: bytes) -> None:
        d = self.__dict__
        d["member_id"] = member_id
        d["group_instance_id"] = group_instance_id
        d["client_id"] = client_id
        d["client_host"] = client_host
        d["rebalance_timeout_ms"] = rebalance_timeout_ms
        d["session_timeout_ms"] = session_timeout_ms
        d["subscription"] = subscription
        d["assignment"] = assignment


@dataclass(frozen=True)
class GroupRecord:
    """The group-metadata record (``GroupMetadataManager.groupMetadataValue``)."""

    group_id: str
    protocol_type: str | None
    generation: int
    protocol_name: str | None
    leader: str | None
    members: tuple[MemberRecord, ...]


@dataclass
class GroupMetadataLog:
    """The ``__consumer_offsets`` contents that matter here: last group record and offsets per group."""

    groups: dict[str, GroupRecord] = field(default_factory=dict)
    offsets: dict[str, dict[tuple[str, int], int]] = field(default_factory=dict)
    writes: int = 0
    # NOTE(determinism): how many coordinators were started on this log. Each coordinator puts its
    # incarnation number into the member ids it generates, so ids stay unique across failovers
    # (Kafka uses random UUIDs). Not part of the protocol state.
    incarnations: int = 0

    def group_ids(self) -> list[str]:
        return sorted(set(self.groups) | set(self.offsets))


# ---------------------------------------------------------------------------------------------
# Mutable internals
# ---------------------------------------------------------------------------------------------

@dataclass
class Waiter:
    destination: Hashable
    version: int


@dataclass
class MemberMetadata:
    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]
    assignment: bytes = b""
    join_waiter: Waiter | None = None
    sync_waiter: Waiter | None = None
    is_new: bool = False

    def matches(self, protocols: tuple[tuple[str, bytes], ...]) -> bool:
        return self.protocols == protocols

    def metadata(self, protocol: str) -> bytes:
        for name, data in self.protocols:
            if name == protocol:
                return data
        raise GroupspecProtocolError(f"member {self.member_id} does not support protocol {protocol}")

    def vote(self, candidates: set[str]) -> str:
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise GroupspecProtocolError(f"member {self.member_id} supports none of {sorted(candidates)}")


@dataclass
class GroupMetadata:
    group_id: str
    status: GroupStatus = GroupStatus.EMPTY
    generation: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str | None = None
    members: dict[str, MemberMetadata] = field(default_factory=dict)
    static: dict[str, str] = field(default_factory=dict)
    pending: dict[str, None] = field(default_factory=dict)
    pending_sync: dict[str, None] = field(default_factory=dict)
    num_awaiting_join: int = 0
    new_member_added: bool = False
    previous_status: GroupStatus | None = None  # [GM] previousState (the initial-delay extension reads it)
    offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    # [GM] supportedProtocols: protocol name -> number of member protocol entries naming it
    protocol_counts: dict[str, int] = field(default_factory=dict)

    def view(self) -> GroupView:
        """A snapshot of the group (``GroupCoordinator.group``)."""
        members = tuple(
            MemberView(
                member_id=m.member_id, group_instance_id=m.instance_id, client_id=m.client_id,
                protocol_type=m.protocol_type, protocols=m.protocols, assignment=m.assignment,
                session_timeout_ms=m.session_timeout_ms, rebalance_timeout_ms=m.rebalance_timeout_ms,
                awaiting_join=m.join_waiter is not None, awaiting_sync=m.sync_waiter is not None, is_new=m.is_new,
            )
            for m in self.members.values()
        )
        return GroupView(
            group_id=self.group_id, status=self.status, generation=self.generation, protocol_type=self.protocol_type,
            protocol_name=self.protocol_name, leader=self.leader, members=members, pending=tuple(self.pending),
            pending_sync=tuple(self.pending_sync), static=tuple(sorted(self.static.items())),
            offsets=tuple(sorted((t, p, o) for (t, p), o in self.offsets.items())),
            num_awaiting_join=self.num_awaiting_join, new_member_added=self.new_member_added,
        )

    def count_protocols(self, member: "MemberMetadata", delta: int) -> None:
        """[GM] ``incSupportedProtocols`` / ``decSupportedProtocols``."""
        for name, _ in member.protocols:
            self.protocol_counts[name] = self.protocol_counts.get(name, 0) + delta

    def is_(self, status: GroupStatus) -> bool:
        return self.status is status

    def transition(self, target: GroupStatus) -> None:
        if self.status not in VALID_PREVIOUS_STATES[target]:
            raise IllegalStateTransition(self.status.value, target.value, self.group_id)
        self.previous_status, self.status = self.status, target

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def supported_count(self, protocol: str) -> int:
        return self.protocol_counts.get(protocol, 0)

    def supports_protocols(self, protocol_type: str, protocols: tuple[tuple[str, bytes], ...]) -> bool:
        """[GM] ``supportsProtocols`` (§2.2)."""
        if self.is_(_E):
            return protocol_type != "" and len(protocols) > 0
        n = len(self.members)
        return self.protocol_type == protocol_type and any(self.supported_count(p) == n for p, _ in protocols)

    def candidate_protocols(self) -> set[str]:
        n = len(self.members)
        return {p for p, count in self.protocol_counts.items() if count == n}

    def select_protocol(self) -> str:
        """[GM] ``selectProtocol``; NOTE(determinism): ties go to the leader's preferred protocol."""
        if not self.members:
            raise GroupspecProtocolError(f"cannot select a protocol for empty group {self.group_id}")
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for m in self.members.values():
            choice = m.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        best = max(votes.values())
        tied = {p for p, v in votes.items() if v == best}
        leader = self.members.get(self.leader) if self.leader is not None else None
        order = [n for n, _ in leader.protocols] if leader is not None else sorted(tied)
        for name in order:
            if name in tied:
                return name
        return sorted(tied)[0]

    def has_all_members_joined(self, forget_pending: bool) -> bool:
        return len(self.members) == self.num_awaiting_join and (forget_pending or not self.pending)


TimerKey = tuple[Any, ...]


@dataclass(slots=True)  # one made per heartbeat (a session re-armed): slots make it and its fields cheaper
class Timer:
    deadline: int
    seq: int
    payload: dict[str, Any]
