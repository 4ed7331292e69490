"""The catalogue of input classes: the group states real groups send, each drawn on purpose, not by luck.

Theory of operation
-------------------
:func:`groupspec.strategies.group_states` draws group states broadly; some shapes that real groups produce it
draws rarely or never (issue #34 measured 0 of 5,000 states with owned partitions at generation −1, 3 of
5,000 with a partition claimed at three generations). This module names those shapes as *classes*, each with

* a **classifier** (:func:`classify`): a pure function of a state saying which classes it belongs to, so
  coverage is measured on the states actually fed to the candidate, whichever strategy drew them;
* a **strategy** (:func:`class_states`): draws a state of the domain the candidate declared (topics per
  member, static members, replica racks) and plants the class's shape into it, so every drawn state is in
  the class by construction (a test checks this with the classifier).

The check (:mod:`.check`) runs, for every property whose input is a group state, its usual search and then a
few examples of every class (``per_class``), each class its own seeded Hypothesis search, so a violation
found there shrinks *within* the class. Every class is therefore hit at least ``per_class`` times per such
property whatever the seed, and the report counts how often each class was hit in all.

Arrival order. Java's sticky assignors resolve competing claims walking the members in the order of the
subscription map (assignors.md §1.3), so the order in which claims at different generations arrive changes
what a buggy (or Java's own) resolution does. The classes ``claims-2-gens:*`` and ``claims-3-gens:*`` fix the
order of the claimants in the map: ``old``, ``mid``, ``new`` name the claimants' generations. Each order
occurs in real groups; ``claims-3-gens:old-new-mid`` is the one a group produces after two missed rebalances
when members are listed in join order: A (listed first) owns p at generation g and misses a rebalance, p goes
to C (listed last) at g+1; C misses the next one, p goes to B at g+2; all three then rejoin with their claims.

Imports nothing of the project but :mod:`.strategies` and :mod:`.core`.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import permutations
from typing import Any, Callable, Iterable

from hypothesis import strategies as st

from . import strategies as gs
from .core import owned_of, subscribed_partitions, topics_of

State = tuple[dict[str, int], dict[str, dict[str, Any]]]

_RANK3 = ("old", "mid", "new")


@dataclass(frozen=True)
class InputClass:
    id: str
    description: str


def _orders3() -> list[tuple[str, ...]]:
    return [tuple(_RANK3[i] for i in perm) for perm in permutations(range(3))]


CLASSES: list[InputClass] = [
    InputClass("gen-unknown-owned", "a member sends owned partitions with generation -1 (reset generation, "
                                    "old client in a rolling upgrade, no generation sent)"),
    InputClass("claims-2-gens:old-new", "a partition claimed at two generations, the older claim first"),
    InputClass("claims-2-gens:new-old", "a partition claimed at two generations, the newer claim first"),
    *[InputClass("claims-3-gens:" + "-".join(o),
                 f"a partition claimed at three generations, arriving {', '.join(o)}"
                 + (" (after two missed rebalances, members in join order)" if o == ("old", "new", "mid") else ""))
      for o in _orders3()],
    InputClass("claims-4plus-gens", "a partition claimed at four or more generations"),
    InputClass("owned-dropped-topic", "a member owns partitions of a topic it no longer subscribes to"),
    InputClass("owned-gone-partition", "a member owns partitions that no longer exist (deleted topic or "
                                       "partition number past the topic's count)"),
    InputClass("members-gt-partitions", "more members than subscribed partitions"),
    InputClass("members-eq-partitions", "as many members as subscribed partitions"),
    InputClass("owns-member-count", "a member holds exactly as many partitions as there are members"),
    InputClass("two-stale-one-unsubscribed", "a partition with two stale claims, one from a member that no "
                                             "longer subscribes to its topic"),
    InputClass("racks", "members with racks"),
    InputClass("topics-different-sizes", "three or more subscribed topics of different partition counts"),
    InputClass("stale-rejoin", "a member rejoins with a stale owned list: everything it claims is now owned "
                               "by others at a newer generation"),
]

CLASS_IDS: list[str] = [c.id for c in CLASSES]


# ------------------------------------------------------------------------------------------- classify


def _gen(sub: dict[str, Any]) -> int:
    g = sub.get("generation")
    return -1 if g is None or g < 0 else int(g)


def classify(ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> frozenset[str]:
    """The classes of the catalogue this state belongs to."""
    out: set[str] = set()
    members = list(subs)
    pos = {m: i for i, m in enumerate(members)}
    claims: dict[tuple[str, int], list[tuple[int, str]]] = {}
    for m, s in subs.items():
        own = owned_of(s)
        mine = topics_of(s)
        if own and _gen(s) < 0:
            out.add("gen-unknown-owned")
        for t, p in own:
            if t not in ppt or not 0 <= p < ppt[t]:
                out.add("owned-gone-partition")
                continue
            if t not in mine:
                out.add("owned-dropped-topic")
            claims.setdefault((t, p), []).append((_gen(s), m))
    for (t, _p), cs in claims.items():
        known = [(g, m) for g, m in cs if g >= 0]
        gens = {g for g, _ in known}
        if len(gens) >= 4:
            out.add("claims-4plus-gens")
        elif len(gens) >= 2 and len(known) == len(gens):
            ranks = sorted(gens)
            names = ("old", "new") if len(gens) == 2 else _RANK3
            order = [names[ranks.index(g)] for g, _ in sorted(known, key=lambda c: pos[c[1]])]
            out.add(f"claims-{len(gens)}-gens:" + "-".join(order))
        if known:
            top = max(gens)
            stale = [m for g, m in known if g < top]
            if len(stale) >= 2 and any(t not in topics_of(subs[m]) for m in stale):
                out.add("two-stale-one-unsubscribed")
    nparts = len(subscribed_partitions(ppt, subs))
    if nparts and len(subs) > nparts:
        out.add("members-gt-partitions")
    if nparts and len(subs) == nparts:
        out.add("members-eq-partitions")
    if len(subs) >= 2:
        for s in subs.values():
            held = {(t, p) for t, p in owned_of(s) if t in ppt and 0 <= p < ppt[t]}
            if len(held) == len(subs):
                out.add("owns-member-count")
                break
    if any(s.get("rack") for s in subs.values()):
        out.add("racks")
    sizes = {ppt[t] for t in set().union(*(topics_of(s) for s in subs.values())) if t in ppt and ppt[t] > 0} \
        if subs else set()
    if len(sizes) >= 3:
        out.add("topics-different-sizes")
    top_gen = max((_gen(s) for s in subs.values()), default=-1)
    for m, s in subs.items():
        g = _gen(s)
        claimed = [tp for tp in owned_of(s) if tp in claims]
        if 0 <= g < top_gen and claimed and all(any(g2 > g and o != m for g2, o in claims[tp]) for tp in claimed):
            out.add("stale-rejoin")
            break
    return frozenset(out)


class Coverage:
    """How often each class was hit in one run (states fed to the candidate, all properties together)."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.states = 0

    def add(self, state: Any) -> None:
        st_ = _state_of(state)
        if st_ is None:
            return
        self.states += 1
        self.hits.update(classify(*st_))

    def to_json(self, per_class: int, swept: list[str]) -> dict[str, Any]:
        return {"states": self.states, "per_class_per_property": per_class, "swept_properties": swept,
                "guaranteed_min": per_class * len(swept),
                "classes": [{"id": c.id, "description": c.description, "hits": self.hits.get(c.id, 0)}
                            for c in CLASSES]}


