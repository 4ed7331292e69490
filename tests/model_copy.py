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


PRELUDE = '''
import importlib.util, sys
spec = importlib.util.spec_from_file_location("groupspec.model", {init!r}, submodule_search_locations=[{root!r}])
mod = importlib.util.module_from_spec(spec)
sys.modules["groupspec.model"] = mod
spec.loader.exec_module(mod)
import groupspec
groupspec.model = mod
assert "{marker}" in open({edited!r}).read()
'''


def run_with_mutant(tmp_path: Path, filename: str, old: str, new: str, code: str, timeout: int = 900):  # type: ignore[no-untyped-def]
    """Run ``code`` in a fresh Python process in which ``groupspec.model`` *is* the edited copy of model/
    (every room that imports the model — the checker, the proofs, the conformance suite — gets the copy).
    Returns the ``subprocess.CompletedProcess``."""
    import subprocess

    mod = mutant(tmp_path, filename, old, new)  # the copy, checked to differ by one line
    root = Path(mod.__file__).parent
    prelude = PRELUDE.format(init=str(root / "__init__.py"), root=str(root), edited=str(root / filename),
                             marker=new.strip())
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, timeout=timeout)
