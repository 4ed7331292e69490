"""The vocabulary shared by every protocol variant: statuses, state records, configuration.

Theory of operation
-------------------
A *state* of the specification is an immutable value (:class:`State`) made of three parts, named as
Kafka names them (style: Vanlightly's KIP-848 TLA+ spec keeps coordinator, client and auxiliary state
apart):

* the **group coordinator**'s view of the group (:class:`Group`): its status (``EMPTY`` /
  ``PREPARING_REBALANCE`` / ``COMPLETING_REBALANCE`` / ``STABLE`` / ``DEAD``), its generation, its leader,
  and one :class:`Record` per member slot it knows (what the member reported in its JoinGroup, whether the
  member has rejoined in the current join phase, its stored assignment);
* one **client** per member slot (:class:`Client`): whether the process is up, paused or down, its member
  status (``UNJOINED`` / ``PREPARING_REBALANCE`` / ``COMPLETING_REBALANCE`` / ``STABLE``), the generation it
  believes it is in, the partitions it *owns* (processes and may commit), and the coordinator's answer that is
  on its way to it (its *inbox*);
* auxiliary state that is not part of the protocol: the perturbation budget left.

Member slots and member ids. A slot is one consumer process *identity*: for a static member it is its
``group.instance.id``. The member id a process holds is kept *relative to the coordinator*: ``Id.NONE`` (no
id yet, or reset), ``Id.CURRENT`` (the coordinator has a record for this slot with this very id) or
``Id.STALE`` (the process holds an id the coordinator no longer knows, or one that was replaced). Only these
relations matter to the protocol, so this is exact and keeps the state space finite.

Partitions are numbered ``0..K-1`` and split into ``T`` topics as evenly as possible (topic ``t`` owns a
contiguous block). Sets of partitions are ``int`` bit masks: bit ``p`` set means partition ``p`` is in the
set. Topic subscriptions are bit masks over topics.

Generations. The coordinator's generation starts at 0 and grows by one per completed join phase
(``initNextGeneration``). Only equality with the group's generation and the order between members'
generations matter, so the explorer compares states *up to a shift of all generations* (see
``groupspec.model.symmetry``); ``NO_GENERATION`` (``-1``) is Kafka's ``Generation.NO_GENERATION``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Callable, Sequence, TypeVar


class GroupStatus(IntEnum):
    """The coordinator's group state (Kafka ``GroupState`` / ``ClassicGroupState``)."""

    EMPTY = 0
    PREPARING_REBALANCE = 1
    COMPLETING_REBALANCE = 2
    STABLE = 3
    DEAD = 4


# Legal group-status transitions, as a table (coordinator.md §1.3; Kafka's ``validPreviousStates``).
# The key is the target status, the value the statuses it may be entered from.
GROUP_TRANSITIONS: dict[GroupStatus, frozenset[GroupStatus]] = {
    GroupStatus.EMPTY: frozenset({GroupStatus.PREPARING_REBALANCE}),
    GroupStatus.PREPARING_REBALANCE: frozenset(
        {GroupStatus.EMPTY, GroupStatus.STABLE, GroupStatus.COMPLETING_REBALANCE}
    ),
    GroupStatus.COMPLETING_REBALANCE: frozenset({GroupStatus.PREPARING_REBALANCE}),
    GroupStatus.STABLE: frozenset({GroupStatus.COMPLETING_REBALANCE}),
    GroupStatus.DEAD: frozenset(set(GroupStatus)),
}


class IllegalTransition(Exception):
    """A step tried a group-status move the table above does not allow."""


def check_transition(old: GroupStatus, new: GroupStatus) -> None:
    # No exemption for a move to the status the group is in: Kafka's transitionTo asserts validPreviousStates
    # alone, so only DEAD may be entered from itself (issue 30: the model once let every self-move through).
    if old not in GROUP_TRANSITIONS[new]:
        raise IllegalTransition(f"illegal group transition {old.name} -> {new.name}")


class MemberStatus(IntEnum):
    """The client's member state (Kafka ``AbstractCoordinator.MemberState``)."""

    UNJOINED = 0
    PREPARING_REBALANCE = 1
    COMPLETING_REBALANCE = 2
    STABLE = 3


class Proc(IntEnum):
    """Whether the consumer process runs."""

    DOWN = 0  # not started, crashed or closed
    UP = 1
    PAUSED = 2  # e.g. a long GC pause: it does nothing, and remembers everything


