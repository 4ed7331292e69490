"""Refinement: which reference runs the model must explain, and how one reference event is matched.

Owns the conformance variants (:data:`VARIANTS`), the run timings, the projection of a model state onto
what the check compares (:func:`project`) and the breadth-first matcher (:func:`match`): one reference
event must be a stutter or at most :data:`MAX_MODEL_STEPS` model steps.

May import: ``groupspec.model``, ``groupspec.reference``. Imported by every other part of the package.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from groupspec.model import (
    GroupStatus as GS,
    Id,
    MemberStatus as MS,
    Proc,
    Reply,
    State,
)
from groupspec.reference.classic import MemberState, GroupStatus as RefStatus
from groupspec.reference.errors import Error

TOPIC = "t"
MODEL_PARTITIONS = 4  # partitions of the model's instance in the state machines (the most that can exist)
TOPICS = ("t", "u")  # a harness with ``topics=2`` runs both; the model's ChangeSubscription toggles the last
MAX_MODEL_STEPS = 3  # one reference event may stand for up to this many model steps
DROPPED_SUSPENSION = "disconnected with an answer on its way"  # the suspension _dropped_answers starts
GROUP_STATUS = {
    RefStatus.EMPTY: GS.EMPTY,
    RefStatus.PREPARING_REBALANCE: GS.PREPARING_REBALANCE,
    RefStatus.COMPLETING_REBALANCE: GS.COMPLETING_REBALANCE,
    RefStatus.STABLE: GS.STABLE,
    RefStatus.DEAD: GS.DEAD,
}
CLASSIC_MEMBER_STATE = {
    MemberState.UNJOINED: MS.UNJOINED,
    MemberState.PREPARING_REBALANCE: MS.PREPARING_REBALANCE,
    MemberState.COMPLETING_REBALANCE: MS.COMPLETING_REBALANCE,
    MemberState.STABLE: MS.STABLE,
}
INBOX_ERRORS = {
    Error.REBALANCE_IN_PROGRESS: Reply.REBALANCE_IN_PROGRESS,
    Error.UNKNOWN_MEMBER_ID: Reply.UNKNOWN_MEMBER_ID,
    Error.FENCED_INSTANCE_ID: Reply.FENCED_INSTANCE_ID,
}


@dataclass(frozen=True)
class Variant:
    """One protocol variant as the reference runs it, and the model variant it must refine."""

    name: str
    model: str  # groupspec.model variant
    assignor: str  # the reference consumers' partition.assignment.strategy
    model_assignor: str  # the model's assignor (only its convergence bound uses it: targets are pinned)
    static: bool = False
    # Partitions at the start of a one-topic run (the model's instance has 4: the rest are added). A
    # static group rebalances on little else than a new partition, so it starts with 2 and can grow twice.
    start_partitions: int = 3
    connect: bool = False  # Kafka Connect workers (groupspec.conformance.connect), not consumers
    keep_work: bool = False  # Connect workers keep their work across a member-id reset (Kafka's behaviour)


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("eager-range", "eager", "range", "range"),
        Variant("eager-roundrobin", "eager", "roundrobin", "roundrobin"),
        Variant("static-range", "static", "range", "range", static=True, start_partitions=2),
        Variant("cooperative-sticky", "cooperative", "cooperative-sticky", "sticky"),
        Variant("connect-delayed", "connect-delayed", "sessioned", "sticky", connect=True),
        # Connect workers with keep_work_on_reset=True (Kafka's behaviour) against connect-keep-work
        # (docs/conformance.md, gap 11): a reset worker, also one whose poll timeout made it leave, keeps its work.
        Variant("connect-keep-work", "connect-keep-work", "sessioned", "sticky", connect=True, keep_work=True),
    )
}

# Variants the harness runs on written stories only, not in the randomized suite.
STORY_VARIANTS: dict[str, Variant] = {
    v.name: v for v in (
        # A static leader back with skipAssignment, after its topic grew (docs/conformance.md, finding 3).
        Variant("static-range-snapshot", "static-leader-snapshot", "range", "range", static=True, start_partitions=2),
    )
}

# Timing of the conformance runs (ms). The session timeout is the broker's minimum.
SESSION_MS = 10000
HEARTBEAT_MS = 1000
REBALANCE_MS = 6000  # below the session timeout, so a paused member can miss a rebalance
REQUEST_MS = 20000  # above the rebalance timeout: see docs/conformance.md (a parked SyncGroup never times out)


class ConformanceFailure(AssertionError):
    """A check failed; ``check`` names it, the message carries the timeline and the seed."""

    def __init__(self, check: str, message: str) -> None:
        super().__init__(f"[{check}] {message}")
        self.check = check


@dataclass(frozen=True)
class RefStep:
    """An action-like record for the timeline printer: a reference event and the model steps it matched."""

    member: int
    text: str
    name: str = "ReferenceStep"

    def describe(self, who: str) -> str:
        return self.text


@dataclass
class ModelLine:
    action: Any
    state: Any


# --------------------------------------------------------------------------------------------------
# Projection and matching
# --------------------------------------------------------------------------------------------------
def project(s: State) -> tuple[Any, ...]:
    """The part of a model state the refinement check compares.

    Left out (documented in docs/conformance.md): the perturbation budget (auxiliary); the target
    assignment (pinned from the reference leader); the leader's identity (both pick deterministically,
    by different rules); a record's reported metadata (topics, owned, generation: the assignor's input,
    checked by the assignor checker) and its ``synced`` bookkeeping; ``rejoin`` of a client that is not
    STABLE with a current member id (the reference keeps ``rejoinNeeded`` set until its SyncGroup
    succeeds; a zombie's flag changes nothing: whatever it sends next is refused); the stored
    assignments while COMPLETING_REBALANCE (Kafka keeps the previous generation's until the leader's
    SyncGroup, the model clears them; nothing reads them in that state).
    """
    g = s.group
    keep = g.status != GS.COMPLETING_REBALANCE
    recs = tuple(None if r is None else (r.static, r.joined, r.awaiting_sync, r.assignment if keep else 0)
                 for r in g.records)
    clients: list[tuple[Any, ...]] = []
    for c in s.clients:
        if c.proc == Proc.DOWN:
            clients.append((Proc.DOWN,))
            continue
        ib = None if c.inbox is None else (c.inbox.reply, c.inbox.generation, c.inbox.assignment)
        rejoin = c.rejoin and c.status == MS.STABLE and c.id == Id.CURRENT
        clients.append((c.proc, c.status, c.id, c.generation, c.owned, rejoin, ib))
    return (g.status, g.generation, g.partitions, g.held, g.held_for, recs, tuple(clients))


def match(proto: Any, pre: State, post: State, depth: int = MAX_MODEL_STEPS) -> list[Any] | None:
    """The shortest list of model actions (at most ``depth``) leading from ``pre`` to a state that
    projects like ``post``; ``[]`` for a stutter; ``None`` if there is none."""
    path = match_path(proto, pre, post, depth)
    return None if path is None else [a for a, _t in path]


def match_path(proto: Any, pre: State, post: State, depth: int = MAX_MODEL_STEPS,
               forbid: frozenset[Any] = frozenset()) -> list[tuple[Any, State]] | None:
    """Like :func:`match`, with the model state after each action; no action in ``forbid`` is taken (steps the
    reference event cannot stand for, e.g. a close of a process that runs on)."""
    goal = project(post)
    if project(pre) == goal:
        return []
    frontier: list[tuple[State, list[tuple[Any, State]]]] = [(pre, [])]
    seen = {project(pre)}
    for _ in range(depth):
        nxt: list[tuple[State, list[tuple[Any, State]]]] = []
        for s, path in frontier:
            for a, t in proto.successors(s):
                if a in forbid:
                    continue
                pt = project(t)
                if pt == goal:
                    return path + [(a, t)]
                if pt not in seen:
                    seen.add(pt)
                    nxt.append((t, path + [(a, t)]))
        frontier = nxt
    return None


