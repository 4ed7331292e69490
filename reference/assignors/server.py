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
from collections.abc import ItemsView, Iterator, ValuesView
from itertools import accumulate, chain, repeat
from typing import Any, Mapping, Sequence

import numpy as np

__all__ = ["NAMES", "UniformAssignor", "RangeServerAssignor", "RangeTarget", "get_server", "plain"]

NAMES = ("uniform", "range")

#: ``{member: {topic: partitions}}``, partitions ascending: ``uniform`` gives dicts of lists, ``range`` a
#: :class:`RangeTarget` (a read-only mapping of topics to one ``range``, equal to the dict of lists it stands for) or,
#: for a member in several groups of topics, a dict of lists; :func:`plain` makes any of them dicts of lists (JSON)
Target = Mapping[str, Mapping[str, Sequence[int]]]
#: the uniform assignor's targets: dicts of lists
Lists = dict[str, dict[str, list[int]]]


def plain(target: Mapping[str, Mapping[str, Sequence[int]]]) -> dict[str, dict[str, list[int]]]:
    """A target as plain dicts of lists, in the same member and topic order (what JSON writes, what tests compare)."""
    return {m: {t: list(ps) for t, ps in per.items()} for m, per in target.items()}


class ServerAssignor:
    name = ""

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Sequence[str]],
               current: Mapping[str, Mapping[str, Sequence[int]]] | None = None) -> Target:
        raise NotImplementedError


class UniformAssignor(ServerAssignor):
    name = "uniform"

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Sequence[str]],
               current: Mapping[str, Mapping[str, Sequence[int]]] | None = None) -> Target:
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
            _current_owners(owners, {m: k for k, m in enumerate(members)}, current)
            owners = uniform_homogeneous(owners, len(members))
            return _target_of_owners(members, list(topics), [owners[t] for t in topics])
        return _uniform_general(partitions_per_topic, subs, current)


def _current_owners(owners: dict[str, np.ndarray], index: Mapping[str, int],
                    current: Mapping[str, Mapping[str, Sequence[int]]]) -> None:
    """Mark each partition of the current target with its member's index (``owners[t][p] = k``; partitions past the
    topic's end ignored), the members in ``current``'s order, a later one overriding an earlier one.

    Topic by topic at once: every member's partitions of the topic in one array (one ``fromiter`` over all of them,
    not one NumPy call per member and topic) and one assignment. When that could differ from marking them member by
    member (a partition in two lists, a negative number, something that is not an integer), member by member."""
    per_topic: dict[str, tuple[list[Sequence[int]], list[int]]] = {}
    for m, mine in current.items():
        k = index.get(m)
        if k is None:
            continue
        for t, parts in mine.items():
            if t in owners and len(parts):
                got = per_topic.get(t)
                if got is None:
                    per_topic[t] = ([parts], [k])
                else:
                    got[0].append(parts)
                    got[1].append(k)
    counting = list(range(max(map(len, owners.values()), default=0)))  # to tell a run of consecutive numbers
    for t, (lists, ks) in per_topic.items():
        row = owners[t]
        runs = _runs_of(lists, counting)
        if runs is not None:  # each list a run of consecutive numbers: one slice each, in member order
            n = len(row)
            for (a, b), k in zip(runs, ks):
                row[a:min(b, n)] = k
            continue
        lens = list(map(len, lists))
        try:
            flat = np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=sum(lens))
            fast = bool(len(flat)) and int(flat.min()) >= 0
        except (TypeError, ValueError, OverflowError):
            fast = False
        if fast:
            who = np.repeat(np.asarray(ks, dtype=np.int32), lens)
            keep = flat < len(row)
            flat, who = flat[keep], who[keep]
            fast = not len(flat) or int(np.bincount(flat, minlength=len(row)).max()) <= 1
        if fast:
            row[flat] = who
            continue
        for parts, k in zip(lists, ks):  # member by member, as the definition says
            arr = np.asarray(parts, dtype=np.int64)
            arr = arr[arr < len(row)]
            row[arr] = k


