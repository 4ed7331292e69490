"""Presentation of ``groupspec coordinator replay SCRIPT --against kafka`` (the comparison lives in groupspec.oracle)."""
from __future__ import annotations

import json
from typing import Any

from groupspec.reference.sim import ScriptError

from ._common import UserError, emit_json, make_console


def replay_against_kafka(script: str, text: str, faults: frozenset[str], as_json: bool,
                         transcript: list[str] | None = None) -> int:
    from groupspec.oracle import KafkaOracle, OracleError
    from groupspec.oracle import TranscriptError, compare_script
    from groupspec.reference.sim import family_of, read_consumer_script

    family = family_of(text)
    consumer = family.name == "consumer"
    try:
        if consumer:  # the reference's own reader checks the script first (one-line error naming the line)
            read_consumer_script(text, self_epochs=True)  # every field's type, "$self" epochs allowed
            if "$self" not in text:
                family.run(text, faults)
        with KafkaOracle() as oracle:
            if transcript is not None:
                from groupspec.oracle import compare_transcript

                result = compare_transcript(text, transcript, oracle)
            elif consumer:
                from groupspec.oracle import compare_consumer_script

                result = compare_consumer_script(text, oracle, faults=faults)
            else:
                result = compare_script(text, oracle, faults=faults)
    except ScriptError as e:
        raise UserError(f"{script}: {e}") from None
    except TranscriptError as e:
        raise UserError(f"{script}: --transcript: {e}") from None
    except (KeyError, TypeError, ValueError) as e:  # a safety net: the readers above check every field's type
        raise UserError(f"{script}: a step the Kafka oracle cannot send ({e})") from None
    except OracleError as e:
        raise UserError(f"Kafka oracle: {e}") from None
    if as_json:
        emit_json({"script": script, **({"transcript": True} if transcript is not None else {}), **result.to_dict()})
        return 1 if result.unexplained else 0
    _print(script, result, "transcript" if transcript is not None else "reference")
    return 1 if result.unexplained else 0


def _short(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _print(script: str, result: Any, side: str = "reference") -> None:
    from rich.markup import escape
    from rich.table import Table

    console = make_console()
    table = Table(title=f"{script}: the {side} vs Apache Kafka's group coordinator "
                        f"({result.compared} of {result.steps} steps compared)")
    table.add_column("line", justify="right")
    table.add_column("at ms", justify="right")
    table.add_column("what")
    table.add_column("differs in")
    table.add_column(side)
    table.add_column("Kafka")
    table.add_column("explained by")
    for d in result.differences:
        verdict = d.explained_by or "[red]UNEXPLAINED[/red]"
        table.add_row(str(d.line), str(d.at), d.what, escape(", ".join(d.fields)), escape(_short(d.reference)),
                      escape(_short(d.kafka)), verdict)
    if result.differences:
        console.print(table)
    n = len(result.unexplained)
    if result.stopped:
        console.print(f"stopped at {escape(result.stopped)}")
    if n:
        console.print(f"[red]{n} unexplained difference(s)[/red]: fix the {'coordinator that wrote the transcript' if side == 'transcript' else side} or document the abstraction "
                      "(docs/conformance.md)")
    else:
        console.print(f"no unexplained difference ({len(result.differences)} explained, "
                      f"{result.compared} of {result.steps} steps compared)")
