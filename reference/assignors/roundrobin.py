"""Kafka's ``RoundRobinAssignor`` (assignors.md §1.2).

Theory of operation
-------------------
All members sit in one circle in ``MemberInfo`` order (static by instance id, then dynamic by
member id; Java UTF-16 order).  Every partition of the union of subscribed, existing topics is laid
out with topics in lexicographic order (Java order) and partitions in numeric order.  For each
partition the circle advances to the next member subscribed to the partition's topic, which gets
it, and the cursor moves one past that member.  Members subscribed to nothing stay in the circle and
are skipped.  No rack-awareness (Kafka has none for this assignor).

The cursor walk is O(P * C) in the worst case only when subscriptions are very uneven; with uniform
subscriptions each step advances by exactly one member.
"""
from __future__ import annotations

from typing import Any, Mapping

from ._frame import Assignment, Partition, check_partition_counts, existing_topics, finish, java_string_key, member_info_key, normalize


class RoundRobinAssignor:
    """``org.apache.kafka.clients.consumer.RoundRobinAssignor``."""

    name = "roundrobin"
    protocol = "eager"
    supported_protocols: tuple[str, ...] = ("eager",)

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]]) -> Assignment:
        counts = check_partition_counts(partitions_per_topic)
        members = normalize(subscriptions, keep_owned=False)
        circle = sorted(members, key=member_info_key)
        topic_sets = [m.topic_set for m in circle]
        result: dict[str, list[Partition]] = {m.member_id: [] for m in members}
        cursor = 0
        size = len(circle)
        for topic in sorted(existing_topics(counts, members), key=java_string_key):
            for p in range(counts[topic]):
                while topic not in topic_sets[cursor]:
                    cursor = (cursor + 1) % size
                result[circle[cursor].member_id].append((topic, p))
                cursor = (cursor + 1) % size
        return finish(members, result)

    def __repr__(self) -> str:
        return "RoundRobinAssignor()"
