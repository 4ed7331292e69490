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

States equal up to a shift of generations (``proto.exact_key``) are stored once, as the checker stores
them; member and partition names are kept (the checker also merges states up to renaming where the
assignor allows, so it may count fewer). Without the shift a variant whose generations grow for ever
(``cooperative-flappy``) has no end: its graph was cut off at 20,000 states, its deadlock never reached.

The document::

    {"format": "groupspec-graph/2", "protocol": "cooperative", "config": {...},
     "members": ["c1", "c2"], "partitions": ["t-0", "t-1"],
     "properties": [{"id": "exclusive_ownership", "kind": "always", "prose": "..."}, ...],
     "states": [{"parties": [[3, 4], [5, 6]], "status": "STABLE", "generation": 1, "converged": true,
                 "deadlock": false, "picture": {"own": [1, 2], "up": [1, 1], "msg": [[0, 9]]},
                 "violations": {"exclusive_ownership": "partition p0 is ..."}}, ...],
     "edges": [[[target, 7, "SendJoinGroup", fair, {"generation_monotonic": "..."}], ...], ...],
     "initial": [0], "truncated": false, "frontier": [],
     "check": {"command": "groupspec check ...", "states": 93, "complete": true, "symmetric": false,
               "verdicts": {"convergence": {"kind": "eventually", "held": false, "explanation": "deadlock: ...",
                                            "path": [0, 1, 0], "loop_start": null}, ...}},
     "strings": ["coordinator", "STABLE generation 1, ...", ...]}

