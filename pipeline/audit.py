"""The audit job: many groups' traces checked on Spark, per-group verdicts and fleet aggregates.

Input: trace files (``.jsonl``, ``.jsonl.gz``: the trace format of docs/formats.md) and directories of them,
or Parquet with one row per event (``trace``, ``group``, ``line_no``, ``line``: a sweep's
``traces/``). A trace file is read whole by one Spark task, so it keeps its line order and its lines
never travel: the task runs the checker on the file as ``groupspec trace check`` does
(:func:`trace_rows`) and hands the JVM its rows as Arrow batches (``mapInArrow``); the files are spread
over tasks of decreasing size (:func:`plan_files`). Parquet events are grouped by ``(trace, group)``
(``applyInPandas``).

Verdicts: a file's lines go to the project's one trace checker exactly as ``groupspec trace check``
feeds them (``groupspec.trace.runs.iter_results``); a Parquet (trace, group)'s lines, in line
order, to its per-group checker (``GroupChecker``, :func:`check_unit`). The audit decides nothing
itself, so its verdicts are those of ``groupspec trace check`` on the same files (a
test asserts it). A group's result is kept whole (``result``, the checker's JSON for the group) next
to flat columns for SQL: one verdict column per property, violation counts, the unowned windows and
the periods.

Fleet aggregates, in Spark SQL over those rows (:data:`FLEET_SQL`): verdicts per property, the
worst unowned windows, the distribution of convergence times, overlaps (and those involving a zombie),
the groups that never converged, and the groups whose events name no member (every invariant held
vacuously: nothing was checked).

Output (staged, renamed into place when complete): ``verdicts/`` (Parquet, one row per group),
``windows/`` (one row per unowned window), ``periods/`` (one row per period), ``fleet.json`` and
``report.md``.
"""
from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["AuditError", "expand_inputs", "run_audit", "fleet_figures", "VERDICT_SCHEMA", "FLEET_SQL", "split_lines",
           "verdict_row", "trace_rows", "group_row", "loose_row", "check_unit", "plan_files", "verdict_arrow_schema"]

PROPERTIES = ("exclusive_ownership", "commit_fencing", "generation_monotonic", "completeness", "convergence", "well_formed")


class AuditError(ValueError):
    """An input that cannot be read at all (the message names it)."""


# a group's unowned windows and periods, as the checker's JSON has them, handed from the workers to the
# JVM as Arrow columns (not parsed again from the result JSON)
_WINDOW_FIELDS = (("topic", "string"), ("partition", "long"), ("from_ms", "long"), ("to_ms", "long"),
                  ("seconds", "double"))
_PERIOD_FIELDS = (("from_ms", "long"), ("to_ms", "long"), ("members", "array<string>"), ("converged_at_ms", "long"),
                  ("seconds_to_converge", "double"))

VERDICT_SCHEMA = (
    "trace string, `group` string, ok boolean, events long, members array<string>, "
    + ", ".join(f"{p} string" for p in PROPERTIES)
    + ", violations long, overlaps long, zombie_overlaps long, unowned_windows long, max_unowned_s double, "
    "periods long, periods_never_converged long, max_seconds_to_converge double, "
    "seconds_to_converge array<double>, result string, "
    f"window_list array<struct<{','.join(f'{n}:{t}' for n, t in _WINDOW_FIELDS)}>>, "
    f"period_list array<struct<{','.join(f'{n}:{t}' for n, t in _PERIOD_FIELDS)}>>"
)
WINDOW_SCHEMA = "trace string, `group` string, topic string, partition long, from_ms long, to_ms long, seconds double"
# the verdict rows' columns that are not written to verdicts/ (they become windows/ and periods/)
LIST_COLUMNS = ("window_list", "period_list")


