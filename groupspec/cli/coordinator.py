"""`groupspec coordinator`: drive the reference group coordinator.

* ``replay SCRIPT.jsonl``: run a coordinator conformance script (contract
  ``coordinator-script.md``) and print the transcript, JSON Lines on stdout. Exit 0 when the
  script ran, 2 with one line on stderr naming the line number when the script is malformed.
* ``find GROUP_ID``: the ``__consumer_offsets`` partition that hosts a group's coordinator.
"""
from __future__ import annotations

import sys

from typing import TYPE_CHECKING

import click

from groupspec.reference.classic import COORDINATOR_FAULTS as FAULTS, MAX_OFFSETS_PARTITIONS, java_string_hash, partition_for
from groupspec.reference.sim import ScriptError, run_script

if TYPE_CHECKING:
    from groupspec.serve import SessionCheck

from ._common import CommandGroup, UserError, bad_input_probes, emit_json, read_text


def register(group: click.Group) -> None:
    group.add_command(coordinator)


@click.group(cls=CommandGroup)
def coordinator() -> None:
    """The reference group coordinator (broker side of the classic protocol)."""


@bad_input_probes(["no-such-script.jsonl"], ["."], ["/dev/null"])
@coordinator.command()
@click.argument("script", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--fault", "faults", multiple=True, type=click.Choice(sorted(FAULTS)),
              help="Run a deliberately broken coordinator (mutation testing only). Repeatable.")
@click.option("--against", type=click.Choice(["kafka"]), default=None,
              help="Also run SCRIPT through Apache Kafka's own group coordinator (the Kafka oracle) and print, "
                   "step by step, where its answers or the group's state differ from the reference's. "
                   "Exit 1 if a difference is not a documented abstraction.")
@click.option("--json", "as_json", is_flag=True, help="With --against: the comparison as one JSON document.")
@click.option("--transcript", type=click.Path(dir_okay=False), default=None,
              help="With --against kafka: compare this transcript of SCRIPT (another coordinator's answers, in the "
                   "reference's transcript format) with Kafka's, instead of the reference's.")
def replay(script: str, faults: tuple[str, ...], against: str | None, as_json: bool, transcript: str | None) -> None:
    """Run SCRIPT (JSON Lines; '-' for stdin) and print the coordinator's transcript.

    \b
    Examples:
      groupspec coordinator replay tests/replay/01_two_step_join.jsonl
      groupspec coordinator replay SCRIPT.jsonl --against kafka   (Kafka 4.3.1's own coordinator beside it)
      groupspec coordinator replay SCRIPT.jsonl --fault no_generation_bump --json
      groupspec coordinator replay SCRIPT.jsonl --against kafka --transcript mine.jsonl   (judge another coordinator)
    """
    text = read_text(script)
    if _no_steps(text):
        raise UserError(f"{script}: empty script: no steps to replay (JSON Lines, one step per line: "
                        "docs/coordinator.md)")
    if transcript is not None and against != "kafka":
        raise UserError("--transcript needs --against kafka (it is compared with Kafka's transcript)")
    if against == "kafka":
        from ._oracle import replay_against_kafka

        other = read_text(transcript).splitlines() if transcript is not None else None
        sys.exit(replay_against_kafka(script, text, frozenset(faults), as_json, other))
    if as_json:
        raise UserError("--json needs --against kafka (the transcript is JSON Lines already)")
    try:
        lines = run_script(text, faults=frozenset(faults))
    except ScriptError as e:
        raise UserError(f"{script}: {e}") from None
    sys.stdout.write("".join(line + "\n" for line in lines))


def _no_steps(text: str) -> bool:
    """No line of a script is a step: it is empty, or holds only blank lines and ``#`` comments."""
    return not any(s and not s.startswith("#") for s in (line.strip() for line in text.splitlines()))


@bad_input_probes(["g", "--offsets-partitions", "0"], ["g", "--offsets-partitions", str(2**31)])
@coordinator.command()
@click.argument("group_id")
@click.option("--offsets-partitions", "partitions", type=int, default=50, show_default=True,
              help="Partition count of __consumer_offsets (offsets.topic.num.partitions).")
