"""The migration family's full campaign run (issue 30; docs/specification.md, "Migration survivors, full family run"):
each mutant judged equivalent is shown to be so on the reachable state graphs of small instances (a model change that
makes one observable fails here, and it must be judged again), and each check added for a survivor passes on the
unchanged model and kills the mutant it was written for.
"""
from __future__ import annotations

import re
from collections import deque

import pytest

from groupspec.specmut import generate, run_one
from groupspec.specmut.campaign import baseline
from groupspec.specmut.loader import applied

FAULTS = frozenset({"join", "leave", "crash", "timeout", "zombie"})
BOUNDS = ((2, 2, 2), (1, 2, 3), (2, 3, 2))  # members, partitions, budget


def _mutant(name: str):  # noqa: ANN202
    return next(m for m in generate(["migration"]) if m.name == name)


def _graph(members: int, partitions: int, budget: int) -> tuple[set[str], set[tuple[str, str, str]]]:
    """The reachable states and steps of classic-to-consumer (as text: a mutant's model has its own classes)."""
    from groupspec.model import Config, make

    proto = make("classic-to-consumer", Config(members=members, partitions=partitions, budget=budget,
                                               assignor="uniform", faults=FAULTS))
    init = proto.init_states()
    seen, edges, todo = set(init), set(), deque(init)
    while todo:
        s = todo.popleft()
        for a, t in proto.successors(s):
            edges.add((repr(s), repr(a), repr(t)))
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return {repr(s) for s in seen}, edges


def _unbudgeted(text: str) -> str:
    return re.sub(r"budget=\d+|, \d+\)$", "", text)


@pytest.mark.parametrize("name, added", [
    ("migration.ClassicToConsumer.successors:drop-guard#2", "none"),
    ("migration.ClassicToConsumer.successors:drop-term#4", "none"),
    ("migration.ClassicToConsumer.successors:off-by-one#1", "none"),
    ("migration.ClassicToConsumer.successors:drop-guard#3", "self-loops"),
    ("migration.ClassicToConsumer.successors:drop-guard#4", "self-loops"),
    ("migration.ClassicToConsumer.successors:drop-guard#16", "budget-only"),
    ("migration.ClassicToConsumer.successors:drop-term#15", "budget-only"),
    ("migration.ClassicToConsumer.successors:drop-term#10", "perturbations"),
    ("migration.ClassicToConsumer._remove:drop-term#2", "none"),
])
def test_equivalent_successors_mutants_reach_the_same_states(name: str, added: str) -> None:
    for bound in BOUNDS:
        states, edges = _graph(*bound)
        assert len(states) > 100, bound  # the instance was explored, not just its initial state
        with applied(_mutant(name)):
            m_states, m_edges = _graph(*bound)
        assert m_states == states, bound
        assert edges <= m_edges, bound  # nothing the model does is lost
        extra = m_edges - edges
        if added == "none":
            assert not extra, (bound, sorted(extra)[:1])
        elif added == "self-loops":
            assert all(a == b for a, _s, b in extra), bound
        elif added == "budget-only":
            assert all(a != b and _unbudgeted(a) == _unbudgeted(b) for a, _s, b in extra), bound
        else:  # a process that is no member restarted: a Start step only
            assert all(step.startswith("Start(") for _a, step, _b in extra), bound


def test_no_running_consumer_member_at_epoch_zero() -> None:
    # live_member:off-by-one#0 (and successors:drop-term#4, off-by-one#1): the case the mutants add never occurs
    from groupspec.model import Config, Proc, make

    for members, partitions, budget in BOUNDS + ((3, 2, 1), (2, 2, 3)):
        proto = make("classic-to-consumer", Config(members=members, partitions=partitions, budget=budget,
                                                   assignor="uniform", faults=FAULTS))
        seen = set(proto.init_states())
        todo = deque(seen)
        while todo:
            s = todo.popleft()
            for i, c in enumerate(s.clients):
                if c.proc != Proc.DOWN and not c.classic and proto.is_member(s, i):
                    assert c.epoch > 0, (i, s)
            for _a, t in proto.successors(s):
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        assert len(seen) > 100


def test_generation_violation_branches_the_equivalents_drop_are_implied() -> None:
    # generation_violation:drop-guard#1: a classic state's consumer group is the empty one; drop-term#15: no step
    # changes a process's protocol and leaves it a positive epoch
    from groupspec.model import Config, make
    from groupspec.model.migration import Kind, Phase

    for members, partitions, budget in BOUNDS + ((3, 2, 1),):
        proto = make("classic-to-consumer", Config(members=members, partitions=partitions, budget=budget,
                                                   assignor="uniform", faults=FAULTS))
        seen = set(proto.init_states())
        todo, changes = deque(seen), 0
        while todo:
            s = todo.popleft()
            if s.kind == Kind.CLASSIC:
                assert s.group == proto._empty_consumer, s
            for c in s.clients:  # _converged_consumer:drop-term#2: a consumer-protocol client's phase is STABLE
                assert c.classic or c.phase == Phase.STABLE, s
            for _a, t in proto.successors(s):
                for ca, cb in zip(s.clients, t.clients):
                    if ca.classic != cb.classic:
                        changes += 1
                        assert cb.epoch <= 0, (s, t)
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
        assert changes > 0 and len(seen) > 100  # processes did change protocol


