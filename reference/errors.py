"""Kafka protocol error codes used by the classic group protocol, plus the reference's own exceptions.

Theory of operation
-------------------
Kafka answers every request with an error *code* (a value in the response, never an exception).
``Error`` lists the codes the classic group coordinator and the consumer client can meet, under
Kafka's exact names and numeric codes (``org.apache.kafka.common.protocol.Errors``), so a
transcript or a trace can be compared with a real broker's answers by name.

Protocol *misuse* inside the reference implementation (an illegal group-state transition, a
message built with bad field types) is not a Kafka error code: it raises a typed exception from
this module, in the spirit of h11's ``LocalProtocolError``.

Write-error mapping (``GroupMetadataManager.appendGroupMetadataErrorToResponseError`` in the
Java coordinator, and the Scala ``GroupMetadataManager`` store callback): a failed write of the
group-metadata record is reported to clients as a coordinator error, see ``map_store_error``.
"""
from __future__ import annotations

import enum

__all__ = [
    "ScriptError",
    "Error",
    "RETRIABLE",
    "map_store_error",
    "GroupspecProtocolError",
    "IllegalStateTransition",
    "InvalidMessage",
]


class Error(enum.Enum):
    """Kafka error codes (name and number exactly as ``org.apache.kafka.common.protocol.Errors``)."""

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    OFFSET_OUT_OF_RANGE = 1
    CORRUPT_MESSAGE = 2
    UNKNOWN_TOPIC_OR_PARTITION = 3
    INVALID_FETCH_SIZE = 4
    LEADER_NOT_AVAILABLE = 5
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    MESSAGE_TOO_LARGE = 10
    OFFSET_METADATA_TOO_LARGE = 12
    NETWORK_EXCEPTION = 13
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    INVALID_COMMIT_OFFSET_SIZE = 28
    TOPIC_AUTHORIZATION_FAILED = 29
    GROUP_AUTHORIZATION_FAILED = 30
    UNSUPPORTED_VERSION = 35
    INVALID_REQUEST = 42
    KAFKA_STORAGE_ERROR = 56
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    MEMBER_ID_REQUIRED = 79
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    UNSTABLE_OFFSET_COMMIT = 88
    # The next-generation consumer protocol (KIP-848): ConsumerGroupHeartbeat and its offset commits.
    FENCED_MEMBER_EPOCH = 110
    UNRELEASED_INSTANCE_ID = 111
    UNSUPPORTED_ASSIGNOR = 112
    STALE_MEMBER_EPOCH = 113

    @property
    def code(self) -> int:
        """Kafka's numeric error code."""
        return int(self.value)

    @classmethod
    def from_name(cls, name: str) -> "Error":
        """Look an error up by Kafka's name; raises ``KeyError`` naming the unknown name."""
        try:
            return cls[name]
        except KeyError:
            raise KeyError(f"unknown Kafka error name {name!r}") from None


#: Errors whose Kafka exception is a ``RetriableException`` (the client retries after them).
RETRIABLE: frozenset[Error] = frozenset(
    {
        Error.CORRUPT_MESSAGE,
        Error.UNKNOWN_TOPIC_OR_PARTITION,
        Error.LEADER_NOT_AVAILABLE,
        Error.NOT_LEADER_OR_FOLLOWER,
        Error.REQUEST_TIMED_OUT,
        Error.NETWORK_EXCEPTION,
        Error.COORDINATOR_LOAD_IN_PROGRESS,
        Error.COORDINATOR_NOT_AVAILABLE,
        Error.NOT_COORDINATOR,
        Error.NOT_ENOUGH_REPLICAS,
        Error.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        Error.KAFKA_STORAGE_ERROR,
        Error.UNSTABLE_OFFSET_COMMIT,
    }
)

_STORE_ERROR_MAP: dict[Error, Error] = {
    Error.UNKNOWN_TOPIC_OR_PARTITION: Error.COORDINATOR_NOT_AVAILABLE,
    Error.NOT_ENOUGH_REPLICAS: Error.COORDINATOR_NOT_AVAILABLE,
    Error.NOT_ENOUGH_REPLICAS_AFTER_APPEND: Error.COORDINATOR_NOT_AVAILABLE,
    Error.REQUEST_TIMED_OUT: Error.COORDINATOR_NOT_AVAILABLE,
    Error.NOT_LEADER_OR_FOLLOWER: Error.NOT_COORDINATOR,
    Error.KAFKA_STORAGE_ERROR: Error.NOT_COORDINATOR,
    Error.MESSAGE_TOO_LARGE: Error.UNKNOWN_SERVER_ERROR,
    Error.RECORD_LIST_TOO_LARGE: Error.UNKNOWN_SERVER_ERROR,
    Error.INVALID_FETCH_SIZE: Error.UNKNOWN_SERVER_ERROR,
}


def map_store_error(error: Error) -> Error:
    """The error a client sees when the group-metadata write failed with ``error``.

    Kafka: ``appendGroupMetadataErrorToResponseError`` ([GMM]) and the Scala store callback.
    Errors outside the table pass through unchanged.
    """
    return _STORE_ERROR_MAP.get(error, error)


class GroupspecProtocolError(Exception):
    """Misuse of the reference implementation (a bug in the caller or in the reference itself)."""


class IllegalStateTransition(GroupspecProtocolError):
    """A group-state transition not in the legal-transition table; the message names both states."""

    def __init__(self, source: str, target: str, group_id: str = "") -> None:
        where = f" (group {group_id!r})" if group_id else ""
        super().__init__(f"illegal group state transition {source} -> {target}{where}")
        self.source = source
        self.target = target


class InvalidMessage(GroupspecProtocolError, ValueError):
    """A request or response built with a field of the wrong type or value."""


class ScriptError(Exception):
    """A malformed coordinator script (classic or ConsumerGroupHeartbeat steps); ``str()`` is one line
    naming the line number."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
