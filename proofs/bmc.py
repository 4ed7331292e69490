"""Bounded model checking and bounded liveness of ``groupspec.model`` with Z3 (finite instances).

Theory of operation
-------------------
**Safety (BMC).** States ``s0 .. sk`` of :class:`~groupspec.proofs.finite.Encoding`: ``s0`` is the
model's initial state, and for each step an integer selector picks one action instance whose guard
holds and whose successor term equals the next state.  Depth by depth (iterative deepening, so the
first answer is a shortest one) we ask for a state violating ``exclusive_ownership`` or
``commit_fencing``, or a step violating ``generation_monotonic``.

**The assignor, lazily.**  The assignor is an uninterpreted function in the encoding.  When Z3 answers
SAT, the run is *replayed with groupspec.model itself*; if the model disagrees somewhere, it is because
Z3 invented an assignment the model's assignor would not make, so we add the model's real answer for
every assignor input the run used (ground equations, always true) and ask again.  Each round removes
at least one wrong guess, and there are finitely many inputs of bounded depth, so this terminates; a
returned trace is one the model itself produces, printed with the model's own timeline printer.
UNSAT at depth k means: no violation within k steps, for any assignor answers — a stronger statement
than for the model's assignor alone.

**Convergence (bounded lasso).**  A fair non-converging run after the last perturbation exists, within
k steps, iff there are ``l < k`` and states ``s_l .. s_k`` joined by protocol steps only, none
converged, with ``s_k`` equal to ``s_l`` *up to a shift of every generation* (the model only compares
generations, so a shifted state behaves the same), and every fair action instance either taken in the
loop or disabled at some state of the loop (weak fairness per action instance, as TLC's ``WF``).  The
prefix ``s_0 .. s_l`` may use perturbations.  The same lazy assignor pinning applies; the lasso is
replayed by the model.  UNSAT up to k is evidence, not proof (a longer loop could exist); the ranking
argument in :mod:`groupspec.proofs.liveness` closes the gap on the instances it covers.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import z3

from groupspec.model import NO_GENERATION, State
from groupspec.model import ACTIONS, SAFETY

from .finite import Encoding, SState, eq, leaves


@dataclass
class Run:
    """A run found by Z3 and confirmed by the model: actions and states."""

    actions: list[Any]
    states: list[State]
    loop_start: int | None = None
    violated: str = ""
    explanation: str = ""


@dataclass
class BmcResult:
    protocol: str
    depth: int
    kind: str  # "safety" or "lasso"
    found: Run | None
    seconds: float
    rounds: int = 0  # SAT answers refuted by replay (assignor pinning rounds)
    depth_reached: int = 0
    notes: list[str] = field(default_factory=list)


class _Unroller:
    def __init__(self, proto: Any, timeout_ms: int) -> None:
        self.proto = proto
        self.enc = Encoding(proto)
        self.solver = z3.Solver()
        self.solver.set("timeout", timeout_ms)
        init = proto.init_states()
        if len(init) != 1:
            raise ValueError("bounded model checking expects one initial state")
        self.states: list[SState] = [self.enc.encode(init[0])]
        self.sels: list[z3.ArithRef] = []
        self.trans: list[list[tuple[Any, z3.BoolRef, SState]]] = []
        self.pinned: set[str] = set()
        self._tcache: dict[int, list[tuple[Any, z3.BoolRef, SState]]] = {}

    def transitions_of(self, k: int) -> list[tuple[Any, z3.BoolRef, SState]]:
        """The (cached) symbolic successors of state ``k``."""
        if k not in self._tcache:
            self._tcache[k] = self.enc.transitions(self.states[k])
        return self._tcache[k]

    def extend(self) -> None:
        enc = self.enc
        d = len(self.states)
        t = enc.fresh(f"s{d}")
        self.solver.add(*enc.ranges(t))
        sel = z3.Int(f"sel{d}")
        tr = self.transitions_of(d - 1)
        self.solver.add(sel >= 0, sel < len(tr))
        for j, (_a, guard, nxt) in enumerate(tr):
            if z3.is_false(z3.simplify(guard)):
                self.solver.add(sel != j)
                continue
            self.solver.add(z3.Implies(sel == j, z3.And(guard, *eq(nxt, t))))
        self.states.append(t)
        self.sels.append(sel)
        self.trans.append(tr)

    def decode(self, m: z3.ModelRef, upto: int) -> tuple[list[Any], list[State]]:
        enc = self.enc
        states = [enc.decode(m, self.states[k]) for k in range(upto + 1)]
        acts = [self.trans[k][m.eval(self.sels[k], model_completion=True).as_long()][0] for k in range(upto)]
        return acts, states

    def replay(self, acts: list[Any], states: list[State]) -> list[State] | None:
        """The model's own run for ``acts`` from the initial state, or None if it differs from ``states``."""
        proto = self.proto
        s = proto.init_states()[0]
        out = [s]
        for a, want in zip(acts, states[1:]):
            if a not in proto.enabled(s):
                return None
            s = proto.step(s, a)
            if s != want:
                return None
            out.append(s)
        return out

    def pin(self, m: z3.ModelRef) -> int:
        """Add the model's real assignor answers for every assignor input used; count the new ones."""
        new = 0
        for app in self.enc.asg_apps:
            try:
                eqs = self.enc.pin_assignor(m, app)
            except Exception:  # an input the model's assignor cannot take: an untaken branch
                continue
            for e in eqs:
                k = e.sexpr()
                if k not in self.pinned:
                    self.pinned.add(k)
                    self.solver.add(e)
                    new += 1
        return new


