"""Real stacks: real Kafka clients against real coordinators, recorded as traces and checked.

This room owns the harness (``harness``: start a coordinator, run each consumer as its own OS
process, record listener calls and polled ``assignment()`` snapshots on one clock, stop everything),
the coordinators it can start (``coordinators``: a small pluggable interface; ``librdkafka-mock``,
``tansu`` and ``groupspec`` registered; ``apache_kafka``: the pinned Apache Kafka release's broker, with
``groupspec.kafka``), the consumer worker (``worker``, one process per consumer, one module per
client library inside it; Apache Kafka's Java consumer is ``groupspec/kafka/java/groupspec/kafka/consumer``),
the scenarios (``scenarios``), when a run ends (``ending``: once converged, or at the limit) and the
matrix (``matrix``). It may import
``groupspec.trace`` (the one trace checker) and the client libraries (confluent-kafka, kafka-python,
aiokafka: the ``realstack`` extra) and ``groupspec.kafka`` (Java and the jars); never ``groupspec.model`` or
``groupspec.reference``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .apache_kafka import ApacheKafka
from .coordinators import COORDINATORS, Coordinator, ProcessCoordinator, interrupts_held
from .harness import CLIENTS, PROTOCOLS, HarnessError, RunResult, run, ClientMissing, supported
from .scenarios import SCENARIOS

COORDINATORS["apache-kafka"] = ApacheKafka  # registered here: apache_kafka builds on coordinators

__all__ = ["ApacheKafka", "COORDINATORS", "Coordinator", "ProcessCoordinator", "CLIENTS", "PROTOCOLS",
    "HarnessError", "RunResult", "run", "SCENARIOS", "interrupts_held", "ClientMissing", "supported",
    "default_cells", "run_matrix"]


# Imported on first use (PEP 562), so that importing this front door stays as cheap as it was.
_LAZY = {"default_cells": "matrix", "run_matrix": "matrix"}

if TYPE_CHECKING:
    from .matrix import default_cells, run_matrix


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_LAZY[name]}", __name__), name)
