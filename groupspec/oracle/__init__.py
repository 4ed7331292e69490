"""The Kafka oracle: Apache Kafka's own group coordinator as the judge of the reference (and of other coordinators).

Owns: the long-lived Java process that runs the pinned release's group coordinator on a virtual clock
(``process.py``: ``KafkaOracle``; the Java side is ``groupspec/kafka/java/groupspec/kafka/oracle/``), running a
coordinator script through it (``script.py``: the same transcript format as ``groupspec coordinator replay``),
comparing it with the reference's transcript step by step (``compare.py``), and the documented abstractions that
explain every remaining difference (``abstractions.py``; docs/conformance.md), another coordinator's transcript
judged by Kafka's (``other.py``).

May import: reference (the script parser, payload encodings, the reference coordinator), kafka (the jars, Java,
the compiled classes).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .process import KafkaOracle, OracleError

__all__ = ["KafkaOracle", "OracleError", "compare_script", "compare_consumer_script", "compare_transcript",
           "TranscriptError"]


# Imported on first use (PEP 562), so that importing this front door stays as cheap as it was.
_LAZY = {"compare_script": "compare", "compare_consumer_script": "consumer", "compare_transcript": "other",
         "TranscriptError": "other"}

if TYPE_CHECKING:
    from .compare import compare_script
    from .consumer import compare_consumer_script
    from .other import TranscriptError, compare_transcript


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_LAZY[name]}", __name__), name)