def expand_inputs(paths: list[str]) -> tuple[list[str], list[str]]:
    """``(trace files, parquet inputs)``; a path that cannot be used raises :class:`AuditError`."""
    files: list[str] = []
    parquet: list[str] = []
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise AuditError(f"{raw}: no such file or directory")
        if p.is_dir():
            pq = sorted(str(f) for f in p.rglob("*.parquet"))
            tr = sorted(str(f) for f in p.rglob("*") if f.is_file() and f.name.endswith((".jsonl", ".jsonl.gz")))
            if not pq and not tr:
                raise AuditError(f"{raw}: directory holds no .jsonl, .jsonl.gz or .parquet file")
            parquet.extend(pq)
            files.extend(tr)
        elif p.name.endswith(".parquet"):
            parquet.append(str(p))
        else:
            files.append(str(p))
    for f in files:
        try:
            with open(f, "rb") as fh:
                head = fh.read(2)
        except OSError as e:
            raise AuditError(f"{f}: cannot open ({e.strerror})") from None
        if f.endswith(".gz") and head != b"\x1f\x8b":
            raise AuditError(f"{f}: line 1: named .gz but not gzip-compressed")
        if not _has_content(f, head == b"\x1f\x8b"):
            raise AuditError(f"{f}: empty trace: no events (nothing to audit)")
        _refuse_no_trace(f, head == b"\x1f\x8b")
    for f in parquet:
        try:
            import pyarrow.parquet as pq_

            names = pq_.read_schema(f).names
        except Exception as e:  # noqa: BLE001 - any reason it is not Parquet
            raise AuditError(f"{f}: not a Parquet file ({str(e).splitlines()[0]})") from None
        missing = {"trace", "line_no", "line"} - set(names)
        if missing:
            raise AuditError(f"{f}: Parquet input needs columns trace, line_no, line (missing: {', '.join(sorted(missing))})")
        if pq_.read_metadata(f).num_rows == 0:
            raise AuditError(f"{f}: empty Parquet input: no trace lines (nothing to audit)")
    return sorted(set(files)), sorted(set(parquet))


def _has_content(path: str, gz: bool) -> bool:
    """Whether the file holds a non-blank byte (read until the first one: cheap for any real trace)."""
    try:
        with (gzip.open(path, "rb") if gz else open(path, "rb")) as fh:
            while True:
                chunk = fh.read(1 << 16)
                if not chunk:
                    return False
                if chunk.strip():
                    return True
    except (OSError, EOFError) as e:
        raise AuditError(f"{path}: cannot read ({e})") from None


NO_TRACE_LINES = 200  # a file none of whose first lines is a JSON object is no trace (the wrong file given)


def _refuse_no_trace(path: str, gz: bool) -> None:
    """:class:`AuditError` when none of the file's first non-blank lines is a JSON object: a log, a CSV, a
    script given by mistake is bad input (one line, before Spark starts), not a fleet of defects."""
    first = None
    seen = 0
    try:
        with (gzip.open(path, "rb") if gz else open(path, "rb")) as fh:
            for n, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                seen += 1
                try:
                    if isinstance(json.loads(raw), dict):
                        return
                    why = "not a JSON object"
                except ValueError as e:
                    why = f"not JSON ({e})"
                first = first or (n, why)
                if seen >= NO_TRACE_LINES:
                    break
    except (OSError, EOFError) as e:
        raise AuditError(f"{path}: cannot read ({e})") from None
    if first is not None:
        raise AuditError(f"{path}: not a trace: none of its first {seen:,} line(s) is a JSON event "
                         f"(line {first[0]}: {first[1]})")


LOOSE = "\u0000loose"  # the unit of a file's malformed lines when they belong to no single group


def _group_key(ev: Any) -> str:
    """The group a parsed line belongs to, JSON-encoded (``null``: a trace without group names)."""
    gid = ev.get("group")
    if gid is not None and not isinstance(gid, str):
        gid = str(gid)
    return json.dumps(gid)


def split_lines(path: str, data: bytes) -> list[tuple[str, str, int, str]]:
    """``(trace, group key, line number, line)`` for every non-blank line of one file's bytes.

    Line numbers are the file's own (blank lines count), as ``groupspec trace check`` reports them. A
    line that is not a JSON object belongs to the file's only group, or to the :data:`LOOSE` unit
    when the file has several (the checker reports those at the trace level)."""
    from groupspec.trace import parse_line

    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    rows: list[tuple[str, str, int, str]] = []
    groups: set[str] = set()
    for n, raw in enumerate(data.splitlines(keepends=True), 1):
        if not raw.strip():
            continue
        ev, _why = parse_line(raw)
        key = _group_key(ev) if ev is not None else LOOSE
        if ev is not None:
            groups.add(key)
        rows.append((path, key, n, raw.decode("utf-8", errors="surrogateescape").rstrip("\r\n")))
    if len(groups) == 1:
        only = next(iter(groups))
        rows = [(t, only if k == LOOSE else k, n, line) for t, k, n, line in rows]
    return rows


