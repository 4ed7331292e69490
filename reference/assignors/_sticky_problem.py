"""The sticky assignors' problem in integers, and step 1 (claims): see :mod:`.sticky` for the theory.

Owns: Java ``String.hashCode`` and ``HashMap`` iteration order (:func:`java_hash`,
:func:`java_hashmap_order`; also used by the Connect assignor), the encoding of one call as ints
(:class:`Problem`: topics in Java order, partition ``gid = offset[topic] + partition``, members as
indices with their rank in member-id order), claim resolution (:func:`resolve_claims`) and Kafka's
``allSubscriptionsEqual`` (:func:`all_subscriptions_equal`). Imports only :mod:`._frame`.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from itertools import accumulate, chain
from operator import mul
from typing import Any, Iterable, Sequence, Union

import numpy as np
import numpy.typing as npt

from ._frame import ClaimColumns, Member, existing_topics, java_string_key

# One member's partitions as gids (global partition numbers): a list, or a view of one claims array (``encode``
# leaves the claims as arrays where no partition is claimed twice: no int object per claim)
Gids = Union[Sequence[int], npt.NDArray[np.int64]]

__all__ = [
    "DEFAULT_GENERATION",
    "Claims",
    "Problem",
    "all_subscriptions_equal",
    "encode",
    "java_hash",
    "java_hashmap_order",
    "resolve_claims",
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
    h: int = sum(map(mul, units, reversed(_POW31[:n]))) & 0xFFFFFFFF
    return h


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
class Problem:
    """The assignment problem with partitions as ints and members as indices."""

    members: list[Member]
    topics: list[str]  # sorted in Java order
    offset: list[int]  # offset[i] = first gid of topics[i]; offset[T] = P
    counts: list[int]
    topic_index: dict[str, int]
    rank: list[int]  # rank[m] = position of member m in Java member-id order
    subs: list[frozenset[int]]  # existing subscribed topic indices per member
    generation: list[int]  # < 0 normalised to -1 (absent)
    #: valid claims, deduplicated, as gids: lists, or (when no partition is claimed twice) views of one int64 array
    raw_owned: list[Gids] = field(default_factory=list)
    hash_order_cache: list[int] | None = None
    claims_overlap: bool = False  # some partition is claimed by two or more members
    claimed: bytearray | None = None  # claimed[gid] == 1 if some member claims it (None: nothing claimed)
    #: every member's claims as it sent them (``ClaimColumns.pairs``: its list when every entry is a ``(str, int)``
    #: tuple, else None) and, in one array, every claim's gid in that order (all members', one after the other), when
    #: every claim is valid; else all three None. A member given exactly what it claimed gets its own pairs back.
    sent_pairs: list[Sequence[tuple[str, int]] | None] | None = None
    sent_gids: npt.NDArray[np.int64] | None = None
    sent_starts: list[int] | None = None  # member ``m``'s claims are ``sent_gids[sent_starts[m]:sent_starts[m + 1]]``

    @property
    def total(self) -> int:
        return self.offset[-1]

    @property
    def hash_order(self) -> list[int]:
        """Member indices in Java ``HashMap`` order (:func:`java_hashmap_order`), computed on first use:
        a fresh group with equal subscriptions never needs it."""
        if self.hash_order_cache is None:
            self.hash_order_cache = java_hashmap_order([m.member_id for m in self.members])
        return self.hash_order_cache


def encode(counts: dict[str, int], members: list[Member], columns: ClaimColumns | None = None) -> Problem:
    """The problem of one call; ``columns``: the members' claims (:func:`normalize_claims`), else their ``owned``."""
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
    prob = Problem(
        members=members,
        topics=topics,
        offset=offset,
        counts=[counts[t] for t in topics],
        topic_index=topic_index,
        rank=rank,
        subs=_topic_sets(members, topic_index),
        generation=[m.generation if m.generation >= 0 else DEFAULT_GENERATION for m in members],
    )
    if columns is None:
        columns = ClaimColumns([tuple(t for t, _ in m.owned) for m in members], [tuple(p for _, p in m.owned) for m in members],
                               [None] * len(members))
    prob.raw_owned, prob.claims_overlap, prob.claimed = _all_claims(prob, columns)
    return prob


def _topic_sets(members: list[Member], topic_index: dict[str, int]) -> list[frozenset[int]]:
    """Existing subscribed topic indices per member (members with equal lists share one set).

    Looked up by the identity of the member's topic tuple first (members parsed from one shared list
    share one tuple), so a long list is hashed once per distinct object, not once per member."""
    by_id: dict[int, frozenset[int]] = {}
    by_value: dict[tuple[str, ...], frozenset[int]] = {}
    out = []
    for m in members:
        s = by_id.get(id(m.topics))
        if s is None:
            s = by_value.get(m.topics)
            if s is None:
                s = by_value[m.topics] = frozenset(topic_index[t] for t in m.topics if t in topic_index)
            by_id[id(m.topics)] = s
        out.append(s)
    return out


