"""The Spark audit's throughput in events per second, side by side with a one-process baseline on the
same files in the same run.

Data: ``--events`` (default 10 million) trace events in ``.jsonl.gz`` files of 50 groups each: the
traces of the ``history`` sweep's runs (ZooKeeper's excepted), each copied under fresh group names.
The files are written once; a smaller size (``--sizes``) is the first files of the set.

For every size, in this order:

* **Spark** ``local[2]``: ``run_audit`` (every file checked in the task that reads it, the fleet
  aggregates in Spark SQL, the verdicts, windows and periods written as Parquet and the report), in a
  fresh session whose Python workers are started before the clock starts; the session's start-up is
  printed apart (a user pays it once per command);
* **the command** ``groupspec trace check --json`` on the same files, in a process of its own (the
  single-process trace check issue 32 compares with; ``--no-cli`` skips it);
* **baseline**, one process: the same per-file function (``groupspec.pipeline.audit.trace_rows``, the
  project's one trace checker on the file as ``groupspec trace check`` runs it, rows flattened), file
  after file, then the same aggregates in DuckDB and the verdicts written as Parquet.

Printed: wall seconds, events/s, CPU-seconds (every process: driver, JVM, Python workers, sampled
through ``/proc`` every 0.25 s so workers that exit are counted; the sampling thread's own cost is in
the driver's figure), the ratio
local[2] / baseline, and the load average; then the size at which local[2] overtakes the baseline,
estimated from the smallest and the largest size's wall times (Spark: fixed cost + events x per-event
cost; baseline: events x its per-event cost), which on a shared machine says more about the load
than about Spark. Load-independent, from CPU-seconds: each size's ratio on 2 idle cores, between two
bounds of Spark's wall time there (its CPU-seconds spread over both cores; the workers' half, the
JVM's and the driver's one after the other), and the crossover size for each bound. Both sides call
the checker, so when the checker gets faster both rise, and what is left of Spark's figure is its
plumbing and its fixed cost.

``--aggregation``: only the aggregation, Spark SQL (``groupspec.pipeline.audit.fleet_figures`` over the verdicts
cached in a local[2] session) against DuckDB (the same figures and sorted frames over the same rows), on the files
of ``--events`` events; the checking is not timed; interleaved runs, medians of wall time and CPU-seconds.
"""
from __future__ import annotations

import argparse
import gzip
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pipeline_cpu import CpuMeter, autogroup, load, session_ceiling  # noqa: E402

from groupspec.pipeline.audit import FLEET_SQL, trace_rows  # noqa: E402
from groupspec.pipeline.grid import preset  # noqa: E402
from groupspec.pipeline.runs import run_point_with_trace  # noqa: E402
from groupspec.pipeline.spark import spark_session  # noqa: E402

GROUPS_PER_FILE = 50


def write_events(target: int, dest: Path) -> list[tuple[str, int]]:
    """At least ``target`` events in .jsonl.gz files; ``[(file, events so far)]``."""
    from groupspec.reference.sim import dumps_jsonl

    base = []
    for p in preset("history").points:
        if p.protocol != "zookeeper":
            _, trace = run_point_with_trace(p)
            base.append((dumps_jsonl(dict(e, group="@G@") for e in trace), len(trace)))
    dest.mkdir(parents=True, exist_ok=True)
    out: list[tuple[str, int]] = []
    n = k = 0
    while n < target:
        parts = []
        for _ in range(GROUPS_PER_FILE):
            text, count = base[k % len(base)]
            parts.append(text.replace('"group":"@G@"', f'"group":"g{k}"'))
            n += count
            k += 1
            if n >= target:
                break
        f = dest / f"fleet-{len(out):05d}.jsonl.gz"
        with gzip.open(f, "wt", compresslevel=1) as fh:
            fh.write("".join(parts))
        out.append((str(f), n))
    return out


_DUCK = {
    "verdicts": "SELECT property, verdict, count(*) AS groups FROM (UNPIVOT v ON {props} INTO NAME property "
                "VALUE verdict) GROUP BY ALL ORDER BY property, verdict",
    "worst_unowned_windows": "SELECT * FROM w ORDER BY seconds DESC, trace, \"group\", topic, partition, from_ms LIMIT 20",
    "convergence": "SELECT count(*), min(s), quantile_cont(s, 0.5), quantile_cont(s, 0.9), quantile_cont(s, 0.99), "
                   "max(s) FROM (SELECT unnest(seconds_to_converge) AS s FROM v)",
    "overlaps": "SELECT count(*), coalesce(sum(\"overlaps\"), 0), coalesce(sum(zombie_overlaps), 0) FROM v "
                "WHERE \"overlaps\" > 0",
    "never_converged": "SELECT trace, \"group\", periods_never_converged FROM v WHERE convergence = 'violated' "
                       "ORDER BY trace, \"group\"",
    "nothing_checked": "SELECT trace, \"group\", events FROM v WHERE ok AND len(members) = 0 ORDER BY trace, \"group\"",
    "totals": "SELECT count(*), sum(CASE WHEN ok THEN 1 ELSE 0 END), sum(CASE WHEN ok AND len(members) = 0 THEN 1 "
              "ELSE 0 END), sum(events) FROM v",
}


