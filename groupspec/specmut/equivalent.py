"""Equivalent mutants: changes of the model that no execution can observe, each with the reason.

Every name here is also explained in docs/specification.md ("The mutation campaign"); a survivor not
listed here is a gap in the checks, and ``groupspec verify --spec-mutants`` fails on it.

May import: nothing.
"""
from __future__ import annotations

EQUIVALENT: dict[str, str] = {}
