"""Kafka's ``StickyAssignor`` and ``CooperativeStickyAssignor`` (``AbstractStickyAssignor``, assignors.md §1.3).

Theory of operation
-------------------
Partitions are plain ints in hot loops: topics (the subscribed, existing ones) are sorted in Java
string order and partition ``p`` of the ``i``-th topic is ``gid = offset[i] + p``, so ``gid`` order
is ``(topic, partition)`` order.  Members are indices; ``rank[m]`` is the member's position in Java
``String.compareTo`` order of member ids (Kafka's tie-break everywhere).

1. **Claims** (``AbstractStickyAssignor.allSubscriptionsEqual``).  Members are walked in the
   iteration order of a Java ``HashMap`` keyed by member id (:func:`java_hashmap_order`; members in
   one hash bucket are taken in member-id order so the result never depends on the input order).
   Per claimed partition: the first claimant keeps it; a later claimant of the same generation
   marks it *multiply claimed* and strips it from the earlier one without taking it; a higher
   generation takes it over; a lower one is ignored.  Claims on unknown topics, on partition
   numbers outside ``0..count-1``, and duplicated entries inside one member's list are dropped
   first (Kafka keeps out-of-range claims, and treats a duplicate as a same-generation conflict
   with itself; see docs/assignors.md).
2. **Constrained path** (every member subscribes to the same topic set; Kafka compares list sizes,
   so a duplicated topic entry forces the general path, as in Kafka).  ``minQuota = P // C``,
   ``maxQuota = ceil(P / C)``, ``P % C`` members may end at ``maxQuota``.  Step 1 keeps owned
   partitions (sorted by (partition, topic), KAFKA-16277) up to the quota, in hash order; step 3
   deals the unassigned partitions (topic, partition order) round-robin to the under-quota members
   sorted by id, then one each to members waiting at exactly ``minQuota``.  A partition newly given
   to a member that was "maybe revoked" from another one, or that was multiply claimed, is a
   *transfer*.  O(P + sum owned * log) with arrays; no per-member rescans.
3. **General path.**  Current assignment = resolved claims minus partitions whose owner no longer
   subscribes to the topic (``revocationRequired``).  "Previous owner" per partition = the
   claimant with the highest generation below the maximum (KAFKA-12675).  Unassigned partitions are
   placed in the order (fewest potential consumers, topic, partition), each to the eligible member
   with the fewest partitions (ties by member id).  Then reassignment passes (first over newly
   placed partitions unless a revocation is required, then over all) move a partition back to its
   previous owner when the current owner holds 2+ more, or to the least-loaded eligible member when
   the owner holds 2+ more than it.  Every move goes from a member with ``n`` to one with ``<= n-2``
   partitions, so the sum of squared loads strictly falls (termination) and Kafka's balance score
   never worsens (its revert rule can never fire and is not needed).  The passes stop when no move
   is possible, which is exactly the strong movability balance I5.  Least-loaded eligible member:
   one lazy heap of (load, rank) per *subscription class* (members with the same topic set), so
   the lookup costs O(classes of the topic * log C), never O(C).  Movements are recorded per topic
   as Kafka's ``PartitionMovements``; a move from ``o`` to ``n`` first gives back a partition that
   earlier moved ``n -> o``, and avoids creating a reverse pair, so no topic sees a 2-cycle (I9).
4. **Cooperative deferral** (``CooperativeStickyAssignor.adjustAssignment``): transfers are the
   constrained path's map, or on the general path the partitions newly assigned to a member and
   raw-owned-but-not-assigned by another; they are withheld from their new owner in this round.
   On the general path we also withhold a partition from a member that claims it when another
   member claims it with the same or a higher generation (I6', generation-validated; Kafka hands
   it over at once, see docs/assignors.md).
"""
from __future__ import annotations

import heapq
import sys
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import mul
from typing import Any, Mapping, Sequence

from ._frame import (
    Assignment,
    Member,
    Partition,
    check_partition_counts,
    existing_topics,
    java_string_key,
    normalize,
)