def _state_of(x: Any) -> State | None:
    """The group state inside a property's example: the state itself, or the first item of a pair/fault case."""
    if not isinstance(x, tuple) or len(x) != 2:
        return None
    if isinstance(x[0], tuple):
        return _state_of(x[0])
    if isinstance(x[0], dict) and isinstance(x[1], dict):
        return x
    return None


# ------------------------------------------------------------------------------------------- plant


def _copy(ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> State:
    racks = getattr(ppt, "partition_racks", None)
    if racks is not None:
        from .racks import RackedPartitions

        ppt2: dict[str, int] = RackedPartitions(dict(ppt), {t: [list(r) for r in rows] for t, rows in racks.items()})
    else:
        ppt2 = dict(ppt)
    return ppt2, {m: {**s, "topics": list(s.get("topics") or []), "owned": [list(x) for x in s.get("owned") or []]}
                  for m, s in subs.items()}


def _set_count(ppt: dict[str, int], t: str, n: int) -> None:
    """Set topic ``t``'s partition count, keeping a racked input's replica rows in step."""
    ppt[t] = n
    racks = getattr(ppt, "partition_racks", None)
    if racks is not None:
        rows = racks.setdefault(t, [])
        while len(rows) < n:
            rows.append(list(rows[-1]) if rows else [])
        del rows[n:]


def _fresh_topic(ppt: dict[str, int], stem: str) -> str:
    i = 0
    while f"{stem}{i}" in ppt:
        i += 1
    return f"{stem}{i}"


def _fresh_member(subs: dict[str, dict[str, Any]]) -> str:
    i = 0
    while f"x{i}" in subs:
        i += 1
    return f"x{i}"


def _add_member(subs: dict[str, dict[str, Any]], topics: list[str], gen: int = -1) -> str:
    m = _fresh_member(subs)
    subs[m] = {"topics": list(topics), "owned": [], "generation": gen, "instance_id": None, "rack": None}
    return m


def _current(draw: Any, subs: dict[str, dict[str, Any]], small: bool, room: int = 4) -> int:
    """A current generation G with ``room`` generations below it; members that had one are put at G."""
    g: int = draw(st.integers(room + 1, room + 9)) if small else max(draw(gs.generations()), room + 1)
    for s in subs.values():
        if _gen(s) >= 0:
            s["generation"] = g
    return g


def _parts_of(ppt: dict[str, int], topics: Iterable[str]) -> list[tuple[str, int]]:
    return [(t, p) for t in sorted(set(topics)) if t in ppt for p in range(max(0, ppt[t]))]


def _drop_claims(subs: dict[str, dict[str, Any]], tps: Iterable[tuple[str, int]], keep: Iterable[str] = ()) -> None:
    gone = {tuple(x) for x in tps}
    keep = set(keep)
    for m, s in subs.items():
        if m not in keep:
            s["owned"] = [x for x in s["owned"] if (x[0], x[1]) not in gone]


def _claim(sub: dict[str, Any], tp: tuple[str, int]) -> None:
    if [tp[0], tp[1]] not in sub["owned"]:
        sub["owned"].append([tp[0], tp[1]])


def _subscribed_topic(draw: Any, ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> str:
    """A topic with partitions that some member subscribes to (one is made if there is none)."""
    cands = sorted({t for s in subs.values() for t in topics_of(s) if ppt.get(t, 0) > 0})
    if cands:
        chosen: str = draw(st.sampled_from(cands))
        return chosen
    t: str = sorted(topics_of(next(iter(subs.values()))))[0]
    _set_count(ppt, t, 1)
    return t


def _subscribers(subs: dict[str, dict[str, Any]], t: str) -> list[str]:
    return [m for m, s in subs.items() if t in topics_of(s)]


def _ensure_subscribers(subs: dict[str, dict[str, Any]], t: str, k: int) -> list[str]:
    """At least ``k`` members subscribed to ``t``: new ones copy the topic list of an existing subscriber."""
    have = _subscribers(subs, t)
    while len(have) < k:
        have.append(_add_member(subs, subs[have[0]]["topics"]))
    return have


def _place(subs: dict[str, dict[str, Any]], order: list[str]) -> dict[str, dict[str, Any]]:
    """The same map with the members of ``order`` put, in that order, into the slots they occupy."""
    slots = [i for i, m in enumerate(subs) if m in set(order)]
    keys = list(subs)
    for i, m in zip(slots, order):
        keys[i] = m
    return {m: subs[m] for m in keys}


def _base(draw: Any, domain: dict[str, Any], **kw: Any) -> State:
    return _copy(*draw(gs.group_states(**{**domain, **kw})))


def _gen_unknown_owned(draw: Any, domain: dict[str, Any]) -> State:
    ppt, subs = _base(draw, domain, history=True)
    t = _subscribed_topic(draw, ppt, subs)
    m = draw(st.sampled_from(_subscribers(subs, t)))
    mine = _parts_of(ppt, topics_of(subs[m]))
    subs[m]["owned"] = [list(x) for x in draw(st.lists(st.sampled_from(mine), min_size=1, max_size=6, unique=True))]
    subs[m]["generation"] = -1
    others = [o for o in subs if o != m and _gen(subs[o]) >= 0]
    if others and draw(st.booleans()):  # a current owner competes for one of them
        o = draw(st.sampled_from(others))
        _claim(subs[o], tuple(subs[m]["owned"][0]))
    return ppt, subs


def _claims_gens(k: int, order: tuple[str, ...] | None) -> Callable[[Any, dict[str, Any]], State]:
    def build(draw: Any, domain: dict[str, Any]) -> State:
        ppt, subs = _base(draw, domain, history=draw(st.booleans()))
        kk = k if k else draw(st.integers(4, 5))
        g = _current(draw, subs, domain.get("small", False), room=3 * kk)
        t = _subscribed_topic(draw, ppt, subs)
        claimants = draw(st.permutations(_ensure_subscribers(subs, t, kk)))[:kk]
        tp = (t, draw(st.integers(0, ppt[t] - 1)))
        _drop_claims(subs, [tp])
        gens = [g]
        for _ in range(kk - 1):
            gens.append(gens[-1] - draw(st.integers(1, 3)))
        gens.sort()  # oldest first: claimant i has rank i
        for m, gm in zip(claimants, gens):
            subs[m]["generation"] = gm
            _claim(subs[m], tp)
        names = ("old", "new") if kk == 2 else _RANK3
        ranked = dict(zip(names, claimants)) if kk <= 3 else {}
        arrival = [ranked[n] for n in order] if order else list(draw(st.permutations(claimants)))
        return ppt, _place(subs, arrival)
    return build


def _owned_dropped_topic(draw: Any, domain: dict[str, Any]) -> State:
    ppt, subs = _base(draw, domain, history=draw(st.booleans()))
    g = _current(draw, subs, domain.get("small", False))
    m = draw(st.sampled_from(list(subs)))
    mine = topics_of(subs[m])
    others = sorted(t for t in ppt if t not in mine and ppt[t] > 0)
    if others:
        t = draw(st.sampled_from(others))
    elif len(mine) >= 2 and domain.get("topics_per_member") is None:
        t = draw(st.sampled_from(sorted(t for t in mine if ppt.get(t, 0) > 0) or sorted(mine)))
        subs[m]["topics"] = [x for x in subs[m]["topics"] if x != t]
        if ppt.get(t, 0) <= 0:
            _set_count(ppt, t, 1)
    else:
        t = _fresh_topic(ppt, "dropped")
        _set_count(ppt, t, draw(st.integers(1, 4)))
    tps = draw(st.lists(st.integers(0, ppt[t] - 1), min_size=1, max_size=3, unique=True))
    for p in tps:
        _claim(subs[m], (t, p))
    subs[m]["generation"] = g
    return ppt, subs


def _owned_gone_partition(draw: Any, domain: dict[str, Any]) -> State:
    ppt, subs = _base(draw, domain, history=draw(st.booleans()))
    g = _current(draw, subs, domain.get("small", False))
    m = draw(st.sampled_from(list(subs)))
    t = next(iter(ppt))
    kind = draw(st.sampled_from(["deleted-topic", "past-count"]))
    gone = (_fresh_topic(ppt, "deleted"), draw(st.integers(0, 3))) if kind == "deleted-topic" else \
        (t, max(0, ppt[t]) + draw(st.integers(0, 3)))
    _claim(subs[m], gone)
    subs[m]["generation"] = g
    return ppt, subs


def _members_vs_partitions(more: bool) -> Callable[[Any, dict[str, Any]], State]:
    def build(draw: Any, domain: dict[str, Any]) -> State:
        ppt, subs = _base(draw, domain, max_topics=2, max_partitions=3 if more else 6, max_members=6,
                          history=draw(st.booleans()))
        t = _subscribed_topic(draw, ppt, subs)
        n = len(subscribed_partitions(ppt, subs))
        want = n + draw(st.integers(1, 3)) if more else n
        if not more and len(subs) > n:
            _set_count(ppt, t, ppt[t] + len(subs) - n)
            return ppt, subs
        while len(subs) < want:
            _add_member(subs, subs[draw(st.sampled_from(_subscribers(subs, t)))]["topics"])
        return ppt, subs
    return build


def _owns_member_count(draw: Any, domain: dict[str, Any]) -> State:
    ppt, subs = _base(draw, domain, history=draw(st.booleans()))
    g = _current(draw, subs, domain.get("small", False))
    t = _subscribed_topic(draw, ppt, subs)
    if len(subs) < 2:
        _add_member(subs, subs[_subscribers(subs, t)[0]]["topics"], g)
    m = draw(st.sampled_from(_subscribers(subs, t)))
    k = len(subs)
    if len(_parts_of(ppt, topics_of(subs[m]))) < k:
        _set_count(ppt, t, ppt[t] + k - len(_parts_of(ppt, topics_of(subs[m]))) + draw(st.integers(0, 2)))
    mine = _parts_of(ppt, topics_of(subs[m]))
    held = draw(st.lists(st.sampled_from(mine), min_size=k, max_size=k, unique=True))
    _drop_claims(subs, held)
    subs[m]["owned"] = [list(x) for x in held]
    subs[m]["generation"] = g
    return ppt, subs


def _two_stale_one_unsubscribed(draw: Any, domain: dict[str, Any]) -> State:
    ppt, subs = _base(draw, domain, history=draw(st.booleans()))
    g = _current(draw, subs, domain.get("small", False))
    t = _subscribed_topic(draw, ppt, subs)
    top, y, z = draw(st.permutations(_ensure_subscribers(subs, t, 3)))[:3]
    tp = (t, draw(st.integers(0, ppt[t] - 1)))
    _drop_claims(subs, [tp])
    subs[top]["generation"] = g
    subs[y]["generation"] = g - draw(st.integers(1, 2))
    subs[z]["generation"] = g - draw(st.integers(1, 2))
    for m in (top, y, z):
        _claim(subs[m], tp)
    # z no longer subscribes to t: t is swapped for another topic (a new one if none is left)
    rest = sorted(x for x in ppt if x not in topics_of(subs[z]) and x != t)
    if not rest:
        rest = [_fresh_topic(ppt, "other")]
        _set_count(ppt, rest[0], draw(st.integers(1, 3)))
    subs[z]["topics"] = [draw(st.sampled_from(rest)) if x == t else x for x in subs[z]["topics"]]
    return ppt, subs


def _racks(draw: Any, domain: dict[str, Any]) -> State:
    ppt, subs = _base(draw, domain)
    racked = draw(st.lists(st.sampled_from(["r0", "r1", "r2", None]), min_size=len(subs), max_size=len(subs)))
    for (m, s), r in zip(subs.items(), racked):
        s["rack"] = r
    first = next(iter(subs))
    subs[first]["rack"] = subs[first]["rack"] or draw(st.sampled_from(["r0", "r1", "r2"]))
    return ppt, subs


def _topics_different_sizes(draw: Any, domain: dict[str, Any]) -> State:
    ppt, subs = _base(draw, domain, history=False)
    k = draw(st.integers(3, 5))
    topics = sorted(ppt)[:k]
    while len(topics) < k:
        topics.append(_fresh_topic({**ppt, **{x: 0 for x in topics}}, "t"))
    hi = 6 if domain.get("small") else 24
    sizes = draw(st.lists(st.integers(1, hi), min_size=k, max_size=k, unique=True))
    for t in list(ppt):
        if t not in topics:
            del ppt[t]
            if getattr(ppt, "partition_racks", None) is not None:
                ppt.partition_racks.pop(t, None)  # type: ignore[attr-defined]
    for t, n in zip(topics, sizes):
        _set_count(ppt, t, n)
    tpm = domain.get("topics_per_member")
    for s in subs.values():
        kept = [x for x in s["topics"] if x in ppt]
        extra = [x for x in topics if x not in kept]
        need = (min(tpm, k) if tpm else max(1, len(kept))) - len(kept)
        s["topics"] = (kept + extra[:max(0, need)])[:min(tpm, k)] if tpm else (kept or extra[:1])
    for t in topics:  # every topic subscribed by someone
        if not _subscribers(subs, t):
            tl = [t] + [x for x in topics if x != t][:max(0, (min(tpm, k) if tpm else 1) - 1)]
            _add_member(subs, tl)
    members = list(subs)
    if draw(st.booleans()):
        gs.draw_history(draw, ppt, subs, members, True, False, bool(domain.get("small")))
    return ppt, subs


def _stale_rejoin(draw: Any, domain: dict[str, Any]) -> State:
    ppt, subs = _base(draw, domain, min_members=2, history=True)
    g = _current(draw, subs, domain.get("small", False))
    t = _subscribed_topic(draw, ppt, subs)
    m, o = draw(st.permutations(_ensure_subscribers(subs, t, 2)))[:2]
    mine = _parts_of(ppt, topics_of(subs[m]))
    stale = draw(st.lists(st.sampled_from(mine), min_size=1, max_size=4, unique=True))
    for s in subs.values():
        if _gen(s) < 0 and s["owned"]:
            s["owned"] = []
    for tp in stale:  # each is now owned by someone at the current generation
        owners = [x for x, s in subs.items() if x != m and _gen(s) == g and [tp[0], tp[1]] in s["owned"]]
        if not owners:
            _claim(subs[o], tp)
            subs[o]["generation"] = g
    subs[m]["owned"] = [list(x) for x in stale]
    subs[m]["generation"] = g - draw(st.integers(1, 3))
    if domain.get("static", True) and draw(st.booleans()):
        subs[m]["instance_id"] = subs[m].get("instance_id") or f"inst-{m}"
    return ppt, subs


_BUILDERS: dict[str, Callable[[Any, dict[str, Any]], State]] = {
    "gen-unknown-owned": _gen_unknown_owned,
    "claims-2-gens:old-new": _claims_gens(2, ("old", "new")),
    "claims-2-gens:new-old": _claims_gens(2, ("new", "old")),
    **{"claims-3-gens:" + "-".join(o): _claims_gens(3, o) for o in _orders3()},
    "claims-4plus-gens": _claims_gens(0, None),
    "owned-dropped-topic": _owned_dropped_topic,
    "owned-gone-partition": _owned_gone_partition,
    "members-gt-partitions": _members_vs_partitions(True),
    "members-eq-partitions": _members_vs_partitions(False),
    "owns-member-count": _owns_member_count,
    "two-stale-one-unsubscribed": _two_stale_one_unsubscribed,
    "racks": _racks,
    "topics-different-sizes": _topics_different_sizes,
    "stale-rejoin": _stale_rejoin,
}
assert set(_BUILDERS) == set(CLASS_IDS)


def class_states(cid: str, domain: dict[str, Any] | None = None) -> st.SearchStrategy[State]:
    """Group states of class ``cid``, within the declared ``domain`` (keyword arguments of ``group_states``)."""
    build = _BUILDERS[cid]
    dom = dict(domain or {})

    @st.composite
    def draw_one(draw: Any) -> State:
        return build(draw, dom)

    return draw_one()
