"""Kafka Connect's incremental cooperative assignor (KIP-415, ``IncrementalCooperativeAssignor``), as a pure function.

Theory of operation
-------------------
Kafka's leader keeps state between rounds inside the assignor object.  Here that state is a value,
:class:`LeaderState`, and one rebalance round is the pure function::

    result = assign_round(workers, configured, state, generation=..., last_completed_generation=...,
                          now=..., max_delay=...)
    result.assignments[worker]   # WorkerAssignment: connectors/tasks to start and to revoke, delay
    result.state                 # the LeaderState to pass to the next round

Inputs: ``workers`` maps each worker (member id) to what it reports running (:class:`Running`:
connector names and tasks as ``(connector, index)``); ``configured`` maps each configured connector
to its task count (the config snapshot); ``generation`` is the generation being assigned and
``last_completed_generation`` the worker coordinator's last completed one; ``now`` and ``max_delay``
(``scheduled.rebalance.max.delay.ms``, default 300000) are in milliseconds.

One round (coordinator.md §6, [ICA] ``performTaskAssignment``):

1. The remembered previous assignment is dropped if it is not from the last completed generation.
   If the previous round revoked something that some worker still reports running, the previous
   assignment is replaced by what is running now.
2. Sets: configured, active (union of reports), deleted = previous − configured, duplicated (run
   by two or more workers), lost = previous − active − deleted, created = configured − previous −
   active.
3. Deleted items and every copy of a duplicated item are revoked from whoever runs them.
4. Lost items (``handleLostAssignments``): nothing lost and no revocation last round → clear the
   delay; no rebalance scheduled and every previous member present → reassign now (someone missed
   an assignment); ``max_delay == 0`` → reassign now (KAFKA-15693); scheduled time reached → give
   the lost items round-robin to the *candidate* workers (those that were empty while the delay
   ran, normally the returning ones) or, if none is present, treat them as new; otherwise remember
   the empty workers as candidates, set ``delay`` to the time left (or the full ``max_delay`` when
   nothing was scheduled) and keep the lost items unassigned.
5. With no delay active, load-balancing revocations: every worker may keep at most ⌊n/w⌋ of the
   connectors (and of the tasks), the first ``n mod w`` over-loaded workers in walk order one more.
   If the previous round also revoked for balance, the revocations are postponed with the backoff
   ``min(40^k ms, max_delay)`` for the k-th such round in a row (KAFKA-12495) instead.
6. New items (created, then lost-to-reassign) go to the least-loaded workers (ties by worker id),
   connectors and tasks separately.
7. Every worker gets its newly assigned items, its revocations and the same ``delay``.

Walk orders where Kafka uses a ``HashMap`` (the workers' load list) follow Java's HashMap
iteration order of worker ids (see :func:`groupspec.reference.assignors._sticky_problem.java_hashmap_order`);
item orders follow Kafka's ``TreeSet`` orders (connector names in Java string order, tasks by
connector then index), so the result is a deterministic function of the inputs.

:func:`apply_assignment` is the worker side ([DHz] ``handleRebalanceCompleted``): stop the revoked,
start the new.  A worker that was told to revoke something re-joins at once; one that got
``delay > 0`` re-joins after the delay.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Hashable, Iterable, Mapping, TypeVar

from ._frame import java_string_key
from ._sticky_problem import java_hashmap_order

Task = tuple[str, int]

__all__ = [
    "DEFAULT_MAX_DELAY_MS",
    "LeaderState",
    "RoundResult",
    "Running",
    "Task",
    "WorkerAssignment",
    "apply_assignment",
    "assign_round",
    "backoff_ms",
]

DEFAULT_MAX_DELAY_MS = 300_000


def _ckey(c: str) -> bytes:
    return java_string_key(c)


def _tkey(t: Task) -> tuple[bytes, int]:
    return (java_string_key(t[0]), t[1])


@dataclass(frozen=True)
class Running:
    """What one worker reports running (its current assignment, from its JoinGroup metadata)."""

    connectors: frozenset[str] = frozenset()
    tasks: frozenset[Task] = frozenset()

    @staticmethod
    def of(connectors: Iterable[str] = (), tasks: Iterable[Task] = ()) -> "Running":
        return Running(frozenset(connectors), frozenset((c, int(i)) for c, i in tasks))

    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks


@dataclass(frozen=True)
class WorkerAssignment:
    """The incremental assignment one worker receives in SyncGroup."""

    connectors_to_start: tuple[str, ...] = ()
    tasks_to_start: tuple[Task, ...] = ()
    connectors_to_revoke: tuple[str, ...] = ()
    tasks_to_revoke: tuple[Task, ...] = ()
    delay: int = 0

    @property
    def revokes_anything(self) -> bool:
        return bool(self.connectors_to_revoke or self.tasks_to_revoke)


@dataclass(frozen=True)
class LeaderState:
    """What Kafka's ``IncrementalCooperativeAssignor`` remembers between rounds."""

    previous_connectors: frozenset[str] = frozenset()
    previous_tasks: frozenset[Task] = frozenset()
    previous_generation: int = -1
    previous_members: frozenset[str] = frozenset()
    revoked_connectors: frozenset[str] = frozenset()  # previousRevocation
    revoked_tasks: frozenset[Task] = frozenset()
    revoked_in_previous: bool = False
    candidate_workers: tuple[str, ...] = ()
    scheduled_rebalance: int = 0  # absolute time in ms; 0 = none
    delay: int = 0
    successive_revoking_rounds: int = 0