def _runs_of(lists: list[Sequence[int]], counting: list[int]) -> list[tuple[int, int]] | None:
    """``[(a, b)]``, one per list, when every list is the run ``a, a + 1, ..., b - 1`` of non-negative integers (a
    ``range`` of step 1, or a list equal to ``counting[a:b]``: checked at C speed, no array made); else ``None``."""
    out = []
    for parts in lists:
        if type(parts) is range:
            if parts.step != 1 or parts.start < 0:
                return None
            out.append((parts.start, parts.stop))
            continue
        if type(parts) is not list:
            return None
        a, last = parts[0], parts[-1]
        if type(a) is not int or type(last) is not int or a < 0 or last - a + 1 != len(parts) \
                or last >= len(counting) or parts != counting[a:last + 1]:
            return None
        out.append((a, last + 1))
    return out


#: up to this many partitions, the homogeneous uniform assignment is computed with Python lists (NumPy's fixed
#: cost per call, some twenty calls, is most of the time of a small group's assignment: the coordinator's usual case)
SMALL_PARTITIONS = 512


def _uniform_small(partitions_per_topic: Mapping[str, int], topics: Sequence[str], members: list[str],
                   current: Mapping[str, Mapping[str, Sequence[int]]]) -> Lists | None:
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
    out: Lists = {m: {} for m in members}
    for t in topics:
        for p, k in enumerate(owners[t]):
            if k >= 0:
                target = out[members[k]]
                if t in target:
                    target[t].append(p)
                else:
                    target[t] = [p]
    return out


def _target_of_owners(members: list[str], topics: list[str], owners: list[np.ndarray]) -> Lists:
    """``{member: {topic: [partitions]}}`` from one owner array per topic (``-1``: nobody): every member present in
    ``members`` order, each member's topics in ``topics`` order, partitions ascending, no empty list.

    All topics at once, the partitions laid out by topic then number. When the owners change seldom along that layout
    (members hold blocks, the usual outcome of :func:`uniform_homogeneous`), one walk over the runs of one owner
    inside one topic, each run one slice of a list of the numbers. Otherwise the partitions sorted by (owner, topic,
    partition) by one stable sort of the owners, then one list per run of equal (owner, topic). Either way the Python
    work is per run or per (member, topic) pair that holds something, not per partition."""
    out: Lists = {m: {} for m in members}
    sizes = [len(o) for o in owners]
    total = sum(sizes)
    if not total:
        return out
    flat = np.concatenate(owners)
    offsets = list(accumulate(sizes, initial=0))
    # runs of one owner inside one topic, in layout order (topic, then partition)
    inner = [o for o in offsets[1:-1] if 0 < o < total]  # topic boundaries (none at either end: empty topics)
    cuts = np.union1d(np.flatnonzero(flat[1:] != flat[:-1]) + 1, np.asarray(inner, dtype=np.int64))
    if len(cuts) <= total // 16:  # few runs (the usual case: members hold blocks): one list slice per run
        counting = list(range(max(sizes)))
        starts = [0, *cuts.tolist()]
        ends = [*starts[1:], total]
        who = flat[starts].tolist()
        per_member = [out[m] for m in members]
        t = 0
        for a, b, k in zip(starts, ends, who):
            while a >= offsets[t + 1]:
                t += 1
            if k < 0:
                continue
            mine = per_member[k]
            name = topics[t]
            run = counting[a - offsets[t]:b - offsets[t]]
            got = mine.get(name)
            if got is None:
                mine[name] = run
            else:  # a later run of the same member in the same topic: after the earlier ones, ascending
                got += run
        return out
    # 16-bit owners where they fit: NumPy's stable sort of 16-bit integers is a radix sort
    flat = flat.astype(np.int16 if len(members) < 2**15 else np.int64)
    order = np.argsort(flat, kind="stable")
    owner_sorted = flat[order].astype(np.int64)
    topic_sorted = np.repeat(np.arange(len(topics), dtype=np.int64), sizes)[order]
    # the partition numbers gathered from one object array of them (one int object per number, shared)
    shared = np.array(list(range(max(sizes))), dtype=object)
    numbers = shared[order - np.repeat(np.cumsum([0] + sizes[:-1]), sizes)[order]].tolist()
    key = owner_sorted * len(topics) + topic_sorted
    run_starts = np.flatnonzero(np.diff(key)) + 1
    bounds = [0, *run_starts.tolist(), len(key)]
    heads = np.concatenate(([0], run_starts))
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
    if len(flat) and (int(flat.min()) < -1 or int(flat.max()) >= members):
        flat = np.where((flat >= 0) & (flat < members), flat, -1)
    flat = flat.astype(np.int32)  # a copy: the caller's arrays are not written
    counts = np.bincount(flat + 1, minlength=members + 1)[1:]  # shifted by one: -1 (nobody) counted apart
    # Members that hold more than `quota` now get the extra slots first (stickiness), then the others.
    rank = np.lexsort((np.arange(members), -counts))
    quotas = np.full(members, quota, dtype=np.int64)
    quotas[rank[:extra]] += 1
    # Keep each member's first `quotas[m]` partitions (in partition order); free the rest. Only the members over
    # their quota have any to free: only their partitions are sorted by member.
    over = np.append(counts > quotas, False)  # one more entry, for -1: nobody's
    if over.any():
        idx = np.flatnonzero(over[flat])
        own = flat[idx]
        order = np.argsort(own.astype(np.int16) if members < 2**15 else own, kind="stable")  # 16 bits: a radix sort
        sorted_own = own[order]
        starts = np.searchsorted(sorted_own, np.arange(members))
        pos_in_member = np.arange(len(order)) - starts[sorted_own]
        drop = order[pos_in_member >= quotas[sorted_own]]
        flat[idx[drop]] = -1
    # Fill the free partitions, in order, to the members below quota, in index order.
    need = quotas - np.minimum(counts, quotas)  # what each member holds now: up to its quota of what it held
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


