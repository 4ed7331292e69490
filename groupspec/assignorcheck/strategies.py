"""Public Hypothesis strategies for consumer-group states, as partition assignors see them.

Theory of operation
-------------------
A *group state* is the pair ``(partitions_per_topic, subscriptions)`` in the shapes of the assignor-check
contract (form 1)::

    partitions_per_topic = {"t0": 3, "t1": 1}
    subscriptions = {"c1": {"topics": ["t0"], "owned": [["t0", 0]], "generation": 4,
                            "instance_id": "inst-2", "rack": None}, ...}

:func:`group_states` draws one, built in layers so that Hypothesis shrinks towards small, plain groups:
topics and partition counts → members (dynamic, or static with an instance id drawn so that instance-id order
and member-id order disagree; ids sometimes carry characters whose Java UTF-16 order differs from Python's
code-point order) → subscriptions (uniform or not) → history (a previous assignment with generations,
including stale claims from lower generations and same-generation conflicting claims). With
``unusual=True`` it also draws what assignors must survive (assignors.md §2, I11): deleted topics that are
still subscribed, zero-partition topics, duplicate topic entries, internal topics, members subscribed to
nothing, claims on deleted, negative or out-of-range partitions, and claims on topics a member no longer
subscribes to.

All strategies are deterministic given Hypothesis' seed, so a failing state replays exactly.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "topic_names",
    "partitions_per_topic",
    "member_ids",
    "subscriptions",
    "group_states",
    "fresh_group_states",
    "group_states_with_history",
    "unusual_group_states",
    "uniform_group_states",
]

#: Characters whose order differs between Python (code points) and Java (UTF-16 code units):
#: U+1F600 sorts after U+FFEE in Python but before it in Java (its high surrogate is U+D83D).
_TRICKY = ["a", "b", "Z", "-", "\ue000", "\uffee", "\U0001F600", "\U0001D538"]

INTERNAL = "__consumer_offsets"

GroupState = tuple[dict[str, int], dict[str, dict[str, Any]]]


# Strategy objects are built once per shape and reused: building them inside every draw costs more than
# the draw itself.
@lru_cache(maxsize=None)
def _ints(lo: int, hi: int) -> st.SearchStrategy[int]:
    return st.integers(lo, hi)


@lru_cache(maxsize=None)
def _sample(items: tuple[Any, ...]) -> st.SearchStrategy[Any]:
    return st.sampled_from(items)


@lru_cache(maxsize=None)
def _sublists(pool: tuple[str, ...], lo: int) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(pool), min_size=lo, max_size=len(pool), unique=True)


@lru_cache(maxsize=None)
def _perms(n: int) -> st.SearchStrategy[list[int]]:
    return st.permutations(range(n))


@lru_cache(maxsize=None)
def _claims(holders: int, parts: int, most: int) -> st.SearchStrategy[list[tuple[int, int]]]:
    return st.lists(st.tuples(st.integers(0, holders - 1), st.integers(0, parts - 1)), max_size=most)


@lru_cache(maxsize=None)
def _bad_claims(holders: int) -> st.SearchStrategy[list[tuple[int, tuple[str, int]]]]:
    """Claims on a deleted topic, a negative partition, a partition beyond the topic's count."""
    return st.lists(st.tuples(st.integers(0, holders - 1), st.sampled_from([("gone", 0), ("t0", -1), ("t0", 99)])),
                    max_size=2)


_BOOL = st.booleans()
_RARE = st.sampled_from([False, False, False, True])


def topic_names(max_topics: int = 4) -> st.SearchStrategy[list[str]]:
    """Distinct topic names ``t0``, ``t1``, … (a prefix, so shrinking drops the later ones)."""
    return st.integers(1, max_topics).map(lambda n: [f"t{i}" for i in range(n)])


@st.composite
def partitions_per_topic(draw: Any, max_topics: int = 4, max_partitions: int = 6,
                         zero: bool = False) -> dict[str, int]:
    """``{topic: partition count}``; ``zero=True`` allows topics with no partitions."""
    n = draw(_ints(1, max_topics))
    return {f"t{i}": draw(_ints(0 if zero else 1, max_partitions)) for i in range(n)}


@lru_cache(maxsize=None)
def member_ids(max_members: int = 5, min_members: int = 1, tricky: bool = True) -> st.SearchStrategy[list[str]]:
    """Distinct member ids; plain ``c0``.. first, sometimes ids whose Java and Python orders differ."""
    plain = st.sampled_from([f"c{i}" for i in range(10)])
    ident = st.one_of(plain, st.text(alphabet=_TRICKY, min_size=1, max_size=3)) if tricky else plain
    return st.lists(ident, min_size=min_members, max_size=max_members, unique=True)


@st.composite
def _members(draw: Any, max_members: int, min_members: int, tricky: bool) -> list[tuple[str, str | None]]:
    """``[(member_id, instance_id or None)]``: instance ids follow a drawn permutation, so static members sort
    differently by instance id than by member id."""
    ids = draw(member_ids(max_members, min_members, tricky))
    static = [draw(_BOOL) for _ in ids]
    perm = draw(_perms(len(ids)))
    return [(m, f"inst-{perm[i]}" if static[i] else None) for i, m in enumerate(ids)]