__all__ = [
    "CooperativeStickyAssignor",
    "StickyAssignor",
    "StickyOutcome",
    "java_hash",
    "java_hashmap_order",
    "sticky_assign",
]

DEFAULT_GENERATION = -1


# ------------------------------------------------------------------ Java HashMap iteration order

def java_hash(s: str) -> int:
    """Java ``String.hashCode`` as an unsigned 32-bit int (over UTF-16 code units).

    ``sum(c[i] * 31**(n-1-i)) mod 2**32``, with the powers taken mod 2**32 beforehand (a ring
    homomorphism), summed at C speed over the code units.
    """
    units = memoryview(s.encode(_UTF16_NATIVE, "surrogatepass")).cast("H")
    n = len(units)
    while len(_POW31) < n:
        _POW31.append(_POW31[-1] * 31 & 0xFFFFFFFF)
    return sum(map(mul, units, reversed(_POW31[:n]))) & 0xFFFFFFFF


_POW31 = [1]  # 31**k mod 2**32
_UTF16_NATIVE = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"  # memoryview "H" reads native order


def _hashmap_capacity(n: int) -> int:
    cap = 16
    while n > cap * 3 // 4:
        cap *= 2
    return cap


def java_hashmap_order(keys: Sequence[str]) -> list[int]:
    """Indices of ``keys`` in the iteration order of a ``java.util.HashMap`` filled by ``put``.

    Buckets are ``(h ^ (h >>> 16)) & (capacity - 1)`` with capacity 16 doubled whenever the size
    exceeds 3/4 of it.  Java keeps insertion order inside a bucket; we use Java string order
    there so the order does not depend on the caller's ordering.
    """
    mask = _hashmap_capacity(len(keys)) - 1

    def bucket(i: int) -> tuple[int, bytes]:
        h = java_hash(keys[i])
        return ((h ^ (h >> 16)) & mask, java_string_key(keys[i]))

    return sorted(range(len(keys)), key=bucket)


# ------------------------------------------------------------------ problem encoding

@dataclass(slots=True)
class _Problem:
    """The assignment problem with partitions as ints and members as indices."""

    members: list[Member]
    topics: list[str]  # sorted in Java order
    offset: list[int]  # offset[i] = first gid of topics[i]; offset[T] = P
    counts: list[int]
    topic_index: dict[str, int]
    rank: list[int]  # rank[m] = position of member m in Java member-id order
    hash_order: list[int]
    subs: list[frozenset[int]]  # existing subscribed topic indices per member
    generation: list[int]  # < 0 normalised to -1 (absent)
    raw_owned: list[list[int]] = field(default_factory=list)  # valid claims, deduplicated, as gids

    @property
    def total(self) -> int:
        return self.offset[-1]


def _encode(counts: dict[str, int], members: list[Member]) -> _Problem:
    topics = sorted(existing_topics(counts, members), key=java_string_key)
    topic_index = {t: i for i, t in enumerate(topics)}
    offset = [0]
    for t in topics:
        offset.append(offset[-1] + counts[t])
    ids = [m.member_id for m in members]
    order = sorted(range(len(members)), key=lambda i: java_string_key(ids[i]))
    rank = [0] * len(members)
    for r, i in enumerate(order):
        rank[i] = r
    prob = _Problem(
        members=members,
        topics=topics,
        offset=offset,
        counts=[counts[t] for t in topics],
        topic_index=topic_index,
        rank=rank,
        hash_order=java_hashmap_order(ids),
        subs=_topic_sets(members, topic_index),
        generation=[m.generation if m.generation >= 0 else DEFAULT_GENERATION for m in members],
    )
    prob.raw_owned = [_valid_claims(prob, m) for m in members]
    return prob


def _topic_sets(members: list[Member], topic_index: dict[str, int]) -> list[frozenset[int]]:
    """Existing subscribed topic indices per member (members with equal lists share one set)."""
    cache: dict[tuple[str, ...], frozenset[int]] = {}
    out = []
    for m in members:
        s = cache.get(m.topics)
        if s is None:
            s = cache[m.topics] = frozenset(topic_index[t] for t in m.topics if t in topic_index)
        out.append(s)
    return out


