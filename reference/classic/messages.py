"""Classic consumer-group protocol messages: frozen, validated requests and responses.

Theory of operation
-------------------
These are the wire messages of the *classic* group protocol (JoinGroup, SyncGroup, Heartbeat,
LeaveGroup, OffsetCommit, OffsetFetch, FindCoordinator) as plain frozen dataclasses, with the
fields Kafka's request/response schemas carry (``clients/src/main/resources/common/message/
*Request.json`` / ``*Response.json``) that matter to the rebalance protocol. They carry no IO and
no encoding: the coordinator (``reference.classic.coordinator``) and the consumer client consume and
produce them directly; a transport would encode them.

Conventions
~~~~~~~~~~~
* Metadata (``ConsumerProtocolSubscription``) and assignment (``ConsumerProtocolAssignment``)
  payloads are **opaque bytes** to the coordinator; only clients and assignors decode them.
* Ordered collections are tuples, so every message is hashable and comparable:
  ``protocols`` is a tuple of ``(name, metadata bytes)`` pairs in the member's preference order;
  ``assignments`` is a tuple of ``(member_id, assignment bytes)`` pairs (a ``Mapping`` is accepted
  when building and normalised to pairs in its iteration order; ``assignment_map()`` gives a dict).
* ``generation_id`` is ``-1`` for "no generation" (``Generation.NO_GENERATION`` in the client).
* ``group_instance_id`` is ``None`` for a dynamic member (KIP-345).
* Every message has a ``version`` defaulting to the newest version this project implements
  (``*_VERSION`` constants). Versions select behaviour the broker keys on: JoinGroup v4+ gets the
  MEMBER_ID_REQUIRED two-step join (KIP-394), JoinGroup v9+ the ``skip_assignment`` flag (KIP-814),
  SyncGroup v5+ the protocol type/name check (KIP-559), LeaveGroup v3+ batches (KIP-345).
* Messages are validated when built (types, non-negative timeouts, ...); a bad field raises
  ``reference.errors.InvalidMessage`` naming the field. Kafka error *codes* are values
  (``reference.errors.Error``) in responses, never exceptions.

The set of fields only grows (other modules build on it): fields are added with defaults, never
renamed or removed.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Union

from ..errors import Error, InvalidMessage

__all__ = [
    "JOIN_GROUP_VERSION",
    "SYNC_GROUP_VERSION",
    "HEARTBEAT_VERSION",
    "LEAVE_GROUP_VERSION",
    "OFFSET_COMMIT_VERSION",
    "OFFSET_FETCH_VERSION",
    "FIND_COORDINATOR_VERSION",
    "NO_GENERATION",
    "UNKNOWN_MEMBER",
    "JoinGroupRequest",
    "JoinGroupMember",
    "JoinGroupResponse",
    "SyncGroupRequest",
    "SyncGroupResponse",
    "HeartbeatRequest",
    "HeartbeatResponse",
    "MemberIdentity",
    "LeaveGroupRequest",
    "LeaveMemberResponse",
    "LeaveGroupResponse",
    "OffsetCommitRequest",
    "OffsetCommitResponse",
    "OffsetFetchRequest",
    "OffsetFetchResponse",
    "FindCoordinatorRequest",
    "FindCoordinatorResponse",
    "Request",
    "Response",
    "request_name",
]

# Newest versions the project implements (Kafka 3.x brokers with the classic protocol).
JOIN_GROUP_VERSION = 9
SYNC_GROUP_VERSION = 5
HEARTBEAT_VERSION = 4
LEAVE_GROUP_VERSION = 5
OFFSET_COMMIT_VERSION = 8
OFFSET_FETCH_VERSION = 8
FIND_COORDINATOR_VERSION = 4

#: ``Generation.NO_GENERATION.generationId`` / ``JoinGroupRequest.UNKNOWN_GENERATION_ID``.
NO_GENERATION = -1
#: ``JoinGroupRequest.UNKNOWN_MEMBER_ID``: the empty member id of a member that has none yet.
UNKNOWN_MEMBER = ""


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------

def _check(cond: bool, msg: str, obj: object) -> None:
    if not cond:
        raise InvalidMessage(f"{type(obj).__name__}: {msg}")


# (the messages are built on the simulator's hot path: the error text is formatted only on failure)
def _str(obj: object, name: str, value: Any) -> None:
    if not isinstance(value, str):
        _check(False, f"{name} must be a str, got {type(value).__name__}", obj)


def _opt_str(obj: object, name: str, value: Any) -> None:
    if not (value is None or isinstance(value, str)):
        _check(False, f"{name} must be a str or None, got {type(value).__name__}", obj)


def _int(obj: object, name: str, value: Any) -> None:
    if type(value) is not int and (not isinstance(value, int) or isinstance(value, bool)):
        _check(False, f"{name} must be an int, got {type(value).__name__}", obj)


def _nonneg(obj: object, name: str, value: Any) -> None:
    _int(obj, name, value)
    if not value >= 0:
        _check(False, f"{name} must be >= 0, got {value}", obj)


def _error(obj: object, name: str, value: Any) -> None:
    if not isinstance(value, Error):
        _check(False, f"{name} must be an Error, got {type(value).__name__}", obj)


def _pairs(obj: object, name: str, value: Any) -> tuple[tuple[str, bytes], ...]:
    """Normalise a mapping or iterable of (str, bytes) pairs into a tuple of pairs."""
    if type(value) is tuple:  # already a tuple of (str, bytes) tuples (a leader's SyncGroup: one per member): kept
        for item in value:
            if type(item) is not tuple or len(item) != 2 or type(item[0]) is not str or type(item[1]) is not bytes:
                break
        else:
            return value
    items: Iterable[Any] = value.items() if isinstance(value, Mapping) else value
    _check(not isinstance(value, (str, bytes)), f"{name} must be pairs of (str, bytes)", obj)
    out: list[tuple[str, bytes]] = []
    for item in items:
        _check(isinstance(item, (tuple, list)) and len(item) == 2, f"{name} entries must be (str, bytes) pairs", obj)
        key, data = item
        _check(isinstance(key, str), f"{name} keys must be str, got {type(key).__name__}", obj)
        _check(isinstance(data, (bytes, bytearray)), f"{name} values must be bytes, got {type(data).__name__}", obj)
        out.append((key, bytes(data)))
    return tuple(out)


def _set(obj: object, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)


# --------------------------------------------------------------------------------------------
# JoinGroup
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class JoinGroupRequest:
    """JoinGroup (API key 11). ``protocols``: ordered (assignor name, subscription bytes) pairs."""

    group_id: str
    member_id: str
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]
    session_timeout_ms: int = 45000
    rebalance_timeout_ms: int = 300000
    group_instance_id: str | None = None
    version: int = JOIN_GROUP_VERSION
    client_id: str = "consumer"
    client_host: str = "/127.0.0.1"
    reason: str | None = None

    def __post_init__(self) -> None:
        _str(self, "group_id", self.group_id)
        _str(self, "member_id", self.member_id)
        _str(self, "protocol_type", self.protocol_type)
        _set(self, "protocols", _pairs(self, "protocols", self.protocols))
        _int(self, "session_timeout_ms", self.session_timeout_ms)
        _int(self, "rebalance_timeout_ms", self.rebalance_timeout_ms)
        _opt_str(self, "group_instance_id", self.group_instance_id)
        _nonneg(self, "version", self.version)
        _str(self, "client_id", self.client_id)
        _str(self, "client_host", self.client_host)
        _opt_str(self, "reason", self.reason)

    @property
    def protocol_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.protocols)


@dataclass(frozen=True)
class JoinGroupMember:
    """One entry of the leader's JoinGroup member list: id, instance id, metadata for the chosen protocol."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes

    def __post_init__(self) -> None:
        _str(self, "member_id", self.member_id)
        _opt_str(self, "group_instance_id", self.group_instance_id)
        _check(isinstance(self.metadata, (bytes, bytearray)), "metadata must be bytes", self)
        _set(self, "metadata", bytes(self.metadata))


