"""Ctrl-C and SIGTERM during a Spark job: the jobs are cancelled, the session stops, one line, 130 / 143,
no py4j traceback, no staged output and no process left behind."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

GROUPSPEC = str(Path(sys.executable).parent / "groupspec")


# the JVM (Spark starting) / Spark's Python workers (a task running: the daemon's command line, not the JVM's)
STAGES = {"starting": "org.apache.spark.deploy.SparkSubmit", "running": "python -m groupspec.pipeline.daemon|pyspark.worker"}


def _reached(pgid: int, stage: str) -> bool:
    return bool(subprocess.run(["pgrep", "-g", str(pgid), "-f", STAGES[stage]], capture_output=True,
                               text=True).stdout.split())


@pytest.mark.parametrize(("sig", "code", "line", "stage"), [
    (signal.SIGINT, 130, "groupspec: interrupted", "running"),
    (signal.SIGINT, 130, "groupspec: interrupted", "starting"),
    (signal.SIGTERM, 143, "groupspec: terminated", "running"),
])
def test_a_sweep_stops_cleanly(tmp_path: Path, sig: signal.Signals, code: int, line: str, stage: str) -> None:
    p = subprocess.Popen([GROUPSPEC, "sweep", "--preset", "history", "--master", "local[2]", "--out", "out"],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        for _ in range(1800):  # until a task runs (Spark takes seconds to start on a busy machine)
            if _reached(p.pid, stage) or p.poll() is not None:
                break
            time.sleep(0.1)
        assert p.poll() is None, p.communicate()
        time.sleep(1.0 if stage == "running" else 0.3)
        # Ctrl-C reaches the whole foreground process group; kill and timeout send SIGTERM to the command only
        if sig == signal.SIGINT:
            os.killpg(p.pid, sig)
        else:
            os.kill(p.pid, sig)
        out, err = p.communicate(timeout=180)  # a safety net for a hang
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    text = err.decode()
    assert p.returncode == code, text
    assert text.strip().splitlines()[-1] == line
    assert "Traceback" not in text and "py4j" not in text, text
    assert sorted(x.name for x in tmp_path.iterdir()) == []  # neither --out nor its staging directory
    for _ in range(100):  # the JVM gateway exits when the driver's pipe closes: give it a moment
        left = subprocess.run(["pgrep", "-g", str(p.pid)], capture_output=True, text=True).stdout.split()
        if not left:
            break
        time.sleep(0.1)
    assert left == []
