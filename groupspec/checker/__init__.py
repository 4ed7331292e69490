"""The explicit-state checker: explores the model exhaustively and explains what it finds.

Owns the breadth-first search on the model's own code (:mod:`.explorer`), the compiled engine for the
classic protocol (:mod:`.compiled`), the choice between them and the entry point :func:`check`
(:mod:`.engines`), and the counterexample timelines (:mod:`.timeline`).

May import: ``groupspec.model`` (never ``groupspec.reference``: the checker judges the specification
alone). Imported by the CLI, ``groupspec.verify``, ``groupspec.conformance`` and ``groupspec.proofs``
(timelines of bounded counterexamples).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .engines import COMPILE_NOTICE, ENGINES, LIMITS, check, make_explorer, validate, validate_faults
from .explorer import Explorer, Result, Step, Verdict

__all__ = ["COMPILE_NOTICE", "ENGINES", "LIMITS", "Explorer", "Result", "Step", "Verdict", "check", "make_explorer",
    "validate", "validate_faults", "explain", "render", "timeline_json", "export_graph", "needs_compiling"]


# Imported on first use (PEP 562), so that importing this front door stays as cheap as it was.
_LAZY = {"explain": "timeline", "render": "timeline", "timeline_json": "timeline", "export_graph": "export",
         "needs_compiling": "compiled"}

_RENAMED = {"timeline_json": "to_json"}  # exported under a name that says whose JSON it is

if TYPE_CHECKING:
    from .timeline import explain, render, to_json as timeline_json
    from .export import export_graph
    from .compiled import needs_compiling


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_LAZY[name]}", __name__), _RENAMED.get(name, name))
