"""A copy of model/ with one line of one file replaced, imported as its own package (tests only).

``mutant(tmp_path, "consumer.py", old, new)`` copies the whole ``model/`` room (it imports nothing
outside itself) to ``tmp_path``, replaces the one line containing ``old`` (which must occur exactly
once) by the same line with ``old`` replaced by ``new``, and returns the imported package: its
``make(name, Config)`` builds the mutated protocol. The original model is untouched.
"""
from __future__ import annotations

import importlib
import itertools
import shutil
import sys
from pathlib import Path
from types import ModuleType

MODEL = Path(__file__).resolve().parents[1] / "model"
_names = itertools.count()


def mutant(tmp_path: Path, filename: str, old: str, new: str) -> ModuleType:
    name = f"groupspec_model_mutant_{next(_names)}"
    dst = tmp_path / name
    shutil.copytree(MODEL, dst, ignore=shutil.ignore_patterns("__pycache__"))
    path = dst / filename
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in model/{filename}"
    lines = text.splitlines(keepends=True)
    where = [i for i, ln in enumerate(lines) if old.rstrip("\n") in ln]
    assert len(where) == 1, f"{old!r} is not on one line of model/{filename}"
    lines[where[0]] = lines[where[0]].replace(old.rstrip("\n"), new.rstrip("\n"))
    path.write_text("".join(lines))
    assert sum(a != b for a, b in zip(text.splitlines(), "".join(lines).splitlines())) == 1
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))
