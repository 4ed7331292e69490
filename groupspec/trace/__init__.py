"""The project's one trace checker: rebalance traces (JSON Lines of listener events) against the invariants.

This room owns reading traces (``reader``), checking one group's events (``checker``, its overlap and zombie rules in ``overlaps``, its
``starved_members`` notice in ``starved``), whole traces and their results (``runs``), the timelines
printed around a violation (``timeline``), turning the model's counterexamples into traces
(``from_model``) and matching a trace against the model's steps (``against_model``), and the
checker's compiled inner loop for long files (``fastpath`` moves a quiet group's state into arrays,
``kernel`` and ``scan`` apply the lines that decide nothing alone, with numba; every other line goes
through ``GroupChecker.feed``: one checker, one state). It may import ``groupspec.model``
(for ``from_model`` / ``against_model`` only) and the standard library; it never imports
``groupspec.reference`` (traces are data) nor the CLI. ``groupspec trace check`` (``groupspec/cli/trace.py``),
the real-stack harness, the conformance harness and the Spark audit all call it.

Public API (kept stable for the Spark audit, which calls it per group)::

    check_events(events, *, source="<events>", converge_within_s=20.0) -> TraceResult
    check_paths(paths, *, converge_within_s=20.0) -> Report
    check_trace(events, notes=False, final=True) -> [Violation]       (the safety findings as a flat list)
    violations_of(events, checks=SAFETY_CHECKS) -> [Violation]        (those of the checks asked for)

``TraceResult.ok`` / ``Report.ok`` say whether every invariant held; ``to_dict()`` gives the JSON
documented in docs/trace-check.md (the per-trace object, and the whole document).
"""
from __future__ import annotations

from typing import Any

from .checker import PROPERTY_IDS, GroupChecker, Unsorted
from .compat import SAFETY_CHECKS, TRACE_CHECKS, Violation, check_trace, violations_of
from .runs import Report, TraceResult, check_events, check_paths, iter_results, sorted_by_time
from .reader import MAX_TOPIC_PARTITIONS, MAX_TS, TraceReadError, expand_paths, parse_line

__all__ = ["check_events", "check_paths", "TraceResult", "Report", "TraceReadError", "PROPERTY_IDS", "GroupChecker",
    "expand_paths", "parse_line", "iter_results", "sorted_by_time", "Unsorted",
    "check_trace", "violations_of", "Violation", "TRACE_CHECKS", "SAFETY_CHECKS", "MAX_TS", "MAX_TOPIC_PARTITIONS"]


def __getattr__(name: str) -> Any:  # (Any: the function's own type is from_model's)
    """``path_to_events`` (a model path written as a trace, ``from_model``): loaded on first use, so that reading and
    checking traces never imports the model."""
    if name == "path_to_events":
        from .from_model import path_to_events

        return path_to_events
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
