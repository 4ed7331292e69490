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

from collections import deque
from itertools import chain, product, repeat
from typing import Any, Mapping, Sequence

from ._frame import (
    Assignment, Member, Partition, check_partition_counts, collector_paused, finish, member_info_key, normalize,
)

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
    """One topic's range state: its subscribers in order, their quotas, which partitions are taken.

    Linear per topic: ``give`` marks partitions in a byte array instead of rebuilding the list of unassigned
    partitions, and a plain pass walks that list once with a cursor (each member takes the next ``room``)."""

    def __init__(self, topic: str, n: int, subscribers: "_Subscribers", racks: list[frozenset[str]] | None):
        self.topic = topic
        self.n = n
        self.subscribers = subscribers
        self.members = subscribers.ids
        self.rack_of = subscribers.rack_of
        k = len(self.members)
        self.q, self.extra = (divmod(n, k) if k else (0, 0))
        self._assigned: dict[str, int] | None = None
        self.taken = bytearray(n)
        self.n_taken = 0
        member_racks = subscribers.racks
        # Kafka reads replica racks only when some subscriber has a rack (else: an empty map).
        self.racks = racks if (racks is not None and member_racks) else None
        self.needs_racks = self.racks is not None and topic_needs_racks(member_racks, self.racks)

    @property
    def assigned(self) -> dict[str, int]:
        if self._assigned is None:
            self._assigned = dict.fromkeys(self.members, 0)
        return self._assigned

    @property
    def racks_known(self) -> int:
        """Kafka groups co-partitioned topics by the size of their partition-rack map (0 when unread)."""
        return self.n if self.racks is not None else 0

    @property
    def unassigned(self) -> list[int]:
        """The partitions not given yet, in partition order."""
        if not self.n_taken:
            return list(range(self.n))
        taken = self.taken
        return [p for p in range(self.n) if not taken[p]]

    def matches(self, member: str, p: int) -> bool:
        rack = self.rack_of[member]
        return rack is None or (self.racks is not None and rack in self.racks[p])

    def room(self, member: str) -> int:
        return max(0, self.q + (1 if self.extra > 0 else 0) - self.assigned[member])

    def give(self, member: str, parts: list[int], result: dict[str, list[Partition]]) -> None:
        topic = self.topic
        result[member] += [(topic, p) for p in parts]
        self.assigned[member] += len(parts)
        if self.assigned[member] > self.q:
            self.extra -= 1
        taken = self.taken
        for p in parts:
            taken[p] = 1
        self.n_taken += len(parts)

    def fresh_range(self, result: dict[str, list[Partition]]) -> None:
        """The plain pass on a topic nothing was given from yet: the first ``extra`` members take ``q + 1``
        partitions, the others ``q``, as contiguous ranges (appended by ``map`` over the members' lists, no
        Python loop per member). It gives the whole topic away (its counters are not kept: nothing reads them
        after the last pass)."""
        lists = self.subscribers.result_lists(result)
        topic, q, extra = self.topic, self.q, self.extra
        _give_runs(lists[:extra], topic, 0, q + 1)
        _give_runs(lists[extra:], topic, extra * (q + 1), q)
        self.taken = bytearray(b"\x01") * self.n
        self.n_taken = self.n

    def range_pass(self, result: dict[str, list[Partition]], racks_only: bool = False) -> None:
        if not racks_only and not self.n_taken and self._assigned is None:
            self.fresh_range(result)
            return
        free = self.unassigned
        if not free:
            return
        if not racks_only:  # each member, in order, takes the lowest free partitions up to its room
            i, end = 0, len(free)
            for m in self.members:
                if i >= end:
                    break
                room = self.room(m)
                if room:
                    self.give(m, free[i:i + room], result)
                    i += room
            return
        taken = self.taken
        for m in self.members:
            if self.n_taken == self.n:
                break
            room = self.room(m)
            if not room:
                continue
            ok: list[int] = []
            for p in free:
                if not taken[p] and self.matches(m, p):
                    ok.append(p)
                    if len(ok) == room:
                        break
            if ok:
                self.give(m, ok, result)


def _give_runs(lists: list[list[Partition]], topic: str, first: int, size: int) -> None:
    """Member ``i`` of ``lists`` gets partitions ``first + i * size`` to ``first + (i + 1) * size - 1``."""
    if not size or not lists:
        return
    if size == 1:
        deque(map(list.append, lists, zip(repeat(topic), range(first, first + len(lists)))), maxlen=0)
    else:
        runs = [zip(repeat(topic), range(a, a + size)) for a in range(first, first + size * len(lists), size)]
        deque(map(list.extend, lists, runs), maxlen=0)


