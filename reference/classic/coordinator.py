"""The reference group coordinator (broker side) of the classic rebalance protocol, sans-IO.

Theory of operation
-------------------
One ``GroupCoordinator`` is one broker's group coordinator: it hosts every group whose
``__consumer_offsets`` partition it owns (``partition_for``). It does no IO and reads no clock,
in the manner of h11: the driver hands it events and it returns what to send.

* ``handle(now_ms, event) -> list[Command]``: the one actor contract (``reference/actor.py``).
  ``Received(sender, request)``: time first advances to ``now_ms`` (timers that expire on the way fire in
  deadline order), then the request is processed; ``TimerFired(DEADLINE)``: only time passes. The
  commands: a ``Send(sender, response)`` per answer, then ``SetTimer(at_ms, DEADLINE)`` for the earliest
  pending deadline (none when no timer is pending). ``sender`` is an opaque, hashable connection id.
  The classic simulator (``reference/sim/simulator.py``) drives it so.
* ``handle(now_ms, sender, request) -> list[Outbound]``: the wire's entry point, kept for the drivers that
  answer on connections (``groupspec.serve``, the script replay ``reference/sim/replay_classic.py``, the
  benches): the same processing, every answer an ``Outbound(destination, response, at_ms)``.
* ``advance(now_ms) -> list[Outbound]``: only let time pass (the wire's entry point).
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

Files. This module is the coordinator's driving surface, its timers, its log and offsets; the group it
holds is ``group.py``; the join and sync phases are ``join_sync.py`` and the sessions (expiry, Heartbeat,
LeaveGroup) ``sessions.py``, two base classes of :class:`GroupCoordinator` that hold no state of their own.
"""
from __future__ import annotations

import functools
import heapq
import random
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, overload

from ..actor import Command, Event, Received, Send, SetTimer, TimerFired
from ..errors import Error, GroupspecProtocolError, map_store_error
from .messages import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    Request,
    Response,
    SyncGroupRequest,
    SyncGroupResponse,
)
from .group import (
    GroupMetadata,
    GroupMetadataLog,
    GroupRecord,
    GroupStatus,
    GroupView,
    MemberMetadata,
    MemberRecord,
    Timer,
    TimerKey,
)
from .join_sync import JoinSyncPhase
from .sessions import Sessions

__all__ = [
    "FAULTS", "CoordinatorConfig", "Outbound", "GroupCoordinator", "java_string_hash", "kafka_abs",
    "partition_for", "DEADLINE",
]

DEADLINE = "deadline"  # the key of the coordinator's one timer on the actor contract: its earliest deadline

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



_E, _PR, _CR, _ST, _D = (GroupStatus.EMPTY, GroupStatus.PREPARING_REBALANCE,
                         GroupStatus.COMPLETING_REBALANCE, GroupStatus.STABLE, GroupStatus.DEAD)

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
# Configuration and outputs
# ---------------------------------------------------------------------------------------------

#: The most ``offsets_partitions`` (``offsets.topic.num.partitions``) taken. Kafka's is an int >= 1 (default 50) with
#: no stated maximum; the coordinator holds the set of partitions it leads, ~70 bytes each (2**70 ran out of
#: memory), so 1,000,000 — 20,000 times Kafka's default, past any real cluster — costs at most ~70 MB.
MAX_OFFSETS_PARTITIONS = 1_000_000


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
        if not 1 <= self.offsets_partitions <= MAX_OFFSETS_PARTITIONS:
            raise ValueError(f"offsets_partitions must be from 1 to {MAX_OFFSETS_PARTITIONS:,}")
        seed = self.member_id_seed
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
            raise ValueError(f"member_id_seed must be an int >= 0 or None, got {seed!r}")
        if self.group_max_size is not None and (not isinstance(self.group_max_size, int) or self.group_max_size < 1):
            raise ValueError(f"group_max_size must be an int >= 1 or None, got {self.group_max_size!r}")

    @property
    def max_size(self) -> int:
        return INT_MAX if self.group_max_size is None else self.group_max_size


