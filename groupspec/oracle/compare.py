"""The reference's transcript and Kafka's, step by step: where the answers or the group's state differ.

Both transcripts end every step with one state line, so they split into the same steps. Within a step the
answers are compared as a set keyed by recipient and request (two answers released at the same instant have no
order in Kafka's runtime that a client could see), a JoinGroup's member list and the state's member and pending
lists as sets (Kafka keeps members in a hash map). Member ids are compared as aliases: "up to renaming".
Every difference is then looked up among the documented abstractions (``abstractions.py``); one that none explains
is *unexplained*.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from groupspec.reference.sim import Replayer, Step, parse_script

from .abstractions import diverges, explain
from .process import KafkaOracle
from .script import UNSUPPORTED, KafkaScriptRunner

__all__ = ["Difference", "Comparison", "compare_script", "compare_step", "step_chunks"]


@dataclass
class Difference:
    line: int              # the script line of the step
    at: int
    what: str              # "answer", "state" or "unsupported"
    reference: Any
    kafka: Any
    explained_by: str | None = None

    @property
    def fields(self) -> list[str]:
        """Which fields differ (for answers: of the answers paired by recipient and request)."""
        if self.what == "state":
            return sorted(k for k in set(self.reference) | set(self.kafka) if self.reference.get(k) != self.kafka.get(k))
        if self.what != "answer":
            return []
        ref = {(a.get("to"), a.get("request")): a for a in self.reference}
        kaf = {(a.get("to"), a.get("request")): a for a in self.kafka}
        out: set[str] = set()
        for key in set(ref) | set(kaf):
            if key not in ref or key not in kaf:
                out.add(f"{key[1]} to {key[0]} " + ("only from Kafka" if key in kaf else "only from the reference"))
                continue
            r, k = ref[key], kaf[key]
            out.update(f"{key[1]}.{f}" for f in set(r) | set(k) if r.get(f) != k.get(f))
        return sorted(out)

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "at": self.at, "what": self.what, "fields": self.fields,
                "reference": self.reference, "kafka": self.kafka, "explained_by": self.explained_by}


@dataclass
class Comparison:
    steps: int
    compared: int                      # steps compared (all, unless an unsupported step ended the comparison)
    differences: list[Difference] = field(default_factory=list)
    stopped: str | None = None         # why the comparison ended early

    @property
    def unexplained(self) -> list[Difference]:
        return [d for d in self.differences if d.explained_by is None]

    def to_dict(self) -> dict[str, Any]:
        return {"steps": self.steps, "compared": self.compared, "stopped": self.stopped,
                "unexplained": len(self.unexplained), "differences": [d.to_dict() for d in self.differences]}


def step_chunks(lines: Iterable[str]) -> list[tuple[list[dict[str, Any]], dict[str, Any]]]:
    """Transcript lines -> one (answers, state) pair per step."""
    chunks: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []
    answers: list[dict[str, Any]] = []
    for line in lines:
        obj = json.loads(line)
        if "state" in obj and "to" not in obj:
            chunks.append((answers, obj))
            answers = []
        else:
            answers.append(obj)
    return chunks


def step_chunks_consumer(lines: Iterable[str]) -> list[tuple[list[dict[str, Any]], dict[str, Any]]]:
    """A consumer-protocol transcript -> one (answers and events, state) pair per step."""
    chunks: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []
    answers: list[dict[str, Any]] = []
    for line in lines:
        obj = json.loads(line)
        if "group_epoch" in obj:
            chunks.append((answers, obj))
            answers = []
        else:
            answers.append(obj)
    return chunks


def _norm_answer(a: dict[str, Any]) -> dict[str, Any]:
    a = dict(a)
    if isinstance(a.get("members"), list) and a.get("request") == "JoinGroup":
        a["members"] = sorted(a["members"], key=str)
    if isinstance(a.get("offsets"), list):
        a["offsets"] = sorted(a["offsets"])
    return a


def _norm_state(s: dict[str, Any]) -> dict[str, Any]:
    s = dict(s)
    for k in ("members", "pending"):
        if isinstance(s.get(k), list):
            s[k] = sorted(s[k], key=str)
    return s


def _key(a: dict[str, Any]) -> str:
    return json.dumps([a.get("to"), a.get("request"), a], sort_keys=True)


class TrackingReplayer(Replayer):
    """The reference's script runner, noting the steps at which an armed store failure (``store_fails``) struck."""

    def __init__(self, faults: frozenset[str] = frozenset()) -> None:
        super().__init__(faults=faults)
        self.store_consumed: list[int] = []

    def _run_step(self, step: Step) -> None:
        armed = self.coordinator is not None and getattr(self.coordinator, "_store_failure", None) is not None
        super()._run_step(step)
        if armed and getattr(self.coordinator, "_store_failure", None) is None:
            self.store_consumed.append(step.line)