def bmc(proto: Any, depth: int, timeout_ms: int = 120000, max_rounds: int = 200) -> BmcResult:
    """Shortest run of length <= ``depth`` violating a safety or action property of the model."""
    t0 = time.perf_counter()
    u = _Unroller(proto, timeout_ms)
    enc = u.enc
    rounds = 0
    for d in range(1, depth + 1):
        u.extend()
        s, t = u.states[-2], u.states[-1]
        bad = z3.Or(z3.Not(enc.exclusive_ownership(t)), z3.Not(enc.commit_fencing(t)),
                    z3.Not(enc.generation_monotonic(s, t)))
        while True:
            u.solver.push()
            u.solver.add(bad)
            r = u.solver.check()
            if r != z3.sat:
                u.solver.pop()
                if r == z3.unknown:
                    return BmcResult(proto.name, depth, "safety", None, time.perf_counter() - t0, rounds, d - 1,
                                     [f"solver gave up at depth {d}: {u.solver.reason_unknown()}"])
                break
            m = u.solver.model()
            acts, states = u.decode(m, d)
            real = u.replay(acts, states)
            u.solver.pop()
            if real is not None:
                run = Run(acts, real)
                _name_violation(proto, run)
                return BmcResult(proto.name, depth, "safety", run, time.perf_counter() - t0, rounds, d)
            rounds += 1
            if u.pin(m) == 0 or rounds > max_rounds:
                raise RuntimeError(f"Z3 run at depth {d} is not a run of the model and no assignor answer explains "
                                   "it: the finite encoding has drifted from groupspec.model")
    return BmcResult(proto.name, depth, "safety", None, time.perf_counter() - t0, rounds, depth)


def _name_violation(proto: Any, run: Run) -> None:
    last = run.states[-1]
    for p in SAFETY:
        why = p.check(proto, last)
        if why:
            run.violated, run.explanation = p.name, why
            return
    if len(run.states) > 1:
        for p in ACTIONS:
            why = p.check(proto, run.states[-2], last)
            if why:
                run.violated, run.explanation = p.name, why
                return


def _gen_leaves(enc: Encoding, s: SState) -> set[int]:
    """Identities of the generation-valued leaves of a symbolic state (for equality up to a shift)."""
    out = [s.group.generation]
    for r in s.group.records:
        out.append(r.generation)
    for c in s.clients:
        out += [c.generation, c.inbox.generation, c.ghost_gen]
    return {id(e) for e in out}


