"""`groupspec assignor check|run`: check a candidate assignor, or run it once (contract assignor-check.md).

Thin: argument parsing and presentation only; the work lives in :mod:`groupspec.assignorcheck.check`.
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any, Iterator, TypedDict

import click

from ._common import (EXIT_OK, EXIT_VIOLATION, CommandGroup, FiniteFloat, UserError, bad_input_probes, emit_json, plural,
                      utf8_text)


class _Domain(TypedDict):
    """The keyword arguments of ``check_assignor`` that shape the examples (from the options)."""

    topics_per_member: int | None
    static: bool
    small: bool
    nondeterministic_ok: bool
    rack_aware: bool | None
    thorough: bool
    scale_factor: float


#: the longest --call-timeout: a day (a longer one is no limit in practice, and past ~10^9 s the timers the checker
#: sets with it overflow)
MAX_CALL_TIMEOUT = 86_400.0


def register(group: click.Group) -> None:
    group.add_command(assignor)


@click.group(cls=CommandGroup)
def assignor() -> None:
    """Check partition assignors against Kafka's invariants, or run one once."""


def _load(target: str, protocol: str | None, kind: str | None = None, call_timeout: float = 0.0) -> Any:
    from groupspec.assignorcheck import IMPORT_TIMEOUT, LoadError, load_candidate

    try:  # an import that hangs is a load error too, after max(20 s, --call-timeout)
        return load_candidate(target, protocol=protocol, kind=kind, import_timeout=max(IMPORT_TIMEOUT, call_timeout))
    except LoadError as e:
        raise UserError(str(e)) from None


#: the most --examples per property: 100 times the release check's 1000 (hours for a slow candidate already)
MAX_EXAMPLES = 100_000


@bad_input_probes([], ["no_such_module_zz:assign"], ["range", "--only", "I99"], ["range", "--compare", "range", "sticky"],
                  ["range", "--call-timeout", "1e10"])
@assignor.command()
@click.argument("target", required=False)
@click.option("--protocol", type=click.Choice(["eager", "cooperative"]), help="Override the declared protocol.")
@click.option("--kind", type=click.Choice(["range", "roundrobin", "sticky", "cooperative", "none"]),
              help="Treat the candidate as this Kafka algorithm (decides I5/I7/I9; cooperative: sticky and "
                   "cooperative), or as none of them; default: read from its name, else inferred from its "
                   "behaviour on probe inputs.")
@click.option("--examples", type=click.IntRange(min=1, max=MAX_EXAMPLES), default=None,
              help=f"Generated examples per property, at most {MAX_EXAMPLES:,}  [default: 200; 1000 with --thorough].")
@click.option("--thorough", is_flag=True,
              help="The release check: 1000 examples per property (unless --examples), 25 examples of every input "
                   "class per property, I10p over 16 hash seeds, and the scale tier S1 up to 2,000 members × "
                   "1,000,000 partitions.")
@click.option("--scale-factor", type=FiniteFloat(min=0.01), default=10.0, show_default=True,
              help="S1's time budget: the project's assignor of the same kind on the same input, times this.")
@click.option("--seed", type=int, default=None, help="Seed for replay (printed when omitted).")
@click.option("--call-timeout", type=FiniteFloat(min=0.01, max=MAX_CALL_TIMEOUT), default=5.0, show_default=True,
              help="Seconds one call of the candidate may take before it counts as hanging (I11).")
@click.option("--compare", nargs=2, metavar="A B", default=None,
              help="Run two candidates on the same generated inputs and show them side by side.")
@click.option("--only", "only", multiple=True, metavar="ID",
              help="Check only this property (repeatable), e.g. --only I6' --only C1.")
@click.option("--java-parity", is_flag=True,
              help="Judge I6' with the Java-parity allowance (only same-generation conflicts must be withheld).")
@click.option("--nondeterministic-ok", is_flag=True,
              help="The candidate does not promise determinism (e.g. it draws at random): I10, I10p and I10i "
                   "are reported as not applicable.")
@click.option("--topics-per-member", type=click.IntRange(min=1), default=None, metavar="K",
              help="Declared domain: every member subscribes to exactly K topics.")
@click.option("--no-static", "no_static", is_flag=True,
              help="Declared domain: no static members (no group.instance.id).")
@click.option("--rack-aware", is_flag=True,
              help="The candidate takes replica racks (KIP-881), as if it had rack_aware = True: racks are drawn "
                   "and passed as partition_racks=, and I12 applies.")