@dataclass(frozen=True)
class RoundResult:
    assignments: dict[str, WorkerAssignment]
    state: LeaderState
    lost_connectors: tuple[str, ...] = ()
    lost_tasks: tuple[Task, ...] = ()


def backoff_ms(k: int, max_delay: int) -> int:
    """KAFKA-12495 backoff for the k-th successive balancing revocation: ``min(40^k, max_delay)``; 0 if max_delay is 0."""
    if max_delay == 0:
        return 0
    return int(min(40 ** k, max_delay))


@dataclass
class _Load:
    """One worker's next assignment while the round is being computed (Kafka's ``WorkerLoad``)."""

    worker: str
    connectors: list[str] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks


@dataclass
class _Round:
    """Mutable working state of one round; turned back into a LeaderState at the end."""

    s: LeaderState
    now: int
    max_delay: int
    previous_connectors: set[str]
    previous_tasks: set[Task]
    delay: int
    scheduled: int
    revoked_in_previous: bool
    candidates: list[str]
    successive: int


def _configured_items(configured: Mapping[str, int]) -> tuple[set[str], set[Task]]:
    connectors: set[str] = set()
    tasks: set[Task] = set()
    for c, n in configured.items():
        if not isinstance(c, str) or not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"configured connector {c!r}: task count must be a non-negative integer, got {n!r}")
        connectors.add(c)
        tasks.update((c, i) for i in range(n))
    return connectors, tasks