def baseline(files: list[str], out: Path) -> dict[str, Any]:
    """One process: the checker file after file (the audit's own per-file function), the aggregates in
    DuckDB, the verdicts, windows and periods as Parquet (what the Spark audit writes)."""
    import duckdb
    import pandas as pd

    from groupspec.pipeline.audit import PROPERTIES

    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    windows: list[dict[str, Any]] = []
    periods: list[dict[str, Any]] = []
    for f in files:
        for r in trace_rows(f, 20.0):
            for w in r.pop("window_list"):
                windows.append({"trace": r["trace"], "group": r["group"], **w})
            for p in r.pop("period_list"):
                periods.append({"trace": r["trace"], "group": r["group"], **p})
            rows.append(r)
    v = pd.DataFrame(rows)
    w = pd.DataFrame(windows)
    p = pd.DataFrame(periods)
    con = duckdb.connect()
    con.register("v", v)
    con.register("w", w)
    figures = {k: con.execute(sql.format(props=", ".join(PROPERTIES))).fetchall() for k, sql in _DUCK.items()}
    out.mkdir(parents=True, exist_ok=True)
    con.execute(f"COPY (SELECT * FROM v ORDER BY trace, \"group\") TO '{out / 'verdicts.parquet'}' (FORMAT parquet)")
    con.execute(f"COPY (SELECT * FROM w) TO '{out / 'windows.parquet'}' (FORMAT parquet)")
    con.register("p", p)
    con.execute(f"COPY (SELECT * FROM p) TO '{out / 'periods.parquet'}' (FORMAT parquet)")
    assert set(figures) == set(FLEET_SQL)
    return {"wall": time.perf_counter() - t0, "events": int(figures["totals"][0][3] or 0),
            "groups": int(figures["totals"][0][0])}


