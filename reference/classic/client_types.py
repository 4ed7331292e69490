"""The classic client's values: its states, settings, commands, events, and the rules it shares.

Theory of operation
-------------------
What :class:`~groupspec.reference.classic.Consumer` (``client.py``, ``client_rebalance.py``) takes and gives:
its settings (:class:`ConsumerConfig`), the member states (:class:`MemberState`, Kafka's
``AbstractCoordinator.MemberState``), the generation it belongs to (:class:`Generation`), a request in
flight (:class:`InFlight`), what it asks the driver to send (:class:`Send`), what it observed
(:class:`MemberEvent`, in trace-format terms), the listener interface (:class:`RebalanceListener`,
``ConsumerRebalanceListener``), and the protocol rules that need no member: the rebalance protocol of a
set of assignors (§5.3), what a leader's assignor reads from a subscription (:func:`member_data`), and
``validateCooperativeAssignment``. Section numbers refer to coordinator.md §5 (docs/protocol.md).
"""
from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .consumer_protocol import Subscription, decode_cooperative_user_data, decode_sticky_user_data
from ..errors import Error
from .messages import Request

__all__ = [
    "EAGER", "COOPERATIVE", "FAULTS", "TP", "JOIN_GROUP_TIMEOUT_LAPSE_MS", "COORDINATOR_ERRORS", "FATAL_JOIN_ERRORS",
    "MemberState", "RebalanceListener", "ConsumerConfig", "Send", "MemberEvent", "Generation", "NO_GENERATION",
    "InFlight", "rebalance_protocol", "member_data", "validate_cooperative_assignment", "NullListener",
    "AssignorFactory", "MetadataSource",
]


EAGER = "eager"
COOPERATIVE = "cooperative"
_PROTOCOL_RANK = {EAGER: 0, COOPERATIVE: 1}

FAULTS = frozenset({"skip_revoke_before_join", "same_round_transfer", "ignore_owned", "no_rejoin_after_revoke"})

TP = tuple[str, int]

#: AbstractCoordinator.JOIN_GROUP_TIMEOUT_LAPSE
JOIN_GROUP_TIMEOUT_LAPSE_MS = 5000

# Errors that mean "the coordinator moved or is down": mark it unknown and rediscover (§5.2).
COORDINATOR_ERRORS = frozenset({Error.COORDINATOR_NOT_AVAILABLE, Error.NOT_COORDINATOR, Error.REQUEST_TIMED_OUT})
FATAL_JOIN_ERRORS = frozenset(
    {
        Error.FENCED_INSTANCE_ID,
        Error.INCONSISTENT_GROUP_PROTOCOL,
        Error.INVALID_SESSION_TIMEOUT,
        Error.INVALID_GROUP_ID,
        Error.GROUP_AUTHORIZATION_FAILED,
        Error.GROUP_MAX_SIZE_REACHED,
    }
)


class MemberState(enum.Enum):
    """``AbstractCoordinator.MemberState``."""

    UNJOINED = "UNJOINED"
    PREPARING_REBALANCE = "PREPARING_REBALANCE"
    COMPLETING_REBALANCE = "COMPLETING_REBALANCE"
    STABLE = "STABLE"


class RebalanceListener(Protocol):
    """``ConsumerRebalanceListener``."""

    def on_partitions_revoked(self, partitions: tuple[TP, ...]) -> None: ...
    def on_partitions_assigned(self, partitions: tuple[TP, ...]) -> None: ...
    def on_partitions_lost(self, partitions: tuple[TP, ...]) -> None: ...


