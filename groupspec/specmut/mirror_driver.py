"""One driver for the campaign's mirror checks: the model leads, a family's mirror follows it step by step.

The client checks (:mod:`.client_walks`, :mod:`.connect_walks`: the reference classic client and Connect worker;
:mod:`.consumer_client_walks`: the reference reconciling consumer) and the ZooKeeper-era check
(:mod:`.zookeeper_walks`: the reference's ensemble and consumers) all do the same thing with their own mirror: take an
instance of the (possibly mutated) model, hand each of its steps to the mirror, which carries it out on the reference
side and compares the two after it, raising :class:`Divergence` at the first difference. This module is that loop,
once:

* :func:`run_walks`: seeded random walks (walk ``w`` seeded ``seed * 1000 + w``, each walk recorded as its own
  segment for :mod:`.reach`), the protocol's own steps taken more often than perturbations (the family's fair bias);
* :func:`explore`: every step of every state of the instance, breadth first, each state once, taken with a copy of
  the mirror as some path to that state left it;
* :func:`check`: a killer's run of one job ``(variant, assignor, members, partitions, topics, faults, budget, walks,
  steps)``: its walks, or (``walks`` 0) its instance explored; a divergence as the check's failure.

A family says what differs, and nothing else (:class:`Family`): how a walk starts (the model, its initial state, the
mirror at it), which of the model's steps the mirror takes, how a state is keyed, how a step is handed to the mirror,
and what the mirror owes before a step (steps the reference would take that the model must offer). A mirror is
anything with ``step(s, a, t)`` (carry out and compare, or raise) and ``fork()`` (a copy to take one more step with).

The Kafka walks (:mod:`.kafka_walks`, :mod:`.kafka_consumer_walks`) share :class:`Divergence`, :func:`seeded`,
:func:`instance` and :func:`partition_names`; their loop is their own (Kafka's answers, its free choices). The fixed
Kafka runs (:mod:`.kafka_runs`, ``KAFKA_RUNS``) follow a named path with :func:`follow`.

May import: ``groupspec.model`` (inside the functions, after the mutant is applied), ``.reach``.
"""
from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections import deque
from typing import Any, Callable, Generic, Hashable, Iterator, Protocol, Self, Sequence, TypeVar

from .reach import current


class Divergence(AssertionError):
    """The model and what mirrors it disagree; the message names the walk, the step and what differs."""


class Mirror(Protocol):
    """What a family's mirror offers the driver."""

    def step(self, s: Any, a: Any, t: Any) -> None:
        """Carry out the model's step ``s -a-> t`` on the reference side and compare after it; raise
        :class:`Divergence` at a difference."""

    def fork(self) -> Self:
        """A copy to take one more step with (the exploration's branches)."""


M = TypeVar("M", bound=Mirror)
Succ = list[tuple[Any, Any]]
# a job: (variant, assignor, members, partitions, topics, faults, budget, walks, steps); walks 0: the instance explored
Job = tuple[str, str, int, int, int, str, int, int, int]


def instance(variant: str, assignor: str, members: int, partitions: int, topics: int, faults: str,
             budget: int) -> Any:
    """The model's page for one instance (whatever ``groupspec.model`` is loaded now: the mutant's)."""
    from groupspec.model import Config, make

    cfg = Config(members=members, partitions=partitions, topics=topics, budget=budget, assignor=assignor,
                 faults=frozenset(f for f in faults.split(",") if f))
    return make(variant, cfg)


def partition_names(cfg: Any, names: Sequence[str]) -> list[tuple[str, int]]:
    """The model's partition ``b`` as ``(topic name, partition in its topic)``, for every ``b`` of ``cfg``."""
    out = []
    for b in range(cfg.partitions):
        t = cfg.topic_of[b]
        out.append((names[t], sum(1 for x in range(b) if cfg.topic_of[x] == t)))
    return out


def follow(proto: Any, path: Sequence[str], take: Callable[[Any, Any, Any], str | None]) -> str | None:
    """A fixed run, named step by step (``repr`` of the model's actions), followed among the successors of ``proto``
    from its first initial state; ``take(s, a, t)`` carries out each step on the other side and says what differs.
    None, or the first thing that went wrong: a step the model does not have ("not a step of the model") or what
    ``take`` said, each prefixed with the step's number and name. The fixed Kafka runs (:mod:`.kafka_runs`,
    :mod:`.kafka_consumer_walks`) are this with Kafka's coordinator on the other side."""
    s = proto.init_states()[0]
    for n, name in enumerate(path):
        step = next(((a, t) for a, t in proto.successors(s) if repr(a) == name), None)
        if step is None:
            return f"step {n + 1} {name}: not a step of the model"
        a, t = step
        why = take(s, a, t)
        if why is not None:
            return f"step {n + 1} {name}: {why}"
        s = t
    return None


def bits(mask: int) -> str:
    """A set of partitions (a bit mask) as ``{0,2}``."""
    return "{" + ",".join(str(b) for b in range(mask.bit_length()) if mask >> b & 1) + "}"


