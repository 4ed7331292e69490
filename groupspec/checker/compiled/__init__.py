"""A compiled encoding of the classic protocol (and of the KIP-848 consumer family and the migration:
``consumer_engine``), for exploring large instances fast.

``groupspec.model`` is the specification; this package encodes it a second time, with numba, as
``groupspec.proofs`` encodes it for Z3, and is checked against it state by state by the drift tests.
``groupspec check --engine compiled`` (the default where it applies) uses it.
"""
from __future__ import annotations

from .cache import invalidate_if_stale

invalidate_if_stale()  # before numba loads anything: see NOTE(numba-cache) in cache.py

from .engine import CompiledExplorer, Kernel, needs_compiling, supports  # noqa: E402

__all__ = ["CompiledExplorer", "Kernel", "needs_compiling", "supports"]
