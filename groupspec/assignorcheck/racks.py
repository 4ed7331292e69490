"""Rack-awareness (KIP-881) for the assignor checker: replica racks in the input, and property I12.

Theory of operation
-------------------
The contract's plain-callable form carries consumer racks (``subscriptions[m]["rack"]``) but not the racks of
each partition's replicas, which a rack-aware assignor needs. A candidate *declares* rack-awareness (an
attribute ``rack_aware = True``, or ``--rack-aware`` / ``check_assignor(rack_aware=True)``); only then does the
checker draw replica racks, and it passes them as a keyword argument::

    assign(partitions_per_topic, subscriptions, partition_racks={topic: [[rack, ...] for each partition]})

Inside the checker a racked input is a :class:`RackedPartitions`: the ``{topic: count}`` dict every property
already handles, carrying ``partition_racks`` along, so every other property (I1–I11, C1 aside) is checked in
rack mode too — KIP-881 promises that balance wins over rack alignment, so they must all still hold.

I12 ("racks change nothing unless KIP-881's conditions hold"): Kafka's assignors use their rack logic only when
``AbstractPartitionAssignor.useRackAwareAssignment`` says so — some consumer has a rack, the consumer racks meet
the replica racks, and the partitions do not all sit on the same set of racks. Range decides this per topic
(over the topic's subscribers and partitions), the sticky assignors over the whole group; :func:`rack_mode`
gives the per-topic answer and I12 applies only where it is *off for every topic*, so it holds for both. There
the result must equal the result for the same input with every rack removed. An assignor that lets racks
move partitions anyway (all replicas on every rack, or racks that match no consumer) breaks stickiness and
balance for nothing; I12 shows it. (The co-partitioning and rack-matching order of rack-aware range itself is
I7's business: the project's range assignor is rack-aware, and I7 compares a range candidate with it.)

Imports nothing of the project but :mod:`.core`.
"""
from __future__ import annotations

from typing import Any, Mapping

from .core import PPT, Assignment, Subscriptions, as_sets, diff_assignments

RackMap = dict[str, list[list[str]]]


class RackedPartitions(dict[str, int]):
    """``{topic: partition count}`` plus ``partition_racks``: ``{topic: [[rack, ...] per partition]}``."""

    def __init__(self, counts: Mapping[str, int], partition_racks: RackMap):
        super().__init__(counts)
        self.partition_racks = partition_racks

    def __reduce__(self) -> Any:  # copies and pickles keep the racks
        return (RackedPartitions, (dict(self), self.partition_racks))

    def __repr__(self) -> str:
        return f"RackedPartitions({dict(self)!r}, partition_racks={self.partition_racks!r})"


def racks_of(ppt: Mapping[str, int]) -> RackMap | None:
    """The replica racks an input carries, or ``None`` for a rack-less input."""
    return getattr(ppt, "partition_racks", None)


def with_racks(ppt: Mapping[str, int], partition_racks: RackMap | None) -> PPT:
    return RackedPartitions(ppt, partition_racks) if partition_racks is not None else dict(ppt)


def call_args(ppt: Mapping[str, int]) -> tuple[PPT, dict[str, Any]]:
    """Positional counts and keyword arguments for one call of the candidate on ``ppt``."""
    racks = racks_of(ppt)
    if racks is None:
        return dict(ppt), {}
    return dict(ppt), {"partition_racks": {t: [list(r) for r in rows] for t, rows in racks.items()}}


def _consumer_rack(sub: Mapping[str, Any]) -> str | None:
    return sub.get("rack") or None  # Kafka: an empty rack id is no rack


def rack_mode(ppt: Mapping[str, int], subs: Subscriptions) -> dict[str, bool]:
    """Per topic with partitions: whether KIP-881's three conditions hold over its subscribers and partitions."""
    racks = racks_of(ppt) or {}
    out: dict[str, bool] = {}
    for t, n in ppt.items():
        if n <= 0:
            continue
        member_racks = {_consumer_rack(s) for s in subs.values() if t in (s.get("topics") or [])} - {None}
        rows = [frozenset(r for r in (racks.get(t, [])[p] if p < len(racks.get(t, [])) else ()) if r)
                for p in range(n)]
        every = frozenset().union(*rows)
        out[t] = bool(member_racks) and not member_racks.isdisjoint(every) and not all(r == every for r in rows)
    return out


def strip_racks(ppt: Mapping[str, int], subs: Subscriptions) -> tuple[PPT, Subscriptions]:
    """The same input without any rack: plain counts, every consumer's rack ``None``."""
    return dict(ppt), {m: {**s, "rack": None} for m, s in subs.items()}


def check_racks_ignored(ppt: Mapping[str, int], subs: Subscriptions, with_racks_out: Assignment,
                        without_racks_out: Assignment) -> str | None:
    """I12 where rack mode is off for every topic: racks must change nothing."""
    if as_sets(with_racks_out) == as_sets(without_racks_out):
        return None
    why = diff_assignments(without_racks_out, with_racks_out, "without racks it gives")
    return (f"KIP-881's conditions hold for no topic (rack mode off), yet the racks changed the result: {why}")
