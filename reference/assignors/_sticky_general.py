"""The sticky assignors' general path (subscriptions not all equal): see :mod:`.sticky` for the theory (3.).

Owns: placing unassigned partitions on the least-loaded eligible member (:class:`LoadIndex` per
subscription class, :class:`TopicLoadIndex` per topic, chosen by :func:`load_index`), the
reassignment passes with Kafka's ``PartitionMovements`` (:func:`general`), and the general path's
transfers for the cooperative assignor (:func:`general_transfers`). Works on a
:class:`._sticky_problem.Problem`; imports only that module.
"""
from __future__ import annotations

import heapq
from typing import Sequence

from ._sticky_problem import DEFAULT_GENERATION, Claims, Problem

__all__ = ["INDEX_KIND", "LoadIndex", "TopicLoadIndex", "general", "general_transfers", "load_index"]

# ------------------------------------------------------------------ general path

class LoadIndex:
    """Least-loaded eligible member per topic: one lazy (load, rank, member) heap per subscription class.

    Cheap when a topic's subscribers fall into few classes (uniform or bucketed subscriptions); a
    lookup costs one heap top per class containing the topic.
    """

    def __init__(self, prob: Problem, load: list[int]) -> None:
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


class TopicLoadIndex:
    """Least-loaded eligible member per topic: one heap of (load, rank, member) per topic.

    Used when subscriptions are so varied that topics span many classes.  Recorded loads are lower
    bounds of the true loads: an increase is not pushed anywhere (a stale top is re-pushed with its
    true load when it surfaces), a decrease is pushed to every heap of the member's topics.  So the
    first fresh top is always the true minimum.
    """

    def __init__(self, prob: Problem, load: list[int]) -> None:
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


def load_index(prob: Problem, load: list[int], kind: str | None = None) -> "LoadIndex | TopicLoadIndex":
    """Pick the index: per class when a partition's lookup touches few classes, else per topic."""
    if kind is None:
        classes: dict[frozenset[int], None] = dict.fromkeys(prob.subs)
        per_topic = [0] * len(prob.topics)
        for s in classes:
            for t in s:
                per_topic[t] += 1
        cost = sum(c * k for c, k in zip(prob.counts, per_topic))
        kind = "class" if cost <= 8 * max(prob.total, 1) else "topic"
    return LoadIndex(prob, load) if kind == "class" else TopicLoadIndex(prob, load)


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


INDEX_KIND: str | None = None  # tests set "class" or "topic" to compare the two indexes


def general(prob: Problem, claims: Claims) -> list[set[int]]:
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
    index = load_index(prob, load, INDEX_KIND)

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


def _topic_table(prob: Problem) -> list[int]:
    """``table[gid] = topic index``."""
    return [ti for ti, n in enumerate(prob.counts) for _ in range(n)]


def _previous_owners(prob: Problem, max_gen: int) -> dict[int, int]:
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

    def __init__(self, prob: Problem, current: list[set[int]], owner: list[int], index: "LoadIndex | TopicLoadIndex", prev: dict[int, int],
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


def general_transfers(prob: Problem, assigned: list[set[int]]) -> dict[int, int]:
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
