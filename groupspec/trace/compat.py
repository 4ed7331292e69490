"""The trace checker's findings as a flat list, the shape the conformance harness reads.

:func:`check_trace` runs :mod:`groupspec.trace.checker` (the project's one trace checker) and lists its
safety findings — ``exclusive_ownership``, ``commit_fencing``, ``generation_monotonic``,
``well_formed`` (and, with ``notes``, ``zombie_overlap``) — as :class:`Violation` records in trace
order. ``final=False`` reads the events as the prefix of a trace still being written (an overlap whose
owners have not yet shown whether one was a zombie is not reported). Completeness and convergence are
left out: the conformance harness judges those against the model itself. :func:`violations_of` keeps the
findings of the checks asked for: the simulators' stories (``groupspec simulate --protocol consumer`` and
``classic-to-consumer``) are judged on :data:`SAFETY_CHECKS`, exclusive ownership and commit fencing.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .runs import Run

__all__ = ["Violation", "check_trace", "violations_of", "TRACE_CHECKS", "SAFETY_CHECKS"]

TRACE_CHECKS = ("exclusive_ownership", "commit_fencing", "generation_monotonic", "well_formed")
SAFETY_CHECKS = ("exclusive_ownership", "commit_fencing")
TP = tuple[str, int]


@dataclass(frozen=True)
class Violation:
    """One finding: ``check`` is one of :data:`TRACE_CHECKS` (or ``zombie_overlap`` for a note)."""

    check: str
    ts_ms: int
    message: str
    members: tuple[str, ...] = ()
    partition: TP | None = None
    index: int = -1  # line of the event in the trace (1-based), -1 when unknown

    def __str__(self) -> str:
        return f"[{self.check}] at {self.ts_ms} ms: {self.message}"


def check_trace(events: Iterable[dict[str, Any]], notes: bool = False, final: bool = True) -> list[Violation]:
    run = Run("<trace>", 1e12, strict=False)
    for n, ev in enumerate(events, 1):
        if isinstance(ev, dict):
            run.feed(ev, n)
        else:
            run.bad_line(n, f"not a JSON object but {type(ev).__name__}")
    out: list[tuple[int, Violation]] = []
    for g in run.groups.values():
        g.finish(final=final)
        for d in g.exclusive:
            tp = (d["topic"], d["partition"])
            out.append((d["from_ms"], Violation(
                "exclusive_ownership", d["from_ms"],
                f"{tp[0]}-{tp[1]} is owned by both {d['members'][0]} and {d['members'][1]}, neither of them fenced",
                tuple(d["members"]), tp)))
        if notes:
            for d in g.zombie_overlaps:
                tp = (d["topic"], d["partition"])
                out.append((d["from_ms"], Violation(
                    "zombie_overlap", d["from_ms"],
                    f"{tp[0]}-{tp[1]} owned by {d['members'][0]} and {d['members'][1]}; {d['zombie']} was a zombie",
                    tuple(d["members"]), tp)))
        for d in g.commit_fencing:
            if d.get("reason") == "removed":
                msg = f"{d['member']}'s commit was accepted although the coordinator had removed it"
                out.append((d["ts_ms"], Violation("commit_fencing", d["ts_ms"], msg, (d["member"],), None, d["line"] or -1)))
                continue
            tp = (d["topic"], d["partition"])
            out.append((d["ts_ms"], Violation(
                "commit_fencing", d["ts_ms"],
                f"{d['member']}'s commit for {tp[0]}-{tp[1]} was accepted while {d['other']} owned it too "
                f"(since a later assignment)", (d["member"], d["other"]), tp, d["line"] or -1)))
        for d in g.generation:
            out.append((d["ts_ms"], Violation(
                "generation_monotonic", d["ts_ms"],
                f"{d['member']}'s generation went down from {d['from_generation']} to {d['to_generation']} without a reset",
                (d["member"],), None, d["line"] or -1)))
        for d in g.defects:
            ts = d["ts_ms"] if d["ts_ms"] is not None else -1
            out.append((ts, Violation("well_formed", ts, d["message"], (d["member"],) if d["member"] else (),
                                      None, d["line"] or -1)))
    for d in run.loose:
        out.append((-1, Violation("well_formed", -1, d["message"], (), None, d["line"] or -1)))
    out.sort(key=lambda x: x[0])
    return [v for _t, v in out]


def violations_of(events: Iterable[dict[str, Any]], checks: Iterable[str] = SAFETY_CHECKS) -> list[Violation]:
    """The findings of :func:`check_trace` whose check is one of ``checks``, in trace order."""
    wanted = frozenset(checks)
    return [v for v in check_trace(events) if v.check in wanted]
