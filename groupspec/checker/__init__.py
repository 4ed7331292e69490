"""The explicit-state checker: explores the model exhaustively and explains what it finds.

Owns the breadth-first search on the model's own code (:mod:`.explorer`), the compiled engine for the
classic protocol (:mod:`.compiled`), the choice between them and the entry point :func:`check`
(:mod:`.engines`), and the counterexample timelines (:mod:`.timeline`).

May import: ``groupspec.model`` (never ``groupspec.reference``: the checker judges the specification
alone). Imported by the CLI, ``groupspec.verify``, ``groupspec.conformance`` and ``groupspec.proofs``
(timelines of bounded counterexamples).
"""
from __future__ import annotations

from .engines import ENGINES, LIMITS, check, make_explorer
from .explorer import Explorer, Result, Step, Verdict

__all__ = ["ENGINES", "LIMITS", "Explorer", "Result", "Step", "Verdict", "check", "make_explorer"]
