"""Public Hypothesis strategies for consumer-group states, as partition assignors see them.

Theory of operation
-------------------
A *group state* is the pair ``(partitions_per_topic, subscriptions)`` in the shapes of the assignor-check
contract (form 1)::

    partitions_per_topic = {"t0": 3, "t1": 1}
    subscriptions = {"c1": {"topics": ["t0"], "owned": [["t0", 0]], "generation": 4,
                            "instance_id": "inst-2", "rack": None}, ...}

:func:`group_states` draws one, built in layers so that Hypothesis shrinks towards small, plain groups:
a size class (small, or now and then large: up to 8 topics of up to 48 partitions, 40 members) → topic names
and partition counts → members (dynamic, or static with an instance id drawn so that instance-id order and
member-id order disagree; ids sometimes carry characters whose Java UTF-16 order differs from Python's
code-point order) → subscriptions (uniform or not) → racks → history (a previous assignment with generations,
including stale claims from lower generations and same-generation conflicting claims). With ``unusual=True``
it also draws what assignors must survive (assignors.md §2, I11): deleted topics that are still subscribed,
zero-partition topics, duplicate topic entries, internal topics, members subscribed to nothing, claims on
deleted, negative or out-of-range partitions, and claims on topics a member no longer subscribes to.

What the sizes and values reach, on purpose:

* partition counts up to 12 in small groups (so partitions ≥ 10 exist: ``"10" < "2"`` as strings) and up to
  48 per topic in large ones (hundreds of partitions in all), members up to 40;
* generations across the int32 range: small ones, the 9→10 and 99→100 steps, and values up to
  ``MAX_GENERATION`` (2³¹ − 1 minus room for the follow-up rounds a cooperative check adds);
* topic names that sort differently as strings and as numbers (``t9`` / ``t10``), by case (``T`` < ``a``)
  and with ``.``, ``_``, ``-``. Kafka's legal topic characters are ``[a-zA-Z0-9._-]``, all ASCII, so string
  order, code-point order and UTF-16 order agree for legal topic names; the UTF-16 differences are drawn in
  member and instance ids, where Kafka allows any string;
* racks on members (``rack``), sometimes.

``small=True`` gives the older, smaller bounds (6 partitions, 5 members, 4 topics named ``t0``–``t3``,
generations up to 9), kept so benchmarks can compare. The domain arguments (``topics_per_member``,
``static``) restrict the draw to what a candidate declares it supports.

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
    "generations",
    "group_states",
    "fresh_group_states",
    "group_states_with_history",
    "unusual_group_states",
    "uniform_group_states",
    "MAX_GENERATION",
]

#: Characters whose order differs between Python (code points) and Java (UTF-16 code units):
#: U+1F600 sorts after U+FFEE in Python but before it in Java (its high surrogate is U+D83D).
_TRICKY = ["a", "b", "Z", "-", "\ue000", "\uffee", "\U0001F600", "\U0001D538"]

#: Legal topic names whose string order differs from their numeric order, and case/punctuation orders.
_TOPIC_POOL = ("t0", "t1", "t2", "t9", "t10", "t11", "t100", "T0", "a", "A.b", "a_b", "a-b", "_x", "9", "10",
               "t.1")

INTERNAL = "__consumer_offsets"

#: The largest generation drawn: int32's maximum minus room for the follow-up rounds of a cooperative check
#: and the churn machine's rebalances (a generation is an int32 on the wire).
MAX_GENERATION = 2**31 - 1 - 64

_RACKS = (None, "r0", "r1", "r2")

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
def _sublists(pool: tuple[str, ...], lo: int, hi: int | None = None) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(pool), min_size=lo, max_size=len(pool) if hi is None else hi, unique=True)


@lru_cache(maxsize=None)
def _perms(n: int) -> st.SearchStrategy[list[int]]:
    return st.permutations(range(n))


@lru_cache(maxsize=None)
def _claims(holders: int, parts: int, most: int) -> st.SearchStrategy[list[tuple[int, int]]]:
    return st.lists(st.tuples(st.integers(0, holders - 1), st.integers(0, parts - 1)), max_size=most)


@lru_cache(maxsize=None)
def _bad_claims(holders: int, topic: str) -> st.SearchStrategy[list[tuple[int, tuple[str, int]]]]:
    """Claims on a deleted topic, a negative partition, a partition beyond the topic's count."""
    return st.lists(st.tuples(st.integers(0, holders - 1), st.sampled_from([("gone", 0), (topic, -1), (topic, 99)])),
                    max_size=2)


_BOOL = st.booleans()
_RARE = st.sampled_from([False, False, False, True])
_SIZE = st.sampled_from(["small", "small", "small", "small", "large"])


def generations(small: bool = False) -> st.SearchStrategy[int]:
    """A current generation: small ones first (shrinking goes there), the 9→10 and 99→100 steps, up to
    :data:`MAX_GENERATION`."""
    if small:
        return _ints(1, 9)
    return st.one_of(_ints(1, 12), _sample((10, 100, 1000, 2**16, 2**31 - 2**20, MAX_GENERATION)),
                     _ints(1, MAX_GENERATION))


