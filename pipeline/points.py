"""One sweep point of any protocol: the classic runner or the next-generation protocol's.

:func:`run_point` and :func:`run_point_with_trace` are what the sweep's tasks call
(:mod:`groupspec.pipeline.sweep`): a ``protocol: consumer`` point (KIP-848) goes to
:mod:`groupspec.pipeline.consumer_runs`, every other one to :mod:`groupspec.pipeline.runs`. Both
return a row with the columns of :data:`groupspec.pipeline.runs.ROW_SCHEMA` and the run's trace.
"""
from __future__ import annotations

from typing import Any

from .consumer_runs import run_consumer_point
from .grid import Point
from . import runs

__all__ = ["run_point", "run_point_with_trace"]


def run_point_with_trace(p: Point, sweep: str = "") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The row of metrics and the run's trace."""
    if p.protocol == "consumer":
        return run_consumer_point(p, sweep)
    return runs.run_point_with_trace(p, sweep)


def run_point(p: Point, sweep: str = "") -> dict[str, Any]:
    """The row of metrics of one point."""
    return run_point_with_trace(p, sweep)[0]