def _equal_up_to_shift(enc: Encoding, a: SState, b: SState) -> z3.BoolRef:
    delta = b.group.generation - a.group.generation
    gens = _gen_leaves(enc, a) | _gen_leaves(enc, b)
    cs = []
    for x, y in zip(leaves(a), leaves(b)):
        if id(x) in gens or id(y) in gens:
            cs.append(z3.Or(z3.And(x == NO_GENERATION, y == NO_GENERATION),
                            z3.And(x != NO_GENERATION, y != NO_GENERATION, y - x == delta)))
        else:
            cs.append(x == y)
    return z3.And(*cs)


def lasso(proto: Any, depth: int, timeout_ms: int = 120000, max_rounds: int = 200) -> BmcResult:
    """A weakly fair, never-converging lasso of length <= ``depth`` whose loop has no perturbation."""
    t0 = time.perf_counter()
    u = _Unroller(proto, timeout_ms)
    enc = u.enc
    rounds = 0
    conv: list[z3.BoolRef] = [enc.converged(u.states[0])]
    for d in range(1, depth + 1):
        u.extend()
        conv.append(enc.converged(u.states[-1]))
        k = d
        fair_idx = [j for j, (a, _g, _n) in enumerate(u.trans[0]) if type(a).fair]
        options = []
        for l in range(0, k):
            loop = [
                _equal_up_to_shift(enc, u.states[l], u.states[k]),
                *[z3.Not(conv[i]) for i in range(l, k + 1)],
            ]
            for step in range(l, k):
                loop.append(z3.Or(*[u.sels[step] == j for j in fair_idx]))
            for j in fair_idx:
                taken = z3.Or(*[u.sels[step] == j for step in range(l, k)])
                disabled = z3.Or(*[z3.Not(u.trans[i][j][1]) for i in range(l, k)])
                loop.append(z3.Or(taken, disabled))
            options.append((l, z3.And(*loop)))
        # a deadlock: not converged and no protocol step enabled (the run stutters there forever)
        here = u.transitions_of(k)
        options.append((k, z3.And(z3.Not(conv[k]), *[z3.Not(here[j][1]) for j in fair_idx])))
        loopvar = z3.Int(f"loop{d}")
        while True:
            u.solver.push()
            u.solver.add(z3.Or(*[z3.And(loopvar == l, f) for l, f in options]))
            r = u.solver.check()
            if r != z3.sat:
                u.solver.pop()
                if r == z3.unknown:
                    return BmcResult(proto.name, depth, "lasso", None, time.perf_counter() - t0, rounds, d - 1,
                                     [f"solver gave up at depth {d}: {u.solver.reason_unknown()}"])
                break
            m = u.solver.model()
            acts, states = u.decode(m, d)
            l = m.eval(loopvar, model_completion=True).as_long()
            real = u.replay(acts, states)
            u.solver.pop()
            if real is not None and all(not proto.converged(x) for x in real[l:]):
                if l == d:
                    why = "deadlock: not converged, and no protocol step is enabled"
                    run = Run(acts, real, loop_start=None, violated="convergence", explanation=why)
                else:
                    run = Run(acts, real, loop_start=l, violated="convergence",
                              explanation=f"a weakly fair loop of {d - l} protocol steps that never converges")
                return BmcResult(proto.name, depth, "lasso", run, time.perf_counter() - t0, rounds, d)
            rounds += 1
            if u.pin(m) == 0 or rounds > max_rounds:
                raise RuntimeError(f"Z3 lasso at depth {d} is not a run of the model and no assignor answer explains "
                                   "it: the finite encoding has drifted from groupspec.model")
    return BmcResult(proto.name, depth, "lasso", None, time.perf_counter() - t0, rounds, depth)


def timeline(proto: Any, run: Run) -> list[str]:
    """The run as the model's numbered timeline (groupspec.checker.timeline)."""
    from groupspec.checker import Step
    from groupspec.checker import render

    steps = [Step(None, run.states[0])] + [Step(a, s) for a, s in zip(run.actions, run.states[1:])]
    return render(proto, steps, run.loop_start)
