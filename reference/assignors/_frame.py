"""Common frame of every consumer assignor: input normalisation, member order, output shape.

Theory of operation
-------------------
Kafka's ``AbstractPartitionAssignor.assign(Cluster, GroupSubscription)`` (assignors.md §1.0) turns
cluster metadata plus one ``Subscription`` per member into one ``Assignment`` per member.  Our
plain-callable form (docs/formats.md) carries the same information with builtins:

* ``partitions_per_topic``: ``{topic: count}``; a topic missing here, or with count <= 0, has no
  metadata and is silently left out, as in KAFKA-3661;
* ``subscriptions[member_id]``: ``{"topics", "owned", "generation", "instance_id", "rack"}``, every
  key optional (defaults ``[]``, ``[]``, ``-1``, ``None``, ``None``).

:func:`normalize` validates the shapes once and produces :class:`Member` records, so the
algorithms never touch raw dictionaries.  :func:`java_string_key` is the sort key that reproduces
Java ``String.compareTo`` (UTF-16 code units), and :func:`member_info_key` is Kafka's
``MemberInfo.compareTo``: static members (with a ``group.instance.id``) first, ordered by instance
id, then dynamic members ordered by member id.  :func:`finish` produces the contract's output:
every member present, each list sorted by ``(topic, partition)``.
"""
from __future__ import annotations

import functools
import gc
from dataclasses import dataclass
from collections import abc
from itertools import chain
from operator import itemgetter
from typing import Any, Callable, Iterable, Mapping, ParamSpec, Sequence, TypeVar

Partition = tuple[str, int]
Assignment = dict[str, list[Partition]]

__all__ = [
    "Assignment",
    "ClaimColumns",
    "Member",
    "Partition",
    "collector_paused",
    "existing_topics",
    "finish",
    "java_string_key",
    "member_info_key",
    "normalize",
    "normalize_claims",
]


@dataclass(frozen=True, slots=True)
class Member:
    """One member's subscription, normalised.

    ``topics`` keeps the member's list order but drops duplicate entries (Range collapses
    duplicates to one slot, RoundRobin and Sticky only test membership).  ``owned`` keeps the claims
    as given (claims on unknown topics or bad partitions are filtered by each algorithm, I11).
    """

    member_id: str
    topics: tuple[str, ...]
    owned: tuple[Partition, ...]
    generation: int
    instance_id: str | None
    rack: str | None
    raw_topic_count: int  # length of the topic list including duplicates (Sticky's equality test)

    @property
    def topic_set(self) -> frozenset[str]:
        return frozenset(self.topics)


_P = ParamSpec("_P")
_R = TypeVar("_R")


