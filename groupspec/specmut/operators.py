"""Mutation operators over ``model/``: one-rule changes generated from the source by AST.

Every mutant is one change at one place of one function of one model module, named stably as
``module.Class.function:operator#k`` (``k`` counts that operator's sites in that function, in source
order), so a name survives edits elsewhere in the file. The operators:

* ``negate-guard`` — ``if c:`` becomes ``if not c:`` (also a conditional expression);
* ``drop-guard`` — ``if c:`` becomes ``if True:`` (the body always runs); ``timer-early`` when the body
  yields a timer's step (``…Expired``, ``…Timeout``, the rebalance timer, the delay): the timer fires
  before its condition;
* ``drop-term`` — one conjunct of a guard (an ``and``) left out;
* ``negate-return`` — a predicate's ``return <condition>`` negated;
* ``off-by-one`` — a comparison that reads a generation or an epoch made strict / non-strict, an
  equality with it shifted by one, or its ``+ 1`` left out;
* ``keep-<field>`` — what an answer should clear is kept: the keyword ``owned=``, ``id=``,
  ``generation=``, ``epoch=`` … set to its reset value (``0``, ``Id.NONE``, ``NO_GENERATION`` …) in a
  ``.but(...)`` / ``replace(...)`` dropped, so the old value stays;
* ``skip-callback`` — a listener callback skipped: an ``owned=`` change that is not a reset (revoke,
  assign) dropped;
* ``timer-never`` — a timer's step is never generated (its ``yield`` removed);
* ``wrong-error`` — an error answer replaced by the next error kind (``Reply.REBALANCE_IN_PROGRESS`` →
  ``UNKNOWN_MEMBER_ID`` → ``FENCED_INSTANCE_ID`` → …).

May import: nothing of the project (it reads ``model/``'s source files).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import Callable, Iterator

MODEL_DIR = Path(__file__).resolve().parents[2] / "model"
PACKAGE = "groupspec.model"

# Which family a model module belongs to (a mutant in a shared module is tried by every family's checks).
FAMILIES: dict[str, str] = {
    "classic": "classic", "core": "classic", "actions": "classic", "join_phase": "classic", "formation": "classic",
    "assignors": "classic", "eager": "classic", "static": "classic", "cooperative": "classic",
    "static_cooperative": "classic", "static_leader": "classic", "coordinator_assigns": "classic",
    "upgrade": "classic", "properties": "classic",
    "connect_delayed": "connect",
    "consumer": "kip848", "consumer_flight": "kip848", "consumer_view": "kip848",
    "migration": "migration", "migration_state": "migration", "migration_view": "migration",
    "zookeeper": "zookeeper",
}
# Not mutated: the broken variants (broken on purpose), the symmetry reduction (how the checker stores
# states, no rule of the protocol) and the package's front door.
SKIPPED = ("broken", "symmetry", "__init__")
# Nor functions that only name or print things (no rule of the protocol reads them).
# (``parties``: the timeline's account of a state; ``orbit_size``: the symmetry factor the report prints.)
PRESENTATION = r"describe|__repr__|__str__|explain\w*|summary|label\w*|narrat\w*|parties|orbit_size"
# Nor what a variant declares to the tools (``Spec``): which faults ``groupspec verify`` selects for it
# (``applicable_faults``) and which other encodings of it exist (``compiled_encoding``, ``encodings``). They choose
# the explored instance and the engine, not a step of the protocol; tests/test_spec.py pins their values per variant
# (tests/test_spec_mutants.py shows each of their mutants changes one of those values).
DECLARATIONS = r"applicable_faults|compiled_encoding|encodings"
NOT_RULES = re.compile(rf"^({PRESENTATION}|{DECLARATIONS})$")
_ONLY_PRESENTATION = re.compile(rf"^({PRESENTATION})$")

TIMER = re.compile(r"Expired|Timeout|_timer|_delay_expired|Expiry|Fence|_formation_steps|_expire|_drop_session")
COUNTER = re.compile(r"generation|epoch", re.I)
RESET_KEYS = ("owned", "id", "generation", "epoch", "member_epoch", "assigned", "pending_revoke", "rejoin")
RESET_VALUES = re.compile(r"^(0|-1|None|False|\(\)|NO_GENERATION|NO_EPOCH|Id\.NONE|frozenset\(\))$")
ERRORS = ("REBALANCE_IN_PROGRESS", "UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID")


@dataclass(frozen=True)
class SpecMutant:
    """One one-rule change of the model."""

    name: str  # module.qualname:operator#k
    module: str  # e.g. "classic" (groupspec.model.classic)
    family: str
    operator: str
    line: int
    diff: str  # "before  →  after", one line

    @property
    def fullname(self) -> str:
        return f"{PACKAGE}.{self.module}"


# qualname, operator, line, before, after, apply (a lambda binding its arguments as defaults), node
Site = tuple[str, str, int, str, str, Callable[..., object], ast.AST]


def _short(node: ast.AST, width: int = 90) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _replace(parent: ast.AST, field: str, index: int | None, new: ast.AST) -> None:
    if index is None:
        setattr(parent, field, new)
    else:
        getattr(parent, field)[index] = new


def _children(node: ast.AST) -> Iterator[tuple[str, int | None, ast.AST]]:
    for field, value in ast.iter_fields(node):
        if isinstance(value, list):
            for k, v in enumerate(value):
                if isinstance(v, ast.AST):
                    yield field, k, v
        elif isinstance(value, ast.AST):
            yield field, None, value


def _yields_timer(body: list[ast.stmt]) -> bool:
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, (ast.Yield, ast.YieldFrom)) and TIMER.search(ast.unparse(n)):
                return True
    return False


def _sites(tree: ast.Module, skip: re.Pattern[str] = NOT_RULES) -> Iterator[Site]:
    """Every mutation site of a module, in a fixed order (source order, depth first), but in the functions ``skip``
    names (a site's name counts only its own function's sites, so skipping others never renames it)."""

    def walk(node: ast.AST, qual: str, in_fn: bool, in_compare: bool) -> Iterator[Site]:
        for field, index, child in _children(node):
            q, fn = qual, in_fn
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if skip.match(child.name):
                    continue
                q = f"{qual}.{child.name}" if qual else child.name
                fn = in_fn or not isinstance(child, ast.ClassDef)
            if fn:
                yield from _at(node, field, index, child, q)
            yield from walk(child, q, fn, in_compare or isinstance(child, ast.Compare))

    def _at(parent: ast.AST, field: str, index: int | None, n: ast.AST, q: str) -> Iterator[Site]:
        line = getattr(n, "lineno", 0)
        if isinstance(n, (ast.If, ast.IfExp)):
            test = n.test
            before = _short(test)
            yield (q, "negate-guard", line, f"if {before}", f"if not ({before})",
                   lambda n=n, t=test: setattr(n, "test", ast.UnaryOp(op=ast.Not(), operand=t)), n)
            if isinstance(n, ast.If):
                op = "timer-early" if _yields_timer(n.body) else "drop-guard"
                yield (q, op, line, f"if {before}", "if True", lambda n=n: setattr(n, "test", ast.Constant(True)), n)
        if isinstance(n, ast.BoolOp) and isinstance(n.op, ast.And) and len(n.values) >= 2:  # a guard's conjunct
            word = "and"
            for k in range(len(n.values)):
                rest = [v for j, v in enumerate(n.values) if j != k]
                new = rest[0] if len(rest) == 1 else ast.BoolOp(op=n.op, values=rest)
                yield (q, "drop-term", line, _short(n), f"({word} without {_short(n.values[k], 40)})",
                       lambda p=parent, f=field, i=index, new=new: _replace(p, f, i, new), n)
        if isinstance(n, ast.Return) and isinstance(n.value, (ast.Compare, ast.BoolOp)):
            v = n.value
            yield (q, "negate-return", line, f"return {_short(v)}", f"return not ({_short(v)})",
                   lambda n=n, v=v: setattr(n, "value", ast.UnaryOp(op=ast.Not(), operand=v)), n)
        if (isinstance(n, ast.Compare) and len(n.ops) == 1 and COUNTER.search(ast.unparse(n))
                and not any(isinstance(x, (ast.Tuple, ast.List)) for x in (n.left, *n.comparators))
                and not any(isinstance(x, ast.Name) and not COUNTER.search(x.id) and not x.id.isupper()
                            for x in (n.left, *n.comparators))):
            flip = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
            cmp = type(n.ops[0])
            if cmp in flip:
                new = ast.Compare(left=n.left, ops=[flip[cmp]()], comparators=n.comparators)
                yield (q, "off-by-one", line, _short(n), _short(new),
                       lambda p=parent, f=field, i=index, new=new: _replace(p, f, i, new), n)
            elif cmp in (ast.Eq, ast.NotEq):
                right = ast.BinOp(left=n.comparators[0], op=ast.Add(), right=ast.Constant(1))
                new = ast.Compare(left=n.left, ops=n.ops, comparators=[right])
                yield (q, "off-by-one", line, _short(n), _short(new),
                       lambda p=parent, f=field, i=index, new=new: _replace(p, f, i, new), n)
        if (isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub)) and isinstance(n.right, ast.Constant)
                and n.right.value == 1 and COUNTER.search(ast.unparse(n.left))):
            yield (q, "off-by-one", line, _short(n), _short(n.left),
                   lambda p=parent, f=field, i=index, new=n.left: _replace(p, f, i, new), n)
        if isinstance(n, ast.Call) and n.keywords and (
                (isinstance(n.func, ast.Attribute) and n.func.attr in ("but", "replace"))
                or (isinstance(n.func, ast.Name) and n.func.id in ("replace", "_r"))):
            for k, kw in enumerate(n.keywords):
                if kw.arg not in RESET_KEYS:
                    continue
                value = ast.unparse(kw.value)
                if RESET_VALUES.match(value):
                    opname = f"keep-{kw.arg}"
                elif kw.arg == "owned":
                    opname = "skip-callback"
                else:
                    continue
                yield (q, opname, line, f"{kw.arg}={_short(kw.value, 50)}", f"(no {kw.arg}=: kept)",
                       lambda n=n, k=k: n.keywords.pop(k), n)
        if isinstance(n, ast.Expr) and isinstance(n.value, (ast.Yield, ast.YieldFrom)) and TIMER.search(ast.unparse(n)):
            yield (q, "timer-never", line, _short(n), "pass",
                   lambda p=parent, f=field, i=index: _replace(p, f, i, ast.Pass()), n)
        if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "Reply"
                and n.attr in ERRORS and isinstance(n.ctx, ast.Load) and not isinstance(parent, ast.Compare)
                and not (isinstance(parent, (ast.Tuple, ast.List, ast.Set)))):
            other = ERRORS[(ERRORS.index(n.attr) + 1) % len(ERRORS)]
            yield (q, "wrong-error", line, f"Reply.{n.attr}", f"Reply.{other}",
                   lambda n=n, o=other: setattr(n, "attr", o), n)

    yield from walk(tree, "", False, False)


def modules() -> list[str]:
    """The model modules that are mutated, in a fixed order."""
    return sorted(p.stem for p in MODEL_DIR.glob("*.py") if p.stem not in SKIPPED)


def named(module: str, tree: ast.Module, skip: re.Pattern[str] = NOT_RULES) -> Iterator[tuple[str, Site]]:
    counts: dict[tuple[str, str], int] = {}
    for site in _sites(tree, skip):
        q, op = site[0], site[1]
        k = counts.get((q, op), 0)
        counts[(q, op)] = k + 1
        yield f"{module}.{q}:{op}#{k}", site


def generate(only: Iterator[str] | None = None, skip: re.Pattern[str] = NOT_RULES) -> list[SpecMutant]:
    """Every mutant of every mutated model module (or of the modules named in ``only``)."""
    out: list[SpecMutant] = []
    for module in (list(only) if only is not None else modules()):
        tree = ast.parse((MODEL_DIR / f"{module}.py").read_text(), filename=f"model/{module}.py")
        for name, (_q, op, line, before, after, _apply, _node) in named(module, tree, skip):
            out.append(SpecMutant(name, module, FAMILIES.get(module, "classic"), op, line, f"L{line}: {before}  →  {after}"))
    return out


def declaration_mutants() -> list[SpecMutant]:
    """The mutants of the declarations (``DECLARATIONS``) the campaign leaves out: the tests show each is seen."""
    declared = re.compile(rf"^({DECLARATIONS})$")
    return [m for m in generate(skip=_ONLY_PRESENTATION) if declared.match(m.name.split(":")[0].rsplit(".", 1)[-1])]


def mutated_code(m: SpecMutant) -> CodeType:
    """The code object of ``m.module`` with ``m`` applied (the file on disk is never written)."""
    path = MODEL_DIR / f"{m.module}.py"
    tree = ast.parse(path.read_text(), filename=str(path))
    for name, site in named(m.module, tree, _ONLY_PRESENTATION):
        if name == m.name:
            site[5]()
            ast.fix_missing_locations(tree)
            return compile(tree, str(path), "exec")
    raise KeyError(f"no mutant {m.name!r} in model/{m.module}.py (the source changed?)")