class Id(IntEnum):
    """The member id a process holds, relative to the coordinator's record for its slot."""

    NONE = 0
    CURRENT = 1
    STALE = 2
    # KIP-394 (fault ``two-step-join``): an id the coordinator handed out with MEMBER_ID_REQUIRED and keeps
    # in its pending set (``Group.pending``); not a member's id until the process joins again with it.
    PENDING = 3


class Reply(IntEnum):
    """Kinds of coordinator answers that can be on their way to a client (its inbox)."""

    JOIN = 1  # JoinGroup response: NONE with a generation (and, for the leader, the members)
    SYNC = 2  # SyncGroup response: NONE with an assignment
    REBALANCE_IN_PROGRESS = 3  # a parked SyncGroup cancelled because a new join phase began
    UNKNOWN_MEMBER_ID = 4  # a parked JoinGroup cancelled because the member was removed
    FENCED_INSTANCE_ID = 5  # a parked request of a replaced static member


NO_GENERATION = -1


class _Missing:
    __slots__ = ()


_MISSING = _Missing()


_T = TypeVar("_T", bound=type)


def evolvable(cls: _T) -> _T:
    """Give a frozen dataclass a fast ``but(**changes)``: a copy with some fields changed.

    Each class declares the method's signature for the type checker in an ``if TYPE_CHECKING`` block (one
    keyword per field; tests/test_types.py checks the names against the fields).

    The same thing as ``dataclasses.replace`` (untouched fields cannot change: frames by construction),
    generated once per class so that the explorer's inner loop does not pay for ``replace``'s
    introspection on every step.
    """
    names = [f.name for f in dataclasses.fields(cls)]
    params = ", ".join(f"{n}=_MISSING" for n in names)
    args = ", ".join(f"self.{n} if {n} is _MISSING else {n}" for n in names)
    ns: dict[str, object] = {"_MISSING": _MISSING, "_cls": cls}
    exec(f"def but(self, *, {params}):\n    return _cls({args})\n", ns)
    setattr(cls, "but", ns["but"])  # typed per class under TYPE_CHECKING (a ``but`` stub per field)
    return cls


@evolvable
@dataclass(frozen=True, slots=True)
class Inbox:
    """A coordinator answer on its way to one client."""

    reply: Reply
    generation: int = NO_GENERATION
    assignment: int = 0  # bit mask of partitions (SYNC; JOIN for coordinator-side assignment)

    if TYPE_CHECKING:  # the copy evolvable generates (keyword per field)
        def but(self, *, reply: Reply = ..., generation: int = ..., assignment: int = ...) -> Inbox: ...


@evolvable
@dataclass(frozen=True, slots=True)
class Client:
    """One consumer process, as it sees itself."""

    proc: Proc = Proc.DOWN
    status: MemberStatus = MemberStatus.UNJOINED
    id: Id = Id.NONE
    generation: int = NO_GENERATION
    owned: int = 0  # partitions the member owns: it may process and commit them
    topics: int = 0  # subscription (bit mask of topics)
    rejoin: bool = False  # requestRejoin() was called: it will send JoinGroup at its next poll
    inbox: Inbox | None = None
    # A static member's previous process that is still paused after a new process took over its
    # group.instance.id (KIP-345): (generation, owned). It is a zombie: it believes it owns `owned`.
    ghost: tuple[int, int] | None = None
    # The consumer's configured assignor list (partition.assignment.strategy), for a group upgraded by
    # rolling bounces (model/upgrade.py); 0 in every other variant: the variant's one assignor.
    assignors: int = 0
    # Fault ``late-expiry``: the process resumed from a pause and the coordinator has not refreshed its
    # session since (no accepted heartbeat, join completion or assignment): the session may still run
    # out, and the coordinator may expire it although it runs again.
    woke: bool = False

    if TYPE_CHECKING:  # the copy evolvable generates (keyword per field)
        def but(self, *, proc: Proc = ..., status: MemberStatus = ..., id: Id = ..., generation: int = ...,
                owned: int = ..., topics: int = ..., rejoin: bool = ..., inbox: Inbox | None = ...,
                ghost: tuple[int, int] | None = ..., assignors: int = ..., woke: bool = ...) -> Client: ...