def collector_paused(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """``fn`` with Python's cycle collector paused for the call (if it was running; re-enabled after, whatever
    happens). An assignment allocates a tuple per partition and a list per member, a million of them on the large
    shapes, and builds no reference cycle; with the collector running, every 700 allocations start a collection
    that walks the young objects, and the older generations' collections walk everything alive (the caller's
    subscriptions included): a third of a fresh 1M-partition assignment's time (docs/scale.md). Paused, the
    objects are counted as usual and the first collection after the call walks them once (or never, when the
    result is freed first). The collector's switch is the process's: a call on another thread meanwhile runs
    with it paused too, and one that ends first switches it back on (it only ever pauses collections, never
    skips freeing: reference counting frees everything as usual)."""

    @functools.wraps(fn)
    def paused(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.enable()

    return paused


def java_string_key(s: str) -> bytes:
    """Sort key equal to Java ``String.compareTo`` order (lexicographic over UTF-16 code units)."""
    return s.encode("utf-16-be", "surrogatepass")


def member_info_key(m: Member) -> tuple[int, bytes, bytes]:
    """Kafka ``AbstractPartitionAssignor.MemberInfo.compareTo``: static by instance id, then dynamic.

    Two members with the same instance id cannot coexist in a real group; Java's stable sort would
    keep their input order, we break the tie by member id so the result never depends on it (I10).
    """
    if m.instance_id is not None:
        return (0, java_string_key(m.instance_id), java_string_key(m.member_id))
    return (1, java_string_key(m.member_id), b"")


def _bad(member_id: str, what: str) -> ValueError:
    return ValueError(f"subscription of member {member_id!r}: {what}")


def _parse_topics(member_id: str, raw: Any) -> tuple[tuple[str, ...], int]:
    if raw is None:
        return (), 0
    if isinstance(raw, (str, bytes)) or not isinstance(raw, abc.Iterable):
        raise _bad(member_id, "'topics' must be a list of topic names")
    items = list(raw)
    if set(map(type, items)) <= {str}:  # the common case, checked at C speed
        return tuple(dict.fromkeys(items)), len(items)
    for t in items:
        if not isinstance(t, str):
            raise _bad(member_id, f"topic {t!r} is not a string")
    return tuple(dict.fromkeys(items)), len(items)


def _parse_owned(member_id: str, raw: Any) -> tuple[Partition, ...]:
    if raw is None:
        return ()
    if isinstance(raw, (str, bytes)) or not isinstance(raw, abc.Iterable):
        raise _bad(member_id, "'owned' must be a list of [topic, partition] pairs")
    items = list(raw)
    if set(map(type, items)) <= _PAIR_CONTAINERS and set(map(len, items)) <= {2}:
        pairs = list(map(tuple, items))
        if pairs:
            topics, numbers = zip(*pairs)
            if set(map(type, topics)) == {str} and set(map(type, numbers)) == {int}:
                return tuple(pairs)  # the common case, checked at C speed
    return tuple(_parse_pair(member_id, item) for item in items)


_PAIR_CONTAINERS = {list, tuple}
_first, _second = itemgetter(0), itemgetter(1)


_NO_COLUMNS: tuple[tuple[str, ...], tuple[int, ...], Sequence[Partition] | None] = ((), (), ())
_TUPLES = {tuple}


def _owned_columns(member_id: str, raw: Any) -> tuple[tuple[str, ...], tuple[int, ...], Sequence[Partition] | None]:
    """What :func:`_parse_owned` checks, the claims returned as two columns (topics, partition numbers) instead of
    one tuple per pair: in the common case (a list of ``[str, int]`` lists or tuples) at C speed, a few passes over
    the list and no object per pair. Third: ``raw`` itself when every entry is a ``(str, int)`` tuple of exactly
    those types (then each entry is a valid pair of the output as it is), else None."""
    if raw is None:
        return _NO_COLUMNS
    if type(raw) is list or type(raw) is tuple:
        if not raw:
            return _NO_COLUMNS
        kinds = set(map(type, raw))
        if kinds <= _PAIR_CONTAINERS:
            try:
                topics, numbers = zip(*raw, strict=True)  # every entry of the same length, and that length is 2
            except ValueError:
                pass
            else:
                if set(map(type, topics)) == {str} and set(map(type, numbers)) == {int}:
                    return topics, numbers, (raw if kinds == _TUPLES else None)
    pairs = _parse_owned(member_id, raw)  # raises on anything malformed
    if not pairs:
        return _NO_COLUMNS
    topics, numbers = zip(*pairs)
    return topics, numbers, None


def _parse_pair(member_id: str, item: Any) -> Partition:
    if isinstance(item, (str, bytes)) or not isinstance(item, abc.Iterable):
        raise _bad(member_id, f"owned entry {item!r} is not a [topic, partition] pair")
    pair = tuple(item)
    if len(pair) != 2 or not isinstance(pair[0], str) or not isinstance(pair[1], int) or isinstance(pair[1], bool):
        raise _bad(member_id, f"owned entry {item!r} is not a [topic, partition] pair")
    return (pair[0], int(pair[1]))


def _parse_optional_str(member_id: str, key: str, raw: Any) -> str | None:
    if raw is None or isinstance(raw, str):
        return raw
    raise _bad(member_id, f"{key!r} must be a string or null")


def normalize(subscriptions: Mapping[str, Mapping[str, Any]], keep_owned: bool = True) -> list[Member]:
    """Validate the plain-callable subscription map and return one :class:`Member` per entry.

    ``keep_owned=False`` validates each ``owned`` list as strictly but does not build its pairs: the members'
    ``owned`` is empty (range and roundrobin never read the claims; the sticky assignors read them as columns,
    :func:`normalize_claims`)."""
    if keep_owned:
        return _normalize(subscriptions, None)
    raws: list[Any] = []  # each member's raw ``owned``, checked all at once after the loop (_check_claims)
    try:
        members = _normalize(subscriptions, raws)
    except ValueError:
        # a later field of some member is bad: the claims of the members before it are checked first, so the
        # error raised is the one the member-by-member order raises
        if raws:
            _check_claims(list(subscriptions)[: len(raws)], raws, at_once=False)
        raise
    _check_claims([m.member_id for m in members], raws, at_once=True)
    return members


_PAIR_TYPES = ({list}, {tuple}, {list, tuple})


def _check_claims(member_ids: list[str], raws: list[Any], at_once: bool) -> None:
    """Check every member's claims as strictly as :func:`_parse_owned` does, building nothing. ``at_once``: first
    in a few C-speed passes over all the members' pairs together (the common case: lists of ``[str, int]`` lists
    or tuples); if that does not pass, or not ``at_once``, member by member, which raises the error naming the
    first member whose claims are malformed."""
    if at_once:
        lists = [r for r in raws if r is not None]  # None claims nothing
        if all(type(r) is list or type(r) is tuple for r in lists):
            pairs = list(chain.from_iterable(lists))
            if (not pairs or set(map(type, pairs)) in _PAIR_TYPES and set(map(len, pairs)) == {2}
                    and set(map(type, map(_first, pairs))) == {str} and set(map(type, map(_second, pairs))) == {int}):
                return
    for member_id, raw in zip(member_ids, raws):
        _owned_columns(member_id, raw)


@dataclass(frozen=True, slots=True)
class ClaimColumns:
    """The members' claims (``owned``) as columns, one entry per member in member order: member ``i`` claims
    ``(topics[i][k], numbers[i][k])`` for each ``k``, validated as strictly as :func:`_parse_owned` validates them
    (and the same values: a subclass of ``int`` is made an ``int``). Built member by member (each member's list is
    read once, while it is in cache), by a few C-speed passes and no object per claim.

    ``pairs``: per member, its ``owned`` list itself when every entry is a ``(str, int)`` tuple of exactly those
    types (a previous result handed back, the common case), else None: the sticky assignors give a member that is
    given exactly what it sent a copy of that list, instead of making equal pairs."""

    topics: list[tuple[str, ...]]
    numbers: list[tuple[int, ...]]
    pairs: list[Sequence[Partition] | None]


def normalize_claims(subscriptions: Mapping[str, Mapping[str, Any]]) -> tuple[list[Member], ClaimColumns]:
    """:func:`normalize` with ``keep_owned=False``, and the claims as :class:`ClaimColumns` (what the sticky
    assignors read)."""
    columns = ClaimColumns([], [], [])
    return _normalize(subscriptions, columns), columns


def _normalize(subscriptions: Mapping[str, Mapping[str, Any]], columns: ClaimColumns | list[Any] | None) -> list[Member]:
    """:func:`normalize`'s loop: each member's claims parsed into ``owned``, or (``columns`` given) into ``columns``,
    after its other fields (the order of the checks, so which error a bad input raises, is that of the fields); or,
    ``columns`` a list, each member's raw claims appended to it unchecked (the caller checks them, :func:`normalize`)."""
    if not isinstance(subscriptions, abc.Mapping):
        raise ValueError("subscriptions must be a mapping of member id to subscription")
    members: list[Member] = []
    # Members often share one topic list object (a group subscribed to the same topics), or equal lists: parse
    # each once per call. Keyed by identity, then by content; ``keep`` holds each list so its id cannot be
    # reused meanwhile.
    parsed: dict[int, tuple[tuple[str, ...], int]] = {}
    by_value: dict[tuple[Any, ...], tuple[tuple[str, ...], int]] = {}
    keep: list[Any] = []
    for member_id, sub in subscriptions.items():
        if not isinstance(member_id, str):
            raise ValueError(f"member id {member_id!r} is not a string")
        if sub is None:
            sub = {}
        if type(sub) is not dict and not isinstance(sub, abc.Mapping):
            raise _bad(member_id, "must be a mapping")
        raw_topics = sub.get("topics")
        if type(raw_topics) is list or type(raw_topics) is tuple:
            hit = parsed.get(id(raw_topics))
            if hit is None:  # a list object not seen yet: an equal list seen before gives the same (shared) tuple
                try:
                    content = tuple(raw_topics)
                    hit = by_value.get(content)
                except TypeError:  # an unhashable entry: _parse_topics says which
                    content, hit = None, None
                if hit is None:
                    hit = _parse_topics(member_id, raw_topics)
                    if content is not None:
                        by_value[content] = hit
                parsed[id(raw_topics)] = hit
                keep.append(raw_topics)
            topics, raw_count = hit
        else:
            topics, raw_count = _parse_topics(member_id, raw_topics)
        generation = sub.get("generation", -1)
        if generation is None:
            generation = -1
        if not isinstance(generation, int) or isinstance(generation, bool):
            raise _bad(member_id, "'generation' must be an integer")
        members.append(
            Member(
                member_id=member_id,
                topics=topics,
                owned=_parse_owned(member_id, sub.get("owned")) if columns is None else (),
                generation=generation,
                instance_id=_parse_optional_str(member_id, "instance_id", sub.get("instance_id")),
                rack=_parse_optional_str(member_id, "rack", sub.get("rack")),
                raw_topic_count=raw_count,
            )
        )
        if isinstance(columns, list):
            columns.append(sub.get("owned"))
        elif columns is not None:
            claimed_topics, claimed_numbers, claimed_pairs = _owned_columns(member_id, sub.get("owned"))
            columns.topics.append(claimed_topics)
            columns.numbers.append(claimed_numbers)
            columns.pairs.append(claimed_pairs)
    return members


def check_partition_counts(partitions_per_topic: Mapping[str, int]) -> dict[str, int]:
    """Validate ``partitions_per_topic``; keep only topics with at least one partition."""
    if not isinstance(partitions_per_topic, abc.Mapping):
        raise ValueError("partitions_per_topic must be a mapping of topic to partition count")
    out: dict[str, int] = {}
    for topic, n in partitions_per_topic.items():
        if not isinstance(topic, str):
            raise ValueError(f"topic name {topic!r} is not a string")
        if not isinstance(n, int) or isinstance(n, bool):
            raise ValueError(f"partition count of topic {topic!r} is not an integer")
        if n > 0:
            out[topic] = n
    return out


def existing_topics(counts: Mapping[str, int], members: Iterable[Member]) -> set[str]:
    """Topics some member subscribes to that exist with at least one partition."""
    subscribed: set[str] = set()
    for topics in {id(m.topics): m.topics for m in members}.values():  # a shared topic tuple once
        subscribed.update(topics)
    return {t for t in subscribed if t in counts}


def finish(members: Iterable[Member], result: Mapping[str, Iterable[Partition]]) -> Assignment:
    """Contract output: every member present, lists sorted by (topic, partition)."""
    return {m.member_id: sorted(result.get(m.member_id, ())) for m in members}

