"""Server-side assignors of the next-generation protocol (KIP-848): ``uniform`` and ``range``.

Theory of operation
-------------------
In the ``consumer`` protocol the *coordinator* computes the target assignment. Its input is the
group's members (member id, subscribed topics), the partitions of the subscribed topics, and the
*current target* (not what members own: the target is computed from the previous target, so the
assignor is sticky relative to it). Kafka's two built-in server assignors:

* ``uniform`` (Kafka's ``UniformAssignor``; the default). When every member subscribes to the same
  topics (the *homogeneous* case, ``OptimizedUniformAssignmentBuilder``) it balances the **number**
  of partitions across all topics: every member gets ``P // M`` or one more, the extra ones going
  first to members that already hold more; each member keeps every partition of its current target
  up to its quota, and only the partitions over quota (or of departed members, or of new
  partitions) move, to members under quota. Otherwise (``GeneralUniformAssignmentBuilder``) it keeps
  every still-valid partition where it is, places the others on the least-loaded subscribed member
  and then moves partitions from the most- to the least-loaded eligible member until no move
  improves the balance.
* ``range`` (``RangeAssignor``): per topic, contiguous ranges in member-id order, the first
  members getting one extra partition; sticky only in that it is deterministic.

The homogeneous uniform path works on one NumPy ``owner`` array per topic (``owner[p]`` = member
index, ``-1`` for none), so that a target for 1,000,000 partitions and 2,000 members takes well
under a second (``bench/bench_consumer_protocol.py``). The small-group API used by the coordinator
is :meth:`ServerAssignor.assign`: ``{member: {topic: [partitions]}}`` in and out.
"""
from __future__ import annotations

from collections import deque
from itertools import accumulate, chain, repeat
from typing import Mapping, Sequence

import numpy as np

__all__ = ["NAMES", "UniformAssignor", "RangeServerAssignor", "get_server"]

NAMES = ("uniform", "range")

Target = dict[str, dict[str, list[int]]]


class ServerAssignor:
    name = ""

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Sequence[str]],
               current: Mapping[str, Mapping[str, Sequence[int]]] | None = None) -> Target:
        raise NotImplementedError


class UniformAssignor(ServerAssignor):
    name = "uniform"

    def assign(self, partitions_per_topic, subscriptions, current=None):
        current = current or {}
        members = sorted(subscriptions)
        if not members:
            return {}
        # each distinct subscription object read once (members of a group usually share one list)
        seen: dict[int, tuple[str, ...]] = {}
        keep = []  # the subscription objects looked at, so that their ids are not reused meanwhile
        subs = {}
        for m in members:
            raw = subscriptions[m]
            got = seen.get(id(raw))
            if got is None:
                got = seen[id(raw)] = tuple(sorted(t for t in raw if t in partitions_per_topic))
                keep.append(raw)
            subs[m] = got
        if len(set(subs.values())) == 1:
            topics = subs[members[0]]
            small = _uniform_small(partitions_per_topic, topics, members, current)
            if small is not None:
                return small
            owners = {t: np.full(partitions_per_topic[t], -1, dtype=np.int32) for t in topics}
            index = {m: k for k, m in enumerate(members)}
            for m, per_topic in current.items():
                k = index.get(m)
                if k is None:
                    continue
                for t, parts in per_topic.items():
                    if t in owners and len(parts):
                        arr = np.asarray(parts, dtype=np.int64)
                        arr = arr[arr < len(owners[t])]
                        owners[t][arr] = k
            owners = uniform_homogeneous(owners, len(members))
            return _target_of_owners(members, list(topics), [owners[t] for t in topics])
        return _uniform_general(partitions_per_topic, subs, current)


#: up to this many partitions, the homogeneous uniform assignment is computed with Python lists (NumPy's fixed
#: cost per call, some twenty calls, is most of the time of a small group's assignment: the coordinator's usual case)
SMALL_PARTITIONS = 512


