"""Which lines of ``model/`` a check reaches on the unchanged model, and so which mutants it can tell apart.

A check is deterministic (the explorer's exhaustive search, the derandomized conformance suites, the assignor
oracle's fixed sample, the recorded schedules): run on a mutant, it takes the very steps it took on the
unchanged model up to the first time it evaluates the changed code. If on the unchanged model it never evaluates
any line of the statement a mutant changes, it never evaluates the change on the mutant either, and its verdict
is the baseline's: running it cannot kill the mutant. :func:`reached` records, while a check runs on the unchanged
model (once, in the baseline), every line of every model module it executes; :func:`span` is the lines of the
statement a mutant changes (the innermost statement that holds the changed node: for a guard the whole ``if``,
whose body runs only after its test). The campaign tries a mutant only with the checks that reached one of them.

The Kafka walks are seeded one by one and Kafka's coordinator is reset before each, so the same holds walk by walk:
a classic walk (``kafka_walks``) is recorded as its own segment, and a mutant is sent only along the walks that
executed its statement on the unchanged model, plus every walk that ended where Kafka elected another leader by its
random member ids (on another run such a walk may go on: its reach is not fixed). The recorded schedules of the
``conformance:regressions`` checks are segments too (each replayed on its own). The KIP-848 walks have no segments
yet: they run whole on every mutant of a module they execute.

May import: ``.operators``.
"""
from __future__ import annotations

import ast
import contextlib
import sys
from functools import lru_cache
from types import CodeType, FrameType
from typing import Any, Callable, Iterator

Tracer = Callable[[FrameType, str, Any], Any]  # a sys.settrace local trace function

from .operators import MODEL_DIR, SpecMutant, named


class Recorder:
    """The lines a traced run executed, in total (``hits``) and per segment (``segments``: one per Kafka walk or
    recorded schedule; ``hits`` then holds what ran outside every segment, which every segment shares)."""

    def __init__(self) -> None:
        self.hits: dict[str, set[int]] = {}
        self.segments: dict[Any, dict[str, set[int]]] = {}
        self.unsure: set[Any] = set()  # segments whose reach is not fixed (a walk ended by Kafka's own choice)
        self.current: dict[str, set[int]] | None = None
        self.tracers: dict[CodeType, "tuple[Tracer, set[int]] | None"] = {}  # per code object: its tracer, lines left

    def segment(self, label: Any) -> None:
        """From now on the lines executed are also recorded under ``label``."""
        self.current = self.segments.setdefault(label, {})
        self.tracers.clear()  # every code object traced afresh for this segment

    def not_fixed(self) -> None:
        """The current segment may reach other lines on another run."""
        for label, seg in self.segments.items():
            if seg is self.current:
                self.unsure.add(label)

    def total(self) -> dict[str, list[int]]:
        out = {m: set(v) for m, v in self.hits.items()}
        for seg in self.segments.values():
            for m, v in seg.items():
                out.setdefault(m, set()).update(v)
        return {m: sorted(v) for m, v in out.items()}


_ACTIVE: list[Recorder] = []


def current() -> Recorder | None:
    """The recorder of the traced run in progress (None: not traced), for a check that marks its segments."""
    return _ACTIVE[-1] if _ACTIVE else None


@contextlib.contextmanager
def reached() -> Iterator[Recorder]:
    """Within the block, record every line executed in a model module (``Recorder.total()``: ``{module: [line]}``).

    ``sys.settrace`` with a local tracer only on frames of model code; a code object whose lines have all been
    seen (in the current segment) is no longer traced (its frames run at full speed)."""
    root = str(MODEL_DIR)
    rec = Recorder()
    tracers = rec.tracers

    def tracer_for(co: CodeType) -> tuple[Tracer, set[int]] | None:
        fn = co.co_filename
        if not fn.startswith(root):
            return None
        module = fn[len(root) + 1:].removesuffix(".py")
        if "/" in module or "\\" in module:
            return None
        where = rec.current if rec.current is not None else rec.hits
        lines = where.setdefault(module, set())
        left = {ln for _a, _b, ln in co.co_lines() if ln is not None} - lines

        def local(frame: FrameType, event: str, _arg: Any) -> Tracer:
            if event == "line":
                ln = frame.f_lineno
                lines.add(ln)
                left.discard(ln)
            return local

        return local, left

    def glob(frame: FrameType, _event: str, _arg: Any) -> Tracer | None:
        co = frame.f_code
        if co in tracers:
            t = tracers[co]
        else:
            t = tracers[co] = tracer_for(co)
        if t is None or not t[1]:  # not model code, or every line of it seen already
            return None
        return t[0]

    old = sys.gettrace()
    _ACTIVE.append(rec)
    sys.settrace(glob)
    try:
        yield rec
    finally:
        sys.settrace(old)
        _ACTIVE.pop()


@lru_cache(maxsize=None)
def _spans(module: str) -> dict[str, tuple[int, int]]:
    """Every mutant of ``module``: the first and last line of the innermost statement holding the changed node."""
    tree = ast.parse((MODEL_DIR / f"{module}.py").read_text())
    parents: dict[int, ast.AST] = {}
    for n in ast.walk(tree):
        for c in ast.iter_child_nodes(n):
            parents[id(c)] = n
    out: dict[str, tuple[int, int]] = {}
    for name, site in named(module, tree):
        node = site[6]
        while not isinstance(node, ast.stmt) and id(node) in parents:
            node = parents[id(node)]
        assert isinstance(node, ast.stmt), name  # every site is inside a function's body
        out[name] = (node.lineno, node.end_lineno or node.lineno)
    return out


def span(m: SpecMutant) -> tuple[int, int] | None:
    """The lines of the statement ``m`` changes (None: not inside a function's body; every check may see it)."""
    return _spans(m.module).get(m.name)


def reaches(reach: dict[str, list[int]] | None, m: SpecMutant) -> bool:
    """Whether a check that executed ``reach`` on the unchanged model can tell ``m`` from it (None: unknown, yes)."""
    if reach is None:
        return True
    sp = span(m)
    if sp is None:
        return True
    lines = reach.get(m.module)
    if not lines:
        return False
    lo, hi = sp
    return any(lo <= ln <= hi for ln in lines)
