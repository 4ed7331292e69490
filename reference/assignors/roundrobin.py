"""Kafka's ``RoundRobinAssignor`` (assignors.md §1.2).

Theory of operation
-------------------
All members sit in one circle in ``MemberInfo`` order (static by instance id, then dynamic by
member id; Java UTF-16 order).  Every partition of the union of subscribed, existing topics is laid
out with topics in lexicographic order (Java order) and partitions in numeric order.  For each
partition the circle advances to the next member subscribed to the partition's topic, which gets
it, and the cursor moves one past that member.  Members subscribed to nothing stay in the circle and
are skipped.  No rack-awareness (Kafka has none for this assignor).

Computed per topic, not per partition: a topic's subscribers are a fixed list of circle positions (shared by
every topic with the same subscribers), the cursor first reaches the subscriber at or after it (a bisection),
then each partition advances it by exactly one subscriber, so partition ``p`` goes to subscriber ``(j + p) % k``
and each member's share of the topic is one strided slice of the topic's partitions. O(P + T * C) with C-speed
inner loops, whatever the subscriptions.
"""
from __future__ import annotations

from bisect import bisect_left
from collections import deque
from itertools import repeat
from typing import Any, Mapping

from ._frame import (
    Assignment, Partition, check_partition_counts, collector_paused, finish, java_string_key, member_info_key, normalize,
)


class RoundRobinAssignor:
    """``org.apache.kafka.clients.consumer.RoundRobinAssignor``."""

    name = "roundrobin"
    protocol = "eager"
    supported_protocols: tuple[str, ...] = ("eager",)

    @collector_paused
    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]]) -> Assignment:
        counts = check_partition_counts(partitions_per_topic)
        members = normalize(subscriptions, keep_owned=False)
        circle = sorted(members, key=member_info_key)
        size = len(circle)
        result: dict[str, list[Partition]] = {m.member_id: [] for m in members}
        lists = [result[m.member_id] for m in circle]
        # the members' distinct topic lists (one tuple object shared by many members is looked at once), and
        # each topic's subscribers as circle positions, shared by the topics with the same subscribers
        number: dict[int, int] = {}  # id of a member's topic tuple -> its class (equal tuples: one class)
        of_value: dict[tuple[str, ...], int] = {}
        classes: list[list[int]] = []
        for pos, m in enumerate(circle):
            c = number.get(id(m.topics))
            if c is None:
                c = number[id(m.topics)] = of_value.setdefault(m.topics, len(of_value))
                if c == len(classes):
                    classes.append([])
            classes[c].append(pos)
        by_topic: dict[str, list[int]] = {}
        for topics, c in of_value.items():
            for t in topics:
                if t in counts:
                    by_topic.setdefault(t, []).append(c)
        shared: dict[tuple[int, ...], list[int]] = {}
        cursor = 0
        ints = list(range(max(counts.values(), default=0)))  # one int object per partition number
        topic_order = sorted(by_topic, key=java_string_key)
        for topic in topic_order:
            keys = tuple(by_topic[topic])
            seats = shared.get(keys)
            if seats is None:
                seats = shared[keys] = sorted(pos for k in keys for pos in classes[k])
            n, k = counts[topic], len(seats)
            # the cursor walks to the next subscriber at or after it, then one subscriber per partition:
            # partition p goes to seats[(j + p) % k]
            j = bisect_left(seats, cursor) % k
            order = seats[j:] + seats[:j] if j else seats
            pairs = list(zip(repeat(topic), ints[:n]))
            if n <= k:
                deque(map(list.append, map(lists.__getitem__, order[:n]), pairs), maxlen=0)
            else:
                deque(map(list.extend, map(lists.__getitem__, order), map(pairs.__getitem__, map(slice, range(k), repeat(None), repeat(k)))), maxlen=0)
            cursor = (order[(n - 1) % k] + 1) % size
        if topic_order == sorted(topic_order):
            # each member's list was built topic by topic in Java order, each topic's share ascending: when Java's
            # order of these topics is Python's, the lists are sorted and ``result`` is finish's answer already
            return result
        return finish(members, result)

    def __repr__(self) -> str:
        return "RoundRobinAssignor()"
