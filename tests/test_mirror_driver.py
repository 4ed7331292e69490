"""The campaign's one mirror driver (groupspec/specmut/mirror_driver.py) on a toy family: a counter as the model and a
shadow counter as its mirror, broken on purpose. The driver finds the first difference breadth first with its
shortest path, replays a walk by its seed alone (``only``), asks what the mirror is owed before each step, and keeps
to the fair steps as often as the family's bias says. (The real families' verdicts are held by their own tests:
tests/test_spec_client_walks.py, tests/test_consumer_client_walks.py, tests/test_zookeeper_walks.py.)"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from groupspec.specmut.mirror_driver import Divergence, Family, bits, check, explore, run_walks

TOP = 4  # the counter stops there


@dataclass(frozen=True)
class Step:
    name: str
    fair: bool

    def __repr__(self) -> str:
        return self.name


class Counter:
    """The "model": a counter that counts up (fair) or is reset (a perturbation) until it reaches TOP."""

    def init_states(self) -> list[int]:
        return [0]

    def successors(self, s: int) -> list[tuple[Step, int]]:
        return [(Step("Inc", True), s + 1), (Step("Reset", False), 0)] if s < TOP else []

    def key(self, s: int) -> int:
        return s


class Shadow:
    """The mirror: counts with the model, but counts two at ``bad`` (-1: never); ``resets`` raises at a reset."""

    def __init__(self, bad: int, resets: bool = True) -> None:
        self.n, self.bad, self.resets = 0, bad, resets

    def step(self, s: int, a: Step, t: int) -> None:
        if a.name == "Reset" and not self.resets:
            raise Divergence("the mirror cannot reset")
        self.n = 0 if a.name == "Reset" else self.n + (2 if self.n == self.bad else 1)
        if self.n != t:
            raise Divergence(f"model {t}, mirror {self.n}")

    def fork(self) -> "Shadow":
        c = Shadow(self.bad, self.resets)
        c.n = self.n
        return c


class Toy(Family[Shadow]):
    """The job's ``members`` field is where the shadow miscounts."""

    label, seed, fair_bias, limit = "toy", 7, 0.5, 100

    def start(self) -> tuple[Any, Any, Shadow]:
        return Counter(), 0, Shadow(self.members)


def toy(bad: int, walks: int = 0, steps: int = 0) -> tuple[Any, ...]:
    return ("toy", "-", bad, 0, 0, "", 0, walks, steps)


def test_a_faithful_mirror_passes_walks_and_exploration():
    assert check(Toy, toy(-1)) is None
    assert check(Toy, toy(-1, walks=20, steps=12)) is None


def test_the_exploration_finds_the_first_difference_with_its_shortest_path():
    assert check(Toy, toy(2)) == "toy (explored, 3 states) Inc: model 3, mirror 4; path Inc Inc Inc"


def test_a_walk_names_its_seed_and_replays_alone():
    job = toy(2, walks=50, steps=3)  # a walk diverges only if it counts up three times in a row
    why = check(Toy, job)
    assert why == "toy walk 4 (seed 7) step 3 Inc: model 3, mirror 4; path Inc Inc Inc"
    assert check(Toy, job, frozenset({4})) == why  # the walk alone: the same verdict
    assert check(Toy, job, frozenset(range(4))) is None  # the walks before it pass
    assert check(Toy, job, frozenset({4, 9})) == why


class Owing(Toy):
    """A mirror owed a step at the top that the model does not offer."""

    def owed(self, proto: Any, mirror: Shadow, s: Any, succ: list[tuple[Any, Any]]) -> str | None:
        return "the mirror would count on; the model offers no step" if s == TOP else None


def test_what_the_mirror_is_owed_is_asked_before_every_step():
    assert check(Owing, toy(-1)) == ("toy (explored, 5 states): the mirror would count on; the model offers no step; "
                                     "path Inc Inc Inc Inc")
    with pytest.raises(Divergence, match=r"^toy walk \d+ \(seed 7\) after step \d+: the mirror would count on"):
        run_walks(Owing(*toy(-1)[:7]), walks=50, steps=30, seed=7)


@pytest.mark.parametrize("bias, raises", [(1.0, False), (0.0, True)])
def test_the_fair_bias_keeps_to_the_fair_steps(bias, raises):
    class NoReset(Toy):
        fair_bias = bias

        def start(self) -> tuple[Any, Any, Shadow]:
            return Counter(), 0, Shadow(-1, resets=False)

    fam = NoReset(*toy(-1)[:7])
    if raises:  # unbiased: some walk resets the counter
        with pytest.raises(Divergence, match="cannot reset"):
            run_walks(fam, walks=20, steps=TOP, seed=7)
    else:  # always the fair step where one is offered
        run_walks(fam, walks=20, steps=TOP, seed=7)


def test_an_exploration_stops_at_its_limit():
    explore(Toy(*toy(3)[:7]), limit=3)  # the difference lies beyond three states
    with pytest.raises(Divergence):
        explore(Toy(*toy(3)[:7]))


def test_bits():
    assert bits(0) == "{}" and bits(0b101) == "{0,2}"
