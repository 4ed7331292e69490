"""The Spark jobs for real (marker ``spark``; ``make test-spark``, which ``make test`` also runs).

* ``groupspec sweep --preset smoke`` in local mode: the rows are those of the same points computed
  without Spark, the report and plots are written, Spark's noise stays in its log file;
* the same sweep on a standalone cluster (master + one worker from the PySpark install, loopback,
  free ports, stopped afterwards): identical rows;
* a job that fails leaves no dataset under ``--out``;
* ``groupspec audit`` agrees with ``groupspec trace check`` on a mixed set of traces.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from groupspec.pipeline.grid import preset
from groupspec.pipeline.sweep import frame_rows, read_rows, rows_locally

pytestmark = pytest.mark.spark

GS = str(Path(sys.executable).parent / "groupspec")


def _sweep(out: Path, master: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([GS, "sweep", "--preset", "smoke", "--master", master, "--out", str(out), "--json",
                           "--traces"], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def local_sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = tmp_path_factory.mktemp("sweep") / "smoke"
    return out, _sweep(out, "local[2]")


def test_sweep_in_local_mode(local_sweep: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    out, r = local_sweep
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # stdout is the JSON document only: no Spark output in it
    assert doc["runs"] == len(preset("smoke"))
    assert frame_rows(read_rows(out / "rows")) == rows_locally(preset("smoke"))
    assert (out / "report.md").read_text().count("![") >= 3
    assert all(p.stat().st_size > 1000 for p in (out / "plots").glob("*.png"))
    log = [line for line in r.stderr.splitlines() if "Spark's logs: " in line]
    assert log and Path(log[0].split("Spark's logs: ")[1]).stat().st_size > 0
    assert "WARN" not in r.stderr and "log4j" not in r.stderr


def test_sweep_on_a_standalone_cluster_gives_the_same_rows(
        local_sweep: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    from groupspec.pipeline.cluster import StandaloneCluster

    with StandaloneCluster(cores=2) as url:
        r = _sweep(tmp_path / "cluster", url)
    assert r.returncode == 0, r.stderr
    assert url in r.stderr
    assert frame_rows(read_rows(tmp_path / "cluster" / "rows")) == frame_rows(read_rows(local_sweep[0] / "rows"))


def test_a_failed_job_leaves_no_dataset(tmp_path: Path) -> None:
    from dataclasses import replace

    from groupspec.pipeline.grid import Grid
    from groupspec.pipeline.output import Staging
    from groupspec.pipeline.spark import spark_session
    from groupspec.pipeline.sweep import run_sweep

    good = preset("smoke").points[0]
    bad = replace(good, protocol="no-such-protocol", assignor="no-such-assignor")  # fails inside a Spark task
    out = tmp_path / "out"
    with pytest.raises(Exception):
        with Staging(out) as stage, spark_session("local[1]", quiet=True) as spark:
            run_sweep(spark, Grid("bad", (good, bad), 0, "test"), stage, progress=False)
    assert list(tmp_path.iterdir()) == []


def _mixed_traces(d: Path) -> list[Path]:
    """Simulator traces of several scenarios (one with a broken variant: a double owner) and a
    two-group file."""
    from groupspec.pipeline.grid import parse_grid
    from groupspec.pipeline.runs import run_point_with_trace
    from groupspec.reference.sim import ScenarioOptions, run_scenario, write_trace

    files = []
    g = parse_grid({"protocol": ["eager", "cooperative", "static"], "assignor": ["range", "cooperative-sticky"],
                    "churn": ["bounce", "crash"], "crash_per_min": [0.0, 3.0]}, "t")
    for p in g.points:
        _, trace = run_point_with_trace(p)
        f = d / f"{p.protocol}-{p.churn}-{p.crash_per_min}.jsonl"
        write_trace(f, trace)
        files.append(f)
    bad = run_scenario("new-consumer-joins", ScenarioOptions(protocol="cooperative", faults=frozenset({"same_round_transfer"})))
    write_trace(d / "violating.jsonl.gz", bad.sim.trace)
    files.append(d / "violating.jsonl.gz")
    ok = run_scenario("consumer-leaves-permanently", ScenarioOptions())
    two = [dict(e, group="g1") for e in ok.sim.trace] + [dict(e, group="g2") for e in bad.sim.trace]
    write_trace(d / "two-groups.jsonl", sorted(two, key=lambda e: e["ts_ms"]))
    files.append(d / "two-groups.jsonl")
    # a trace defect: a line that is not JSON, and a blank line, in a one-group file (line numbers count)
    lines = files[0].read_text().splitlines(keepends=True)
    files[0].write_text("".join(lines[:5] + ["{not json\n", "\n"] + lines[5:]))
    return files


def test_audit_agrees_with_trace_check(tmp_path: Path) -> None:
    pytest.importorskip("groupspec.trace", reason="the trace checker has not been merged into this branch yet")
    traces = tmp_path / "traces"
    traces.mkdir()
    files = _mixed_traces(traces)
    # a trace whose events name no member: it holds vacuously, and the fleet report must say nothing was checked
    quiet = traces / "quiet.jsonl"
    quiet.write_text('{"ts_ms": 0, "event": "topic", "topic": "t", "partitions": 3}\n{"ts_ms": 10, "event": "end"}\n')
    files.append(quiet)
    from groupspec.trace import check_paths

    expected = {}
    # what `groupspec trace check --json` prints for these files
    for t in check_paths([str(f) for f in files]).to_dict()["traces"]:
        for g in t["groups"]:
            expected[(Path(t["trace"]).name, g["group"] or "")] = g
    a = subprocess.run([GS, "audit", str(traces), "--master", "local[2]", "--out", str(tmp_path / "audit")],
                       capture_output=True, text=True, timeout=600)
    assert a.returncode == 1, a.stderr  # a violating trace is in the set
    import pyarrow.parquet as pq

    got = {(Path(row["trace"]).name, row["group"]): json.loads(row["result"])
           for row in pq.read_table(tmp_path / "audit" / "verdicts").to_pylist()}
    assert got == expected
    violated = {k for k, g in got.items() if any(p["verdict"] == "violated" for p in g["properties"])}
    assert ("violating.jsonl.gz", "g") in violated and ("two-groups.jsonl", "g2") in violated
    assert ("two-groups.jsonl", "g1") not in violated
    defects = [g for k, g in got.items() if k[0] == files[0].name][0]["properties"]
    assert any(v["line"] == 6 for p in defects if p["id"] == "well_formed" for v in p["violations"])
    fleet = json.loads((tmp_path / "audit" / "fleet.json").read_text())
    assert fleet["ok"] is False and fleet["totals"][0]["groups"] == len(expected)
    # the vacuous group is flagged, and it alone (every other group's events name members)
    assert [(Path(r["trace"]).name, r["events"]) for r in fleet["nothing_checked"]] == [("quiet.jsonl", 2)]
    assert fleet["totals"][0]["groups_nothing_checked"] == 1
    assert "1 group(s) ok vacuously: no event names a member" in a.stdout
    report = (tmp_path / "audit" / "report.md").read_text()
    section = report.split("## Groups with no member events")[1].split("##")[0]
    assert "quiet.jsonl" in section and section.count("- `") == 1, section
    # windows/ and periods/ (handed from the workers as Arrow columns) are the checker's, group by group
    wins = sorted((Path(r["trace"]).name, r["group"], r["topic"], r["partition"], r["from_ms"], r["to_ms"], r["seconds"])
                  for r in pq.read_table(tmp_path / "audit" / "windows").to_pylist())
    want_w = sorted((t, g, w["topic"], w["partition"], w["from_ms"], w["to_ms"], float(w["seconds"]))
                    for (t, g), res in expected.items() for w in res.get("unowned_windows", []))
    assert wins and wins == want_w
    pers = sorted((Path(r["trace"]).name, r["group"], r["from_ms"], r["to_ms"], list(r["members"]), r["converged_at_ms"],
                   r["seconds_to_converge"]) for r in pq.read_table(tmp_path / "audit" / "periods").to_pylist())
    want_p = sorted((t, g, p["from_ms"], p["to_ms"], list(p["members"]), p.get("converged_at_ms"),
                     None if p.get("seconds_to_converge") is None else float(p["seconds_to_converge"]))
                    for (t, g), res in expected.items() for p in res.get("periods", []))
    assert pers and pers == want_p


def test_audit_of_a_sweeps_traces_agrees_with_the_checker(
        local_sweep: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    """The Parquet input form (a sweep's traces/): every run's verdict is the checker's on that run."""
    import pyarrow.parquet as pq

    from groupspec.pipeline.runs import run_point_with_trace
    from groupspec.trace import check_events

    out, r = local_sweep
    assert r.returncode == 0, r.stderr
    a = subprocess.run([GS, "audit", str(out / "traces"), "--master", "local[2]", "--out", str(tmp_path / "a")],
                       capture_output=True, text=True, timeout=600)
    assert a.returncode in (0, 1), a.stderr
    got = {row["trace"]: json.loads(row["result"]) for row in pq.read_table(tmp_path / "a" / "verdicts").to_pylist()}
    expected = {}
    for p in preset("smoke").points:
        _, trace = run_point_with_trace(p, "smoke")
        (g,) = check_events(trace, source=p.point_id).to_dict()["groups"]
        expected[p.point_id] = g
    assert got == expected
