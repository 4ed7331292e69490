"""`groupspec simulate SCENARIO`: run a built-in scenario in the deterministic simulator and narrate it."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ._common import FiniteFloat, OutputPath, UserError, atomic_output, bad_input_probes, emit_json

if TYPE_CHECKING:
    from groupspec.reference.sim import ScenarioReport


def register(group: click.Group) -> None:
    group.add_command(simulate)


MAX_DELAY_MS = 3_600_000


def _parse_delay(text: str) -> tuple[int, int]:
    try:
        if "-" in text:
            lo, hi = text.split("-", 1)
            return int(lo), int(hi)
        return int(text), int(text)
    except ValueError:
        raise UserError(f"--delay {text!r}: expected MS or MIN-MAX in milliseconds, e.g. 1-5") from None


def _check_network(delay: str, loss: float, duplicate: float, reorder: float) -> tuple[int, int]:
    """The network options, each refused by its own name (``--loss 1.5: ...``) before the run."""
    lo, hi = _parse_delay(delay)
    if lo < 0 or hi < lo:
        raise UserError(f"--delay {delay!r}: MIN-MAX must have 0 <= MIN <= MAX (milliseconds), e.g. 1-5")
    if hi > MAX_DELAY_MS:  # a typo, not a network: no message would arrive within any scenario's run
        raise UserError(f"--delay {delay!r}: at most {MAX_DELAY_MS:,} ms (an hour; the scenarios run minutes)")
    for name, value in (("--loss", loss), ("--duplicate", duplicate), ("--reorder", reorder)):
        if not 0.0 <= value <= 1.0:
            raise UserError(f"{name} {value:g}: the {name[2:]} probability must be between 0 and 1")
    return lo, hi


# The option a simulator's message is about, when the message does not name it itself (the reference's errors
# speak of the scenario; the user needs the option to change).
_OPTION_OF = (("members", "--members"), ("assignor", "--assignor"), ("fault", "--mutants/--faults"),
              ("unknown protocol", "--protocol"), ("--protocol", ""))


def _naming_the_option(message: str) -> str:
    if message.startswith("-"):
        return message
    for word, option in _OPTION_OF:
        if word in message:
            return f"{option}: {message}" if option else message
    return message


def _other_family(scenario: str | None, protocol: str | None) -> None:
    """An unknown scenario (with the nearest name), or one of one family asked for with another family's
    --protocol: say where it lives."""
    if scenario is None:
        return
    from groupspec.reference.sim import CONSUMER_SCENARIOS as CONSUMER
    from groupspec.reference.sim import MIGRATION_SCENARIOS
    from groupspec.reference.sim import SCENARIOS as CLASSIC

    known = [*CLASSIC, *CONSUMER, *MIGRATION_SCENARIOS]
    if scenario not in known:
        import difflib

        near = difflib.get_close_matches(scenario, known, n=1)
        hint = f"did you mean {near[0]!r}? " if near else ""
        raise UserError(f"unknown scenario {scenario!r}; {hint}groupspec simulate --list shows every scenario "
                        "and its protocol")
    if protocol is None:
        return
    family = _family_of(scenario)
    if family is not None and family != protocol:
        raise UserError(f"--protocol {protocol}: scenario {scenario!r} is a {family} scenario "
                        f"(groupspec simulate {scenario} --protocol {family}; groupspec simulate --list shows each "
                        "scenario's protocol)")


@bad_input_probes([], ["no-such"], ["new-consumer-joins", "--members", "1"], ["new-consumer-joins", "--members", "1000"],
                  ["new-consumer-joins", "--partitions", "0"], ["new-consumer-joins", "--partitions", "100000"],
                  ["new-consumer-joins", "--delay", "soon"], ["new-consumer-joins", "--delay", "9-1"],
                  ["new-consumer-joins", "--loss", "1.5"], ["new-consumer-joins", "--failover-at", "-1"],
                  ["new-consumer-joins", "--mutants", "bogus"], ["new-consumer-joins", "--assignor", "best"],
                  ["new-consumer-joins", "--trace", "same.jsonl", "--transcript", "./same.jsonl"],
                  ["scale-out", "--transcript", "t.jsonl"], ["scale-out", "--failover-at", "100"],
                  ["online-upgrade", "--mutants", "ignore_owned"], ["online-upgrade", "--assignor", "range"])
@click.command()
@click.argument("scenario", required=False)
@click.option("--protocol", type=click.Choice(["eager", "cooperative", "static", "static-cooperative", "connect", "consumer",
                                               "classic-to-consumer"]),
              default=None, help="Members' configuration (default: the scenario's own); consumer: the KIP-848 protocol "
                                 "(its scenarios: scale-out, rolling-restart, zombie, static-bounce, churn); "
                                 "classic-to-consumer: the online upgrade (online-upgrade, upgrade-mid-round).")
@click.option("--assignor", default=None, help="range | roundrobin | sticky | cooperative-sticky (consumers); connect (Connect workers); uniform | range (consumer).")
@click.option("--members", type=int, default=3, show_default=True, help="Number of consumers c1..cN.")
@click.option("--partitions", type=int, default=6, show_default=True, help="Partitions of topic t.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the run (replay with the same seed).")
@click.option("--mutants", "--faults", "faults", default=None,
              help="Comma-separated fault switches: deliberate bugs of the reference consumer (e.g. ignore_owned) or "
                   "coordinator (e.g. no_static_fence). Not check's --faults, which are the perturbations the model "
                   "explores (crash, timeout, ...); here the network's are --loss, --delay, --duplicate, --reorder "
                   "and --failover-at. (--faults: the old name of this option.)")
@click.option("--delay", default="1-5", show_default=True, help="Network delay MS or MIN-MAX.")
@click.option("--loss", type=FiniteFloat(), default=0.0, show_default=True, help="Probability a message is lost.")
@click.option("--duplicate", type=FiniteFloat(), default=0.0, show_default=True, help="Probability a message is duplicated.")
@click.option("--reorder", type=FiniteFloat(), default=0.0, show_default=True, help="Probability a message may overtake others.")
@click.option("--failover-at", type=int, default=None, help="Move the coordinator to the standby broker at this ms.")
@click.option("--trace", "trace_path", type=OutputPath(), default=None,
              help="Write the members' trace (the trace format, see the docs) to FILE (.jsonl or .jsonl.gz).")
@click.option("--transcript", "transcript_path", type=OutputPath(), default=None,
              help="Write the coordinator's transcript (JSON Lines) to FILE.")
@click.option("--list", "list_only", is_flag=True, help="List the built-in scenarios and exit.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def simulate(scenario: str | None, protocol: str | None, assignor: str | None, members: int, partitions: int,
             seed: int, faults: str | None, delay: str, loss: float, duplicate: float, reorder: float,
             failover_at: int | None, trace_path: str | None, transcript_path: str | None,
             list_only: bool, as_json: bool) -> None:
    """Run SCENARIO in the deterministic simulator and narrate who owned what, when.

    Exit status: 0 when every property held, or the scenario reproduces what Kafka itself does (it says so);
    1 when two members owned a partition at once (or commits were not fenced) where the story expects none.

    \b
    Examples:
      groupspec simulate --list
      groupspec simulate new-consumer-joins --protocol cooperative
      groupspec simulate scale-out                       (a KIP-848 scenario: --protocol consumer implied)
      groupspec simulate new-consumer-joins --mutants ignore_owned --trace t.jsonl
    """
    if list_only:
        _list_all(as_json)
        return
    faults = _given_switches(faults)
    if trace_path is not None and transcript_path is not None and \
            Path(trace_path).resolve() == Path(transcript_path).resolve():
        raise UserError(f"--trace and --transcript name the same file ({trace_path}): one would overwrite the other")
    _check_network(delay, loss, duplicate, reorder)
    _other_family(scenario, protocol)
    if protocol is None and scenario is not None:
        protocol = _family_of(scenario)
    if protocol in ("consumer", "classic-to-consumer"):
        _not_in_these_stories(protocol, transcript_path, failover_at, faults, assignor)
        lo, hi = _check_network(delay, loss, duplicate, reorder)
        net = None  # these stories answer in the step a request is sent unless a network option is given
        if delay != "1-5" or loss or duplicate or reorder:
            from groupspec.reference.sim import NetworkConfig

            net = NetworkConfig(lo, hi, loss, duplicate, reorder)
        if protocol == "consumer":
            _simulate_consumer(scenario, assignor, members, partitions, seed, faults, trace_path, as_json, net)
        else:
            _simulate_migration(scenario, members, partitions, seed, trace_path, as_json, net)
        return
    from groupspec.reference.sim import NetworkConfig, SCENARIOS, ScenarioError, ScenarioOptions, run_scenario

    if scenario is None:
        raise UserError(f"missing SCENARIO; choose from {', '.join(SCENARIOS)} (groupspec simulate --list)")
    lo, hi = _check_network(delay, loss, duplicate, reorder)
    try:
        net = NetworkConfig(lo, hi, loss, duplicate, reorder)
    except ValueError as e:
        raise UserError(str(e)) from None
    fault_set = frozenset(f.strip() for f in faults.split(",") if f.strip())
    opts = ScenarioOptions(protocol, assignor, members, partitions, seed, fault_set, net, failover_at)
    from rich.console import Console
    from rich.progress import Progress

    try:
        # a transient progress bar on stderr (shown only on a terminal; long runs: many members)
        err = Console(stderr=True)
        with Progress(console=err, transient=True, disable=not err.is_terminal) as bar:
            task = bar.add_task(f"simulating {scenario} (virtual time)", total=None)
            report = run_scenario(scenario, opts, lambda now, end: bar.update(task, completed=now, total=end))
    except ScenarioError as e:
        raise UserError(_naming_the_option(str(e))) from None
    if trace_path is not None:
        from groupspec.reference.sim import trace

        with atomic_output(trace_path) as tmp:
            trace.write_trace(tmp, report.sim.trace)
    if transcript_path is not None:
        from groupspec.reference.sim import dumps_jsonl

        with atomic_output(transcript_path) as tmp:
            tmp.write_text(dumps_jsonl(report.sim.transcript()), encoding="utf-8")
    replay = replay_command(report, faults=",".join(sorted(fault_set)), delay=delay, loss=loss, duplicate=duplicate,
                            reorder=reorder, failover_at=failover_at)
    verdict, as_expected = _classic_verdict(report, SCENARIOS[scenario].finding if scenario in SCENARIOS else "",
                                            bool(fault_set))
    if as_json:
        emit_json({**report.to_json(), "replay": replay, "verdict": verdict})
    else:
        _print_report(report, replay)
        click.echo(verdict)
    if not as_expected:
        raise click.exceptions.Exit(1)


def _given_switches(faults: str | None) -> str:
    """``--mutants`` as given ('' when left out); given but naming no switch (``--mutants ''``, a shell variable
    that was empty, ``--faults ,``) is bad input, not a silent run without fault switches."""
    if faults is None:
        return ""
    if not any(f.strip() for f in faults.split(",")):
        raise UserError(f"--mutants/--faults {faults!r}: names no fault switch (leave the option out for none)")
    return faults


def _not_in_these_stories(protocol: str, transcript_path: object, failover_at: int | None, faults: str,
                          assignor: str | None) -> None:
    """The options the KIP-848 and migration drivers do not take: refused, not silently ignored."""
    which = f"the {protocol} scenarios"
    if transcript_path is not None:
        raise UserError(f"--transcript: {which} record no coordinator transcript (--trace writes the members' trace)")
    if failover_at is not None:
        raise UserError(f"--failover-at: {which} have no standby coordinator to move to")
    if protocol == "classic-to-consumer" and faults.strip(", "):
        raise UserError(f"--mutants/--faults: {which} take no fault switches (got {faults!r})")
    if protocol == "classic-to-consumer" and assignor is not None:
        raise UserError(f"--assignor: {which} run their own assignors (got {assignor!r})")


def _classic_verdict(report: ScenarioReport, finding: str, mutated: bool) -> tuple[str, bool]:
    """The run's verdict in one line, and whether it is as expected (exit status 0)."""
    twice = report.totals["double_owned_instants"]
    if not twice:
        return "no violation: no partition had two owners", True
    if finding == "exclusive_ownership" and not mutated:
        return (f"as in Kafka (docs/specification.md): two owners at {twice} instant(s), the story this scenario "
                "reproduces", True)
    return f"VIOLATION: a partition had two owners at {twice} instant(s)", False