def _valid_claims(prob: _Problem, m: Member) -> list[int]:
    """A member's claims as gids: known topic, partition in range, first occurrence only."""
    tindex, offset, counts = prob.topic_index, prob.offset, prob.counts
    out: list[int] = []
    append = out.append
    get = tindex.get
    for topic, p in m.owned:
        ti = get(topic)
        if ti is not None and 0 <= p < counts[ti]:
            append(offset[ti] + p)
    if len(set(out)) != len(out):
        out = list(dict.fromkeys(out))
    return out


# ------------------------------------------------------------------ step 1: resolve claims

@dataclass(slots=True)
class _Claims:
    owned: list[dict[int, None]]  # per member, insertion-ordered set of gids it keeps
    multiply_claimed: set[int]
    max_generation: int


def _resolve_claims(prob: _Problem) -> _Claims:
    n = len(prob.members)
    owned: list[dict[int, None]] = [{} for _ in range(n)]
    if not any(prob.raw_owned):  # a fresh group: nothing claimed
        return _Claims(owned=owned, multiply_claimed=set(), max_generation=max(prob.generation, default=DEFAULT_GENERATION))
    owner = [-1] * prob.total
    multi: set[int] = set()
    gen = prob.generation
    max_gen = DEFAULT_GENERATION
    for m in prob.hash_order:
        g_m = gen[m]
        if g_m > max_gen:
            max_gen = g_m
        mine = owned[m]
        for g in prob.raw_owned[m]:
            other = owner[g]
            if other < 0:
                mine[g] = None
                owner[g] = m
                continue
            g_o = gen[other]
            if g_m == g_o:
                multi.add(g)
                owned[other].pop(g, None)
                owner[g] = m
            elif g_m > g_o:
                mine[g] = None
                owned[other].pop(g, None)
                owner[g] = m
    return _Claims(owned=owned, multiply_claimed=multi, max_generation=max_gen)


def _all_subscriptions_equal(members: list[Member], order: list[int]) -> bool:
    """Kafka's test, walked in hash order: same topic set and same list size as the first member.

    Kafka re-seeds the reference set while it is empty, so an empty subscription walked first is
    "equal" to anything and then receives partitions it never subscribed to (I3).  We compare with
    the first member's set even when it is empty, so such a group takes the general path.
    """
    head = members[order[0]]
    first = head.topic_set
    size = len(first)
    for m in order[1:]:
        mem = members[m]
        if mem.raw_topic_count != size:
            return False
        if mem.topics is not head.topics and mem.topic_set != first:  # one shared topic list: equal
            return False
    return True


# ------------------------------------------------------------------ constrained path

class StickyInternalError(RuntimeError):
    """Kafka's ``IllegalStateException`` of the constrained path: the bookkeeping went wrong."""