def trace_check_cli(files: list[str], out: Path) -> dict[str, Any]:
    """The command the issue names, ``groupspec trace check --json FILES...`` (its fastest output: the text
    report costs more), in a process of its own: wall seconds, its CPU-seconds (``RUSAGE_CHILDREN``), and the
    events and groups its document counts (the check that it saw what Spark saw)."""
    import json
    import resource
    import subprocess

    exe = Path(sys.executable).with_name("groupspec")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-c", "from groupspec.cli import main; main()"]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(out, "wb") as fh:
        proc = subprocess.run([*cmd, "trace", "check", "--json", *files], stdout=fh, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):  # 1: some invariant violated in some trace, as the fleet has
        raise SystemExit(f"groupspec trace check failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    with open(out, encoding="utf-8") as fh:
        doc = json.load(fh)
    out.unlink()
    return {"wall": wall, "cpu": (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime),
            "events": sum(t["events"] for t in doc["traces"]), "groups": sum(len(t["groups"]) for t in doc["traces"])}


def spark_audit(files: list[str], tmp: Path) -> dict[str, Any]:
    def warm(batches: Any) -> Any:  # defined here so that it travels by value: the workers cannot import this file
        import groupspec.pipeline.audit  # noqa: F401

        yield from batches

    from groupspec.pipeline.audit import run_audit

    stage = tmp / "audit"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    s0 = time.perf_counter()
    with spark_session("local[2]", "bench audit", quiet=True) as spark:
        # the Python workers started, and their imports done, before the clock starts: the workers of a SQL job
        # (mapInArrow, as the audit's), which Spark keeps apart from an RDD job's (a warm-up by
        # ``parallelize(...).map`` leaves the audit to start its own)
        spark.range(0, 2, 1, 2).mapInArrow(warm, "id long").count()
        start = time.perf_counter() - s0
        with CpuMeter() as meter:
            t0 = time.perf_counter()
            fleet = run_audit(spark, files, [], stage, progress=False)
            wall = time.perf_counter() - t0
        cpu = meter.result
    return {"wall": wall, "start": start, "cpu": cpu, "events": int(fleet["totals"][0]["events"]),
            "groups": int(fleet["totals"][0]["groups"])}


def aggregation(files: list[str], repeats: int = 3) -> None:
    """The aggregation alone, Spark SQL against DuckDB, on the same verdict rows: Spark's ``fleet_figures`` (the
    fleet SQL, the verdicts, windows and periods to pandas, sorted) over the verdicts cached in a local[2] session,
    and the same figures and sorted frames in DuckDB over the rows of ``trace_rows`` (what the baseline aggregates);
    the checking before it is not timed on either side. ``repeats`` runs each, interleaved; medians of wall time
    and of the CPU-seconds of every process (Spark: driver, JVM and workers)."""
    import statistics

    import duckdb
    import pandas as pd

    from groupspec.pipeline.audit import PROPERTIES, fleet_figures, verdicts_frame

    rows: list[dict[str, Any]] = []
    windows: list[dict[str, Any]] = []
    periods: list[dict[str, Any]] = []
    for f in files:
        for r in trace_rows(f, 20.0):
            windows.extend({"trace": r["trace"], "group": r["group"], **w} for w in r.pop("window_list"))
            periods.extend({"trace": r["trace"], "group": r["group"], **p} for p in r.pop("period_list"))
            rows.append(r)

    def duck() -> int:
        v, w, p = pd.DataFrame(rows), pd.DataFrame(windows), pd.DataFrame(periods)
        con = duckdb.connect()
        con.register("v", v)
        con.register("w", w)
        con.register("p", p)
        figures = {k: con.execute(sql.format(props=", ".join(PROPERTIES))).fetchall() for k, sql in _DUCK.items()}
        con.execute('SELECT * FROM v ORDER BY trace, "group"').df()
        con.execute('SELECT * FROM w ORDER BY trace, "group", topic, partition, from_ms').df()
        con.execute('SELECT * FROM p ORDER BY trace, "group", from_ms').df()
        return int(figures["totals"][0][0])

    spark_runs, duck_runs = [], []
    with spark_session("local[2]", "bench audit aggregation", quiet=True) as spark:
        verdicts = verdicts_frame(spark, files, [], 20.0).cache()
        groups = verdicts.count()
        fleet_figures(spark, verdicts)  # the JVM's SQL paths warmed once, as DuckDB's are by its first run below
        duck()
        for r in range(repeats):
            for side in (("spark", "duck") if r % 2 == 0 else ("duck", "spark")):
                with CpuMeter() as meter:
                    t0 = time.perf_counter()
                    if side == "spark":
                        fleet = fleet_figures(spark, verdicts)[0]
                        assert int(fleet["totals"][0]["groups"]) == groups
                    else:
                        assert duck() == groups
                    wall = time.perf_counter() - t0
                (spark_runs if side == "spark" else duck_runs).append((wall, meter.result["total"]))
    sw, sc = (statistics.median(x[i] for x in spark_runs) for i in range(2))
    dw, dc = (statistics.median(x[i] for x in duck_runs) for i in range(2))
    print(f"aggregation alone ({groups:,} groups, {len(windows):,} windows, {len(periods):,} periods; medians of "
          f"{repeats} interleaved runs): Spark SQL on local[2] {sw:.2f} s wall, {sc:.2f} CPU-s; DuckDB {dw:.2f} s, "
          f"{dc:.2f} CPU-s; DuckDB / Spark = {dw / sw:.2f}x by wall, {dc / sc if sc else float('nan'):.2f}x by "
          f"CPU-seconds (>= 1: Spark at DuckDB's cost or better); {load()}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--sizes", default="100000,1000000,3000000", help="comma-separated smaller event counts (crossover)")
    ap.add_argument("--no-cli", dest="cli", action="store_false", help="do not time the command `groupspec trace "
                    "check --json` on the same files (the issue's single-process peer)")
    ap.add_argument("--aggregation", action="store_true", help="only the aggregation, Spark SQL against DuckDB, "
                    "on the verdict rows of --events events")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-audit-"))
    try:
        print(f"bench_pipeline_audit: {load()}", flush=True)
        t0 = time.perf_counter()
        made = write_events(args.events, tmp / "events")
        print(f"data: {made[-1][1]:,} events in {len(made)} files written in {time.perf_counter() - t0:.0f} s",
              flush=True)
        if args.aggregation:
            aggregation([f for f, _ in made])
            return
        sizes = sorted({int(s) for s in args.sizes.split(",") if s and int(s) < args.events} | {args.events})
        points = []
        cpu_points: list[tuple[int, float, float, float]] = []
        for size in sizes:
            files = [f for f, _ in made[:next(i for i, (_, n) in enumerate(made) if n >= size) + 1]]
            ceiling = session_ceiling()  # what two processes of this session get over one, right now
            s = spark_audit(files, tmp)
            with CpuMeter() as meter:
                b = baseline(files, tmp / "baseline")
            bcpu = meter.result["total"]
            assert (s["events"], s["groups"]) == (b["events"], b["groups"]), (s, b)
            c = trace_check_cli(files, tmp / "trace-check.json") if args.cli else None
            assert c is None or (c["events"], c["groups"]) == (b["events"], b["groups"]), (c, b)
            n = s["events"]
            points.append((n, s["wall"], b["wall"]))
            serial = s["cpu"]["workers"] / 2 + s["cpu"]["jvm"] + s["cpu"]["driver"]
            cpu_points.append((n, s["cpu"]["total"], bcpu, serial))
            print(f"{'' if size != sizes[0] else '(first size: the JVM warms up here; later ones reuse it) '}"
                  f"audit {n:,} events, {s['groups']:,} groups, {len(files)} files: local[2] {s['wall']:.1f} s = "
                  f"{n / s['wall']:,.0f} events/s ({s['cpu']['total']:.1f} CPU-s: driver {s['cpu']['driver']:.1f}, "
                  f"JVM {s['cpu']['jvm']:.1f}, Python workers {s['cpu']['workers']:.1f}; session start-up "
                  f"{s['start']:.1f} s more); one process (checker + DuckDB) {b['wall']:.1f} s = "
                  f"{n / b['wall']:,.0f} events/s ({bcpu:.1f} CPU-s); local[2] / baseline = "
                  f"{b['wall'] / s['wall']:.2f}x; {load()}; this session's two-process ceiling just before: "
                  f"{ceiling['ratio']:.2f}x ({autogroup()}: when the machine is contended each login session gets one "
                  f"share of the CPUs, so local[2]'s second worker gains that much at most)", flush=True)
            if c is not None:
                print(f"  the command, one process: groupspec trace check --json {c['wall']:.1f} s = {n / c['wall']:,.0f} "
                      f"events/s ({c['cpu']:.1f} CPU-s); local[2] / trace check = {c['wall'] / s['wall']:.2f}x (issue 32: "
                      f">= 2x at 10 million events); on 2 idle cores, from CPU-seconds, between {c['cpu'] / serial:.2f}x "
                      f"and {2 * c['cpu'] / s['cpu']['total']:.2f}x", flush=True)
            print(f"  by CPU-seconds (load-independent): one process {n / bcpu:,.0f} events per CPU-s; local[2] "
                  f"{n / s['cpu']['total']:,.0f} per CPU-s of all its processes. On 2 idle cores local[2] takes "
                  f"between {s['cpu']['total'] / 2:.1f} s (its CPU-seconds spread over both cores) and {serial:.1f} s "
                  f"(the workers' half, the JVM and the driver one after the other), the one process "
                  f"{bcpu:.1f} s: local[2] / baseline between {bcpu / serial:.2f}x and "
                  f"{2 * bcpu / s['cpu']['total']:.2f}x", flush=True)
        if len(points) >= 2:
            (n1, s1, b1), (n2, s2, b2) = points[0], points[-1]
            sp = (s2 - s1) / (n2 - n1)  # Spark's seconds per event
            fixed = s1 - sp * n1
            bp = b2 / n2
            if bp > sp:
                print(f"crossover by wall time at this load: Spark local[2] = {fixed:.1f} s fixed + {sp * 1e6:.1f} s per million events, "
                      f"baseline {bp * 1e6:.1f} s per million: local[2] overtakes the baseline from about "
                      f"{max(0.0, fixed / (bp - sp)):,.0f} events (session start-up not counted)", flush=True)
            else:
                print(f"crossover by wall time: none at this load (Spark {sp * 1e6:.1f} s per million events, baseline "
                      f"{bp * 1e6:.1f})", flush=True)
        cpu_crossover(cpu_points)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cpu_crossover(points: list[tuple[int, float, float, float]]) -> None:
    """Load-independent: the sizes at which local[2] on 2 idle cores overtakes the one process, from
    CPU-seconds: Spark's two wall-time bounds (its CPU-seconds / 2; the workers' / 2 + the JVM's + the
    driver's) as fixed + per event (least squares over the sizes after the first, whose session warms the
    JVM up), the baseline's CPU-seconds per event."""
    pts = points[1:] if len(points) > 2 else points
    if len(pts) < 2:
        return
    base = sum(p[2] for p in pts) / sum(p[0] for p in pts)
    out = []
    for label, ys in (("spread over both cores", [p[1] / 2 for p in pts]),
                      ("JVM and driver not overlapping the workers", [p[3] for p in pts])):
        xs = [p[0] for p in pts]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        per = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        fixed = my - per * mx
        where = f"from about {max(0.0, fixed / (base - per)):,.0f} events" if base > per else "never"
        out.append(f"{label}: {fixed:.1f} s + {per * 1e6:.2f} s per million events, overtakes it {where}")
    print(f"crossover by CPU-seconds on 2 idle cores (the one process: {base * 1e6:.2f} s per million events); "
          f"local[2] {'; '.join(out)}", flush=True)


if __name__ == "__main__":
    main()