def _family_of(scenario: str) -> str | None:
    """The protocol a scenario name belongs to when --protocol is not given (the KIP-848 and migration stories
    have names of their own; a name shared with the classic stories stays classic)."""
    from groupspec.reference.sim import CONSUMER_SCENARIOS as CONSUMER, MIGRATION_SCENARIOS, SCENARIOS as CLASSIC

    if scenario in CLASSIC:
        return None
    if scenario in CONSUMER:
        return "consumer"
    if scenario in MIGRATION_SCENARIOS:
        return "classic-to-consumer"
    return None


def _list_all(as_json: bool) -> None:
    """Every built-in scenario of every family, with the protocol it runs by default."""
    from groupspec.reference.sim import CONSUMER_SCENARIOS as CONSUMER, MIGRATION_SCENARIOS, SCENARIOS as CLASSIC

    rows = [(s.name, s.summary, s.default_protocol, "") for s in CLASSIC.values()]
    rows += [(n, summary, "consumer", "--protocol consumer") for n, summary in CONSUMER.items()]
    rows += [(n, summary, "classic-to-consumer", "--protocol classic-to-consumer")
             for n, summary in MIGRATION_SCENARIOS.items()]
    if as_json:
        emit_json([{"name": n, "summary": summ, "default_protocol": proto} for n, summ, proto, _ in rows])
        return
    from rich.markup import escape
    from rich.table import Table

    from ._common import make_console

    table = Table(title="built-in scenarios (groupspec simulate NAME)")
    table.add_column("scenario", no_wrap=True)
    table.add_column("protocol", no_wrap=True)
    table.add_column("what happens")
    for n, summ, proto, flag in rows:
        table.add_row(n, proto + (f" ({flag})" if flag and n in CLASSIC else ""), escape(summ))
    make_console().print(table)


