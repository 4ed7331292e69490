"""The assignor checker: properties of a candidate assignor, checked by seeded Hypothesis searches.

Owns checking candidate assignors (``check.py``), their loading (``load.py``), strategies, the optimum oracle
and the pytest plugin. May import ``groupspec.reference`` (the built-in assignors), nothing else of the project.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["PROPERTIES", "PROPERTY_IDS", "check_assignor", "assert_assignor", "compare", "IMPORT_TIMEOUT",
    "CallRunner", "LoadError", "load_candidate", "movement_phrase", "RackedPartitions", "canonical"]


# Imported on first use (PEP 562), so that importing this front door stays as cheap as it was.
_LAZY = {"PROPERTIES": "check", "PROPERTY_IDS": "check", "check_assignor": "check", "assert_assignor": "check",
         "compare": "check", "IMPORT_TIMEOUT": "load", "CallRunner": "load", "LoadError": "load",
         "load_candidate": "load", "movement_phrase": "churn", "RackedPartitions": "racks", "canonical": "core"}

if TYPE_CHECKING:
    from .check import PROPERTIES, PROPERTY_IDS, check_assignor, assert_assignor, compare
    from .load import IMPORT_TIMEOUT, CallRunner, LoadError, load_candidate
    from .churn import movement_phrase
    from .racks import RackedPartitions
    from .core import canonical


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_LAZY[name]}", __name__), name)