def _constrained(prob: _Problem, claims: _Claims) -> tuple[list[list[int]], dict[int, int]]:
    n = len(prob.members)
    total = prob.total
    min_q, extra = divmod(total, n)
    max_q = min_q + (1 if extra else 0)
    expected_over = extra
    cur_over = 0
    multi = claims.multiply_claimed
    assignment: list[list[int]] = [[] for _ in range(n)]
    assigned = bytearray(total)
    revoked: set[int] = set()
    under: list[int] = []
    exact: list[int] = []

    pt_key = _partition_major_keys(prob).__getitem__ if any(claims.owned) else None
    for m in prob.hash_order:
        owned = [g for g in claims.owned[m] if g not in multi] if multi else list(claims.owned[m])
        if len(owned) > 1:
            owned.sort(key=pt_key)  # type: ignore[arg-type]
        size = len(owned)
        if size < min_q:
            keep = owned
            under.append(m)
        elif size >= max_q and cur_over < expected_over:
            cur_over += 1
            if cur_over == expected_over:
                exact.clear()
            keep = owned[:max_q]
            revoked.update(owned[max_q:])
        else:
            keep = owned[:min_q]
            revoked.update(owned[min_q:])
            if cur_over < expected_over:
                exact.append(m)
        assignment[m].extend(keep)
        for g in keep:
            assigned[g] = 1

    rank = prob.rank
    under.sort(key=rank.__getitem__)
    exact.sort(key=rank.__getitem__)
    unassigned = list(compress(range(total), assigned.translate(_FLIP)))
    transfers: dict[int, int] = {}
    exact_q = _Deque(exact)
    pos = 0
    for g in unassigned:
        if pos < len(under):
            m = under[pos]
            pos += 1
        elif not under and not exact_q:
            raise StickyInternalError("no more unfilled consumers to be assigned")
        elif not under:
            m = exact_q.popleft()
        else:
            m = under[0]
            pos = 1
        lst = assignment[m]
        lst.append(g)
        if g in revoked or g in multi:
            transfers[g] = m
        count = len(lst)
        if count == min_q:
            pos -= 1
            del under[pos]
            exact_q.append(m)
        elif count == max_q:
            cur_over += 1
    if under:
        if cur_over != expected_over:
            raise StickyInternalError("expected number of members above minQuota not reached")
        for m in under:
            if len(assignment[m]) != min_q:
                raise StickyInternalError(f"consumer {prob.members[m].member_id!r} below minQuota")
    return assignment, transfers


_FLIP = bytes([1, 0]) + bytes(254)


def _partition_major_keys(prob: _Problem) -> list[int]:
    """``key[gid] = partition * T + topic index``: sorting gids by it gives (partition, topic) order."""
    t_count = len(prob.topics)
    return [p * t_count + ti for ti, n in enumerate(prob.counts) for p in range(n)]


def _partition_table(prob: _Problem) -> list[Partition]:
    """``table[gid] = (topic, partition)`` (built at C speed)."""
    topics = chain.from_iterable(map(repeat, prob.topics, prob.counts))
    ints = list(range(max(prob.counts, default=0)))  # one int object per partition number, shared by all topics
    numbers = chain.from_iterable(ints[:n] for n in prob.counts)
    return list(zip(topics, numbers))


