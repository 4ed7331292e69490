"""`groupspec check`: explore a protocol variant's bounded state space and report every property."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

if TYPE_CHECKING:
    from groupspec.checker import Result, Step, Verdict
    from groupspec.model import Spec

from ._common import EXIT_OK, EXIT_VIOLATION, UserError, bad_input_probes, emit_json, make_console, plural, PlainProgress


def register(group: click.Group) -> None:
    group.add_command(check)


def parse_faults(text: str) -> frozenset[str]:
    from groupspec.model import FAULTS

    if not text:
        return frozenset()
    items = [f.strip() for f in text.split(",") if f.strip()]
    for f in items:
        if f not in FAULTS:
            raise UserError(f"--faults: unknown fault {f!r}; choose from {', '.join(FAULTS)}")
    return frozenset(items)


def given_faults(text: str | None) -> frozenset[str]:
    """``--faults`` as given on the command line: none when left out; given but naming no fault (``--faults ''``,
    a shell variable that was empty, ``--faults ,``) is bad input, not a silent run without faults."""
    if text is None:
        return frozenset()
    faults = parse_faults(text)
    if not faults:
        from groupspec.model import FAULTS

        raise UserError(f"--faults {text!r}: names no fault (leave the option out for none; choose from "
                        f"{', '.join(FAULTS)})")
    return faults


def result_json(proto: Spec, res: Result) -> dict[str, Any]:
    from groupspec.checker import timeline_json

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
        "workers": res.workers,
        "seconds": round(res.seconds, 3),
        "states_per_second": round(res.states_per_second),
        "memory": {
            "peak_bytes": res.peak_memory,
            "per_state_bytes": None if res.memory_per_state is None else round(res.memory_per_state, 1),
            "store_bytes_per_state": None if res.store_bytes_per_state is None else round(res.store_bytes_per_state, 1),
            "fingerprint_collision_probability": res.collision_probability,
            "frontier_segments_on_disk": res.frontier_spilled,
        },
        "complete": res.complete,
        "symmetry": res.symmetric,
        "symmetry_factor": None if res.symmetry_factor is None else round(res.symmetry_factor, 2),
        "convergence_bound": res.convergence_bound,
        "figures": res.figures,
        "ok": res.ok,
        "properties": [
            {
                "name": v.name, "kind": v.kind,
                "verdict": "held" if v.held else ("violated" if v.held is False else "not applicable"),
                "partial": is_partial(res, v),
                "explanation": v.explanation or partial_detail(res, v),
                "counterexample": timeline_json(proto, v.trace) if (v.held is False and v.trace) else None,
            }
            for v in res.verdicts.values()
        ],
    }


#: the largest --max-states: the engines count states in 64-bit integers (numba's int64); 2**62 leaves them room
MAX_STATES_LIMIT = 2**62

#: below this many states the peak growth of resident memory is mostly fixed costs (the engine's compilation, its
#: first arrays), not the states': it is shown whole, not divided into a misleading figure per state
MEMORY_PER_STATE_FROM = 50_000


def memory_cell(res: Result) -> str:
    """Peak growth of resident memory per state, and (compiled engine) the store's own bytes per state."""
    if res.states < MEMORY_PER_STATE_FROM and res.memory_per_state is not None:
        growth = res.memory_per_state * res.states / 2**20
        text = f"— (peak growth {growth:,.0f} MiB for {res.states:,} states: mostly fixed costs below {MEMORY_PER_STATE_FROM:,})"
    else:
        text = f"{res.memory_per_state:,.0f} bytes (peak growth / states)"
    if res.store_bytes_per_state is not None:
        text += f"; store {res.store_bytes_per_state:,.0f} bytes"
    if res.frontier_spilled:
        text += f"; {res.frontier_spilled:,} frontier segments waited on disk"
    return text


def verdict_cell(v: Verdict, complete: bool = True) -> str:
    if v.held is None:
        return "[dim]n/a[/dim]"
    if v.held and not complete and v.kind in _FOR_ALL:  # no violation among the states explored: nothing said of the rest
        return "[yellow]held (search incomplete)[/yellow]"
    return "[green]held[/green]" if v.held else "[bold red]VIOLATED[/bold red]"


