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

Where the parts live: the encoding and step 1 in :mod:`._sticky_problem`, the general path (3, and
its transfers for 4) in :mod:`._sticky_general`; this module has the constrained path (2, and the
fresh group's closed form :func:`_fresh_constrained`), the cooperative deferral and the assignors.
"""
from __future__ import annotations

from bisect import bisect_right
from collections import deque
from dataclasses import dataclass
from itertools import chain, compress, islice, repeat
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ._frame import Assignment, Partition, check_partition_counts, collector_paused, normalize_claims
from ._sticky_general import general, general_transfers
from ._sticky_problem import Claims, Gids, Problem, all_subscriptions_equal, encode, java_hash, java_hashmap_order, resolve_claims

__all__ = [
    "CooperativeStickyAssignor",
    "StickyAssignor",
    "StickyClaims",
    "StickyOutcome",
    "java_hash",
    "java_hashmap_order",
    "sticky_assign",
    "sticky_claims",
]


# ------------------------------------------------------------------ constrained path

class StickyInternalError(RuntimeError):
    """Kafka's ``IllegalStateException`` of the constrained path: the bookkeeping went wrong."""


def _constrained(prob: Problem, claims: Claims) -> tuple[list[Gids], dict[int, int]]:
    n = len(prob.members)
    total = prob.total
    min_q, extra = divmod(total, n)
    max_q = min_q + (1 if extra else 0)
    expected_over = extra
    cur_over = 0
    multi = claims.multiply_claimed
    assignment: list[Gids] = [[] for _ in range(n)]  # a claims array kept whole stays one
    assigned = bytearray(total)
    revoked: set[int] = set()
    under: list[int] = []
    exact: list[int] = []

    pt_key = None
    whole = not multi  # every member keeps every partition it claims (then they are the ones claimed)
    for m in prob.hash_order:
        owned: Gids = claims.owned[m]
        if multi:
            owned = [g for g in owned if g not in multi]
        size = len(owned)
        if size < min_q:
            limit = size
            under.append(m)
        elif size >= max_q and cur_over < expected_over:
            cur_over += 1
            if cur_over == expected_over:
                exact.clear()
            limit = max_q
        else:
            limit = min_q
            if cur_over < expected_over:
                exact.append(m)
        if size > limit:  # which ones it keeps: the first in (partition, topic) order
            if pt_key is None:
                pt_key = _partition_major_keys(prob).__getitem__
            owned = sorted(owned.tolist() if type(owned) is np.ndarray else owned, key=pt_key)
            revoked.update(owned[limit:])
            keep: Gids = owned[:limit]
            whole = False
        else:  # all of it: a claims array stays one (made a list only if it receives partitions below)
            keep = owned if type(owned) is np.ndarray else list(owned)
        assignment[m] = keep
    if whole and prob.claimed is not None:
        assigned = prob.claimed
    else:
        mark = assigned.__setitem__
        for keep in assignment:
            deque(map(mark, keep, repeat(1)), maxlen=0)

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
        if type(lst) is not list:
            lst = assignment[m] = lst.tolist()  # type: ignore[union-attr]  # (not a list: a claims array)
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


def _partition_major_keys(prob: Problem) -> list[int]:
    """``key[gid] = partition * T + topic index``: sorting gids by it gives (partition, topic) order."""
    t_count = len(prob.topics)
    return [p * t_count + ti for ti, n in enumerate(prob.counts) for p in range(n)]


def _partition_table(prob: Problem) -> list[Partition]:
    """``table[gid] = (topic, partition)`` (built at C speed)."""
    topics = chain.from_iterable(map(repeat, prob.topics, prob.counts))
    ints = list(range(max(prob.counts, default=0)))  # one int object per partition number, shared by all topics
    numbers = chain.from_iterable(ints[:n] for n in prob.counts)
    return list(zip(topics, numbers))


def _fresh_constrained(prob: Problem) -> list[list[Partition]]:
    """The constrained path when no member keeps any partition (a fresh group), in closed form.

    With nothing kept, every member starts under ``minQuota`` (or, when ``minQuota`` is 0, waits at
    it), so :func:`_constrained` deals the partitions in (topic, partition) order round-robin over
    the members sorted by id until each holds ``minQuota``, and the ``P % C`` left over go one each
    to the first members in id order. Member of id rank ``r`` therefore gets gids ``r, r + C, ...``
    below ``C * minQuota`` and, if ``r < P % C``, gid ``C * minQuota + r``. No transfers (nothing
    was owned). Per member, in member order.

    The ``(topic, partition)`` tuples are made in one pass, in gid order, straight from iterators
    over the topic names and over one shared list of partition numbers (no per-gid lists of names or
    numbers are built: a million-entry list is one more object the cycle collector walks), and each
    member's list is a strided slice of them.
    """
    n = len(prob.members)
    counts = prob.counts
    ints = list(range(max(counts, default=0)))
    pairs = list(zip(chain.from_iterable(map(repeat, prob.topics, counts)), chain.from_iterable(map(islice, repeat(ints), counts))))
    head = n * (prob.total // n)
    extra = prob.total - head
    out = []
    for r in prob.rank:
        mine = pairs[r:head:n]
        if r < extra:
            mine.append(pairs[head + r])
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


@dataclass(frozen=True, slots=True)
class StickyClaims:
    """Step 1 of one sticky run (``AbstractStickyAssignor.allSubscriptionsEqual``): the members' claims resolved.

    ``order`` is the member ids in the order Kafka walks them (its ``HashMap`` of member ids); ``owned`` per member
    what it keeps after the conflicts are resolved (Kafka's ``consumerToOwnedPartitions``) and
    ``multiply_claimed`` the partitions two members claimed in one generation (``partitionsWithMultiplePreviousOwners``;
    the mark stays when a higher generation takes the partition over later); ``path`` is ``"constrained"`` or
    ``"general"`` and ``valid`` what that path keeps as each member's owned partitions before it assigns anything:
    ``owned`` less the multiply-claimed ones on the constrained path (``ConstrainedAssignmentBuilder``), ``owned`` on
    topics the member still subscribes to on the general path (``GeneralAssignmentBuilder`` is not given the mark).
    Claims on topics nobody subscribes to or that do not exist, and partition numbers out of range, are dropped
    first (see :mod:`.sticky`, step 1). Lists sorted by (topic, partition).
    """

    order: list[str]
    owned: dict[str, list[Partition]]
    multiply_claimed: list[Partition]
    max_generation: int
    path: str
    valid: dict[str, list[Partition]]


def sticky_claims(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]]) -> StickyClaims:
    """The sticky assignors' claim resolution alone, as Kafka does it (the input of :func:`sticky_assign`)."""
    counts = check_partition_counts(partitions_per_topic)
    members, columns = normalize_claims(subscriptions)
    if not members:
        return StickyClaims([], {}, [], -1, "constrained", {})
    prob = encode(counts, members, columns)
    claims = resolve_claims(prob)
    equal = all_subscriptions_equal(prob)
    offsets = prob.offset

    def pairs(gids: Any) -> list[Partition]:
        out: list[Partition] = []
        for g in gids:
            ti = bisect_right(offsets, int(g)) - 1
            out.append((prob.topics[ti], int(g) - offsets[ti]))
        return sorted(out)

    multi = claims.multiply_claimed
    owned = {mem.member_id: pairs(claims.owned[m]) for m, mem in enumerate(members)}
    if equal:
        valid = {mem.member_id: pairs(g for g in claims.owned[m] if int(g) not in multi) for m, mem in enumerate(members)}
    else:
        valid = {mem.member_id: [tp for tp in owned[mem.member_id] if tp[0] in mem.topic_set] for mem in members}
    return StickyClaims(order=[members[m].member_id for m in prob.hash_order], owned=owned, multiply_claimed=pairs(multi),
                        max_generation=claims.max_generation, path="constrained" if equal else "general", valid=valid)


