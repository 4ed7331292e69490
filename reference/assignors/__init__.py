"""Partition assignors with Kafka's semantics (range, roundrobin, sticky, cooperative-sticky) and Connect's incremental cooperative assignor.

Theory of operation
-------------------
Every consumer assignor here is an object with ``name``, ``protocol`` (``"eager"`` or
``"cooperative"``), ``supported_protocols`` (as Kafka's ``ConsumerPartitionAssignor.supportedProtocols``)
and ``assign(partitions_per_topic, subscriptions)``, the plain-callable form of
``docs/formats.md`` (assignor candidates)::

    from groupspec.reference.assignors import get, NAMES
    a = get("cooperative-sticky")
    a.assign({"t": 3}, {"m1": {"topics": ["t"]}, "m2": {"topics": ["t"], "owned": [["t", 0]], "generation": 1}})

``assign`` returns ``{member_id: [(topic, partition), ...]}`` with every member present and every
list sorted.  For ``cooperative-sticky`` it is ONE round: partitions changing owner are withheld
from their new owner (``assign_detailed`` also returns the transfer map and the path taken).  :func:`sticky_claims` is the
sticky assignors' first step alone: the members' ownership claims resolved as Kafka resolves them (walked in
Java ``HashMap`` order of member ids, :func:`java_hashmap_order`; conflicts by generation; the
multiply-claimed partitions) and what each of Kafka's two paths keeps of them.

Modules: ``_frame`` (input normalisation, Kafka's member order), ``range_assignor``,
``roundrobin``, ``sticky`` (both sticky assignors), ``connect`` (Kafka Connect's KIP-415
incremental cooperative assignor, a separate interface documented there) and ``properties``
(the invariants of assignors.md §2 as small checks, and a cooperative multi-round driver; the one
set of these checks: ``groupspec assignor check`` judges candidates with them too, exported here).
See docs/assignors.md for the differences from Kafka kept on purpose.
"""
from __future__ import annotations

from typing import Any, Protocol

from ._frame import Assignment, java_string_key
from .properties import (
    check_all, check_complete, check_cooperative, check_generation_validated, check_members, check_movability,
    check_no_duplicates, check_no_two_cycles, check_subscribed_only, claims, converge, next_subscriptions, owned_of,
    resolved_owners, subscribed_partitions, topics_of,
)

NAMES: tuple[str, ...] = ("range", "roundrobin", "sticky", "cooperative-sticky")

__all__ = [
    "NAMES", "Assignor", "get", "java_string_key",
    # the sticky assignors' claim resolution (step 1) alone, and Kafka's member order (sticky.py)
    "StickyClaims", "java_hashmap_order", "sticky_claims",
    # the invariants of assignors.md §2, once (properties.py; groupspec.assignorcheck judges candidates with them)
    "check_all", "check_complete", "check_cooperative", "check_generation_validated", "check_members",
    "check_movability", "check_no_duplicates", "check_no_two_cycles", "check_subscribed_only", "claims", "converge",
    "next_subscriptions", "owned_of", "resolved_owners", "subscribed_partitions", "topics_of",
]


_STICKY = ("StickyClaims", "java_hashmap_order", "sticky_claims")  # loaded on first use (sticky.py reads numpy)


def __getattr__(name: str) -> Any:
    if name in _STICKY:
        from . import sticky

        return getattr(sticky, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Assignor(Protocol):
    """What :func:`get` returns."""

    name: str
    protocol: str
    supported_protocols: tuple[str, ...]

    def assign(self, partitions_per_topic: dict[str, int], subscriptions: dict[str, dict[str, Any]]) -> Assignment: ...


def get(name: str) -> Assignor:
    """A fresh assignor object for one of :data:`NAMES`; ``ValueError`` for any other name."""
    if name == "range":
        from .range_assignor import RangeAssignor

        return RangeAssignor()
    if name == "roundrobin":
        from .roundrobin import RoundRobinAssignor

        return RoundRobinAssignor()
    if name == "sticky":
        from .sticky import StickyAssignor

        return StickyAssignor()
    if name == "cooperative-sticky":
        from .sticky import CooperativeStickyAssignor

        return CooperativeStickyAssignor()
    raise ValueError(f"unknown assignor {name!r}; choose from {', '.join(NAMES)}")