def _fresh_constrained(prob: _Problem) -> list[list[Partition]]:
    """The constrained path when no member keeps any partition (a fresh group), in closed form.

    With nothing kept, every member starts under ``minQuota`` (or, when ``minQuota`` is 0, waits at
    it), so :func:`_constrained` deals the partitions in (topic, partition) order round-robin over
    the members sorted by id until each holds ``minQuota``, and the ``P % C`` left over go one each
    to the first members in id order. Member of id rank ``r`` therefore gets gids ``r, r + C, ...``
    below ``C * minQuota`` and, if ``r < P % C``, gid ``C * minQuota + r``. No transfers (nothing
    was owned). Per member, in member order.

    Each member's ``(topic, partition)`` tuples are made from strided slices of two lists that
    hold, per gid, the topic's name and the partition's number (shared objects), so every tuple is
    created once, where it is needed, and no million-entry table of tuples is walked twice.
    """
    n = len(prob.members)
    counts = prob.counts
    topic_of = list(chain.from_iterable(map(repeat, prob.topics, counts)))
    ints = list(range(max(counts, default=0)))
    number_of = list(chain.from_iterable(ints[:c] for c in counts))
    head = n * (prob.total // n)
    extra = prob.total - head
    out = []
    for r in prob.rank:
        mine = list(zip(topic_of[r:head:n], number_of[r:head:n]))
        if r < extra:
            mine.append((topic_of[head + r], number_of[head + r]))
        out.append(mine)
    return out


class _Deque:
    """Minimal FIFO over a list (append / popleft / truthiness)."""

    __slots__ = ("_items", "_head")

    def __init__(self, items: list[int]) -> None:
        self._items = list(items)
        self._head = 0

    def append(self, x: int) -> None:
        self._items.append(x)

    def popleft(self) -> int:
        x = self._items[self._head]
        self._head += 1
        return x

    def __bool__(self) -> bool:
        return self._head < len(self._items)


# ------------------------------------------------------------------ general path

class _LoadIndex:
    """Least-loaded eligible member per topic: one lazy (load, rank, member) heap per subscription class.

    Cheap when a topic's subscribers fall into few classes (uniform or bucketed subscriptions); a
    lookup costs one heap top per class containing the topic.
    """

    def __init__(self, prob: _Problem, load: list[int]) -> None:
        self.load = load
        self.rank = prob.rank
        class_of_set: dict[frozenset[int], int] = {}
        self.member_class: list[int] = []
        for s in prob.subs:
            self.member_class.append(class_of_set.setdefault(s, len(class_of_set)))
        self.heaps: list[list[tuple[int, int, int]]] = [[] for _ in class_of_set]
        for m, k in enumerate(self.member_class):
            self.heaps[k].append((load[m], self.rank[m], m))
        for h in self.heaps:
            heapq.heapify(h)
        self.classes_of_topic: list[list[int]] = [[] for _ in prob.topics]
        for s, k in class_of_set.items():
            for t in s:
                self.classes_of_topic[t].append(k)

    def set_load(self, m: int, value: int) -> None:
        self.load[m] = value
        heapq.heappush(self.heaps[self.member_class[m]], (value, self.rank[m], m))

    def least(self, topic: int) -> int:
        """The eligible member with the fewest partitions (ties by member id); -1 if none."""
        best: tuple[int, int, int] | None = None
        load = self.load
        for k in self.classes_of_topic[topic]:
            h = self.heaps[k]
            while h and load[h[0][2]] != h[0][0]:
                heapq.heappop(h)
            if h and (best is None or h[0] < best):
                best = h[0]
        return -1 if best is None else best[2]


class _TopicLoadIndex:
    """Least-loaded eligible member per topic: one heap of (load, rank, member) per topic.

    Used when subscriptions are so varied that topics span many classes.  Recorded loads are lower
    bounds of the true loads: an increase is not pushed anywhere (a stale top is re-pushed with its
    true load when it surfaces), a decrease is pushed to every heap of the member's topics.  So the
    first fresh top is always the true minimum.
    """

    def __init__(self, prob: _Problem, load: list[int]) -> None:
        self.load = load
        self.rank = prob.rank
        self.subs = prob.subs
        self.heaps: list[list[tuple[int, int, int]]] = [[] for _ in prob.topics]
        for m, s in enumerate(prob.subs):
            entry = (load[m], self.rank[m], m)
            for t in s:
                self.heaps[t].append(entry)
        for h in self.heaps:
            heapq.heapify(h)

    def set_load(self, m: int, value: int) -> None:
        old = self.load[m]
        self.load[m] = value
        if value < old:
            entry = (value, self.rank[m], m)
            for t in self.subs[m]:
                heapq.heappush(self.heaps[t], entry)

    def least(self, topic: int) -> int:
        h = self.heaps[topic]
        load = self.load
        while h:
            recorded, rank, m = h[0]
            true = load[m]
            if recorded == true:
                return m
            if recorded < true:
                heapq.heapreplace(h, (true, rank, m))
            else:
                heapq.heappop(h)
        return -1


def _load_index(prob: _Problem, load: list[int], kind: str | None = None) -> "_LoadIndex | _TopicLoadIndex":
    """Pick the index: per class when a partition's lookup touches few classes, else per topic."""
    if kind is None:
        classes: dict[frozenset[int], None] = dict.fromkeys(prob.subs)
        per_topic = [0] * len(prob.topics)
        for s in classes:
            for t in s:
                per_topic[t] += 1
        cost = sum(c * k for c, k in zip(prob.counts, per_topic))
        kind = "class" if cost <= 8 * max(prob.total, 1) else "topic"
    return _LoadIndex(prob, load) if kind == "class" else _TopicLoadIndex(prob, load)


class _Movements:
    """Kafka's ``PartitionMovements``: per topic, net moves (src -> dst) during this balance."""

    def __init__(self) -> None:
        self.of_partition: dict[int, tuple[int, int]] = {}
        self.by_pair: dict[tuple[int, int, int], set[int]] = {}  # (topic, src, dst) -> gids

    def reverse_candidate(self, topic: int, old: int, new: int) -> int | None:
        moved = self.by_pair.get((topic, new, old))
        return min(moved) if moved else None

    def creates_reverse(self, topic: int, g: int, old: int, new: int) -> bool:
        src = self.of_partition.get(g, (old, old))[0]
        return src != new and bool(self.by_pair.get((topic, new, src)))

    def move(self, topic: int, g: int, old: int, new: int) -> None:
        rec = self.of_partition.pop(g, None)
        if rec is not None:
            key = (topic, rec[0], rec[1])
            s = self.by_pair[key]
            s.discard(g)
            if not s:
                del self.by_pair[key]
            src = rec[0]
        else:
            src = old
        if src != new:
            self.of_partition[g] = (src, new)
            self.by_pair.setdefault((topic, src, new), set()).add(g)


_INDEX_KIND: str | None = None  # tests set "class" or "topic" to compare the two indexes


def _general(prob: _Problem, claims: _Claims) -> list[set[int]]:
    n = len(prob.members)
    subs = prob.subs
    tof = _topic_table(prob)
    current: list[set[int]] = [set() for _ in range(n)]
    owner = [-1] * prob.total
    revocation_required = False
    for m in range(n):
        mine = subs[m]
        kept = {g for g in claims.owned[m] if tof[g] in mine}
        if len(kept) != len(claims.owned[m]):
            revocation_required = True
        current[m] = kept
        for g in kept:
            owner[g] = m
    prev = _previous_owners(prob, claims.max_generation)

    # order: topics by number of potential consumers, then name; partitions by number
    potential = [0] * len(prob.topics)
    for s in subs:
        for t in s:
            potential[t] += 1
    topic_order = sorted(range(len(prob.topics)), key=lambda t: (potential[t], t))
    load = [len(c) for c in current]
    index = _load_index(prob, load, _INDEX_KIND)

    placed: list[tuple[int, list[int]]] = []
    for t in topic_order:
        new: list[int] = []
        for g in range(prob.offset[t], prob.offset[t + 1]):
            if owner[g] < 0:
                m = index.least(t)
                owner[g] = m
                current[m].add(g)
                index.set_load(m, load[m] + 1)
                new.append(g)
        if new:
            placed.append((t, new))

    balancer = _Balancer(prob, current, owner, index, prev, tof)
    if not revocation_required:
        balancer.run([(t, gids) for t, gids in placed if potential[t] >= 2])
    balancer.run([(t, range(prob.offset[t], prob.offset[t + 1])) for t in topic_order if potential[t] >= 2])
    return current


def _topic_table(prob: _Problem) -> list[int]:
    """``table[gid] = topic index``."""
    return [ti for ti, n in enumerate(prob.counts) for _ in range(n)]


def _previous_owners(prob: _Problem, max_gen: int) -> dict[int, int]:
    """Per partition, the claimant with the highest generation below the maximum (first wins ties)."""
    prev: dict[int, tuple[int, int]] = {}
    for m in prob.hash_order:
        gm = prob.generation[m]
        if gm >= 0 and gm < max_gen:
            effective = gm
        elif gm < 0 and max_gen > DEFAULT_GENERATION:
            effective = DEFAULT_GENERATION
        else:
            continue
        for g in prob.raw_owned[m]:
            old = prev.get(g)
            if old is None or effective > old[1]:
                prev[g] = (m, effective)
    return {g: m for g, (m, _) in prev.items()}


class _Balancer:
    """Reassignment passes (``performReassignments``) with Robin-Hood moves only."""

    def __init__(self, prob: _Problem, current: list[set[int]], owner: list[int], index: "_LoadIndex | _TopicLoadIndex", prev: dict[int, int],
                 tof: list[int]) -> None:
        self.prob = prob
        self.prev_topics = {tof[g] for g in prev}
        self.current = current
        self.owner = owner
        self.index = index
        self.load = index.load
        self.prev = prev
        self.moves = _Movements()

    def run(self, groups: list[tuple[int, Sequence[int]]]) -> None:
        """Passes over ``groups`` (topic, its partitions in order) until a whole pass moves nothing."""
        modified = True
        while modified:
            modified = False
            for t, gids in groups:
                if t not in self.prev_topics and not self._topic_may_move(t, gids):
                    continue  # exact shortcut: no partition of this topic qualifies, and nothing changes
                for g in gids:
                    if self._consider(t, g):
                        modified = True

    def _topic_may_move(self, t: int, gids: Sequence[int]) -> bool:
        n = self.index.least(t)
        if n < 0 or not gids:
            return False
        load, owner = self.load, self.owner
        if isinstance(gids, range):
            owners = owner[gids.start:gids.stop]
        else:
            owners = list(map(owner.__getitem__, gids))
        return max(map(load.__getitem__, owners)) > load[n] + 1

    def _consider(self, t: int, g: int) -> bool:
        load = self.load
        o = self.owner[g]
        q = self.prev.get(g, -1)
        if q >= 0 and q != o and t in self.prob.subs[q] and load[o] > load[q] + 1:
            self._move(t, g, o, q)
            return True
        n = self.index.least(t)
        if n < 0 or n == o or load[o] <= load[n] + 1:
            return False
        self._move(t, self._pick(t, g, o, n), o, n)
        return True

    def _pick(self, t: int, g: int, o: int, n: int) -> int:
        """Which of ``o``'s partitions of topic ``t`` moves to ``n`` (stickiness, no 2-cycles)."""
        moves = self.moves
        back = moves.reverse_candidate(t, o, n)
        if back is not None:
            return back
        if not moves.creates_reverse(t, g, o, n):
            return g
        lo, hi = self.prob.offset[t], self.prob.offset[t + 1]
        for h in sorted(x for x in self.current[o] if lo <= x < hi):
            if not moves.creates_reverse(t, h, o, n):
                return h
        return g  # balance (I5) wins over stickiness

    def _move(self, t: int, g: int, old: int, new: int) -> None:
        self.moves.move(t, g, old, new)
        self.current[old].discard(g)
        self.current[new].add(g)
        self.owner[g] = new
        self.index.set_load(old, self.load[old] - 1)
        self.index.set_load(new, self.load[new] + 1)


# ------------------------------------------------------------------ driver

@dataclass(frozen=True, slots=True)
class StickyOutcome:
    """Everything one sticky run decided.

    ``ideal`` is the sticky assignment (the eager answer), ``transfers`` maps each partition that
    changes owner to its intended new owner (empty for the eager assignor's purposes on the general
    path, as in Kafka it is computed only for the cooperative one), and ``round_one`` is ``ideal``
    with the transfers withheld (the cooperative answer).  ``path`` is ``"constrained"`` or
    ``"general"``.
    """

    ideal: Assignment
    round_one: Assignment
    transfers: dict[Partition, str]
    path: str


def sticky_assign(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]]) -> StickyOutcome:
    """Run the sticky algorithm once and return the ideal assignment, transfers and round-1 result."""
    return _sticky_assign(partitions_per_topic, subscriptions)


