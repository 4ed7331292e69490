"""Exact optimum oracle: the most balanced complete assignment, and the fewest moves to reach it.

Theory of operation
-------------------
A complete assignment gives each partition of a subscribed, existing topic to one of its subscribers. The load
vectors reachable this way form an M-convex set (integer points of a polymatroid base polytope), for which the
"most balanced" notion is unambiguous: the *decreasingly minimal* load vectors — which are exactly the minimisers
of the sum of squared loads (Frank & Murota, *Discrete decreasing minimization*) — simultaneously minimise the
largest load and maximise the smallest. Under uniform subscriptions this is Kafka's max − min ≤ 1; under
non-uniform subscriptions it is stronger than Kafka's pairwise ``isBalanced`` rule (assignors.md §2), which
ignores chains through third members.

We compute, with one min-cost flow (``networkx.network_simplex``),

    minimise  W · Σ_m load(m)²  +  #moved partitions,       with W > #partitions,

so the flow first reaches the best balance and, among the best-balanced assignments, moves as few partitions
as possible away from their current owner (the unique highest-generation claimant that still subscribes). The
convex cost is linearised by unit arcs member→sink with costs W·(2k−1), k = 1..cap(m). Partitions are
aggregated into classes (same subscriber set, same current owner); a class has a free arc to its owner and
one cost-1 arc to its subscriber-set node, which fans out to the subscribers, so the graph stays small:
50 members × 2,000 partitions is a few thousand arcs. ``cap(m)`` is bounded by the min-max load, found first by binary
search with max-flow on the same aggregated graph.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping

import networkx as nx

from .core import PPT, Assignment, Subscriptions, resolved_owners, topics_of


@dataclass(frozen=True)
class Optimum:
    """The oracle's answer for one group state."""

    moves: int            #: fewest partitions that must leave their current owner
    forced: int           #: of which owners no longer subscribe to the topic (must move anyway)
    sum_squares: int      #: Σ load² of the most balanced complete assignment
    spread: int           #: max − min load of that assignment
    max_load: int
    min_load: int
    partitions: int


# a class of partitions: (the members subscribed to its topic, its current owner if one of them may keep it)
PartitionClass = tuple[frozenset[str], str | None]


def _classes(ppt: PPT, subs: Subscriptions) -> tuple[Counter[PartitionClass], int]:
    """Partition classes ``(subscribers, owner-or-None) -> count`` and the number of forced moves."""
    subscribers: dict[str, frozenset[str]] = {}
    for m, s in subs.items():
        for t in topics_of(s):
            if ppt.get(t, 0) > 0:
                subscribers[t] = subscribers.get(t, frozenset()) | {m}
    owners = resolved_owners(subs)
    classes: Counter[PartitionClass] = Counter()
    forced = 0
    for t, members in subscribers.items():
        for p in range(ppt[t]):
            o = owners.get((t, p))
            if o is not None and o not in members:
                forced += 1 if o in subs else 0
                o = None
            classes[(members, o)] += 1
    return classes, forced