def _uniform_general(partitions_per_topic: Mapping[str, int], subs: Mapping[str, tuple[str, ...]],
                     current: Mapping[str, Mapping[str, Sequence[int]]]) -> Lists:
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
    out: Lists = {m: {} for m in members}
    for (t, p), m in sorted(owner.items()):
        out[m].setdefault(t, []).append(p)
    return out


class RangeServerAssignor(ServerAssignor):
    name = "range"

    def assign(self, partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Sequence[str]],
               current: Mapping[str, Mapping[str, Sequence[int]]] | None = None) -> Target:
        return _range_target(partitions_per_topic, subscriptions)


class RangeTarget(Mapping[str, range]):
    """One member's range target when all its topics give it the same range: ``{topic: partitions}`` for every topic of
    ``topics`` (a dict, topic -> None, shared by every member of the same group of topics), ``partitions`` one
    ``range`` (Kafka's ``RangeSet``: a view of ``[from, to)``, not a set of integers). Read-only. Equal to any mapping
    with the same topics and the same partition numbers (so to the dict of lists it stands for)."""

    __slots__ = ("_topics", "_parts")

    def __init__(self, topics: dict[str, None], partitions: range) -> None:
        self._topics = topics
        self._parts = partitions

    def __getitem__(self, topic: str) -> range:
        if topic in self._topics:
            return self._parts
        raise KeyError(topic)

    def get(self, topic: str, default: Any = None) -> Any:
        return self._parts if topic in self._topics else default

    def __contains__(self, topic: object) -> bool:
        return topic in self._topics

    def __iter__(self) -> Iterator[str]:
        return iter(self._topics)

    def __len__(self) -> int:
        return len(self._topics)

    def items(self) -> _RangeItems:
        return _RangeItems(self)

    def values(self) -> _RangeValues:
        return _RangeValues(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RangeTarget):
            return self._topics.keys() == other._topics.keys() and list(self._parts) == list(other._parts)
        if not isinstance(other, Mapping):
            return NotImplemented
        mine = list(self._parts)
        return len(other) == len(self._topics) and all(t in other and list(other[t]) == mine for t in self._topics)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RangeTarget({len(self._topics)} topics, partitions {self._parts.start}..{self._parts.stop - 1} of each)"


