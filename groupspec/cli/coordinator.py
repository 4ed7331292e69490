"""`groupspec coordinator`: drive the reference group coordinator.

* ``replay SCRIPT.jsonl``: run a coordinator conformance script (contract
  ``coordinator-script.md``) and print the transcript, JSON Lines on stdout. Exit 0 when the
  script ran, 2 with one line on stderr naming the line number when the script is malformed.
* ``find GROUP_ID``: the ``__consumer_offsets`` partition that hosts a group's coordinator.
"""
from __future__ import annotations

import sys

import click

from groupspec.reference.coordinator import FAULTS, java_string_hash, partition_for
from groupspec.reference.replay import ScriptError, run_script

from ._common import UserError, bad_input_probes, emit_json


def register(group: click.Group) -> None:
    group.add_command(coordinator)


@click.group()
def coordinator() -> None:
    """The reference group coordinator (broker side of the classic protocol)."""


@bad_input_probes(["no-such-script.jsonl"], ["."])
@coordinator.command()
@click.argument("script", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--fault", "faults", multiple=True, type=click.Choice(sorted(FAULTS)),
              help="Run a deliberately broken coordinator (mutation testing only). Repeatable.")
def replay(script: str, faults: tuple[str, ...]) -> None:
    """Run SCRIPT (JSON Lines; '-' for stdin) and print the coordinator's transcript."""
    text = _read(script)
    try:
        lines = run_script(text, faults=frozenset(faults))
    except ScriptError as e:
        raise UserError(f"{script}: {e}") from None
    sys.stdout.write("".join(line + "\n" for line in lines))


def _read(path: str) -> str:
    try:
        if path == "-":
            return sys.stdin.read()
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory") from None
    except UnicodeDecodeError as e:
        raise UserError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read ({e.strerror})") from None


@bad_input_probes(["g", "--offsets-partitions", "0"])
@coordinator.command()
@click.argument("group_id")
@click.option("--offsets-partitions", "partitions", type=int, default=50, show_default=True,
              help="Partition count of __consumer_offsets (offsets.topic.num.partitions).")
@click.option("--json", "as_json", is_flag=True, help="Print the hash and partition as JSON.")
def find(group_id: str, partitions: int, as_json: bool) -> None:
    """Print the __consumer_offsets partition of GROUP_ID (Utils.abs(hashCode) % N)."""
    if partitions < 1:
        raise UserError(f"--offsets-partitions must be >= 1, got {partitions}")
    partition = partition_for(group_id, partitions)
    if as_json:
        emit_json({"group_id": group_id, "hash": java_string_hash(group_id),
                   "offsets_partitions": partitions, "partition": partition})
    else:
        click.echo(str(partition))