def replay_command(report: ScenarioReport, faults: str = "", delay: str = "1-5", loss: float = 0.0, duplicate: float = 0.0,
                   reorder: float = 0.0, failover_at: int | None = None) -> str:
    """The command that runs ``report``'s scenario again exactly: every option that shapes the run."""
    import shlex

    words = ["groupspec", "simulate", report.scenario, "--protocol", report.protocol, "--assignor", report.assignor,
             "--members", str(report.members), "--partitions", str(report.partitions), "--seed", str(report.seed)]
    if faults:
        words += ["--mutants", faults]
    if delay != "1-5":
        words += ["--delay", delay]
    for name, value in (("--loss", loss), ("--duplicate", duplicate), ("--reorder", reorder)):
        if value:
            words += [name, repr(value)]
    if failover_at is not None:
        words += ["--failover-at", str(failover_at)]
    return " ".join(shlex.quote(w) for w in words)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _in_the_protocols_words(protocol: str, t: dict[str, int]) -> str:
    """One sentence saying what the totals mean, in the vocabulary of the protocol's history (docs/learn/)."""
    n, revoked, moved = t["rebalances"], t["partitions_revoked"], t["partitions_moved"]
    if n == 0:
        return ("no rebalance: the group did not notice (static membership keeps a member's place "
                "for its session timeout)" if protocol.startswith("static") else "no rebalance")
    if protocol in ("eager", "static"):
        return (f"stop-the-world: in {_plural(n, 'eager rebalance')} every member revoked everything it owned "
                f"before rejoining ({_plural(revoked, 'partition')} revoked, {moved} moved)")
    if protocol in ("cooperative", "static-cooperative"):
        return (f"two-phase revoke/assign: {_plural(n, 'rebalance')}, only the partitions that move are revoked, "
                f"in one round, and assigned in the next ({_plural(revoked, 'partition')} revoked, {moved} moved)")
    if protocol == "connect":
        return (f"scheduled rebalance delay: {_plural(n, 'rebalance')}; a departed worker's tasks wait for it "
                f"until the delay ends ({moved} moved)")
    return ""