@evolvable
@dataclass(frozen=True, slots=True)
class Record:
    """The coordinator's record of one member (Kafka ``MemberMetadata`` / ``ClassicGroupMember``)."""

    static: bool = False
    joined: bool = False  # has (re)joined in the current join phase (a JoinGroup is parked)
    awaiting_sync: bool = False  # a follower's SyncGroup is parked
    synced: bool = False  # sent SyncGroup in this generation (not pending-sync)
    topics: int = 0  # subscription reported in its last JoinGroup
    owned: int = 0  # owned partitions reported in its last JoinGroup (ConsumerProtocolSubscription v1+)
    generation: int = NO_GENERATION  # generation reported in its last JoinGroup (v2+)
    assignment: int = 0  # stored assignment of the current generation

    if TYPE_CHECKING:  # the copy evolvable generates (keyword per field)
        def but(self, *, static: bool = ..., joined: bool = ..., awaiting_sync: bool = ..., synced: bool = ...,
                topics: int = ..., owned: int = ..., generation: int = ..., assignment: int = ...) -> Record: ...


@evolvable
@dataclass(frozen=True, slots=True)
class Group:
    """The group coordinator's state for the one group."""

    status: GroupStatus = GroupStatus.EMPTY
    generation: int = 0
    leader: int = -1  # member slot, or -1
    records: tuple[Record | None, ...] = ()
    # The assignment the leader computed for this generation (sent with its SyncGroup); None until the
    # join phase completes. The model computes it at completion: the leader's computation is a pure
    # function of what the JoinGroup response carried, so computing it early changes nothing.
    target: tuple[int, ...] | None = None
    partitions: int = 0  # partitions that exist (bit mask)
    # connect-delayed (KIP-415): partitions held back for a departed member, and that member's slot.
    held: int = 0
    held_for: int = -1
    # model/upgrade.py: the assignor the last join completion selected by the protocol vote; 0 in every
    # other variant (the variant's one assignor).
    protocol: int = 0
    # model/static_leader.py: the leader's assignmentSnapshot (the partitions its metadata showed when it
    # last assigned, or when it came back as a static leader with skipAssignment); 0 in every other variant.
    snapshot: int = 0
    # Group formation and the coordinator's timers (faults ``initial-delay``, ``two-step-join``,
    # ``sync-timeout``; all three stay at their defaults without them):
    forming: bool = False  # the initial delayed join runs (KIP-134): the join phase cannot complete yet
    pending: int = 0  # slots holding a pending member id (KIP-394), bit mask: not members, block completion
    # pendingSyncMembers names an id that is no member any more (a static member replaced before its
    # SyncGroup): no SyncGroup can clear it, so the pending-sync timer will fire (KAFKA-12890).
    stale_sync: bool = False

    if TYPE_CHECKING:  # the copy evolvable generates (keyword per field)
        def but(self, *, status: GroupStatus = ..., generation: int = ..., leader: int = ...,
                records: tuple[Record | None, ...] = ..., target: tuple[int, ...] | None = ...,
                partitions: int = ..., held: int = ..., held_for: int = ..., protocol: int = ...,
                snapshot: int = ..., forming: bool = ..., pending: int = ..., stale_sync: bool = ...) -> Group: ...


@evolvable
@dataclass(frozen=True, slots=True)
class State:
    group: Group
    clients: tuple[Client, ...]
    budget: int = 0  # perturbations left (auxiliary, not protocol state)

    if TYPE_CHECKING:  # the copy evolvable generates (keyword per field)
        def but(self, *, group: Group = ..., clients: tuple[Client, ...] = ..., budget: int = ...) -> State: ...


# --------------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------------

FAULTS = ("join", "leave", "crash", "timeout", "zombie", "subscription", "partitions",
          "initial-delay", "two-step-join", "sync-timeout", "late-expiry", "poll-timeout",
          "lose-answer", "late-answer", "late-commit", "early-restart")
