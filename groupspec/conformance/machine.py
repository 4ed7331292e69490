"""The Hypothesis state machine: random schedules of joins, crashes, pauses, network faults and failovers.

Owns :func:`make_machine` (one rule-based state machine per variant, driving two harnesses when
asked), the simulator-seed strategy and :func:`pinned_constants` (what a seed generates does not depend
on the modules a process imported).

May import: ``groupspec.reference``, ``.harness``, ``.refinement``, ``.connect``.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterable, Iterator

from groupspec.model.core import (
    Id,
    MemberStatus as MS,
    Proc,
)
from groupspec.reference.classic import MemberState
from groupspec.reference.sim import NetworkConfig

from .refinement import ConformanceFailure, MODEL_PARTITIONS, REBALANCE_MS, SESSION_MS, VARIANTS
from .harness import Harness


# --------------------------------------------------------------------------------------------------
# The Hypothesis state machine
# --------------------------------------------------------------------------------------------------
NETWORKS: dict[str, NetworkConfig] = {
    "delay": NetworkConfig(1, 400),
    "duplicate": NetworkConfig(1, 20, duplicate=0.3),
    "reorder": NetworkConfig(1, 50, reorder=0.3),
    "loss": NetworkConfig(1, 10, loss=0.05),
}
SLOW_START = NetworkConfig(1, 400, duplicate=0.3)  # start_slow: slow and duplicating


SEED_DIGITS = 6  # base-64 digits of a simulator seed
SEED_DIGIT_MAX = 63


def _seed_from_digits(digits: tuple[int, ...]) -> int:
    return sum(d << (6 * k) for k, d in enumerate(digits)) % 2**32


def simulator_seeds() -> Any:
    """The strategy for a simulator seed (0 .. 2**32-1), drawn as six base-64 digits.

    Why not ``st.integers(0, 2**32 - 1)``: Hypothesis substitutes, for a small share of integer
    draws, a constant it collected from the source of every *local* module in ``sys.modules``
    (``hypothesis.internal.constants_ast``: integer literals of magnitude 100 or more). Which modules a
    process has imported (the CLI, other test modules, a script's ``__main__``) then changes the pool
    and with it every later draw, so a derandomized run, or a run with a given ``--hypothesis-seed``,
    depended on the process's history (``forget_pending_member`` was caught after 18 examples in a
    plain process and not within 229 after ``import groupspec.cli``). Every other draw of the state
    machine ranges below 100 (rule choice, ``sampled_from`` indices), where no collected constant is
    permitted; drawing the seed as digits below 64 keeps it so. ``test_generation_ignores_imports``
    checks it.
    """
    from hypothesis import strategies as st

    digit = st.integers(0, SEED_DIGIT_MAX)
    return st.tuples(*([digit] * SEED_DIGITS)).map(_seed_from_digits)


@contextlib.contextmanager
def pinned_constants() -> Iterator[None]:
    """Run Hypothesis with an empty pool of *local* constants (restored afterwards).

    Hypothesis substitutes, for a share of integer draws, constants collected from the source of every
    local module in ``sys.modules`` (see :func:`simulator_seeds`). Keeping our own draws below 100 is
    not enough: a stateful run also draws its swarm-testing threshold (``FeatureFlags``: an integer
    0..254), which a local constant between 100 and 254 can replace, and with it which rules the
    example may use. So what a run generated depended on which modules the process had imported
    (in a pytest worker, on which tests ran before: the harness tests import the explorer and the
    timeline printer). Here the local pool is pinned empty for the duration of the run, and the
    permitted-constants cache cleared on the way in and out; the global constants stay. If a
    Hypothesis release renames these internals this is a no-op, and
    ``test_generation_ignores_imports`` fails."""
    try:
        from hypothesis.internal.conjecture import providers as _p
        empty = type(_p._local_constants)()
        getter = _p._get_local_constants
        cache = _p.CONSTANTS_CACHE
    except (ImportError, AttributeError, TypeError):  # pragma: no cover - other Hypothesis internals
        yield
        return
    _p._get_local_constants = lambda: empty
    cache.cache.clear()
    try:
        yield
    finally:
        _p._get_local_constants = getter
        cache.cache.clear()


def run_machine(machine: type, settings: Any) -> None:
    """``run_state_machine_as_test`` with the local constants pinned (:func:`pinned_constants`)."""
    from hypothesis.stateful import run_state_machine_as_test

    with pinned_constants():
        run_state_machine_as_test(machine, settings=settings)


def make_machine(
    variant: str,
    consumer_faults: Iterable[str] = (),
    coordinator_faults: Iterable[str] = (),
    members: int = 3,
    partitions: int | None = None,
    counter: list[int] | None = None,
    paired: bool = False,
    slow_starts: bool = False,
    topics: int = 1,
) -> type:
    """A ``RuleBasedStateMachine`` class driving one :class:`Harness` per example.

    Rules: a member starts (static or dynamic, as the variant says), closes, crashes, pauses past its
    session timeout and comes back (and, in ``pause_then_commit``, commits as it comes back: a zombie's
    or a missed rebalance's stale commit; ``missed_rebalance``: the group settles, a member sleeps
    while a partition is added, then commits); a partition is added; with ``topics=2`` a member changes its
    subscription (drops or takes back the second topic); the network delays, duplicates, reorders or
    loses messages for a while; time advances (timers fire); the coordinator fails over; a group
    metadata write fails; ``quiesce``. Every example ends with a ``quiesce``. ``partitions``: how many
    exist at the start (default: the variant's ``start_partitions`` with one topic, 3 with two; the
    model's instance has :data:`MODEL_PARTITIONS`). ``counter[0]`` counts
    the examples run (for the mutation table). ``paired``: every rule also drives the correct reference
    on the same schedule (mutation runs). ``slow_starts``: the ``start_slow`` rule (several members
    start on a slow duplicating network) is generated; only paired mutation runs use it, because on the
    correct reference it still meets abstraction edge cases (a pending member id whose process died),
    see docs/conformance.md."""
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

    names = [f"c{i + 1}" for i in range(members)]
    # two topics start with 3 of the 4 partitions (t-0, t-1, u-0): each topic has one at least
    start = partitions if partitions is not None else (VARIANTS[variant].start_partitions if topics == 1 else 3)
    cfaults = frozenset(consumer_faults)
    kfaults = frozenset(coordinator_faults)
    box = counter if counter is not None else [0]

    class Conformance(RuleBasedStateMachine):
        """With ``paired``, every rule also drives a second harness running the correct reference on
        the same schedule; an example on which the correct reference fails is rejected, so a mutant
        counts as caught only where the correct reference passes."""

        def __init__(self) -> None:
            super().__init__()
            self.hs: list[Harness] = []

        @property
        def h(self) -> Harness:
            return self.hs[0]

        def _each(self, fn: Any, teardown: bool = False) -> None:
            from hypothesis import assume

            for k in reversed(range(len(self.hs))):  # the correct reference (last) first
                try:
                    fn(self.hs[k])
                except ConformanceFailure:
                    if k == len(self.hs) - 1 and len(self.hs) > 1:
                        # the correct reference fails on this schedule too: not the mutant's doing
                        if teardown:
                            return  # too late to reject the example: it simply does not count
                        assume(False)
                    raise

        @initialize(seed=simulator_seeds())
        def boot(self, seed: int) -> None:
            box[0] += 1
            self.hs = [Harness(variant, members, start, MODEL_PARTITIONS, seed, cfaults, kfaults, topics=topics)]
            if paired:
                self.hs.append(Harness(variant, members, start, MODEL_PARTITIONS, seed, topics=topics))
            print(f"conformance example: variant {variant}, simulator seed {seed}")

            def boot_one(h: Harness) -> None:
                for n in names:
                    _start(h, n)
                    h.run_for(300)
            self._each(boot_one)

        @rule(n=st.sampled_from(names))
        def start(self, n: str) -> None:
            self._each(lambda h: _maybe_start(h, n))

        @precondition(lambda self: slow_starts)
        @rule(ns=st.lists(st.sampled_from(names), min_size=1, max_size=members, unique=True))
        def start_slow(self, ns: list[str]) -> None:
            """Members (re)start together while messages are slow and duplicated (two-step joins take
            long): those still running close first, and the group has a moment to notice."""
            def go(h: Harness) -> None:
                running = [n for n in ns if _alive(h, n)]
                if any(_static_leader_unnoticed(h, n) for n in running):
                    return  # known gap 3, as for close and crash
                for n in running:
                    h.act("close", n)
                if running:
                    h.run_for(1000)
                h.act("network", config=SLOW_START)
                for n in ns:
                    _maybe_start(h, n)
                h.run_for(1500)
                h.act("network", config=NetworkConfig())
            self._each(go)

        @rule(n=st.sampled_from(names))
        def close(self, n: str) -> None:
            self._each(lambda h: h.act("close", n) if _alive(h, n) and not _static_leader_unnoticed(h, n) else None)

        @rule(n=st.sampled_from(names))
        def crash(self, n: str) -> None:
            self._each(lambda h: h.act("crash", n) if _alive(h, n) and not _static_leader_unnoticed(h, n) else None)

        @rule(n=st.sampled_from(names), ms=st.sampled_from([2000, REBALANCE_MS + 2000, SESSION_MS + 3000]))
        def pause(self, n: str, ms: int) -> None:
            def go(h: Harness) -> None:
                c = h.state.clients[h.slot[n]]
                if _alive(h, n) and c.proc == Proc.UP and c.id == Id.CURRENT and not _long_static_leader_pause(h, n, ms):
                    h.act("pause", n, duration_ms=ms)
            self._each(go)

        @rule(n=st.sampled_from(names), ms=st.sampled_from([REBALANCE_MS + 2000, SESSION_MS + 3000]))
        def pause_then_commit(self, n: str, ms: int) -> None:
            """A GC pause past the rebalance (or the session) timeout, and the application's commitAsync
            as the first thing when it ends (queued now, it runs before the process's own timers): by
            then the group may have moved on without it (a static member is kept across a rebalance it
            missed: its generation is stale), or removed it."""
            def go(h: Harness) -> None:
                c = h.state.clients[h.slot[n]]
                if _alive(h, n) and c.proc == Proc.UP and c.id == Id.CURRENT and not _long_static_leader_pause(h, n, ms):
                    h.act("pause", n, duration_ms=ms)
                    h.act("commit", n)
            self._each(go)

        @rule(n=st.sampled_from(names))
        def missed_rebalance(self, n: str) -> None:
            """The group settles (``quiesce``); then ``n`` sleeps in a GC pause just short of its session
            timeout while a partition is added (where ``add_partition`` is generated): the group
            rebalances without it (a dynamic member is removed at the rebalance timeout, a static one
            kept with its generation left behind), and its commitAsync is the first thing it does when
            it wakes. Unless ``n`` leads the group: then nobody notices the partition until it wakes."""
            def go(h: Harness) -> None:
                h.quiesce()
                if _alive(h, n):
                    h.act("pause", n, duration_ms=SESSION_MS - 500)
                    h.act("commit", n)
                    if not (h.variant.static and h.state.group.leader == h.slot[n]):
                        # (a static leader waking past its max.poll.interval rejoins like a restart: gap 3)
                        _add_partition(h)
                    h.run_for(SESSION_MS)
            self._each(go)

        @precondition(lambda self: topics > 1)
        @rule(n=st.sampled_from(names))
        def subscribe(self, n: str) -> None:
            """The member drops the last topic from its subscription, or takes it back (the model's
            ChangeSubscription: only a STABLE member with a current member id and no rejoin pending)."""
            def go(h: Harness) -> None:
                c = h.state.clients[h.slot[n]]
                p = h.sim.procs.get(n)
                if not (_alive(h, n) and c.proc == Proc.UP and c.status == MS.STABLE and c.id == Id.CURRENT
                        and not c.rejoin and c.inbox is None and h.track[n].frozen is None):
                    return
                k = p.consumer
                if k.state is not MemberState.STABLE or k.rejoin_needed or any(
                        f.kind in ("join", "sync") for f in k.inflight.values()):
                    return
                last = h.topics[-1]
                new = tuple(t for t in h.topics if t != last) if last in k.config.topics else h.topics
                h.subscriptions[n] = new
                h.act("subscribe", n, topics=new)
            self._each(go)

        @rule()
        def add_partition(self) -> None:
            self._each(_add_partition)

        @rule(kind=st.sampled_from(sorted(NETWORKS)), ms=st.sampled_from([500, 3000]))
        def network(self, kind: str, ms: int) -> None:
            def go(h: Harness) -> None:
                h.act("network", config=NETWORKS[kind])
                h.rules[-1] = f"network {kind} for {ms} ms"
                h.run_for(ms)
                h.act("network", config=NetworkConfig())
                h.rules[-1] = "network healed"
            self._each(go)

        @rule(ms=st.sampled_from([50, 500, 2000, 8000]))
        def advance(self, ms: int) -> None:
            def go(h: Harness) -> None:
                h.rules.append(f"advance {ms} ms")
                h.run_for(ms)
            self._each(go)

        @rule()
        def failover(self) -> None:
            self._each(lambda h: h.act("failover"))

        @rule(error=st.sampled_from(["NOT_ENOUGH_REPLICAS", "NOT_LEADER_OR_FOLLOWER"]))
        def store_fails(self, error: str) -> None:
            self._each(lambda h: h.act("store_fails", error=error))

        @rule()
        def quiesce(self) -> None:
            self._each(lambda h: h.quiesce())

        def teardown(self) -> None:
            if self.hs:
                self._each(lambda h: h.quiesce(), teardown=True)

    def _add_partition(h: Harness) -> None:
        last = h.topics[-1]  # the model adds the last partition: the last topic grows
        count = h.sim.topic_counts[last]
        if h.variant.static and not (all(_alive(h, n) for n in names) and all(
                c.status == MS.STABLE and c.id == Id.CURRENT for c in h.state.clients)
                and all(_answered(h, n) for n in names)):
            # Known finding (docs/conformance.md, gap 3): a static leader that restarts after the
            # topic grew takes the stored assignment (skip_assignment) and never notices the new
            # partition; the model's leader does. Not generated (nor while a member is still
            # (re)joining: a restarted one may be that leader), so the suite checks the rest.
            # alpha shows a restarted static member STABLE once its JoinGroup is handled, before the
            # answer (skip_assignment for the leader) reaches it: _answered (--hypothesis-seed=15, ci).
            return
        if count < h.topic_max[last]:
            h.act("partitions", topic=last, count=count + 1)

    def _answered(h: Harness, n: str) -> bool:
        """The running process ``n`` is STABLE at the reference, with no JoinGroup/SyncGroup in flight."""
        k = h.sim.procs[n].consumer
        return k.state is MemberState.STABLE and not any(f.kind in ("join", "sync") for f in k.inflight.values())

    def _long_static_leader_pause(h: Harness, n: str, ms: int) -> bool:
        """A pause past max.poll.interval of the static leader while a partition is in no stored
        assignment: it wakes, resets and rejoins like a restarted static member (gap 3)."""
        return ms > REBALANCE_MS and _static_leader_unnoticed(h, n)

    def _static_leader_unnoticed(h: Harness, n: str) -> bool:
        """Known finding (docs/conformance.md, gap 3), the other way round: the static leader ``n`` would
        stop while a partition exists that no stored assignment has (it was added and the group has not
        rebalanced since). Restarted, it takes the stored assignment (skip_assignment) with a snapshot
        of the metadata as it is then, and never notices that partition; the model's leader does. Not
        generated, like ``add_partition`` while a static member is down."""
        if not h.variant.static:
            return False
        g = h.state.group
        covered = 0
        for r in g.records:
            if r is not None:
                covered |= r.assignment
        # the partitions that exist now (while the group is loading after a failover, alpha keeps the
        # group as last seen, with the partitions of then)
        return g.leader == h.slot[n] and covered != h._existing()

    def _alive(h: Harness, n: str) -> bool:
        p = h.sim.procs.get(n)
        return p is not None and p.alive

    def _start(h: Harness, n: str) -> None:
        h.act("start", n, config=h.consumer_config(n), faults=cfaults if h is not None and h.consumer_faults else frozenset())

    def _maybe_start(h: Harness, n: str) -> None:
        i = h.slot[n]
        # The model restarts a dynamic member only once its old member id is gone.
        if _alive(h, n) or (not h.variant.static and h.state.group.records[i] is not None):
            return
        view = h._group_view()
        if view is not None and not h.variant.static and any(h._member_slot(m) == i for m in view.members):
            return
        _start(h, n)

    if VARIANTS[variant].connect:
        from groupspec.conformance.connect import with_connect_rules
        Conformance = with_connect_rules(Conformance, names, _alive, _maybe_start,  # type: ignore[misc]
                                         keep_work=VARIANTS[variant].keep_work)
    Conformance.__name__ = f"Conformance_{variant.replace('-', '_')}"
    return Conformance