class Family(ABC, Generic[M]):
    """One job's instance of a family of mirror checks: what the driver asks of it."""

    label: str = ""  # names the check in a divergence ("client:eager", "zookeeper")
    seed: int = 0  # the walks' default seed
    fair_bias: float = 0.0  # how often a walk keeps to the protocol's own (fair) steps when both kinds are offered
    limit: int = 50_000  # the states an exploration stops at

    def __init__(self, variant: str, assignor: str, members: int, partitions: int, topics: int, faults: str,
                 budget: int) -> None:
        self.variant, self.assignor, self.members, self.partitions = variant, assignor, members, partitions
        self.topics, self.faults, self.budget = topics, faults, budget

    def make(self) -> Any:
        """The model's page for this instance."""
        return instance(self.variant, self.assignor, self.members, self.partitions, self.topics, self.faults,
                        self.budget)

    @abstractmethod
    def start(self) -> tuple[Any, Any, M]:
        """The model's page, its initial state and a mirror at it: once per walk, once per exploration."""

    def successors(self, proto: Any, s: Any) -> Succ:
        """The model's steps from ``s`` the mirror takes."""
        return list(proto.successors(s))

    def key(self, proto: Any, s: Any) -> Hashable:
        """What tells two states apart in an exploration."""
        return proto.key(s)  # type: ignore[no-any-return]

    def take(self, proto: Any, mirror: M, s: Any, a: Any, t: Any) -> None:
        """Hand the model's step ``s -a-> t`` to ``mirror`` (it raises :class:`Divergence` at a difference)."""
        mirror.step(s, a, t)

    def owed(self, proto: Any, mirror: M, s: Any, succ: Succ) -> str | None:
        """Before a step from ``s``: what the reference side will do on its own that the model (offering ``succ``)
        does not offer, or None."""
        return None


def seeded(walks: int, seed: int, only: frozenset[int] | None = None) -> Iterator[tuple[int, random.Random]]:
    """Walk ``w`` of ``walks`` (those in ``only``, if given) and its own random stream, seeded ``seed * 1000 + w``; a
    traced baseline (:mod:`.reach`) records each walk as its own segment."""
    rec = current()
    for w in range(walks):
        if only is not None and w not in only:
            continue
        if rec is not None:
            rec.segment(w)
        yield w, random.Random(seed * 1000 + w)


def choose(succ: Succ, rng: random.Random, fair_bias: float) -> tuple[Any, Any]:
    """One of the steps ``succ``; where some are the protocol's own (fair) and some not, the fair ones with
    probability ``fair_bias`` (longer walks, more answers, than perturbations at every step)."""
    fair = [x for x in succ if x[0].fair]
    if fair and len(fair) < len(succ) and rng.random() < fair_bias:
        succ = fair
    return succ[rng.randrange(len(succ))]


def run_walks(fam: Family[Any], walks: int, steps: int, seed: int, only: frozenset[int] | None = None) -> None:
    """``walks`` seeded random walks of up to ``steps`` steps, each from a new start of ``fam``; raises
    :class:`Divergence` at the first difference. ``only``: just these walks."""
    for w, rng in seeded(walks, seed, only):
        proto, s, mirror = fam.start()
        path: list[str] = []
        for _n in range(steps):
            succ = fam.successors(proto, s)
            why = fam.owed(proto, mirror, s, succ)
            if why is not None:
                raise Divergence(f"{fam.label} walk {w} (seed {seed}) after step {len(path)}: {why}; path "
                                 f"{' '.join(path)}")
            if not succ:
                break
            a, t = choose(succ, rng, fam.fair_bias)
            path.append(repr(a))
            try:
                fam.take(proto, mirror, s, a, t)
            except Divergence as e:
                raise Divergence(f"{fam.label} walk {w} (seed {seed}) step {len(path)} {path[-1]}: {e}; "
                                 f"path {' '.join(path)}") from None
            s = t


def explore(fam: Family[Any], limit: int | None = None) -> None:
    """Every step of every state of ``fam``'s instance (breadth first, each state once, up to ``limit`` states: the
    family's by default), taken with the mirror as some path to that state left it; raises :class:`Divergence` at
    the first difference."""
    proto, s0, m0 = fam.start()
    limit = fam.limit if limit is None else limit
    seen: dict[Hashable, None] = {fam.key(proto, s0): None}
    parent: dict[Hashable, tuple[Hashable, str]] = {}

    def path_to(s: Any, last: list[str]) -> str:
        names, at = last, fam.key(proto, s)
        while at in parent:
            at, name = parent[at]
            names.append(name)
        return " ".join(reversed(names))

    queue = deque([(s0, m0)])
    while queue and len(seen) < limit:
        s, mirror = queue.popleft()
        succ = fam.successors(proto, s)
        why = fam.owed(proto, mirror, s, succ)
        if why is not None:
            raise Divergence(f"{fam.label} (explored, {len(seen)} states): {why}; path {path_to(s, [])}")
        for a, t in succ:
            key = fam.key(proto, t)
            m = mirror.fork()
            try:
                fam.take(proto, m, s, a, t)
            except Divergence as e:
                raise Divergence(f"{fam.label} (explored, {len(seen)} states) {repr(a)}: {e}; path "
                                 f"{path_to(s, [repr(a)])}") from None
            if key not in seen:
                seen[key] = None
                parent[key] = (fam.key(proto, s), repr(a))
                queue.append((t, m))


def check(family: Callable[..., Family[Any]], job: tuple[Any, ...], only: frozenset[int] | None = None) -> str | None:
    """A killer's run of ``job`` with the family ``family(*job[:7])``: its walks (or those in ``only``) or, with no
    walks, its instance explored; a divergence as the check's failure, else None."""
    try:
        *inst, walks, steps = job
        fam = family(*inst)
        if walks == 0:
            explore(fam)
        else:
            run_walks(fam, walks, steps, fam.seed, only)
    except Divergence as e:
        return str(e)
    return None
