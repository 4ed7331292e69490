"""The model's reachable state graph as JSON, for the browser explorer and the docs' diagrams.

Theory of operation
-------------------
:func:`export_graph` runs a breadth-first search on the model's own code (``proto.init_states()`` and
``proto.successors(s)``, in their fixed order), storing each *concrete* state once — no symmetry
reduction, so every state a reader clicks to is exactly one the specification reaches, and the edge
labels are the model's own action names. For every state it records what each party believes (the
same sentences as the checker's timelines, :func:`groupspec.checker.timeline.parties`), the
verdict of every ALWAYS property, and for every edge the one-line explanation of the step and the
verdict of every ACTION property. The explorer page (docs/explorer/) only walks this graph: it holds
no second implementation of the protocol.

The document::

    {"format": "groupspec-graph/1", "protocol": "cooperative", "config": {...},
     "properties": [{"id": "exclusive_ownership", "kind": "always", "prose": "..."}, ...],
     "states": [{"parties": [[3, 4], [5, 6]], "status": "STABLE", "generation": 1, "converged": true,
                 "violations": {"exclusive_ownership": "partition p0 is ..."}}, ...],
     "edges": [[[target, 7, "SendJoinGroup", fair, {"generation_monotonic": "..."}], ...], ...],
     "initial": [0], "truncated": false, "strings": ["coordinator", "STABLE generation 1, ...", ...]}

Texts (party names, beliefs, step explanations) are numbers into ``strings``: a graph of thousands of
states repeats a few hundred sentences.

``edges[i]`` lists the steps enabled in state ``i`` in the model's order (a step that leads back to a
state already seen points at its index). ``truncated`` is true when ``max_states`` stopped the search.
"""
from __future__ import annotations

from collections import deque
from typing import Any

from groupspec.model import VARIANTS, Config, make
from groupspec.model.properties import ACTIONS, SAFETY

from .timeline import explain, parties

__all__ = ["export_graph", "FORMAT"]

FORMAT = "groupspec-graph/1"


def export_graph(protocol: str, *, members: int = 2, partitions: int = 2, topics: int = 1,
                 faults: frozenset[str] = frozenset(), budget: int = 1, assignor: str = "sticky",
                 max_states: int = 20000) -> dict[str, Any]:
    """The reachable state graph of ``protocol`` on one small instance (see the module docstring)."""
    if protocol not in VARIANTS:
        raise ValueError(f"unknown protocol {protocol!r}; choose from {', '.join(VARIANTS)}")
    if max_states < 1:
        raise ValueError(f"max_states must be positive (got {max_states})")
    cfg = Config(members=members, partitions=partitions, topics=topics, faults=frozenset(faults), budget=budget,
                 assignor=assignor)
    proto = make(protocol, cfg)
    index: dict[Any, int] = {}
    states: list[Any] = []
    queue: deque[int] = deque()

    def add(s: Any) -> int | None:
        k = index.get(s)
        if k is not None:
            return k
        if len(states) >= max_states:
            return None
        index[s] = len(states)
        states.append(s)
        queue.append(len(states) - 1)
        return len(states) - 1

    strings: dict[str, int] = {}

    def intern(text: str) -> int:
        return strings.setdefault(text, len(strings))

    initial = [add(s) for s in proto.init_states()]
    edges: dict[int, list[list[Any]]] = {}
    truncated = False
    while queue:
        i = queue.popleft()
        s = states[i]
        out = []
        for a, t in proto.successors(s):
            j = add(t)
            if j is None:
                truncated = True
                continue
            bad = {p.name: why for p in ACTIONS if (why := p.check(proto, s, t)) is not None}
            out.append([j, intern(explain(proto, s, a, t)), a.name, bool(a.fair), bad])
        edges[i] = out
    return {
        "format": FORMAT,
        "protocol": protocol,
        "config": {"members": members, "partitions": partitions, "topics": topics, "faults": sorted(faults),
                   "budget": budget, "assignor": assignor},
        "members": [proto.member_name(m) for m in range(members)],
        "properties": [{"id": p.name, "kind": p.kind.value, "prose": " ".join(p.prose.split("\n\n")[0].split())}
                       for p in (*SAFETY, *ACTIONS)],
        "states": [_state_json(proto, s, intern) for s in states],
        "edges": [edges.get(i, []) for i in range(len(states))],
        "initial": initial,
        "truncated": truncated,
        "strings": list(strings),
    }


def _state_json(proto: Any, s: Any, intern: Any) -> dict[str, Any]:
    group: Any = getattr(s, "group", None)
    return {
        "parties": [[intern(who), intern(belief)] for who, belief in parties(proto, s)],
        # the classic group's status and generation; the next-generation group has no status, and its
        # group epoch plays the generation's part
        "status": group.status.name if hasattr(group, "status") else None,
        "generation": group.generation if hasattr(group, "generation") else getattr(group, "epoch", None),
        "converged": bool(proto.converged(s)),
        "violations": {p.name: why for p in SAFETY if (why := p.check(proto, s)) is not None},
    }