#: the kinds of property whose "held" is a statement about every reachable state (or step): only as far as explored
#: when the exploration stopped early (a "sometimes" property that held has its witness; "eventually" is then n/a)
_FOR_ALL = ("always", "action")


def is_partial(res: Result, v: Verdict) -> bool:
    """Whether ``v`` is a "held" that covers only the states explored: a property of :data:`_FOR_ALL` with no
    violation found by a search that stopped early (``--json``'s per-property ``partial``; the verdict stays "held")."""
    return bool(v.held) and not res.complete and v.kind in _FOR_ALL


def partial_detail(res: Result, v: Verdict) -> str:
    """What a property of :data:`_FOR_ALL` that held says when the exploration stopped early (else ``""``)."""
    if not is_partial(res, v):
        return ""
    return (f"held in the {res.states:,} states explored (search incomplete: stopped at --max-states); "
            "the others unexplored")


def print_result(console: Console, proto: Spec, res: Result) -> None:
    from groupspec.checker import render

    cfg = res.config
    faults = ",".join(sorted(cfg.faults)) or "none"
    t = Table(title=f"groupspec check: {res.protocol} / {res.assignor} — {plural(cfg.members, 'member')} × "
              f"{plural(cfg.partitions, 'partition')} × {plural(cfg.topics, 'topic')}, faults {faults}, "
              f"budget {cfg.budget}")
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_row("states (stored)", f"{res.states:,}" + ("" if res.complete else " (stopped at --max-states)"))
    t.add_row("edges", f"{res.edges:,}")
    workers = f", {res.workers} workers" if res.workers > 1 else ""
    what = res.compiled_now
    compiled_now = ("" if not what else " — includes compiling the parallel search, first run with --workers only"
                    if isinstance(what, str) and what.startswith("compiling the checker's parallel")
                    else " — includes compiling the engine, first run only")
    t.add_row("time", f"{res.seconds:.2f} s ({res.states_per_second:,.0f} states/s, {res.engine} engine{workers}{compiled_now})")
    if res.peak_memory:
        t.add_row("peak memory", f"{res.peak_memory / 2**20:,.0f} MiB")
    if res.memory_per_state is not None:
        t.add_row("memory per state", memory_cell(res))
    if res.collision_probability is not None:
        t.add_row("fingerprint collision", f"p ≈ {res.collision_probability:.1e} (96-bit fingerprints)")
    if res.symmetric and res.symmetry_factor is not None:
        approx = "" if res.symmetry_exact else "≈"
        t.add_row("symmetry reduction", f"{approx}{res.symmetry_factor:.2f}× (members and partitions)")
    elif res.symmetric:
        t.add_row("symmetry reduction", "on, members and partitions (--symmetry-factor measures it)")
    else:
        why = (f"{res.assignor} depends on member/partition order" if not proto.in_flight
               else "the KIP-848 in-flight faults keep per-partition epochs, not renamed")
        t.add_row("symmetry reduction", f"none ({why})")
    bound = res.convergence_bound
    t.add_row("convergence bound", "—" if bound is None else plural(bound, "protocol step"))
    for name, f in res.figures.items():
        sizes = ", ".join(f"group of {n}: {'/'.join(map(str, v))}" for n, v in f["by_group_size"].items())
        t.add_row(name, f"{sizes} ({plural(f['changes'], 'change')} explored)")
    console.print(t)
    p = Table(title="properties")
    p.add_column("property")
    p.add_column("kind")
    p.add_column("verdict")
    p.add_column("detail")
    for v in res.verdicts.values():
        p.add_row(v.name, v.kind, verdict_cell(v, res.complete), v.explanation or partial_detail(res, v))
    console.print(p)
    shown: list[tuple[tuple[list[Step], int | None], str]] = []  # (trace, property) already printed: each timeline is printed once
    for v in res.verdicts.values():
        if v.held is False and v.trace:
            console.print(f"\n[bold red]{v.name} violated[/bold red]: {v.explanation}")
            same = next((name for trace, name in shown if _same_trace(trace, v.trace, v.loop_start)), None)
            steps = plural(len(v.trace) - 1, "step")
            if same is not None:
                console.print(f"counterexample: the same {steps} as for {same} above", highlight=False)
                continue
            shown.append(((v.trace, v.loop_start), v.name))
            console.print(f"counterexample ({steps}):", highlight=False)
            for line in render(proto, v.trace, v.loop_start):
                console.print(line, highlight=False, markup=False)


