"""Kafka's ``RangeAssignor`` (assignors.md §1.1), non-rack-aware.

Theory of operation
-------------------
Each topic is assigned on its own.  Take the members subscribed to the topic in
``MemberInfo`` order (static members by instance id first, then dynamic members by member id;
Java UTF-16 order).  With ``n`` partitions and ``k`` subscribers, ``q = n // k`` and
``r = n % k``: the first ``r`` members receive ``q + 1`` partitions and the others ``q``, as
contiguous ranges in partition-number order.  A member with a duplicated topic entry holds one
slot for it.  Topics without metadata are left out.

Rack-aware range (KAFKA-14451) is not implemented: racks are ignored, which is what Kafka does when
no consumer has a rack or the racks do not intersect the replica racks.
"""
from __future__ import annotations

from typing import Any, Mapping

from ._frame import Assignment, Partition, check_partition_counts, finish, member_info_key, normalize


class RangeAssignor:
    """``org.apache.kafka.clients.consumer.RangeAssignor`` without rack-awareness."""

    name = "range"
    protocol = "eager"
    supported_protocols: tuple[str, ...] = ("eager",)

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]]) -> Assignment:
        counts = check_partition_counts(partitions_per_topic)
        members = normalize(subscriptions)
        ordered = sorted(members, key=member_info_key)
        subscribers: dict[str, list[str]] = {}
        for m in ordered:
            for t in m.topics:
                if t in counts:
                    subscribers.setdefault(t, []).append(m.member_id)
        result: dict[str, list[Partition]] = {m.member_id: [] for m in members}
        for topic, consumers in subscribers.items():
            n = counts[topic]
            q, r = divmod(n, len(consumers))
            start = 0
            for i, member_id in enumerate(consumers):
                length = q + (1 if i < r else 0)
                result[member_id].extend((topic, p) for p in range(start, start + length))
                start += length
        return finish(members, result)

    def __repr__(self) -> str:
        return "RangeAssignor()"
