"""The vocabulary of the migration page (:mod:`groupspec.model.migration`): the group's type, a classic
client's phase, the state records and the steps. Read the page first; this module only names things."""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

from . import actions as A
from .consumer import ConsumerClient, ConsumerGroup, Member
from .core import GroupStatus, evolvable

if TYPE_CHECKING:
    from .consumer import MemberState
    from .core import Proc

__all__ = ["Kind", "Phase", "Client", "MMember", "ClassicGroup", "MigrationState", "JoinGroup", "SyncGroup",
           "ClassicHeartbeat", "Upgrade", "Downgrade"]

class Kind(IntEnum):
    """The group's type at the coordinator."""

    CLASSIC = 0
    CONSUMER = 1


class Phase(IntEnum):
    """A classic client's member state (its ``AbstractCoordinator`` state, as the model needs it)."""

    STABLE = 0  # synced: heartbeats
    JOIN = 1  # must send JoinGroup (rejoin requested, or a new process)
    WAIT = 2  # its JoinGroup is parked in a classic group's join phase
    SYNC = 3  # has its JoinGroup answer (generation = ``epoch``), sends SyncGroup


@evolvable
@dataclass(frozen=True, slots=True)
class Client(ConsumerClient):
    """One consumer process; ``classic`` says which protocol it speaks. For a classic client ``epoch``
    is the generation of its last JoinGroup answer (-1: none) and ``assigned`` is unused."""

    classic: bool = False
    phase: Phase = Phase.STABLE

    if TYPE_CHECKING:  # the copy evolvable generates (keyword per field)
        def but(self, *, proc: Proc = ..., epoch: int = ..., owned: int = ..., assigned: int = ...,
                topics: int = ..., answer: tuple[object, ...] | None = ..., commit: tuple[object, ...] | None = ..., classic: bool = ...,
                phase: Phase = ...) -> Client: ...


@evolvable
@dataclass(frozen=True, slots=True)
class MMember(Member):
    """A consumer group member; ``classic``: it joined with JoinGroup (``ClassicMemberMetadata``)."""

    classic: bool = False

    if TYPE_CHECKING:  # the copy evolvable generates (keyword per field)
        def but(self, *, state: MemberState = ..., epoch: int = ..., previous_epoch: int = ..., assigned: int = ...,
                revoking: int = ..., topics: int = ..., static: bool = ..., left: bool = ...,
                since: tuple[int, ...] = ..., classic: bool = ...) -> MMember: ...


@evolvable
@dataclass(frozen=True, slots=True)
class ClassicGroup:
    """The coordinator's classic group (used while the group's type is CLASSIC)."""

    status: GroupStatus = GroupStatus.EMPTY
    generation: int = 0
    members: int = 0  # slots (bit mask)
    joined: int = 0  # slots that rejoined in this join phase
    reported: tuple[int, ...] = ()  # owned partitions reported in this join phase's JoinGroup
    assignment: tuple[int, ...] = ()  # stored assignment per slot
    pending: tuple[int, ...] = ()  # the leader's assignment, computed at the end of the join phase
    leader: int = -1
    # Members whose stored assignment is no assignment at all (``EMPTY_ASSIGNMENT``, zero bytes): members
    # added in this join phase, and every member once COMPLETING_REBALANCE was reset. Not the same as an
    # assignment of no partitions: the upgrade cannot parse it.
    unsynced: int = 0

    if TYPE_CHECKING:  # the copy evolvable generates (keyword per field)
        def but(self, *, status: GroupStatus = ..., generation: int = ..., members: int = ..., joined: int = ...,
                reported: tuple[int, ...] = ..., assignment: tuple[int, ...] = ..., pending: tuple[int, ...] = ...,
                leader: int = ..., unsynced: int = ...) -> ClassicGroup: ...


@evolvable
@dataclass(frozen=True, slots=True)
class MigrationState:
    kind: Kind
    classic: ClassicGroup
    group: ConsumerGroup
    clients: tuple[Client, ...]
    budget: int = 0

    if TYPE_CHECKING:  # the copy evolvable generates (keyword per field)
        def but(self, *, kind: Kind = ..., classic: ClassicGroup = ..., group: ConsumerGroup = ...,
                clients: tuple[Client, ...] = ..., budget: int = ...) -> MigrationState: ...


# -- the steps of this page ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, repr=False)
class JoinGroup(A.Action):
    verb = "sends JoinGroup (reporting the partitions it owns)"


@dataclass(frozen=True, slots=True, repr=False)
class SyncGroup(A.Action):
    verb = "sends SyncGroup and applies the answer (revoking what it no longer has; rejoining if it revoked)"


@dataclass(frozen=True, slots=True, repr=False)
class ClassicHeartbeat(A.Action):
    verb = "heartbeats and is told to rejoin"


@dataclass(frozen=True, slots=True, repr=False)
class Upgrade(A.Action):
    fair = False
    verb = "is restarted with group.protocol=consumer (closes: revokes, LeaveGroup; restarts with epoch 0)"


@dataclass(frozen=True, slots=True, repr=False)
class Downgrade(A.Action):
    fair = False
    verb = "is restarted with group.protocol=classic (closes: revokes, epoch -1; restarts and joins)"
