"""Presentation of ``groupspec coordinator replay SCRIPT --against kafka`` (the comparison lives in groupspec.oracle)."""
from __future__ import annotations

import json
from typing import Any

from groupspec.reference.replay import ScriptError

from ._common import UserError, emit_json, make_console


def replay_against_kafka(script: str, text: str, faults: frozenset[str], as_json: bool) -> int:
    from groupspec.oracle import KafkaOracle, OracleError
    from groupspec.oracle import compare_script
    from groupspec.reference.consumer_replay import is_consumer_script

    consumer = is_consumer_script(text)
    try:
        if consumer:  # the reference's own reader checks the script first (one-line error naming the line)
            from groupspec.reference.consumer_group import COORDINATOR_FAULTS
            from groupspec.reference.consumer_replay import run_consumer_script

            if "$self" not in text:
                run_consumer_script(text, frozenset(faults) & COORDINATOR_FAULTS)
        with KafkaOracle() as oracle:
            if consumer:
                from groupspec.oracle import compare_consumer_script

                result = compare_consumer_script(text, oracle, faults=faults)
            else:
                result = compare_script(text, oracle, faults=faults)
    except ScriptError as e:
        raise UserError(f"{script}: {e}") from None
    except (KeyError, TypeError, ValueError) as e:  # a "$self"-epoch consumer script the reference's reader skipped
        raise UserError(f"{script}: a malformed step ({type(e).__name__}: {e})") from None
    except OracleError as e:
        raise UserError(f"Kafka oracle: {e}") from None
    if as_json:
        emit_json({"script": script, **result.to_dict()})
        return 1 if result.unexplained else 0
    _print(script, result)
    return 1 if result.unexplained else 0


def _short(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _print(script: str, result: Any) -> None:
    from rich.markup import escape
    from rich.table import Table

    console = make_console()
    table = Table(title=f"{script}: the reference vs Apache Kafka's group coordinator "
                        f"({result.compared} of {result.steps} steps compared)")
    table.add_column("line", justify="right")
    table.add_column("at ms", justify="right")
    table.add_column("what")
    table.add_column("differs in")
    table.add_column("reference")
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
        console.print(f"[red]{n} unexplained difference(s)[/red]: fix the reference or document the abstraction "
                      "(docs/conformance.md)")
    else:
        console.print(f"no unexplained difference ({len(result.differences)} explained, "
                      f"{result.compared} of {result.steps} steps compared)")
