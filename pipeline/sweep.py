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
           "plan_tasks", "compute_rows", "write_outputs"]

# the guided schedule (:func:`plan_tasks`): each task takes 1/(FIRST_SHARE x slots) of the estimated
# cost not yet planned, never less than 1/(SMALLEST_SHARE x slots) of the whole
FIRST_SHARE = 2
SMALLEST_SHARE = 64


def point_cost(p: Point) -> float:
    """The estimated CPU cost of one run in microseconds of this machine (a model, not a
    measurement: fitted to the per-run CPU time of the ``history``, ``protocols`` and a dense grid's
    runs; what matters is that it ranks and adds up like the real cost). A classic group's run costs
    per member and simulated second a base, its heartbeats and its polls, and a commit with a trace
    line and the checker's work on it at every poll for the ``sync`` and ``async`` commit
    strategies (most of the cost where they apply); Connect's workers and the next-generation
    protocol's members cost per member-second; the ZooKeeper group per member and per pair (the herd)."""
    if p.protocol == "zookeeper":
        return 200.0 + 170.0 * p.members + 4.0 * p.members * p.members
    member_secs = p.members * run_length_ms(p) / 1000.0
    if p.protocol == "connect":
        return 2000.0 + 21.0 * member_secs
    if p.protocol == "consumer":
        return 950.0 + 19.0 * member_secs
    per_second = 18.0 + 6.0 * 1000.0 / p.heartbeat_interval_ms + 5.0 * 1000.0 / p.poll_interval_ms
    if p.commit in ("sync", "async"):
        per_second += 33.0 * 1000.0 / p.poll_interval_ms
    return 600.0 + member_secs * per_second


def plan_tasks(points: list[Point], slots: int) -> list[list[Point]]:
    """The points as Spark tasks for ``slots`` task slots (cores), in the order Spark starts them:
    a guided schedule over the estimated cost (:func:`point_cost`). The points go dearest first;
    each task takes the next points up to 1/(:data:`FIRST_SHARE` x slots) of the cost not yet planned
    (at least one point, and never a task under 1/(:data:`SMALLEST_SHARE` x slots) of the whole). So
    the first tasks are large and few, the tasks shrink as the work left does, and the last ones,
    which decide when the job ends, are small: the slot that finishes first takes the next task, so an
    estimate that is off early is made up by the small tasks at the end; and the number of tasks stays
    small (about ``FIRST_SHARE x slots x ln(SMALLEST_SHARE / FIRST_SHARE)`` plus the tail)."""
    slots = max(1, slots)
    costs = {p.point_id: point_cost(p) for p in points}
    order = sorted(points, key=lambda p: (-costs[p.point_id], p.point_id))
    left = sum(costs.values())
    smallest = left / (SMALLEST_SHARE * slots)
    tasks: list[list[Point]] = []
    i = 0
    while i < len(order):
        target = max(left / (FIRST_SHARE * slots), smallest)
        task: list[Point] = []
        spent = 0.0
        while i < len(order) and (not task or spent + costs[order[i].point_id] <= target):
            task.append(order[i])
            spent += costs[order[i].point_id]
            i += 1
        tasks.append(task)
        left -= spent
    return tasks


def _task(sweep: str, with_traces: bool) -> Callable[[Iterable[dict[str, Any]]], Iterator[Any]]:
    def run(points: Iterable[dict[str, Any]]) -> Iterator[Any]:
        from groupspec.pipeline.grid import Point as P
        from groupspec.pipeline.spark import prepare_worker
        from groupspec.reference.sim import dumps_jsonl

        prepare_worker()

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
                 slots: int | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The Spark job alone: every point run in a task; ``(rows sorted by point_id, trace documents)``.
    ``slots``: the task slots to plan for (default: Spark's default parallelism, its cores)."""
    from .spark import JobProgress

    sc = spark.sparkContext
    # cost-aware: large tasks first, small ones last (plan_tasks); each task gets its points as one
    # element (the points travel as plain dicts)
    bins = plan_tasks(list(grid.points), slots or max(1, sc.defaultParallelism))
    name = grid.name
    rdd = sc.parallelize([[p.to_dict() for p in b] for b in bins], len(bins)) \
        .mapPartitions(lambda it: _task(name, traces)(d for b in it for d in b))
    with JobProgress(spark, f"sweep {grid.name}: {len(grid.points)} runs", enabled=progress):
        out = rdd.collect()
    rows = sorted((json.loads(v) for k, v in out if k == "row"), key=lambda r: r["point_id"])
    return rows, [json.loads(v) for k, v in out if k == "trace"]


def run_sweep(spark: Any, grid: Grid, stage: Path, *, traces: bool = False, progress: bool = True,
              slots: int | None = None) -> list[dict[str, Any]]:
    """Run every point on Spark; write the dataset, traces and report under ``stage``; return the rows."""
    rows, trace_docs = compute_rows(spark, grid, traces=traces, progress=progress, slots=slots)
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
