"""A small EPR-style transition-system prover on top of z3py (mypyvy/Ivy style).

Theory of operation
-------------------
A *relational spec* (``RelSpec``) declares uninterpreted sorts, Boolean relations over them and
constants of those sorts.  A state is one *vocabulary*: one Z3 function per relation and one Z3
constant per constant, suffixed by the index of the state (``owned_0``, ``owned_1``) — the "two
vocabularies" of mypyvy's translator.  Sort axioms (e.g. "``lt`` is a strict total order on
Generation") are shared by all states.

Actions are two-vocabulary formulas ``T_a(s, t, params)`` over a pre-state ``s`` and a post-state
``t``.  They are written with the helpers below: ``Upd`` builds ``t.R(x) == If(cond, v, s.R(x))``
style point updates and :meth:`RelSpec.frame` adds "unchanged" constraints for every symbol the
action does not name, so an omitted frame condition cannot silently make an action unconstrained.

Obligations (one Z3 query each, in its own ``push``/``pop``), exactly the mypyvy layout:

* ``init ⇒ c``            for every invariant clause ``c``  (``Init ∧ ¬c`` unsat);
* ``inv ∧ T_a ⇒ c'``      for every action ``a`` and clause ``c`` (``Inv ∧ T_a ∧ ¬c'`` unsat);
* ``inv ⇒ P``             for every named safety property ``P`` (kept apart from the lemmas);
* ``inv ∧ T_a ⇒ Q(s,t)``  for every action property ``Q`` (e.g. generation monotonicity).

All clauses are universally quantified over the uninterpreted sorts and actions quantify their
parameters existentially, so after negating the goal each query is ∃*∀* with no function symbols
between uninterpreted sorts: the Bernays–Schönfinkel (EPR) class that Z3 decides with finite
counter-models.  A SAT answer is a *counterexample to induction* (CTI): :func:`decode_state`
turns the model into plain Python (``{relation: sorted tuples}``) and :func:`format_cti` prints
the pre-state, the action with its arguments and the post-state.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

import z3

__all__ = [
    "RelSpec",
    "State",
    "Obligation",
    "ObligationResult",
    "decode_state",
    "format_cti",
    "check_obligations",
]


@dataclass
class State:
    """One vocabulary: Z3 symbols for every relation and constant of a spec, for one state index."""

    rels: dict[str, z3.FuncDeclRef]
    consts: dict[str, z3.ExprRef]
    index: str

    def __getattr__(self, name: str) -> z3.FuncDeclRef | z3.ExprRef:
        if name in ("rels", "consts", "index"):
            raise AttributeError(name)
        if name in self.rels:
            return self.rels[name]
        if name in self.consts:
            return self.consts[name]
        raise AttributeError(name)


ActionFormula = Callable[[State, State, Sequence[z3.ExprRef]], z3.BoolRef]
StateFormula = Callable[[State], z3.BoolRef]
TransFormula = Callable[[State, State, Sequence[z3.ExprRef]], z3.BoolRef]
_T = TypeVar("_T")


@dataclass
class Action:
    name: str
    params: tuple[tuple[str, str], ...]  # (parameter name, sort name)
    formula: ActionFormula
    touches: frozenset[str]  # symbols the action may modify; all others get frame conditions


@dataclass
class RelSpec:
    """A relational transition system over uninterpreted sorts."""

    name: str
    sort_names: tuple[str, ...]
    relations: dict[str, tuple[str, ...]]  # relation -> argument sort names
    constants: dict[str, str] = field(default_factory=dict)  # constant -> sort name
    axioms: list[Callable[["RelSpec"], z3.BoolRef]] = field(default_factory=list)
    init: StateFormula | None = None
    actions: dict[str, Action] = field(default_factory=dict)
    invariant: dict[str, StateFormula] = field(default_factory=dict)
    safety: dict[str, StateFormula] = field(default_factory=dict)
    action_props: dict[str, tuple[tuple[str, ...], TransFormula]] = field(default_factory=dict)
    fixed: dict[str, tuple[str, ...]] = field(default_factory=dict)  # rigid (state-independent) relations
    assumptions: list[str] = field(default_factory=list)  # prose: what the proof assumes

    def __post_init__(self) -> None:
        self.sorts: dict[str, z3.SortRef] = {n: z3.DeclareSort(f"{n}") for n in self.sort_names}
        self._rigid: dict[str, z3.FuncDeclRef] = {
            n: z3.Function(n, *[self.sorts[a] for a in args], z3.BoolSort()) for n, args in self.fixed.items()
        }

    # -- vocabulary ---------------------------------------------------------------------------
    def rigid(self, name: str) -> z3.FuncDeclRef:
        return self._rigid[name]

    def state(self, index: str) -> State:
        rels = {
            n: z3.Function(f"{n}_{index}", *[self.sorts[a] for a in args], z3.BoolSort())
            for n, args in self.relations.items()
        }
        consts = {n: z3.Const(f"{n}_{index}", self.sorts[srt]) for n, srt in self.constants.items()}
        return State(rels, consts, index)

    def var(self, name: str, sort: str) -> z3.ExprRef:
        return z3.Const(name, self.sorts[sort])

    def vars(self, spec: str) -> list[z3.ExprRef]:
        """``vars("x:Member y:Member p:Partition")`` -> bound variables."""
        out = []
        for item in spec.split():
            n, s = item.split(":")
            out.append(self.var(n, s))
        return out

    # -- building actions ---------------------------------------------------------------------
    def action(self, name: str, params: str, touches: Iterable[str]) -> Callable[[ActionFormula], ActionFormula]:
        """Decorator registering an action; ``params`` like ``"m:Member g:Generation"``."""
        plist = tuple(tuple(item.split(":")) for item in params.split())
        touched = frozenset(touches)
        unknown = touched - set(self.relations) - set(self.constants)
        if unknown:
            raise ValueError(f"action {name} touches unknown symbols {sorted(unknown)}")

        def deco(f: ActionFormula) -> ActionFormula:
            self.actions[name] = Action(name, plist, f, touched)  # type: ignore[arg-type]
            return f

        return deco

    def params_of(self, action: Action, tag: str) -> list[z3.ExprRef]:
        return [z3.Const(f"{action.name}_{p}_{tag}", self.sorts[s]) for p, s in action.params]

    def frame(self, s: State, t: State, touched: frozenset[str]) -> list[z3.BoolRef]:
        out: list[z3.BoolRef] = []
        for n, args in self.relations.items():
            if n in touched:
                continue
            xs = [z3.Const(f"fr_{n}_{i}", self.sorts[a]) for i, a in enumerate(args)]
            if xs:
                out.append(z3.ForAll(xs, t.rels[n](*xs) == s.rels[n](*xs)))
            else:
                out.append(t.rels[n]() == s.rels[n]())
        for n in self.constants:
            if n not in touched:
                out.append(t.consts[n] == s.consts[n])
        return out

    def transition(self, name: str, s: State, t: State, params: Sequence[z3.ExprRef]) -> z3.BoolRef:
        a = self.actions[name]
        return z3.And(a.formula(s, t, params), *self.frame(s, t, a.touches))

    def axiom_formulas(self) -> list[z3.BoolRef]:
        return [ax(self) for ax in self.axioms]

    def inv(self, s: State, names: Iterable[str] | None = None) -> list[z3.BoolRef]:
        keys = list(self.invariant) if names is None else list(names)
        return [self.invariant[k](s) for k in keys]


# -- point-update helpers ------------------------------------------------------------------------

def upd(spec: RelSpec, s: State, t: State, rel: str, where: Callable[..., z3.BoolRef],
        value: Callable[..., z3.BoolRef]) -> z3.BoolRef:
    """``t.rel(xs) == If(where(xs), value(xs), s.rel(xs))`` for all ``xs``."""
    args = spec.relations[rel]
    xs = [z3.Const(f"u_{rel}_{i}", spec.sorts[a]) for i, a in enumerate(args)]
    body = t.rels[rel](*xs) == z3.If(where(*xs), value(*xs), s.rels[rel](*xs))
    return z3.ForAll(xs, body) if xs else body


def setrel(spec: RelSpec, t: State, rel: str, value: Callable[..., z3.BoolRef]) -> z3.BoolRef:
    """``t.rel(xs) == value(xs)`` for all ``xs`` (a wholesale assignment)."""
    args = spec.relations[rel]
    xs = [z3.Const(f"w_{rel}_{i}", spec.sorts[a]) for i, a in enumerate(args)]
    body = t.rels[rel](*xs) == value(*xs)
    return z3.ForAll(xs, body) if xs else body


# -- obligations ---------------------------------------------------------------------------------

@dataclass
class Obligation:
    """One query: ``kind`` in {init, consecution, safety, action-property}, expected unsat."""

    kind: str
    clause: str
    action: str | None
    build: Callable[[], tuple[list[z3.BoolRef], dict[str, Any]]]  # formulas, decoding context


@dataclass
class ObligationResult:
    spec: str
    kind: str
    clause: str
    action: str | None
    ok: bool
    seconds: float
    verdict: str  # "proved", "FAILED", "unknown"
    cti: dict[str, Any] | None = None

    @property
    def label(self) -> str:
        if self.kind == "init":
            return f"init implies {self.clause}"
        if self.kind == "consecution":
            return f"{self.action} preserves {self.clause}"
        if self.kind == "safety":
            return f"invariant implies {self.clause}"
        return f"{self.action} satisfies {self.clause}"


def obligations(spec: RelSpec) -> list[Obligation]:
    out: list[Obligation] = []
    assert spec.init is not None
    for cname in spec.invariant:
        def b_init(cname: str = cname) -> tuple[list[z3.BoolRef], dict[str, Any]]:
            s = spec.state("0")
            assert spec.init is not None  # (checked above; a closure does not keep the narrowing)
            return [spec.init(s), z3.Not(spec.invariant[cname](s))], {"pre": s}
        out.append(Obligation("init", cname, None, b_init))
    for aname, act in spec.actions.items():
        for cname in spec.invariant:
            def b_cons(aname: str = aname, cname: str = cname) -> tuple[list[z3.BoolRef], dict[str, Any]]:
                s, t = spec.state("0"), spec.state("1")
                ps = spec.params_of(spec.actions[aname], "p")
                fs = [*spec.inv(s), spec.transition(aname, s, t, ps), z3.Not(spec.invariant[cname](t))]
                return fs, {"pre": s, "post": t, "params": ps}
            out.append(Obligation("consecution", cname, aname, b_cons))
    for pname in spec.safety:
        def b_safe(pname: str = pname) -> tuple[list[z3.BoolRef], dict[str, Any]]:
            s = spec.state("0")
            return [*spec.inv(s), z3.Not(spec.safety[pname](s))], {"pre": s}
        out.append(Obligation("safety", pname, None, b_safe))
    for pname, (acts, prop) in spec.action_props.items():
        for aname in acts:
            def b_ap(aname: str = aname, pname: str = pname, prop: TransFormula = prop) -> tuple[list[z3.BoolRef], dict[str, Any]]:
                s, t = spec.state("0"), spec.state("1")
                ps = spec.params_of(spec.actions[aname], "p")
                fs = [*spec.inv(s), spec.transition(aname, s, t, ps), z3.Not(prop(s, t, ps))]
                return fs, {"pre": s, "post": t, "params": ps}
            out.append(Obligation("action-property", pname, aname, b_ap))
    return out


def decode_state(spec: RelSpec, model: z3.ModelRef, s: State) -> dict[str, Any]:
    """A Z3 model restricted to one vocabulary, as plain data: ``{relation: [tuples of element names]}``."""
    universes = {n: list(model.get_universe(srt) or []) for n, srt in spec.sorts.items()}
    names = {n: {str(e): f"{n[0].lower()}{i}" for i, e in enumerate(u)} for n, u in universes.items()}
    out: dict[str, Any] = {"universe": {n: sorted(v.values()) for n, v in names.items()}}
    for rel, args in {**spec.relations}.items():
        tuples = []
        for combo in _product([universes[a] for a in args]):
            val = model.eval(s.rels[rel](*combo), model_completion=True)
            if z3.is_true(val):
                tuples.append(tuple(names[a][str(e)] for a, e in zip(args, combo)))
        out[rel] = sorted(tuples)
    for c, srt in spec.constants.items():
        out[c] = names[srt].get(str(model.eval(s.consts[c], model_completion=True)), "?")
    for rel, args in spec.fixed.items():
        tuples = []
        for combo in _product([universes[a] for a in args]):
            if z3.is_true(model.eval(spec.rigid(rel)(*combo), model_completion=True)):
                tuples.append(tuple(names[a][str(e)] for a, e in zip(args, combo)))
        out[rel] = sorted(tuples)
    return out


def _product(lists: list[list[_T]]) -> Iterator[tuple[_T, ...]]:
    if not lists:
        yield ()
        return
    head, *rest = lists
    for h in head:
        for r in _product(rest):
            yield (h, *r)


def _decode(spec: RelSpec, model: z3.ModelRef, ctx: dict[str, Any]) -> dict[str, Any]:
    universes = {n: list(model.get_universe(srt) or []) for n, srt in spec.sorts.items()}
    names = {n: {str(e): f"{n[0].lower()}{i}" for i, e in enumerate(u)} for n, u in universes.items()}
    out: dict[str, Any] = {"pre": decode_state(spec, model, ctx["pre"])}
    if "post" in ctx:
        out["post"] = decode_state(spec, model, ctx["post"])
    if "params" in ctx:
        ps = {}
        for p in ctx["params"]:
            v = model.eval(p, model_completion=True)
            srt = p.sort().name()
            ps[str(p).split("_")[-2]] = names.get(srt, {}).get(str(v), str(v))
        out["params"] = ps
    return out


def format_cti(res: ObligationResult) -> str:
    """Human-readable counterexample: pre-state, action(args), post-state (only non-empty relations)."""
    if res.cti is None:
        return ""
    lines = [f"counterexample to `{res.label}` ({res.spec}):"]

    def show(tag: str, st: dict[str, Any]) -> None:
        lines.append(f"  {tag}:")
        uni = st.get("universe", {})
        lines.append("    universe: " + ", ".join(f"{k}={{{', '.join(v)}}}" for k, v in uni.items()))
        for k, v in st.items():
            if k == "universe":
                continue
            if isinstance(v, list):
                if v:
                    lines.append(f"    {k}: " + ", ".join("(" + ",".join(t) + ")" if t else "true" for t in v))
            else:
                lines.append(f"    {k} = {v}")

    show("state before", res.cti["pre"])
    if "params" in res.cti:
        args = ", ".join(f"{k}={v}" for k, v in res.cti["params"].items())
        lines.append(f"  step: {res.action}({args})")
    if "post" in res.cti:
        show("state after", res.cti["post"])
    return "\n".join(lines)


def check_obligations(spec: RelSpec, timeout_ms: int = 30000,
                      only: Callable[[Obligation], bool] | None = None) -> list[ObligationResult]:
    """Discharge every obligation of ``spec`` in its own push/pop scope; decode CTIs."""
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    for ax in spec.axiom_formulas():
        solver.add(ax)
    results: list[ObligationResult] = []
    for ob in obligations(spec):
        if only is not None and not only(ob):
            continue
        fs, ctx = ob.build()
        solver.push()
        solver.add(*fs)
        t0 = time.perf_counter()
        r = solver.check()
        dt = time.perf_counter() - t0
        cti = None
        if r == z3.unsat:
            verdict, ok = "proved", True
        elif r == z3.sat:
            verdict, ok = "FAILED", False
            cti = _decode(spec, solver.model(), ctx)
        else:
            verdict, ok = "unknown", False
        solver.pop()
        results.append(ObligationResult(spec.name, ob.kind, ob.clause, ob.action, ok, dt, verdict, cti))
    return results


def strict_total_order(rel: str, sort: str) -> Callable[[RelSpec], z3.BoolRef]:
    """Axiom: rigid relation ``rel`` is a strict total order on ``sort``."""
    def ax(spec: RelSpec) -> z3.BoolRef:
        lt = spec.rigid(rel)
        a, b, c = (z3.Const(f"o_{n}", spec.sorts[sort]) for n in "abc")
        return z3.And(
            z3.ForAll([a], z3.Not(lt(a, a))),
            z3.ForAll([a, b, c], z3.Implies(z3.And(lt(a, b), lt(b, c)), lt(a, c))),
            z3.ForAll([a, b], z3.Or(lt(a, b), a == b, lt(b, a))),
        )
    return ax



def check_actions_enabled(spec: RelSpec, timeout_ms: int = 30000) -> dict[str, tuple[bool, float]]:
    """Non-vacuity: each action can fire from some state satisfying the invariant (``Inv ∧ T_a`` SAT).
    An invariant strong enough to disable an action would make its consecution obligations vacuous."""
    out: dict[str, tuple[bool, float]] = {}
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    solver.add(*spec.axiom_formulas())
    s, t = spec.state("0"), spec.state("1")
    solver.add(*spec.inv(s))
    for name, act in spec.actions.items():
        ps = spec.params_of(act, "e")
        solver.push()
        solver.add(spec.transition(name, s, t, ps))
        t0 = time.perf_counter()
        r = solver.check()
        out[name] = (r == z3.sat, time.perf_counter() - t0)
        solver.pop()
    return out