def _sticky_assign(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]],
                   closed_form: bool = True, one_answer: bool = False) -> StickyOutcome:
    """``closed_form``: deal a fresh equal-subscription group by :func:`_fresh_constrained`;
    ``one_answer``: the caller reads only ``ideal`` or only ``round_one`` (``assign``), so where
    the two are equal they may share their lists."""
    counts = check_partition_counts(partitions_per_topic)
    members, columns = normalize_claims(subscriptions)  # the claims as columns (_sticky_problem reads them)
    if not members:
        return StickyOutcome({}, {}, {}, "constrained")
    prob = encode(counts, members, columns)
    claims = resolve_claims(prob)
    equal = all_subscriptions_equal(prob)
    if closed_form and equal and not claims.multiply_claimed and not any(map(len, claims.owned)):
        lists = _fresh_constrained(prob)
        ideal = {mem.member_id: lists[m] for m, mem in enumerate(members)}
        round_one = ideal if one_answer else {k: list(v) for k, v in ideal.items()}
        return StickyOutcome(ideal=ideal, round_one=round_one, transfers={}, path="constrained")
    if equal:
        path = "constrained"
        gid_lists, tmap = _constrained(prob, claims)
        per_member: Sequence[Gids | set[int]] = gid_lists
    else:
        path = "general"
        _claims_as_lists(prob, claims)
        sets = general(prob, claims)
        per_member = sets
        tmap = general_transfers(prob, sets)
    return _outcome(prob, per_member, tmap, path, one_answer)