def check_unit(trace: str, key: str, lines: list[tuple[int, str]], converge_within_s: float) -> dict[str, Any]:
    """The trace checker on one group's lines (in line order), as ``groupspec trace check`` runs it:
    in file order with time order enforced, and, if time goes back, again with the lines sorted by
    time (the checker's own rule). Returns the group's JSON (or, for :data:`LOOSE`, the trace-level
    defects)."""
    from groupspec.trace import parse_line

    parsed: list[tuple[int, Any]] = []
    for n, line in lines:
        ev, why = parse_line(line.encode("utf-8", errors="surrogateescape"))
        parsed.append((n, ev if ev is not None else why))
    return check_parsed(key, parsed, converge_within_s)


def check_parsed(key: str, parsed: list[tuple[int, Any]], converge_within_s: float) -> dict[str, Any]:
    """:func:`check_unit` on lines already parsed: ``(line number, event dict or the reason it is not one)``."""
    from groupspec.trace import GroupChecker

    if key == LOOSE:
        return {"group": None, "defects": [{"line": n, "ts_ms": None, "member": None, "message": m}
                                           for n, m in parsed]}
    gid = json.loads(key)

    def run(items: list[tuple[int, Any]], strict: bool) -> GroupChecker:
        g = GroupChecker(gid, converge_within_s, strict)
        loose = []
        for n, ev in items:
            if isinstance(ev, dict):
                g.feed(ev, n)
            else:
                loose.append({"line": n, "ts_ms": None, "member": None, "message": ev})
        g.finish()
        if loose:
            g.defects = sorted(loose + g.defects, key=lambda d: d["line"] or 0)
        return g

    # the checker's own rule for a trace whose time goes back: its signal, then its order by time
    from groupspec.trace import Unsorted
    from groupspec.trace import sorted_by_time

    try:
        g = run(parsed, True)
    except Unsorted:
        g = run(sorted_by_time(parsed), False)
    return g.to_dict()


_COLS = [c.split(" ")[0].strip("`") for c in VERDICT_SCHEMA.split(", ")]


def verdict_row(trace: str, key: str, lines: list[tuple[int, str]], converge_within_s: float,
                parsed: list[tuple[int, Any]] | None = None) -> dict[str, Any]:
    """One (trace, group)'s lines (or ``parsed`` lines) -> its verdict row (the checker's result,
    flattened for SQL)."""
    if parsed is not None:
        g = check_parsed(key, parsed, converge_within_s)
        n = len(parsed)
    else:
        g = check_unit(trace, key, lines, converge_within_s)
        n = len(lines)
    if key == LOOSE:
        return loose_row(trace, g["defects"], n)
    return group_row(trace, g, n)


def loose_row(trace: str, defects: list[dict[str, Any]], events: int) -> dict[str, Any]:
    """The row of a file's lines that belong to no single group (the checker's trace-level defects)."""
    row: dict[str, Any] = {c: None for c in _COLS}
    row.update({pid: "n/a" for pid in PROPERTIES})
    row.update(trace=trace, group="", ok=False, events=events, members=[], well_formed="violated",
               violations=len(defects), overlaps=0, zombie_overlaps=0, unowned_windows=0, periods=0,
               periods_never_converged=0, seconds_to_converge=[],
               result=json.dumps({"group": None, "defects": defects}, sort_keys=True), window_list=[], period_list=[])
    return row


