"""`groupspec audit TRACES...`: fleet-wide trace audits on Spark (groupspec.pipeline.audit)."""
from __future__ import annotations

import sys
import time

import click

from ._common import OutputPath, EXIT_VIOLATION, ConvergeWithin, UserError, emit_json


def register(group: click.Group) -> None:
    group.add_command(audit)


@click.command()
@click.argument("traces", nargs=-1, required=True, metavar="TRACES...")
@click.option("--master", default="local[*]", show_default=True, help="Spark master: local[N], local[*], spark://HOST:PORT, yarn, k8s://...")
@click.option("--out", type=OutputPath(kind="dir"), default="audit", show_default=True, help="Output directory; refused if it exists, unless --overwrite.")
@click.option("--overwrite", is_flag=True, help="Replace an existing --out (only once the new one is complete).")
@click.option("--converge-within", type=ConvergeWithin(), default=20.0, show_default=True,
              help="Seconds a partition may stay unowned / a period may take to converge (as groupspec trace check).")
@click.option("--json", "as_json", is_flag=True, help="Print the fleet aggregates as JSON.")
def audit(traces: tuple[str, ...], master: str, out: str, overwrite: bool, converge_within: float, as_json: bool) -> None:
    """Check the traces of many groups on Spark: per-group verdicts (the trace checker's) and fleet aggregates.

    TRACES are .jsonl / .jsonl.gz files, directories of them, or Parquet (a sweep's traces/). Writes
    OUT/verdicts/, OUT/windows/, OUT/periods/ (Parquet), OUT/fleet.json and OUT/report.md.
    Exit status 1 when an invariant was violated in some group.

    \b
    Examples:
      groupspec audit out/sm/traces --out out/audit                   (a sweep's own traces)
      groupspec audit logs/2026-11-*.jsonl.gz --converge-within 60 --json
    """
    from groupspec.pipeline import AuditError, expand_inputs, run_audit
    from groupspec.pipeline import OutputError, Staging, prepare_out
    from groupspec.pipeline import SparkSetupError, check_master, spark_session

    try:
        check_master(master)
        files, parquet = expand_inputs(list(traces))
        dest = prepare_out(out, overwrite)
    except (AuditError, OutputError, SparkSetupError) as e:
        raise UserError(str(e)) from None
    try:
        import groupspec.trace  # noqa: F401 - the one trace checker
    except ImportError:
        raise UserError("the trace checker (groupspec.trace) is not installed in this version") from None
    t0 = time.monotonic()
    stager = Staging(dest, overwrite)
    try:
        with stager as stage, spark_session(master, "groupspec audit") as spark:
            fleet = run_audit(spark, files, parquet, stage, converge_within_s=converge_within)
            stager.commit()
    except (SparkSetupError, OutputError) as e:
        raise UserError(str(e)) from None
    dt = time.monotonic() - t0
    if as_json:
        emit_json({"out": str(dest), "seconds": round(dt, 1), **fleet})
    else:
        from ._common import make_console

        t = fleet["totals"][0]
        con = make_console()
        con.print(f"[bold]audit[/]: {t['groups']} groups ({t['groups_ok']} ok), {t['events']} events in {dt:.1f} s "
                  f"-> {dest}/ (verdicts/, windows/, periods/, fleet.json, report.md)")
        for r in fleet["verdicts"]:
            con.print(f"  {r['property']:22} {r['verdict']:9} {r['groups']}")
        if fleet["nothing_checked"]:
            n = len(fleet["nothing_checked"])
            con.print(f"  [yellow]{n} group(s) ok vacuously: no event names a member, nothing checked[/yellow] "
                      "(report.md lists them)")
    if not fleet["ok"]:
        sys.exit(EXIT_VIOLATION)
