"""Apache Kafka itself, as a dependency: the pinned release, its jars and the project's Java programs.

Owns: ``KAFKA_VERSION`` (the one Apache Kafka release groupspec follows and checks against: the model, the
reference and the docs state it), resolving that release's jars from Maven Central into a cache (``pom.xml``
here lists them; ``python -m groupspec.kafka fetch``, run by ``make setup``), finding Java on the machine, and
compiling the project's own Java sources (``java/``) against those jars, once per source version.
Other rooms start real things with it: the real-stack harness (the broker, the Java consumer) and the Kafka
oracle (Kafka's group coordinator in-process).

May import: nothing from groupspec (the standard library only).
"""
from __future__ import annotations

from .jars import (
    KAFKA_VERSION,
    KafkaSetupError,
    cache_root,
    classpath,
    compiled_classes,
    ensure_jars,
    java_binary,
)

__all__ = ["KAFKA_VERSION", "KafkaSetupError", "cache_root", "classpath", "compiled_classes", "ensure_jars", "java_binary"]