def write_points_differ(ref: TrackingReplayer, kafka: KafkaScriptRunner, step: Step) -> bool:
    """Does a ``store_fails`` explain this step's difference? Yes if the armed failure struck different steps on
    the two sides (Kafka 4.3.1 writes at more points), or struck this step on both sides at a write whose failure
    the reference does not handle as Kafka does: Kafka makes every operation atomic with its write (a failed
    write reverts the whole operation and answers the mapped error), the reference handles a failure as Kafka
    does only at the leader's SyncGroup and a static member's replacement (other writes, Scala-style, only log
    it)."""
    r = {n for n in ref.store_consumed if n <= step.line}
    k = {n for n in kafka.store_consumed if n <= step.line}
    if r != k:
        return True
    if step.line in k:
        handled = step.kind == "SyncGroup" or (step.kind == "JoinGroup" and step.body.get("instance_id") is not None)
        return not handled
    return False


def compare_step(step: Step, ref: tuple[list[dict[str, Any]], dict[str, Any]],
                 kafka: tuple[list[dict[str, Any]], dict[str, Any]],
                 write_points: bool = False) -> tuple[list[Difference], str | None]:
    """One step's answers and state from both sides: the differences (each explained or not) and, if the
    comparison must end here, why. ``write_points``: an armed store failure struck different writes on the two
    sides at or before this step."""
    (r_answers, r_state), (k_answers, k_state) = ref, kafka
    at = step.at or 0
    found: list[Difference] = []
    unsupported = [a for a in k_answers if "unsupported" in a]
    if unsupported:
        why = unsupported[0]["unsupported"]
        found.append(Difference(step.line, at, "unsupported", r_answers, UNSUPPORTED[why],
                                explained_by=f"unsupported:{why}"))
        if why in ("config", "mark_dead"):
            return found, f"line {step.line}: {UNSUPPORTED[why]}; the rest of the script is not compared"
        k_answers = [a for a in k_answers if "unsupported" not in a]
        r_answers = [a for a in r_answers if a.get("request") != "FindCoordinator"]
    r_sorted = sorted((_norm_answer(a) for a in r_answers), key=_key)
    k_sorted = sorted((_norm_answer(a) for a in k_answers), key=_key)
    new = []
    if r_sorted != k_sorted:
        new.append(Difference(step.line, at, "answer", r_sorted, k_sorted))
    rs, ks = _norm_state(r_state), _norm_state(k_state)
    if rs != ks:
        new.append(Difference(step.line, at, "state", rs, ks))
    for d in new:
        d.explained_by = "write-points" if write_points else explain(d)
    found += new
    stop = next((d for d in new if diverges(d.explained_by) or d.explained_by == "write-points"), None)
    for d in new:  # the state after a step whose answer already diverged is its consequence
        if stop is not None and d.explained_by is None:
            d.explained_by = f"{stop.explained_by} (same step)"
    if stop is not None:
        return found, f"line {step.line}: {stop.explained_by}; the rest of the script is not compared"
    return found, None


def compare_script(text: str, oracle: KafkaOracle, faults: frozenset[str] = frozenset()) -> Comparison:
    """Run a classic coordinator script through the reference (with ``faults``) and Kafka's coordinator; compare."""
    parsed = parse_script(text)
    steps: list[Step] = [s for s in parsed if not (s.kind == "config" and s.at is None)]
    ref_runner, kafka_runner = TrackingReplayer(faults), KafkaScriptRunner(oracle)
    ref = step_chunks(ref_runner.run(parsed))
    kafka = step_chunks(kafka_runner.run(parsed))
    assert len(ref) == len(kafka) == len(steps), (len(ref), len(kafka), len(steps))
    out = Comparison(steps=len(steps), compared=len(steps))
    for i, (step, r, k) in enumerate(zip(steps, ref, kafka)):
        found, stopped = compare_step(step, r, k, write_points=write_points_differ(ref_runner, kafka_runner, step))
        out.differences += found
        if stopped:
            out.compared, out.stopped = i + 1, stopped
            break
    return out