@click.option("--small", is_flag=True,
              help="Draw only small groups (at most 6 partitions, 5 members, 4 topics, generations up to 9).")
@click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout.")
def check(target: str | None, protocol: str | None, kind: str | None, examples: int | None, thorough: bool,
          scale_factor: float, seed: int | None, call_timeout: float, compare: tuple[str, str] | None,
          only: tuple[str, ...], java_parity: bool, nondeterministic_ok: bool, topics_per_member: int | None,
          no_static: bool, rack_aware: bool, small: bool, as_json: bool) -> None:
    """Check TARGET (module:attribute or range|roundrobin|sticky|cooperative-sticky) against I1–I12, I6′ and churn.

    \b
    Examples:
      groupspec assignor check cooperative-sticky
      groupspec assignor check mypkg.assignors:MyAssignor --kind sticky --json
      groupspec assignor check mypkg.assignors:MyAssignor --thorough   (release checks: every class many times, the scale tier)
    """
    if seed is None:
        seed = secrets.randbelow(2**31)
    if examples is None:
        examples = 1000 if thorough else 200
    _hypothesis_cache_out_of_the_way()
    if compare:
        if target:
            raise UserError("give either TARGET or --compare A B, not both")
        _compare(compare, protocol, examples, seed, call_timeout, as_json)
        return
    if not target:
        raise UserError("missing TARGET (module:attribute or a built-in name)")
    _quiet_candidate_logging()
    from groupspec.assignorcheck import PROPERTY_IDS, check_assignor

    for pid in only:
        if pid not in PROPERTY_IDS:
            raise UserError(f"--only {pid}: unknown property (known: {', '.join(PROPERTY_IDS)})")
    props = list(only) or None
    domain: _Domain = {"topics_per_member": topics_per_member, "static": not no_static, "small": small,
                       "nondeterministic_ok": nondeterministic_ok, "rack_aware": True if rack_aware else None,
                       "thorough": thorough, "scale_factor": scale_factor}
    with _candidate_prints_to_stderr():
        cand = _load(target, protocol or ("cooperative" if kind == "cooperative" else None),
                     "sticky" if kind == "cooperative" else kind, call_timeout)
        if as_json:
            report = check_assignor(cand, protocol=protocol, kind=kind, examples=examples, seed=seed,
                                    call_timeout=call_timeout, java_parity=java_parity, properties=props,
                                    quality=props is None, **domain)
        else:
            from rich.console import Console

            err = Console(stderr=True)
            err.print(f"checking [bold]{target}[/] ({cand.protocol}, kind {cand.kind or 'generic'}): "
                      f"{examples} examples per property, seed {seed}")
            report = _with_progress(err, lambda progress: check_assignor(
                cand, protocol=protocol, kind=kind, examples=examples, seed=seed, call_timeout=call_timeout,
                java_parity=java_parity, properties=props, quality=props is None, progress=progress, **domain))
    if as_json:
        emit_json(report.to_json())
    else:
        _print_report(report)
    sys.exit(EXIT_OK if report.ok else EXIT_VIOLATION)


def _hypothesis_cache_out_of_the_way() -> None:
    """Hypothesis keeps a cache (``.hypothesis/constants``) in the current folder even with no example
    database; a command must not leave that in the user's folder: it goes to the user's cache instead."""
    import os

    from hypothesis.configuration import set_hypothesis_home_dir

    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    set_hypothesis_home_dir(base / "groupspec" / "hypothesis")


def _quiet_candidate_logging() -> None:
    """Thousands of calls: keep candidates' log warnings (e.g. kafka-python's conflict warnings) off stderr."""
    import logging

    logging.getLogger().addHandler(logging.NullHandler())


@contextlib.contextmanager
def _candidate_prints_to_stderr() -> Iterator[None]:
    """While the candidate is loaded and called, what it prints goes to stderr: Python's ``print`` (``sys.stdout``)
    and, at the descriptor, what C code writes to fd 1. Stdout carries the report alone (``--json`` is one JSON
    document), written after this block."""
    sys.stdout.flush()
    saved_fd, saved = os.dup(1), sys.stdout
    try:
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        yield
    finally:
        sys.stdout = saved
        sys.stderr.flush()
        os.dup2(saved_fd, 1)
        os.close(saved_fd)