@dataclass(frozen=True)
class JoinGroupResponse:
    """JoinGroup answer. ``members`` is non-empty only in the leader's answer."""

    error: Error
    generation_id: int = NO_GENERATION
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    member_id: str = ""
    members: tuple[JoinGroupMember, ...] = ()
    skip_assignment: bool = False
    throttle_time_ms: int = 0

    def __post_init__(self) -> None:
        _error(self, "error", self.error)
        _int(self, "generation_id", self.generation_id)
        _opt_str(self, "protocol_type", self.protocol_type)
        _opt_str(self, "protocol_name", self.protocol_name)
        _str(self, "leader", self.leader)
        _str(self, "member_id", self.member_id)
        _set(self, "members", tuple(self.members))
        _check(all(isinstance(m, JoinGroupMember) for m in self.members), "members must be JoinGroupMember", self)
        _check(isinstance(self.skip_assignment, bool), "skip_assignment must be a bool", self)

    @property
    def is_leader(self) -> bool:
        return self.error is Error.NONE and self.member_id != "" and self.leader == self.member_id


# --------------------------------------------------------------------------------------------
# SyncGroup
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SyncGroupRequest:
    """SyncGroup (API key 14). The leader sends ``assignments`` (member id -> assignment bytes)."""

    group_id: str
    member_id: str
    generation_id: int
    assignments: tuple[tuple[str, bytes], ...] = ()
    group_instance_id: str | None = None
    protocol_type: str | None = None
    protocol_name: str | None = None
    version: int = SYNC_GROUP_VERSION

    def __post_init__(self) -> None:
        _str(self, "group_id", self.group_id)
        _str(self, "member_id", self.member_id)
        _int(self, "generation_id", self.generation_id)
        _set(self, "assignments", _pairs(self, "assignments", self.assignments))
        _opt_str(self, "group_instance_id", self.group_instance_id)
        _opt_str(self, "protocol_type", self.protocol_type)
        _opt_str(self, "protocol_name", self.protocol_name)
        _nonneg(self, "version", self.version)

    def assignment_map(self) -> dict[str, bytes]:
        return dict(self.assignments)


