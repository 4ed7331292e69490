"""Which family plug-in of the one compiled search runs a protocol object, and whether the search is compiled yet.

The model says which compiled encoding covers an object (``Spec.compiled_encoding``, model/spec.py: the
variant's own switch, the faults, the rules its kernel mirrors); the kernels add their size limits here.
Each family's Python binding (rows, action codes, parameters, the target table) is ``engine.Kernel``
(classic) or ``consumer_engine.ConsumerKernel`` (KIP-848, the migration); their compiled functions are behind
``families.py``.
"""
from __future__ import annotations

from typing import Any

from groupspec.model.spec import COMPILED_CLASSIC, COMPILED_CONSUMER, COMPILED_MIGRATION, Spec, SpecBase

from . import families as FAM
from . import kernel as K
from . import parallel as PAR
from . import search as S

FAMILY_OF = {COMPILED_CLASSIC: FAM.CLASSIC, COMPILED_CONSUMER: FAM.CONSUMER, COMPILED_MIGRATION: FAM.MIGRATION}


def classic_kernel_covers(proto: Spec) -> bool:
    """The classic kernel's own limits: a classic variant, an assignor it encodes, at most 7 members."""
    return (isinstance(proto, SpecBase) and proto.encoding == COMPILED_CLASSIC
            and proto.assignor_name in K.ASSIGNOR_IDS and proto.cfg.members <= 7)


def family_of(proto: Spec) -> int | None:
    """The compiled family (``families.CLASSIC``, ``CONSUMER``, ``MIGRATION``) that runs ``proto``, or None: the
    model says which encoding covers it (``Spec.compiled_encoding``), the kernel adds its size limits."""
    enc = proto.compiled_encoding()
    if enc is None or (enc == COMPILED_CLASSIC and not classic_kernel_covers(proto)):
        return None
    return FAMILY_OF[enc]


def supports(proto: Spec) -> bool:
    """Whether a compiled encoding covers this protocol object."""
    return family_of(proto) is not None


def needs_compiling(workers: int = 1) -> bool:
    """Whether numba must compile the engine before it can search (the first run on a machine, ~50 s).

    Reads numba's on-disk cache of the search loop that will run: the one-worker search, or for ``workers`` > 1
    the parallel search's expansion and merge (which run instead of it): compiled code for the current source
    means a warm start. When the cache cannot be read (a numba without these internals), says False: better no
    notice than a wrong one.
    """
    funcs: list[Any] = [PAR.expand, PAR.merge] if workers > 1 else [S.search]
    try:
        return any(not f._cache._cache_file._load_index() for f in funcs)
    except Exception:  # noqa: BLE001 - private numba internals; never let them stop a search
        return False


__all__ = ["FAMILY_OF", "classic_kernel_covers", "family_of", "needs_compiling", "supports"]