def _claims_as_lists(prob: Problem, claims: Claims) -> None:
    """The general path reads the claims gid by gid: the arrays :func:`encode` may leave are made lists."""
    raw = prob.raw_owned
    prob.raw_owned = [g.tolist() if type(g) is np.ndarray else g for g in raw]
    if claims.owned is raw:
        claims.owned = prob.raw_owned
    else:
        claims.owned = [g.tolist() if type(g) is np.ndarray else g for g in claims.owned]


def _ascending_per_member(gids: npt.NDArray[np.int64], lens: list[int]) -> bool:
    """Whether every member's run of ``gids`` (the members' lists one after the other, ``lens`` long) is strictly
    ascending: then it is already the output's order (by member, then gid)."""
    if len(gids) < 2:
        return True
    up = gids[1:] > gids[:-1]
    ends = np.cumsum(lens)[:-1]
    ends = ends[(ends > 0) & (ends < len(gids))]
    up[ends - 1] = True  # where one member's run ends and the next begins, any order
    return bool(up.all())


def _outcome(prob: Problem, per_member: Sequence[Gids | set[int]], tmap: dict[int, int], path: str,
             one_answer: bool = False) -> StickyOutcome:
    """The outcome from per-member gids and the transfer map (gid -> new owner); ``one_answer``: ``ideal`` and
    ``round_one`` may share the lists where they are equal (the caller reads only one of them).

    The ``(topic, partition)`` pairs are made in one pass in output order (by member, then gid), so a million of them
    are allocated one after the other and each member's list is one slice: every member's gids sorted at once (one
    owner number per gid, a stable sort by owner), then :func:`_new_pairs`. A member that sent its claims as
    ``(str, int)`` tuples (a previous result handed back) and is given exactly them, in the same order
    (:func:`_given_as_sent`), gets a copy of the list it sent instead: its pairs are equal to new ones, and tuples are
    immutable. Only the other members' pairs are made."""
    members = prob.members
    n = len(members)
    lens = list(map(len, per_member))
    count = sum(lens)
    gids = np.concatenate([g if type(g) is np.ndarray else np.fromiter(g, dtype=np.int64, count=len(g)) for g in per_member]) \
        if per_member else np.zeros(0, dtype=np.int64)  # claims arrays as they are, lists and sets converted
    order: npt.NDArray[np.int64]
    if _ascending_per_member(gids, lens):
        # the output order already (a member that keeps what it claimed keeps its claims in the previous result's
        # order): no sort; each partition at most once, checked on one byte per partition
        marks = np.zeros(prob.total, dtype=np.uint8)
        marks[gids] = 1
        if int(np.count_nonzero(marks)) != count:
            raise StickyInternalError("a partition assigned to two members")
        order = gids
    else:
        owner_type = np.int16 if n < 2**15 else np.int32  # 16 bits: numpy's stable sort is a radix sort
        owner: npt.NDArray[np.signedinteger[Any]] = np.full(prob.total, n, dtype=owner_type)  # n: nobody's
        owner[gids] = np.repeat(np.arange(n, dtype=owner_type), lens)
        if count and int(np.count_nonzero(owner < n)) != count:
            raise StickyInternalError("a partition assigned to two members")
        order = np.argsort(owner, kind="stable")[:count]
    kept = _given_as_sent(prob, order, lens)
    # new pairs for the members that do not get their own back, in output order
    pairs = _new_pairs(prob, order if kept is None else order[np.repeat(~kept, lens)])
    sent = prob.sent_pairs
    withheld: dict[int, set[int]] = {}
    for g, m in tmap.items():
        withheld.setdefault(m, set()).add(g)
    ideal: Assignment = {}
    round_one: Assignment = {}
    at = 0
    for m, mem in enumerate(members):
        end = at + lens[m]
        if kept is not None and kept[m]:
            assert sent is not None
            mine = list(sent[m])  # type: ignore[arg-type]  # kept[m]: not None
        else:
            mine = list(islice(pairs, lens[m]))
        ideal[mem.member_id] = mine
        w = withheld.get(m)
        if w:
            round_one[mem.member_id] = [p for p, g in zip(mine, order[at:end].tolist()) if g not in w]
        else:
            round_one[mem.member_id] = mine if one_answer else list(mine)
        at = end
    offsets = prob.offset

    def pair_of(g: int) -> Partition:
        ti = bisect_right(offsets, g) - 1
        return (prob.topics[ti], g - offsets[ti])

    transfers = {pair_of(g): members[m].member_id for g, m in sorted(tmap.items())}
    return StickyOutcome(ideal=ideal, round_one=round_one, transfers=transfers, path=path)


