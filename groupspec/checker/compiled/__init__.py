"""Compiled encodings of the protocol families, for exploring large instances fast: one search (``search.py``,
serial and on several threads with ``parallel.py``; the lean store in ``lean.py``) and the family kernels as
its plug-ins (``families.py``: the classic protocol ``kernel.py``, the KIP-848 consumer family
``consumer_kernel.py``, the migration ``migration_kernel.py``; which one runs an object: ``plugins.py``).

``groupspec.model`` is the specification; this package encodes it a second time, with numba, as
``groupspec.proofs`` encodes it for Z3, and is checked against it state by state by the drift tests.
``groupspec check --engine compiled`` (the default where it applies) uses it.
"""
from __future__ import annotations

from .cache import invalidate_if_stale

invalidate_if_stale()  # before numba loads anything: see NOTE(numba-cache) in cache.py

from .engine import CompiledExplorer, Kernel, kernel_for  # noqa: E402
from .plugins import family_of, needs_compiling, supports  # noqa: E402

__all__ = ["CompiledExplorer", "Kernel", "family_of", "kernel_for", "needs_compiling", "supports"]
