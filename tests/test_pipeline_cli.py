"""`groupspec sweep` / `groupspec audit` bad input: one line on stderr, exit 2, nothing on stdout, no
output directory (these fail before Spark starts), and the staged-output rules."""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupspec.pipeline.output import OutputError, Staging, prepare_out

GS = [str(Path(sys.executable).parent / "groupspec")]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GS, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def _bad(r: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("groupspec: error: "), r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def test_sweep_bad_input(tmp_path: Path) -> None:
    (tmp_path / "g.yaml").write_text("blocks:\n  - protocol: eager\n  - members: lots\n")
    _bad(_run("sweep", "g.yaml", "--out", "o", cwd=tmp_path), "g.yaml: blocks[1].members: 'lots' is not a int")
    _bad(_run("sweep", "missing.yaml", cwd=tmp_path), "missing.yaml: no such file")
    _bad(_run("sweep", "--preset", "huge", cwd=tmp_path), "unknown preset 'huge'")
    _bad(_run("sweep", cwd=tmp_path), "either GRID.yaml or --preset")
    _bad(_run("sweep", "--preset", "smoke", "--master", "mesos://x", "--out", "o", cwd=tmp_path), "--master")
    (tmp_path / "exists").mkdir()
    _bad(_run("sweep", "--preset", "smoke", "--out", "exists", cwd=tmp_path), "exists already exists; pass --overwrite")
    _bad(_run("sweep", "--preset", "smoke", "--out", "no/such/dir/o", cwd=tmp_path), "directory no/such/dir does not exist")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exists", "g.yaml"]


def test_audit_bad_input(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl.gz").write_text("not gzip\n")
    _bad(_run("audit", "t.jsonl.gz", cwd=tmp_path), "t.jsonl.gz: line 1: named .gz but not gzip-compressed")
    _bad(_run("audit", "nope.jsonl", cwd=tmp_path), "nope.jsonl: no such file or directory")
    (tmp_path / "empty").mkdir()
    _bad(_run("audit", "empty", cwd=tmp_path), "empty: directory holds no .jsonl")
    (tmp_path / "x.parquet").write_text("no")
    _bad(_run("audit", "x.parquet", cwd=tmp_path), "x.parquet: not a Parquet file")
    _bad(_run("audit", "empty", "--converge-within", "0", cwd=tmp_path), "--converge-within")


def test_prepare_out_and_staging(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert prepare_out(str(out), False) == out
    # a failed job leaves nothing under the final name, nor the staging directory
    with pytest.raises(RuntimeError):
        with Staging(out) as stage:
            (stage / "rows").mkdir()
            (stage / "rows" / "part-0.parquet").write_bytes(b"half")
            raise RuntimeError("the job failed")
    assert list(tmp_path.iterdir()) == []
    # a finished one appears at once
    s = Staging(out)
    with s as stage:
        (stage / "a").write_text("1")
        s.commit()
    assert (out / "a").read_text() == "1"
    with pytest.raises(OutputError, match="already exists"):
        prepare_out(str(out), False)
    # --overwrite: the old one stays until the new one is complete
    with pytest.raises(KeyboardInterrupt):
        with Staging(out, overwrite=True) as stage:
            (stage / "b").write_text("2")
            raise KeyboardInterrupt
    assert sorted(p.name for p in out.iterdir()) == ["a"]
    s = Staging(out, overwrite=True)
    with s as stage:
        (stage / "b").write_text("2")
        s.commit()
    assert sorted(p.name for p in out.iterdir()) == ["b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_unwritable_out_is_one_line_before_any_work(tmp_path: Path) -> None:
    # os.access says yes to root in /proc and /sys: the check must try, and still refuse before Spark starts
    for args in (["sweep", "--preset", "smoke", "--out", "/proc/groupspec-out"],
                 ["sweep", "--preset", "smoke", "--out", "/sys/groupspec-out"]):
        _bad(_run(*args, cwd=tmp_path), "--out: cannot create a directory in")
    (tmp_path / "t.jsonl").write_text('{"ts_ms": 0, "group": "g", "member": "m", "event": "joined"}\n')
    _bad(_run("audit", "t.jsonl", "--out", "/proc/groupspec-out", cwd=tmp_path), "--out: cannot create a directory in")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]


def test_sweep_of_a_grid_without_pyyaml_is_one_line(tmp_path: Path) -> None:
    """PyYAML comes with the spark extra: without it a GRID.yaml was a ModuleNotFoundError traceback (a missing
    file too, read after the import); now one line naming the file and the extra, as for a missing PySpark."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "yaml.py").write_text("raise ImportError('No module named yaml (shadowed by the test)')\n")
    (tmp_path / "g.yaml").write_text("blocks:\n  - protocol: eager\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(shadow)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*GS, *args], capture_output=True, text=True, cwd=tmp_path, timeout=120, env=env)

    _bad(run("sweep", "g.yaml", "--out", "o"), "g.yaml: reading a grid needs PyYAML", "groupspec[spark]")
    _bad(run("sweep", "missing.yaml"), "missing.yaml: no such file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.yaml", "shadow"]


def test_the_aggregations_jobs_run_at_once_and_an_error_cancels_the_rest() -> None:
    """``fleet_figures`` runs its independent Spark jobs from a few threads (``_concurrently``): every result under
    its own name, the jobs really overlapping; the first error is raised after Spark's running jobs are cancelled."""
    import threading

    from groupspec.pipeline.audit import _concurrently

    class Context:
        cancelled = 0

        def cancelAllJobs(self) -> None:  # noqa: N802 - PySpark's name
            Context.cancelled += 1

    class Session:
        sparkContext = Context()

    barrier = threading.Barrier(3, timeout=10)  # passes only if three jobs run at the same time

    def job(value: int) -> Any:
        def run() -> int:
            barrier.wait()
            return value * value
        return run

    assert _concurrently(Session(), {f"j{i}": job(i) for i in range(3)}, threads=3) == {"j0": 0, "j1": 1, "j2": 4}

    def boom() -> int:
        raise ValueError("no such column")

    with pytest.raises(ValueError, match="no such column"):
        _concurrently(Session(), {"a": lambda: 1, "b": boom, "c": lambda: 3})
    assert Context.cancelled == 1


def test_the_exports_unnest_each_groups_lists_as_explode_does() -> None:
    """``_exports`` (the verdicts, windows and periods written out) unnests the verdict rows' lists on the driver
    with Arrow's kernels: each window or period next to its own group's trace and group, rows of an empty or null
    list left out (as ``explode``), sorted for writing; with no verdict rows at all, each dataset keeps its columns'
    types (from VERDICT_SCHEMA)."""
    import pyarrow as pa

    from groupspec.pipeline.audit import LIST_COLUMNS, _exports, verdict_arrow_schema

    schema = verdict_arrow_schema()

    def row(trace: str, group: str, windows: list[dict[str, Any]] | None, periods: list[dict[str, Any]] | None) -> dict[str, Any]:
        r: dict[str, Any] = {f.name: None for f in schema}
        r.update(trace=trace, group=group, ok=True, events=1, window_list=windows, period_list=periods)
        return r

    def win(topic: str, partition: int, start: int) -> dict[str, Any]:
        return {"topic": topic, "partition": partition, "from_ms": start, "to_ms": start + 5, "seconds": 0.005}

    rows = [row("t2", "b", [win("x", 1, 30), win("x", 0, 40)], None),
            row("t1", "a", [], [{"from_ms": 0, "to_ms": 9, "members": ["m1"], "converged_at_ms": 3, "seconds_to_converge": 0.003}]),
            row("t1", "c", [win("y", 0, 10)], []),
            row("t1", "b", None, None)]

    class Frame:  # what _exports reads of a DataFrame: its rows as Arrow batches
        def __init__(self, batches: list[Any]) -> None:
            self.batches = batches

        def _collect_as_arrow(self) -> list[Any]:
            return self.batches

    vpd, wpd, ppd = _exports(Frame([pa.RecordBatch.from_pylist(rows[:2], schema=schema),
                                    pa.RecordBatch.from_pylist(rows[2:], schema=schema)]))
    assert [(r["trace"], r["group"]) for r in vpd.to_dict("records")] == [("t1", "a"), ("t1", "b"), ("t1", "c"), ("t2", "b")]
    assert not set(LIST_COLUMNS) & set(vpd.columns)
    assert [tuple(r.values()) for r in wpd.to_dict("records")] == [
        ("t1", "c", "y", 0, 10, 15, 0.005), ("t2", "b", "x", 0, 40, 45, 0.005), ("t2", "b", "x", 1, 30, 35, 0.005)]
    assert [(r["trace"], r["group"], list(r["members"])) for r in ppd.to_dict("records")] == [("t1", "a", ["m1"])]
    vpd, wpd, ppd = _exports(Frame([]))
    assert len(vpd) == len(wpd) == len(ppd) == 0
    assert str(wpd.dtypes["partition"]) == "int64" and str(ppd.dtypes["from_ms"]) == "int64"
    assert list(wpd.columns) == ["trace", "group", "topic", "partition", "from_ms", "to_ms", "seconds"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(0, 3000), min_size=1, max_size=60), cores=st.integers(1, 8))
def test_plan_files_gives_decreasing_bins_that_cover_every_file_once(tmp_path: Path, sizes: list[int], cores: int) -> None:
    """``plan_files`` (the audit's tasks): every file in exactly one bin; the files in order of size, biggest first,
    across the bins; each bin no bigger than its share of what is left (``left / (2 * cores)``, at least
    ``1 / (32 * cores)`` of the whole) unless it is a single file; so the tasks shrink and the last ones are small."""
    from groupspec.pipeline.audit import plan_files

    d = Path(tempfile.mkdtemp(dir=tmp_path))
    files = []
    for i, n in enumerate(sizes):
        f = d / f"t{i:02d}.jsonl"
        f.write_bytes(b"x" * n)
        files.append(str(f))
    bins = plan_files(files, cores)
    flat = [f for b in bins for f in b]
    assert sorted(flat) == sorted(files) and all(bins)
    size = {f: n for f, n in zip(files, sizes)}
    assert flat == sorted(files, key=lambda f: (-size[f], f))
    total, left = sum(sizes), sum(sizes)
    for b in bins:
        got = sum(size[f] for f in b)
        assert len(b) == 1 or got <= max(left / (2 * cores), total / (32 * cores)), (b, got, left)
        left -= got
