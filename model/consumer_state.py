"""The vocabulary of the KIP-848 page (:mod:`groupspec.model.consumer`): the member state, the state records
and what the page reads of a state. Read the page first; this module only names things (the page names them
too: import them from it)."""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Protocol

from .core import Proc, evolvable

if TYPE_CHECKING:
    # a TypeVar with a default (PEP 696) for the checker only: at run time ``S`` is a plain TypeVar (Python 3.11's
    # typing.TypeVar takes no default), so the KIP-848 page needs no typing_extensions to run
    from typing_extensions import TypeVar
else:
    from typing import TypeVar

__all__ = ["NOT_MEMBER", "Answer", "MemberState", "Member", "ConsumerClient", "ConsumerGroup", "ConsumerState",
           "KIP848State", "S"]

NOT_MEMBER = -1  # a client that is not in the group (not started, left)

# A heartbeat answer: ``(OK, epoch, assignment)`` or ``(error,)`` (Consumer.handle)
Answer = tuple[Any, ...]


class KIP848State(Protocol):
    """What the KIP-848 page reads of a state: its own ``ConsumerState`` and the migration page's
    ``MigrationState`` (which replaces it, with a classic group beside the consumer group) both have it."""

    @property
    def group(self) -> ConsumerGroup: ...
    @property
    def clients(self) -> tuple[ConsumerClient, ...]: ...
    @property
    def budget(self) -> int: ...


class MemberState(IntEnum):
    """The coordinator's state of one member (Kafka ``MemberState``)."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1  # must acknowledge revoking ``revoking`` before it gets its new epoch
    UNRELEASED_PARTITIONS = 2  # at the target epoch, waiting for partitions other members still hold


@evolvable
@dataclass(frozen=True, slots=True)
class Member:
    """The coordinator's record of one member (Kafka ``ConsumerGroupMember``)."""

    state: MemberState = MemberState.STABLE
    epoch: int = 0
    previous_epoch: int = 0
    assigned: int = 0  # partitions the member may own now (bit mask)
    revoking: int = 0  # partitions pending revocation: still the member's until it acknowledges
    topics: int = 0  # subscription (bit mask of topics; a regex resolved by the broker)
    static: bool = False
    left: bool = False  # a static member that left with epoch -2: kept until its session times out
    since: tuple[int, ...] = ()  # the assignment epoch of each partition held (0: not held); in-flight faults only

    if TYPE_CHECKING:  # the copy evolvable generates (keyword per field)
        def but(self, *, state: MemberState = ..., epoch: int = ..., previous_epoch: int = ..., assigned: int = ...,
                revoking: int = ..., topics: int = ..., static: bool = ..., left: bool = ...,
                since: tuple[int, ...] = ...) -> Member: ...


@evolvable
@dataclass(frozen=True, slots=True)
class ConsumerClient:
    """One consumer process and its membership manager."""

    proc: Proc = Proc.DOWN
    epoch: int = NOT_MEMBER  # 0: joining; > 0: the member epoch of its last answer
    owned: int = 0  # partitions it owns: it processes and commits them
    assigned: int = 0  # the assignment of its last answer: what reconciliation moves towards
    topics: int = 0
    answer: Answer | None = None  # a heartbeat answer on its way (late-answer): (OK, epoch, assignment)
    commit: tuple[int, int] | None = None  # an OffsetCommit on its way (late-commit): (epoch, partitions)

    if TYPE_CHECKING:  # the copy evolvable generates (keyword per field)
        def but(self, *, proc: Proc = ..., epoch: int = ..., owned: int = ..., assigned: int = ..., topics: int = ...,
                answer: Answer | None = ..., commit: tuple[int, int] | None = ...) -> ConsumerClient: ...


@evolvable
@dataclass(frozen=True, slots=True)
class ConsumerGroup:
    epoch: int = 0  # the group epoch
    target_epoch: int = 0  # the assignment epoch
    target: tuple[int, ...] = ()  # the target assignment, one mask per slot
    members: tuple[Member | None, ...] = ()
    partitions: int = 0  # partitions that exist

    if TYPE_CHECKING:  # the copy evolvable generates (keyword per field)
        def but(self, *, epoch: int = ..., target_epoch: int = ..., target: tuple[int, ...] = ...,
                members: tuple[Member | None, ...] = ..., partitions: int = ...) -> ConsumerGroup: ...


@evolvable
@dataclass(frozen=True, slots=True)
class ConsumerState:
    group: ConsumerGroup
    clients: tuple[ConsumerClient, ...]
    budget: int = 0

    if TYPE_CHECKING:  # the copy evolvable generates (keyword per field)
        def but(self, *, group: ConsumerGroup = ..., clients: tuple[ConsumerClient, ...] = ...,
                budget: int = ...) -> ConsumerState: ...


if TYPE_CHECKING:
    S = TypeVar("S", bound=KIP848State, default=ConsumerState)
else:
    S = TypeVar("S")
