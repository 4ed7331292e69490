"""`groupspec check`: explore a protocol variant's bounded state space and report every property."""
from __future__ import annotations

import click
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from ._common import EXIT_OK, EXIT_VIOLATION, UserError, emit_json, make_console


def register(group: click.Group) -> None:
    group.add_command(check)


def parse_faults(text: str) -> frozenset[str]:
    from groupspec.model.core import FAULTS

    if not text:
        return frozenset()
    items = [f.strip() for f in text.split(",") if f.strip()]
    for f in items:
        if f not in FAULTS:
            raise UserError(f"--faults: unknown fault {f!r}; choose from {', '.join(FAULTS)}")
    return frozenset(items)


def result_json(proto, res) -> dict:
    from groupspec.checker import timeline

    return {
        "protocol": res.protocol,
        "assignor": res.assignor,
        "bounds": {
            "members": res.config.members, "partitions": res.config.partitions, "topics": res.config.topics,
            "faults": sorted(res.config.faults), "budget": res.config.budget,
        },
        "states": res.states,
        "edges": res.edges,
        "engine": res.engine,
        "seconds": round(res.seconds, 3),
        "states_per_second": round(res.states_per_second),
        "complete": res.complete,
        "symmetry": res.symmetric,
        "symmetry_factor": None if res.symmetry_factor is None else round(res.symmetry_factor, 2),
        "convergence_bound": res.convergence_bound,
        "ok": res.ok,
        "properties": [
            {
                "name": v.name, "kind": v.kind,
                "verdict": "held" if v.held else ("violated" if v.held is False else "not applicable"),
                "explanation": v.explanation,
                "counterexample": timeline.to_json(proto, v.trace) if (v.held is False and v.trace) else None,
            }
            for v in res.verdicts.values()
        ],
    }


def verdict_cell(v) -> str:
    if v.held is None:
        return "[dim]n/a[/dim]"
    return "[green]held[/green]" if v.held else "[bold red]VIOLATED[/bold red]"


def print_result(console: Console, proto, res) -> None:
    from groupspec.checker import timeline

    cfg = res.config
    faults = ",".join(sorted(cfg.faults)) or "none"
    t = Table(title=f"groupspec check: {res.protocol} / {res.assignor} — {cfg.members} members × {cfg.partitions} partitions"
              f" × {cfg.topics} topic(s), faults {faults}, budget {cfg.budget}")
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_row("states (stored)", f"{res.states:,}" + ("" if res.complete else " (stopped at --max-states)"))
    t.add_row("edges", f"{res.edges:,}")
    t.add_row("time", f"{res.seconds:.2f} s ({res.states_per_second:,.0f} states/s, {res.engine} engine)")
    if res.symmetric and res.symmetry_factor is not None:
        approx = "" if res.symmetry_exact else "≈"
        t.add_row("symmetry reduction", f"{approx}{res.symmetry_factor:.2f}× (members and partitions)")
    else:
        t.add_row("symmetry reduction", f"none ({res.assignor} depends on member/partition order)")
    bound = res.convergence_bound
    t.add_row("convergence bound", "—" if bound is None else f"{bound} protocol steps")
    console.print(t)
    p = Table(title="properties")
    p.add_column("property")
    p.add_column("kind")
    p.add_column("verdict")
    p.add_column("detail")
    for v in res.verdicts.values():
        p.add_row(v.name, v.kind, verdict_cell(v), v.explanation)
    console.print(p)
    for v in res.verdicts.values():
        if v.held is False and v.trace:
            console.print(f"\n[bold red]{v.name} violated[/bold red]: {v.explanation}")
            console.print(f"counterexample ({len(v.trace) - 1} steps):", highlight=False)
            for line in timeline.render(proto, v.trace, v.loop_start):
                console.print(line, highlight=False, markup=False)


def explore_with_progress(console: Console, **kwargs):
    from groupspec.checker import check as run_check

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=True) as bar:
        task = bar.add_task("exploring", total=None)

        def progress(states: int, queue: int) -> None:
            bar.update(task, description=f"exploring: {states:,} states, {queue:,} queued")

        try:
            return run_check(progress=progress, **kwargs)
        except ValueError as e:
            raise UserError(str(e)) from None


@click.command()
@click.option("--protocol", "protocol", required=True, help="protocol variant (see `groupspec verify` for the list)")
@click.option("--assignor", default="sticky", show_default=True, help="sticky, roundrobin or range")
@click.option("--members", default=3, show_default=True, type=int, help="consumer processes (1-6)")
@click.option("--partitions", default=4, show_default=True, type=int, help="partitions in all (1-12)")
@click.option("--topics", default=1, show_default=True, type=int, help="topics the partitions are split into")
@click.option("--faults", default="", help="comma list: join,leave,crash,timeout,zombie,subscription,partitions")
@click.option("--budget", default=2, show_default=True, type=int, help="perturbations per run (0-8)")
@click.option("--max-states", default=None, type=int, help="stop after this many states (convergence then not decided)")
@click.option("--engine", default="auto", show_default=True, type=click.Choice(["auto", "compiled", "python"]),
              help="compiled: the numba encoding of the classic protocol; python: the model's own code; "
                   "auto: compiled wherever it applies")
@click.option("--json", "as_json", is_flag=True, help="one JSON document on stdout")
def check(protocol, assignor, members, partitions, topics, faults, budget, max_states, engine, as_json) -> None:
    """Explore the bounded state space of one protocol variant and check every property.

    Exit status: 0 when every property holds, 1 when one is violated (with a counterexample
    timeline), 2 on bad arguments.
    """
    console = make_console(as_json)
    proto, res = explore_with_progress(
        console, protocol=protocol, assignor=assignor, members=members, partitions=partitions, topics=topics,
        faults=parse_faults(faults), budget=budget, max_states=max_states, engine=engine,
    )
    if as_json:
        emit_json(result_json(proto, res))
    else:
        print_result(console, proto, res)
    raise click.exceptions.Exit(EXIT_OK if res.ok else EXIT_VIOLATION)
