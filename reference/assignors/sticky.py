"""Sticky and cooperative-sticky assignors (in progress: not yet implemented in this commit)."""
from __future__ import annotations


class _Pending:
    name = ""
    protocol = "eager"
    supported_protocols: tuple[str, ...] = ("eager",)

    def assign(self, partitions_per_topic, subscriptions):  # type: ignore[no-untyped-def]
        raise NotImplementedError(f"{self.name} assignor is being written; use range or roundrobin for now")


class StickyAssignor(_Pending):
    name = "sticky"


class CooperativeStickyAssignor(_Pending):
    name = "cooperative-sticky"
    protocol = "cooperative"
    supported_protocols = ("eager", "cooperative")