def group_row(trace: str, g: dict[str, Any], events: int) -> dict[str, Any]:
    """The row of one group: the checker's JSON for it (``g``) kept whole and flattened for SQL."""
    props = {p["id"]: p for p in g.get("properties", [])}
    ex = props.get("exclusive_ownership", {}).get("violations", [])
    windows = g.get("unowned_windows", [])
    periods = g.get("periods", [])
    conv = [float(p["seconds_to_converge"]) for p in periods if p.get("seconds_to_converge") is not None]
    return {
        "trace": trace, "group": "" if g.get("group") is None else str(g["group"]),
        "ok": all(p.get("verdict") != "violated" for p in props.values()),
        "events": events, "members": [str(m) for m in g.get("members", [])],
        **{pid: props.get(pid, {}).get("verdict", "n/a") for pid in PROPERTIES},
        "violations": sum(len(p.get("violations", [])) for p in props.values() if p.get("verdict") == "violated"),
        "overlaps": len(ex) + len(g.get("zombie_overlaps", [])), "zombie_overlaps": len(g.get("zombie_overlaps", [])),
        "unowned_windows": len(windows),
        "max_unowned_s": max((float(w.get("seconds", 0)) for w in windows), default=0.0),
        "periods": len(periods),
        "periods_never_converged": sum(1 for p in periods if p.get("converged_at_ms") is None),
        "max_seconds_to_converge": max(conv) if conv else None,
        "seconds_to_converge": conv, "result": json.dumps(g, sort_keys=True),
        "window_list": [{k: w.get(k) for k, _ in _WINDOW_FIELDS} for w in windows],
        "period_list": [{k: p.get(k) for k, _ in _PERIOD_FIELDS} for p in periods],
    }


def trace_rows(path: str, converge_within_s: float) -> list[dict[str, Any]]:
    """Every group of one trace file, checked by the project's trace checker exactly as
    ``groupspec trace check`` checks the file (``groupspec.trace.iter_results``: its reading, its
    splitting by group, its rule for a file whose time goes back), as verdict rows; the lines that belong
    to no single group make one more row. Pure Python: a Spark task runs it on the files it reads, the
    benchmark's one-process baseline on every file."""
    from groupspec.trace import iter_results

    (res,) = list(iter_results([path], converge_within_s))
    rows = []
    one = len(res.groups) == 1
    for gc in res.groups:
        # a one-group file's malformed lines are the group's (well_formed defects): they count as its lines
        rows.append(group_row(path, gc.to_dict(), res.events if one else gc.events))
    if res.defects:
        rows.append(loose_row(path, list(res.defects), len(res.defects)))
    return rows


def verdict_arrow_schema() -> Any:
    """:data:`VERDICT_SCHEMA` as an Arrow schema (the batches ``mapInArrow`` yields)."""
    import pyarrow as pa

    types = {"string": pa.string(), "boolean": pa.bool_(), "long": pa.int64(), "double": pa.float64(),
             "array<string>": pa.list_(pa.string()), "array<double>": pa.list_(pa.float64())}

    def arrow(typ: str) -> Any:
        if typ.startswith("array<struct<"):
            inner = typ[len("array<struct<"):-2]
            return pa.list_(pa.struct([(n, types[t]) for n, t in (f.split(":", 1) for f in _split_fields(inner))]))
        return types[typ]

    fields = []
    for col in VERDICT_SCHEMA.split(", "):
        name, typ = col.split(" ", 1)
        fields.append((name.strip("`"), arrow(typ)))
    return pa.schema(fields)


def _split_fields(inner: str) -> list[str]:
    """``a:string,b:array<string>`` -> its fields (commas inside ``<>`` do not split)."""
    out, depth, cur = [], 0, ""
    for ch in inner:
        depth += (ch == "<") - (ch == ">")
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


def _files_to_arrow(bins: list[list[str]], converge_within_s: float) -> Any:
    """``mapInArrow``: batches of bin numbers (``spark.range``: task ``i`` gets ``i``) -> batches of
    verdict rows (one task checks the files of its bin)."""
    def run(batches: Any) -> Any:
        import pyarrow as pa

        from groupspec.pipeline import prepare_worker

        prepare_worker()
        schema = verdict_arrow_schema()
        for batch in batches:
            for i in batch.column(0).to_pylist():
                for path in bins[i]:
                    rows = trace_rows(path, converge_within_s)
                    if rows:
                        yield pa.RecordBatch.from_pylist(rows, schema=schema)
    return run


def plan_files(files: list[str], cores: int) -> list[list[str]]:
    """The files in bins of decreasing size, one task each (Spark starts them in this order as cores come free):
    each bin takes a share of what is left, ``left / (2 * cores)`` bytes, biggest files first, and no bin is
    smaller than ``1 / (32 * cores)`` of the whole (or one file). Big tasks first keep the per-task cost low (a
    dozen or two tasks, not one per file); the small ones last fill the cores evenly at the end, so the last core
    to finish waits at most about one small task (guided self-scheduling). With equal bins the cores finished up to a
    whole bin apart (5 s on 10 million events: 8 bins of equal bytes whose cost differed)."""
    sizes = {f: Path(f).stat().st_size for f in files}
    order = sorted(dict.fromkeys(files), key=lambda f: (-sizes[f], f))
    cores = max(1, cores)
    total = sum(sizes.values())
    floor = total / (32 * cores)
    bins: list[list[str]] = []
    left = total
    k = 0
    while k < len(order):
        target = max(left / (2 * cores), floor)
        current: list[str] = []
        size = 0
        while k < len(order) and (not current or size + sizes[order[k]] <= target):
            current.append(order[k])
            size += sizes[order[k]]
            k += 1
        bins.append(current)
        left -= size
    return bins