def _same_trace(seen: tuple[list[Step], int | None], trace: list[Step], loop_start: int | None) -> bool:
    """Whether a timeline already printed (``(trace, loop_start)``) is this one."""
    other, other_loop = seen
    return other_loop == loop_start and len(other) == len(trace) and all(
        a.state == b.state and a.action == b.action for a, b in zip(other, trace))


def naming_the_option(message: str, protocol: str | None = None, default: str = "") -> str:
    """The checker's one-line refusal, led by the option it is about (``--protocol: unknown protocol 'x'; ...``),
    with the nearest name when an unknown protocol looks like a typo of a known one."""
    if message.startswith("-"):
        return message
    if message.startswith("unknown protocol") and protocol is not None:
        import difflib

        from groupspec.model import VARIANTS

        near = difflib.get_close_matches(protocol.lower(), list(VARIANTS), n=1, cutoff=0.6)
        hint = f"did you mean {near[0]!r}? " if near else ""
        return f"--protocol: unknown protocol {protocol!r}; {hint}groupspec check --list shows every variant"
    if message.startswith("unknown assignor") or "assignor supports only" in message:
        return f"--assignor: {message}"
    if message.startswith("unknown engine"):
        return f"--engine: {message}"
    return f"{default}: {message}" if default else message


def explore_with_progress(console: Console, with_symmetry_factor: bool = True, **kwargs: Any) -> tuple[Spec, Result]:
    from groupspec.checker import check as run_check
    from groupspec.checker import validate, validate_faults

    try:  # bad bounds are refused before anything is shown
        validate(**{k: v for k, v in kwargs.items() if k != "faults"})
    except ValueError as e:
        raise UserError(naming_the_option(str(e), kwargs.get("protocol"))) from None
    try:
        validate_faults(**kwargs)  # and faults the variant does not model, or the engine does not cover
    except ValueError as e:
        raise UserError(naming_the_option(str(e), None, "--faults")) from None

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=True,
                  disable=not console.is_terminal) as bar:  # (off a terminal a bar leaves an empty line)
        task = bar.add_task("exploring: 0 states", total=None)
        compiling: list[str] = []

        def notice(text: str) -> None:
            compiling.append(text)
            console.print(f"{text} …", highlight=False)  # stays on screen: the wait is explained afterwards too
            bar.update(task, description=f"{text} …")

        plain = PlainProgress(console)

        def progress(states: int, queue: int) -> None:
            bar.update(task, description=f"exploring: {plural(states, 'state')}, {queue:,} queued")
            plain.line(lambda elapsed: f"check: {plural(states, 'state')}, {queue:,} queued, {elapsed:.0f} s")

        try:
            proto, res = run_check(progress=progress, notice=notice, with_symmetry_factor=with_symmetry_factor,
                                   **kwargs)
        except ValueError as e:
            raise UserError(str(e)) from None
        res.compiled_now = compiling[0] if compiling else False
        return proto, res


@bad_input_probes(["--protocol", "nope"], ["--protocol", "eager", "--members", "0"],
                  ["--protocol", "eager", "--members", "7"], ["--protocol", "eager", "--max-states", "0"],
                  ["--protocol", "eager", "--faults", "bogus"], ["--protocol", "eager", "--assignor", "best"],
                  ["--protocol", "eager", "--partitions", "2", "--topics", "3"], ["--protocol", "eager", "--workers", "0"],
                  ["--protocol", "eager", "--workers", "2", "--engine", "python"],
                  ["--protocol", "eager", "--faults", "initial-delay", "--engine", "compiled"],
                  ["--protocol", "consumer", "--assignor", "uniform", "--faults", "late-expiry"],
                  ["--protocol", "connect-delayed", "--forget-dead"])