# The next five are Kafka's group formation and timers, which the classic model leaves out unless asked
# (model/classic.py, "What is abstracted"): turning one on adds protocol steps, and only ``sync-timeout``'s
# slow member and ``poll-timeout``'s stalled one spend the budget. Without them every state count, verdict
# and counterexample is as before.
TIMING_FAULTS = frozenset({"initial-delay", "two-step-join", "sync-timeout", "late-expiry", "poll-timeout"})
# KIP-848 requests and answers in flight (model/consumer_flight.py): the consumer family only; the other
# variants refuse them, the compiled engine does not encode them (the Python explorer runs them).
CONSUMER_FLIGHT_FAULTS = frozenset({"lose-answer", "late-answer", "late-commit", "early-restart"})
FAULT_HELP = {
    "join": "a consumer that is not running starts (a new member, or a restart)",
    "leave": "a member closes cleanly and sends LeaveGroup",
    "crash": "a consumer process dies; the coordinator notices at its session timeout",
    "timeout": "the coordinator expires a live member's session (network blip, slow heartbeats), or the "
               "rebalance timer completes a join phase without a running member slower than max.poll.interval.ms",
    "zombie": "a member pauses past its timeouts, is expired, and later comes back with a stale generation",
    "subscription": "a member changes its subscription (subscribes to / drops the last topic)",
    "partitions": "a topic grows by one partition (the leader notices and forces a rebalance)",
    "initial-delay": "the first rebalance of an Empty group waits for group.initial.rebalance.delay.ms "
                     "(KIP-134), so several members can form the first generation",
    "two-step-join": "a new dynamic member's first JoinGroup is answered MEMBER_ID_REQUIRED with an id it "
                     "joins again with (KIP-394); a pending id blocks the join phase until it joins or expires",
    "sync-timeout": "the pending-sync timer (KAFKA-12890): a member slow to send SyncGroup is removed and "
                    "the group rebalances; a replaced static member's old id forces a rebalance",
    "late-expiry": "a member resumed from a long pause (with zombie) may still be expired before its "
                   "session is refreshed, and rejoins",
    "poll-timeout": "a joined member's poll loop stalls (or its process pauses) past max.poll.interval.ms: its "
                    "heartbeat thread sends LeaveGroup (dynamic members) and resets it; it rejoins at its next poll",
    "lose-answer": "KIP-848: the coordinator handles a ConsumerGroupHeartbeat but its answer is lost; the client "
                   "retries with the epoch it knows (previous-epoch tolerance, FENCED_MEMBER_EPOCH)",
    "late-answer": "KIP-848: a ConsumerGroupHeartbeat's answer is delivered late, after anything else happened",
    "late-commit": "KIP-848: an OffsetCommit is delivered late, after the member moved on (STALE_MEMBER_EPOCH)",
    "early-restart": "KIP-848 static members: a crashed process restarts before its session expired "
                     "(UNRELEASED_INSTANCE_ID, fatal for the client)",
}


@dataclass(frozen=True)
class Config:
    """Bounds and parameters of one finite instance of a protocol variant."""

    members: int = 3
    partitions: int = 4
    topics: int = 1
    faults: frozenset[str] = frozenset()
    budget: int = 2
    assignor: str = "sticky"
    topic_of: tuple[int, ...] = field(init=False)
    topic_masks: tuple[int, ...] = field(init=False)
    all_topics: int = field(init=False)

    def __post_init__(self) -> None:
        if self.members < 1 or self.partitions < 1 or self.topics < 1:
            raise ValueError("members, partitions and topics must be at least 1")
        if self.topics > self.partitions:
            raise ValueError("there cannot be more topics than partitions")
        if self.budget < 0:
            raise ValueError("the perturbation budget cannot be negative")
        unknown = set(self.faults) - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown fault {sorted(unknown)[0]!r}; choose from {', '.join(FAULTS)}")
        base, extra = divmod(self.partitions, self.topics)
        topic_of: list[int] = []
        for t in range(self.topics):
            topic_of += [t] * (base + (1 if t < extra else 0))
        masks = [0] * self.topics
        for p, t in enumerate(topic_of):
            masks[t] |= 1 << p
        object.__setattr__(self, "topic_of", tuple(topic_of))
        object.__setattr__(self, "topic_masks", tuple(masks))
        object.__setattr__(self, "all_topics", (1 << self.topics) - 1)

    def subscribed_partitions(self, topics: int, existing: int) -> int:
        """The existing partitions of the topics in the bit mask ``topics``."""
        m = 0
        for t, tm in enumerate(self.topic_masks):
            if topics >> t & 1:
                m |= tm
        return m & existing


def bits(mask: int) -> list[int]:
    """The members of a bit mask, lowest first."""
    out = []
    i = 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return out


def popcount(mask: int) -> int:
    return mask.bit_count()


# An assignor: given the members' reported metadata, compute the target assignment.
# members: sequence of (slot, topics mask, owned mask, generation, static) for the group's members in
# slot order; returns {slot: partitions mask}.
MemberMeta = tuple[int, int, int, int, bool]
AssignFn = Callable[[Config, Sequence[MemberMeta], int], dict[int, int]]
