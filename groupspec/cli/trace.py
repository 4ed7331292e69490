"""`groupspec trace check TRACE...`: check rebalance traces against the protocol's invariants."""
from __future__ import annotations

from typing import Any

import click

from ._common import EXIT_OK, EXIT_VIOLATION, CommandGroup, ConvergeWithin, UserError, bad_input_probes, emit_json, make_console


def register(group: click.Group) -> None:
    group.add_command(trace)


@click.group(cls=CommandGroup)
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


def _members(names: list[str], most: int = 4) -> str:
    if len(names) <= most:
        return ", ".join(names) or "-"
    return f"{len(names):,} ({', '.join(names[:most])}, ...)"


def _summary(doc: dict[str, Any]) -> Any:
    """One table for every trace and group: a row each (rich lays out one table, not one per group)."""
    from rich.table import Table

    n_groups = sum(len(t["groups"]) for t in doc["traces"])
    tab = Table(title=f"{len(doc['traces'])} trace(s), {n_groups} group(s)")
    for col, just in (("trace", "left"), ("group", "left"), ("members", "left"), ("events", "right"),
                      ("verdict", "left"), ("violated (count)", "left"), ("zombie overlaps", "right"),
                      ("starved (notice)", "right"), ("periods converged", "right"), ("longest unowned", "right")):
        tab.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]
    for t in doc["traces"]:
        first = True
        sorted_note = " (read sorted: not in time order)" if t.get("sorted") else ""
        if not t["groups"]:
            tab.add_row(t["trace"], "-", "-", f"{t['events']:,}",
                        ("[green]ok[/green]" if t["ok"] else "[bold red]VIOLATED[/bold red]") + sorted_note,
                        f"trace defects ({len(t.get('defects', []))})" if t.get("defects") else "", "", "", "", "")
        for g in t["groups"]:
            bad = [f"{p['id']} ({len(p['violations'])})" for p in g["properties"] if p["verdict"] != "held"]
            am = g.get("against_model")
            if am is not None and not am["explained"]:
                bad.append(f"against the model ({am['unexplained']})")
            ok = not bad and not (first and t.get("defects"))
            if first and t.get("defects"):
                bad.append(f"trace defects ({len(t['defects'])})")
            conv = sum(1 for p in g["periods"] if p["converged_at_ms"] is not None)
            longest = max((w["seconds"] for w in g["unowned_windows"]), default=0.0)
            tab.add_row(t["trace"] if first else "", "(unnamed)" if g["group"] is None else str(g["group"]),
                        _members(g["members"]), f"{t['events']:,}" if first else "",
                        ("[bold red]VIOLATED[/bold red]" if not ok else "[green]ok[/green]" if g["members"]
                         else "[yellow]ok, vacuously: no member events, nothing checked[/yellow]")
                        + (sorted_note if first else ""),
                        ", ".join(bad), str(len(g["zombie_overlaps"])), str(len(g.get("starved_members", []))),
                        f"{conv}/{g.get('periods_total', len(g['periods']))}", f"{longest} s")
            first = False
    return tab


def _print(console: Any, doc: dict[str, Any], limit: int) -> None:
    """The summary table, then what needs reading: defects, notices and violations with their timelines
    (the work is proportional to what is printed: one table in all, plain lines for the rest)."""
    console.print(_summary(doc))
    out: list[str] = []
    for t in doc["traces"]:
        for d in t.get("defects", []):
            out.append(f"{t['trace']}: [red]trace defect[/red] {_detail('well_formed', d)}")
        for g in t["groups"]:
            where = t["trace"] + ("" if len(t["groups"]) == 1 else f" group {g['group']}")
            for s in g.get("starved_members", [])[:limit]:
                until = "the end of the recording" if s.get("open") else f"{s['to_ms']} ms"
                out.append(f"\n[yellow]notice[/yellow] ({where}): {s['member']} took no part in the group from "
                           f"{s['waiting_from_ms']} ms to {until}: others were assigned from {s['others_assigned_ms']} ms "
                           f"on, {s['seconds']} s before it was (its session timeout is {s['session_timeout_ms']} ms)")
            am = g.get("against_model")
            if am is not None:
                if am["explained"]:
                    out.append(f"{where}: against the model: all {am['events']} events explained by model steps "
                               f"(stutters allowed)")
                else:
                    f = am["first_unexplained"]
                    out.append(f"\n[bold red]against the model[/bold red] ({where}): line {f['line']} ({f['ts_ms']} ms, "
                               f"{f['member']} {f['event']}) is explained by no model step: {f['reason']} "
                               f"({am['unexplained']} unexplained events in all)")
            for p in g["properties"]:
                for v in p["violations"][:limit]:
                    out.append(f"\n[bold red]{p['id']} violated[/bold red] ({where}): {_detail(p['id'], v)}")
                    out.extend(_escape(line) for line in v.get("timeline", []))
                if len(p["violations"]) > limit:
                    out.append(f"  ... and {len(p['violations']) - limit} more {p['id']} violations (--json lists all)")
    if out:
        console.print("\n".join(out), highlight=False)


def _escape(line: str) -> str:
    from rich.markup import escape

    return escape(line)


@bad_input_probes(["no-such-trace.jsonl", "--converge-within", "1e308"])
@trace.command("check")
@click.argument("traces", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout (docs/trace-check.md).")
@click.option("--converge-within", "converge_within", type=ConvergeWithin(), default=20.0, show_default=True,
              help="Seconds a partition may stay unowned, and a period may take to converge.")
@click.option("--against-model", "against_model", is_flag=True,
              help="Also map every event to the model's steps and report the first that no step explains.")
@click.option("--show", type=int, default=3, show_default=True, help="Violations printed per property (text output).")
def check(traces: tuple[str, ...], as_json: bool, converge_within: float, against_model: bool, show: int) -> None:
    """Check TRACE... (.jsonl / .jsonl.gz files, directories of them, or - for stdin).

    Exit status: 0 when every invariant held in every trace, 1 when one was violated (malformed lines
    are trace defects and count as violations), 2 when a file cannot be read at all.

    \b
    Examples:
      groupspec trace check my-consumers.jsonl
      groupspec trace check logs/ --against-model --converge-within 60
      cat c1.jsonl c2.jsonl | groupspec trace check - --json
    """
    from groupspec.trace import TraceReadError
    from groupspec.trace import Report, iter_results
    from groupspec.trace import expand_paths

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
        err = make_console(to_stderr=True)  # (off a terminal a bar draws nothing but a stray empty line)
        with Progress(console=err, transient=True, disable=len(files) < 2 or not err.is_terminal) as bar:
            task = bar.add_task("checking traces", total=len(files))
            for r in iter_results(files, converge_within, against_model):
                results.append(r)
                bar.advance(task)
    except TraceReadError as e:
        raise UserError(str(e)) from None
    report = Report(results)
    doc = report.to_dict()
    for t in doc["traces"]:  # valid input, and it held: but vacuously (docs/trace-check.md, "Nothing to check")
        if t["nothing_checked"]:
            click.echo(f"groupspec: warning: {t['trace']}: no event names a member ({t['events']:,} event(s), none of "
                       "them a member's): no group activity was seen, so the invariants were checked on nothing",
                       err=True)
    if as_json:
        emit_json(doc)
    else:
        _print(console, doc, show)
    raise click.exceptions.Exit(EXIT_OK if report.ok else EXIT_VIOLATION)
