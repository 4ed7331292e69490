"""``groupspec serve``: the reference group coordinator on the Kafka wire protocol.

This room owns the server that lets real Kafka clients (librdkafka, kafka-python, aiokafka, ...)
join groups run by ``groupspec.reference.classic.coordinator.GroupCoordinator``:

* ``wire.py``: frames, headers, the APIs and versions served (encoding by kafka-python's
  schema-driven codec, generated from Kafka's message JSON), Kafka's error answers;
* ``cluster.py``: the driver around the sans-IO coordinator (no IO): brokers, failover,
  topics and the in-memory log (``log.py``), routing of parked answers, fault injection;
* ``translate.py``: wire messages to the reference's messages and back (the answers a round sends
  one per member encoded directly);
* ``faults.py``: the fault rules (command line, script file, Python API);
* ``consumer.py``: the next-generation protocol (KIP-848): ``ConsumerGroupHeartbeat`` answered by
  ``groupspec.reference.consumer.coordinator.ConsumerGroupCoordinator``, member-epoch offsets, its recording
  (``messages/``: the message schema kafka-python lacks);
* ``transcript.py``: the served session as a coordinator script and its transcript;
* ``audit.py``: a recorded session replayed against the reference and read as a trace checked by the
  model (``groupspec coordinator check``);
* ``server.py``: asyncio listeners (uvloop's loop), one per broker, and the timer task.

It may import ``groupspec.reference`` and ``groupspec.trace`` (never ``groupspec.model``: the served
coordinator is the reference, checked against the model through the trace checker) and kafka-python's ``kafka.protocol`` and
``kafka.record`` modules for encoding. Nothing else in the project imports it except the CLI
(``groupspec/cli/serve.py``), its tests, the benchmark and the real-stack harness.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .cluster import Cluster
from .faults import FaultError, FaultPlan, Rule
from .server import Server, run_loop

__all__ = ["Cluster", "Server", "FaultPlan", "FaultError", "Rule", "run_loop", "check_session", "SessionCheck",
           "MalformedTranscript"]


# Imported on first use (PEP 562), so that importing this front door stays as cheap as it was.
_LAZY = {"check_session": "audit", "SessionCheck": "audit", "MalformedTranscript": "audit"}

if TYPE_CHECKING:
    from .audit import MalformedTranscript, SessionCheck, check_session


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_LAZY[name]}", __name__), name)