@pytest.mark.parametrize("name, killer", [
    # an online upgrade that deletes a classic group with members: the group's epoch goes down at a conversion, which
    # only the emptied-group exemption's first conjunct (a classic group with no member) refuses to excuse
    ("migration.ClassicToConsumer.generation_violation:drop-term#1", "broken:classic-to-consumer-upgrade-replaces 2m×2p b1"),
    ("migration.ClassicToConsumer.generation_violation:drop-term#2", "broken:classic-to-consumer-upgrade-replaces 2m×2p b1"),
    # an empty consumer group started afresh: the epoch goes down without a change of type
    ("migration.ClassicToConsumer.generation_violation:drop-term#7",
     "broken:classic-to-consumer-empty-group-reset 1m×2p timeout b2"),
    # a consumer member's record rolled back: only the consumer branch's member-epoch check sees it
    ("migration.ClassicToConsumer.generation_violation:negate-guard#1", "broken:classic-to-consumer-epoch-rollback 2m×2p b2"),
    ("migration.ClassicToConsumer.generation_violation:negate-guard#3", "broken:classic-to-consumer-epoch-rollback 2m×2p b2"),
    # a fenced consumer-protocol client rejoins at epoch 0 (KIP-848): not an epoch going down
    ("migration.ClassicToConsumer.generation_violation:off-by-one#3", "model:classic-to-consumer 1m×2p b3"),
    # an empty consumer group whose processes are all down is converged (nothing is left to do)
    ("migration.ClassicToConsumer._converged_consumer:drop-term#6", "model:classic-to-consumer 1m×2p b3"),
    # a classic member removed while paused keeps its partitions until its next request: a zombie, caught by fencing
    ("migration.ClassicToConsumer._classic_remove:drop-guard#1",
     "broken:classic-to-consumer-unfenced-classic-commits 2m×2p zombie b1"),
    ("migration.ClassicToConsumer._classic_remove:drop-term#1",
     "broken:classic-to-consumer-unfenced-classic-commits 2m×2p zombie b1"),
    # the classic group's commits against the reference classic coordinator: ILLEGAL_GENERATION for a member behind
    # the generation, REBALANCE_IN_PROGRESS while COMPLETING_REBALANCE
    ("migration.ClassicToConsumer.commit_accepted:drop-term#0", "conformance:migration-commits 2m×2p b2"),
    ("migration.ClassicToConsumer.commit_accepted:drop-term#1", "conformance:migration-commits 2m×2p b2"),
    # a join phase that keeps the generation: the replacing upgrade no longer lowers the group's epoch
    ("migration.ClassicToConsumer._maybe_complete:off-by-one#0", "broken:classic-to-consumer-upgrade-replaces 2m×2p b1"),
    # perturbations of processes that are not running: a paused or crashed process made to send a request (the
    # conformance driver refuses that), or a crashed one paused and resumed (never converges)
    ("migration.ClassicToConsumer.successors:drop-term#2", "conformance:migration 2m×2p 200×30"),
    ("migration.ClassicToConsumer.successors:drop-term#19", "model:classic-to-consumer 1m×2p b3"),
    # the classic phase mirrored by the reference classic coordinator (migration_classic.py): which JoinGroup leaves a
    # member with no stored assignment (Kafka's EMPTY_ASSIGNMENT, which refuses the upgrade), and a classic client
    # that heartbeats while its JoinGroup is parked (Kafka's heartbeat thread is off until the join is answered)
    ("migration.ClassicToConsumer._join:negate-guard#3", "conformance:migration-classic 2m×2p b2"),
    ("migration.ClassicToConsumer._join:drop-guard#3", "conformance:migration-classic 2m×2p b2"),
    ("migration.ClassicToConsumer.successors:drop-guard#8", "conformance:migration-classic 2m×2p b2"),
])
def test_checks_added_for_the_migration_survivors_kill_them(name: str, killer: str) -> None:
    base = baseline(only=[killer], trace=False)
    assert base[killer].get("failure") is None and "error" not in base[killer], base[killer]
    row = run_one(_mutant(name), base)
    assert row["status"] == "killed" and row["killer"] == killer, row


def test_the_classic_phase_mirror_reaches_upgrades_and_says_what_it_steps_around() -> None:
    """The unchanged model passes the mirror with most classic states checked against the reference coordinator,
    upgrade verdicts compared, and the paths it stops mirroring counted (not silently dropped)."""
    from groupspec.specmut.migration_classic import MIGRATION_CLASSIC_JOBS, run

    res = run(MIGRATION_CLASSIC_JOBS[0])
    assert res["failure"] is None, res
    assert res["mirrored"] > 1000 and res["upgrades"] > 100 and 0 < res["abstractions"]["leader"] < 100, res


def test_the_classic_phase_mirror_compares_the_upgrade_verdict() -> None:
    """A model whose upgrade ignores a member with no stored assignment converts where the reference (whose
    ``MixedConsumerGroup.upgrade`` cannot parse the empty bytes) refuses: the mirror's upgrade comparison sees it."""
    from groupspec.model import migration
    from groupspec.specmut.migration_classic import MIGRATION_CLASSIC_JOBS, run

    original = migration.ClassicToConsumer._upgrade

    def lenient(self, s):  # noqa: ANN001, ANN202
        return original(self, s.but(classic=s.classic.but(unsynced=0)))

    migration.ClassicToConsumer._upgrade = lenient  # type: ignore[method-assign]
    try:
        res = run(MIGRATION_CLASSIC_JOBS[0])
    finally:
        migration.ClassicToConsumer._upgrade = original  # type: ignore[method-assign]
    assert res["failure"] is not None and "the model converts it, the reference refuses it" in res["failure"], res