@dataclass(frozen=True, init=False)
class SyncGroupResponse:
    error: Error
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None
    throttle_time_ms: int = 0

    # a round's completion makes one per member: an __init__ that writes the instance dict (as HeartbeatRequest's),
    # and the common case checked in one test, else each field's check
    def __init__(self, error: Error, assignment: bytes = b"", protocol_type: str | None = None,
                 protocol_name: str | None = None, throttle_time_ms: int = 0) -> None:
        d = self.__dict__
        d["error"] = error
        d["assignment"] = assignment
        d["protocol_type"] = protocol_type
        d["protocol_name"] = protocol_name
        d["throttle_time_ms"] = throttle_time_ms
        if (type(error) is Error and type(assignment) is bytes and (protocol_type is None or type(protocol_type) is str)
                and (protocol_name is None or type(protocol_name) is str)):
            return
        self.__post_init__()

    def __post_init__(self) -> None:
        _error(self, "error", self.error)
        _check(isinstance(self.assignment, (bytes, bytearray)), "assignment must be bytes", self)
        _set(self, "assignment", bytes(self.assignment))
        _opt_str(self, "protocol_type", self.protocol_type)
        _opt_str(self, "protocol_name", self.protocol_name)


# --------------------------------------------------------------------------------------------
# Heartbeat
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True, init=False)
class HeartbeatRequest:
    group_id: str
    member_id: str
    generation_id: int
    group_instance_id: str | None = None
    version: int = HEARTBEAT_VERSION

    # The most frequent message of a run: an __init__ that writes the instance dict (the frozen dataclass's
    # sets each field through object.__setattr__, several times the cost), then the same checks.
    def __init__(self, group_id: str, member_id: str, generation_id: int, group_instance_id: str | None = None,
                 version: int = HEARTBEAT_VERSION) -> None:
        d = self.__dict__
        d["group_id"] = group_id
        d["member_id"] = member_id
        d["generation_id"] = generation_id
        d["group_instance_id"] = group_instance_id
        d["version"] = version
        self.__post_init__()

    def __post_init__(self) -> None:
        # the common case in one test (a heartbeat is the most frequent request); else each field's check
        if (type(self.group_id) is str and type(self.member_id) is str and type(self.generation_id) is int
                and (self.group_instance_id is None or type(self.group_instance_id) is str)
                and type(self.version) is int and self.version >= 0):
            return
        _str(self, "group_id", self.group_id)
        _str(self, "member_id", self.member_id)
        _int(self, "generation_id", self.generation_id)
        _opt_str(self, "group_instance_id", self.group_instance_id)
        _nonneg(self, "version", self.version)


@dataclass(frozen=True, init=False)
class HeartbeatResponse:
    error: Error
    throttle_time_ms: int = 0

    def __init__(self, error: Error, throttle_time_ms: int = 0) -> None:  # as HeartbeatRequest's
        d = self.__dict__
        d["error"] = error
        d["throttle_time_ms"] = throttle_time_ms
        self.__post_init__()

    def __post_init__(self) -> None:
        if type(self.error) is not Error:
            _error(self, "error", self.error)


