"""The checker's own logic, on toy transition systems whose answers are known by hand.

Each case is a mutant of the checker's job: if the SCC fairness test, the deadlock test or the bound
were wrong, one of these would fail.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from groupspec.checker.explorer import Explorer
from groupspec.model.actions import Action
from groupspec.model.core import Config
from groupspec.model.spec import SpecBase


@dataclass(frozen=True, slots=True, repr=False)
class Go(Action):
    pass


@dataclass(frozen=True, slots=True, repr=False)
class Spin(Action):
    pass


@dataclass(frozen=True, slots=True, repr=False)
class Kick(Action):
    fair: ClassVar[bool] = False


class Toy(SpecBase):
    """States are ints; ``edges`` maps a state to (action, next) pairs; ``done`` are converged states. A ``Spec``:
    the explorer reads its properties from ``SpecBase``."""

    name = "toy"
    assignor_name = "none"
    symmetric = False
    has_generations = False
    cfg = Config(members=1, partitions=1)

    def __init__(self, edges, done, bad=()):
        self.edges = edges
        self.done = set(done)
        self.bad = set(bad)

    def init_states(self):
        return [0]

    def successors(self, s):
        return list(self.edges.get(s, []))

    def key(self, s):
        return s

    def step(self, s, a):
        return dict(self.successors(s))[a]

    def converged(self, s):
        return s in self.done

    # what the properties ask
    def live_ownership(self, s):
        return [(0, 1), (1, 1)] if s in self.bad else []

    def member_name(self, i):
        return f"m{i}"

    def partition_name(self, p):
        return f"p{p}"

    def commit_violation(self, s):
        return None

    def generation_violation(self, s, t):
        return None

    def initial_members(self):
        return 0

    def members_in_group(self, s):
        return 0


def run(toy):
    return Explorer(toy).run()


def test_bound_is_the_longest_path_to_convergence():
    # 0 -> 1 -> 3 (done), 0 -> 2 -> 1 -> 3: the longest run takes 3 steps
    toy = Toy({0: [(Go(0), 1), (Go(1), 2)], 2: [(Go(2), 1)], 1: [(Go(3), 3)]}, done=[3])
    res = run(toy)
    assert res.verdicts["convergence"].held is True
    assert res.convergence_bound == 3


def test_deadlock_is_found():
    toy = Toy({0: [(Go(0), 1)]}, done=[])
    v = run(toy).verdicts["convergence"]
    assert v.held is False and "deadlock" in v.explanation
    assert [st.state for st in v.trace] == [0, 1]


def test_a_state_with_only_perturbations_is_a_deadlock():
    toy = Toy({0: [(Kick(0), 1)], 1: [(Go(0), 2)]}, done=[2])
    v = run(toy).verdicts["convergence"]
    assert v.held is False and "deadlock" in v.explanation


def test_fair_cycle_is_a_livelock():
    # 0 <-> 1 forever, and the exit from 1 is taken by the same action instance as the loop: fair.
    toy = Toy({0: [(Spin(0), 1)], 1: [(Spin(1), 0)], 2: []}, done=[2])
    v = run(toy).verdicts["convergence"]
    assert v.held is False and "livelock" in v.explanation
    assert v.loop_start is not None


def test_cycle_that_fairness_must_leave_is_not_a_livelock():
    # 0 <-> 1 by Spin, but Go(0) is enabled in both and always leads out: weak fairness forces it.
    toy = Toy({0: [(Spin(0), 1), (Go(0), 2)], 1: [(Spin(1), 0), (Go(0), 2)]}, done=[2])
    v = run(toy).verdicts["convergence"]
    assert v.held is True
    assert "no step bound" in v.explanation


def test_cycle_with_the_exit_disabled_somewhere_is_a_livelock_under_weak_fairness():
    # Go(0) leads out but is disabled in state 1: it is not *continuously* enabled, so weak fairness
    # (unlike strong fairness) does not force it, and the loop 0 -> 1 -> 0 is a fair run.
    toy = Toy({0: [(Spin(0), 1), (Go(0), 2)], 1: [(Spin(1), 0)]}, done=[2])
    v = run(toy).verdicts["convergence"]
    assert v.held is False and "livelock" in v.explanation


def test_leaving_convergence_without_perturbation_is_reported():
    toy = Toy({0: [(Go(0), 1)], 1: [(Go(1), 2)], 2: [(Go(2), 3)]}, done=[1, 3])
    v = run(toy).verdicts["convergence"]
    assert v.held is False and "leaves convergence" in v.explanation


def test_safety_violation_gives_the_shortest_path():
    toy = Toy({0: [(Go(0), 1), (Go(1), 5)], 1: [(Go(2), 5)], 5: [(Go(3), 6)]}, done=[6], bad=[5])
    v = run(toy).verdicts["exclusive_ownership"]
    assert v.held is False
    assert [st.state for st in v.trace] == [0, 5]
