"""The sweep job: a grid's points as Spark tasks, one row of metrics each, Parquet and a report.

:func:`run_sweep` spreads the points over Spark tasks (``parallelize``; each task runs
:func:`groupspec.pipeline.points.run_point` on its points, in plain Python), brings the rows back to the
driver (one small row per point) and writes, under a staging directory that becomes ``--out`` only
when everything is written (:mod:`groupspec.pipeline.output`):

* ``rows/``: the rows as Parquet, hive-partitioned by ``protocol`` and ``assignor``
  (``rows/protocol=eager/assignor=range/part-0.parquet``), sorted by ``point_id`` inside; the schema
  is :data:`groupspec.pipeline.runs.ROW_SCHEMA` (documented in docs/pipeline.md);
* ``traces/`` (with ``traces=True``): every run's trace, one row per event (``point_id``,
  ``protocol``, ``assignor``, ``trace``, ``group``, ``line_no``, ``line``: the JSON line as in a trace
  file), the form ``groupspec audit`` reads;
* ``report.md`` and ``plots/*.png`` (:mod:`groupspec.pipeline.report`), ``grid.json`` (the points).

Rows do not depend on where they were computed: the same grid gives the same rows in local mode and
on a cluster (a test compares them).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from .grid import Grid, Point
from .points import run_point, run_point_with_trace
from .runs import ROW_SCHEMA, run_length_ms

__all__ = ["run_sweep", "rows_locally", "write_rows", "arrow_schema", "read_rows", "frame_rows", "point_cost",
           "plan_tasks", "TASKS_PER_CORE", "compute_rows", "write_outputs"]

TASKS_PER_CORE = 4


def point_cost(p: Point) -> float:
    """A rough relative CPU cost of one run, to balance the tasks (not a measurement): the simulator's
    events are mostly polls (one per member per ``poll_interval_ms``; with records, a commit or a fetch
    answer each) and heartbeats, over the run's simulated length; the ZooKeeper group is cheap."""
    secs = run_length_ms(p) / 1000.0
    if p.protocol == "zookeeper":
        return 1.0 + p.members * p.members / 50.0
    per_poll = 1.0 if p.protocol == "connect" else 2.0
    return 10.0 + p.members * secs * (per_poll * 1000.0 / p.poll_interval_ms + 4000.0 / p.heartbeat_interval_ms)


def plan_tasks(points: list[Point], tasks: int) -> list[list[Point]]:
    """The points in ``tasks`` bins of about equal estimated cost (:func:`point_cost`; longest
    processing time first: each point, dearest first, goes to the cheapest bin so far), the dearest bin
    first (Spark starts the tasks in order, so the long ones do not finish last)."""
    import heapq

    tasks = max(1, min(tasks, len(points)))
    order = sorted(points, key=lambda p: (-point_cost(p), p.point_id))
    heap = [(0.0, i) for i in range(tasks)]
    bins: list[list[Point]] = [[] for _ in range(tasks)]
    loads = [0.0] * tasks
    for p in order:
        load, i = heapq.heappop(heap)
        bins[i].append(p)
        loads[i] = load + point_cost(p)
        heapq.heappush(heap, (loads[i], i))
    return [b for _, b in sorted(zip(loads, bins), key=lambda lb: -lb[0]) if b]


def _task(sweep: str, with_traces: bool) -> Callable[[Iterable[dict[str, Any]]], Iterator[Any]]:
    def run(points: Iterable[dict[str, Any]]) -> Iterator[Any]:
        from groupspec.pipeline.grid import Point as P
        from groupspec.reference.trace import dumps_jsonl

        for d in points:
            p = P(**d)
            if with_traces:
                row, trace = run_point_with_trace(p, sweep)
                text = dumps_jsonl(trace)
                yield ("row", json.dumps(row))
                yield ("trace", json.dumps({"point_id": row["point_id"], "protocol": p.protocol,
                                            "assignor": p.assignor, "jsonl": text}))
            else:
                yield ("row", json.dumps(run_point(p, sweep)))
    return run


def rows_locally(grid: Grid) -> list[dict[str, Any]]:
    """The rows without Spark (tests, benchmarks): the same function the tasks run."""
    return sorted((run_point(p, grid.name) for p in grid.points), key=lambda r: r["point_id"])


def arrow_schema() -> Any:
    import pyarrow as pa

    types = {"string": pa.string(), "long": pa.int64(), "double": pa.float64(), "boolean": pa.bool_()}
    return pa.schema([(n, types[t]) for n, t in ROW_SCHEMA])


