"""Real stacks: real Kafka clients against real coordinators, recorded as traces and checked.

This room owns the harness (``harness``: start a coordinator, run each consumer as its own OS
process, record listener calls and polled ``assignment()`` snapshots on one clock, stop everything),
the coordinators it can start (``coordinators``: a small pluggable interface; ``librdkafka-mock``
and ``tansu`` registered), the consumer worker (``worker``, one process per consumer, one module per
client library inside it), the scenarios (``scenarios``), when a run ends (``ending``: once converged, or at the limit) and the
matrix (``matrix``). It may import
``groupspec.trace`` (the one trace checker) and the client libraries (confluent-kafka, kafka-python,
aiokafka: the ``realstack`` extra); never ``groupspec.model`` or ``groupspec.reference``.
"""
from __future__ import annotations

from .coordinators import COORDINATORS, Coordinator, ProcessCoordinator
from .harness import CLIENTS, PROTOCOLS, HarnessError, RunResult, run
from .scenarios import SCENARIOS

__all__ = ["COORDINATORS", "Coordinator", "ProcessCoordinator", "CLIENTS", "PROTOCOLS", "HarnessError", "RunResult",
           "run", "SCENARIOS"]
