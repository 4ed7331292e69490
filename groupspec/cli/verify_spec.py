"""`groupspec verify --spec-mutants`: the mutation campaign over the specification (presentation only)."""
from __future__ import annotations

import os
import time

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from rich.console import Console

from ._common import EXIT_OK, EXIT_VIOLATION, emit_json, fail, make_console, plural

FAMILY_NAMES = ("classic", "connect", "kip848", "migration", "zookeeper")


def run_spec_mutants(as_json: bool, family: str | None, sample: bool, names: tuple[str, ...], limit: int | None,
                     workers: int | None, scale: float, recheck_equivalent: bool = False) -> None:
    from groupspec.specmut import campaign, select

    if limit is not None and limit < 1:
        fail(f"--limit must be at least 1, got {limit}")
    if workers is not None and workers < 1:
        fail(f"--workers must be at least 1, got {workers}")
    if not 0 < scale <= 10:
        fail(f"--scale must be in (0, 10], got {scale}")
    if names:
        from groupspec.specmut import generate

        known = {m.name for m in generate()}
        unknown = [n for n in names if n not in known]
        if unknown:
            fail(f"no spec mutant named {unknown[0]!r} (list them: groupspec verify --spec-mutants --list)")
    mutants = select(family=family, sample=sample, names=names or None, limit=limit)
    if not mutants:
        fail("no spec mutant matches the selection")
    console = make_console(as_json)
    n_workers = workers or max(1, min(os.cpu_count() or 1, 2))
    console.print(f"spec mutants: {plural(len(mutants), 'mutant')} over model/, {n_workers} worker processes; "
                  "first the baseline (every check on the unchanged model)", highlight=False)
    t0 = time.perf_counter()

    def progress(row: dict[str, Any], done: int, total: int) -> None:
        listed = row["status"] == "equivalent" and row.get("rechecked") is False
        what = {"killed": f"killed by {row['killer']}", "survived": "SURVIVED",
                "equivalent": "equivalent (listed; checks not run again)" if listed else "equivalent",
                "timeout": "undecided (time limit)", "error": "error"}.get(row["status"], row["status"])
        console.print(f"[{done}/{total}] {time.perf_counter() - t0:6.0f}s  {row['name']}: {what} "
                      f"({row['seconds']:.1f}s)", highlight=False, markup=False)

    # a mutant the user names is always run, listed as equivalent or not
    result = campaign(mutants, workers=n_workers, scale=scale, progress=progress,
                      recheck_equivalent=recheck_equivalent or bool(names))
    rows = result["rows"]
    wrong = [r["name"] for r in rows if r.get("listed_equivalent")]
    ok = all(r["status"] in ("killed", "equivalent") for r in rows) and not wrong
    if as_json:
        emit_json({"ok": ok, "seconds": result["seconds"], "workers": result["workers"],
                   "baseline_seconds": result["baseline_seconds"], "split": split(rows),
                   "families": result["families"], "mutants": rows,
                   "baseline": {k: {"seconds": v.get("seconds"), "passes": "error" not in v and v.get("failure") is None}
                                for k, v in result["baseline"].items()}})
        raise click.exceptions.Exit(EXIT_OK if ok else EXIT_VIOLATION)
    print_report(console, result)
    for name in wrong:
        console.print(f"listed as equivalent, but killed: {name} (remove it from groupspec/specmut/equivalent.py and "
                      "docs/specification.md)", highlight=False, markup=False)
    raise click.exceptions.Exit(EXIT_OK if ok else EXIT_VIOLATION)


def print_report(console: Console, result: dict[str, Any]) -> None:
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    rows = result["rows"]
    t = Table(title="groupspec verify --spec-mutants — the mutation score per family", box=box.SIMPLE_HEAD,
              title_justify="left")
    for col in ("family", "mutants", "killed", "equivalent", "survived", "undecided", "score"):
        t.add_column(col, justify="left" if col == "family" else "right")
    for fam, f in result["families"].items():
        t.add_row(fam, str(f["mutants"]), str(f["killed"]), str(f["equivalent"]), str(f["survived"]),
                  str(f["undecided"]), f"{f['score']:.1f}%")
    console.print(t)
    survivors = [r for r in rows if r["status"] not in ("killed", "equivalent")]
    if survivors:
        s = Table(title="survivors (no check tells them from the model)", box=box.SIMPLE_HEAD, title_justify="left")
        for col in ("mutant", "status", "one-line diff"):
            s.add_column(col, overflow="fold")
        for r in survivors:
            s.add_row(escape(r["name"]), r["status"], escape(r["diff"]))
        console.print(s)
    killed = [r for r in rows if r["status"] == "killed"]
    if killed:
        k = Table(title="killed: the check that told each from the model", box=box.SIMPLE_HEAD, title_justify="left")
        for col in ("mutant", "killed by", "what it saw"):
            k.add_column(col, overflow="fold")
        for r in killed:
            k.add_row(escape(r["name"]), escape(r["killer"]), escape(r["detail"][:120]))
        console.print(k)
    by_killer: dict[str, int] = {}
    for r in killed:
        kind = r["killer"].split(" ")[0]
        by_killer[kind] = by_killer.get(kind, 0) + 1
    n = len(rows)
    listed = sum(1 for r in rows if r["status"] == "equivalent" and r.get("rechecked") is False)
    note = f" ({listed} listed, their checks not run again: --recheck-equivalent runs them)" if listed else ""
    console.print(f"spec mutants: {n} run, {len(killed)} killed, "
                  f"{sum(1 for r in rows if r['status'] == 'equivalent')} equivalent{note}, {len(survivors)} not killed; "
                  f"{result['seconds']:.0f} s on {result['workers']} worker processes", highlight=False)
    sp = split(rows)
    console.print(f"where the time went: baseline {result['baseline_seconds']:.0f} s (wall, traced); per mutant (mean, "
                  f"CPU in its worker) compile {sp['compile'] / max(1, n):.2f} s, load {sp['load'] / max(1, n):.2f} s, "
                  f"checks {sp['checks'] / max(1, n):.2f} s, of it {sp['cpu'] / max(1, n):.2f} s CPU in the worker; "
                  f"{sp['untried']} mutants reached by no check (not run)",
                  highlight=False)
    console.print("kills per check: " + ", ".join(f"{k} {v}" for k, v in sorted(by_killer.items(), key=lambda kv: -kv[1])),
                  highlight=False)


def split(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The campaign's time per phase, summed over the mutants (seconds in the workers)."""
    out = {"compile": 0.0, "load": 0.0, "checks": 0.0, "untried": 0, "cpu": 0.0}
    for r in rows:
        out["cpu"] += r.get("cpu_seconds", 0.0)
        for key in ("compile", "load", "checks"):
            out[key] += r.get("split", {}).get(key, 0.0)
        out["untried"] += not r.get("tried") and r.get("rechecked") is not False
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in out.items()}


def list_mutants(family: str | None, as_json: bool = False) -> None:
    """The mutants, one a line (name, family, one-line diff; tab-separated), or with ``--json`` a JSON list of
    ``{"name", "family", "diff"}``."""
    from groupspec.specmut import select

    chosen = select(family=family)
    if as_json:
        emit_json([{"name": m.name, "family": m.family, "diff": m.diff} for m in chosen])
        return
    for m in chosen:
        click.echo(f"{m.name}\t{m.family}\t{m.diff}")