def _sticky_assign(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]],
                   closed_form: bool = True, one_answer: bool = False) -> StickyOutcome:
    """``closed_form``: deal a fresh equal-subscription group by :func:`_fresh_constrained`;
    ``one_answer``: the caller reads only ``ideal`` or only ``round_one`` (``assign``), so where
    the two are equal they may share their lists."""
    counts = check_partition_counts(partitions_per_topic)
    members = normalize(subscriptions)
    if not members:
        return StickyOutcome({}, {}, {}, "constrained")
    prob = _encode(counts, members)
    claims = _resolve_claims(prob)
    equal = _all_subscriptions_equal(members, prob.hash_order)
    if closed_form and equal and not claims.multiply_claimed and not any(claims.owned):
        lists = _fresh_constrained(prob)
        ideal = {mem.member_id: lists[m] for m, mem in enumerate(members)}
        round_one = ideal if one_answer else {k: list(v) for k, v in ideal.items()}
        return StickyOutcome(ideal=ideal, round_one=round_one, transfers={}, path="constrained")
    if equal:
        path = "constrained"
        lists, tmap = _constrained(prob, claims)
        per_member: list[Sequence[int]] = lists
    else:
        path = "general"
        sets = _general(prob, claims)
        per_member = sets
        tmap = _general_transfers(prob, sets)
    return _outcome(prob, per_member, tmap, path)