def _check_group(pdf: Any, converge_within_s: float) -> Any:
    """applyInPandas (Parquet input: one row per event): one (trace, group)'s rows -> its verdict row."""
    import pandas as pd

    pdf = pdf.sort_values("line_no")
    trace, key = str(pdf["trace"].iloc[0]), str(pdf["group"].iloc[0])
    row = verdict_row(trace, key, list(zip(pdf["line_no"].astype(int), pdf["line"])), converge_within_s)
    return pd.DataFrame([row], columns=_COLS)


FLEET_SQL: dict[str, str] = {
    # one aggregation over the properties unpivoted (stack), not one per property
    "verdicts": "SELECT property, verdict, count(*) AS groups FROM (SELECT stack({n}, {pairs}) AS (property, verdict) "
                "FROM verdicts) GROUP BY property, verdict ORDER BY property, verdict".format(
                    n=len(PROPERTIES), pairs=", ".join(f"'{p}', {p}" for p in PROPERTIES)),
    "worst_unowned_windows": "SELECT trace, `group`, topic, partition, from_ms, to_ms, seconds FROM windows "
                             "ORDER BY seconds DESC, trace, `group`, topic, partition, from_ms LIMIT 20",
    "convergence": "SELECT count(*) AS periods, min(s) AS min_s, percentile(s, 0.5) AS p50_s, "
                   "percentile(s, 0.9) AS p90_s, percentile(s, 0.99) AS p99_s, max(s) AS max_s "
                   "FROM (SELECT explode(seconds_to_converge) AS s FROM verdicts)",
    "overlaps": "SELECT count(*) AS groups_with_overlaps, coalesce(sum(overlaps), 0) AS overlaps, "
                "coalesce(sum(zombie_overlaps), 0) AS zombie_overlaps FROM verdicts WHERE overlaps > 0",
    "never_converged": "SELECT trace, `group`, periods_never_converged, convergence FROM verdicts "
                       "WHERE convergence = 'violated' ORDER BY trace, `group`",
    # held vacuously: no event of the group named a member, so nothing was checked (``trace check`` warns of such
    # a trace; in a fleet it is often a consumer that never recorded, or a filter that dropped its lines)
    "nothing_checked": "SELECT trace, `group`, events FROM verdicts WHERE ok AND size(members) = 0 "
                       "ORDER BY trace, `group`",
    "totals": "SELECT count(*) AS groups, sum(CASE WHEN ok THEN 1 ELSE 0 END) AS groups_ok, "
              "sum(CASE WHEN ok AND quiet THEN 1 ELSE 0 END) AS groups_nothing_checked, "
              "sum(events) AS events FROM (SELECT DISTINCT trace, `group`, ok, events, size(members) = 0 AS quiet "
              "FROM verdicts)",
}


def parquet_lines(spark: Any, parquet: list[str]) -> Any:
    """Parquet input (one row per event) as (trace, group key, line_no, line)."""
    from pyspark.sql import functions as F

    df = spark.read.parquet(*parquet)
    g = F.get_json_object(F.col("line"), "$.group")
    key = F.when(g.isNull(), F.lit("null")).otherwise(
        F.expr("substring(to_json(array(get_json_object(line, '$.group'))), 2, "
               "length(to_json(array(get_json_object(line, '$.group')))) - 2)"))
    return df.select(F.col("trace").cast("string"), key.alias("group"), F.col("line_no").cast("long"),
                     F.col("line").cast("string"))