@dataclass(frozen=True, init=False)
class Outbound:
    """A response to send: to ``destination`` (the ``sender`` of the request), at virtual time ``at_ms``."""

    destination: Hashable
    response: Response
    at_ms: int

    def __init__(self, destination: Hashable, response: Response, at_ms: int) -> None:
        d = self.__dict__  # one per answer: the frozen __init__'s object.__setattr__ per field costs 3x this
        d["destination"] = destination
        d["response"] = response
        d["at_ms"] = at_ms



# ---------------------------------------------------------------------------------------------
# The coordinator
# ---------------------------------------------------------------------------------------------

class GroupCoordinator(JoinSyncPhase, Sessions):
    """A sans-IO classic group coordinator (one broker). See the module docstring."""

    config: CoordinatorConfig

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
        self._groups: dict[str, GroupMetadata] = {}
        self._owned: set[int] = set(range(self.config.offsets_partitions)) if owned_partitions is None else set(owned_partitions)
        self._loading: set[int] = set()
        self._timers: dict[TimerKey, Timer] = {}
        self._heap: list[tuple[int, int, TimerKey]] = []
        self._partition_of: dict[str, int] = {}  # group id -> its offsets partition (partition_of)
        self._seq = 0
        self._id_counter = 0
        seed = self.config.member_id_seed
        self._id_random = None if seed is None else random.Random(f"member-ids:{seed}:{self.incarnation}")
        self._out: list[tuple[Hashable, Response, int]] = []  # (destination, response, at_ms): Outbound or Send
        self._store_failure: Error | None = None
        # every member id this coordinator generated -> the connection it was generated for
        self.id_owner: dict[str, Hashable] = {}
        if owned_partitions is not None or self.log.groups or self.log.offsets:
            for p in sorted(self._owned):
                self._load_groups(p)

    # ------------------------------------------------------------------ public driving surface

    @overload
    def handle(self, now_ms: int, sender: Event) -> list[Command]: ...

    @overload
    def handle(self, now_ms: int, sender: Hashable, request: Request) -> list[Outbound]: ...

    def handle(self, now_ms: int, sender: Any, request: Request | None = None) -> list[Command] | list[Outbound]:
        """The actor contract ``handle(now_ms, event)``; with a third argument, the wire's entry point: advance to
        ``now_ms`` then process ``request`` from connection ``sender`` (module docstring)."""
        if request is not None:  # _handle_request, inlined: every request of a served group comes this way
            self._advance_to(now_ms)
            handler = self._HANDLERS.get(type(request))
            if handler is None:
                raise GroupspecProtocolError(f"not a group coordinator request: {type(request).__name__}")
            getattr(self, handler)(sender, request)
            return self._drain()
        event: Event = sender
        if type(event) is Received:
            self._handle(now_ms, event.sender, event.message)
        elif type(event) is TimerFired and event.key == DEADLINE:
            self._advance_to(now_ms)
        else:
            raise GroupspecProtocolError(f"not an event for a group coordinator: {event!r}")
        out, self._out = self._out, []  # the answers as Send commands (no Outbound made on this path)
        cmds: list[Command] = [Send(d, r) for d, r, _at in out] if out else []
        due = self._earliest_deadline()
        if due is not None:
            cmds.append(SetTimer(due, DEADLINE))
        return cmds

    def _earliest_deadline(self) -> int | None:
        """``next_deadline`` from the heap: stale entries at its top (cancelled or replaced timers) are dropped."""
        heap = self._heap
        while heap:
            deadline, seq, key = heap[0]
            timer = self._timers.get(key)
            if timer is not None and timer.seq == seq:
                return deadline
            heapq.heappop(heap)
        return None

    def _handle_request(self, now_ms: int, sender: Hashable, request: Request) -> list[Outbound]:
        self._handle(now_ms, sender, request)
        return self._drain()

    def _handle(self, now_ms: int, sender: Hashable, request: Request) -> None:
        self._advance_to(now_ms)
        handler = self._HANDLERS.get(type(request))
        if handler is None:
            raise GroupspecProtocolError(f"not a group coordinator request: {type(request).__name__}")
        getattr(self, handler)(sender, request)

    def advance(self, now_ms: int) -> list[Outbound]:
        """Let virtual time pass to ``now_ms``; expired timers fire in deadline order."""
        self._advance_to(now_ms)
        return self._drain()

    def next_deadline(self) -> int | None:
        """The earliest pending timer deadline, if any (drivers use it to jump time): the top of the heap once its
        stale entries are dropped, the least deadline of the live timers (asked on every tick of a server)."""
        return self._earliest_deadline()

    def fail_next_store(self, error: Error) -> None:
        """The next group-metadata write fails with ``error`` (e.g. NOT_ENOUGH_REPLICAS)."""
        self._store_failure = error

    def set_config(self, config: CoordinatorConfig) -> None:
        """Change broker configuration from now on (the partition count is fixed at creation)."""
        if config.offsets_partitions != self.config.offsets_partitions:
            raise GroupspecProtocolError("offsets_partitions cannot change on a running coordinator")
        self.config = config

    def partition_of(self, group_id: str) -> int:
        # asked by every request of a group: remembered per group id (the partition count never changes, set_config)
        partition = self._partition_of.get(group_id)
        if partition is None:
            partition = partition_for(group_id, self.config.offsets_partitions)
            if len(self._partition_of) >= 4096:
                self._partition_of.clear()
            self._partition_of[group_id] = partition
        return partition

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

    def restore_group(self, record: GroupRecord, status: GroupStatus | None = None) -> GroupView:
        """Hold ``record`` as loaded from ``__consumer_offsets`` (STABLE with members, else EMPTY); with ``status``
        PREPARING_REBALANCE start its join phase (``prepareRebalance``: done once every member rejoined), with
        COMPLETING_REBALANCE end it too (the generation kept), waiting for the leader's SyncGroup. ValueError (nothing
        held) for a group already held, an offsets partition not owned here, or a status the group cannot reach."""
        gid, loaded = record.group_id, (_ST if record.members else _E)
        if gid in self._groups or self.partition_of(gid) not in self._owned:
            raise ValueError(f"group {gid!r} is already held, or its offsets partition is not owned here")
        if status not in (None, loaded, _PR) + ((_CR,) if record.members else ()):
            raise ValueError(f"a group loaded {loaded.value} cannot be restored as {status}")
        self.log.groups[gid] = record
        group = self._load_group(gid)
        if status in (_PR, _CR) and not group.is_(_PR):  # (a group over group.max.size is preparing already)
            self._prepare_rebalance(group)
        if status is _CR:  # (as _complete_join leaves it, the generation aside)
            self._cancel(("join", gid))
            group.transition(_CR)
            group.pending_sync.update(dict.fromkeys(group.members))
            self._schedule(("sync", gid), group.rebalance_timeout_ms(), generation=group.generation)
        return self.group(gid)  # type: ignore[return-value]  # (held: just loaded)

    # ------------------------------------------------------------------ inspection

    def group_ids(self) -> list[str]:
        return list(self._groups)

    def has_group(self, group_id: str) -> bool:
        return group_id in self._groups

    def group(self, group_id: str) -> GroupView | None:
        """A snapshot of a group, or None if this coordinator holds no such group."""
        g = self._groups.get(group_id)
        return None if g is None else g.view()

    def group_outline(self, group_id: str) -> tuple[GroupStatus, int, str | None, str | None, tuple[str, ...]] | None:
        """What :meth:`group` says of a group's status, generation, protocol, leader and member ids (in that order),
        without building the views of its members (the simulator asks after every JoinGroup, SyncGroup and timer)."""
        g = self._groups.get(group_id)
        return None if g is None else (g.status, g.generation, g.protocol_name, g.leader, tuple(g.members))

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

    def _schedule(self, key: TimerKey, delay_ms: int, **payload: Any) -> None:
        self._seq += 1
        deadline = self.now_ms + delay_ms
        timers = self._timers
        timers[key] = Timer(deadline, self._seq, payload)
        heap = self._heap
        if len(heap) > 4 * len(timers) + 64:
            # every re-armed timer (a session, each heartbeat) leaves a stale entry: past four times the live ones
            # the heap is rebuilt from them, so it stays proportional to the timers (the same live entries, the
            # same firing order: (deadline, seq) is unique per entry); a rebuild every 3 re-arms per live timer
            # costs about a third of an entry's copy per re-arm
            heap[:] = [(t.deadline, t.seq, k) for k, t in timers.items()]
            heapq.heapify(heap)
        else:
            heapq.heappush(heap, (deadline, self._seq, key))

    def _cancel(self, key: TimerKey) -> None:
        self._timers.pop(key, None)

    def _cancel_group_timers(self, group_id: str) -> None:
        for key in [k for k in self._timers if k[1] == group_id]:
            del self._timers[key]

    def _fire(self, key: TimerKey, timer: Timer) -> None:
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
        return [Outbound(d, r, at) for d, r, at in out]

    def _send(self, destination: Hashable, response: Response) -> None:
        self._out.append((destination, response, self.now_ms))

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

    def _validate_member(self, group: GroupMetadata, member_id: str, instance_id: str | None) -> Error | None:
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


    # ------------------------------------------------------------------ persistence

    def _store_group(self, group: GroupMetadata, assignment: Mapping[str, bytes]) -> Error:
        """Write the group record ([GMMs] ``storeGroup``); returns the *mapped* error or NONE."""
        if self._store_failure is not None:
            failure, self._store_failure = self._store_failure, None
            return map_store_error(failure)
        name = group.protocol_name
        records = tuple([
            MemberRecord(m.member_id, m.instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                         m.session_timeout_ms, m.metadata(name) if name is not None else b"",
                         assignment.get(m.member_id, b""))
            for m in group.members.values()
        ])
        self.log.groups[group.group_id] = GroupRecord(group.group_id, group.protocol_type, group.generation,
                                                      name, group.leader, records)
        self.log.writes += 1
        return Error.NONE

    def _load_groups(self, partition: int) -> None:
        """[GC] ``onGroupLoaded`` for every group of the partition found in the log."""
        self._loading.discard(partition)
        for gid in self.log.group_ids():
            if self.partition_of(gid) == partition and gid not in self._groups:
                self._load_group(gid)

    def _load_group(self, gid: str) -> GroupMetadata:
        group = self._groups[gid] = self._group_from_log(gid)
        if len(group.members) > self.config.max_size:
            self._prepare_rebalance(group)
        for m in list(group.members.values()):
            self._schedule_heartbeat(group, m)
        return group

    def _group_from_log(self, gid: str) -> GroupMetadata:
        group = GroupMetadata(gid, offsets=dict(self.log.offsets.get(gid, {})))
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
            member = MemberMetadata(r.member_id, r.group_instance_id, r.client_id, r.client_host, r.rebalance_timeout_ms,
                             r.session_timeout_ms, record.protocol_type or "", protocols, assignment)
            group.members[r.member_id] = member
            group.count_protocols(member, +1)
            if r.group_instance_id is not None:
                group.static[r.group_instance_id] = r.member_id
        group.status = _ST if group.members else _E
        return group


    def _mark_dead(self, group: GroupMetadata) -> None:
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
            group = self._groups[req.group_id] = GroupMetadata(req.group_id)
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

    def _validate_commit(self, group: GroupMetadata, req: OffsetCommitRequest) -> Error | None:
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

    def _store_offsets(self, group: GroupMetadata, req: OffsetCommitRequest) -> None:
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

    #: request type -> the name of its handler (the join and sync phases are JoinSyncPhase's, Heartbeat and
    #: LeaveGroup Sessions', the rest this class's)
    _HANDLERS: dict[type, str] = {
        JoinGroupRequest: "_handle_join",
        SyncGroupRequest: "_handle_sync",
        HeartbeatRequest: "_handle_heartbeat",
        LeaveGroupRequest: "_handle_leave",
        OffsetCommitRequest: "_handle_commit",
        OffsetFetchRequest: "_handle_fetch",
        FindCoordinatorRequest: "_handle_find",
    }