@st.composite
def subscriptions(draw: Any, topics: list[str], members: list[str], uniform: bool | None = None,
                  unusual: bool = False, deleted: list[str] | None = None) -> dict[str, list[str]]:
    """``{member: [topic, ...]}`` over ``topics`` (+ ``deleted`` names that no longer exist).

    ``uniform=True``: every member has the same list; ``False``: each draws its own; ``None``: either.
    ``unusual=True`` also allows empty lists and duplicate entries.
    """
    pool = list(topics) + list(deleted or [])
    if uniform is None:
        uniform = draw(_BOOL)
    lo = 0 if unusual else 1

    def one() -> list[str]:
        lst = draw(_sublists(tuple(pool), lo))
        if unusual and lst and draw(_RARE):
            lst = lst + [draw(_sample(tuple(lst)))]  # duplicate topic entry
        return lst

    if uniform:
        common = one()
        return {m: list(common) for m in members}
    return {m: one() for m in members}


@st.composite
def group_states(draw: Any, *, max_topics: int = 4, max_partitions: int = 6, max_members: int = 5,
                 min_members: int = 1, uniform: bool | None = None, history: bool | None = None,
                 conflicts: bool = True, unusual: bool = False, tricky_ids: bool = True) -> GroupState:
    """One group state ``(partitions_per_topic, subscriptions)``; see the module docstring.

    ``history``: draw owned partitions and generations (``None``: sometimes). ``conflicts``: with history,
    also stale lower-generation and same-generation conflicting claims. ``unusual``: the I11 oddities.
    """
    ppt = draw(partitions_per_topic(max_topics, max_partitions, zero=unusual))
    topics = list(ppt)
    if unusual and draw(_BOOL):
        ppt[INTERNAL] = draw(_ints(1, 3))
        topics.append(INTERNAL)
    deleted = ["gone"] if unusual and draw(_BOOL) else []
    members = draw(_members(max_members, min_members, tricky_ids))
    subs_topics = draw(subscriptions(topics, [m for m, _ in members], uniform=uniform, unusual=unusual,
                                     deleted=deleted))
    subs: dict[str, dict[str, Any]] = {
        m: {"topics": subs_topics[m], "owned": [], "generation": -1, "instance_id": inst, "rack": None}
        for m, inst in members
    }
    if history is None:
        history = draw(_BOOL)
    if history and members:
        _draw_history(draw, ppt, subs, [m for m, _ in members], conflicts, unusual)
    return ppt, subs


def _draw_history(draw: Any, ppt: dict[str, int], subs: dict[str, dict[str, Any]], members: list[str],
                  conflicts: bool, unusual: bool) -> None:
    """Owned partitions from a previous generation: each partition has at most one current owner, then
    (``conflicts``) extra claims by members with lower or equal generations, then (``unusual``) bad claims."""
    gen = draw(_ints(1, 9))
    # Each member: -1 = new joiner (no history), 0 = current generation, k > 0 = k generations stale.
    lag = [draw(_ints(-1, 2)) for _ in members]
    for m, k in zip(members, lag):
        subs[m]["generation"] = -1 if k < 0 else gen - k
    holders = [m for m, k in zip(members, lag) if k >= 0]
    if not holders:
        return
    parts = [(t, p) for t in sorted(ppt) for p in range(ppt[t])]
    owner = [draw(_ints(-1, len(holders) - 1)) for _ in parts]
    for tp, o in zip(parts, owner):
        if o >= 0:
            subs[holders[o]]["owned"].append(list(tp))
    if conflicts and parts:
        extra = draw(_claims(len(holders), len(parts), 3))
        for o, i in extra:
            tp = list(parts[i])
            if tp not in subs[holders[o]]["owned"]:
                subs[holders[o]]["owned"].append(tp)
    if unusual:
        bad = draw(_bad_claims(len(holders)))
        for o, (t, p) in bad:
            if [t, p] not in subs[holders[o]]["owned"]:
                subs[holders[o]]["owned"].append([t, p])


def fresh_group_states(**kw: Any) -> st.SearchStrategy[GroupState]:
    """Group states with no history (every member joins fresh)."""
    return group_states(history=False, **kw)


def group_states_with_history(**kw: Any) -> st.SearchStrategy[GroupState]:
    """Group states whose members own partitions from earlier generations (with conflicts unless told not)."""
    return group_states(history=True, **kw)


def uniform_group_states(**kw: Any) -> st.SearchStrategy[GroupState]:
    """Group states where every member subscribes to the same topics."""
    return group_states(uniform=True, **kw)


def unusual_group_states(**kw: Any) -> st.SearchStrategy[GroupState]:
    """Group states with the oddities of I11 (deleted/internal/zero-partition topics, duplicates, bad claims)."""
    return group_states(unusual=True, **kw)
