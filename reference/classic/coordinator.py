"""The reference group coordinator (broker side) of the classic rebalance protocol, sans-IO.

Theory of operation
-------------------
One ``GroupCoordinator`` is one broker's group coordinator: it hosts every group whose
``__consumer_offsets`` partition it owns (``partition_for``). It does no IO and reads no clock,
in the manner of h11: the driver hands it events and it returns what to send.

* ``handle(now_ms, sender, request) -> list[Outbound]``: time first advances to ``now_ms`` (timers
  that expire on the way fire in deadline order), then the request is processed. ``sender`` is an
  opaque, hashable connection id; every answer is an ``Outbound(destination, response, at_ms)``.
* ``advance(now_ms) -> list[Outbound]``: only let time pass.
* A JoinGroup or SyncGroup that must wait is *parked* on the member (its ``sender`` is kept) and
  answered in the output of a later call: when the join phase completes, when the leader's
  assignment is stored, or when the wait is cancelled (member removed, fenced, group rebalancing
  or unloaded).
* Failover: group records and committed offsets are written to a ``GroupMetadataLog`` (the
  ``__consumer_offsets`` partitions), which outlives a coordinator. ``unload_partition`` drops the
  in-memory groups (Kafka ``onGroupUnloaded``), ``load_partition`` (new leader of the partition)
  rebuilds them from the last persisted records (``onGroupLoaded``). ``fail_next_store`` makes the
  next group-record write fail.

Semantics are the Scala ``kafka.coordinator.group.GroupCoordinator`` of Kafka 3.x (2.7+, including
pending-sync KAFKA-12890 and skipAssignment KIP-814). The facts are in
``docs/protocol.md`` (coordinator §1-§4 and §7); section numbers below refer to it.
Version keyed behaviour: JoinGroup v4+ two-step join for dynamic members (KIP-394), v9+
``skip_assignment`` for a static leader rejoining a Stable group; SyncGroup v5+ protocol checks
(KIP-559, the fields are simply optional); LeaveGroup v0-2 collapse to one error.

Deterministic choices where Kafka leaves it to hash order (NOTE(determinism)):
* members are kept in insertion order (a re-keyed static member moves to the end, like Kafka's
  ``members.remove(old); members.put(new)``);
* a removed leader is replaced by the first remaining member (insertion order); at join
  completion a leader that did not rejoin is replaced by the first member that did;
* a tie in the protocol vote goes to the protocol the leader lists first;
* the leader's JoinGroup member list is in member insertion order;
* member ids are ``<client.id or group.instance.id>-<UUID>`` with a UUID built from the
  coordinator's incarnation on its log and a counter (``00000000-0000-0000-0000-000000000001``,
  ...; the second coordinator started on the same log generates ``...-0001-0000-...``), so ids
  never collide across failovers. With ``CoordinatorConfig.member_id_seed`` set, the UUID is a
  random version-4 UUID as Kafka's (``UUID.randomUUID()``), drawn from a generator seeded with
  the seed and the incarnation, so a recorded seed replays the same ids (``groupspec serve``
  draws a fresh seed per start and records it: ids cannot be guessed or repeat after a restart).

Writes to the log are synchronous (the append callback runs at once), so the Scala re-check
"still CompletingRebalance and same generation" after a store always holds.

Fault switches (``faults`` constructor argument, all off by default, used only by mutation tests):
``accept_stale_commit`` (OffsetCommit skips the generation check), ``no_static_fence`` (a replaced
static member id stays a member and is never fenced), ``no_generation_bump`` (join completion keeps
the generation), ``keep_missed_member`` (dynamic members that missed the rebalance timeout stay),
``forget_pending_member`` (pending member ids do not hold back join completion),
``lose_assignment_on_failover`` (loaded members have empty assignments),
``heartbeat_none_in_prepare`` (Heartbeat answers NONE in PreparingRebalance),
``double_count_rejoin`` (a member re-sending JoinGroup while parked is counted twice as joined).
"""
from __future__ import annotations

import enum
import functools
import heapq
import random
import uuid
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from ..errors import Error, GroupspecProtocolError, IllegalStateTransition, map_store_error
from .messages import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupMember,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    LeaveMemberResponse,
    MemberIdentity,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    Request,
    Response,
    SyncGroupRequest,
    SyncGroupResponse,
)

__all__ = [
    "GroupStatus",
    "VALID_PREVIOUS_STATES",
    "FAULTS",
    "CoordinatorConfig",
    "Outbound",
    "MemberView",
    "GroupView",
    "MemberRecord",
    "GroupRecord",
    "GroupMetadataLog",
    "GroupCoordinator",
    "java_string_hash",
    "kafka_abs",
    "partition_for",
]

INT_MAX = 2**31 - 1


# ---------------------------------------------------------------------------------------------
# FindCoordinator arithmetic (§7)
# ---------------------------------------------------------------------------------------------