class _RangeItems(ItemsView[str, range]):
    _mapping: RangeTarget

    def __iter__(self) -> Iterator[tuple[str, range]]:
        return zip(self._mapping._topics, repeat(self._mapping._parts))


class _RangeValues(ValuesView[range]):
    _mapping: RangeTarget

    def __iter__(self) -> Iterator[range]:
        return repeat(self._mapping._parts, len(self._mapping._topics))


def _range_target(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Sequence[str]]) -> Target:
    """Per topic (in name order), contiguous ranges in member-id order, the first ``n % k`` members one more.

    Compact, as Kafka's own ``RangeAssignor`` is (its targets hold ``RangeSet`` views, not sets of boxed integers):
    a member's range of a topic is one ``range``, and the topics that give a member the same range (same subscribers,
    same partition count: a *group* of topics) share it. When no member is in two groups, each member's target is a
    :class:`RangeTarget` (its group's topics, one dict shared by the group, and its range): O(members + topics) in all,
    nothing per (member, topic). Otherwise a dict of lists per member, filled topic by topic in name order. Each
    member's topics are in name order, as the per-topic walk inserts them; :func:`plain` gives the dicts of lists."""
    members = sorted(subscriptions)
    # members grouped by subscription (each distinct subscription object read once: members usually share one), so
    # that a topic's subscribers (in id order) are found per distinct subscription, not per member
    seen: dict[int, frozenset[str]] = {}
    keep = []  # the subscription objects looked at, so that their ids are not reused meanwhile
    by_sub: dict[frozenset[str], list[str]] = {}
    for m in members:
        raw = subscriptions[m]
        sub = seen.get(id(raw))
        if sub is None:
            sub = seen[id(raw)] = frozenset(raw)
            keep.append(raw)
        got = by_sub.get(sub)
        if got is None:
            by_sub[sub] = [m]
        else:
            got.append(m)
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
    out: dict[str, Mapping[str, Sequence[int]]] = {}
    in_groups = [subs for subs, _, _ in groups.values()]
    if sum(map(len, in_groups)) == len(set(chain.from_iterable(in_groups))):  # no member in two groups
        for m in members:
            out[m] = _NOTHING
        for subs, n, topics in groups.values():
            bounds = _bounds(n, len(subs))
            live = min(len(subs), n)  # the members after these get an empty range: nothing
            out.update(zip(subs[:live], map(RangeTarget, repeat(dict.fromkeys(topics), live),
                                            map(range, bounds[:live], bounds[1:live + 1]))))
        for m in members:
            if out[m] is _NOTHING:
                out[m] = {}
        return out
    per: dict[str, dict[str, list[int]]] = {m: {} for m in members}
    dealt = {}  # per topic: the targets of its group's members with a non-empty range, and their ranges
    for subs, n, topics in groups.values():
        bounds = _bounds(n, len(subs))
        held = [(per[m], range(a, b)) for m, a, b in zip(subs, bounds, bounds[1:]) if b > a]
        for t in topics:
            dealt[t] = held
    for t in sorted(dealt):  # topic by topic, in name order: one list per member and topic
        held = dealt[t]
        deque(map(dict.__setitem__, [d for d, _ in held], repeat(t), [list(r) for _, r in held]), maxlen=0)
    out.update(per)
    return out


_NOTHING: Mapping[str, Sequence[int]] = {}


def _bounds(n: int, k: int) -> list[int]:
    """The boundaries of the ranges of ``n`` partitions over ``k`` members (member ``i``: ``bounds[i]`` to
    ``bounds[i + 1]``): the first ``n % k`` get ``n // k + 1``, the others ``n // k``."""
    q, r = divmod(n, k)
    return list(accumulate(chain(repeat(q + 1, r), repeat(q, k - r)), initial=0))


def get_server(name: str) -> ServerAssignor:
    if name == "uniform":
        return UniformAssignor()
    if name == "range":
        return RangeServerAssignor()
    raise ValueError(f"unknown server-side assignor {name!r}; choose from {', '.join(NAMES)}")