class _Subscribers:
    """The subscribers of a topic in member order, shared by every topic with the same subscribers."""

    def __init__(self, members: list[Member]):
        self.ids = [m.member_id for m in members]
        self.rack_of = {m.member_id: (m.rack or None) for m in members}
        self.racks = {r for r in self.rack_of.values() if r}
        self._lists: list[list[Partition]] | None = None

    def result_lists(self, result: dict[str, list[Partition]]) -> list[list[Partition]]:
        """The subscribers' lists in ``result`` (the one result of this call), in member order."""
        if self._lists is None:
            self._lists = [result[m] for m in self.ids]
        return self._lists


def _subscribers(ordered: list[Member], counts: Mapping[str, int]) -> dict[str, _Subscribers]:
    """Each subscribed topic with metadata to its subscribers, in topic order. Members usually share topic lists
    (one tuple object per distinct list, or equal lists): when they all do, every topic has the same subscribers."""
    by_id: dict[int, tuple[str, ...]] = {id(m.topics): m.topics for m in ordered}
    if len(by_id) == 1:
        (topics,) = by_id.values()
        shared = _Subscribers(ordered)
        return {t: shared for t in sorted(t for t in topics if t in counts)}
    # the distinct lists by content (each tuple object hashed once), and each member's list number
    number: dict[tuple[str, ...], int] = {}
    number_of_id = {i: number.setdefault(topics, len(number)) for i, topics in by_id.items()}
    if len(number) == 1:
        shared = _Subscribers(ordered)
        return {t: shared for t in sorted(t for t in next(iter(number)) if t in counts)}
    member_list = [number_of_id[id(m.topics)] for m in ordered]
    # Topics subscribed by the same distinct lists have the same subscribers: one filter of the members each.
    signature: dict[str, list[int]] = {}
    for topics, i in number.items():
        for t in topics:
            if t in counts:
                signature.setdefault(t, []).append(i)
    shared_by: dict[tuple[int, ...], _Subscribers] = {}
    out: dict[str, _Subscribers] = {}
    for t in sorted(signature):
        sig = tuple(signature[t])
        hit = shared_by.get(sig)
        if hit is None:
            wanted = set(sig)
            hit = shared_by[sig] = _Subscribers([m for m, i in zip(ordered, member_list) if i in wanted])
        out[t] = hit
    return out


def _plain_by_groups(subscribers: dict[str, _Subscribers], counts: Mapping[str, int],
                     result: dict[str, list[Partition]]) -> bool:
    """Plain range (no racks) by groups of topics with the same subscribers and partition count, when no member
    subscribes to topics of two groups (then each member's list is its one run in every topic of its group, in
    topic order: one ``product`` of the group's topics and the run). False, with ``result`` untouched, otherwise.

    Equal to the per-topic passes: in a group every topic has the same ``q`` and ``extra``, so member ``i`` of the
    subscribers takes partitions ``a_i .. b_i - 1`` of each of them."""
    groups: dict[tuple[int, int], tuple[_Subscribers, list[str]]] = {}
    for t, subs in subscribers.items():  # topics in order
        key = (id(subs), counts[t])
        hit = groups.get(key)
        if hit is None:
            hit = groups[key] = (subs, [])
        hit[1].append(t)
    distinct = {id(subs): subs for subs, _ in groups.values()}
    if len(distinct) != len(groups) or len(distinct) > 1 and (
            sum(len(s.ids) for s in distinct.values()) != len(set(chain.from_iterable(s.ids for s in distinct.values())))):
        return False  # a subscriber set with two partition counts, or a member in two subscriber sets
    for (_, n), (subs, topics) in groups.items():
        k = len(subs.ids)
        q, extra = divmod(n, k)
        cut = extra * (q + 1)
        starts = chain(range(0, cut, q + 1), range(cut, n - q + 1 if q else cut, q) if q else repeat(cut, k - extra))
        runs = map(range, starts, chain(range(q + 1, cut + 1, q + 1), range(cut + q, n + 1, q) if q else repeat(cut, k - extra)))
        deque(map(list.extend, subs.result_lists(result), map(product, repeat(tuple(topics)), runs)), maxlen=0)
    return True


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

    @collector_paused
    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]],
               partition_racks: PartitionRacks | None = None) -> Assignment:
        counts = check_partition_counts(partitions_per_topic)
        members = normalize(subscriptions, keep_owned=False)
        ordered = sorted(members, key=member_info_key)
        racks = _parse_racks(partition_racks, counts)
        # in topic order, so each member's list is built sorted and finish's sort only checks it
        subscribers = _subscribers(ordered, counts)
        result: dict[str, list[Partition]] = {m.member_id: [] for m in members}
        if not racks and _plain_by_groups(subscribers, counts, result):
            return result
        states = [_Topic(t, counts[t], subs, racks.get(t)) for t, subs in subscribers.items()]
        rack_passes = any(s.needs_racks for s in states)
        if rack_passes:
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
        if rack_passes:
            return finish(members, result)
        # Without rack passes each member's list was built in (topic, partition) order (topics sorted, each topic's
        # share one ascending run) and ``result`` has every member in input order: it is finish's answer already.
        return result

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