def _uniform_small(partitions_per_topic: Mapping[str, int], topics: Sequence[str], members: list[str],
                   current: Mapping[str, Mapping[str, Sequence[int]]]) -> Target | None:
    """The homogeneous uniform target of a small group (at most :data:`SMALL_PARTITIONS` partitions) with lists: the
    same steps as :func:`uniform_homogeneous` and :func:`_target_of_owners`, the same result. ``None`` (use the
    arrays) for a bigger group, or a current target with anything but non-negative ``int`` partition numbers."""
    sizes = [partitions_per_topic[t] for t in topics]
    if any(type(n) is not int or n < 0 for n in sizes) or sum(sizes) > SMALL_PARTITIONS:
        return None
    owners = {t: [-1] * n for t, n in zip(topics, sizes)}
    index = {m: k for k, m in enumerate(members)}
    for m, per_topic in current.items():
        k = index.get(m)
        if k is None:
            continue
        for t, parts in per_topic.items():
            row = owners.get(t)
            if row is None or not len(parts):
                continue
            if any(type(p) is not int or p < 0 for p in parts):
                return None
            n = len(row)
            for p in parts:
                if p < n:
                    row[p] = k
    count = len(members)
    order = sorted(owners)  # uniform_homogeneous's layout: topics in name order
    flat = [o for t in order for o in owners[t]]
    quota, extra = divmod(len(flat), count)
    held = [0] * count
    for o in flat:
        if o >= 0:
            held[o] += 1
    quotas = [quota] * count
    for k in sorted(range(count), key=lambda k: (-held[k], k))[:extra]:  # the most held first, ties by index
        quotas[k] += 1
    kept = [0] * count
    free = []
    for i, o in enumerate(flat):  # each member keeps its first partitions up to its quota
        if o >= 0 and kept[o] < quotas[o]:
            kept[o] += 1
        else:
            free.append(i)
    fill = [k for k in range(count) for _ in range(quotas[k] - kept[k])]
    for i, k in zip(free, fill):  # the free ones, in order, to the members below quota in index order
        flat[i] = k
    at = 0
    for t in order:
        owners[t] = flat[at:at + len(owners[t])]
        at += len(owners[t])
    out: Target = {m: {} for m in members}
    for t in topics:
        for p, k in enumerate(owners[t]):
            if k >= 0:
                target = out[members[k]]
                if t in target:
                    target[t].append(p)
                else:
                    target[t] = [p]
    return out


def _target_of_owners(members: list[str], topics: list[str], owners: list[np.ndarray]) -> Target:
    """``{member: {topic: [partitions]}}`` from one owner array per topic (``-1``: nobody): every member present in
    ``members`` order, each member's topics in ``topics`` order, partitions ascending, no empty list.

    All topics at once: the partitions sorted by (owner, topic, partition) by one stable sort of the owners (the
    partitions are laid out by topic then number), then one list per run of equal (owner, topic), so the Python work
    is per (member, topic) pair that holds something, not per member and topic."""
    out: Target = {m: {} for m in members}
    sizes = [len(o) for o in owners]
    if not sum(sizes):
        return out
    flat = np.concatenate(owners).astype(np.int64)
    order = np.argsort(flat, kind="stable")
    owner_sorted = flat[order]
    topic_sorted = np.repeat(np.arange(len(topics), dtype=np.int64), sizes)[order]
    numbers = (order - np.repeat(np.cumsum([0] + sizes[:-1]), sizes)[order]).tolist()
    key = owner_sorted * len(topics) + topic_sorted
    starts = np.flatnonzero(np.diff(key)) + 1
    bounds = [0, *starts.tolist(), len(key)]
    heads = np.concatenate(([0], starts))
    per_member = [out[m] for m in members]
    for a, b, k, t in zip(bounds, bounds[1:], owner_sorted[heads].tolist(), topic_sorted[heads].tolist()):
        if k >= 0:
            per_member[k][topics[t]] = numbers[a:b]
    return out


def uniform_homogeneous(owners: dict[str, np.ndarray], members: int) -> dict[str, np.ndarray]:
    """The homogeneous uniform assignment, in place on owner arrays (``-1``: unassigned or departed).

    Every member ends with ``quota`` or ``quota + 1`` partitions over all topics (counted together);
    the ``extra`` members with one more are those that hold the most now (ties: lower index). A
    member keeps its current partitions up to its quota; the rest, and every unowned partition,
    go to the members below quota in index order.
    """
    topics = sorted(owners)
    flat = np.concatenate([owners[t] for t in topics]) if topics else np.zeros(0, dtype=np.int32)
    total = len(flat)
    quota, extra = divmod(total, members)
    flat = np.where((flat >= 0) & (flat < members), flat, -1).astype(np.int32)
    counts = np.bincount(flat[flat >= 0], minlength=members)
    # Members that hold more than `quota` now get the extra slots first (stickiness), then the others.
    rank = np.lexsort((np.arange(members), -counts))
    quotas = np.full(members, quota, dtype=np.int64)
    quotas[rank[:extra]] += 1
    # Keep each member's first `quotas[m]` partitions (in partition order); free the rest.
    assigned = flat >= 0
    idx = np.nonzero(assigned)[0]
    own = flat[idx]
    order = np.argsort(own, kind="stable")
    sorted_own = own[order]
    starts = np.searchsorted(sorted_own, np.arange(members))
    pos_in_member = np.arange(len(order)) - starts[sorted_own]
    drop = order[pos_in_member >= quotas[sorted_own]]
    flat[idx[drop]] = -1
    # Fill the free partitions, in order, to the members below quota, in index order.
    counts = np.bincount(flat[flat >= 0], minlength=members)
    need = quotas - counts
    free = np.nonzero(flat < 0)[0]
    if len(free):
        fill = np.repeat(np.arange(members, dtype=np.int32), np.maximum(need, 0))
        flat[free] = fill[: len(free)]
    out = {}
    at = 0
    for t in topics:
        n = len(owners[t])
        out[t] = flat[at:at + n]
        at += n
    return out


