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

from groupspec.reference.replay import Step, parse_script, run_script

from .abstractions import diverges, explain
from .process import KafkaOracle
from .script import UNSUPPORTED, KafkaScriptRunner

__all__ = ["Difference", "Comparison", "compare_script", "step_chunks"]


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


def compare_script(text: str, oracle: KafkaOracle, faults: frozenset[str] = frozenset()) -> Comparison:
    """Run a classic coordinator script through the reference (with ``faults``) and Kafka's coordinator; compare."""
    steps: list[Step] = [s for s in parse_script(text) if not (s.kind == "config" and s.at is None)]
    ref = step_chunks(run_script(text, faults=faults))
    kafka = step_chunks(KafkaScriptRunner(oracle).run(parse_script(text)))
    assert len(ref) == len(kafka) == len(steps), (len(ref), len(kafka), len(steps))
    out = Comparison(steps=len(steps), compared=len(steps))
    for i, (step, (r_answers, r_state), (k_answers, k_state)) in enumerate(zip(steps, ref, kafka)):
        at = step.at or 0
        unsupported = [a for a in k_answers if "unsupported" in a]
        if unsupported:
            why = unsupported[0]["unsupported"]
            out.differences.append(Difference(step.line, at, "unsupported", r_answers, UNSUPPORTED[why],
                                              explained_by=f"unsupported:{why}"))
            if why in ("config", "mark_dead"):
                out.compared = i + 1
                out.stopped = f"line {step.line}: {UNSUPPORTED[why]}; the rest of the script is not compared"
                break
            k_answers = [a for a in k_answers if "unsupported" not in a]
            r_answers = [a for a in r_answers if a.get("request") != "FindCoordinator"]
        r_sorted = sorted((_norm_answer(a) for a in r_answers), key=_key)
        k_sorted = sorted((_norm_answer(a) for a in k_answers), key=_key)
        found = []
        if r_sorted != k_sorted:
            found.append(Difference(step.line, at, "answer", r_sorted, k_sorted))
        rs, ks = _norm_state(r_state), _norm_state(k_state)
        if rs != ks:
            found.append(Difference(step.line, at, "state", rs, ks))
        for d in found:
            d.explained_by = explain(d)
            out.differences.append(d)
        stop = next((d for d in found if diverges(d.explained_by)), None)
        if stop is not None:
            out.compared = i + 1
            out.stopped = f"line {step.line}: {stop.explained_by}; the rest of the script is not compared"
            break
    return out