``picture`` is what the explorer draws: each member's owned partitions as a bit mask (a paused zombie's
too), whether its process runs, and the coordinator's answers on their way (member, text). ``deadlock``
is the checker's rule: not converged, fully explored, and no protocol (fair) step enabled. ``frontier``
lists the states the cut-off left partly explored (a step of theirs leads to a state not kept): they are
unexplored, not stuck. ``check`` (``with_check=True``, as the docs build exports) is what ``groupspec
check`` decides on the same bounds (Python engine): its count, every verdict, and each counterexample as
edge indices from ``initial[0]`` (``null`` where the graph was cut off first; ``loop_start``: where a
livelock's repeating part begins).

Texts (party names, beliefs, step explanations) are numbers into ``strings``: a graph of thousands of
states repeats a few hundred sentences.

``edges[i]`` lists the steps enabled in state ``i`` in the model's order (a step that leads back to a
state already seen points at its index). ``truncated`` is true when ``max_states`` stopped the search.
"""
from __future__ import annotations

from collections import deque
from typing import Any

from groupspec.model import VARIANTS, Config, make
from groupspec.model import ACTIONS, SAFETY

from .timeline import explain, parties

__all__ = ["export_graph", "FORMAT"]

FORMAT = "groupspec-graph/2"


def export_graph(protocol: str, *, members: int = 2, partitions: int = 2, topics: int = 1,
                 faults: frozenset[str] = frozenset(), budget: int = 1, assignor: str = "sticky",
                 max_states: int = 20000, with_check: bool = False) -> dict[str, Any]:
    """The reachable state graph of ``protocol`` on one small instance (see the module docstring).

    ``with_check``: also run the checker on the same bounds and export what it decided (``"check"``).
    """
    if protocol not in VARIANTS:
        raise ValueError(f"unknown protocol {protocol!r}; choose from {', '.join(VARIANTS)}")
    if max_states < 1:
        raise ValueError(f"max_states must be positive (got {max_states})")
    cfg = Config(members=members, partitions=partitions, topics=topics, faults=frozenset(faults), budget=budget,
                 assignor=assignor)
    proto = make(protocol, cfg)
    # States equal up to a shift of generations are one state, as in the checker (without this, a variant
    # whose generations grow forever, cooperative-flappy, has no end); member and partition names are kept.
    key = proto.exact_key  # (every page has one: Spec.exact_key)
    index: dict[Any, int] = {}
    states: list[Any] = []
    queue: deque[int] = deque()

    def add(s: Any) -> int | None:
        k = index.get(key(s))
        if k is not None:
            return k
        if len(states) >= max_states:
            return None
        index[key(s)] = len(states)
        states.append(s)
        queue.append(len(states) - 1)
        return len(states) - 1

    strings: dict[str, int] = {}

    def intern(text: str) -> int:
        return strings.setdefault(text, len(strings))

    # the variant's own properties (a family may add some: the migration's cooperative_assignor), so that a
    # state the checker reports as violating one is marked so in the graph too
    safety, actions = tuple(proto.safety_properties()), tuple(proto.action_properties())
    initial = [add(s) for s in proto.init_states()]
    edges: dict[int, list[list[Any]]] = {}
    frontier: list[int] = []  # states with a step to a state the cut-off left out: not fully explored
    truncated = False
    while queue:
        i = queue.popleft()
        s = states[i]
        out = []
        cut = False
        for a, t in proto.successors(s):
            j = add(t)
            if j is None:
                truncated = cut = True
                continue
            bad = {p.name: why for p in actions if (why := p.check(proto, s, t)) is not None}
            out.append([j, intern(explain(proto, s, a, t)), a.name, bool(a.fair), bad])
        edges[i] = out
        if cut:
            frontier.append(i)
    doc: dict[str, Any] = {
        "format": FORMAT,
        "protocol": protocol,
        "config": {"members": members, "partitions": partitions, "topics": topics, "faults": sorted(faults),
                   "budget": budget, "assignor": assignor},
        "members": [proto.member_name(m) for m in range(members)],
        "partitions": [_partition_name(proto, p) for p in range(partitions)],
        "properties": [{"id": p.name, "kind": p.kind.value, "prose": " ".join(p.prose.split("\n\n")[0].split())}
                       for p in (*safety, *actions)],
        "states": [_state_json(proto, s, intern, safety) for s in states],
        "edges": [edges.get(i, []) for i in range(len(states))],
        "initial": initial,
        "truncated": truncated,
        "frontier": frontier,
    }
    unexplored = set(frontier)
    for i, st in enumerate(doc["states"]):
        # the checker's deadlock: not converged, no protocol (fair) step enabled, and fully explored
        st["deadlock"] = (not st["converged"] and i not in unexplored and not any(e[3] for e in doc["edges"][i]))
        st["picture"] = _picture(proto, states[i], intern)
    if with_check:
        doc["check"] = _check(protocol, cfg, doc, index, key)
    doc["strings"] = list(strings)
    return doc


def check_command(protocol: str, config: dict[str, Any]) -> str:
    """The ``groupspec check`` command line for the same bounds as an exported graph."""
    cmd = f"groupspec check --protocol {protocol} --members {config['members']} --partitions {config['partitions']}"
    if config.get("topics", 1) != 1:
        cmd += f" --topics {config['topics']}"
    if config.get("faults"):
        cmd += " --faults " + ",".join(config["faults"])
    cmd += f" --budget {config['budget']}"
    if config.get("assignor", "sticky") != "sticky":
        cmd += f" --assignor {config['assignor']}"
    return cmd


def _check(protocol: str, cfg: Config, doc: dict[str, Any], index: dict[Any, int], key: Any) -> dict[str, Any]:
    """What ``groupspec check`` decides on the graph's bounds: its state count, every verdict, and each
    counterexample as a path of edge indices in this graph (``None`` where the graph was cut off first)."""
    from .engines import check

    _proto, res = check(protocol, cfg.assignor, cfg.members, cfg.partitions, cfg.topics, cfg.faults, cfg.budget,
                        engine="python", with_symmetry_factor=False)
    verdicts = {}
    for name, v in res.verdicts.items():
        entry: dict[str, Any] = {"kind": v.kind, "held": v.held, "explanation": v.explanation}
        if v.held is False and v.trace:
            entry["path"] = _path_in_graph(doc, index, key, v.trace)
            entry["loop_start"] = v.loop_start
        verdicts[name] = entry
    return {"command": check_command(protocol, doc["config"]), "states": res.states, "complete": res.complete,
            "symmetric": bool(res.symmetric), "verdicts": verdicts}


def _path_in_graph(doc: dict[str, Any], index: dict[Any, int], key: Any, trace: list[Any]) -> list[int] | None:
    cur = index.get(key(trace[0].state))
    if cur is None or cur != doc["initial"][0]:
        return None
    path = []
    for step in trace[1:]:
        nxt = index.get(key(step.state))
        if nxt is None:
            return None
        ks = [k for k, e in enumerate(doc["edges"][cur]) if e[0] == nxt and e[2] == step.action.name]
        if not ks:
            return None
        path.append(ks[0])
        cur = nxt
    return path


def _state_json(proto: Any, s: Any, intern: Any, safety: Any = SAFETY) -> dict[str, Any]:
    group: Any = getattr(s, "group", None)
    return {
        "parties": [[intern(who), intern(belief)] for who, belief in parties(proto, s)],
        # the classic group's status and generation; the next-generation group has no status, and its
        # group epoch plays the generation's part
        "status": group.status.name if hasattr(group, "status") else None,
        "generation": group.generation if hasattr(group, "generation") else getattr(group, "epoch", None),
        "converged": bool(proto.converged(s)),
        "violations": {p.name: why for p in safety if (why := p.check(proto, s)) is not None},
    }


_REPLY_LABELS = {"JOIN": "JoinGroup answer", "SYNC": "SyncGroup answer"}


def _partition_name(proto: Any, p: int) -> str:
    name: str = proto.partition_name(p)  # (every page names its partitions: Spec.partition_name)
    return name


def _picture(proto: Any, s: Any, intern: Any) -> dict[str, Any]:
    """What the explorer draws: each member's owned partitions (a bit mask; a paused zombie's count too,
    it believes it owns them), whether its process runs, and the coordinator's answers on their way."""
    clients = getattr(s, "clients", None)
    if clients is None:  # zookeeper: consumers and their ephemeral owner nodes
        clients = s.consumers
    own, up, msg = [], [], []
    for i, c in enumerate(clients):
        mask = c.owned
        ghost = getattr(c, "ghost", None)
        if ghost is not None:
            mask |= ghost[1]
        own.append(mask)
        up.append(int(c.proc.name != "DOWN"))
        ib = getattr(c, "inbox", None)
        if ib is not None:
            label = _REPLY_LABELS.get(ib.reply.name, ib.reply.name)
            if ib.reply.name == "SYNC":
                label += " {" + ", ".join(_partition_name(proto, p) for p in range(proto.cfg.partitions)
                                          if ib.assignment >> p & 1) + "}"
            msg.append([i, intern(label)])
    return {"own": own, "up": up, "msg": msg}
