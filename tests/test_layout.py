"""The installed distribution exposes one import namespace and no generic top-level package."""
from __future__ import annotations

import importlib.metadata as md
import importlib.util
import subprocess
import sys


def test_subpackages_import_under_groupspec():
    for name in ("groupspec.model", "groupspec.reference", "groupspec.proofs", "groupspec.cli"):
        assert importlib.util.find_spec(name) is not None, name


def test_no_generic_top_level_package_installed(tmp_path):
    # Run from an empty directory so the checkout itself is not on sys.path.
    code = "import importlib.util,sys; sys.exit(any(importlib.util.find_spec(n) for n in ('model','reference','proofs')))"
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path)
    assert r.returncode == 0, "a generic top-level package (model/reference/proofs) is importable"


def test_console_script_declared():
    eps = md.entry_points(group="console_scripts")
    assert any(ep.name == "groupspec" and ep.value == "groupspec.cli:main" for ep in eps)


def test_reference_never_imports_model():
    import pathlib
    import re

    pattern = re.compile(r"^\s*(from\s+(groupspec\.model|\.\.model)\b|import\s+groupspec\.model\b)", re.M)
    root = pathlib.Path(__file__).resolve().parents[1] / "reference"
    offenders = [str(p) for p in root.rglob("*.py") if pattern.search(p.read_text())]
    assert offenders == []
