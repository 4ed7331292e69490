"""The consumer protocol (KIP-848) in the sweep: pipeline/consumer_runs.py, the grid's ``consumer`` value, report claim 7."""
from __future__ import annotations

import pandas as pd
import pytest

from groupspec.pipeline.consumer_runs import run_consumer_point
from groupspec.pipeline.grid import PRESETS, parse_grid
from groupspec.pipeline.points import run_point, run_point_with_trace
from groupspec.pipeline.report import claims
from groupspec.pipeline.runs import ROW_SCHEMA
from groupspec.pipeline.runs import run_point as run_classic_point

CHURN = ("steady", "join", "leave", "crash", "bounce", "rolling-restart", "random")


def _point(**axes):
    doc = {"protocol": "consumer", "assignor": "uniform", "members": 3, "partitions": 12, **axes}
    return parse_grid(doc, "t").points[0]


def test_a_consumer_point_gives_the_same_row_and_trace_every_time() -> None:
    p = _point(churn="random", crash_per_min=2.0, pause_per_min=2.0, seeds=[5])
    row, trace = run_point_with_trace(p, "s")
    assert (row, trace) == run_point_with_trace(p, "s")
    assert set(row) == {n for n, _ in ROW_SCHEMA}
    assert row["protocol"] == "consumer" and row["commit"] == "periodic" and row["records_processed"] is None
    member_lines = [e for e in trace if e["event"] != "topic"]
    assert member_lines and all(e["protocol"] == "consumer" for e in member_lines)
    assert run_point(_point(churn="random", crash_per_min=2.0, pause_per_min=2.0, seeds=[6]), "s") != row


@pytest.mark.parametrize("assignor", ["uniform", "range"])
@pytest.mark.parametrize("churn", CHURN)
def test_correct_runs_pass_the_trace_checker(churn: str, assignor: str) -> None:
    extra = {"crash_per_min": 2.0, "pause_per_min": 2.0} if churn == "random" else {}
    row = run_point(_point(churn=churn, assignor=assignor, members=4, **extra), "t")
    assert row["violations"] == 0, row["violated"]
    assert row["trace_events"] > 0 and row["commits_accepted"] > 0
    if churn != "random":  # a paused member past its session timeout is a zombie: its overlap is allowed
        assert row["double_owned_instants"] == 0
        assert row["converged"] is True


def test_a_coordinator_that_does_not_wait_for_revocation_shows_up_as_violations() -> None:
    p = _point(churn="join")
    ok = run_consumer_point(p, "t")[0]
    bad = run_consumer_point(p, "t", frozenset({"no_wait_release"}))[0]
    assert ok["violations"] == 0
    assert bad["violations"] > 0 and "exclusive_ownership" in bad["violated"].split(",")
    assert bad["double_owned_instants"] > 0


def test_a_consumer_that_never_acknowledges_its_revocation_shows_up_as_violations() -> None:
    bad = run_consumer_point(_point(churn="join"), "t", frozenset({"no_ack_revocation"}))[0]
    assert {"completeness", "convergence"} <= set(bad["violated"].split(","))
    with pytest.raises(ValueError, match="unknown fault"):
        run_consumer_point(_point(churn="join"), "t", frozenset({"nonsense"}))


def test_the_grid_runs_consumer_points_with_server_side_assignors_only() -> None:
    g = parse_grid({"protocol": ["eager", "consumer"], "assignor": ["range", "uniform", "sticky"], "churn": "join",
                    "loss": [0.0, 0.1], "commit": ["auto", "sync"]}, "t")
    runs = {(p.protocol, p.assignor, p.loss, p.commit) for p in g.points}
    assert ("consumer", "uniform", 0.0, "periodic") in runs and ("consumer", "range", 0.0, "periodic") in runs
    assert not any(pr == "consumer" and (loss or a == "sticky") for pr, a, loss, _ in runs)
    assert not any(pr == "eager" and a == "uniform" for pr, a, _, _ in runs)
    # 24 combinations: eager 8 (uniform: 4 dropped); consumer range/uniform without loss 2 (commit collapsed), 8 dropped
    assert len(g) == 10 and g.dropped == 12
    with pytest.raises(ValueError, match="consumer_runs"):
        run_classic_point(_point(churn="join"))


def test_the_report_states_the_comparison_with_the_rows_numbers() -> None:
    grid = parse_grid({**PRESETS["protocols"], "seeds": 1}, "protocols")  # the preset with one seed (20 runs)
    df = pd.DataFrame([run_point(p, "protocols") for p in grid.points])
    c = next(c for c in claims(df) if c["id"] == "protocols")
    by = c["figures"]["by_churn"]
    assert set(by) == {"rolling-restart", "bounce", "join", "leave", "crash"}
    rr = df[(df.churn == "rolling-restart") & (df.protocol == "consumer")]
    assert by["rolling-restart"]["consumer_partition_seconds_unowned"] == pytest.approx(rr.partition_seconds_unowned.mean())
    assert f"{by['rolling-restart']['consumer_partition_seconds_unowned']:,.1f}" in c["text"]
    # one target assignment per join for the consumer protocol, two cooperative rounds for the classic one
    assert by["join"]["consumer_rebalances"] == 1 and by["join"]["cooperative_rebalances"] == 2
    assert by["rolling-restart"]["consumer_partition_seconds_unowned"] < by["rolling-restart"]["cooperative_partition_seconds_unowned"]
    assert c["figures"]["runs_with_violations"] == {"cooperative": 0, "consumer": 0}
    assert next(c for c in claims(df[df.protocol == "consumer"]) if c["id"] == "protocols")["figures"] is None


@pytest.mark.spark
def test_the_protocols_preset_on_spark_gives_the_local_rows_and_the_comparison(tmp_path) -> None:
    import subprocess
    import sys
    from pathlib import Path

    from groupspec.pipeline.grid import preset
    from groupspec.pipeline.sweep import frame_rows, read_rows, rows_locally

    out = tmp_path / "protocols"
    r = subprocess.run([str(Path(sys.executable).parent / "groupspec"), "sweep", "--preset", "protocols", "--master",
                        "local[2]", "--out", str(out), "--json"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert frame_rows(read_rows(out / "rows")) == rows_locally(preset("protocols"))
    report = (out / "report.md").read_text()
    assert "## Classic cooperative vs the consumer protocol (KIP-848)" in report
    assert "![Classic cooperative vs the consumer protocol (KIP-848)](plots/protocols.png)" in report
    assert (out / "plots" / "protocols.png").stat().st_size > 1000
