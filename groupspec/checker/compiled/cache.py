"""Keep numba's on-disk cache of the compiled engine in step with its source.

NOTE(numba-cache): numba's ``cache=True`` keys a cached function on its *own* file's time stamp and size.
``search.search`` inlines the transition relations of the kernels (``families.py``); when ``kernel.py`` (or ``layout.py``)
changes and ``search.py`` does not, numba would load the old machine code for the search, and the engine
would explore the old protocol (the replay of counterexamples then reports "compiled engine drift"). So
before the engine is imported, :func:`invalidate_if_stale` compares a digest of the package's sources with
the one recorded beside the cache, and removes the package's cache files when they differ.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

SOURCES = ("kernel.py", "classic_words.py", "layout.py", "lean.py", "families.py", "search.py", "engine.py", "parallel.py",
           "consumer_kernel.py",
           "consumer_keys.py", "migration_kernel.py", "migration_properties.py")
STAMP = "groupspec-sources.sha256"


def sources_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for name in SOURCES:
        p = folder / name
        h.update(name.encode())
        h.update(p.read_bytes() if p.exists() else b"")
    return h.hexdigest()


def invalidate_if_stale(folder: Path | None = None) -> bool:
    """Remove the numba cache files of ``folder`` (default: this package) if its sources changed since they
    were written; return whether it removed any. Never raises: at worst numba compiles again."""
    folder = folder or Path(__file__).resolve().parent
    cache = folder / "__pycache__"
    digest = sources_digest(folder)
    stamp = cache / STAMP
    try:
        if stamp.exists() and stamp.read_text().strip() == digest:
            return False
        removed = False
        if cache.is_dir():
            for f in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
                f.unlink(missing_ok=True)
                removed = True
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest + "\n")
        return removed
    except OSError:
        return False