def verdicts_frame(spark: Any, files: list[str], parquet: list[str], converge_within_s: float) -> Any:
    """One verdict row per (trace, group): files checked in the task that reads them (``mapInArrow``),
    Parquet events grouped by (trace, group) and checked in ``applyInPandas``."""
    cw = converge_within_s
    frames = []
    if files:
        # tasks of decreasing bytes, the heaviest first (plan_files); each task reads and checks
        # its files and hands its rows to the JVM as Arrow batches (no per-row Python-to-JVM pickling).
        # The tasks are numbered by the JVM alone (spark.range, one number per partition); the bins
        # travel with the function, so no Python job is needed to make the input
        bins = plan_files(files, spark.sparkContext.defaultParallelism)
        frames.append(spark.range(0, len(bins), 1, len(bins)).mapInArrow(_files_to_arrow(bins, cw), VERDICT_SCHEMA))
    if parquet:
        frames.append(parquet_lines(spark, parquet).groupBy("trace", "group")
                      .applyInPandas(lambda pdf: _check_group(pdf, cw), VERDICT_SCHEMA))
    out = frames[0]
    for f in frames[1:]:
        out = out.unionByName(f)
    return out


def run_audit(spark: Any, files: list[str], parquet: list[str], stage: Path, *, converge_within_s: float = 20.0,
              progress: bool = True) -> dict[str, Any]:
    """Check every group, write the datasets and the report under ``stage``; return the fleet figures."""
    from .spark import JobProgress

    verdicts = verdicts_frame(spark, files, parquet, converge_within_s)
    with JobProgress(spark, "audit: checking groups", enabled=progress):
        verdicts = verdicts.cache()
        verdicts.count()
        fleet, vpd, wpd, ppd = fleet_figures(spark, verdicts, write_to=stage)
        verdicts.unpersist()
    fleet["ok"] = bool(vpd.ok.all()) if len(vpd) else True
    (stage / "fleet.json").write_text(json.dumps(fleet, indent=1, default=str) + "\n")
    _report(fleet, vpd, stage / "report.md")
    return fleet


def fleet_figures(spark: Any, verdicts: Any, write_to: Path | None = None) -> tuple[dict[str, Any], Any, Any, Any]:
    """The aggregation part of the audit, over the verdict rows (a DataFrame, cached by the caller): the fleet
    figures (:data:`FLEET_SQL`), and the verdicts, windows and periods as pandas frames sorted for writing;
    ``write_to``: also written there (``verdicts/``, ``windows/``, ``periods/``), by the thread that made them while
    the SQL jobs still run in the JVM."""
    from pyspark.sql import functions as F

    verdicts.createOrReplaceTempView("verdicts")
    # the workers hand each group's windows as Arrow columns: exploded, not parsed
    windows = verdicts.select("trace", "group", F.explode("window_list").alias("w")).select("trace", "group", "w.*")
    windows.createOrReplaceTempView("windows")

    def rows(sql: str) -> Callable[[], list[dict[str, Any]]]:
        return lambda: [r.asDict(recursive=True) for r in spark.sql(sql).collect()]

    jobs: dict[str, Callable[[], Any]] = {name: rows(sql) for name, sql in FLEET_SQL.items()}
    # The rows written out (verdicts/, windows/, periods/) come to the driver anyway: one Spark job collects the
    # verdict rows as Arrow, their lists still nested, and the driver unnests them with Arrow's own kernels (no
    # Spark job and no JVM-side explode per dataset); sorted there too, as a Spark orderBy costs a sampling job
    # and a shuffle for rows that come to the driver anyway
    def exports() -> tuple[Any, Any, Any]:
        frames = _exports(verdicts)
        if write_to is not None:
            for frame, name in zip(frames, ("verdicts", "windows", "periods")):
                _write(frame, write_to / name)
        return frames

    jobs["exports"] = exports
    done = _concurrently(spark, jobs)
    fleet = {name: done[name] for name in FLEET_SQL}
    vpd, wpd, ppd = done["exports"]
    return fleet, vpd, wpd, ppd


