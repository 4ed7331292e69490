"""The Spark pipeline's figures: sweep speed-up local[2] vs local[1], simulated rebalances per hour,
and audit throughput against a single-process baseline on the same data.

1. **Sweep speed-up.** The same grid (``--grid-preset``, default ``history``) run with ``local[1]``
   and then ``local[2]`` (a fresh session each; Spark's start-up is not counted: the figure is the
   job's time). Target: >= 1.8x. The machine is shared: the load average is printed with it.
2. **Rebalances per hour** on 2 cores: the generations formed (every rebalance simulated, start-up
   included, summed over every run) of a rebalance-dense grid (rolling restarts and random crashes of
   small groups) divided by the local[2] job's wall time; and, stable on a shared machine, the same
   rows computed in one process divided by its CPU time, times two cores. Target: >= 2 million.
3. **Audit throughput.** ``--events`` (default 10 million) trace events are written as
   ``.jsonl.gz`` files of many groups (simulator traces of the history grid, each copied under
   fresh group names); then ``run_audit`` on local[2] and a baseline in one process (the same trace
   checker, ``groupspec.trace.check_paths``, file after file, and the same fleet aggregates in
   DuckDB) on the same files. Events per second of both and their ratio are printed; with
   ``--sizes`` the comparison is repeated at smaller sizes to find where local[2] overtakes the
   baseline (Spark's fixed cost dominates small inputs).

Every run is deterministic (seeds in the grid); the figures are wall-clock and vary with the load.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from groupspec.pipeline.grid import parse_grid, preset
from groupspec.pipeline.runs import run_point_with_trace
from groupspec.pipeline.spark import spark_session
from groupspec.pipeline.sweep import rows_locally, run_sweep

DENSE = {"name": "dense", "seeds": 8, "members": [2, 3], "partitions": 4, "poll_interval_ms": 1000,
         "blocks": [{"protocol": ["eager", "cooperative", "static"], "assignor": ["range", "cooperative-sticky"],
                     "churn": ["rolling-restart", "random"], "crash_per_min": [2.0, 6.0]}]}


def _load() -> str:
    try:
        return "load average %.1f %.1f %.1f" % os.getloadavg()
    except OSError:
        return "load average n/a"


def timed_sweep(master: str, grid, tmp: Path) -> tuple[float, list[dict]]:  # type: ignore[no-untyped-def]
    stage = tmp / f"s-{master.replace('[', '').replace(']', '')}-{grid.name}"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    with spark_session(master, "bench", quiet=True) as spark:
        spark.sparkContext.parallelize(range(4), 2).count()  # warm the Python workers
        t0 = time.perf_counter()
        rows = run_sweep(spark, grid, stage, progress=False)
        dt = time.perf_counter() - t0
    return dt, rows


_BASE: list[tuple[str, int]] = []


def write_events(target: int, dest: Path) -> int:
    """At least ``target`` events in .jsonl.gz files (50 groups a file, one after the other)."""
    from groupspec.reference.trace import dumps_jsonl

    if not _BASE:
        for p in preset("history").points:
            if p.protocol == "zookeeper":
                continue
            _, trace = run_point_with_trace(p)
            _BASE.append((dumps_jsonl(dict(e, group="@G@") for e in trace), len(trace)))
    dest.mkdir(parents=True, exist_ok=True)
    n = k = f = 0
    while n < target:
        parts = []
        for _ in range(50):
            text, count = _BASE[k % len(_BASE)]
            parts.append(text.replace('"group":"@G@"', f'"group":"g{k}"'))
            n += count
            k += 1
            if n >= target:
                break
        with gzip.open(dest / f"fleet-{f:05d}.jsonl.gz", "wt", compresslevel=1) as fh:
            fh.write("".join(parts))
        f += 1
    return n


def baseline(files: list[str]) -> tuple[float, int]:
    """One process: the trace checker file after file, then the fleet aggregates in DuckDB."""
    import duckdb
    import pandas as pd

    from groupspec.trace import check_paths

    t0 = time.perf_counter()
    rows = []
    events = 0
    for f in files:
        t = check_paths([f]).to_dict()["traces"][0]
        events += t["events"]
        for g in t["groups"]:
            conv = [p["seconds_to_converge"] for p in g["periods"] if p["seconds_to_converge"] is not None]
            rows.append({"trace": t["trace"], "group": g["group"],
                         "ok": all(p["verdict"] != "violated" for p in g["properties"]),
                         "max_unowned_s": max((w["seconds"] for w in g["unowned_windows"]), default=0.0),
                         "conv": max(conv) if conv else None})
    df = pd.DataFrame(rows)
    con = duckdb.connect()
    con.register("v", df)
    con.execute("SELECT count(*), sum(CASE WHEN ok THEN 1 ELSE 0 END), quantile_cont(conv, 0.5), "
                "quantile_cont(conv, 0.9), max(max_unowned_s) FROM v").fetchall()
    return time.perf_counter() - t0, events


def spark_audit(files: list[str], tmp: Path) -> float:
    from groupspec.pipeline.audit import run_audit

    stage = tmp / "audit"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    with spark_session("local[2]", "bench audit", quiet=True) as spark:
        spark.sparkContext.parallelize(range(4), 2).count()
        t0 = time.perf_counter()
        run_audit(spark, files, [], stage, progress=False)
        return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grid-preset", default="history")
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--sizes", default="", help="comma-separated smaller event counts for the crossover")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: speedup,rebalances,audit")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    tmp = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
    try:
        if "speedup" not in skip:
            g = preset(args.grid_preset)
            t1, _ = timed_sweep("local[1]", g, tmp)
            t2, _ = timed_sweep("local[2]", g, tmp)
            print(f"sweep {g.name} ({len(g)} runs): local[1] {t1:.1f} s, local[2] {t2:.1f} s, "
                  f"speed-up {t1 / t2:.2f}x (target >= 1.8x); {_load()}")
        if "rebalances" not in skip:
            g = parse_grid(DENSE, "bench dense grid")
            t, rows = timed_sweep("local[2]", g, tmp)
            reb = sum(r["generations"] or 0 for r in rows)  # every generation formed, start-up included
            c0 = time.process_time()
            serial = rows_locally(g)
            cpu = time.process_time() - c0
            assert serial == sorted(rows, key=lambda r: r["point_id"])
            print(f"rebalances: {reb} generations formed in {len(rows)} runs; local[2] {t:.1f} s wall = "
                  f"{reb / t * 3600:,.0f} simulated rebalances per hour; one process {cpu:.1f} CPU-s = "
                  f"{reb / cpu * 3600:,.0f} per CPU-hour, {2 * reb / cpu * 3600:,.0f} per hour on 2 idle cores "
                  f"(target >= 2,000,000); {_load()}")
        if "audit" not in skip:
            sizes = sorted({int(s) for s in args.sizes.split(",") if s} | {args.events})
            for size in sizes:
                d = tmp / f"events-{size}"
                t0 = time.perf_counter()
                n = write_events(size, d)
                gen = time.perf_counter() - t0
                files = sorted(str(f) for f in d.glob("*.jsonl.gz"))
                ts = spark_audit(files, tmp)
                tb, nb = baseline(files)
                assert nb == n, (nb, n)
                print(f"audit {n:,} events ({len(files)} files, written in {gen:.0f} s): local[2] {ts:.1f} s = "
                      f"{n / ts:,.0f} events/s; one process (checker + DuckDB) {tb:.1f} s = {n / tb:,.0f} events/s; "
                      f"local[2] / baseline = {tb / ts:.2f}x; {_load()}")
                shutil.rmtree(d, ignore_errors=True)
        print(json.dumps({"tmp": str(tmp)}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
