"""The Kafka oracle: Apache Kafka's own group coordinator as the judge of the reference (and of other coordinators).

Owns: the long-lived Java process that runs the pinned release's group coordinator on a virtual clock
(``process.py``: ``KafkaOracle``; the Java side is ``groupspec/kafka/java/groupspec/kafka/oracle/``), running a
coordinator script through it (``script.py``: the same transcript format as ``groupspec coordinator replay``),
comparing it with the reference's transcript step by step (``compare.py``), and the documented abstractions that
explain every remaining difference (``abstractions.py``; docs/conformance.md).

May import: reference (the script parser, payload encodings, the reference coordinator), kafka (the jars, Java,
the compiled classes).
"""
from __future__ import annotations

from .process import KafkaOracle, OracleError

__all__ = ["KafkaOracle", "OracleError"]
