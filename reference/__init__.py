"""The reference implementation: coordinator, consumer, assignors, simulator.

It follows Apache Kafka 4.3.1 (the pinned release; the rules that depend on the release: docs/versions.md).

It never imports ``groupspec.model``: the two are independent and checked against each other.
"""
