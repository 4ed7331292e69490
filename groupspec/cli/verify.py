"""`groupspec verify`: the main job — every correct variant holds, every broken variant is caught."""
from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from ._common import EXIT_OK, EXIT_VIOLATION, emit_json, make_console


def register(group: click.Group) -> None:
    group.add_command(verify)


def _mark(held: bool | None) -> str:
    return {True: "[green]✓[/green]", False: "[red]✗[/red]", None: "[dim]–[/dim]"}[held]


@click.command()
@click.option("--json", "as_json", is_flag=True, help="one JSON document on stdout")
def verify(as_json: bool) -> None:
    """Check every protocol variant of the model, and that every broken variant is caught.

    Exit status 0 when all is as expected, 1 otherwise.
    """
    from groupspec.verify import MODEL_JOBS, run_model_job, rows_json

    console = make_console(as_json)
    t0 = time.perf_counter()
    workers = max(1, min(os.cpu_count() or 1, len(MODEL_JOBS)))
    rows: list = [None] * len(MODEL_JOBS)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task(f"model checks ({workers} workers)", total=len(MODEL_JOBS))
        with ProcessPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(run_model_job, job): k for k, job in enumerate(MODEL_JOBS)}
            for fut in as_completed(futures):
                rows[futures[fut]] = fut.result()
                bar.advance(task)
    model_seconds = time.perf_counter() - t0
    proofs = run_proofs(console)
    mutants = run_mutants(console)
    elapsed = time.perf_counter() - t0
    ok = all(r.passed for r in rows) and proofs.ok and all(m["caught"] for m in mutants)
    if as_json:
        emit_json({"ok": ok, "seconds": round(elapsed, 1), "model": rows_json(rows), "proofs": proofs.to_json(),
                   "mutants": mutants})
        raise click.exceptions.Exit(EXIT_OK if ok else EXIT_VIOLATION)
    props = ["exclusive_ownership", "commit_fencing", "generation_monotonic", "convergence"]
    t = Table(title="groupspec verify — the model: correct variants must hold, broken ones must be caught")
    t.add_column("variant")
    t.add_column("assignor")
    t.add_column("bounds")
    t.add_column("states", justify="right")
    t.add_column("time", justify="right")
    t.add_column("engine")
    for name in ("excl.", "fencing", "gen.", "conv."):
        t.add_column(name, justify="center")
    t.add_column("bound", justify="right")
    t.add_column("result")
    for r in rows:
        variant = r.job.protocol + (" [dim](historical)[/dim]" if r.job.note else "")
        if r.job.expect:
            verdict = f"[green]caught[/green] ({r.job.expect}, {r.trace_steps} steps)" if r.passed else f"[bold red]NOT CAUGHT[/bold red] ({r.job.expect})"
        else:
            verdict = "[green]holds[/green]" if r.passed else f"[bold red]FAILS[/bold red] ({r.detail})"
        t.add_row(
            variant, r.job.assignor, r.job.bounds, f"{r.states:,}", f"{r.seconds:.1f}s", r.engine,
            *[_mark(r.verdicts.get(p)) for p in props],
            "—" if r.bound is None else str(r.bound), verdict,
        )
    console.print(t)
    console.print(f"model: {len(rows)} checks in {model_seconds:.0f} s on {workers} worker processes (times are per check)")
    print_proofs(console, proofs)
    print_mutants(console, mutants)
    console.print(f"{'all as expected' if ok else 'NOT as expected'} — {elapsed:.0f} s in all")
    raise click.exceptions.Exit(EXIT_OK if ok else EXIT_VIOLATION)


def run_proofs(console):
    """The Z3 proofs (groupspec prove), with a progress bar."""
    from groupspec.proofs import run_all

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task("proofs", total=None)
        return run_all(progress=lambda what: bar.update(task, description=f"proofs: done {what}"))


def print_proofs(console, rep) -> None:
    """One row per variant and family of proofs: obligations, verdict, time."""
    groups: dict[tuple[str, str], list] = {}
    for c in rep.checks:
        groups.setdefault((c.protocol, c.family), []).append(c)
    t = Table(title="groupspec verify — the proofs (Z3): correct variants proved, broken ones refuted")
    for col in ("variant", "family", "obligations", "result", "time"):
        t.add_column(col, justify="right" if col in ("obligations", "time") else "left")
    for (protocol, family), checks in groups.items():
        n = sum(c.count for c in checks)
        secs = sum(c.seconds for c in checks)
        broken = any(c.expect == "fail" for c in checks)
        good = all(c.ok for c in checks)
        if broken:
            result = "[green]caught[/green]" if good else "[bold red]NOT CAUGHT[/bold red]"
        else:
            result = "[green]proved[/green]" if good else "[bold red]FAILED[/bold red]"
        t.add_row(protocol, family, str(n), result, f"{secs:.1f}s")
    console.print(t)
    n = sum(c.count for c in rep.checks)
    console.print(f"proofs: {len(rep.checks)} checks, {n} obligations in {rep.seconds:.0f} s "
                  f"({'all ok' if rep.ok else 'NOT ok'}; details and counterexamples: groupspec prove)")


def run_mutants(console) -> list[dict]:
    """The conformance suite against every fault switch of the reference (the mutation check).

    Runs in this process: the conformance suite's draws depend on its seed alone, not on which modules
    the process imported (``tests/test_conformance.py::test_generation_ignores_imports``).
    """
    from groupspec.conformance import MUTANTS, run_mutant

    rows: list[dict] = []
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task("mutation check", total=len(MUTANTS))
        for m in MUTANTS:
            bar.update(task, description=f"mutation check: {m.switch}")
            rows.append(run_mutant(m))
            bar.advance(task)
        # The next-generation protocol (KIP-848): its own conformance machine and fault switches.
        from groupspec.conformance_consumer import MUTANTS as CONSUMER_MUTANTS, run_mutant as run_consumer_mutant

        bar.update(task, total=len(MUTANTS) + len(CONSUMER_MUTANTS))
        for name in CONSUMER_MUTANTS:
            bar.update(task, description=f"mutation check: {name} (consumer protocol)")
            rows.append(run_consumer_mutant(name))
            bar.advance(task)
    return rows


def print_mutants(console, rows: list[dict]) -> None:
    t = Table(title="groupspec verify — the mutation check: the conformance suite must catch every broken reference")
    for col in ("mutant", "in", "variant", "caught by", "examples", "sim seed", "time"):
        t.add_column(col, justify="right" if col in ("examples", "time", "sim seed") else "left")
    for r in rows:
        caught = f"[green]{r['check']}[/green]" if r["caught"] else "[bold red]NOT CAUGHT[/bold red]"
        t.add_row(r["mutant"], r["switch owner"], str(r.get("variant", "")), caught, str(r.get("examples", "")),
                  str(r.get("seed", "")), f"{r.get('seconds', 0):.1f}s")
    console.print(t)
    n = sum(1 for r in rows if r["caught"])
    console.print(f"mutation check: {n}/{len(rows)} mutants caught")
