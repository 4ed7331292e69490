"""The properties every protocol variant must have, each stated in prose beside its code.

Kinds (as in stateright and TLC): ``ALWAYS`` holds in every reachable state; ``ACTION`` holds on every
step (a pair of states); ``EVENTUALLY`` is a liveness property, decided by the explorer on the whole
state graph under weak fairness of protocol steps; ``SOMETIMES`` must hold in *some* reachable state —
it guards against vacuity (a model in which nothing ever happens satisfies every safety property).

The counterparts in Jack Vanlightly's TLA+ specification of KIP-848 are named in each docstring.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Protocol

from .core import NO_GENERATION, Config, GroupStatus as GS, Id, MemberStatus as MS, Proc, State, bits


class Observed(Protocol):
    """What the properties ask a protocol object (every family answers; a state is the family's own type,
    ``Any`` as in :class:`~groupspec.model.spec.Spec`)."""

    def live_ownership(self, s: Any) -> Iterable[tuple[int, int]]: ...

    def partition_name(self, p: int) -> str: ...

    def member_name(self, i: int) -> str: ...

    def commit_violation(self, s: Any) -> str | None: ...

    def generation_violation(self, s: Any, t: Any) -> str | None: ...

    def converged(self, s: Any) -> bool: ...

    def members_in_group(self, s: Any) -> int: ...

    def initial_members(self) -> int: ...


class Kind(Enum):
    ALWAYS = "always"
    ACTION = "action"
    EVENTUALLY = "eventually"
    SOMETIMES = "sometimes"


@dataclass(frozen=True)
class Property:
    name: str
    kind: Kind
    prose: str
    # ALWAYS / SOMETIMES: (proto, s) -> None if it holds, else a one-line explanation
    # ACTION: (proto, s, t) -> None or explanation
    check: Callable[..., str | None]


# --------------------------------------------------------------------------------------------------
def exclusive_ownership(proto: Observed, s: State) -> str | None:
    """No partition is owned by two live members at once.

    A *live member* is a running or paused process whose member id the coordinator currently
    knows. A zombie — a process the coordinator has dropped, which may still believe it owns its
    old partitions — is not one; what keeps zombies harmless is fencing (next property).
    TLA+ counterpart: ``NoDoubleClientAssignment`` ("the most important safety property").
    """
    seen = 0
    who: dict[int, int] = {}
    for i, owned in proto.live_ownership(s):
        clash = seen & owned
        if clash:
            p = (clash & -clash).bit_length() - 1
            return f"partition {proto.partition_name(p)} is owned by both {proto.member_name(who[p])} and {proto.member_name(i)}"
        seen |= owned
        for p in bits(owned):
            who[p] = i
    return None


def commit_fencing(proto: Observed, s: State) -> str | None:
    """Offset commits are accepted only from the partition's owner in the current generation.

    For every process that believes it owns a partition and would commit it now (including a zombie,
    or the ghost of a replaced static member), if the coordinator would accept the commit then the
    committer is a live member, in the group's current generation, the partition is in its stored
    assignment, and no other live member owns it. A zombie may still *believe* it owns a partition; it
    must not be able to *commit* for it. TLA+ counterpart: the epoch checks behind ``ValidMemberEpoch``.
    """
    return proto.commit_violation(s)


def generation_monotonic(proto: Observed, s: State, t: State) -> str | None:
    """Generations increase: the group's by exactly one per completed join phase; a member's never decreases.

    The coordinator's generation changes only when a join phase completes, and then by exactly one;
    a member's generation never goes down, except when it is reset to a fresh member
    (``NO_GENERATION``) after an error or a restart, and never runs ahead of the group's.
    TLA+ counterparts: ``GcSideMemberEpochIsMonotonic``, ``ClientSideMemberEpochIsMonotonic``.
    """
    return proto.generation_violation(s, t)


def convergence(proto: Observed, s: State) -> str | None:
    """After the last perturbation, the group converges (decided by the explorer on the state graph).

    Under weak fairness of protocol steps (a step that stays enabled is eventually taken; faults never
    have to happen), every run reaches a state that is ``STABLE`` with every member alive and
    ``STABLE``, owned = assigned, and the assignment a complete answer of the chosen assignor (running
    it again would change nothing) — and stays there. The explorer reports the bound: the largest number
    of protocol steps any run needs after its last perturbation.
    TLA+ counterpart: ``EventuallyConverges`` with ``ValidStableGroupState`` as the goal.
    """
    return None if proto.converged(s) else "not converged"


def sometimes_stable_all(proto: Observed, s: State) -> str | None:
    """Some reachable state is converged with every started member in the group (non-vacuity)."""
    return None if proto.converged(s) and proto.members_in_group(s) >= proto.initial_members() else "no"


PROPERTIES: tuple[Property, ...] = (
    Property("exclusive_ownership", Kind.ALWAYS, exclusive_ownership.__doc__ or "", exclusive_ownership),
    Property("commit_fencing", Kind.ALWAYS, commit_fencing.__doc__ or "", commit_fencing),
    Property("generation_monotonic", Kind.ACTION, generation_monotonic.__doc__ or "", generation_monotonic),
    Property("convergence", Kind.EVENTUALLY, convergence.__doc__ or "", convergence),
    Property("sometimes_all_stable", Kind.SOMETIMES, sometimes_stable_all.__doc__ or "", sometimes_stable_all),
)
SAFETY = tuple(p for p in PROPERTIES if p.kind is Kind.ALWAYS)
ACTIONS = tuple(p for p in PROPERTIES if p.kind is Kind.ACTION)
SOMETIMES = tuple(p for p in PROPERTIES if p.kind is Kind.SOMETIMES)


# --------------------------------------------------------------------------------------------------
# The classic protocol's answers to the questions above (mixed into ClassicProtocol).
# --------------------------------------------------------------------------------------------------
class ClassicObservations:
    """How the properties read a classic-protocol state."""

    if TYPE_CHECKING:  # what it uses of ClassicProtocol
        cfg: Config
        coordinator_assigns: bool

        def live_member(self, s: State, i: int) -> bool: ...
        def commit_accepted(self, s: State, i: int, ghost: bool = False) -> bool: ...
        def init_states(self) -> list[State]: ...

    def member_name(self, i: int) -> str:
        return f"c{i + 1}"

    def partition_name(self, p: int) -> str:
        cfg = self.cfg
        t = cfg.topic_of[p]
        first = cfg.topic_of.index(t)
        return f"{chr(ord('t') + t) if cfg.topics > 1 else 't'}-{p - first}"

    def live_ownership(self, s: State) -> Iterator[tuple[int, int]]:
        for i, c in enumerate(s.clients):
            if c.owned and self.live_member(s, i):
                yield i, c.owned

    def initial_members(self) -> int:
        return sum(1 for c in self.init_states()[0].clients if c.proc == Proc.UP)

    def members_in_group(self, s: State) -> int:
        return sum(1 for r in s.group.records if r is not None)

    def commit_violation(self, s: State) -> str | None:
        g = s.group
        live_owned: dict[int, int] = {}
        for i, owned in self.live_ownership(s):
            live_owned[i] = owned
        for i, c in enumerate(s.clients):
            committers = []
            if c.proc == Proc.UP and c.status == MS.STABLE and c.owned:
                committers.append((False, c.owned))
            if c.ghost is not None and c.ghost[1]:
                committers.append((True, c.ghost[1]))
            for ghost, owned in committers:
                if not self.commit_accepted(s, i, ghost=ghost):
                    continue
                who = f"the replaced old process of {self.member_name(i)}" if ghost else self.member_name(i)
                if ghost or not self.live_member(s, i):
                    p = bits(owned)[0]
                    return f"{who} is not a member any more, yet its commit for {self.partition_name(p)} is accepted"
                if c.generation != g.generation:
                    return f"{who} commits with generation {c.generation} while the group is in {g.generation}, and it is accepted"
                r = g.records[i]
                assert r is not None  # a live member has a record
                stray = owned & ~r.assignment
                if stray:
                    p = bits(stray)[0]
                    return f"{who}'s commit for {self.partition_name(p)} is accepted, but {self.partition_name(p)} is not in its assignment"
                for k, o in live_owned.items():
                    if k != i and o & owned:
                        p = bits(o & owned)[0]
                        return f"{who}'s commit for {self.partition_name(p)} is accepted while {self.member_name(k)} owns it too"
        return None

    def generation_violation(self, s: State, t: State) -> str | None:
        g, h = s.group, t.group
        if g is h:
            # The coordinator did not move: only a client's generation may have changed.
            for i, (a, b) in enumerate(zip(s.clients, t.clients)):
                if a is not b and a.generation != b.generation:
                    if b.generation != NO_GENERATION and b.generation < a.generation:
                        return f"{self.member_name(i)}'s generation went down from {a.generation} to {b.generation}"
                    if b.generation > h.generation:
                        return f"{self.member_name(i)} is in generation {b.generation}, ahead of the group's {h.generation}"
            return None
        d = h.generation - g.generation
        if d not in (0, 1):
            return f"the group's generation went from {g.generation} to {h.generation}"
        completed_to = {GS.COMPLETING_REBALANCE, GS.EMPTY}
        if self.coordinator_assigns:
            completed_to.add(GS.STABLE)
        if d == 1 and h.status not in completed_to:
            return f"the generation grew to {h.generation} without a completed join phase (group {h.status.name})"
        if d == 0 and h.status != g.status and h.status in (GS.COMPLETING_REBALANCE, GS.EMPTY) and g.status != GS.DEAD:
            return f"a join phase completed ({g.status.name} -> {h.status.name}) but the generation stayed {h.generation}"
        for i, (a, b) in enumerate(zip(s.clients, t.clients)):
            if a is b and d == 0:
                continue  # untouched
            if b.generation != NO_GENERATION and b.generation < a.generation:
                return f"{self.member_name(i)}'s generation went down from {a.generation} to {b.generation}"
            if b.generation > h.generation:
                return f"{self.member_name(i)} is in generation {b.generation}, ahead of the group's {h.generation}"
        return None
