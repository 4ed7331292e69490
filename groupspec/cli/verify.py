"""`groupspec verify`: the main job — every correct variant holds, every broken variant is caught."""
from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any, Callable

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from ._common import (EXIT_OK, EXIT_VIOLATION, FiniteFloat, PlainProgress, bad_input_probes, emit_json, fail, ignore_sigint, make_console,
                      stop_on_interrupt)

if TYPE_CHECKING:
    from groupspec.proofs import Check, Report
    from groupspec.verify import ModelJob, ModelRow


def register(group: click.Group) -> None:
    group.add_command(verify)


def _mark(held: bool | None) -> str:
    return {True: "[green]✓[/green]", False: "[red]✗[/red]", None: "[dim]–[/dim]"}[held]


PROPERTY_COLUMNS = (("excl.", "exclusive_ownership"), ("fence", "commit_fencing"),
                    ("gen.", "generation_monotonic"), ("conv.", "convergence"))
FAULT_LETTERS = {"join": "J", "leave": "L", "crash": "C", "timeout": "T", "zombie": "Z", "subscription": "S",
                 "partitions": "P", "initial-delay": "D", "two-step-join": "M", "sync-timeout": "Y",
                 "late-expiry": "W", "poll-timeout": "O", "lose-answer": "A", "late-answer": "N", "late-commit": "K", "early-restart": "R"}
WIDTH = 120  # the model table and its legend fit in this many columns

LEGEND = (
    "variant: the protocol variant, with its default assignor (sticky; uniform for consumer) unless another is named (· range); † historical. "
    "bounds: members m × partitions p (× topics t), the faults allowed ("
    + ", ".join(f"{v} {k}" for k, v in FAULT_LETTERS.items()) + "; ALL: every fault that applies to the variant, ALL+: those and the requests and answers in flight (A N K, "
    "and R for a static member), all: every one but D M Y W O (the formation and timer faults); "
    "– none) and the budget b, the most "
    "faults in one run. states: distinct states stored (k thousands, M millions). time: per check; * the "
    "Python engine, the others ran compiled. excl. exclusive ownership, fence commit fencing, gen. generation "
    "monotonic, conv. convergence: ✓ held, ✗ violated, – not applicable; a broken variant must show ✗ where it "
    "is broken. bound: the most protocol steps any run takes to converge after its last fault; — when "
    "convergence was not decided (a broken variant is caught first). result: caught in N steps is the length "
    "of the shortest counterexample (groupspec check prints it); as in Kafka: a configuration Kafka itself "
    "breaks (static-cooperative; zookeeper's unfenced commits): the properties marked ✗ must be violated, "
    "exactly those, and the others hold."
)


def _bounds(job: ModelJob) -> str:
    from groupspec.verify import applicable_faults

    given = {f for f in job.faults.split(",") if f}
    every = set(applicable_faults(job.protocol))
    missing = every - given
    if len(given) > 4 and given <= every and missing <= {"initial-delay", "two-step-join", "sync-timeout", "late-expiry", "poll-timeout"}:
        # every fault that applies to the variant, in one search (or all but the formation and timer ones)
        faults = "all" if missing else "ALL"
    elif every and every < given and given - every <= {"lose-answer", "late-answer", "late-commit", "early-restart"}:
        faults = "ALL+"  # every fault that applies, and the KIP-848 requests and answers in flight besides
    else:
        faults = "".join(FAULT_LETTERS.get(f, f) for f in job.faults.split(",") if f) or "–"
    topics = f"×{job.topics}t" if job.topics > 1 else ""
    return f"{job.members}m×{job.partitions}p{topics} {faults} b{job.budget}"


def _table(title: str) -> Table:
    """verify's tables: a rule under the header, no side borders, one space of padding (to fit :data:`WIDTH`)."""
    from rich import box

    return Table(title=title, box=box.SIMPLE_HEAD, padding=(0, 0, 0, 1), pad_edge=False, title_justify="left")


def _count(n: int) -> str:
    """States, short: 385, 12.3k, 2.41M."""
    if n < 10_000:
        return f"{n:,}"
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


def _default_assignor(protocol: str) -> str:
    """The assignor a variant runs unless another is named (the next-generation family: its first own one)."""
    from groupspec.model import VARIANTS

    first: str = VARIANTS[protocol].assignors[0]  # Spec.assignors
    return first


