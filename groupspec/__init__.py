"""groupspec: an executable formal model of the Kafka consumer-group rebalance protocol.

Sub-packages (one import namespace):

* ``groupspec.model``     — the specification (top-level folder ``model/``)
* ``groupspec.reference`` — the reference implementation (folder ``reference/``)
* ``groupspec.proofs``    — Z3 encodings of the model (folder ``proofs/``)
* ``groupspec.checker``   — the explicit-state checker and its timelines
* ``groupspec.conformance`` — the reference checked against the model, event by event
* ``groupspec.assignorcheck`` — the assignor checker, its strategies and its pytest plugin
* ``groupspec.verify``    — the main job: every variant, proof and mutant, in three tables
* ``groupspec.cli``       — the ``groupspec`` command (thin: parsing and presentation)

Public names: ``groupspec.check_assignor``, ``groupspec.assert_assignor`` and the Hypothesis strategies in
``groupspec.strategies``. ARCHITECTURE.md shows the rooms and the import directions between them.
"""

from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:  # lazy, so that `import groupspec` stays cheap
    if name in ("check_assignor", "assert_assignor"):
        from . import assignorcheck

        return getattr(assignorcheck, name)
    raise AttributeError(f"module 'groupspec' has no attribute {name!r}")
