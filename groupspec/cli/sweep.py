"""`groupspec sweep GRID.yaml | --preset NAME`: scenario sweeps on Spark (groupspec.pipeline)."""
from __future__ import annotations

import time

import click

from ._common import OutputPath, UserError, emit_json


def register(group: click.Group) -> None:
    group.add_command(sweep)


@click.command()
@click.argument("grid_file", required=False, metavar="GRID.yaml")
@click.option("--preset", default=None, help="A built-in grid: smoke (< 1 min), history (the history's claims), protocols (classic cooperative vs the consumer protocol), large (a cluster).")
@click.option("--master", default="local[*]", show_default=True, help="Spark master: local[N], local[*], spark://HOST:PORT, yarn, k8s://...")
@click.option("--out", type=OutputPath(kind="dir"), default=None, help="Output directory (default: sweep-NAME); refused if it exists, unless --overwrite.")
@click.option("--overwrite", is_flag=True, help="Replace an existing --out (only once the new one is complete).")
@click.option("--traces", is_flag=True, help="Also write every run's trace (traces/, Parquet; groupspec audit reads it).")
@click.option("--json", "as_json", is_flag=True, help="Print the claims' figures as JSON.")
def sweep(grid_file: str | None, preset: str | None, master: str, out: str | None, overwrite: bool, traces: bool,
          as_json: bool) -> None:
    """Run a grid of simulator scenarios on Spark and report the history's claims with numbers.

    Writes OUT/rows/ (Parquet, partitioned by protocol and assignor), OUT/report.md with
    OUT/plots/*.png, and with --traces OUT/traces/. Every run is deterministic (its seed is a column).

    \b
    Examples:
      groupspec sweep --preset smoke --out out/smoke                 (under a minute, local Spark)
      groupspec sweep --preset history --master 'local[2]' --out out/hist
      groupspec sweep my-grid.yaml --traces --out out/grid --json
    """
    from groupspec.pipeline import GridError, load_grid
    from groupspec.pipeline import preset as get_preset
    from groupspec.pipeline import OutputError, Staging, prepare_out

    if (grid_file is None) == (preset is None):
        from groupspec.pipeline import PRESETS

        both = ", not both" if grid_file is not None else ""
        raise UserError(f"give either GRID.yaml or --preset NAME ({', '.join(PRESETS)}){both}")
    try:
        grid = get_preset(preset) if preset is not None else load_grid(grid_file or "")
    except GridError as e:
        raise UserError(str(e)) from None
    try:
        dest = prepare_out(out or f"sweep-{grid.name}", overwrite)
    except OutputError as e:
        raise UserError(str(e)) from None
    from groupspec.pipeline import SparkSetupError, check_master, spark_session
    from groupspec.pipeline import run_sweep

    try:
        check_master(master)
    except SparkSetupError as e:
        raise UserError(str(e)) from None
    click.echo(f"sweep {grid.name}: {len(grid)} runs ({grid.dropped} combinations dropped), seeds "
               f"{sorted({p.seed for p in grid.points})}", err=True)
    t0 = time.monotonic()
    stager = Staging(dest, overwrite)
    try:
        with stager as stage, spark_session(master, f"groupspec sweep {grid.name}") as spark:
            rows = run_sweep(spark, grid, stage, traces=traces)
            stager.commit()
    except (SparkSetupError, OutputError) as e:
        raise UserError(str(e)) from None
    dt = time.monotonic() - t0
    import json as _json

    report = _json.loads((dest / "report.json").read_text())
    if as_json:
        emit_json({"out": str(dest), "runs": len(rows), "seconds": round(dt, 1), "claims": report})
        return
    from ._common import make_console

    con = make_console()
    con.print(f"[bold]sweep {grid.name}[/]: {len(rows)} runs in {dt:.1f} s -> {dest}/ (rows/, report.md, plots/)")
    for c in report:
        con.print(f"[bold]{c['title']}[/]: {c['text']}")