def _all_claims(prob: Problem, columns: ClaimColumns) -> tuple[list[Gids], bool, bytearray | None]:
    """Every member's valid claims as gids (:func:`_valid_claims`), and whether two members claim one partition
    (and, when every claim is valid, :attr:`Problem.sent_pairs` and the arrays beside it set).

    All claims are turned into gids at once by C-speed passes over the columns, then cut per member; when some claim
    is on an unknown topic (or one nobody subscribes to) or out of range, each member's claims take
    :func:`_valid_claims`. One byte per partition marks what is claimed: when as many are marked as there are claims,
    no member claims a partition twice (nothing to deduplicate) and no two members claim the same one."""
    lens = list(map(len, columns.topics))
    total = sum(lens)
    if not total:
        return [[] for _ in prob.members], False, None
    gids_np = None
    try:  # topic index and partition number of every claim, as arrays (no int object per claim)
        ti = np.fromiter(map(prob.topic_index.__getitem__, chain.from_iterable(columns.topics)), dtype=np.int64, count=total)
        nums = np.fromiter(chain.from_iterable(columns.numbers), dtype=np.int64, count=total)
    except (KeyError, OverflowError):  # a claim on a topic that does not exist (or nobody subscribes to), or a huge number
        pass
    else:
        if int(nums.min()) >= 0 and bool((nums < np.asarray(prob.counts, dtype=np.int64)[ti]).all()):
            gids_np = np.asarray(prob.offset[:-1], dtype=np.int64)[ti] + nums
    out: list[Gids]
    if gids_np is not None:  # each member's claims a view of one array (no int object per claim)
        starts = [0, *accumulate(lens)]
        out = [gids_np[a:b] for a, b in zip(starts, starts[1:])]
        prob.sent_pairs, prob.sent_gids, prob.sent_starts = columns.pairs, gids_np, starts
    else:
        out = [_valid_claims(prob, zip(t, n)) for t, n in zip(columns.topics, columns.numbers)]
        gids_np = np.fromiter(chain.from_iterable(out), dtype=np.int64, count=sum(map(len, out)))
    marks = np.zeros(prob.total, dtype=np.uint8)
    marks[gids_np] = 1
    distinct = int(np.count_nonzero(marks))
    claimed = bytearray(marks)
    if distinct == len(gids_np):
        return out, False, claimed
    out = [g.tolist() if type(g) is np.ndarray else g for g in out]  # claimed twice: resolved claim by claim
    out = [list(dict.fromkeys(g)) if len(set(g)) != len(g) else g for g in out]
    return out, distinct != sum(map(len, out)), claimed


def _valid_claims(prob: Problem, owned: Iterable[tuple[str, int]]) -> list[int]:
    """A member's claims as gids: known topic, partition in range, first occurrence only."""
    tindex, offset, counts = prob.topic_index, prob.offset, prob.counts
    out: list[int] = []
    append = out.append
    get = tindex.get
    for topic, p in owned:
        ti = get(topic)
        if ti is not None and 0 <= p < counts[ti]:
            append(offset[ti] + p)
    if len(set(out)) != len(out):
        out = list(dict.fromkeys(out))
    return out


# ------------------------------------------------------------------ step 1: resolve claims

@dataclass(slots=True)
class Claims:
    owned: list[Gids]  # per member, the gids it keeps, in claim order (read only: may be prob.raw_owned's)
    multiply_claimed: set[int]
    max_generation: int


def resolve_claims(prob: Problem) -> Claims:
    n = len(prob.members)
    if not prob.claims_overlap:  # every claim is the only one on its partition: each member keeps all it claims
        return Claims(owned=prob.raw_owned, multiply_claimed=set(),
                      max_generation=max(prob.generation, default=DEFAULT_GENERATION))
    owned: list[dict[int, None]] = [{} for _ in range(n)]
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
    return Claims(owned=[list(d) for d in owned], multiply_claimed=multi, max_generation=max_gen)


def all_subscriptions_equal(prob: Problem) -> bool:
    """Kafka's test, walked in hash order: same topic set as the first member, and a topic list as long
    as the first member's topic *set* (Kafka compares with a ``HashSet``).

    Kafka re-seeds the reference set while it is empty, so an empty subscription walked first is
    "equal" to anything and then receives partitions it never subscribed to (I3).  We compare with
    the first member's set even when it is empty, so such a group takes the general path.  Only a
    duplicated topic entry makes the walk order matter (list length against set size); without one
    the members are walked in input order and the hash order is not computed.
    """
    members = prob.members
    if all(len(m.topics) == m.raw_topic_count for m in members):
        order: Sequence[int] = range(len(members))
    else:
        order = prob.hash_order
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