def _given_as_sent(prob: Problem, order: npt.NDArray[np.int64], lens: list[int]) -> npt.NDArray[np.bool_] | None:
    """Per member, whether it is given exactly what it sent as its claims, pair for pair in the same order, and sent
    them as ``(str, int)`` tuples (``Problem.sent_pairs``): then its list of pairs is a copy of the one it sent (a
    member handing back its previous result and keeping it, the common case of a stable group). None when no member
    is. ``order``: the output's gids, member after member, ``lens`` long each."""
    sent, sent_gids, starts = prob.sent_pairs, prob.sent_gids, prob.sent_starts
    if sent is None or sent_gids is None or starts is None:
        return None
    out_lens = np.asarray(lens, dtype=np.int64)
    s = np.asarray(starts, dtype=np.int64)
    kept: npt.NDArray[np.bool_] = (np.diff(s) == out_lens) & np.fromiter((p is not None for p in sent), dtype=np.bool_, count=len(sent))
    if not kept.any():
        return None
    out_ends = np.cumsum(out_lens)
    at = np.flatnonzero(np.repeat(kept, out_lens))  # the output positions of the candidates
    # output position i of member m is its claim i - out_start[m] + s[m]
    shift = np.repeat((s[:-1] - (out_ends - out_lens))[kept], out_lens[kept])
    wrong = at[sent_gids[at + shift] != order[at]]
    if len(wrong):
        kept[np.searchsorted(out_ends, wrong, side="right")] = False
    return kept


def _new_pairs(prob: Problem, gids: npt.NDArray[np.int64]) -> Iterator[Partition]:
    """The ``(topic, partition)`` pairs of ``gids``, in order: topic names and partition numbers gathered from object
    arrays (the partition numbers shared: one int object per number)."""
    topic_of = np.repeat(np.arange(len(prob.topics)), prob.counts)[gids]
    number_of = gids - np.asarray(prob.offset[:-1], dtype=np.int64)[topic_of]
    names = np.array(prob.topics, dtype=object)
    numbers = np.array(list(range(max(prob.counts, default=0))), dtype=object)  # one int object per number
    return zip(names[topic_of].tolist(), numbers[number_of].tolist())


class StickyAssignor:
    """``org.apache.kafka.clients.consumer.StickyAssignor`` (eager): the full sticky assignment."""

    name = "sticky"
    protocol = "eager"
    supported_protocols: tuple[str, ...] = ("eager",)

    @collector_paused
    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]]) -> Assignment:
        return _sticky_assign(partitions_per_topic, subscriptions, one_answer=True).ideal

    @collector_paused
    def assign_detailed(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]]) -> StickyOutcome:
        return sticky_assign(partitions_per_topic, subscriptions)

    def __repr__(self) -> str:
        return "StickyAssignor()"


class CooperativeStickyAssignor:
    """``org.apache.kafka.clients.consumer.CooperativeStickyAssignor``: one round, transfers withheld."""

    name = "cooperative-sticky"
    protocol = "cooperative"
    supported_protocols: tuple[str, ...] = ("eager", "cooperative")

    @collector_paused
    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]]) -> Assignment:
        return _sticky_assign(partitions_per_topic, subscriptions, one_answer=True).round_one

    @collector_paused
    def assign_detailed(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Mapping[str, Any]]) -> StickyOutcome:
        return sticky_assign(partitions_per_topic, subscriptions)

    def __repr__(self) -> str:
        return "CooperativeStickyAssignor()"