def _with_progress(console: Any, work: Any) -> Any:
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from groupspec.assignorcheck import PROPERTIES

    total = len(PROPERTIES) + 3  # + C1, S1 and the quality sample
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task("properties", total=total)

        def progress(pid: str) -> None:
            bar.update(task, advance=1, description=f"checking {pid}")

        return work(progress)


def _print_report(report: Any) -> None:
    from rich.table import Table

    out = _console()
    style = {"held": "green", "violated": "bold red", "not applicable": "dim"}
    parity = ", I6' with Java parity" if report.java_parity else ""
    how = {"flag": "by --kind", "name": "from its name", "behaviour": "inferred from its behaviour"}
    kind = f"kind {report.kind} ({how.get(report.kind_source, '')})" if report.kind else "kind generic"
    table = Table(title=f"{report.target} — {report.protocol}, {kind}, seed {report.seed}{parity}")
    for col in ("id", "property", "verdict", "examples", "note"):
        table.add_column(col)
    for p in report.properties:
        table.add_row(p.id, p.name, f"[{style[p.verdict]}]{p.verdict}[/]", str(p.examples), p.note)
    out.print(table)
    for p in report.violations:
        cx = p.counterexample or {}
        out.print(f"\n[bold red]{p.id} violated[/]: ", end="")
        out.print(str(cx.get("explanation")), markup=False)
        if "steps" in cx:
            out.print("  steps:")
            for s in cx["steps"]:
                out.print(f"    {s}", markup=False)
        out.print("  input: ", json.dumps(cx.get("input"), ensure_ascii=False), markup=False)
        out.print("  output:", json.dumps(cx.get("output"), ensure_ascii=False), markup=False)
        if "expected" in cx:
            out.print("  expected:", json.dumps(cx["expected"], ensure_ascii=False), markup=False)
    if report.kind_note:
        out.print(f"kind: {report.kind_note}", markup=False)
    _print_coverage(out, report.coverage)
    q = report.quality
    if q and q.get("examples"):
        out.print(f"\nquality over {plural(q['examples'], 'state')} with history (advisory, not part of the verdict):")
        from groupspec.assignorcheck import movement_phrase

        out.print(f"  {movement_phrase(q['moved'], q['optimal_moves'])}; more moves than needed in "
                  f"{plural(q['more_moves_than_needed'], 'state')}")
        if q.get("worst_moves"):
            out.print(f"  worst: {q['worst_moves']['explanation']}", markup=False)
        out.print(f"  balance worse than the best achievable in {plural(q['below_best_balance'], 'state')}")
        if q.get("worst_balance"):
            out.print(f"  worst: {q['worst_balance']['explanation']}", markup=False)
        if "two_cycles_across_rounds" in q:
            out.print(f"  2-cycles judged across all rounds of one cooperative rebalance (not I9, which Kafka "
                      f"judges per assign call): {q['two_cycles_across_rounds']} states")
            if q.get("worst_two_cycle"):
                out.print(f"  e.g. {q['worst_two_cycle']['explanation']}", markup=False)
    mean = f"{1000 * report.call_seconds / report.calls:.3f} ms" if report.calls else "n/a"
    replay = f"--seed {report.seed} --examples {report.examples}" + (" --java-parity" if report.java_parity else "")
    replay += _domain_flags(report)
    from groupspec.assignorcheck import PROPERTY_IDS

    if len(report.properties) < len(PROPERTY_IDS):
        replay += "".join(f" --only {p.id}" for p in report.properties)
    out.print(f"\n{plural(report.calls, 'call')}, mean {mean} per call, {report.seconds:.1f} s; replay with {replay}")
    verdict = "all applicable properties held" if report.ok else f"{plural(len(report.violations), 'property', 'properties')} violated"
    out.print(f"[bold]{verdict}[/]")


def _print_coverage(out: Any, cov: dict[str, Any]) -> None:
    """The input classes of the catalogue the run hit, and how often (docs/assignor-checker.md)."""
    if not cov or not cov.get("classes"):
        return
    from rich.table import Table

    swept = cov.get("swept_properties") or []
    title = (f"input classes over {plural(cov['states'], 'generated state')}: every class at least "
             f"{cov['guaranteed_min']} times whatever the seed ({cov['per_class_per_property']} per class in each of "
             f"{plural(len(swept), 'property', 'properties')})")
    t = Table(title=title)
    for col in ("class", "hits", "what it is"):
        t.add_column(col)
    for c in cov["classes"]:
        t.add_row(c["id"], str(c["hits"]), c["description"])
    out.print()
    out.print(t)


