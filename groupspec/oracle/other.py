"""Another coordinator's transcript judged by Kafka's (docs/oracle.md, "Checking another coordinator").

The comparison of ``groupspec coordinator replay SCRIPT --against kafka`` with the reference's transcript replaced
by one the caller brings: the transcript of SCRIPT on any coordinator (a simulator, a proxy, a Kafka-compatible
broker's coordinator), written in the reference's transcript format (docs/formats.md: one state line ends every
step; member ids as the aliases of the script). Differences are compared and explained exactly as the reference's
are (``compare.compare_step`` and ``consumer.compare_consumer_step``: the same documented abstractions), except
``write-points``, which is known only of the reference's store: a transcript from a coordinator that fails another
write than Kafka's shows that as an unexplained difference.
"""
from __future__ import annotations

import json
from collections.abc import Iterable

from groupspec.reference.sim import Step, parse_script

from .compare import Comparison, compare_step, step_chunks
from .process import KafkaOracle
from .script import KafkaScriptRunner

__all__ = ["compare_transcript", "TranscriptError"]


class TranscriptError(ValueError):
    """The transcript does not have one step per script step (or is not JSON lines)."""


def _per_step(lines: list[str], is_state: str) -> list[list[str]]:
    steps: list[list[str]] = []
    current: list[str] = []
    for n, line in enumerate(lines, 1):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise TranscriptError(f"transcript line {n} is not JSON ({e.msg})") from None
        if not isinstance(obj, dict):
            raise TranscriptError(f"transcript line {n} is not a JSON object")
        current.append(line)
        if is_state in obj and "to" not in obj and "event" not in obj:
            steps.append(current)
            current = []
    return steps


def compare_transcript(text: str, transcript: Iterable[str], oracle: KafkaOracle) -> Comparison:
    """Compare ``transcript`` (another coordinator's answers to script ``text``) with Kafka 4.3.1's, step by step."""
    from groupspec.reference.sim import is_consumer_script

    lines = [ln for ln in (raw.strip() for raw in transcript) if ln]
    if is_consumer_script(text):
        from .consumer import ConsumerPair, compare_consumer_step, parse_steps

        cfg, csteps = parse_steps(text)
        mine = _per_step(lines, "group_epoch")
        if len(mine) != len(csteps):
            raise TranscriptError(f"the transcript has {len(mine)} steps (state lines), the script {len(csteps)}")
        pair = ConsumerPair(cfg, oracle)
        out = Comparison(steps=len(csteps), compared=len(csteps))
        for i, ((n, obj), m) in enumerate(zip(csteps, mine)):
            found, stopped = compare_consumer_step(n, obj, m, pair._kafka_step(obj))
            out.differences += found
            if stopped:
                out.compared, out.stopped = i + 1, stopped
                break
        return out
    parsed = parse_script(text)
    steps: list[Step] = [s for s in parsed if not (s.kind == "config" and s.at is None)]
    try:
        chunks = step_chunks(lines)
    except json.JSONDecodeError as e:
        raise TranscriptError(f"the transcript is not JSON lines ({e.msg})") from None
    if len(chunks) != len(steps):
        raise TranscriptError(f"the transcript has {len(chunks)} steps (state lines), the script {len(steps)}")
    kafka = step_chunks(KafkaScriptRunner(oracle).run(parsed))
    out = Comparison(steps=len(steps), compared=len(steps))
    for i, (step, r, k) in enumerate(zip(steps, chunks, kafka)):
        found, stopped = compare_step(step, r, k)
        out.differences += found
        if stopped:
            out.compared, out.stopped = i + 1, stopped
            break
    return out