def topic_names(max_topics: int = 4, tricky: bool = True) -> st.SearchStrategy[list[str]]:
    """Distinct legal topic names: ``t0``, ``t1``, … (a prefix, so shrinking drops the later ones), or with
    ``tricky`` sometimes names whose string, numeric and case orders disagree."""
    plain = st.integers(1, max_topics).map(lambda n: [f"t{i}" for i in range(n)])
    if not tricky:
        return plain
    return st.one_of(plain, _sublists(_TOPIC_POOL, 1, min(max_topics, len(_TOPIC_POOL))))


@st.composite
def partitions_per_topic(draw: Any, max_topics: int = 4, max_partitions: int = 6,
                         zero: bool = False, tricky_names: bool = False) -> dict[str, int]:
    """``{topic: partition count}``; ``zero=True`` allows topics with no partitions."""
    names = draw(topic_names(max_topics, tricky_names))
    return {t: draw(_ints(0 if zero else 1, max_partitions)) for t in names}


@lru_cache(maxsize=None)
def member_ids(max_members: int = 5, min_members: int = 1, tricky: bool = True) -> st.SearchStrategy[list[str]]:
    """Distinct member ids; plain ``c0``.. first, sometimes ids whose Java and Python orders differ."""
    plain = st.sampled_from([f"c{i}" for i in range(max(10, 2 * max_members))])
    ident = st.one_of(plain, st.text(alphabet=_TRICKY, min_size=1, max_size=3)) if tricky else plain
    return st.lists(ident, min_size=min_members, max_size=max_members, unique=True)


@st.composite
def _members(draw: Any, max_members: int, min_members: int, tricky: bool,
             static_ok: bool = True) -> list[tuple[str, str | None]]:
    """``[(member_id, instance_id or None)]``: instance ids follow a drawn permutation, so static members sort
    differently by instance id than by member id."""
    if max_members > 10:  # large groups: draw the size first, so dozens of members are common
        n = draw(_ints(min_members, max_members))
        ids = draw(member_ids(n, n, tricky))
    else:
        ids = draw(member_ids(max_members, min_members, tricky))
    if not static_ok:
        return [(m, None) for m in ids]
    static = [draw(_BOOL) for _ in ids]
    perm = draw(_perms(len(ids)))
    return [(m, f"inst-{perm[i]}" if static[i] else None) for i, m in enumerate(ids)]


@st.composite
def subscriptions(draw: Any, topics: list[str], members: list[str], uniform: bool | None = None,
                  unusual: bool = False, deleted: list[str] | None = None,
                  topics_per_member: int | None = None) -> dict[str, list[str]]:
    """``{member: [topic, ...]}`` over ``topics`` (+ ``deleted`` names that no longer exist).

    ``uniform=True``: every member has the same list; ``False``: each draws its own; ``None``: either.
    ``unusual=True`` also allows empty lists and duplicate entries. ``topics_per_member=k``: every list has
    exactly ``min(k, number of topics)`` distinct topics (a candidate's declared domain).
    """
    pool = list(topics) + list(deleted or [])
    if uniform is None:
        uniform = draw(_BOOL)
    lo = 0 if unusual else 1
    hi = None
    if topics_per_member is not None:
        lo = hi = min(topics_per_member, len(pool))

    def one() -> list[str]:
        lst: list[str] = draw(_sublists(tuple(pool), lo, hi))
        if unusual and lst and topics_per_member is None and draw(_RARE):
            lst = lst + [draw(_sample(tuple(lst)))]  # duplicate topic entry
        return lst

    if uniform:
        common = one()
        return {m: list(common) for m in members}
    return {m: one() for m in members}


