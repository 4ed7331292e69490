"""Kafka's ``RangeAssignor`` (assignors.md §1.1), with rack-awareness (KIP-881, KAFKA-14451/KAFKA-14891).

Theory of operation
-------------------
Each topic is assigned on its own.  Take the members subscribed to the topic in
``MemberInfo`` order (static members by instance id first, then dynamic members by member id;
Java UTF-16 order).  With ``n`` partitions and ``k`` subscribers, ``q = n // k`` and
``r = n % k``: the first ``r`` members receive ``q + 1`` partitions and the others ``q``, as
contiguous ranges in partition-number order.  A member with a duplicated topic entry holds one
slot for it.  Topics without metadata are left out.

Rack-awareness needs the racks of each partition's replicas, which the plain-callable form does not
carry: pass them as ``partition_racks={topic: [[rack, ...] for each partition]}``.  Without them (or when
KIP-881's conditions do not hold for any topic, see :func:`topic_needs_racks`) the result is the plain
range above.  In rack mode (assignors.md §1.1, read from Kafka's ``RangeAssignor``):

1. every topic keeps range's per-topic quotas: ``q`` each, ``q + 1`` for the first ``r`` members *to fill*
   (not necessarily the first ``r`` in order);
2. topics with the same subscribers and the same partition count are co-partitioned: partition ``p`` of all
   of them goes to the first remaining member (in member order) that matches ``p``'s racks in every one of
   them and has quota left in every one of them;
3. any other topic that needs rack-awareness gets a range pass restricted to rack-matching partitions;
4. a plain range pass (each member, in order, takes the lowest unassigned partitions up to its quota) places
   the rest, which may be mis-aligned.

A member without a rack matches every partition; an empty rack string counts as no rack.  Balance wins over
rack alignment; co-partitioning wins over both.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ._frame import Assignment, Member, Partition, check_partition_counts, finish, member_info_key, normalize

PartitionRacks = Mapping[str, Sequence[Sequence[str | None]]]


def topic_needs_racks(member_racks: set[str], racks_per_partition: list[frozenset[str]]) -> bool:
    """KIP-881's three conditions for one topic (``AbstractPartitionAssignor.useRackAwareAssignment``): some
    subscriber has a rack, the subscribers' racks meet the replica racks, and the partitions do not all sit
    on the same set of racks."""
    all_partition_racks = frozenset().union(*racks_per_partition) if racks_per_partition else frozenset()
    if not member_racks or member_racks.isdisjoint(all_partition_racks):
        return False
    return not all(r == all_partition_racks for r in racks_per_partition)


class _Topic:
    """One topic's range state: its subscribers in order, their quotas, what is still unassigned."""

    def __init__(self, topic: str, n: int, members: list[Member], racks: list[frozenset[str]] | None):
        self.topic = topic
        self.n = n
        self.members = [m.member_id for m in members]
        self.rack_of = {m.member_id: (m.rack or None) for m in members}
        k = len(members)
        self.q, self.extra = (divmod(n, k) if k else (0, 0))
        self.assigned = {m: 0 for m in self.members}
        self.unassigned = list(range(n))
        member_racks = {r for r in self.rack_of.values() if r}
        # Kafka reads replica racks only when some subscriber has a rack (else: an empty map).
        self.racks = racks if (racks is not None and member_racks) else None
        self.needs_racks = self.racks is not None and topic_needs_racks(member_racks, self.racks)

    @property
    def racks_known(self) -> int:
        """Kafka groups co-partitioned topics by the size of their partition-rack map (0 when unread)."""
        return self.n if self.racks is not None else 0

    def matches(self, member: str, p: int) -> bool:
        rack = self.rack_of[member]
        return rack is None or (self.racks is not None and rack in self.racks[p])

    def room(self, member: str) -> int:
        return max(0, self.q + (1 if self.extra > 0 else 0) - self.assigned[member])

    def give(self, member: str, parts: list[int], result: dict[str, list[Partition]]) -> None:
        result[member].extend((self.topic, p) for p in parts)
        self.assigned[member] += len(parts)
        if self.assigned[member] > self.q:
            self.extra -= 1
        taken = set(parts)
        self.unassigned = [p for p in self.unassigned if p not in taken]

    def range_pass(self, result: dict[str, list[Partition]], racks_only: bool = False) -> None:
        for m in self.members:
            if not self.unassigned:
                break
            ok = [p for p in self.unassigned if not racks_only or self.matches(m, p)][: self.room(m)]
            if ok:
                self.give(m, ok, result)


def _co_partitioned(states: list[_Topic], n: int, result: dict[str, list[Partition]]) -> None:
    remaining = list(states[0].members)
    for p in range(n):
        pick = next((m for m in remaining if all(s.matches(m, p) and s.room(m) > 0 for s in states)), None)
        if pick is None:
            continue
        for s in states:
            s.give(pick, [p], result)
        if all(s.room(pick) == 0 for s in states):
            remaining.remove(pick)
            if not remaining:
                break


class RangeAssignor:
    """``org.apache.kafka.clients.consumer.RangeAssignor``, rack-aware when replica racks are given."""

    name = "range"
    protocol = "eager"
    supported_protocols: tuple[str, ...] = ("eager",)
    #: declares rack-awareness to the assignor checker: it passes ``partition_racks`` (KIP-881)
    rack_aware = True

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]],
               partition_racks: PartitionRacks | None = None) -> Assignment:
        counts = check_partition_counts(partitions_per_topic)
        members = normalize(subscriptions)
        ordered = sorted(members, key=member_info_key)
        subscribers: dict[str, list[Member]] = {}
        for m in ordered:
            for t in m.topics:
                if t in counts:
                    subscribers.setdefault(t, []).append(m)
        racks = _parse_racks(partition_racks, counts)
        states = [_Topic(t, counts[t], ms, racks.get(t)) for t, ms in subscribers.items()]
        result: dict[str, list[Partition]] = {m.member_id: [] for m in members}
        if any(s.needs_racks for s in states):
            groups: dict[tuple[tuple[str, ...], int], list[_Topic]] = {}
            for s in states:
                groups.setdefault((tuple(s.members), s.racks_known), []).append(s)
            for (_, n), group in groups.items():
                if len(group) > 1:
                    _co_partitioned(group, n, result)
                elif group[0].needs_racks:
                    group[0].range_pass(result, racks_only=True)
        for s in states:
            s.range_pass(result)
        return finish(members, result)

    def __repr__(self) -> str:
        return "RangeAssignor()"


def _parse_racks(partition_racks: PartitionRacks | None, counts: Mapping[str, int]) -> dict[str, list[frozenset[str]]]:
    """``{topic: [racks of partition 0, ...]}`` for the topics with metadata; a partition left out, or a
    ``None`` rack, has no rack (Kafka: a replica on a node without ``broker.rack``)."""
    if partition_racks is None:
        return {}
    if not isinstance(partition_racks, Mapping):
        raise ValueError("partition_racks must be a mapping of topic to a list of rack lists")
    out: dict[str, list[frozenset[str]]] = {}
    for topic, per_partition in partition_racks.items():
        if topic not in counts:
            continue
        rows = list(per_partition)
        if any(isinstance(r, (str, bytes)) for r in rows):
            raise ValueError(f"partition_racks[{topic!r}] must be a list of rack lists, one per partition")
        out[topic] = [frozenset(r for r in (rows[p] if p < len(rows) else ()) if r) for p in range(counts[topic])]
    return out
