"""`groupspec trace check TRACE...`: check rebalance traces against the protocol's invariants."""
from __future__ import annotations

from typing import Any

import click

from ._common import EXIT_OK, EXIT_VIOLATION, UserError, emit_json, make_console


def register(group: click.Group) -> None:
    group.add_command(trace)


@click.group()
def trace() -> None:
    """Rebalance traces (JSON Lines of listener events): check them."""


def _detail(pid: str, v: dict[str, Any]) -> str:
    if pid in ("exclusive_ownership",):
        return (f"{v['topic']}-{v['partition']} owned by both {v['members'][0]} and {v['members'][1]} "
                f"from {v['from_ms']} to {v['to_ms']} ms ({v['seconds']} s), generations "
                f"{v['generations'][0]} and {v['generations'][1]}, neither of them fenced")
    if pid == "commit_fencing" and v.get("reason") == "removed":
        return (f"{v['member']}'s commit (generation {v['generation']}) was accepted at {v['ts_ms']} ms "
                f"(line {v['line']}) although the coordinator had removed it")
    if pid == "commit_fencing":
        return (f"{v['member']}'s commit for {v['topic']}-{v['partition']} (generation {v['generation']}) was "
                f"accepted at {v['ts_ms']} ms while {v['other']} owned it since {v['other_since_ms']} ms "
                f"(generation {v['other_generation']})")
    if pid == "generation_monotonic":
        return (f"{v['member']}'s generation went down from {v['from_generation']} to {v['to_generation']} "
                f"at {v['ts_ms']} ms (line {v['line']}) without a reset")
    if pid == "completeness":
        return (f"{v['topic']}-{v['partition']} had no owner from {v['from_ms']} to {v['to_ms']} ms "
                f"({v['seconds']} s) while {', '.join(v['members_alive']) or 'members'} were alive")
    if pid == "convergence":
        conv = ("never converged" if v["converged_at_ms"] is None
                else f"converged only after {v['seconds_to_converge']} s")
        return (f"the period from {v['from_ms']} to {v['to_ms']} ms ({v['seconds']} s, members "
                f"{', '.join(v['members'])}) {conv}")
    if pid == "well_formed":
        where = f"line {v['line']}" if v.get("line") is not None else "trace"
        return f"{where}: {v['message']}"
    return str(v)


def _print(console: Any, doc: dict[str, Any], limit: int) -> None:
    from rich.table import Table

    for t in doc["traces"]:
        status = "[green]ok[/green]" if t["ok"] else "[bold red]VIOLATED[/bold red]"
        console.print(f"[bold]{t['trace']}[/bold]: {t['events']} events, {len(t['groups'])} group(s): {status}"
                      + (" (read sorted by time: the file was not in time order)" if t.get("sorted") else ""))
        for d in t.get("defects", []):
            console.print(f"  [red]trace defect[/red] {_detail('well_formed', d)}", markup=True, highlight=False)
        for g in t["groups"]:
            tab = Table(title=f"group {g['group'] if g['group'] is not None else '(unnamed)'}: "
                              f"members {', '.join(g['members'])}")
            tab.add_column("property")
            tab.add_column("verdict")
            tab.add_column("violations", justify="right")
            for p in g["properties"]:
                verdict = "[green]held[/green]" if p["verdict"] == "held" else "[bold red]VIOLATED[/bold red]"
                tab.add_row(p["id"], verdict, str(len(p["violations"])))
            tab.add_row("(zombie overlaps, allowed)", "", str(len(g["zombie_overlaps"])))
            tab.add_row("(starved members, notice)", "", str(len(g.get("starved_members", []))))
            console.print(tab)
            conv = [p for p in g["periods"] if p["converged_at_ms"] is not None]
            longest = max((w["seconds"] for w in g["unowned_windows"]), default=0.0)
            console.print(f"  periods {len(g['periods'])} ({len(conv)} converged), unowned windows "
                          f"{len(g['unowned_windows'])} (longest {longest} s)", highlight=False)
            for s in g.get("starved_members", [])[:limit]:
                until = "the end of the recording" if s.get("open") else f"{s['to_ms']} ms"
                console.print(f"\n[yellow]notice[/yellow]: {s['member']} took no part in the group from "
                              f"{s['waiting_from_ms']} ms to {until}: others were assigned from {s['others_assigned_ms']} ms "
                              f"on, {s['seconds']} s before it was (its session timeout is {s['session_timeout_ms']} ms)",
                              highlight=False)
            am = g.get("against_model")
            if am is not None:
                if am["explained"]:
                    console.print(f"  against the model: all {am['events']} events explained by model steps "
                                  f"(stutters allowed)", highlight=False)
                else:
                    f = am["first_unexplained"]
                    console.print(f"\n[bold red]against the model[/bold red]: line {f['line']} ({f['ts_ms']} ms, "
                                  f"{f['member']} {f['event']}) is explained by no model step: {f['reason']} "
                                  f"({am['unexplained']} unexplained events in all)", highlight=False)
            for p in g["properties"]:
                for v in p["violations"][:limit]:
                    console.print(f"\n[bold red]{p['id']} violated[/bold red]: {_detail(p['id'], v)}", highlight=False)
                    for line in v.get("timeline", []):
                        console.print(line, highlight=False, markup=False)
                if len(p["violations"]) > limit:
                    console.print(f"  ... and {len(p['violations']) - limit} more {p['id']} violations (--json lists all)")
        console.print()


@trace.command("check")
@click.argument("traces", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout (docs/trace-check.md).")
@click.option("--converge-within", "converge_within", type=float, default=20.0, show_default=True,
              help="Seconds a partition may stay unowned, and a period may take to converge.")
@click.option("--against-model", "against_model", is_flag=True,
              help="Also map every event to the model's steps and report the first that no step explains.")
@click.option("--show", type=int, default=3, show_default=True, help="Violations printed per property (text output).")
def check(traces: tuple[str, ...], as_json: bool, converge_within: float, against_model: bool, show: int) -> None:
    """Check TRACE... (.jsonl / .jsonl.gz files, directories of them, or - for stdin).

    Exit status: 0 when every invariant held in every trace, 1 when one was violated (malformed lines
    are trace defects and count as violations), 2 when a file cannot be read at all.
    """
    from groupspec.trace import TraceReadError
    from groupspec.trace.runs import Report, iter_results
    from groupspec.trace.reader import expand_paths

    if converge_within <= 0:
        raise UserError(f"--converge-within must be positive (got {converge_within})")
    if show < 0:
        raise UserError(f"--show must be 0 or more (got {show})")
    try:
        files = expand_paths(list(traces))
    except TraceReadError as e:
        raise UserError(str(e)) from None
    console = make_console(to_stderr=as_json)
    from rich.progress import Progress

    results = []
    try:
        with Progress(console=make_console(to_stderr=True), transient=True,
                      disable=len(files) < 2) as bar:
            task = bar.add_task("checking traces", total=len(files))
            for r in iter_results(files, converge_within, against_model):
                results.append(r)
                bar.advance(task)
    except TraceReadError as e:
        raise UserError(str(e)) from None
    report = Report(results)
    doc = report.to_dict()
    if as_json:
        emit_json(doc)
    else:
        _print(console, doc, show)
    raise click.exceptions.Exit(EXIT_OK if report.ok else EXIT_VIOLATION)
