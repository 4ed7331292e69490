"""An assignor module that hangs at import does not hang `groupspec assignor check`: the import runs under a
time limit and a module whose import does not finish is one line and exit 2 (issue 33)."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from groupspec.assignorcheck.load import LoadError, load_candidate

EXE = str(Path(sys.executable).with_name("groupspec"))
HANGS = "import time\nwhile True:\n    time.sleep(0.05)\n\ndef assign(partitions_per_topic, subscriptions):\n    return {}\n"
SPINS = "while True:\n    pass\n"
SLOW = ("import time\ntime.sleep(0.3)\n\ndef assign(partitions_per_topic, subscriptions):\n"
        "    return {m: [] for m in subscriptions}\n")


@pytest.mark.parametrize("source", [HANGS, SPINS], ids=["sleeps", "spins"])
def test_a_hanging_import_is_a_load_error_within_the_limit(tmp_path, monkeypatch, source):
    name = f"hangs_at_import_{len(source)}_zz"
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    t0 = time.monotonic()
    with pytest.raises(LoadError, match=r"did not finish within 0\.5 s"):
        load_candidate(f"{name}:assign", import_timeout=0.5)
    assert time.monotonic() - t0 < 5


def test_an_import_within_the_limit_loads(tmp_path, monkeypatch):
    (tmp_path / "slow_import_zz.py").write_text(SLOW)
    monkeypatch.syspath_prepend(str(tmp_path))
    cand = load_candidate("slow_import_zz:assign", import_timeout=10)
    assert cand.call({"t": 1}, {"a": {"topics": ["t"]}}) == {"a": []}


def test_an_import_that_raises_is_still_reported_as_such(tmp_path, monkeypatch):
    (tmp_path / "raises_zz.py").write_text("raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(LoadError, match="raised RuntimeError: boom"):
        load_candidate("raises_zz:assign", import_timeout=5)


def test_cli_one_line_and_exit_2_when_the_import_hangs(tmp_path):
    (tmp_path / "hangs_cli_zz.py").write_text(HANGS)
    t0 = time.monotonic()
    r = subprocess.run([EXE, "assignor", "check", "hangs_cli_zz:assign", "--call-timeout", "1"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("groupspec: error:"), r.stderr
    assert "importing 'hangs_cli_zz' did not finish within 20 s" in lines[0]
    assert time.monotonic() - t0 < 90