def _exports(verdicts: Any) -> tuple[Any, Any, Any]:
    """The verdict rows (without their lists), the windows and the periods as pandas frames, sorted for writing:
    the same rows and types as ``toPandas`` of ``verdicts`` without :data:`LIST_COLUMNS` and of each list exploded
    (``explode(window_list)``, ``w.*``), from one Arrow collect; the same Parquet bytes once written (checked on a
    million events). pyspark < 4 (pyproject.toml) names that collect ``_collect_as_arrow`` (``toArrow`` from 4.0).
    An empty dataset keeps its columns' types (``toPandas`` of no rows gave untyped columns)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    batches = verdicts._collect_as_arrow()
    table = pa.Table.from_batches(batches) if batches else verdict_arrow_schema().empty_table()
    keys = table.select(["trace", "group"])

    def unnested(column: str, order: list[str]) -> Any:
        lists = table.column(column).combine_chunks()
        rows = pc.list_parent_indices(lists)
        items = pc.list_flatten(lists)
        flat = keys.take(rows)
        for name in items.type.names:
            flat = flat.append_column(name, pc.struct_field(items, name))  # a null struct's fields null, as w.*
        return _sorted(_to_pandas(flat), order)

    vpd = _sorted(_to_pandas(table.drop_columns(list(LIST_COLUMNS))), ["trace", "group"])
    return (vpd, unnested("window_list", ["trace", "group", "topic", "partition", "from_ms"]),
            unnested("period_list", ["trace", "group", "from_ms"]))


def _concurrently(spark: Any, jobs: dict[str, Callable[[], Any]], threads: int = 4) -> dict[str, Any]:
    """Independent Spark jobs run from a few driver threads at once: each job of the aggregation costs 0.1-0.5 s
    whatever its rows (planning, scheduling, the Python-JVM round trips), and those costs overlap (measured on 3
    million events: 2.5 s one after the other, 1.7 s four at a time). On an error or Ctrl-C in the waiting thread
    the jobs still running are cancelled before it is raised."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="audit-job") as ex:
        futures = {name: ex.submit(job) for name, job in jobs.items()}
        try:
            return {name: f.result() for name, f in futures.items()}
        except BaseException:
            for f in futures.values():
                f.cancel()
            try:
                spark.sparkContext.cancelAllJobs()
            except Exception:  # noqa: BLE001 - the session may be gone already; the first error is the one raised
                pass
            raise


def _to_pandas(table: Any) -> Any:
    return table.to_pandas(date_as_object=True)


def _sorted(pdf: Any, by: list[str]) -> Any:
    return pdf.sort_values(by, kind="stable").reset_index(drop=True) if len(pdf) else pdf


def _write(pdf: Any, dest: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    dest.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pandas(pdf, preserve_index=False), dest / "part-0.parquet")


def _report(fleet: dict[str, Any], vpd: Any, path: Path) -> None:
    t = fleet["totals"][0] if fleet["totals"] else {}
    lines = ["# Audit", "", f"{t.get('groups', 0)} groups, {t.get('groups_ok', 0)} with every invariant held; "
             f"{t.get('events', 0)} events.", "", "## Verdicts per property", "", "| property | verdict | groups |",
             "|---|---|---|"]
    lines += [f"| {r['property']} | {r['verdict']} | {r['groups']} |" for r in fleet["verdicts"]]
    c = fleet["convergence"][0] if fleet["convergence"] else {}
    lines += ["", "## Convergence time (seconds, every period that converged)", "",
              f"{c.get('periods', 0)} periods: min {c.get('min_s')}, median {c.get('p50_s')}, p90 {c.get('p90_s')}, "
              f"p99 {c.get('p99_s')}, max {c.get('max_s')}.", "", "## Overlaps", ""]
    o = fleet["overlaps"][0] if fleet["overlaps"] else {}
    lines += [f"{o.get('groups_with_overlaps', 0)} groups with a partition owned twice; {o.get('overlaps', 0)} "
              f"overlaps, {o.get('zombie_overlaps', 0)} involving a zombie.", "", "## Groups that never converged", ""]
    lines += [f"- `{r['trace']}` group `{r['group']}`: {r['periods_never_converged']} period(s)"
              for r in fleet["never_converged"]] or ["None."]
    lines += ["", "## Groups with no member events (held vacuously: nothing checked)", ""]
    lines += [f"- `{r['trace']}` group `{r['group']}`: {r['events']} event(s), none naming a member"
              for r in fleet["nothing_checked"]] or ["None."]
    lines += ["", "## Worst unowned windows", "", "| trace | group | partition | from ms | to ms | seconds |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {r['trace']} | {r['group']} | {r['topic']}-{r['partition']} | {r['from_ms']} | {r['to_ms']} | "
              f"{r['seconds']} |" for r in fleet["worst_unowned_windows"]]
    path.write_text("\n".join(lines) + "\n")
