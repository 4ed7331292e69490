"""The long fuzz of `groupspec serve` (bench/fuzz_serve.py), briefly: every frame accounted for, no loop error.
`make test-deep` runs it for 30 s; the 10-minute run is `python bench/fuzz_serve.py --minutes 10`."""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "bench" / "fuzz_serve.py"


@pytest.mark.deep
def test_a_short_long_fuzz_accounts_for_every_frame():
    r = subprocess.run([sys.executable, str(SCRIPT), "--minutes", "0.5", "--json", "--wait", "0.5"],
                       capture_output=True, text=True, timeout=300)
    seed = r.stderr.splitlines()[0] if r.stderr else ""
    report = json.loads(r.stdout)
    assert r.returncode == 0 and report["failure_count"] == 0, (seed, report["failures"])
    assert report["loop_error"] == 0 and report["internal_error"] == 0, seed
    assert report["exchanges"] > 50
    sent = {k for k in report["outcomes"] if k.startswith("sent: ")}
    assert sent == {"sent: clean", "sent: flip", "sent: null", "sent: lie", "sent: cut"}
