"""A real-stack run ends once the group has converged, or at its stated limit, and says which (issue #31);
a missing client library is one line."""
from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from groupspec.realstack import harness
from groupspec.realstack.coordinators import CoordinatorError, LibrdkafkaMock
from groupspec.realstack.ending import Ownership
from groupspec.realstack.scenarios import SCENARIOS, RealScenario, Step


def _assigned(ts, member, parts, protocol="eager"):
    return {"ts_ms": ts, "member": member, "event": "assigned", "partitions": [["t", p] for p in parts],
            "protocol": protocol}


def test_converged_means_complete_exclusive_and_balanced_among_live_members():
    own = Ownership()
    own.feed({"ts_ms": 0, "event": "topic", "topic": "t", "partitions": 6})
    own.feed(_assigned(10, "c1", [0, 1, 2]))
    own.feed(_assigned(10, "c2", [3, 4, 5]))
    assert own.converged({"c1", "c2"})
    assert not own.converged({"c1", "c2", "c3"})  # c3 started but owns nothing yet: not balanced
    own.feed(_assigned(20, "c3", [4, 5]))
    assert not own.converged({"c1", "c2", "c3"})  # 4 and 5 owned twice
    own.feed({"ts_ms": 30, "member": "c2", "event": "revoked", "partitions": [["t", 3], ["t", 4], ["t", 5]]})
    own.feed(_assigned(30, "c2", [2, 3]))
    own.feed({"ts_ms": 30, "member": "c1", "event": "revoked", "partitions": [["t", 0], ["t", 1], ["t", 2]]})
    own.feed(_assigned(30, "c1", [0, 1]))
    assert own.converged({"c1", "c2", "c3"}) and own.changed_ms == 30
    own.feed({"ts_ms": 40, "member": "c3", "event": "left"})
    assert not own.converged({"c1", "c2", "c3"})  # 4 and 5 unowned


class _Proc:
    def poll(self):
        return None


def _late_member_run(tmp_path: Path, late_s: float, limit: float) -> tuple[str, float]:
    """c1 and c2 own everything from the start; c3, started too, is assigned only ``late_s`` after the story ended."""
    sc = RealScenario("late", "c3 comes up late", (Step(0, "start", "c1"),), 0.5, limit=limit)
    origin = time.time() * 1000
    files = {m: tmp_path / f"{m}.jsonl" for m in ("c1", "c2", "c3")}
    with open(files["c1"], "w") as f:
        f.write(json.dumps(_assigned(0, "c1", [0, 1, 2, 3])) + "\n")
    with open(files["c2"], "w") as f:
        f.write(json.dumps(_assigned(0, "c2", [4, 5])) + "\n")

    def late() -> None:
        time.sleep(sc.duration_s + late_s)
        ts = int(time.time() * 1000 - origin)
        with open(files["c1"], "a") as f:
            f.write(json.dumps({"ts_ms": ts, "member": "c1", "event": "revoked", "partitions": [["t", 2], ["t", 3]]}) + "\n")
        with open(files["c3"], "a") as f:
            f.write(json.dumps(_assigned(ts, "c3", [2, 3])) + "\n")

    threading.Thread(target=late, daemon=True).start()
    workers = {m: harness._Worker(m, _Proc()) for m in files}
    lines = [{"ts_ms": 0, "group": "g", "event": "topic", "topic": "t", "partitions": 6}]
    t0 = time.monotonic()
    ended = harness._until_converged(sc, origin, workers, tmp_path, lines, lambda _m: None)
    return ended, time.monotonic() - t0


def test_a_run_waits_for_a_late_member_then_ends_converged(tmp_path: Path):
    ended, took = _late_member_run(tmp_path, late_s=1.0, limit=20)
    assert ended == "converged"
    assert 0.5 + 1.0 + 3.0 - 0.3 <= took < 10  # the late assignment, then the settle time (3 s)


def test_a_run_that_never_converges_ends_at_its_limit(tmp_path: Path):
    ended, took = _late_member_run(tmp_path, late_s=30, limit=2.0)
    assert ended == "limit" and 1.7 <= took < 5


def test_every_scenario_states_a_limit_past_its_story():
    assert all(s.limit_s > s.duration_s for s in SCENARIOS.values())


def test_a_missing_client_library_is_one_line(monkeypatch):
    from groupspec.cli import cli as cli_main

    monkeypatch.setitem(sys.modules, "aiokafka", None)  # import aiokafka now raises ImportError
    r = CliRunner().invoke(cli_main, ["realstack", "run", "pair-joins", "--client", "aiokafka",
                                      "--coordinator", "groupspec"])
    assert r.exit_code == 3
    lines = r.stderr.strip().splitlines() if hasattr(r, "stderr") else r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("groupspec: error: client aiokafka: the Python package aiokafka "
                                                   "is not installed"), lines


def test_the_mock_cluster_helper_says_confluent_kafka_is_missing(tmp_path: Path, monkeypatch):
    fake = tmp_path / "confluent_kafka"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError(\"No module named 'confluent_kafka'\")\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    with pytest.raises(CoordinatorError) as e:
        LibrdkafkaMock().start()
    msg = str(e.value)
    assert "confluent-kafka" in msg and "not installed" in msg and "did not report" not in msg and "\n" not in msg
