"""Convergence on finite instances: the ranking argument (explicit state graph of ``groupspec.model``).

Theory of operation
-------------------
Convergence is only claimed after the last perturbation and under weak fairness of protocol steps
(Vanlightly's ``EventuallyConverges`` with ``MaxPerturbations``).  On a finite instance it follows from
a *ranking function* ``rank`` on the reachable non-converged states such that

* (R1, no deadlock) every reachable non-converged state has a protocol step enabled;
* (R2, decrease) every protocol step from a non-converged state ``s`` leads to a converged state or to
  ``t`` with ``rank(t) < rank(s)``;
* (R3, stability) a protocol step never leads from a converged state to a non-converged one.

Then any run whose perturbations have stopped reaches a converged state within ``rank(s)`` protocol
steps and stays there: weak fairness is not even needed beyond "some protocol step keeps happening".
Such a ``rank`` exists iff the protocol-step graph among reachable non-converged states is acyclic,
and the least one is the longest protocol path to convergence; :func:`ranking` computes it (networkx
topological order) over the reachable states of the model — every state with every perturbation
sequence the budget allows — and then re-checks R1–R3 edge by edge, independently of how ``rank`` was
built.  States are identified only up to a shift of all generations (the model's ``exact_key``), not
up to member/partition renaming: assignors break ties by labels, so the symmetry-reduced graph is a
different (if legitimate) system, and the ranking must be about the model's own.

The bounded Z3 lasso search of :mod:`groupspec.proofs.bmc` is the complementary, symbolic check (it
also allows any assignor answers on the prefix and pins them to the model's).
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import networkx as nx

from groupspec.model import Config, make


@dataclass
class Ranking:
    protocol: str
    instance: str
    ok: bool
    bound: int | None
    states: int
    protocol_edges: int
    seconds: float
    detail: str = ""


def ranking(protocol: str, members: int, partitions: int, faults: tuple[str, ...] = (), budget: int = 1) -> Ranking:
    """Build and verify a ranking function for ``protocol`` on one finite instance."""
    t0 = time.perf_counter()
    proto = make(protocol, Config(members=members, partitions=partitions, faults=frozenset(faults), budget=budget))
    inst = f"{members} member{'s' * (members != 1)} x {partitions} partition{'s' * (partitions != 1)}, faults {','.join(faults) or '-'}, budget {budget}"
    index: dict[Any, int] = {}
    states: list[Any] = []
    fair: list[list[tuple[Any, int]]] = []
    queue: deque[int] = deque()

    key_of = getattr(proto, "exact_key", proto.key)

    def add(s: Any) -> int:
        k = key_of(s)
        nid = index.get(k)
        if nid is None:
            nid = len(states)
            index[k] = nid
            states.append(s)
            fair.append([])
            queue.append(nid)
        return nid

    for s in proto.init_states():
        add(s)
    edges = 0
    while queue:
        v = queue.popleft()
        for a, t in proto.successors(states[v]):
            w = add(t)
            if a.fair:
                fair[v].append((a, w))
                edges += 1
    conv = [proto.converged(s) for s in states]
    # R1 and R3
    for v, s in enumerate(states):
        if not conv[v] and not fair[v]:
            return Ranking(protocol, inst, False, None, len(states), edges, time.perf_counter() - t0,
                           f"deadlock: reachable state #{v} is not converged and no protocol step is enabled")
        if conv[v]:
            for a, w in fair[v]:
                if not conv[w]:
                    return Ranking(protocol, inst, False, None, len(states), edges, time.perf_counter() - t0,
                                   f"convergence does not last: {a!r} leaves converged state #{v}")
    g = nx.DiGraph()
    g.add_nodes_from(v for v in range(len(states)) if not conv[v])
    g.add_edges_from((v, w) for v in range(len(states)) if not conv[v] for _a, w in fair[v] if not conv[w])
    if not nx.is_directed_acyclic_graph(g):
        cyc = nx.find_cycle(g)
        return Ranking(protocol, inst, False, None, len(states), edges, time.perf_counter() - t0,
                       f"no ranking function: protocol steps cycle among non-converged states {cyc[:6]}")
    rank = [0] * len(states)
    for v in reversed(list(nx.topological_sort(g))):
        rank[v] = 1 + max((rank[w] if not conv[w] else 0) for _a, w in fair[v])
    # R2, re-checked edge by edge
    for v in range(len(states)):
        if conv[v]:
            continue
        for a, w in fair[v]:
            if not conv[w] and not rank[w] < rank[v]:
                return Ranking(protocol, inst, False, None, len(states), edges, time.perf_counter() - t0,
                               f"rank does not decrease on {a!r} from #{v}")
    bound = max(rank) if rank else 0
    return Ranking(protocol, inst, True, bound, len(states), edges, time.perf_counter() - t0,
                   f"{len(states)} reachable states, {edges} protocol steps; rank = longest protocol path to "
                   f"convergence, at most {bound}")