def _print_report(report: ScenarioReport, replay: str) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    click.echo(
        f"scenario {report.scenario}  protocol {report.protocol}  assignor {report.assignor}  "
        f"members {report.members}  partitions {report.partitions}  seed {report.seed}"
    )
    click.echo(f"(replay: {replay})")
    click.echo()
    click.echo("timeline")
    for ts, text in sorted(report.timeline, key=lambda x: x[0]):
        click.echo(f"  {ts / 1000:9.3f}s  {text}")
    click.echo()
    t = report.totals
    table = Table(title=f"time each partition had no owner ({t['measured_from_ms'] / 1000:.1f}s to {t['end_ms'] / 1000:.1f}s)")
    table.add_column("partition")
    table.add_column("seconds without owner", justify="right")
    table.add_column("owner at end")
    for tp, ms in sorted(report.ownership.unowned_ms.items()):
        owners = report.ownership.final_owners.get(tp, [])
        table.add_row(f"{tp[0]}-{tp[1]}", f"{ms / 1000:.3f}", ", ".join(owners) or "-")
    console.print(table)
    totals = Table(title="totals")
    totals.add_column("measure")
    totals.add_column("value", justify="right")
    totals.add_row("rebalances (generations formed)", str(t["rebalances"]))
    totals.add_row("partitions revoked or lost", str(t["partitions_revoked"]))
    totals.add_row("partitions paused (ever without owner)", str(t["partitions_paused"]))
    totals.add_row("partitions moved to another member", str(t["partitions_moved"]))
    totals.add_row("partition-seconds without an owner", f"{t['partition_seconds_without_owner']:.3f}")
    totals.add_row("instants a partition had two owners", str(t["double_owned_instants"]))
    totals.add_row("protocol messages", str(t["protocol_messages"]))
    console.print(totals)
    summary = _in_the_protocols_words(report.protocol, t)
    if summary:
        click.echo(summary)
    for d in report.ownership.double_owned[:5]:
        console.print(f"[red]two owners[/red] at {d['ts_ms'] / 1000:.3f}s: partition "
                      f"{d['partition'][0]}-{d['partition'][1]} owned by {', '.join(d['owners'])}")