@st.composite
def group_states(draw: Any, *, max_topics: int | None = None, max_partitions: int | None = None,
                 max_members: int | None = None, min_members: int = 1, uniform: bool | None = None,
                 history: bool | None = None, conflicts: bool = True, unusual: bool = False,
                 tricky_ids: bool = True, small: bool = False, topics_per_member: int | None = None,
                 static: bool = True, racks: bool = True, replica_racks: bool = False,
                 rack_mode_off: bool = False) -> GroupState:
    """One group state ``(partitions_per_topic, subscriptions)``; see the module docstring.

    ``history``: draw owned partitions and generations (``None``: sometimes). ``conflicts``: with history,
    also stale lower-generation and same-generation conflicting claims. ``unusual``: the I11 oddities.
    ``max_topics`` / ``max_partitions`` / ``max_members``: caps (default: by the drawn size class).
    ``small``: the older small bounds only. ``topics_per_member``: every member subscribes to exactly that
    many topics. ``static=False``: no static members. ``racks=False``: no member racks. ``replica_racks=True``
    (for candidates that declare rack-awareness, KIP-881): member racks are common and the partitions' replica
    racks are drawn too, as a :class:`~groupspec.assignorcheck.racks.RackedPartitions`, in the shapes that turn
    Kafka's rack mode on (partitions on different racks) and off (every partition on the same racks, racks no
    consumer is in, no racks); with ``rack_mode_off=True`` only the shapes that turn it off.
    """
    if small:
        caps = (4, 6, 5)
    elif draw(_SIZE) == "large":
        caps = (8, 48, 40)
    else:
        caps = (4, 12, 6)
    nt = caps[0] if max_topics is None else max_topics
    np_ = caps[1] if max_partitions is None else max_partitions
    nm = caps[2] if max_members is None else max_members
    ppt = draw(partitions_per_topic(nt, np_, zero=unusual, tricky_names=not small))
    topics = list(ppt)
    if unusual and draw(_BOOL):
        ppt[INTERNAL] = draw(_ints(1, 3))
        topics.append(INTERNAL)
    deleted = ["gone"] if unusual and topics_per_member is None and draw(_BOOL) else []
    members = draw(_members(nm, min(min_members, nm), tricky_ids, static))
    subs_topics = draw(subscriptions(topics, [m for m, _ in members], uniform=uniform, unusual=unusual,
                                     deleted=deleted, topics_per_member=topics_per_member))
    rack_of = {m: None for m, _ in members}
    if replica_racks or (racks and not small and draw(_RARE)):
        rack_of = {m: draw(_sample(_RACKS)) for m, _ in members}
    if replica_racks:
        ppt = _with_replica_racks(draw, ppt, _OFF_SHAPES if rack_mode_off else _REPLICA_SHAPES)
    subs: dict[str, dict[str, Any]] = {
        m: {"topics": subs_topics[m], "owned": [], "generation": -1, "instance_id": inst, "rack": rack_of[m]}
        for m, inst in members
    }
    if history is None:
        history = draw(_BOOL)
    if history and members:
        draw_history(draw, ppt, subs, [m for m, _ in members], conflicts, unusual, small)
    return ppt, subs


#: Replica-rack shapes: per partition a random set (rack mode usually on), the same set for every partition and
#: racks no consumer is in (off by KIP-881's conditions), no racks at all.
_REPLICA_SHAPES = ("spread", "same", "elsewhere", "none")
_OFF_SHAPES = _REPLICA_SHAPES[1:]
_REPLICA_SETS = (("r0",), ("r1",), ("r0", "r1"), ("r1", "r2"), ("r0", "r1", "r2"), ("r2",))


def _with_replica_racks(draw: Any, ppt: dict[str, int], shapes: tuple[str, ...]) -> dict[str, int]:
    from .racks import RackedPartitions

    shape = draw(_sample(shapes))
    if shape == "spread":
        racks = {t: [list(draw(_sample(_REPLICA_SETS))) for _ in range(max(n, 0))] for t, n in ppt.items()}
    elif shape == "same":
        common = list(draw(_sample(_REPLICA_SETS)))
        racks = {t: [list(common) for _ in range(max(n, 0))] for t, n in ppt.items()}
    elif shape == "elsewhere":
        racks = {t: [[draw(_sample(("r8", "r9")))] for _ in range(max(n, 0))] for t, n in ppt.items()}
    else:
        racks = {t: [[] for _ in range(max(n, 0))] for t, n in ppt.items()}
    return RackedPartitions(ppt, racks)


def draw_history(draw: Any, ppt: dict[str, int], subs: dict[str, dict[str, Any]], members: list[str],
                  conflicts: bool, unusual: bool, small: bool) -> None:
    """Owned partitions from a previous generation: each partition has at most one current owner, then
    (``conflicts``) extra claims by members with lower or equal generations, then (``unusual``) bad claims."""
    gen = draw(generations(small))
    # Each member: -1 = new joiner (no history), 0 = current generation, k > 0 = k generations stale.
    lag = [draw(_ints(-1, 2)) for _ in members]
    for m, k in zip(members, lag):
        subs[m]["generation"] = -1 if k < 0 else max(0, gen - k)
    holders = [m for m, k in zip(members, lag) if k >= 0]
    if not holders:
        return
    parts = [(t, p) for t in sorted(ppt) for p in range(ppt[t])]
    owner_of = _ints(-1, len(holders) - 1)
    owner = [draw(owner_of) for _ in parts]
    for tp, o in zip(parts, owner):
        if o >= 0:
            subs[holders[o]]["owned"].append(list(tp))
    if conflicts and parts:
        extra = draw(_claims(len(holders), len(parts), 3 if len(parts) < 40 else 8))
        for o, i in extra:
            claim = list(parts[i])
            if claim not in subs[holders[o]]["owned"]:
                subs[holders[o]]["owned"].append(claim)
    if unusual:
        bad = draw(_bad_claims(len(holders), next(iter(ppt), "t0")))
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