# --------------------------------------------------------------------------------------------
# LeaveGroup
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MemberIdentity:
    """One member of a (v3+ batch) LeaveGroup. ``member_id == ""`` with an instance id = admin removal."""

    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        _str(self, "member_id", self.member_id)
        _opt_str(self, "group_instance_id", self.group_instance_id)
        _opt_str(self, "reason", self.reason)


@dataclass(frozen=True)
class LeaveGroupRequest:
    """LeaveGroup (API key 13). v0-2 carry exactly one member (its id); v3+ a batch."""

    group_id: str
    members: tuple[MemberIdentity, ...]
    version: int = LEAVE_GROUP_VERSION

    def __post_init__(self) -> None:
        _str(self, "group_id", self.group_id)
        _set(self, "members", tuple(self.members))
        _check(all(isinstance(m, MemberIdentity) for m in self.members), "members must be MemberIdentity", self)
        _nonneg(self, "version", self.version)
        if self.version < 3:
            _check(len(self.members) == 1, "LeaveGroup v0-2 carries exactly one member", self)
            _check(self.members[0].group_instance_id is None, "LeaveGroup v0-2 has no instance id", self)


@dataclass(frozen=True)
class LeaveMemberResponse:
    member_id: str
    group_instance_id: str | None
    error: Error

    def __post_init__(self) -> None:
        _str(self, "member_id", self.member_id)
        _opt_str(self, "group_instance_id", self.group_instance_id)
        _error(self, "error", self.error)


@dataclass(frozen=True)
class LeaveGroupResponse:
    """``error`` is the top-level error; ``members`` the per-member results (v3+).

    For v0-2 Kafka collapses the result into one error (``LeaveGroupResponse`` constructor):
    the top-level error if not NONE, else the first non-NONE member error; the coordinator
    builds v0-2 answers that way, with an empty member list.
    """

    error: Error
    members: tuple[LeaveMemberResponse, ...] = ()
    throttle_time_ms: int = 0

    def __post_init__(self) -> None:
        _error(self, "error", self.error)
        _set(self, "members", tuple(self.members))
        _check(all(isinstance(m, LeaveMemberResponse) for m in self.members), "members must be LeaveMemberResponse", self)


# --------------------------------------------------------------------------------------------
# OffsetCommit / OffsetFetch
# --------------------------------------------------------------------------------------------

def _triples(obj: object, name: str, value: Any) -> tuple[tuple[str, int, int], ...]:
    out: list[tuple[str, int, int]] = []
    for item in value:
        if type(item) is tuple and len(item) == 3:  # the common case, checked without the messages
            topic, partition, offset = item
            if type(topic) is str and type(partition) is int and partition >= 0 and type(offset) is int:
                out.append(item)
                continue
        _check(isinstance(item, (tuple, list)) and len(item) == 3, f"{name} entries must be (topic, partition, offset)", obj)
        topic, partition, offset = item
        _check(isinstance(topic, str), f"{name} topic must be a str", obj)
        _check(isinstance(partition, int) and not isinstance(partition, bool) and partition >= 0,
               f"{name} partition must be an int >= 0", obj)
        _check(isinstance(offset, int) and not isinstance(offset, bool), f"{name} offset must be an int", obj)
        out.append((topic, partition, offset))
    return tuple(out)


@dataclass(frozen=True)
class OffsetCommitRequest:
    """OffsetCommit (API key 8). ``offsets``: (topic, partition, committed offset) triples.

    ``generation_id == -1`` with ``member_id == ""`` is a commit from outside the group (admin
    tools, manually assigned consumers).
    """

    group_id: str
    offsets: tuple[tuple[str, int, int], ...]
    member_id: str = ""
    generation_id: int = NO_GENERATION
    group_instance_id: str | None = None
    version: int = OFFSET_COMMIT_VERSION

    def __post_init__(self) -> None:
        _str(self, "group_id", self.group_id)
        _set(self, "offsets", _triples(self, "offsets", self.offsets))
        _str(self, "member_id", self.member_id)
        _int(self, "generation_id", self.generation_id)
        _opt_str(self, "group_instance_id", self.group_instance_id)
        _nonneg(self, "version", self.version)


