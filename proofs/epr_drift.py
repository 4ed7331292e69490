"""No drift between ``groupspec.model`` and the *unbounded* (EPR) relational model: the step half.

Theory of operation
-------------------
:mod:`~groupspec.proofs.abstraction` maps one model state to a finite relational structure and checks
the *state half* of the correspondence (every reachable state satisfies the inductive invariant).  The
unbounded proof is about the relational actions of :mod:`~groupspec.proofs.classic`; it says something
about ``model/`` only if every model step is also a run of those actions.  :func:`check_step` decides
that for one concrete model step ``s --a--> t``:

    is there a sequence of at most ``k`` relational steps (each an action of the relational spec with
    some parameters, or a stutter) from the structure of ``s`` to one that agrees with the structure
    of ``t``?

One Z3 query.  The Member sort is closed over the elements named in the structure of ``s`` (constants
``A.<name>``, pairwise distinct) and those named in the structure of ``t`` (constants ``B.<name>``,
pairwise distinct, but each free to *be* any element of ``s``): the abstraction names ids by role
(``m0`` is whatever id slot 0's record holds), so a join turns ``n0`` into ``m0`` and a static
replacement turns ``m0`` into the ghost ``gh0``; Z3 picks that renaming.  An element of ``t`` that is
not in ``s`` is a fresh id (every relation false in ``s``).  Generations are the integers from the
smallest to the largest that occurs, ordered by ``lt`` — a model that skipped a generation number would
need a ``CompleteJoin`` over a generation in between.  Partitions are the instance's.  The last state
must equal the structure of ``t`` on every tuple of elements ``t`` names; ids ``t`` no longer names (a
stale id whose process is gone) are left free.  The intermediate states are unconstrained.

SAT: the step is admitted, and the relational actions Z3 used are returned (``Join; CompleteJoin``).
UNSAT: the model took a step the unbounded proof does not cover — *drift*.  ``tests/test_proofs_epr_drift.py``
samples steps of every variant with a relational counterpart (Hypothesis, seeds replayable), and
``groupspec prove`` runs :func:`sample` with a fixed seed on each correct variant and on two mutants
(the model's ``cooperative-direct-transfer`` and ``eager-no-revoke`` against the *correct* relational
specs), which must be rejected.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

import z3

from . import classic
from .abstraction import abstract
from .epr import RelSpec
from .relational_runs import Option, StepVerdict, admit_run

# model/ variant -> the relational variant its steps must be runs of
RELATIONAL_OF = {
    "eager": classic.Variant("eager"),
    "static": classic.Variant("static"),
    "cooperative": classic.Variant("cooperative"),
    "connect-delayed": classic.Variant("cooperative"),
    "coordinator-assigns": classic.Variant("coordinator-assigns"),
    "static-cooperative": classic.Variant("static-cooperative"),
    # mutants of model/, held against the correct relational spec: some step must be rejected
    "cooperative-direct-transfer": classic.Variant("cooperative"),
    "eager-no-revoke": classic.Variant("eager"),
}
MAX_STEPS = 2  # plus one per member: the leader's SyncGroup answers every parked SyncGroup


def _slot(name: str) -> str:
    """``m0``, ``z0``, ``n0``, ``gh0`` -> ``"0"`` (the process slot); ``none`` -> ``""``."""
    return name.lstrip("abcdefghijklmnopqrstuvwxyz")


def _elements(spec: RelSpec, st: dict[str, Any], tag: str) -> dict[str, z3.ExprRef]:
    return {name: z3.Const(f"{tag}.{name}", spec.sorts["Member"]) for name in st["Member"]}


def check_step(spec: RelSpec, proto: Any, s: Any, t: Any, k: int | None = None,
               timeout_ms: int = 20000) -> StepVerdict:
    """Whether the model step ``s -> t`` is a run of at most ``k`` relational steps of ``spec``."""
    t0 = time.perf_counter()
    k = MAX_STEPS + proto.cfg.members if k is None else k
    A, B = abstract(proto, s), abstract(proto, t)
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(*spec.axiom_formulas())
    ea, eb = _elements(spec, A, "A"), _elements(spec, B, "B")
    if len(ea) > 1:
        solver.add(z3.Distinct(*ea.values()))
    if len(eb) > 1:
        solver.add(z3.Distinct(*eb.values()))
    xm = z3.Const("dom_Member", spec.sorts["Member"])
    solver.add(z3.ForAll([xm], z3.Or(*[xm == e for e in (*ea.values(), *eb.values())])))
    for nb, b in eb.items():  # an id stays with its process slot: t's element of slot i is s's of slot i, or fresh
        solver.add(*[b != a for na, a in ea.items() if _slot(na) != _slot(nb)])
    K = proto.cfg.partitions
    parts = {p: z3.Const(f"el_Partition_{p}", spec.sorts["Partition"]) for p in range(K)}
    if len(parts) > 1:
        solver.add(z3.Distinct(*parts.values()))
    xp = z3.Const("dom_Partition", spec.sorts["Partition"])
    solver.add(z3.ForAll([xp], z3.Or(*[xp == e for e in parts.values()])))
    lo = min(A["Generation"] + B["Generation"])
    hi = max(A["Generation"] + B["Generation"])
    gens = {g: z3.Const(f"el_Generation_{g}", spec.sorts["Generation"]) for g in range(lo, hi + 1)}
    if len(gens) > 1:
        solver.add(z3.Distinct(*gens.values()))
    xg = z3.Const("dom_Generation", spec.sorts["Generation"])
    solver.add(z3.ForAll([xg], z3.Or(*[xg == e for e in gens.values()])))
    lt = spec.rigid("lt")
    for a in gens:
        for b in gens:
            solver.add(lt(gens[a], gens[b]) == z3.BoolVal(a < b))
    elems = {"Partition": parts, "Generation": gens}
    states = [spec.state(f"d{i}") for i in range(k + 1)]
    first, last = states[0], states[-1]
    solver.add(first.consts["gen"] == gens[A["gen"]], last.consts["gen"] == gens[B["gen"]])
    for name, sorts in spec.relations.items():
        xs = [z3.Const(f"q_{name}_{i}", spec.sorts[srt]) for i, srt in enumerate(sorts)]
        for st, el, state, exact in ((A, ea, first, True), (B, eb, last, False)):
            def match(tup: tuple[Any, ...], st_el: dict[str, Any] = el) -> z3.BoolRef:
                return z3.And(*[x == (st_el[v] if srt == "Member" else elems[srt][v])
                                for x, srt, v in zip(xs, sorts, tup)]) if xs else z3.BoolVal(True)
            opts = [match(tup) for tup in st["relations"][name]]
            body = state.rels[name](*xs) == (z3.Or(*opts) if opts else z3.BoolVal(False))
            if not exact:  # only tuples of elements that t names
                named = [z3.Or(*[x == e for e in el.values()]) for x, srt in zip(xs, sorts) if srt == "Member"]
                body = z3.Implies(z3.And(*named), body) if named else body
            solver.add(z3.ForAll(xs, body) if xs else body)
    # an id that t no longer names is a stale id whose process is gone: not a member, owning nothing
    xf, pf = z3.Const("forgot_m", spec.sorts["Member"]), z3.Const("forgot_p", spec.sorts["Partition"])
    solver.add(z3.ForAll([xf, pf], z3.Implies(z3.And(*[xf != e for e in eb.values()]), z3.And(
        z3.Not(last.member(xf)), z3.Not(last.owned(xf, pf)), z3.Not(last.c_joining(xf)),
        z3.Not(last.c_syncing(xf)), z3.Not(last.c_stable(xf))))))

    def options(i: int) -> list[Option]:
        pre, post = states[i], states[i + 1]
        opts: list[Option] = [("stutter", z3.And(*spec.frame(pre, post, frozenset())))]
        for aname, act in spec.actions.items():
            ps = spec.params_of(act, f"s{i}")
            opts.append((aname, spec.transition(aname, pre, post, ps)))
        return opts

    return admit_run(solver, k, options, t0)


@dataclass
class Sample:
    protocol: str
    instance: str
    seed: int
    steps: int  # model steps checked
    rejected: list[str]  # "action: why", one per rejected step
    unknown: int
    seconds: float
    used: dict[str, int] = field(default_factory=dict)  # relational action sequence -> how often


def sample(protocol: str, seed: int, steps: int, members: int = 2, partitions: int = 2,
           faults: tuple[str, ...] = ("join", "crash", "zombie"), budget: int = 1,
           stop_at_first: bool = False) -> Sample:
    """Random walks of ``protocol`` (seeded; restarted at the initial state when stuck): check ``steps`` steps."""
    from groupspec.model import Config, make

    t0 = time.perf_counter()
    proto = make(protocol, Config(members=members, partitions=partitions, faults=frozenset(faults), budget=budget))
    spec = classic.build(RELATIONAL_OF[protocol])
    rng = random.Random(seed)
    s = proto.init_states()[0]
    rejected: list[str] = []
    unknown = 0
    used: dict[str, int] = {}
    done = 0
    while done < steps:
        succ = list(proto.successors(s))
        if not succ or proto.converged(s) and rng.random() < 0.2:
            s = proto.init_states()[0]
            continue
        a, t = succ[rng.randrange(len(succ))]
        v = check_step(spec, proto, s, t)
        done += 1
        if v.admitted:
            key = "; ".join(v.relational) or "(no relational step)"
            used[f"{a.name}: {key}"] = used.get(f"{a.name}: {key}", 0) + 1
        elif v.unknown:
            unknown += 1
        else:
            rejected.append(f"{a!r} after {done - 1} checked steps: no run of at most {MAX_STEPS + members} relational "
                            f"steps of {spec.name} leads from the state before to the state after")
            if stop_at_first:
                break
        s = t
    inst = f"{members} x {partitions}, faults {','.join(faults) or '-'}, budget {budget}"
    return Sample(protocol, inst, seed, done, rejected, unknown, time.perf_counter() - t0, used)