def _domain_flags(report: Any) -> str:
    d = report.domain or {}
    flags = ""
    if d.get("topics_per_member") is not None:
        flags += f" --topics-per-member {d['topics_per_member']}"
    if d.get("static") is False:
        flags += " --no-static"
    if d.get("small"):
        flags += " --small"
    if report.nondeterministic_ok:
        flags += " --nondeterministic-ok"
    if d.get("replica_racks"):
        flags += " --rack-aware"
    if getattr(report, "thorough", False):
        flags += " --thorough"
    if getattr(report, "scale_factor", 10.0) != 10.0:
        flags += f" --scale-factor {report.scale_factor:g}"
    if getattr(report, "kind_source", None) == "flag":
        flags += f" --kind {report.kind or 'none'}"
    return flags


def _console() -> Any:
    """stdout console; at least 120 columns when stdout is not a terminal (files, pipes, CI logs)."""
    from rich.console import Console

    c = Console()
    return c if c.is_terminal else Console(width=max(c.width, 120))


def _compare(targets: tuple[str, str], protocol: str | None, examples: int, seed: int, call_timeout: float,
             as_json: bool) -> None:
    from groupspec.assignorcheck import check_assignor, compare

    _quiet_candidate_logging()
    with _candidate_prints_to_stderr():
        cands = [_load(t, protocol, call_timeout=call_timeout) for t in targets]
        reports = [check_assignor(c, protocol=protocol, examples=examples, seed=seed, call_timeout=call_timeout,
                                  quality=False) for c in cands]
        side = compare(cands[0], cands[1], examples=examples, seed=seed, call_timeout=call_timeout,
                       protocol=protocol)
    for col, rep in zip(side["candidates"], reports):
        col["violated_properties"] = [p.id for p in rep.violations]
        col["full_check_calls"] = rep.calls
        col["full_check_failed_calls"] = rep.failed_calls
    if as_json:
        emit_json(side)
    else:
        from rich.table import Table

        a, b = side["candidates"]
        t = Table(title=f"same {side['examples']} generated inputs, seed {seed}")
        t.add_column("")
        t.add_column(targets[0])
        t.add_column(targets[1])

        def row(label: str, f: Any) -> None:
            t.add_row(label, str(f(a)), str(f(b)))

        row("protocol", lambda c: c["protocol"])
        row("properties violated (full check)", lambda c: ", ".join(c["violated_properties"]) or "none")
        row("full check: failed calls (raise/hang/malformed, I11)",
            lambda c: f"{c['full_check_failed_calls']} of {c['full_check_calls']}")
        row("shared inputs: invariant broken", lambda c: f"{sum(c['violations'].values())} of {side['examples']}")
        row("shared inputs: failed calls", lambda c: f"{c['failed_calls']} of {side['examples']}")
        row("shared inputs: balance worse than best achievable", lambda c: c["below_best_balance"])
        row("shared inputs: partitions moved (fewest for best balance)",
            lambda c: f"{c['moved']} ({c['optimal_moves']}): " + (
                "more than needed" if c["moved"] > c["optimal_moves"] else "as few as needed"
                if c["moved"] == c["optimal_moves"] else "fewer, balance below best"))
        row("mean time per call", lambda c: f"{c['mean_call_ms']} ms")
        _console().print(t)
    bad = any(col["violated_properties"] for col in side["candidates"])
    sys.exit(EXIT_VIOLATION if bad else EXIT_OK)


# --------------------------------------------------------------------------------------------- run


MAX_PARTITIONS = 2**31 - 1  #: the most partitions a topic can have: partition numbers are int32 on the wire