def assign_round(workers: Mapping[str, Running], configured: Mapping[str, int], state: LeaderState, *,
                 generation: int, last_completed_generation: int, now: int,
                 max_delay: int = DEFAULT_MAX_DELAY_MS) -> RoundResult:
    """One leader-side round of Connect's incremental cooperative assignment (see the module docstring)."""
    if not workers:
        raise ValueError("a Connect rebalance needs at least one worker (the leader)")
    if max_delay < 0:
        raise ValueError(f"scheduled.rebalance.max.delay.ms must be >= 0, got {max_delay}")
    order = [list(workers)[i] for i in java_hashmap_order(list(workers))]
    r = _Round(s=state, now=now, max_delay=max_delay, previous_connectors=set(state.previous_connectors),
               previous_tasks=set(state.previous_tasks), delay=state.delay, scheduled=state.scheduled_rebalance,
               revoked_in_previous=state.revoked_in_previous, candidates=list(state.candidate_workers),
               successive=state.successive_revoking_rounds)
    if state.previous_generation != last_completed_generation:
        r.previous_connectors, r.previous_tasks = set(), set()

    conf_c, conf_t = _configured_items(configured)
    active_c = set().union(*(w.connectors for w in workers.values()))
    active_t: set[Task] = set().union(*(w.tasks for w in workers.values()))
    if state.revoked_connectors & active_c or state.revoked_tasks & active_t:
        r.previous_connectors, r.previous_tasks = set(active_c), set(active_t)

    deleted_c, deleted_t = r.previous_connectors - conf_c, r.previous_tasks - conf_t
    dup_c = _duplicated(w.connectors for w in workers.values())
    dup_t = _duplicated(w.tasks for w in workers.values())
    lost_c = r.previous_connectors - active_c - deleted_c
    lost_t = r.previous_tasks - active_t - deleted_t
    created_c = conf_c - r.previous_connectors - active_c
    created_t = conf_t - r.previous_tasks - active_t

    current = {w: (workers[w].connectors - deleted_c, workers[w].tasks - deleted_t) for w in order}
    revoke: dict[str, tuple[set[str], set[Task]]] = {w: (set(), set()) for w in order}
    for w in order:
        rc, rt = revoke[w]
        rc.update(workers[w].connectors & (deleted_c | dup_c))
        rt.update(workers[w].tasks & (deleted_t | dup_t))
    loads = [_Load(w, sorted(workers[w].connectors - revoke[w][0], key=_ckey), sorted(workers[w].tasks - revoke[w][1], key=_tkey))
             for w in order]

    reassign_c, reassign_t = _handle_lost(r, lost_c, lost_t, loads)

    if r.delay == 0:
        balance = _balancing_revocations(conf_c, conf_t, loads)
        if r.revoked_in_previous and balance:
            r.successive += 1
            r.delay = backoff_ms(r.successive, max_delay)
            if r.delay != 0:
                r.scheduled = now + r.delay
            else:
                _take(balance, revoke, loads)
        elif balance:
            _take(balance, revoke, loads)
            r.revoked_in_previous = True
        elif r.revoked_in_previous:
            r.revoked_in_previous = False
            r.successive = 0
    else:
        r.revoked_in_previous = False

    new_c = _ordered_union(sorted(created_c, key=_ckey), sorted(reassign_c, key=_ckey))
    new_t = _ordered_union(sorted(created_t, key=_tkey), sorted(reassign_t, key=_tkey))
    _spread(loads, new_c, lambda ld: ld.connectors)
    _spread(loads, new_t, lambda ld: ld.tasks)

    assignments: dict[str, WorkerAssignment] = {}
    next_c: set[str] = set()
    next_t: set[Task] = set()
    by_worker = {ld.worker: ld for ld in loads}
    for w in workers:
        ld = by_worker[w]
        cur_c, cur_t = current[w]
        rc, rt = revoke[w]
        next_c.update(ld.connectors)
        next_t.update(ld.tasks)
        assignments[w] = WorkerAssignment(
            connectors_to_start=tuple(c for c in ld.connectors if c not in cur_c),
            tasks_to_start=tuple(t for t in ld.tasks if t not in cur_t),
            connectors_to_revoke=tuple(sorted(rc, key=_ckey)),
            tasks_to_revoke=tuple(sorted(rt, key=_tkey)),
            delay=r.delay,
        )
    all_rc = set().union(*(rc for rc, _ in revoke.values()))
    all_rt: set[Task] = set().union(*(rt for _, rt in revoke.values()))
    new_state = LeaderState(
        previous_connectors=frozenset((next_c - all_rc) | lost_c),
        previous_tasks=frozenset((next_t - all_rt) | lost_t),
        previous_generation=generation,
        previous_members=frozenset(workers),
        revoked_connectors=frozenset(all_rc),
        revoked_tasks=frozenset(all_rt),
        revoked_in_previous=r.revoked_in_previous,
        candidate_workers=tuple(r.candidates),
        scheduled_rebalance=r.scheduled,
        delay=r.delay,
        successive_revoking_rounds=r.successive,
    )
    return RoundResult(assignments, new_state, tuple(sorted(lost_c, key=_ckey)), tuple(sorted(lost_t, key=_tkey)))


_H = TypeVar("_H", bound=Hashable)


def _duplicated(groups: Iterable[frozenset[_H]]) -> set[_H]:
    seen: set[_H] = set()
    dup: set[_H] = set()
    for g in groups:
        dup.update(seen & g)
        seen |= g
    return dup


def _ordered_union(first: list[_H], second: list[_H]) -> list[_H]:
    return list(dict.fromkeys(first + second))


def _reset_delay(r: _Round) -> None:
    r.candidates = []
    r.scheduled = 0
    r.delay = 0


