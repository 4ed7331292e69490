"""Partition assignors with Kafka's semantics (range, roundrobin, sticky, cooperative-sticky) and Connect's incremental cooperative assignor."""
