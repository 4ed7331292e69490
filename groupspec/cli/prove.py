"""`groupspec prove`: the Z3 proofs of the specification — one row per obligation group, verdict, time.

Thin: the work is :func:`groupspec.proofs.run_all`. Exit status 0 when every correct variant's
obligations are proved and every broken variant is caught with a counterexample, 1 otherwise,
2 on bad arguments.
"""
from __future__ import annotations

import click

from ._common import (EXIT_OK, EXIT_VIOLATION, UserError, bad_input_probes, emit_json, make_console, plural,
                      stop_on_interrupt)


def register(group: click.Group) -> None:
    group.add_command(prove)


@bad_input_probes(["--protocol", "nope"])
@click.command()
@click.option("--protocol", default=None, help="one variant (default: all); see the list in the error message")
@click.option("--deep", is_flag=True, help="also the slow bounded checks (correct variants to depth 8, cooperative 3x4 lasso)")
@click.option("--obligations", "show_all", is_flag=True, help="list every single obligation, not one row per group")
@click.option("--jobs", type=click.IntRange(1, 16), default=None, help="worker processes (default: up to 2)")
@click.option("--json", "as_json", is_flag=True, help="one JSON document on stdout")
def prove(protocol: str | None, deep: bool, show_all: bool, jobs: int | None, as_json: bool) -> None:
    """Prove exclusive ownership, commit fencing, generation monotonicity and convergence with Z3.

    Unbounded (any number of members and partitions) inductive-invariant proofs for eager, static,
    cooperative, connect-delayed and coordinator-assigns; bounded model checking of groupspec.model's own transition
    relation; convergence bounds for cooperative up to 3 members x 4 partitions. Every deliberately
    broken variant must be caught with a printed counterexample.

    \b
    Examples:
      groupspec prove
      groupspec prove --protocol static-cooperative
      groupspec prove --protocol consumer --json
    """
    from groupspec.proofs import PROTOCOLS

    if protocol is not None and protocol not in PROTOCOLS:
        raise UserError(f"--protocol: unknown variant {protocol!r}; choose from {', '.join(PROTOCOLS)}")
    with stop_on_interrupt():
        _prove(protocol, deep, show_all, jobs, as_json)


def _prove(protocol: str | None, deep: bool, show_all: bool, jobs: int | None, as_json: bool) -> None:
    from groupspec.proofs import run_all

    console = make_console()
    if as_json:
        rep = run_all(protocol, deep=deep, jobs=jobs)
        emit_json(rep.to_json())
        raise SystemExit(EXIT_OK if rep.ok else EXIT_VIOLATION)
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                  transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task("proving ...", total=None)
        rep = run_all(protocol, deep=deep, jobs=jobs,
                      progress=lambda what: bar.update(task, description=f"proving ... done: {what}"))
    _print(console, rep, show_all)
    raise SystemExit(EXIT_OK if rep.ok else EXIT_VIOLATION)


def _print(console, rep, show_all: bool) -> None:  # type: ignore[no-untyped-def]
    from rich.table import Table

    table = Table(title="groupspec prove", show_lines=False)
    for col in ("protocol", "family", "obligation", "verdict", "time"):
        table.add_column(col, overflow="fold")
    for c in rep.checks:
        style = "green" if c.ok else "bold red"
        rows = [(c.name, c.verdict, c.seconds)]
        if show_all and c.data.get("obligations"):
            rows = [(o["label"], o["verdict"], o["seconds"]) for o in c.data["obligations"]]
        for name, verdict, secs in rows:
            shown = _shown(verdict, c.expect)
            table.add_row(c.protocol, c.family, name, f"[{style}]{shown}[/]", f"{secs:.2f}s")
    console.print(table)
    for c in rep.checks:
        if c.detail and (not c.ok or c.expect in ("fail", "kafka")):
            head = "counterexample" if c.expect in ("fail", "kafka") else "FAILED"
            console.print(f"\n[bold]{head}: {c.protocol} — {c.name}[/]")
            console.print(c.detail, markup=False, highlight=False)
    n = sum(c.count for c in rep.checks)
    bad = [c for c in rep.checks if not c.ok]
    caught = sum(1 for c in rep.checks if c.ok and c.expect == "fail")
    kafka = sum(1 for c in rep.checks if c.ok and c.expect == "kafka")
    held = sum(1 for c in rep.checks if c.ok and c.expect == "hold")
    tally = f"{plural(len(rep.checks), 'check')}, {plural(n, 'obligation')}, in {rep.seconds:.1f} s"
    if bad:
        console.print(f"\n[bold red]{plural(len(bad), 'check')} not as expected[/] out of {tally}")
    else:
        parts = [f"{held} proved or checked for correct variants"] if held else []
        parts += [f"{caught} on broken variants caught as expected"] if caught else []
        parts += [f"{kafka} not proved because Kafka allows what they forbid"] if kafka else []
        console.print(f"\n[green]all as expected[/]: {tally} ({'; '.join(parts)})")


def _shown(verdict: str, expect: str) -> str:
    """A broken variant's refutation reads as what it is: the failure was the expected outcome."""
    if expect == "fail":
        return "caught as expected (broken variant)" if verdict == "caught" else f"{verdict} (broken variant)"
    if expect == "kafka":
        return f"{verdict} (as in Kafka)"
    return verdict