def _outcome(prob: _Problem, per_member: Sequence[Sequence[int]], tmap: dict[int, int], path: str) -> StickyOutcome:
    """The outcome from per-member gids and the transfer map (gid -> new owner)."""
    members = prob.members
    withheld: list[set[int]] = [set() for _ in members]
    for g, m in tmap.items():
        withheld[m].add(g)
    table = _partition_table(prob)
    ideal: Assignment = {}
    round_one: Assignment = {}
    for m, mem in enumerate(members):
        gids = sorted(per_member[m])
        mine = [table[g] for g in gids]
        ideal[mem.member_id] = mine
        w = withheld[m]
        round_one[mem.member_id] = [table[g] for g in gids if g not in w] if w else list(mine)
    transfers = {table[g]: members[m].member_id for g, m in sorted(tmap.items())}
    return StickyOutcome(ideal=ideal, round_one=round_one, transfers=transfers, path=path)


def _general_transfers(prob: _Problem, assigned: list[set[int]]) -> dict[int, int]:
    """Transfers on the general path.

    Kafka (``CooperativeStickyAssignor.computePartitionsTransferringOwnership``): partitions newly
    assigned to a member (not in its raw owned list) that some member raw-owns but does not get.
    We add the generation-validated rule I6': a partition a member raw-owns is still withheld from
    it when another member claims it with the same or a higher generation, because that other
    member may be consuming it until it learns of this assignment.
    """
    raw_owner = [-1] * prob.total
    shared: dict[int, list[int]] = {}  # partitions with two or more claimants -> claimants
    revoked: set[int] = set()
    for m, owned in enumerate(prob.raw_owned):
        a = assigned[m]
        for g in owned:
            o = raw_owner[g]
            if o < 0:
                raw_owner[g] = m
            else:
                shared.setdefault(g, [o]).append(m)
        revoked.update([g for g in owned if g not in a])
    if not revoked and not shared:
        return {}
    gen = prob.generation
    out: dict[int, int] = {}
    for m, a in enumerate(assigned):
        for g in a:
            o = raw_owner[g]
            if o < 0:
                continue
            cl = shared.get(g)
            if cl is None:
                if o != m and g in revoked:
                    out[g] = m
            elif m not in cl:
                if g in revoked:
                    out[g] = m
            elif any(c != m and gen[c] >= gen[m] for c in cl):
                out[g] = m
    return out


class StickyAssignor:
    """``org.apache.kafka.clients.consumer.StickyAssignor`` (eager): the full sticky assignment."""

    name = "sticky"
    protocol = "eager"
    supported_protocols: tuple[str, ...] = ("eager",)

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]]) -> Assignment:
        return _sticky_assign(partitions_per_topic, subscriptions, one_answer=True).ideal

    def assign_detailed(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]]) -> StickyOutcome:
        return sticky_assign(partitions_per_topic, subscriptions)

    def __repr__(self) -> str:
        return "StickyAssignor()"


class CooperativeStickyAssignor:
    """``org.apache.kafka.clients.consumer.CooperativeStickyAssignor``: one round, transfers withheld."""

    name = "cooperative-sticky"
    protocol = "cooperative"
    supported_protocols: tuple[str, ...] = ("eager", "cooperative")

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]]) -> Assignment:
        return _sticky_assign(partitions_per_topic, subscriptions, one_answer=True).round_one

    def assign_detailed(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]]) -> StickyOutcome:
        return sticky_assign(partitions_per_topic, subscriptions)

    def __repr__(self) -> str:
        return "CooperativeStickyAssignor()"
