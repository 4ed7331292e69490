"""The Spark sweep's figures: local[2] vs local[1] speed-up, and simulated rebalances per hour.

What a *rebalance* is here: a generation the group coordinator completed for the group: its
JoinGroup round closed and the group reached Stable with it (every member got its assignment in
SyncGroup); the rows' ``generations_completed``, start-up included (the first generation of every run
counts: it is a rebalance the coordinator runs like any other). Generations that were abandoned
before Stable (a member left during the sync) do not count.

1. **Speed-up.** The same grid (``--grid``, default the ``history`` preset) run with ``local[1]`` and
   ``local[2]``, interleaved (``--repeats`` rounds; the order alternates: 1-2, 2-1, ...), each in a
   fresh process (its own JVM, as a user's command gets: PySpark keeps one JVM per Python process, so
   a second session would find it warmed up), its Python workers started before the clock starts. Printed per run:
   the job's wall time (the Spark job: every point simulated and measured, rows back at the driver),
   the whole sweep's (plus the Parquet, the report and its plots, written on the driver), and the
   CPU-seconds of the driver, the JVM and the Python workers (``/proc``); then the median ratio.
   Target: >= 1.8x. The machine is shared: the load average is printed with every figure; and, load-
   independent, the speed-up the job's partitioning allows on 2 idle cores (every point's CPU time
   measured in one process, the tasks scheduled in order on 2 slots: total / the busiest slot).
2. **Rebalances per hour** on 2 cores: a rebalance-dense grid (``DENSE``: rolling restarts and random
   crashes of small groups) on ``local[2]``: completed generations / the job's wall time; and, since
   the wall time depends on the other engineers' load, completed generations / (the CPU-seconds that
   the job took in every process: driver, JVM, workers) x 2 cores, the rate on two cores of our own.
   The same for the ``history`` grid (the mix the report uses). Target (issue 32): >= 3,000,000 on the dense grid.

0. **Concurrency**, load-independent: four tasks of 1 CPU-second each on ``local[2]``; the distinct Python
   workers and the share of the job during which two tasks ran at once.

Every run is deterministic (seeds in the grid): the rows are compared with the ones computed without
Spark. The audit's figures are in ``bench/bench_pipeline_audit.py``.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pipeline_cpu import _tree, autogroup, diff, load, session_ceiling, tree_cpu  # noqa: E402

from groupspec.pipeline.grid import Grid, parse_grid, preset  # noqa: E402
from groupspec.pipeline.spark import spark_session  # noqa: E402
from groupspec.pipeline.sweep import compute_rows, rows_locally, write_outputs  # noqa: E402

DENSE = {"name": "dense", "seeds": 24, "members": [2, 3], "partitions": 4, "poll_interval_ms": 1000,
         "blocks": [{"protocol": ["eager", "cooperative", "static"], "assignor": ["range", "cooperative-sticky"],
                     "churn": ["rolling-restart", "random"], "crash_per_min": [2.0, 6.0]}]}


def _grid(name: str) -> Grid:
    """A preset by name, or ``preset@seeds``: the preset with that many seeds per point."""
    if "@" not in name:
        return preset(name)
    base, seeds = name.split("@")
    from groupspec.pipeline.grid import PRESETS

    return parse_grid({**PRESETS[base], "name": name, "seeds": int(seeds)}, f"preset {base}, {seeds} seeds")


def _cores(master: str) -> int:
    return int(master[master.index("[") + 1:-1])


def timed_sweep(master: str, grid: Grid, tmp: Path, write: bool = True) -> dict[str, Any]:
    """One sweep in a fresh Python process (its own JVM): the job's wall and CPU, then the outputs' wall."""
    name = grid.name if grid.name != "dense" else "@dense"
    out = subprocess.run([sys.executable, __file__, "--one", master, "--grid", name, "--tmp", str(tmp)]
                         + ([] if write else ["--no-write"]), capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"bench child failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _one(master: str, grid: Grid, tmp: Path, write: bool) -> dict[str, Any]:
    stage = tmp / f"s-{_cores(master)}-{grid.name}"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    with spark_session(master, "bench", quiet=True) as spark:
        n = _cores(master)
        # start the Python workers and do their imports before the clock starts
        spark.sparkContext.parallelize(range(n), n).map(lambda _: __import__("groupspec.pipeline.runs")).count()
        c0 = tree_cpu()
        t0 = time.perf_counter()
        with WorkerSampler() as sampler:
            rows, _ = compute_rows(spark, grid, progress=False)
        job = time.perf_counter() - t0
        cpu = diff(c0, tree_cpu())
        load_now = load()
    t1 = time.perf_counter()
    if write:
        write_outputs(grid, rows, None, stage)
    out = time.perf_counter() - t1
    shutil.rmtree(stage, ignore_errors=True)
    return {"master": master, "job": job, "whole": job + out, "cpu": cpu, "rows": rows, "load": load_now,
            "busy": sampler.shares()}


class WorkerSampler:
    """Samples the Python workers' CPU every ``period`` seconds during a job: how often 0, 1, 2+ of them were
    consuming CPU (their CPU time advanced since the last sample). Load-independent evidence of whether two tasks
    ran at once: on a loaded machine each worker runs less often, but two busy workers still show as two."""

    def __init__(self, period: float = 0.25) -> None:
        import threading

        self.period, self.counts, self.stop = period, [0, 0, 0], threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import os as _os

        last = {pid: own for pid, role, own in _tree(_os.getpid()) if role == "workers"}
        while not self.stop.wait(self.period):
            now = {pid: own for pid, role, own in _tree(_os.getpid()) if role == "workers"}
            busy = sum(1 for pid, own in now.items() if own > last.get(pid, own))
            self.counts[min(busy, 2)] += 1
            last = now

    def __enter__(self) -> "WorkerSampler":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()

    def shares(self) -> list[float]:
        total = sum(self.counts) or 1
        return [c / total for c in self.counts]


def _cpu_text(c: dict[str, float]) -> str:
    return f"{c['total']:.1f} CPU-s (driver {c['driver']:.1f}, JVM {c['jvm']:.1f}, Python workers {c['workers']:.1f})"


def speedup(grid: Grid, repeats: int, tmp: Path) -> None:
    """local[1] against local[2], interleaved; before each round, this session's ceiling (:func:`session_ceiling`:
    what two busy processes get over one right now), so that a speed-up measured while the machine is contended
    can be read against the most any two-process job could gain then."""
    runs: dict[str, list[dict[str, Any]]] = {"local[1]": [], "local[2]": []}
    ceilings = []
    for r in range(repeats):
        c = session_ceiling()
        ceilings.append(c["ratio"])
        print(f"  round {r + 1}: this session's ceiling now {c['ratio']:.2f}x (one busy process got {c['one']:.2f} "
              f"CPU-s per second, two got {c['two']:.2f}); {autogroup()}; {load()}", flush=True)
        for master in (("local[1]", "local[2]") if r % 2 == 0 else ("local[2]", "local[1]")):
            m = timed_sweep(master, grid, tmp)
            runs[master].append(m)
            b0, b1, b2 = m["busy"]
            print(f"  round {r + 1} {master}: job {m['job']:.1f} s, whole sweep {m['whole']:.1f} s; "
                  f"{_cpu_text(m['cpu'])}; workers busy (samples every 0.25 s): none {b0:.0%}, one {b1:.0%}, "
                  f"two {b2:.0%}; {m['load']}", flush=True)
    ref = runs["local[1]"][0]["rows"]
    assert all(m["rows"] == ref for ms in runs.values() for m in ms), "rows differ between runs"
    job = [a["job"] / b["job"] for a, b in zip(runs["local[1]"], runs["local[2]"])]
    whole = [a["whole"] / b["whole"] for a, b in zip(runs["local[1]"], runs["local[2]"])]
    cpu1 = statistics.median(m["cpu"]["total"] for m in runs["local[1]"])
    cpu2 = statistics.median(m["cpu"]["total"] for m in runs["local[2]"])
    print(f"sweep {grid.name} ({len(grid)} runs, {repeats} interleaved rounds): speed-up local[2] vs local[1] "
          f"{statistics.median(job):.2f}x on the job (rounds: {', '.join(f'{x:.2f}' for x in job)}), "
          f"{statistics.median(whole):.2f}x on the whole sweep with its outputs (target >= 1.8x); {load()}",
          flush=True)
    print(f"  against this session's ceiling in the same rounds ({', '.join(f'{x:.2f}' for x in ceilings)}x): "
          f"{statistics.median(j / c for j, c in zip(job, ceilings)):.0%} of what two processes could gain then; "
          f"CPU-seconds local[2] / local[1] {cpu2 / cpu1:.2f} (what running on two cores costs in extra work)",
          flush=True)


def balance(grid: Grid, cores: int = 2, repeats: int = 2) -> None:
    """Load-independent: every point's CPU time measured in this process (the least of ``repeats``
    runs: the other engineers' load only ever adds to it), the tasks that ``compute_rows`` makes
    (``plan_tasks``) scheduled in order on ``cores`` free slots: the speed-up the job's partitioning
    allows on idle cores (Spark's own overhead apart: see the CPU-seconds above)."""
    import heapq

    from groupspec.pipeline.points import run_point
    from groupspec.pipeline.sweep import plan_tasks

    cost = {}
    for p in grid.points:
        best = float("inf")
        for _ in range(repeats):
            c0 = time.process_time()
            run_point(p, grid.name)
            best = min(best, time.process_time() - c0)
        cost[p.point_id] = best
    total = sum(cost.values())
    one = total
    for n in (1, cores):
        bins = plan_tasks(list(grid.points), n)
        slots = [0.0] * n
        for b in bins:  # Spark hands the next task to the first free slot
            t = heapq.heappop(slots)
            heapq.heappush(slots, t + sum(cost[p.point_id] for p in b))
        span = max(slots)
        if n == 1:
            one = span
        else:
            sizes = sorted((sum(cost[p.point_id] for p in b) for b in bins), reverse=True)
            print(f"balance ({grid.name}, {len(grid)} runs, {total:.1f} CPU-s in one process, each run the least of "
                  f"{repeats}): {len(bins)} tasks on {n} slots finish after {span:.2f} s of the busiest slot: the "
                  f"partitioning allows {one / span:.3f}x on {n} idle cores (tasks {sizes[0]:.2f} s down to "
                  f"{sizes[-1]:.2f} s; the last one {sum(cost[p.point_id] for p in bins[-1]):.2f} s)", flush=True)


def rebalances(grid: Grid, tmp: Path) -> None:
    m = timed_sweep("local[2]", grid, tmp, write=False)
    rows = m["rows"]
    assert rows == rows_locally(grid), "Spark's rows differ from the rows computed without Spark"
    reb = sum(r["generations_completed"] or 0 for r in rows)
    cpu = m["cpu"]["total"]
    print(f"rebalances ({grid.name}, {len(rows)} runs): {reb:,} completed generations; local[2] job "
          f"{m['job']:.1f} s wall = {reb / m['job'] * 3600:,.0f} per hour at this load; {_cpu_text(m['cpu'])} = "
          f"{reb / cpu * 3600:,.0f} per CPU-hour, {2 * reb / cpu * 3600:,.0f} per hour on 2 cores of our own "
          f"(target >= 3,000,000, issue 32){'' if grid.name == 'dense' else ': the dense grid'}; {m['load']}", flush=True)


def concurrency(tasks: int = 4, cpu_s: float = 1.0) -> None:
    """Whether ``local[2]`` runs two Python tasks at once, load-independent: ``tasks`` tasks of ``cpu_s`` CPU-seconds
    each, their start and end times in the workers; printed: the distinct workers and the share of the job's wall
    time during which two tasks ran at once (1.0 on two free cores; on a loaded machine the tasks still overlap,
    each just gets less of a CPU)."""
    from groupspec.pipeline.spark import spark_session

    def _busy_task(i: int, cpu_s: float) -> tuple[int, int, float, float]:
        # defined here so that it travels by value: the workers cannot import this file
        import os as _os
        import time as _time

        t0, c0, x = _time.time(), _time.process_time(), 0
        while _time.process_time() - c0 < cpu_s:
            x += 1
        return i, _os.getpid(), t0, _time.time()

    with spark_session("local[2]", quiet=True) as spark:
        sc = spark.sparkContext
        sc.parallelize(range(2), 2).map(lambda i: _busy_task(i, 0.05)).collect()  # workers started
        w0 = time.time()
        out = sc.parallelize(range(tasks), tasks).map(lambda i: _busy_task(i, cpu_s)).collect()
        wall = time.time() - w0
    edges = sorted([(a, 1) for _, _, a, _ in out] + [(b, -1) for _, _, _, b in out])
    both, running, last = 0.0, 0, w0
    for t, d in edges:
        if running >= 2:
            both += t - last
        running, last = running + d, t
    print(f"concurrency (local[2], {tasks} tasks of {cpu_s} CPU-s): {len({p for _, p, _, _ in out})} Python workers; "
          f"two tasks at once during {both / wall:.0%} of the job's {wall:.1f} s wall; {load()}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grid", default="history", help="a preset name for the speed-up (default: history)")
    ap.add_argument("--repeats", type=int, default=2, help="interleaved rounds of local[1] and local[2]")
    ap.add_argument("--seeds", type=int, help="the speed-up grid with this many seeds per point (the history preset "
                    "has 3, about 10 CPU-s; 20 makes a sweep of about 65 CPU-s: 1-3 minutes on local[1], idle)")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: concurrency,rebalances,balance,speedup")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # a child: one sweep on this master, JSON on stdout
    ap.add_argument("--tmp", help=argparse.SUPPRESS)
    ap.add_argument("--no-write", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        g = parse_grid(DENSE, "bench dense grid") if args.grid == "@dense" else _grid(args.grid)
        print(json.dumps(_one(args.one, g, Path(args.tmp), not args.no_write)))
        return
    skip = set(filter(None, args.skip.split(",")))
    tmp = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
    try:
        print(f"bench_pipeline: {load()}", flush=True)
        if "concurrency" not in skip:
            concurrency()
        if "rebalances" not in skip:
            rebalances(parse_grid(DENSE, "bench dense grid"), tmp)
            rebalances(preset("history"), tmp)
        name = args.grid if args.seeds is None else f"{args.grid}@{args.seeds}"
        if "balance" not in skip:
            balance(_grid(name))
        if "speedup" not in skip:
            speedup(_grid(name), args.repeats, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
