"""A compiled encoding of the classic protocol, for exploring large instances fast.

``groupspec.model`` is the specification; this package encodes it a second time, with numba, as
``groupspec.proofs`` encodes it for Z3, and is checked against it state by state by the drift tests.
``groupspec check --engine compiled`` (the default where it applies) uses it.
"""
from __future__ import annotations

from .engine import CompiledExplorer, Kernel, supports

__all__ = ["CompiledExplorer", "Kernel", "supports"]