@click.option("--json", "as_json", is_flag=True, help="Print the hash and partition as JSON.")
def find(group_id: str, partitions: int, as_json: bool) -> None:
    """Print the __consumer_offsets partition of GROUP_ID (Utils.abs(hashCode) % N).

    \b
    Examples:
      groupspec coordinator find my-group
      groupspec coordinator find my-group --offsets-partitions 150 --json
    """
    if partitions < 1:
        raise UserError(f"--offsets-partitions must be >= 1, got {partitions}")
    if partitions > MAX_OFFSETS_PARTITIONS:  # as a script's offsets_partitions (docs/coordinator.md)
        raise UserError(f"--offsets-partitions must be at most {MAX_OFFSETS_PARTITIONS:,}, got {partitions}")
    partition = partition_for(group_id, partitions)
    if as_json:
        emit_json({"group_id": group_id, "hash": java_string_hash(group_id),
                   "offsets_partitions": partitions, "partition": partition})
    else:
        click.echo(str(partition))



@bad_input_probes(["no-such-script.jsonl", "no-such-transcript.jsonl"], [".", "."], ["/dev/null", "/dev/null"])
@coordinator.command()
@click.argument("script", type=click.Path(dir_okay=False))
@click.argument("transcript", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the verdicts as one JSON document.")
def check(script: str, transcript: str, as_json: bool) -> None:
    """Check a recorded session: replay SCRIPT against the reference and compare with TRANSCRIPT,
    then check TRANSCRIPT, read as a trace, against the invariants and the model.

    Exit status 0 when both hold, 1 when one does not, 2 when a file cannot be read, the script is
    malformed, or either is empty (e.g. `groupspec serve --transcript DIR` writes DIR/script.jsonl and DIR/transcript.jsonl).

    \b
    Examples:
      groupspec serve --port 9092 --transcript out/   (then, after the clients ran:)
      groupspec coordinator check out/script.jsonl out/transcript.jsonl
    """
    from groupspec.serve import MalformedTranscript, check_session

    script_text, transcript_text = read_text(script), read_text(transcript)
    if _no_steps(script_text):  # as replay and trace check: nothing to check is never "held"
        raise UserError(f"{script}: empty script: no steps to replay (JSON Lines, one step per line: "
                        "docs/coordinator.md)")
    if not transcript_text.strip():
        raise UserError(f"{transcript}: empty transcript: nothing to check")
    try:
        result = check_session(script_text, transcript_text)
    except ScriptError as e:
        raise UserError(f"{script}: {e}") from None
    except MalformedTranscript as e:  # a line that is not the format's ('#' comments and script steps: swapped?)
        raise UserError(f"{transcript}: {e}") from None
    if as_json:
        emit_json(result.to_dict())
    else:
        _print_check(result, script, transcript)
    sys.exit(0 if result.ok else 1)


def _print_check(result: SessionCheck, script: str, transcript: str) -> None:
    from rich.table import Table

    from ._common import make_console

    console = make_console()
    table = Table(title=f"{transcript}: {result.lines} transcript lines, {len(result.events)} trace events")
    table.add_column("check")
    table.add_column("verdict")
    table.add_column("detail")
    d = result.first_difference
    table.add_row("replay against the reference", "held" if result.replay_ok else "[red]differs[/red]",
                  f"{script} replays to every line" if d is None else f"line {d['line']} differs")
    groups = result.trace.to_dict().get("groups", [])
    for g in groups:
        tag = f"group {g['group']}: " if len(groups) > 1 else ""
        for p in g.get("properties", []):
            bad = p["verdict"] != "held"
            first = p["violations"][0] if p["violations"] else {}
            at = first.get("ts_ms", first.get("from_ms"))
            who = first.get("member") or " and ".join(first.get("members", []))
            table.add_row(tag + p["id"], f"[red]{p['verdict']}[/red]" if bad else p["verdict"],
                          "" if not first else f"at {at} ms: {first.get('reason', '')} {who}".replace("  ", " "))
        if result.holding is not None:
            h = result.holding
            table.add_row("one holder per partition (coordinator state)", "held" if not h else "[red]violated[/red]",
                          "" if not h else f"at {h[0]['at']} ms: {h[0]['partition']} held by {' and '.join(h[0]['members'])}")
        m = g.get("against_model")
        if m is not None:
            table.add_row(tag + "every event a step of the model", "held" if m["explained"] else "[red]violated[/red]",
                          f"{m['events']} events" if m["explained"] else str(m["first_unexplained"]))
    console.print(table)
    if d is not None:
        console.print(f"line {d['line']} recorded: {d['recorded']}")
        console.print(f"line {d['line']} replayed: {d['replayed']}")