def _uniform_general(partitions_per_topic, subs, current) -> Target:
    """Heterogeneous subscriptions: keep valid partitions, place the rest, then balance by moves."""
    members = sorted(subs)
    load = {m: 0 for m in members}
    owner: dict[tuple[str, int], str] = {}
    for m in members:
        for t, parts in (current.get(m) or {}).items():
            if t not in subs[m]:
                continue
            for p in parts:
                if p < partitions_per_topic.get(t, 0) and (t, p) not in owner:
                    owner[(t, p)] = m
                    load[m] += 1
    eligible_by_topic = {t: [m for m in members if t in subs[m]] for t in partitions_per_topic}
    for t in sorted(partitions_per_topic):
        cands = eligible_by_topic[t]
        if not cands:
            continue
        for p in range(partitions_per_topic[t]):
            if (t, p) not in owner:
                m = min(cands, key=lambda x: (load[x], x))
                owner[(t, p)] = m
                load[m] += 1
    moved = True
    while moved:
        moved = False
        for (t, p), m in sorted(owner.items()):
            best = min(eligible_by_topic[t], key=lambda x: (load[x], x))
            if load[m] > load[best] + 1:
                owner[(t, p)] = best
                load[m] -= 1
                load[best] += 1
                moved = True
    out: Target = {m: {} for m in members}
    for (t, p), m in sorted(owner.items()):
        out[m].setdefault(t, []).append(p)
    return out


class RangeServerAssignor(ServerAssignor):
    name = "range"

    def assign(self, partitions_per_topic, subscriptions, current=None):
        return _range_target(partitions_per_topic, subscriptions)


def _range_target(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Sequence[str]]) -> Target:
    """Per topic (in name order), contiguous ranges in member-id order, the first ``n % k`` members one more.

    Topics with the same subscribers and partition count give each member the same range: such a group of topics is
    dealt at once. When no member is in two groups, each member's target is one dict made from its group's topics
    and one list per topic (in topic order, as the per-topic walk inserts them); otherwise topic by topic, each
    topic's lists made and stored by C-level maps (no Python loop per member and topic)."""
    members = sorted(subscriptions)
    out: Target = {m: {} for m in members}
    # members grouped by subscription, so that a topic's subscribers (in id order) are found per distinct
    # subscription, not per member
    by_sub: dict[frozenset[str], list[str]] = {}
    for m in members:
        by_sub.setdefault(frozenset(subscriptions[m]), []).append(m)
    cache: dict[tuple[bool, ...], list[str]] = {}
    groups: dict[tuple[int, int], tuple[list[str], int, list[str]]] = {}
    for t in sorted(partitions_per_topic):
        key = tuple(t in s for s in by_sub)
        subs = cache.get(key)
        if subs is None:
            subs = cache[key] = sorted(m for s, ms in by_sub.items() if t in s for m in ms)
        n = partitions_per_topic[t]
        if not subs or not n:
            continue
        hit = groups.get((id(subs), n))
        if hit is None:
            hit = groups[(id(subs), n)] = (subs, n, [])
        hit[2].append(t)
    in_groups = [subs for subs, _, _ in groups.values()]
    if sum(map(len, in_groups)) == len(set(chain.from_iterable(in_groups))):  # no member in two groups
        for subs, n, topics in groups.values():
            width = len(topics)
            for m, run in zip(subs, _runs(n, len(subs))):
                if run:  # one list per topic, copied from one made from the range (a copy is a memcpy)
                    out[m] = dict(zip(topics, map(list.copy, repeat(list(run), width))))
        return out
    dealt = {}  # per group: the targets of its members with a non-empty range, and their ranges
    for subs, n, topics in groups.values():
        held = [(out[m], run) for m, run in zip(subs, _runs(n, len(subs))) if run]
        for t in topics:
            dealt[t] = held
    for t in sorted(dealt):  # topic by topic, in name order
        held = dealt[t]
        deque(map(dict.__setitem__, [d for d, _ in held], repeat(t), [list(r) for _, r in held]), maxlen=0)
    return out


def _runs(n: int, k: int) -> list[range]:
    """The ranges of ``n`` partitions over ``k`` members: the first ``n % k`` get ``n // k + 1``, the others ``n // k``."""
    q, r = divmod(n, k)
    bounds = list(accumulate(chain(repeat(q + 1, r), repeat(q, k - r)), initial=0))
    return list(map(range, bounds[:-1], bounds[1:]))


def get_server(name: str) -> ServerAssignor:
    if name == "uniform":
        return UniformAssignor()
    if name == "range":
        return RangeServerAssignor()
    raise ValueError(f"unknown server-side assignor {name!r}; choose from {', '.join(NAMES)}")