def _judged(trace_path: str | None, events: list[dict[str, Any]]) -> list[str]:
    """The run's trace written to ``--trace`` (if asked) and judged by the one trace checker (groupspec.trace) on
    exclusive ownership and commit fencing: one line per violation."""
    from groupspec.trace import SAFETY_CHECKS, violations_of

    if trace_path is not None:
        from groupspec.reference.sim import trace

        with atomic_output(trace_path) as tmp:
            trace.write_trace(tmp, events)
    return [str(v) for v in violations_of(events, SAFETY_CHECKS)]


def _simulate_consumer(scenario: str | None, assignor: str | None, members: int, partitions: int, seed: int, faults: str,
                       trace_path: str | None, as_json: bool, net: Any = None) -> None:
    """`--protocol consumer`: the KIP-848 driver (groupspec.reference.sim.consumer_sim), judged by its trace."""
    from groupspec.reference.sim import CONSUMER_SCENARIOS as SCENARIOS, ConsumerScenarioError, run_consumer_scenario

    if scenario is None:
        raise UserError(f"missing SCENARIO; choose from {', '.join(SCENARIOS)} (groupspec simulate --list)")
    fault_set = frozenset(f.strip() for f in faults.split(",") if f.strip())
    try:
        report = run_consumer_scenario(scenario, members, partitions, seed, assignor, fault_set, net)
    except ConsumerScenarioError as e:
        raise UserError(_naming_the_option(str(e))) from None
    violations = _judged(trace_path, report.trace)
    if as_json:
        emit_json({**report.to_json(), "violations": violations})
        return
    network, again = _network_note(net, seed)
    click.echo(f"simulate {scenario} --protocol consumer: {members} consumers, {partitions} partitions, seed {seed}"
               f"{network} (replay with {again})")
    for line in report.events:
        click.echo(line)
    click.echo(f"heartbeats {report.heartbeats:,}, group epoch {report.group_epoch}, partitions moved {report.moved}, "
               f"unowned partition-seconds {report.unowned_partition_ms / 1000:.1f}")
    if report.rejected_commits:
        click.echo("rejected commits: " + ", ".join(f"{k} x{v}" for k, v in sorted(report.rejected_commits.items())))
    click.echo("final assignment: " + "; ".join(f"{m}={ps}" for m, ps in report.assignment.items()))
    if violations:
        click.echo(f"VIOLATIONS ({len(violations)}): {violations[0]}")
        raise click.exceptions.Exit(1)
    click.echo("no violation: exclusive ownership and commit fencing held throughout")