def _min_max_load(classes: Counter[PartitionClass], members: list[str], total: int) -> int:
    """Smallest L such that every partition fits with each member holding at most L (binary search, max-flow)."""
    if total == 0:
        return 0
    by_set: Counter[frozenset[str]] = Counter()
    for (subs_set, _o), n in classes.items():
        by_set[subs_set] += n
    g = nx.DiGraph()
    for i, (subs_set, n) in enumerate(by_set.items()):
        g.add_edge("S", ("s", i), capacity=n)
        for m in subs_set:
            g.add_edge(("s", i), ("m", m), capacity=n)
    lo, hi = -(-total // max(1, len(members))), total
    while lo < hi:
        mid = (lo + hi) // 2
        for m in members:
            if g.has_node(("m", m)):
                g.add_edge(("m", m), "T", capacity=mid)
        if nx.maximum_flow_value(g, "S", "T") >= total:
            hi = mid
        else:
            lo = mid + 1
    return lo


def optimum(ppt: PPT, subs: Subscriptions) -> Optimum:
    """The most balanced complete assignment reachable with the fewest moves (see the module docstring).

    Graph: source → subscriber-set node ("s", S) for unowned partitions; source → owner class ("o", S, o)
    for partitions of S currently owned by o, with a free arc to o (stay) and a cost-1 arc to ("s", S)
    (move); ("s", S) → every member of S for free; members → sink by unit arcs of convex cost.
    """
    classes, forced = _classes(ppt, subs)
    members = list(subs)
    total = sum(classes.values())
    if total == 0:
        return Optimum(forced, forced, 0, 0, 0, 0, 0)
    cap_all = _min_max_load(classes, members, total)
    elig: Counter[str] = Counter()
    set_id: dict[frozenset[str], int] = {}
    for (subs_set, _o), n in classes.items():
        set_id.setdefault(subs_set, len(set_id))
        for m in subs_set:
            elig[m] += n
    w = total + 1
    g = nx.MultiDiGraph()
    g.add_node("S", demand=-total)
    g.add_node("T", demand=total)
    for subs_set, i in set_id.items():
        for m in subs_set:
            g.add_edge(("s", i), ("m", m), capacity=total, weight=0)
    for (subs_set, owner), n in classes.items():
        i = set_id[subs_set]
        if owner is None:
            g.add_edge("S", ("s", i), capacity=n, weight=0)
        else:
            g.add_edge("S", ("o", i, owner), capacity=n, weight=0)
            g.add_edge(("o", i, owner), ("m", owner), capacity=n, weight=0)
            g.add_edge(("o", i, owner), ("s", i), capacity=n, weight=1)
    for m in members:
        for k in range(1, min(cap_all, elig[m]) + 1):
            g.add_edge(("m", m), "T", capacity=1, weight=w * (2 * k - 1))
    cost, flow = nx.network_simplex(g)
    loads = {m: sum(flow[("m", m)]["T"].values()) if g.has_node(("m", m)) else 0 for m in members}
    moved = sum(sum(flow[("o", set_id[s_], o)][("s", set_id[s_])].values())
                for (s_, o) in classes if o is not None)
    vals = list(loads.values())
    return Optimum(moves=forced + moved, forced=forced, sum_squares=sum(v * v for v in vals),
                   spread=max(vals) - min(vals), max_load=max(vals), min_load=min(vals), partitions=total)


def moves_of(subs: Subscriptions, out: Mapping[str, Any]) -> int:
    """Partitions that left their current owner (the unique highest-generation claimant) in ``out``."""
    owners = resolved_owners(subs)
    holder = {tp: m for m, parts in out.items() for tp in parts}
    return sum(1 for tp, o in owners.items() if o in subs and tp in holder and holder[tp] != o)


def balance_gap(ppt: PPT, subs: Subscriptions, out: Assignment, best: Optimum) -> str | None:
    """None when ``out`` is as balanced as possible (same Σ load² as the optimum), else a one-line explanation
    naming a chain of moves that would improve it."""
    loads = {m: len(set(out.get(m, ()))) for m in subs}
    ss = sum(v * v for v in loads.values())
    if ss <= best.sum_squares:
        return None
    spread = max(loads.values()) - min(loads.values())
    chain = improving_chain(ppt, subs, out)
    how = ""
    if chain:
        how = "; e.g. " + ", ".join(f"{t}-{p} {a!r}→{b!r}" for (t, p), a, b in chain)
    return (f"load spread {spread} (Σ load² {ss}) where {best.spread} (Σ load² {best.sum_squares}) is "
            f"achievable{how}")


def improving_chain(ppt: PPT, subs: Subscriptions, out: Assignment) -> list[tuple[tuple[str, int], str, str]]:
    """A chain of single-partition moves from a member A to a member B with load(A) ≥ load(B) + 2, each move
    handing a partition to a member that subscribes to its topic (breadth-first search; [] when none)."""
    loads = {m: len(set(out.get(m, ()))) for m in subs}
    holds: dict[str, list[tuple[str, int]]] = {m: sorted(set(out.get(m, ()))) for m in subs}
    topics = {m: topics_of(s) & set(ppt) for m, s in subs.items()}
    for a in sorted(subs, key=lambda m: -loads[m]):
        prev: dict[str, tuple[str, tuple[str, int]]] = {a: (a, ("", -1))}
        frontier = [a]
        while frontier:
            nxt = []
            for x in frontier:
                seen_topics: set[str] = set()
                for tp in holds[x]:
                    if tp[0] in seen_topics:
                        continue
                    seen_topics.add(tp[0])
                    for y in subs:
                        if y not in prev and tp[0] in topics[y]:
                            prev[y] = (x, tp)
                            if loads[y] <= loads[a] - 2:
                                chain = []
                                z = y
                                while z != a:
                                    px, ptp = prev[z]
                                    chain.append((ptp, px, z))
                                    z = px
                                return list(reversed(chain))
                            nxt.append(y)
            frontier = nxt
    return []
