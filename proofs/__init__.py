"""Z3 encodings of the specification in ``groupspec.model``.

* :mod:`~groupspec.proofs.epr` — a small EPR prover (two-vocabulary actions, obligations, CTIs).
* :mod:`~groupspec.proofs.classic` — the classic protocol as relations over uninterpreted sorts:
  unbounded inductive proofs of exclusive ownership, commit fencing, generation monotonicity.
* :mod:`~groupspec.proofs.finite` — model/'s exact transition relation on finite instances, in Z3.
* :mod:`~groupspec.proofs.bmc` — bounded model checking and bounded liveness (lassos) on it.
* :mod:`~groupspec.proofs.drift` — the check that the Z3 relation and model/ agree, action by action.
* :mod:`~groupspec.proofs.abstraction` — model/ states as relational structures (the invariant is
  checked on them).
* :mod:`~groupspec.proofs.liveness` — the ranking argument for convergence on finite instances.
* :mod:`~groupspec.proofs.report` — :func:`run_all`, used by ``groupspec prove``; its :func:`plan` (independent
  tasks) and :func:`assemble` (the report), used by ``groupspec verify`` in its one pool.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable


def run_all(protocol: str | None = None, deep: bool = False, jobs: int | None = None,
            progress: Callable[[str], None] | None = None) -> Report:
    """Every proof obligation (see :func:`groupspec.proofs.report.run_all`)."""
    from .report import run_all as _run

    return _run(protocol, deep=deep, jobs=jobs, progress=progress)


__all__ = ["run_all", "plan", "assemble", "PROTOCOLS", "Check", "Report"]


# Imported on first use (PEP 562), so that importing this front door stays as cheap as it was.
_LAZY = {"PROTOCOLS": "report", "plan": "report", "assemble": "report", "Check": "report", "Report": "report"}

if TYPE_CHECKING:
    from .report import PROTOCOLS, Check, Report, assemble, plan


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_LAZY[name]}", __name__), name)