def _network_note(net: Any, seed: int) -> tuple[str, str]:
    """The run's network for the header, and the options that replay the run."""
    network, again = "", f"--seed {seed}"
    if net is not None:
        network = (f", network {net.min_delay_ms}-{net.max_delay_ms} ms, loss {net.loss:g}, duplicate {net.duplicate:g}, "
                   f"reorder {net.reorder:g}")
        again += (f" --delay {net.min_delay_ms}-{net.max_delay_ms} --loss {net.loss:g} --duplicate {net.duplicate:g} "
                  f"--reorder {net.reorder:g}")
    return network, again


def _simulate_migration(scenario: str | None, members: int, partitions: int, seed: int, trace_path: str | None,
                        as_json: bool, net: Any = None) -> None:
    """`--protocol classic-to-consumer`: the online upgrade (groupspec.reference.sim.migration_sim), judged by its
    trace."""
    from groupspec.reference.sim import (
        EXPECT_VIOLATIONS, MIGRATION_SCENARIOS, MigrationScenarioError, run_migration_scenario,
    )

    if scenario is None:
        raise UserError(f"missing SCENARIO; choose from {', '.join(MIGRATION_SCENARIOS)} (groupspec simulate --list)")
    try:
        report = run_migration_scenario(scenario, members, partitions, seed, network=net)
    except MigrationScenarioError as e:
        raise UserError(_naming_the_option(str(e))) from None
    violations = _judged(trace_path, report.trace)
    if as_json:
        emit_json({**report.to_json(), "violations": violations})
        return
    network, again = _network_note(net, seed)
    click.echo(f"simulate {scenario} --protocol classic-to-consumer: {members} consumers, {partitions} partitions, "
               f"seed {seed}{network} (replay with {again})")
    for line in report.events:
        click.echo(line)
    click.echo(f"group type at the end: {report.group_type}, group epoch {report.group_epoch}, "
               f"unowned partition-seconds {report.unowned_partition_ms / 1000:.1f}")
    click.echo("final assignment: " + "; ".join(f"{m}={ps}" for m, ps in report.assignment.items()))
    if scenario in EXPECT_VIOLATIONS:
        if not violations:
            click.echo("Kafka's double ownership was NOT reproduced"
                       + (" (its timing is the step-answered run's: a network moves the window)" if net is not None else ""))
            raise click.exceptions.Exit(1)
        click.echo(f"as in Kafka (docs/migration.md): the trace checker finds {len(violations)} violation(s), "
                   f"first {violations[0]}")
        return
    if violations:
        click.echo(f"VIOLATIONS ({len(violations)}): {violations[0]}")
        raise click.exceptions.Exit(1)
    click.echo("no violation: exclusive ownership and commit fencing held throughout")
