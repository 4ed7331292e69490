"""Trace checks of the conformance harness: the project's one trace checker, ``groupspec.trace``.

The harness checks the reference's own trace after every event with :func:`check_trace` (the
checker's safety findings as a flat list; see :mod:`groupspec.trace.compat`), ``final=False`` while
the run goes on (an overlap whose owners have not yet shown whether one was a zombie stays
undecided) and ``final=True`` when it has converged.
"""
from __future__ import annotations

from groupspec.trace import TRACE_CHECKS, Violation, check_trace

__all__ = ["Violation", "check_trace", "TRACE_CHECKS"]