def model_table(rows: list[ModelRow]) -> Table:
    """The model section as a table that fits in :data:`WIDTH` columns (the legend explains it)."""
    t = _table("groupspec verify — the model: correct variants must hold, broken ones must be caught")
    t.add_column("variant", no_wrap=True)
    t.add_column("bounds", no_wrap=True)
    t.add_column("states", justify="right", no_wrap=True)
    t.add_column("time", justify="right", no_wrap=True)
    for name, _prop in PROPERTY_COLUMNS:
        t.add_column(name, justify="center", no_wrap=True)
    t.add_column("bound", justify="right", no_wrap=True)
    t.add_column("result", no_wrap=True)
    short = dict((prop, name) for name, prop in PROPERTY_COLUMNS)
    for r in rows:
        variant = r.job.protocol + (" †" if r.job.note.startswith("historical") else "")
        if r.job.assignor != _default_assignor(r.job.protocol):
            variant += f" · {r.job.assignor}"
        if r.job.kafka_too:  # Kafka breaks these too: exactly they must be violated, the rest must hold
            verdict = "[yellow]as in Kafka[/yellow]" if r.passed else f"[bold red]FAILS[/bold red] ({r.detail})"
        elif r.job.expect:
            steps = "" if r.trace_steps is None else f" in {r.trace_steps} step{'s' * (r.trace_steps != 1)}"
            verdict = (f"[green]caught[/green]{steps}" if r.passed
                       else f"[bold red]NOT CAUGHT[/bold red] ({short.get(r.job.expect, r.job.expect)})")
        else:
            verdict = "[green]holds[/green]" if r.passed else f"[bold red]FAILS[/bold red] ({r.detail})"
        engine = "*" if r.engine == "python" else ""
        secs = f"{r.seconds:.1f}s" if r.seconds < 100 else f"{r.seconds:.0f}s"
        t.add_row(variant, _bounds(r.job), _count(r.states), secs + engine,
                  *[_mark(r.verdicts.get(prop)) for _name, prop in PROPERTY_COLUMNS],
                  "—" if r.bound is None else str(r.bound), verdict)
    return t


@bad_input_probes(["--family", "classic"], ["--spec-mutants", "--limit", "0"], ["--spec-mutants", "--mutant", "nope"],
                  ["--spec-mutants", "--workers", "0"])
@click.command()
@click.option("--json", "as_json", is_flag=True, help="one JSON document on stdout")
@click.option("--spec-mutants", is_flag=True,
              help="instead: the mutation campaign over model/ (each one-rule change must be killed by a check "
                   "that compares the model with the reference or breaks one of its properties)")
@click.option("--family", type=click.Choice(["classic", "connect", "kip848", "migration", "zookeeper"]),
              help="with --spec-mutants: only this family's mutants")
@click.option("--sample", is_flag=True, help="with --spec-mutants: the fixed sample make test runs")
@click.option("--mutant", "mutants", multiple=True, help="with --spec-mutants: only this mutant (repeatable)")
@click.option("--limit", type=int, help="with --spec-mutants: at most this many, spread evenly over the list")
@click.option("--workers", type=int, help="with --spec-mutants: worker processes (default: the cores, at most 2)")
@click.option("--scale", type=FiniteFloat(), default=1.0, show_default=True,
              help="with --spec-mutants: the randomized conformance suites' examples, times this")
@click.option("--list", "list_only", is_flag=True, help="with --spec-mutants: list the mutants and stop")
@click.option("--recheck-equivalent", is_flag=True,
              help="with --spec-mutants: run every check on the mutants listed as equivalent too (they must "
                   "survive; a mutant named with --mutant always is)")
def verify(as_json: bool, spec_mutants: bool, family: str | None, sample: bool, mutants: tuple[str, ...],
           limit: int | None, workers: int | None, scale: float, list_only: bool, recheck_equivalent: bool) -> None:
    """Check every protocol variant of the model, and that every broken variant is caught.

    Three sections: the model (explicit-state checks), the Z3 proofs, the mutation check of the reference.
    Exit status 0 when all is as expected, 1 otherwise; Ctrl-C stops it at once (exit status 130).

    With --spec-mutants, the mutation campaign over the specification instead (docs/specification.md,
    "The mutation campaign"): the score per family, the survivors with their one-line diff, the check that
    killed each of the others.

    \b
    Examples:
      groupspec verify
      groupspec verify --json > verify.json
      groupspec verify --spec-mutants --family kip848 --limit 20
    """
    campaign_only = (family, sample, mutants, limit, workers, list_only, scale != 1.0, recheck_equivalent)
    if not spec_mutants and any(campaign_only):
        fail("--family, --sample, --mutant, --limit, --workers, --scale, --list and --recheck-equivalent go with "
             "--spec-mutants")
    with stop_on_interrupt():
        if spec_mutants:
            from .verify_spec import list_mutants, run_spec_mutants

            if list_only:
                list_mutants(family, as_json)
                return
            run_spec_mutants(as_json, family, sample, mutants, limit, workers, scale, recheck_equivalent)
            return
        _verify(as_json)