@click.command()
@click.option("--protocol", "protocol", default=None, help="protocol variant (groupspec check --list shows them all)")
@click.option("--assignor", default="sticky", show_default=True, help="sticky, roundrobin or range")
@click.option("--members", default=3, show_default=True, type=int, help="consumer processes (1-6)")
@click.option("--partitions", default=4, show_default=True, type=int, help="partitions in all (1-12)")
@click.option("--topics", default=1, show_default=True, type=int, help="topics the partitions are split into")
@click.option("--faults", default=None, help="comma list: join,leave,crash,timeout,zombie,subscription,partitions; "
              "classic variants also initial-delay,two-step-join,sync-timeout,late-expiry,poll-timeout (Python engine)")
@click.option("--budget", default=2, show_default=True, type=int, help="perturbations per run (0-8)")
@click.option("--max-states", default=None, type=click.IntRange(max=MAX_STATES_LIMIT),
              help=f"stop after this many states, at most 2**62 = {MAX_STATES_LIMIT:,} (convergence then not decided)")
@click.option("--engine", default="auto", show_default=True, type=click.Choice(["auto", "compiled", "python"]),
              help="compiled: the numba encoding of the classic protocol; python: the model's own code; "
                   "auto: compiled wherever it applies")
@click.option("--workers", default=1, show_default=True, type=int,
              help="threads expanding states in parallel (compiled engine; the same result as one)")
@click.option("--forget-dead", is_flag=True,
              help="keys forget fields no future step or property reads (fewer states, the same verdicts; "
                   "classic variants with fenced commits)")
@click.option("--symmetry-factor", is_flag=True,
              help="also measure the symmetry reduction (concrete states per stored state): a second pass over the "
                   "states in Python, often longer than the search itself")
@click.option("--list", "list_only", is_flag=True, help="list the protocol variants (correct and broken) and exit")
@click.option("--json", "as_json", is_flag=True, help="one JSON document on stdout")
def check(protocol: str | None, assignor: str, members: int, partitions: int, topics: int, faults: str | None, budget: int,
          max_states: int | None, engine: str, workers: int, forget_dead: bool, symmetry_factor: bool,
          list_only: bool, as_json: bool) -> None:
    """Explore the bounded state space of one protocol variant and check every property.

    Exit status: 0 when every property holds, 1 when one is violated (with a counterexample
    timeline), 2 on bad arguments.

    \b
    Examples:
      groupspec check --list
      groupspec check --protocol cooperative --members 3 --partitions 4 --faults crash,timeout
      groupspec check --protocol cooperative-direct-transfer --members 2 --partitions 2   (a broken variant)
      groupspec check --protocol consumer --members 3 --partitions 3 --faults crash,timeout,zombie --json
    """
    if list_only:
        _list_variants(as_json)
        return
    if protocol is None:
        raise UserError("missing --protocol; groupspec check --list shows the variants")
    console = make_console(as_json)
    proto, res = explore_with_progress(
        console, protocol=protocol, assignor=assignor, members=members, partitions=partitions, topics=topics,
        faults=given_faults(faults), budget=budget, max_states=max_states, engine=engine, workers=workers,
        forget_dead=forget_dead, with_symmetry_factor=symmetry_factor,
    )
    if as_json:
        emit_json(result_json(proto, res))
    else:
        print_result(console, proto, res)
    raise click.exceptions.Exit(EXIT_OK if res.ok else EXIT_VIOLATION)


def _list_variants(as_json: bool) -> None:
    """Every protocol variant of the model: the correct ones (every property must hold) and the broken ones
    (deliberate bugs each property's check must catch), with the first line of its page."""
    from groupspec.model import BROKEN, CORRECT

    rows = [(name, kind, cls.summary) for kind, table in (("correct", CORRECT), ("broken", BROKEN))
            for name, cls in table.items()]
    if as_json:
        emit_json([{"protocol": n, "kind": k, "summary": d} for n, k, d in rows])
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="protocol variants (groupspec check --protocol NAME)")
    table.add_column("protocol", no_wrap=True)
    table.add_column("kind")
    table.add_column("what it is")
    for n, k, d in rows:
        table.add_row(n, k if k == "correct" else "[red]broken[/]", escape(d))
    make_console(False).print(table)