def write_rows(rows: list[dict[str, Any]], dest: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema()
    rows = sorted(rows, key=lambda r: r["point_id"])
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["protocol"], r["assignor"]), []).append(r)
    for (proto, asg), rs in sorted(groups.items()):
        d = dest / f"protocol={proto}" / f"assignor={asg}"
        d.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist(rs, schema=schema).drop_columns(["protocol", "assignor"])
        pq.write_table(table, d / "part-0.parquet")


def read_rows(path: str | Path) -> Any:
    """The rows dataset as a pandas DataFrame (partition columns restored), sorted by point_id."""
    import pyarrow.dataset as ds

    t = ds.dataset(str(path), format="parquet", partitioning="hive").to_table()
    df = t.to_pandas()
    for c in ("protocol", "assignor"):
        df[c] = df[c].astype(str)
    cols = [n for n, _ in ROW_SCHEMA]
    return df[cols].sort_values("point_id").reset_index(drop=True)


def frame_rows(df: Any) -> list[dict[str, Any]]:
    """A rows DataFrame back as plain dicts (NaN -> None, numpy scalars -> Python), for comparisons."""
    out = []
    for r in df.to_dict("records"):
        d = {}
        for k, v in r.items():
            if hasattr(v, "item"):
                v = v.item()
            if isinstance(v, float) and v != v:
                v = None
            d[k] = v
        out.append(d)
    return out


def _write_traces(traces: list[dict[str, Any]], dest: Path) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([("point_id", pa.string()), ("protocol", pa.string()), ("assignor", pa.string()),
                        ("trace", pa.string()), ("group", pa.string()), ("line_no", pa.int64()), ("line", pa.string())])
    dest.mkdir(parents=True, exist_ok=True)
    n = 0
    with pq.ParquetWriter(dest / "part-0.parquet", schema) as w:
        for t in sorted(traces, key=lambda t: t["point_id"]):
            lines = t["jsonl"].splitlines()
            cols: dict[str, list[Any]] = {k: [] for k in schema.names}
            for i, line in enumerate(lines, 1):
                cols["point_id"].append(t["point_id"])
                cols["protocol"].append(t["protocol"])
                cols["assignor"].append(t["assignor"])
                cols["trace"].append(t["point_id"])
                cols["group"].append(json.loads(line).get("group", ""))
                cols["line_no"].append(i)
                cols["line"].append(line)
            n += len(lines)
            w.write_table(pa.Table.from_pydict(cols, schema=schema))
    return n


def compute_rows(spark: Any, grid: Grid, *, traces: bool = False, progress: bool = True,
                 slices: int | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The Spark job alone: every point run in a task; ``(rows sorted by point_id, trace documents)``."""
    from .spark import JobProgress

    sc = spark.sparkContext
    # cost-aware: a few tasks per core, of about equal estimated cost, the dearest first; each task
    # gets its bin of points as one element (the points travel as plain dicts)
    bins = plan_tasks(list(grid.points), slices or max(1, sc.defaultParallelism) * TASKS_PER_CORE)
    name = grid.name
    rdd = sc.parallelize([[p.to_dict() for p in b] for b in bins], len(bins)) \
        .mapPartitions(lambda it: _task(name, traces)(d for b in it for d in b))
    with JobProgress(spark, f"sweep {grid.name}: {len(grid.points)} runs", enabled=progress):
        out = rdd.collect()
    rows = sorted((json.loads(v) for k, v in out if k == "row"), key=lambda r: r["point_id"])
    return rows, [json.loads(v) for k, v in out if k == "trace"]


def run_sweep(spark: Any, grid: Grid, stage: Path, *, traces: bool = False, progress: bool = True,
              slices: int | None = None) -> list[dict[str, Any]]:
    """Run every point on Spark; write the dataset, traces and report under ``stage``; return the rows."""
    rows, trace_docs = compute_rows(spark, grid, traces=traces, progress=progress, slices=slices)
    write_outputs(grid, rows, trace_docs if traces else None, stage)
    return rows


def write_outputs(grid: Grid, rows: list[dict[str, Any]], trace_docs: list[dict[str, Any]] | None,
                  stage: Path) -> None:
    """``rows/``, ``traces/`` (if given), ``grid.json`` and the report under ``stage`` (on the driver)."""
    from .report import write_report

    write_rows(rows, stage / "rows")
    if trace_docs is not None:
        _write_traces(trace_docs, stage / "traces")
    (stage / "grid.json").write_text(json.dumps({"name": grid.name, "source": grid.source, "dropped": grid.dropped,
                                                 "points": [p.to_dict() for p in grid.points]}, indent=1) + "\n")
    write_report(read_rows(stage / "rows"), stage)