def _timed(fn: Callable[[Any], Any], arg: Any) -> tuple[Any, float, float, int]:
    """A pool task: its result, and the CPU and wall seconds it took here, and which worker ran it."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn(arg)
    return out, time.process_time() - c0, time.perf_counter() - t0, os.getpid()


def _verify(as_json: bool) -> None:
    """The three sections' work in one pool, the longest first: the model checks, the proofs' tasks and the
    mutation check's rows are independent, so no core waits for a section to end (each section's rows keep
    their order in the output)."""
    from groupspec.checker import COMPILE_NOTICE, needs_compiling
    from groupspec.conformance import MUTANTS, run_mutant
    from groupspec.proofs import assemble, plan
    from groupspec.realstack import interrupts_held
    from groupspec.verify import MODEL_JOBS, MUTANT_SECONDS, PROOF_SECONDS, expected_seconds, rows_json, run_model_job

    console = make_console(as_json)
    t0 = time.perf_counter()
    chosen, proof_tasks = plan()
    work = ([(expected_seconds(job), "model", k, run_model_job, job, f"{job.protocol} · {job.assignor} {job.bounds}")
             for k, job in enumerate(MODEL_JOBS)]
            + [(PROOF_SECONDS.get(kind, 5.0), "proofs", k, fn, arg, f"{kind} {p}")
               for k, (kind, p, fn, arg) in enumerate(proof_tasks)]
            + [(MUTANT_SECONDS.get(m.switch, 2.0), "mutants", k, run_mutant, m, f"{m.switch} ({m.variant})")
               for k, m in enumerate(MUTANTS)])
    work.sort(key=lambda w: -w[0])  # stable: equal estimates keep the sections' order
    out: dict[str, list[Any]] = {"model": [None] * len(MODEL_JOBS), "proofs": [None] * len(proof_tasks),
                            "mutants": [None] * len(MUTANTS)}
    left = {name: len(v) for name, v in out.items()}
    profile: list[dict[str, Any]] = []  # per piece of work: its CPU and wall seconds in its worker, when it ended (--json)
    ended = {name: 0.0 for name in out}  # when each section's last piece of work ended
    workers = max(1, min(os.cpu_count() or 1, len(work)))
    first = f", {COMPILE_NOTICE}" if needs_compiling() else ""
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(f"model checks, proofs, mutation check ({workers} workers{first})", total=len(work))
        plain, done = PlainProgress(console), 0
        with ProcessPoolExecutor(max_workers=workers, initializer=ignore_sigint) as pool:
            # a Ctrl-C inside submit (the pool starting its thread) would surface as the pool's RuntimeError
            # on the way out: hold it until the jobs are submitted, then it ends the run as usual
            with interrupts_held():
                futures = {pool.submit(_timed, fn, arg): (section, k, label)
                           for _est, section, k, fn, arg, label in work}
            for fut in as_completed(futures):
                section, k, label = futures[fut]
                out[section][k], cpu, wall, pid = fut.result()
                profile.append({"section": section, "what": label, "cpu_seconds": round(cpu, 2),
                                "wall_seconds": round(wall, 2), "ended": round(time.perf_counter() - t0, 1),
                                "worker": pid})
                left[section] -= 1
                if not left[section]:
                    ended[section] = time.perf_counter() - t0
                bar.advance(task)
                done += 1
                plain.line(lambda secs: f"verify: {done} of {len(work)} done (last: {section}, {label}), {secs:.0f} s")
    rows, mutants = out["model"], out["mutants"]
    proofs = assemble(chosen, proof_tasks, out["proofs"], t0)
    proofs.seconds = ended["proofs"]
    elapsed = time.perf_counter() - t0
    ok = all(r.passed for r in rows) and proofs.ok and all(m["caught"] for m in mutants)
    if as_json:
        emit_json({"ok": ok, "seconds": round(elapsed, 1), "model": rows_json(rows), "proofs": proofs.to_json(),
                   "mutants": mutants, "profile": profile})
        raise click.exceptions.Exit(EXIT_OK if ok else EXIT_VIOLATION)
    console.print(model_table(rows))
    console.print(LEGEND, width=WIDTH, highlight=False)
    console.print(f"model: {len(rows)} checks, done {ended['model']:.0f} s after the start, on {workers} worker "
                  f"processes shared with the proofs and the mutation check")
    print_proofs(console, proofs)
    print_mutants(console, mutants)
    cpu = sum(w["cpu_seconds"] for w in profile)
    console.print(f"{'all as expected' if ok else 'NOT as expected'} — {elapsed:.0f} s in all "
                  f"({cpu:.0f} CPU-seconds in the workers)")
    raise click.exceptions.Exit(EXIT_OK if ok else EXIT_VIOLATION)


def print_proofs(console: Console, rep: Report) -> None:
    """One row per variant and family of proofs: obligations, verdict, time."""
    groups: dict[tuple[str, str], list[Check]] = {}
    for c in rep.checks:
        groups.setdefault((c.protocol, c.family), []).append(c)
    t = _table("groupspec verify — the proofs (Z3): correct variants proved, broken ones refuted")
    for col in ("variant", "family", "obligations", "result", "time"):
        t.add_column(col, justify="right" if col in ("obligations", "time") else "left")
    for (protocol, family), checks in groups.items():
        n = sum(c.count for c in checks)
        secs = sum(c.seconds for c in checks)
        broken = any(c.expect == "fail" for c in checks)
        kafka = any(c.expect == "kafka" for c in checks)  # not inductive: Kafka allows what it forbids
        good = all(c.ok for c in checks)
        if kafka:
            result = "[yellow]not inductive, as in Kafka[/yellow]" if good else "[bold red]FAILED[/bold red]"
        elif broken:
            result = "[green]caught as expected[/green]" if good else "[bold red]NOT CAUGHT[/bold red]"
        else:
            result = "[green]proved[/green]" if good else "[bold red]FAILED[/bold red]"
        t.add_row(protocol, family, str(n), result, f"{secs:.1f}s")
    console.print(t)
    n = sum(c.count for c in rep.checks)
    console.print(f"proofs: {len(rep.checks)} checks, {n} obligations, done {rep.seconds:.0f} s after the start "
                  f"({'all as expected' if rep.ok else 'NOT as expected'}; details and counterexamples: groupspec prove)")


def run_mutants(console: Console) -> list[dict[str, Any]]:
    """The conformance suite against every fault switch of the reference (the mutation check).

    Runs in this process: the conformance suite's draws depend on its seed alone, not on which modules
    the process imported (``tests/test_conformance.py::test_generation_ignores_imports``).
    """
    from groupspec.conformance import MUTANTS, run_mutant

    rows: list[dict[str, Any]] = []
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task("mutation check", total=len(MUTANTS))
        plain = PlainProgress(console)
        for m in MUTANTS:  # one table: the classic protocol and Connect, KIP-848, the migration
            where = "" if m.family == "classic" else f" ({m.family})"
            bar.update(task, description=f"mutation check: {m.switch}{where}")
            rows.append(run_mutant(m))
            bar.advance(task)
            plain.line(lambda secs: f"mutation check: {len(rows)} of {len(MUTANTS)} done (last: {m.switch}), {secs:.0f} s")
    return rows


def print_mutants(console: Console, rows: list[dict[str, Any]]) -> None:
    t = _table("groupspec verify — the mutation check: the conformance suite must catch every broken reference")
    for col in ("mutant", "in", "variant", "caught by", "examples", "sim seed", "time"):
        t.add_column(col, justify="right" if col in ("examples", "time", "sim seed") else "left")
    for r in rows:
        caught = f"[green]{r['check']}[/green]" if r["caught"] else "[bold red]NOT CAUGHT[/bold red]"
        t.add_row(r["mutant"], r["switch owner"], str(r.get("variant", "")), caught, str(r.get("examples", "")),
                  str(r.get("seed", "")), f"{r.get('seconds', 0):.1f}s")
    console.print(t)
    n = sum(1 for r in rows if r["caught"])
    console.print(f"mutation check: {n}/{len(rows)} mutants caught")
