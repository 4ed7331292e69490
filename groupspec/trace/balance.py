"""Balance, and the subscriptions it is judged by.

A period of a group *converges* when its assignment is complete (every partition of the trace's topics that an
alive member subscribes to owned by exactly one member) and balanced. Balanced means, as the trace contract says, that owned counts differ by at most
one among members with the same subscription — or, for range, which balances every topic on its own, that for
every topic the counts of that topic's partitions differ by at most one among the members subscribing to it.

Subscriptions come from ``subscribed`` lines (``{"event": "subscribed", "member": "c3", "topics": ["t", "u"]}``,
written by the real-stack harness when a member starts and when it changes its subscription) and from
``joined`` lines that carry ``topics``. A member whose subscription the trace never gives is taken to subscribe
to every topic of the trace, which is how a trace without these lines was always judged. A subscription change
is a disturbance: the group must rebalance, so it starts a period, as a membership change does. A partition is
unowned (completeness) only while an alive member subscribes to its topic.

A group with subscriptions is checked by the Python code alone (the compiled inner loop hands such lines back
and does not take the group again): these are small recordings, not fleets.
"""
from __future__ import annotations

from typing import Any

GroupChecker = Any  # checker.GroupChecker, which imports this module (no import back: no cycle)

__all__ = ["subscribe", "subscribes", "live_topics", "converged"]


def subscribe(g: GroupChecker, ev: dict[str, Any], line: int | None, ts: int) -> None:
    """A member's subscription from now on (a ``subscribed`` line, or ``joined`` with ``topics``)."""
    name, topics = ev.get("member"), ev.get("topics")
    if not isinstance(name, str) or not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
        g.defect(line, ts, name if isinstance(name, str) else None,
                 f"{ev.get('event')} event needs 'member' and 'topics' (a list of topic names)")
        return
    new = frozenset(topics)
    if g.subs.get(name) == new:
        return
    g.subs[name] = new
    g.all_dirty = True
    g.changed = True
    m = g.members.get(name)
    if m is not None and m.alive:
        g._cut(name)


def subscribes(g: GroupChecker, name: str, topic: str) -> bool:
    subs = g.subs.get(name)
    return subs is None or topic in subs


def live_topics(g: GroupChecker) -> set[str] | None:
    """The topics some alive member subscribes to; None when an alive member's subscription is unknown
    (it subscribes to every topic)."""
    alive = [n for n, m in g.members.items() if m.alive]
    if not all(n in g.subs for n in alive):
        return None
    return set().union(*(g.subs[n] for n in alive))


def converged(g: GroupChecker) -> bool:
    """Complete and balanced (the module's docstring)."""
    if not g.period_members or g.n_multi or not g.universe:
        return False
    if g.n_one != len(g.universe):  # some partition is unowned: fine only if nobody alive subscribes to its topic
        live = live_topics(g) if g.subs else None
        if live is None or any(tp[0] in live and not g.owners.get(tp) for tp in g.universe):
            return False
    counts = [len(m.owned) for m in g.members.values() if m.alive]
    if not counts:
        return False
    if max(counts) - min(counts) <= 1:
        return True
    if g.subs:  # balanced among the members with the same subscription
        classes: dict[frozenset[str] | None, list[int]] = {}
        for m in g.members.values():
            if m.alive:
                classes.setdefault(g.subs.get(m.name), []).append(len(m.owned))
        if all(max(c) - min(c) <= 1 for c in classes.values()):
            return True
    for topic in {tp[0] for tp in g.universe}:  # range balances every topic on its own
        per = [sum(1 for tp in m.owned if tp[0] == topic) for m in g.members.values()
               if m.alive and subscribes(g, m.name, topic)]
        if per and max(per) - min(per) > 1:
            return False
    return True
