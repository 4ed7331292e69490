"""``groupspec serve``: the reference group coordinator on the Kafka wire protocol.

This room owns the server that lets real Kafka clients (librdkafka, kafka-python, aiokafka, ...)
join groups run by ``groupspec.reference.coordinator.GroupCoordinator``:

* ``wire.py``: frames, headers, the APIs and versions served (encoding by kafka-python's
  schema-driven codec, generated from Kafka's message JSON), Kafka's error answers;
* ``cluster.py``: the driver around the sans-IO coordinator (no IO): brokers, failover,
  topics and the in-memory log (``log.py``), routing of parked answers, fault injection;
* ``faults.py``: the fault rules (command line, script file, Python API);
* ``transcript.py``: the served session as a coordinator script and its transcript;
* ``server.py``: asyncio listeners, one per broker, and the timer task.

It may import ``groupspec.reference`` (never ``groupspec.model``: the served coordinator is the
reference, checked against the model elsewhere) and kafka-python's ``kafka.protocol`` and
``kafka.record`` modules for encoding. Nothing else in the project imports it except the CLI
(``groupspec/cli/serve.py``), its tests, the benchmark and the real-stack harness.
"""
from __future__ import annotations

from .cluster import Cluster
from .faults import FaultError, FaultPlan, Rule
from .server import Server

__all__ = ["Cluster", "Server", "FaultPlan", "FaultError", "Rule"]