def parse_run_input(text: str, where: str) -> tuple[dict[str, int], dict[str, dict[str, Any]]]:
    """Validate the ``run`` input document; raise UserError with one line naming what is wrong and where."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"{where}: not JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    if not isinstance(doc, dict):
        raise UserError(f"{where}: expected an object with partitions_per_topic and subscriptions")
    for key in ("partitions_per_topic", "subscriptions"):
        if key not in doc:
            raise UserError(f"{where}: missing key {key!r}")
    ppt = doc["partitions_per_topic"]
    if not isinstance(ppt, dict):
        raise UserError(f"{where}: partitions_per_topic must be an object of topic -> partition count")
    for t, n in ppt.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise UserError(f"{where}: partitions_per_topic[{t!r}] must be a non-negative integer, not {n!r}")
        if n > MAX_PARTITIONS:  # a partition number is an int32 in Kafka's protocol
            raise UserError(f"{where}: partitions_per_topic[{t!r}] is {n}: a topic has at most {MAX_PARTITIONS:,} "
                            "partitions (partition numbers are 32-bit in Kafka's protocol)")
    subs_in = doc["subscriptions"]
    if not isinstance(subs_in, dict):
        raise UserError(f"{where}: subscriptions must be an object of member id -> subscription")
    subs: dict[str, dict[str, Any]] = {}
    for m, s in subs_in.items():
        at = f"{where}: subscriptions[{m!r}]"
        if not isinstance(s, dict):
            raise UserError(f"{at} must be an object")
        topics = s.get("topics")
        if not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
            raise UserError(f"{at}.topics must be a list of topic names")
        owned = s.get("owned", [])
        if not isinstance(owned, list) or not all(
                isinstance(x, list) and len(x) == 2 and isinstance(x[0], str) and isinstance(x[1], int)
                and not isinstance(x[1], bool) for x in owned):
            raise UserError(f"{at}.owned must be a list of [topic, partition] pairs")
        gen = s.get("generation", -1)
        if isinstance(gen, bool) or not isinstance(gen, int):
            raise UserError(f"{at}.generation must be an integer (-1 when unknown)")
        for k in ("instance_id", "rack"):
            if s.get(k) is not None and not isinstance(s.get(k), str):
                raise UserError(f"{at}.{k} must be a string or null")
        subs[m] = {"topics": list(topics), "owned": [list(x) for x in owned], "generation": gen,
                   "instance_id": s.get("instance_id"), "rack": s.get("rack")}
    racks = doc.get("partition_racks")
    if racks is None:
        return dict(ppt), subs
    if not isinstance(racks, dict) or not all(
            isinstance(rows, list) and all(isinstance(r, list) and all(isinstance(x, str) for x in r) for r in rows)
            for rows in racks.values()):
        raise UserError(f"{where}: partition_racks must be an object of topic -> list of rack lists (one per "
                        f"partition)")
    from groupspec.assignorcheck import RackedPartitions

    return RackedPartitions(ppt, racks), subs


@bad_input_probes(["range", "--input", "no-such-input.json"], ["no_such_module_zz:assign", "--input", "."])
@assignor.command()
@click.argument("target")
@click.option("--input", "input_file", type=click.Path(dir_okay=False), default=None,
              help="JSON input file (default: stdin).")
@click.option("--protocol", type=click.Choice(["eager", "cooperative"]), help="Override the declared protocol.")
@click.option("--call-timeout", type=FiniteFloat(min=0.01, max=MAX_CALL_TIMEOUT), default=30.0, show_default=True,
              help="Seconds the call may take.")
def run(target: str, input_file: str | None, protocol: str | None, call_timeout: float) -> None:
    """Run TARGET once on one JSON group state; print {member: [[topic, partition], ...]} (sorted).

    An optional key partition_racks ({topic: [[rack, ...] per partition]}, KIP-881) is passed to the candidate
    as partition_racks=, as the check does for rack-aware candidates.

    \b
    Examples:
      groupspec assignor run range --input group.json
    """
    where = "stdin" if input_file is None else input_file
    try:
        if input_file is None:
            data = sys.stdin.buffer.read()
        else:
            with open(input_file, "rb") as f:
                data = f.read()
    except OSError as e:
        raise UserError(f"--input {input_file}: {e.strerror}") from None
    text = utf8_text(data, where)  # (a leading byte order mark is no part of the JSON)
    ppt, subs = parse_run_input(text, where)
    from groupspec.assignorcheck import canonical
    from groupspec.assignorcheck import CallRunner

    with _candidate_prints_to_stderr():
        cand = _load(target, protocol, call_timeout=call_timeout)
        runner = CallRunner(call_timeout)
        try:
            res = runner.run(cand, ppt, subs)
        finally:
            runner.close()
    if res.assignment is None:
        click.echo(f"groupspec: {target}: {res.message}", err=True)
        sys.exit(EXIT_VIOLATION)
    out = {m: list(res.assignment.get(m, [])) for m in subs}
    out.update({m: v for m, v in res.assignment.items() if m not in out})
    sys.stdout.write(json.dumps(canonical(out), ensure_ascii=False) + "\n")