@dataclass(frozen=True)
class ConsumerConfig:
    """The consumer settings the rebalance protocol depends on (Kafka's names, in ms)."""

    group_id: str = "g"
    client_id: str = "consumer"
    topics: tuple[str, ...] = ("t",)
    assignors: tuple[str, ...] = ("range", "cooperative-sticky")
    group_instance_id: str | None = None
    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 3000
    max_poll_interval_ms: int = 300000  # also the rebalance timeout sent in JoinGroup
    request_timeout_ms: int = 30000
    retry_backoff_ms: int = 100
    enable_auto_commit: bool = True
    auto_commit_interval_ms: int = 5000
    commit_on_revoke: bool = False
    rack_id: str | None = None
    join_group_version: int = 9
    leave_group_on_close: bool = True  # internal.leave.group.on.close


@dataclass(frozen=True)
class Send:
    """Send ``request`` to ``dest`` (``"coordinator"``: the member's coordinator; ``"any"``: any broker).

    ``corr`` is the correlation id; the response must come back to :meth:`Consumer.receive` with it.
    """

    dest: str
    request: Request
    corr: int


@dataclass(frozen=True)
class MemberEvent:
    """Something the member observed, in trace-format terms (docs/formats.md)."""

    ts_ms: int
    event: str  # joined | assigned | revoked | lost | left | fenced | commit
    generation: int
    member_id: str
    protocol: str
    partitions: tuple[Any, ...] = ()
    error: str | None = None
    accepted: bool | None = None


@dataclass(frozen=True)
class Generation:
    generation_id: int = -1
    member_id: str = ""
    protocol_name: str | None = None


NO_GENERATION = Generation()


@dataclass
class InFlight:
    kind: str  # find | join | sync | heartbeat | commit | leave
    request: Request
    generation: Generation
    deadline_ms: int
    purpose: str = ""  # commit: "auto" | "prepare" | "revoke"


def rebalance_protocol(supported: list[tuple[str, ...]]) -> str:
    """§5.3: the highest protocol supported by every configured assignor; ValueError if none."""
    if not supported:
        raise ValueError("no assignor configured")
    common = set(supported[0])
    for s in supported[1:]:
        common &= set(s)
    if not common:
        raise ValueError("the configured assignors have no rebalance protocol in common")
    return max(common, key=lambda p: _PROTOCOL_RANK[p])


def member_data(assignor: str, sub: Subscription) -> tuple[tuple[TP, ...], int]:
    """What the leader's assignor believes a member owned, and in which generation.

    ``StickyAssignor.memberData`` reads both from the user data (an eager member owns nothing when
    it joins); ``CooperativeStickyAssignor.memberData`` takes the subscription's owned partitions
    and its generation (v2+) or, for older subscriptions, the generation in the user data; the
    other assignors read the subscription's fields.
    """
    if assignor == "sticky":
        previous, generation = decode_sticky_user_data(sub.user_data)
        return previous, -1 if generation is None else generation
    if assignor == "cooperative-sticky" and sub.version < 2:
        g = decode_cooperative_user_data(sub.user_data)
        return tuple(sub.owned_partitions), -1 if g is None else g
    return tuple(sub.owned_partitions), sub.generation_id


def validate_cooperative_assignment(
    owned: Mapping[str, tuple[TP, ...]], assigned: Mapping[str, list[TP] | tuple[TP, ...]]
) -> list[TP]:
    """``ConsumerCoordinator.validateCooperativeAssignment``: partitions added to some member while
    still being revoked from another (i.e. moved directly). Empty list = valid."""
    added: set[TP] = set()
    revoked: set[TP] = set()
    for mid, asg in assigned.items():  # Kafka walks the assignor's output only
        own = set(owned.get(mid, ()))
        added |= set(asg) - own
        revoked |= own - set(asg)
    return sorted(added & revoked)


class NullListener:
    """Default listener: does nothing (events are recorded by the consumer itself)."""

    def on_partitions_revoked(self, partitions: tuple[TP, ...]) -> None:
        pass

    def on_partitions_assigned(self, partitions: tuple[TP, ...]) -> None:
        pass

    def on_partitions_lost(self, partitions: tuple[TP, ...]) -> None:
        pass


AssignorFactory = Callable[[str], Any]
MetadataSource = Callable[[], Mapping[str, int]]