@dataclass(frozen=True)
class OffsetCommitResponse:
    """Per-partition results ``(topic, partition, error)``; Kafka has no top-level error here."""

    partitions: tuple[tuple[str, int, Error], ...]
    throttle_time_ms: int = 0

    def __post_init__(self) -> None:
        _set(self, "partitions", tuple(tuple(p) for p in self.partitions))
        for p in self.partitions:
            _check(len(p) == 3 and isinstance(p[2], Error), "partitions entries must be (topic, partition, Error)", self)

    @property
    def error(self) -> Error:
        """One error for the whole commit: the first non-NONE partition error, else NONE."""
        for _, _, err in self.partitions:
            if err is not Error.NONE:
                return err
        return Error.NONE


@dataclass(frozen=True)
class OffsetFetchRequest:
    """OffsetFetch (API key 9). ``partitions is None`` asks for every committed offset of the group."""

    group_id: str
    partitions: tuple[tuple[str, int], ...] | None = None
    require_stable: bool = False
    version: int = OFFSET_FETCH_VERSION

    def __post_init__(self) -> None:
        _str(self, "group_id", self.group_id)
        if self.partitions is not None:
            parts = tuple((t, p) for t, p in self.partitions)
            for t, p in parts:
                _check(isinstance(t, str) and isinstance(p, int) and p >= 0, "partitions must be (topic, partition)", self)
            _set(self, "partitions", parts)
        _nonneg(self, "version", self.version)


@dataclass(frozen=True)
class OffsetFetchResponse:
    """``offsets``: (topic, partition, offset, error); offset -1 means nothing committed."""

    error: Error
    offsets: tuple[tuple[str, int, int, Error], ...] = ()
    throttle_time_ms: int = 0

    def __post_init__(self) -> None:
        _error(self, "error", self.error)
        _set(self, "offsets", tuple(tuple(o) for o in self.offsets))

    def offset_map(self) -> dict[tuple[str, int], int]:
        return {(t, p): off for t, p, off, _ in self.offsets}


# --------------------------------------------------------------------------------------------
# FindCoordinator
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FindCoordinatorRequest:
    """FindCoordinator (API key 10) for a group (``key_type`` 0)."""

    key: str
    key_type: int = 0
    version: int = FIND_COORDINATOR_VERSION

    def __post_init__(self) -> None:
        _str(self, "key", self.key)
        _check(self.key_type == 0, "only group coordinators (key_type 0) are modelled", self)
        _nonneg(self, "version", self.version)


@dataclass(frozen=True)
class FindCoordinatorResponse:
    """``partition`` (the ``__consumer_offsets`` partition) is an addition for tests; Kafka sends only the node."""

    error: Error
    node_id: int = -1
    host: str = ""
    port: int = -1
    partition: int = -1
    throttle_time_ms: int = 0

    def __post_init__(self) -> None:
        _error(self, "error", self.error)
        _int(self, "node_id", self.node_id)
        _str(self, "host", self.host)
        _int(self, "port", self.port)
        _int(self, "partition", self.partition)


Request = Union[
    JoinGroupRequest,
    SyncGroupRequest,
    HeartbeatRequest,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    FindCoordinatorRequest,
]
Response = Union[
    JoinGroupResponse,
    SyncGroupResponse,
    HeartbeatResponse,
    LeaveGroupResponse,
    OffsetCommitResponse,
    OffsetFetchResponse,
    FindCoordinatorResponse,
]

_NAMES: dict[type, str] = {
    JoinGroupRequest: "JoinGroup",
    JoinGroupResponse: "JoinGroup",
    SyncGroupRequest: "SyncGroup",
    SyncGroupResponse: "SyncGroup",
    HeartbeatRequest: "Heartbeat",
    HeartbeatResponse: "Heartbeat",
    LeaveGroupRequest: "LeaveGroup",
    LeaveGroupResponse: "LeaveGroup",
    OffsetCommitRequest: "OffsetCommit",
    OffsetCommitResponse: "OffsetCommit",
    OffsetFetchRequest: "OffsetFetch",
    OffsetFetchResponse: "OffsetFetch",
    FindCoordinatorRequest: "FindCoordinator",
    FindCoordinatorResponse: "FindCoordinator",
}


def request_name(message: Request | Response) -> str:
    """Kafka's API name of a request or response (``"JoinGroup"``, ...)."""
    try:
        return _NAMES[type(message)]
    except KeyError:
        raise InvalidMessage(f"not a group protocol message: {type(message).__name__}") from None