def java_string_hash(s: str) -> int:
    """Java ``String.hashCode``: sum of UTF-16 code units times 31^k, 32-bit two's complement."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        unit = (data[i] << 8) | data[i + 1]
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - 2**32 if h >= 2**31 else h


def kafka_abs(n: int) -> int:
    """Kafka ``Utils.abs``: ``Integer.MIN_VALUE`` maps to 0, anything else to its absolute value."""
    return 0 if n == -(2**31) else abs(n)


def partition_for(group_id: str, partitions: int) -> int:
    """The ``__consumer_offsets`` partition of a group (``GroupMetadataManager.partitionFor``)."""
    if partitions <= 0:
        raise ValueError(f"offsets partition count must be > 0, got {partitions}")
    return _partition_for(group_id, partitions)


@functools.lru_cache(maxsize=4096)
def _partition_for(group_id: str, partitions: int) -> int:
    # every request of a group asks again (a heartbeat costs one): the hash is computed once per group
    return kafka_abs(java_string_hash(group_id)) % partitions


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

FAULTS: frozenset[str] = frozenset({
    "accept_stale_commit",
    "no_static_fence",
    "no_generation_bump",
    "keep_missed_member",
    "forget_pending_member",
    "lose_assignment_on_failover",
    "heartbeat_none_in_prepare",
    "double_count_rejoin",
})


# ---------------------------------------------------------------------------------------------
# Configuration, outputs, inspection views
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CoordinatorConfig:
    """Broker settings (defaults: ``GroupCoordinatorConfig``). ``group_max_size=None`` = unbounded."""

    initial_rebalance_delay_ms: int = 3000
    group_max_size: int | None = None
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1800000
    offsets_partitions: int = 50
    new_member_join_timeout_ms: int = 300000
    node_id: int = 0
    host: str = "localhost"
    port: int = 9092
    # None: member ids from a counter (readable, the default of scripts and the simulator); an int:
    # random UUIDs as Kafka's, drawn from a generator seeded with it (see the module docstring)
    member_id_seed: int | None = None

    def __post_init__(self) -> None:
        for name in ("initial_rebalance_delay_ms", "min_session_timeout_ms", "max_session_timeout_ms",
                     "offsets_partitions", "new_member_join_timeout_ms"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be an int >= 0, got {value!r}")
        if self.offsets_partitions < 1:
            raise ValueError("offsets_partitions must be >= 1")
        seed = self.member_id_seed
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
            raise ValueError(f"member_id_seed must be an int >= 0 or None, got {seed!r}")
        if self.group_max_size is not None and (not isinstance(self.group_max_size, int) or self.group_max_size < 1):
            raise ValueError(f"group_max_size must be an int >= 1 or None, got {self.group_max_size!r}")

    @property
    def max_size(self) -> int:
        return INT_MAX if self.group_max_size is None else self.group_max_size


@dataclass(frozen=True)
class Outbound:
    """A response to send: to ``destination`` (the ``sender`` of the request), at virtual time ``at_ms``."""

    destination: Hashable
    response: Response
    at_ms: int


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

@dataclass(frozen=True)
class MemberRecord:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


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
class _Waiter:
    destination: Hashable
    version: int


@dataclass
class _Member:
    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]
    assignment: bytes = b""
    join_waiter: _Waiter | None = None
    sync_waiter: _Waiter | None = None
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
class _Group:
    group_id: str
    status: GroupStatus = GroupStatus.EMPTY
    generation: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str | None = None
    members: dict[str, _Member] = field(default_factory=dict)
    static: dict[str, str] = field(default_factory=dict)
    pending: dict[str, None] = field(default_factory=dict)
    pending_sync: dict[str, None] = field(default_factory=dict)
    num_awaiting_join: int = 0
    new_member_added: bool = False
    offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    # [GM] supportedProtocols: protocol name -> number of member protocol entries naming it
    protocol_counts: dict[str, int] = field(default_factory=dict)

    def count_protocols(self, member: "_Member", delta: int) -> None:
        """[GM] ``incSupportedProtocols`` / ``decSupportedProtocols``."""
        for name, _ in member.protocols:
            self.protocol_counts[name] = self.protocol_counts.get(name, 0) + delta

    def is_(self, status: GroupStatus) -> bool:
        return self.status is status

    def transition(self, target: GroupStatus) -> None:
        if self.status not in VALID_PREVIOUS_STATES[target]:
            raise IllegalStateTransition(self.status.value, target.value, self.group_id)
        self.status = target

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


_TimerKey = tuple[Any, ...]


@dataclass
class _Timer:
    deadline: int
    seq: int
    payload: dict[str, Any]


# ---------------------------------------------------------------------------------------------
# The coordinator
# ---------------------------------------------------------------------------------------------

class GroupCoordinator:
    """A sans-IO classic group coordinator (one broker). See the module docstring."""

    def __init__(
        self,
        config: CoordinatorConfig | None = None,
        log: GroupMetadataLog | None = None,
        faults: Iterable[str] = frozenset(),
        owned_partitions: Iterable[int] | None = None,
        now_ms: int = 0,
    ) -> None:
        self.config = config or CoordinatorConfig()
        self.log = log if log is not None else GroupMetadataLog()
        self.faults = frozenset(faults)
        unknown = self.faults - FAULTS
        if unknown:
            raise ValueError(f"unknown fault switch(es) {sorted(unknown)}; known: {sorted(FAULTS)}")
        self.now_ms = now_ms
        self.active = True
        self.incarnation = self.log.incarnations
        self.log.incarnations += 1
        self._groups: dict[str, _Group] = {}
        self._owned: set[int] = set(range(self.config.offsets_partitions)) if owned_partitions is None else set(owned_partitions)
        self._loading: set[int] = set()
        self._timers: dict[_TimerKey, _Timer] = {}
        self._heap: list[tuple[int, int, _TimerKey]] = []
        self._seq = 0
        self._id_counter = 0
        seed = self.config.member_id_seed
        self._id_random = None if seed is None else random.Random(f"member-ids:{seed}:{self.incarnation}")
        self._out: list[Outbound] = []
        self._store_failure: Error | None = None
        # every member id this coordinator generated -> the connection it was generated for
        self.id_owner: dict[str, Hashable] = {}
        if owned_partitions is not None or self.log.groups or self.log.offsets:
            for p in sorted(self._owned):
                self._load_groups(p)

    # ------------------------------------------------------------------ public driving surface

    def handle(self, now_ms: int, sender: Hashable, request: Request) -> list[Outbound]:
        """Advance to ``now_ms`` then process ``request`` from connection ``sender``."""
        self._advance_to(now_ms)
        handler = self._HANDLERS.get(type(request))
        if handler is None:
            raise GroupspecProtocolError(f"not a group coordinator request: {type(request).__name__}")
        handler(self, sender, request)
        return self._drain()

    def advance(self, now_ms: int) -> list[Outbound]:
        """Let virtual time pass to ``now_ms``; expired timers fire in deadline order."""
        self._advance_to(now_ms)
        return self._drain()

    def next_deadline(self) -> int | None:
        """The earliest pending timer deadline, if any (drivers use it to jump time)."""
        return min((t.deadline for t in self._timers.values()), default=None)

    def fail_next_store(self, error: Error) -> None:
        """The next group-metadata write fails with ``error`` (e.g. NOT_ENOUGH_REPLICAS)."""
        self._store_failure = error

    def set_config(self, config: CoordinatorConfig) -> None:
        """Change broker configuration from now on (the partition count is fixed at creation)."""
        if config.offsets_partitions != self.config.offsets_partitions:
            raise GroupspecProtocolError("offsets_partitions cannot change on a running coordinator")
        self.config = config

    def partition_of(self, group_id: str) -> int:
        return partition_for(group_id, self.config.offsets_partitions)

    def unload_partition(self, partition: int, now_ms: int | None = None) -> list[Outbound]:
        """This broker loses leadership of an offsets partition ([GC] ``onGroupUnloaded``)."""
        if now_ms is not None:
            self._advance_to(now_ms)
        self._owned.discard(partition)
        self._loading.discard(partition)
        for gid in [g for g in self._groups if self.partition_of(g) == partition]:
            self._mark_dead(self._groups[gid])
            del self._groups[gid]
        return self._drain()

    def load_partition(self, partition: int, now_ms: int | None = None, complete: bool = True) -> list[Outbound]:
        """This broker becomes leader of an offsets partition; with ``complete`` the load finishes at once."""
        if now_ms is not None:
            self._advance_to(now_ms)
        for gid in [g for g in self._groups if self.partition_of(g) == partition]:
            self._cancel_group_timers(gid)
            del self._groups[gid]
        self._owned.add(partition)
        self._loading.add(partition)
        if complete:
            self._load_groups(partition)
        return self._drain()

    def finish_loading(self, partition: int, now_ms: int | None = None) -> list[Outbound]:
        """Complete a load started with ``load_partition(..., complete=False)``."""
        if now_ms is not None:
            self._advance_to(now_ms)
        if partition in self._loading:
            self._load_groups(partition)
        return self._drain()

    def unload_group(self, group_id: str, now_ms: int | None = None) -> list[Outbound]:
        return self.unload_partition(self.partition_of(group_id), now_ms)

    def load_group(self, group_id: str, now_ms: int | None = None, complete: bool = True) -> list[Outbound]:
        return self.load_partition(self.partition_of(group_id), now_ms, complete)

    def mark_dead(self, group_id: str, now_ms: int | None = None) -> list[Outbound]:
        """Mark a group Dead while requests still reach it.

        Models the window in which a request passed the ownership check just before the
        partition was unloaded (or DeleteGroups removed an Empty group): the group object is Dead
        and answers COORDINATOR_NOT_AVAILABLE. ``unload``/``load`` clear it.
        """
        if now_ms is not None:
            self._advance_to(now_ms)
        group = self._groups.get(group_id)
        if group is not None:
            self._mark_dead(group)
        return self._drain()

    # ------------------------------------------------------------------ inspection

    def group_ids(self) -> list[str]:
        return list(self._groups)

    def has_group(self, group_id: str) -> bool:
        return group_id in self._groups

    def group(self, group_id: str) -> GroupView | None:
        """A snapshot of a group, or None if this coordinator holds no such group."""
        g = self._groups.get(group_id)
        if g is None:
            return None
        members = tuple(
            MemberView(
                member_id=m.member_id, group_instance_id=m.instance_id, client_id=m.client_id,
                protocol_type=m.protocol_type, protocols=m.protocols, assignment=m.assignment,
                session_timeout_ms=m.session_timeout_ms, rebalance_timeout_ms=m.rebalance_timeout_ms,
                awaiting_join=m.join_waiter is not None, awaiting_sync=m.sync_waiter is not None, is_new=m.is_new,
            )
            for m in g.members.values()
        )
        return GroupView(
            group_id=g.group_id, status=g.status, generation=g.generation, protocol_type=g.protocol_type,
            protocol_name=g.protocol_name, leader=g.leader, members=members, pending=tuple(g.pending),
            pending_sync=tuple(g.pending_sync), static=tuple(sorted(g.static.items())),
            offsets=tuple(sorted((t, p, o) for (t, p), o in g.offsets.items())),
            num_awaiting_join=g.num_awaiting_join, new_member_added=g.new_member_added,
        )

    def timers(self) -> list[tuple[int, str, tuple[Any, ...]]]:
        """Pending timers as (deadline, kind, key), in firing order."""
        return [(t.deadline, k[0], k) for k, t in sorted(self._timers.items(), key=lambda kv: (kv[1].deadline, kv[1].seq))]

    # ------------------------------------------------------------------ time and timers

    def _advance_to(self, now_ms: int) -> None:
        if now_ms < self.now_ms:
            raise GroupspecProtocolError(f"time went backwards: {now_ms} < {self.now_ms}")
        # a heap with lazy deletion: an entry is live only while _timers still holds its seq
        while self._heap and self._heap[0][0] <= now_ms:
            deadline, seq, key = heapq.heappop(self._heap)
            timer = self._timers.get(key)
            if timer is None or timer.seq != seq:
                continue
            del self._timers[key]
            self.now_ms = deadline
            self._fire(key, timer)
        self.now_ms = now_ms

    def _schedule(self, key: _TimerKey, delay_ms: int, **payload: Any) -> None:
        self._seq += 1
        deadline = self.now_ms + delay_ms
        self._timers[key] = _Timer(deadline, self._seq, payload)
        heapq.heappush(self._heap, (deadline, self._seq, key))

    def _cancel(self, key: _TimerKey) -> None:
        self._timers.pop(key, None)

    def _cancel_group_timers(self, group_id: str) -> None:
        for key in [k for k in self._timers if k[1] == group_id]:
            del self._timers[key]

    def _fire(self, key: _TimerKey, timer: _Timer) -> None:
        kind, gid = key[0], key[1]
        group = self._groups.get(gid)
        if group is None:
            return
        if kind == "join":
            self._on_join_timer(group, timer.payload)
        elif kind == "heartbeat":
            self._on_expire_heartbeat(group, key[2])
        elif kind == "pending":
            self._on_expire_pending(group, key[2])
        elif kind == "sync":
            self._on_expire_pending_sync(group, timer.payload["generation"])
        else:  # pragma: no cover - keys are built only in this module
            raise GroupspecProtocolError(f"unknown timer kind {kind}")

    def _drain(self) -> list[Outbound]:
        out, self._out = self._out, []
        return out

    def _send(self, destination: Hashable, response: Response) -> None:
        self._out.append(Outbound(destination, response, self.now_ms))

    # ------------------------------------------------------------------ pre-checks (§2.0)

    def _group_status_error(self, group_id: str, empty_id_invalid: bool) -> Error | None:
        """[GC] ``validateGroupStatus``."""
        if empty_id_invalid and group_id == "":
            return Error.INVALID_GROUP_ID
        if not self.active:
            return Error.COORDINATOR_NOT_AVAILABLE
        partition = self.partition_of(group_id)
        if partition in self._loading:
            return Error.COORDINATOR_LOAD_IN_PROGRESS
        if partition not in self._owned:
            return Error.NOT_COORDINATOR
        return None

    def _validate_member(self, group: _Group, member_id: str, instance_id: str | None) -> Error | None:
        """[GC] ``validateCurrentMember`` (§2.0 member validation)."""
        if instance_id is not None:
            current = group.static.get(instance_id)
            if current is None:
                return Error.UNKNOWN_MEMBER_ID
            if current != member_id and "no_static_fence" not in self.faults:
                return Error.FENCED_INSTANCE_ID
        if member_id not in group.members:
            return Error.UNKNOWN_MEMBER_ID
        return None

    # ------------------------------------------------------------------ member bookkeeping

    def _new_member_id(self, prefix: str, sender: Hashable) -> str:
        self._id_counter += 1
        if self._id_random is None:
            member_id = f"{prefix}-{uuid.UUID(int=(self.incarnation << 64) | self._id_counter)}"
        else:  # Kafka: clientId + "-" + UUID.randomUUID()
            member_id = f"{prefix}-{uuid.UUID(int=self._id_random.getrandbits(128), version=4)}"
        self.id_owner[member_id] = sender
        return member_id

    def _set_join_waiter(self, group: _Group, member: _Member, waiter: _Waiter | None) -> None:
        if waiter is not None and (member.join_waiter is None or "double_count_rejoin" in self.faults):
            group.num_awaiting_join += 1
        elif waiter is None and member.join_waiter is not None:
            group.num_awaiting_join -= 1
        member.join_waiter = waiter

    def _answer_join(self, group: _Group, member: _Member, response: JoinGroupResponse) -> bool:
        """[GM] ``maybeInvokeJoinCallback``: answer a parked JoinGroup, if any."""
        waiter = member.join_waiter
        if waiter is None:
            return False
        self._set_join_waiter(group, member, None)
        self._send(waiter.destination, response)
        return True

    def _answer_sync(self, member: _Member, response: SyncGroupResponse) -> bool:
        """[GM] ``maybeInvokeSyncCallback``."""
        waiter = member.sync_waiter
        if waiter is None:
            return False
        member.sync_waiter = None
        self._send(waiter.destination, response)
        return True

    def _add_member(self, group: _Group, member: _Member) -> None:
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

    def _remove_member(self, group: _Group, member_id: str) -> None:
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

    def _schedule_heartbeat(self, group: _Group, member: _Member, timeout_ms: int | None = None) -> None:
        """[GC] ``completeAndScheduleNextExpiration``: (re)arm the member's session timer."""
        delay = member.session_timeout_ms if timeout_ms is None else timeout_ms
        self._schedule(("heartbeat", group.group_id, member.member_id), delay)

    def _join_response(self, group: _Group, member_id: str, *, members: bool,
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

    # ------------------------------------------------------------------ persistence

    def _store_group(self, group: _Group, assignment: Mapping[str, bytes]) -> Error:
        """Write the group record ([GMMs] ``storeGroup``); returns the *mapped* error or NONE."""
        if self._store_failure is not None:
            failure, self._store_failure = self._store_failure, None
            return map_store_error(failure)
        name = group.protocol_name
        records = tuple(
            MemberRecord(m.member_id, m.instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                         m.session_timeout_ms, m.metadata(name) if name is not None else b"",
                         assignment.get(m.member_id, b""))
            for m in group.members.values()
        )
        self.log.groups[group.group_id] = GroupRecord(group.group_id, group.protocol_type, group.generation,
                                                      name, group.leader, records)
        self.log.writes += 1
        return Error.NONE

    def _load_groups(self, partition: int) -> None:
        """[GC] ``onGroupLoaded`` for every group of the partition found in the log."""
        self._loading.discard(partition)
        for gid in self.log.group_ids():
            if self.partition_of(gid) != partition or gid in self._groups:
                continue
            group = self._group_from_log(gid)
            self._groups[gid] = group
            if len(group.members) > self.config.max_size:
                self._prepare_rebalance(group)
            for m in list(group.members.values()):
                self._schedule_heartbeat(group, m)

    def _group_from_log(self, gid: str) -> _Group:
        group = _Group(gid, offsets=dict(self.log.offsets.get(gid, {})))
        record = self.log.groups.get(gid)
        if record is None:
            return group
        group.generation = record.generation
        group.protocol_type = record.protocol_type
        group.protocol_name = record.protocol_name
        group.leader = record.leader
        for r in record.members:
            protocols = ((record.protocol_name, r.subscription),) if record.protocol_name is not None else ()
            assignment = b"" if "lose_assignment_on_failover" in self.faults else r.assignment
            member = _Member(r.member_id, r.group_instance_id, r.client_id, r.client_host, r.rebalance_timeout_ms,
                             r.session_timeout_ms, record.protocol_type or "", protocols, assignment)
            group.members[r.member_id] = member
            group.count_protocols(member, +1)
            if r.group_instance_id is not None:
                group.static[r.group_instance_id] = r.member_id
        group.status = _ST if group.members else _E
        return group

    # ------------------------------------------------------------------ rebalance machinery

    def _maybe_prepare_rebalance(self, group: _Group) -> None:
        if group.status in VALID_PREVIOUS_STATES[_PR]:
            self._prepare_rebalance(group)

    def _prepare_rebalance(self, group: _Group) -> None:
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

    def _try_complete_join(self, group: _Group) -> None:
        """``joinPurgatory.checkAndComplete``: complete a (non-initial) join phase once all joined."""
        if not group.is_(_PR):
            return
        timer = self._timers.get(("join", group.group_id))
        if timer is None or timer.payload.get("initial"):
            return
        if group.has_all_members_joined("forget_pending_member" in self.faults):
            self._cancel(("join", group.group_id))
            self._complete_join(group)

    def _on_join_timer(self, group: _Group, payload: dict[str, Any]) -> None:
        """Expiry of ``DelayedJoin`` / ``InitialDelayedJoin`` ([DJ])."""
        if payload.get("initial") and group.new_member_added and payload["remaining"] != 0:
            group.new_member_added = False
            delay = min(self.config.initial_rebalance_delay_ms, payload["remaining"])
            remaining = max(payload["remaining"] - payload["delay"], 0)
            self._schedule(("join", group.group_id), delay, initial=True, delay=delay, remaining=remaining)
            return
        self._complete_join(group)

    def _complete_join(self, group: _Group) -> None:
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

    def _maybe_elect_new_joined_leader(self, group: _Group) -> bool:
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

    def _init_next_generation(self, group: _Group) -> None:
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

    def _reset_and_propagate_assignment_error(self, group: _Group, error: Error) -> None:
        """[GC] ``resetAndPropagateAssignmentError``: clear assignments, answer parked syncs with ``error``."""
        if not group.is_(_CR):
            raise GroupspecProtocolError(f"group {group.group_id} must be CompletingRebalance, is {group.status.value}")
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: _Group, error: Error) -> None:
        ptype, pname = (group.protocol_type, group.protocol_name) if error is Error.NONE else (None, None)
        for member in list(group.members.values()):
            response = SyncGroupResponse(error, member.assignment, ptype, pname)
            if self._answer_sync(member, response):
                self._schedule_heartbeat(group, member)

    def _remove_sync_expiration(self, group: _Group) -> None:
        group.pending_sync.clear()
        self._cancel(("sync", group.group_id))

    def _remove_member_and_update_group(self, group: _Group, member: _Member) -> None:
        """[GC] ``removeMemberAndUpdateGroup`` (§2.5)."""
        self._answer_join(group, member, JoinGroupResponse(Error.UNKNOWN_MEMBER_ID, member_id=""))
        self._remove_member(group, member.member_id)
        self._cancel(("heartbeat", group.group_id, member.member_id))
        if group.status in (_ST, _CR):
            self._maybe_prepare_rebalance(group)
        elif group.is_(_PR):
            self._try_complete_join(group)

    def _remove_pending_member_and_update_group(self, group: _Group, member_id: str) -> None:
        self._remove_member(group, member_id)
        self._cancel(("pending", group.group_id, member_id))
        if group.is_(_PR):
            self._try_complete_join(group)

    def _on_expire_heartbeat(self, group: _Group, member_id: str) -> None:
        """[GC] ``onExpireHeartbeat`` (§3.5): remove unless the heartbeat is satisfied."""
        if group.is_(_D):
            return
        member = group.members.get(member_id)
        if member is None:
            return
        satisfied = not member.is_new and (member.join_waiter is not None or member.sync_waiter is not None)
        if not satisfied:
            self._remove_member_and_update_group(group, member)

    def _on_expire_pending(self, group: _Group, member_id: str) -> None:
        if group.is_(_D) or member_id not in group.pending:
            return
        self._remove_pending_member_and_update_group(group, member_id)

    def _on_expire_pending_sync(self, group: _Group, generation: int) -> None:
        """[GC] ``onExpirePendingSync`` (§3.9)."""
        if generation != group.generation or group.status not in (_CR, _ST) or not group.pending_sync:
            return
        for member_id in list(group.pending_sync):
            self._remove_member(group, member_id)
            self._cancel(("heartbeat", group.group_id, member_id))
        self._prepare_rebalance(group)

    def _mark_dead(self, group: _Group) -> None:
        """[GC] ``onGroupUnloaded``: parked requests answered NOT_COORDINATOR; group Dead."""
        previous = group.status
        group.transition(_D)
        if previous is _PR:
            for member in list(group.members.values()):
                self._answer_join(group, member, JoinGroupResponse(Error.NOT_COORDINATOR, member_id=member.member_id))
        elif previous in (_ST, _CR):
            for member in list(group.members.values()):
                self._answer_sync(member, SyncGroupResponse(Error.NOT_COORDINATOR))
        group.pending_sync.clear()
        self._cancel_group_timers(group.group_id)

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
            group = self._groups[req.group_id] = _Group(req.group_id)
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

    def _accept_joining_member(self, group: _Group, member_id: str) -> bool:
        """[GC] ``acceptJoiningMember`` (§2.2)."""
        max_size = self.config.max_size
        if group.status in (_E, _D):
            return True
        member = group.members.get(member_id)
        if group.is_(_PR):
            return (member is not None and member.join_waiter is not None) or group.num_awaiting_join < max_size
        return member is not None or len(group.members) < max_size

    def _join_new_member(self, group: _Group, sender: Hashable, req: JoinGroupRequest) -> None:
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

    def _join_current_member(self, group: _Group, sender: Hashable, req: JoinGroupRequest) -> None:
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
        waiter = _Waiter(sender, req.version)
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

    def _add_member_and_rebalance(self, group: _Group, sender: Hashable, req: JoinGroupRequest, member_id: str) -> None:
        """[GC] ``addMemberAndRebalance`` (§3.6, §3.7)."""
        member = _Member(member_id, req.group_instance_id, req.client_id, req.client_host, req.rebalance_timeout_ms,
                         req.session_timeout_ms, req.protocol_type, req.protocols, is_new=True,
                         join_waiter=_Waiter(sender, req.version))
        if group.is_(_PR) and group.generation == 0:
            group.new_member_added = True
        self._cancel(("pending", group.group_id, member_id))
        self._add_member(group, member)
        self._schedule_heartbeat(group, member, self.config.new_member_join_timeout_ms)
        self._maybe_prepare_rebalance(group)

    def _update_member(self, group: _Group, member: _Member, protocols: tuple[tuple[str, bytes], ...],
                       rebalance_timeout_ms: int, session_timeout_ms: int, waiter: _Waiter | None) -> None:
        """[GM] ``updateMember``."""
        group.count_protocols(member, -1)
        member.protocols = protocols
        group.count_protocols(member, +1)
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        self._set_join_waiter(group, member, waiter)

    def _update_member_and_rebalance(self, group: _Group, member: _Member, req: JoinGroupRequest, waiter: _Waiter) -> None:
        self._update_member(group, member, req.protocols, req.rebalance_timeout_ms, req.session_timeout_ms, waiter)
        self._maybe_prepare_rebalance(group)

    def _replace_static_member(self, group: _Group, instance_id: str, old_id: str, new_id: str) -> _Member:
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

    def _send_fenced(self, group: _Group, member: _Member, old_id: str) -> None:
        if member.join_waiter is not None:
            waiter = member.join_waiter
            self._set_join_waiter(group, member, None)
            self._send(waiter.destination, JoinGroupResponse(Error.FENCED_INSTANCE_ID, member_id=old_id))
        self._answer_sync(member, SyncGroupResponse(Error.FENCED_INSTANCE_ID))

    def _update_static_member_and_rebalance(self, group: _Group, sender: Hashable, req: JoinGroupRequest,
                                            old_id: str, new_id: str) -> None:
        """[GC] ``updateStaticMemberAndRebalance`` (§4)."""
        assert req.group_instance_id is not None
        instance_id = req.group_instance_id
        current_leader = group.leader
        member = self._replace_static_member(group, instance_id, old_id, new_id)
        self._cancel(("heartbeat", group.group_id, old_id))
        self._schedule_heartbeat(group, member)
        old_timeouts = (member.rebalance_timeout_ms, member.session_timeout_ms)
        waiter = _Waiter(sender, req.version)
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

    def _static_rejoin_stable(self, group: _Group, member: _Member, instance_id: str, old_id: str,
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
            member.sync_waiter = _Waiter(sender, req.version)
            group.pending_sync.pop(req.member_id, None)
            if req.member_id == group.leader:
                self._leader_sync(group, req.assignment_map())
        elif group.is_(_ST):
            group.pending_sync.pop(req.member_id, None)
            member = group.members[req.member_id]
            self._send(sender, SyncGroupResponse(Error.NONE, member.assignment, group.protocol_type, group.protocol_name))
            self._schedule_heartbeat(group, member)
        else:  # pragma: no cover - Dead is caught by validation
            raise GroupspecProtocolError(f"SyncGroup reached Dead group {group.group_id}")

    def _validate_sync(self, group: _Group, req: SyncGroupRequest) -> Error | None:
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

    def _leader_sync(self, group: _Group, assignments: dict[str, bytes]) -> None:
        full = dict(assignments)
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

    # ------------------------------------------------------------------ Heartbeat (§2.4)

    def _handle_heartbeat(self, sender: Hashable, req: HeartbeatRequest) -> None:
        self._send(sender, HeartbeatResponse(self._heartbeat_error(req)))

    def _heartbeat_error(self, req: HeartbeatRequest) -> Error:
        error = self._group_status_error(req.group_id, empty_id_invalid=True)
        if error is Error.COORDINATOR_LOAD_IN_PROGRESS:
            return Error.NONE
        if error is not None:
            return error
        group = self._groups.get(req.group_id)
        if group is None:
            return Error.UNKNOWN_MEMBER_ID
        if group.is_(_D):
            return Error.COORDINATOR_NOT_AVAILABLE
        error = self._validate_member(group, req.member_id, req.group_instance_id)
        if error is None and req.generation_id != group.generation:
            error = Error.ILLEGAL_GENERATION
        if error is not None:
            return error
        if group.is_(_E):
            return Error.UNKNOWN_MEMBER_ID
        self._schedule_heartbeat(group, group.members[req.member_id])
        if group.is_(_PR) and "heartbeat_none_in_prepare" not in self.faults:
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

    def _leave_one(self, group: _Group, identity: MemberIdentity) -> Error:
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

    # ------------------------------------------------------------------ offsets (§2.6)

    def _handle_commit(self, sender: Hashable, req: OffsetCommitRequest) -> None:
        def reply(error: Error) -> None:
            self._send(sender, OffsetCommitResponse(tuple((t, p, error) for t, p, _ in req.offsets)))

        error = self._group_status_error(req.group_id, empty_id_invalid=False)
        if error is not None:
            reply(error)
            return
        group = self._groups.get(req.group_id)
        if group is None:
            if req.generation_id >= 0:
                reply(Error.ILLEGAL_GENERATION)
                return
            group = self._groups[req.group_id] = _Group(req.group_id)
        error = self._validate_commit(group, req)
        if error is not None:
            reply(error)
        elif group.is_(_E):
            self._store_offsets(group, req)
            reply(Error.NONE)
        elif group.status in (_ST, _PR):
            self._schedule_heartbeat(group, group.members[req.member_id])
            self._store_offsets(group, req)
            reply(Error.NONE)
        elif group.is_(_CR):
            reply(Error.REBALANCE_IN_PROGRESS)
        else:  # pragma: no cover - Dead is caught by validation
            raise GroupspecProtocolError(f"OffsetCommit reached Dead group {group.group_id}")

    def _validate_commit(self, group: _Group, req: OffsetCommitRequest) -> Error | None:
        if group.is_(_D):
            return Error.COORDINATOR_NOT_AVAILABLE
        if req.generation_id < 0 and group.is_(_E):
            return None  # admin tools / manual assignment: accepted whatever member id they carry
        if req.generation_id >= 0 or req.member_id != "" or req.group_instance_id is not None:
            error = self._validate_member(group, req.member_id, req.group_instance_id)
            if error is not None:
                return error
            if req.generation_id != group.generation and "accept_stale_commit" not in self.faults:
                return Error.ILLEGAL_GENERATION
            return None
        return Error.UNKNOWN_MEMBER_ID  # generation -1 from outside a non-Empty group

    def _store_offsets(self, group: _Group, req: OffsetCommitRequest) -> None:
        for topic, partition, offset in req.offsets:
            group.offsets[(topic, partition)] = offset
        self.log.offsets.setdefault(group.group_id, {}).update(((t, p), o) for t, p, o in req.offsets)
        self.log.writes += 1

    def _handle_fetch(self, sender: Hashable, req: OffsetFetchRequest) -> None:
        error = self._group_status_error(req.group_id, empty_id_invalid=False)
        if error is not None:
            self._send(sender, OffsetFetchResponse(error))
            return
        group = self._groups.get(req.group_id)
        committed = group.offsets if group is not None and not group.is_(_D) else {}
        wanted = sorted(committed) if req.partitions is None else list(req.partitions)
        offsets = tuple((t, p, committed.get((t, p), -1), Error.NONE) for t, p in wanted)
        self._send(sender, OffsetFetchResponse(Error.NONE, offsets))

    # ------------------------------------------------------------------ FindCoordinator (§7)

    def _handle_find(self, sender: Hashable, req: FindCoordinatorRequest) -> None:
        partition = self.partition_of(req.key)
        if not self.active or partition not in self._owned:
            self._send(sender, FindCoordinatorResponse(Error.COORDINATOR_NOT_AVAILABLE, partition=partition))
            return
        c = self.config
        self._send(sender, FindCoordinatorResponse(Error.NONE, c.node_id, c.host, c.port, partition))

    _HANDLERS: dict[type, Callable[["GroupCoordinator", Hashable, Any], None]] = {
        JoinGroupRequest: _handle_join,
        SyncGroupRequest: _handle_sync,
        HeartbeatRequest: _handle_heartbeat,
        LeaveGroupRequest: _handle_leave,
        OffsetCommitRequest: _handle_commit,
        OffsetFetchRequest: _handle_fetch,
        FindCoordinatorRequest: _handle_find,
    }

