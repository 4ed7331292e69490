"""Is a model step a run of relational steps? The query shared by the two step-half drift checks.

Theory of operation
-------------------
:mod:`~groupspec.proofs.epr_drift` (the classic protocol's unbounded encoding) and
:mod:`~groupspec.proofs.consumer_drift` (KIP-848's) each pin the structure of a model state ``s`` as the
first of ``k + 1`` relational states and the structure of its successor ``t`` as the last. What follows is
the same for both and lives here: every relational step ``j`` takes one of its options (an action of the
encoding with its parameters, or a stutter), each option tagged with a Boolean ``take_<j>_<name>``; one Z3
query decides whether such a run exists. SAT: the step is admitted and the actions taken, stutters left
out, are returned in order. UNSAT: drift. Unknown (a timeout) is neither.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import z3

Option = tuple[str, z3.BoolRef]  # an action's name and its transition formula between two relational states

__all__ = ["Option", "StepVerdict", "admit_run"]


@dataclass
class StepVerdict:
    admitted: bool
    relational: list[str] = field(default_factory=list)  # the relational actions used, in order
    seconds: float = 0.0
    unknown: bool = False


def admit_run(solver: z3.Solver, k: int, options: Callable[[int], list[Option]], t0: float) -> StepVerdict:
    """Whether ``solver`` (both ends pinned) has a run of ``k`` steps, step ``j`` taking one of ``options(j)``.

    ``t0`` is when the caller started building the query (``time.perf_counter()``): the verdict's seconds count
    from there."""
    choice: list[list[tuple[str, z3.BoolRef]]] = []
    for j in range(k):
        opts = options(j)
        tags = [z3.Bool(f"take_{j}_{name}") for name, _f in opts]
        solver.add(z3.Or(*tags))
        solver.add(*[z3.Implies(tg, f) for tg, (_n, f) in zip(tags, opts)])
        choice.append([(name, tg) for tg, (name, _f) in zip(tags, opts)])
    r = solver.check()
    secs = time.perf_counter() - t0
    if r == z3.sat:
        md = solver.model()
        used = []
        for row in choice:
            taken = [name for name, tg in row if z3.is_true(md.eval(tg, model_completion=True))]
            name = next((x for x in taken if x != "stutter"), "stutter")
            if name != "stutter":
                used.append(name)
        return StepVerdict(True, used, secs)
    return StepVerdict(False, [], secs, unknown=(r == z3.unknown))