def _handle_lost(r: _Round, lost_c: set[str], lost_t: set[Task], loads: list[_Load]) -> tuple[set[str], set[Task]]:
    """Kafka's ``handleLostAssignments``: returns the lost items to reassign as new ones now."""
    if not lost_c and not lost_t and not r.revoked_in_previous:
        _reset_delay(r)
        return set(), set()
    active = {ld.worker for ld in loads}
    if r.scheduled <= 0 and r.s.previous_members <= active:
        return set(lost_c), set(lost_t)
    if r.max_delay == 0:
        return set(lost_c), set(lost_t)
    if r.scheduled > 0 and r.now >= r.scheduled:
        by_worker = {ld.worker: ld for ld in loads}
        picked = [by_worker[w] for w in r.candidates if w in by_worker]
        reassign_c: set[str] = set()
        reassign_t: set[Task] = set()
        if picked:
            for i, c in enumerate(sorted(lost_c, key=_ckey)):
                picked[i % len(picked)].connectors.append(c)
            for i, t in enumerate(sorted(lost_t, key=_tkey)):
                picked[i % len(picked)].tasks.append(t)
        else:
            reassign_c, reassign_t = set(lost_c), set(lost_t)
        _reset_delay(r)
        r.revoked_in_previous = False
        return reassign_c, reassign_t
    for ld in loads:
        if ld.is_empty() and ld.worker not in r.candidates:
            r.candidates.append(ld.worker)
    if r.now < r.scheduled:
        diff = r.scheduled - r.now
        r.delay = min(diff, r.max_delay) if diff > 0 else 0
    else:
        r.delay = r.max_delay
    r.scheduled = r.now + r.delay
    return set(), set()


def _balancing_revocations(conf_c: set[str], conf_t: set[Task], loads: list[_Load]) -> dict[str, tuple[list[str], list[Task]]]:
    """Kafka's ``performLoadBalancingRevocations``: what to take from over-loaded workers."""
    if all(ld.is_empty() for ld in loads) or (not conf_c and not conf_t):
        return {}
    rc = _revocations(len(conf_c), loads, lambda ld: ld.connectors)
    rt = _revocations(len(conf_t), loads, lambda ld: ld.tasks)
    out: dict[str, tuple[list[str], list[Task]]] = {}
    for w in list(rc) + list(rt):
        out.setdefault(w, (rc.get(w, []), rt.get(w, [])))
    return out


def _revocations(total: int, loads: list[_Load], items: Callable[[_Load], list[Any]]) -> dict[str, list[Any]]:
    n = len(loads)
    floor, extras = divmod(total, n)
    sizes = [len(items(ld)) for ld in loads]
    at_min = sum(1 for s in sizes if s == floor)
    at_extra = sum(1 for s in sizes if s == floor + 1)
    if at_extra == extras and at_min + at_extra == n:
        return {}
    out: dict[str, list[Any]] = {}
    given_extra = 0
    for ld, size in zip(loads, sizes):
        if size <= floor:
            continue
        if given_extra < extras:
            given_extra += 1
            if size == floor + 1:
                continue
            cap = floor + 1
        else:
            cap = floor
        out[ld.worker] = list(items(ld))[: size - cap]
    return out


def _take(balance: dict[str, tuple[list[str], list[Task]]], revoke: dict[str, tuple[set[str], set[Task]]], loads: list[_Load]) -> None:
    by_worker = {ld.worker: ld for ld in loads}
    for w, (cs, ts) in balance.items():
        revoke[w][0].update(cs)
        revoke[w][1].update(ts)
        ld = by_worker[w]
        ld.connectors = [c for c in ld.connectors if c not in set(cs)]
        ld.tasks = [t for t in ld.tasks if t not in set(ts)]


def _spread(loads: list[_Load], items: list[Any], of: Callable[[_Load], list[Any]]) -> None:
    """Kafka's ``assignConnectors``/``assignTasks``: fill the least-loaded workers level by level."""
    if not items:
        return
    loads.sort(key=lambda ld: (len(of(ld)), java_string_key(ld.worker)))
    it = iter(items)
    remaining = len(items)
    first = loads[0]
    while remaining:
        low = len(of(first))
        upto = next((i for i, ld in enumerate(loads) if len(of(ld)) > low), len(loads))
        for ld in loads[:upto]:
            of(ld).append(next(it))
            remaining -= 1
            if not remaining:
                break


def apply_assignment(running: Running, assignment: WorkerAssignment) -> Running:
    """Worker side: stop the revoked, start the new."""
    return Running(
        (running.connectors - set(assignment.connectors_to_revoke)) | set(assignment.connectors_to_start),
        (running.tasks - set(assignment.tasks_to_revoke)) | set(assignment.tasks_to_start),
    )


def with_state(state: LeaderState, **changes: object) -> LeaderState:
    """A copy of ``state`` with some fields changed (tests use it to model a leader change)."""
    return replace(state, **changes)  # type: ignore[arg-type]
