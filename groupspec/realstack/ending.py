"""When a real-stack run ends: once the group has converged, or at the scenario's stated limit.

A run lasts at least its scenario's story (``RealScenario.duration_s``); from then on it ends as
soon as the group *has converged*, or when ``RealScenario.limit_s`` has passed, and says which
(``ended``: ``"converged"`` or ``"limit"``). Under load a member can take seconds to come up: a run
on a fixed clock could end before the last member was assigned (the third member of
``new-consumer-joins`` on librdkafka's mock, one run in two).

Converged, judged from the lines recorded so far the way the trace checker judges a period
(``groupspec.trace``'s ``convergence``): every partition of the run's topics owned by exactly one
live member, the owned counts balanced (differing by at most one, overall, among the members with the same
subscription, or in every topic among the members subscribing to it: the ``subscribed`` lines the harness writes,
as ``groupspec.trace``'s ``balance`` reads them; a partition of a topic no live member subscribes to need not be
owned), and that assignment unchanged for ``SETTLE_S``. Live members are the members the harness started and
has not seen leave (a ``left`` line, a crash, a process that exited): a member whose client has not
come up yet owns nothing, so the group is not converged without it.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["SETTLE_S", "Ownership", "read_new"]

SETTLE_S = 3.0  # the assignment must hold this long to count as converged


class Ownership:
    """Who owns what, from the listener events (``assigned``, ``revoked``, ``lost``, ``left``)."""

    def __init__(self) -> None:
        self.owned: dict[str, set[tuple[str, int]]] = {}
        self.topics: dict[str, int] = {}
        self.gone: set[str] = set()
        self.changed_ms = 0  # when the assignment (or the membership) last changed
        self.subs: dict[str, frozenset[str]] = {}  # member -> its subscription (``subscribed`` lines)

    def feed(self, e: dict[str, Any]) -> None:
        kind, member, ts = e.get("event"), e.get("member"), int(e.get("ts_ms", 0))
        if kind == "topic":
            self.topics[e["topic"]] = int(e["partitions"])
            self.changed_ms = max(self.changed_ms, ts)
            return
        if member is None:
            return
        if kind == "subscribed":
            self.subs[member] = frozenset(e.get("topics") or [])
            self.changed_ms = max(self.changed_ms, ts)
            return
        parts = {(p[0], int(p[1])) for p in e.get("partitions") or []}
        mine = self.owned.setdefault(member, set())
        before = set(mine)
        if kind == "joined":
            self.gone.discard(member)
            mine.clear()
        elif kind == "assigned":
            if e.get("protocol", "eager") == "eager":
                mine.clear()
            mine |= parts
        elif kind in ("revoked", "lost"):
            mine -= parts
        elif kind == "left":
            mine.clear()
            self.gone.add(member)
        else:
            return
        if mine != before or kind in ("joined", "left"):
            self.changed_ms = max(self.changed_ms, ts)

    def converged(self, live: set[str]) -> bool:
        """Complete, exclusive and balanced among ``live`` (see the module docstring)."""
        members = sorted(live - self.gone)
        if not members or not self.topics:
            return False
        seen: set[tuple[str, int]] = set()
        for m in members:
            mine = self.owned.get(m, set())
            if seen & mine:
                return False
            seen |= mine
        def subscribes(m: str, t: str) -> bool:
            return m not in self.subs or t in self.subs[m]

        wanted = {(t, p) for t, n in self.topics.items() for p in range(n) if any(subscribes(m, t) for m in members)}
        if not wanted <= seen:
            return False
        counts = [len(self.owned.get(m, set())) for m in members]
        if max(counts) - min(counts) <= 1:
            return True
        classes: dict[frozenset[str] | None, list[int]] = {}
        for m, c in zip(members, counts):
            classes.setdefault(self.subs.get(m), []).append(c)
        if self.subs and all(max(c) - min(c) <= 1 for c in classes.values()):
            return True
        per_topic = ([sum(1 for tp in self.owned.get(m, set()) if tp[0] == t) for m in members if subscribes(m, t)]
                     for t in self.topics)
        return all(max(c) - min(c) <= 1 for c in per_topic if c)


def read_new(path: Path, offset: int) -> tuple[list[dict[str, Any]], int]:
    """The whole lines appended to ``path`` since ``offset`` (a worker writes one line at a time)."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return [], offset
    end = data.rfind(b"\n") + 1
    out = []
    for raw in data[:end].splitlines():
        try:
            out.append(json.loads(raw))
        except ValueError:
            continue
    return out, offset + end
