"""The explicit-state checker: breadth-first exploration, safety on every state and step, convergence on SCCs.

Theory of operation
-------------------
1. **Breadth-first search** from the initial states. States are stored once per key
   (:meth:`protocol.key`: generations up to a shift, and members/partitions up to symmetry where the
   assignor allows). The first concrete state met for a key is the one expanded, so every stored
   path is a real path of the specification, and BFS makes it a *shortest* one.
2. **Safety.** Every ALWAYS property is checked on every new state, every ACTION property on every
   step (the concrete pair). The first violation of each is kept with its shortest path.
3. **Convergence** (EVENTUALLY), on the graph of *protocol* steps only — perturbations are what
   happened before "the last perturbation":
   * a non-converged state with no protocol step enabled is a **deadlock** (the run stutters there);
   * a converged state with a protocol step to a non-converged one means convergence does not last;
   * among non-converged states, a strongly connected component (networkx) that has a cycle admits a
     *weakly fair* infinite run iff every fair action instance (action class x member) either labels an
     edge inside the component or is disabled in one of its states (one run can go round the whole
     component, taking every action it must). Such a component is a **livelock**;
   * otherwise the protocol-step graph among non-converged states is acyclic, and the longest path
     to a converged state is the **convergence bound**: the most protocol steps any run needs after
     its last perturbation. (If it has cycles, all unfair, convergence holds but no step bound exists.)
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

import networkx as nx

from groupspec.model import Spec

from .memory import peak_bytes, reset_peak, rss_bytes


@dataclass
class Step:
    """One step of a counterexample: the action taken and the concrete state it led to."""

    action: Any  # None for the initial state
    state: Any


@dataclass
class Verdict:
    name: str
    kind: str
    held: bool | None  # None: not applicable
    explanation: str = ""
    trace: list[Step] | None = None
    loop_start: int | None = None  # for a livelock: index in ``trace`` where the repeating part starts


@dataclass
class Result:
    protocol: str
    assignor: str
    config: Any
    states: int = 0
    edges: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    complete: bool = True
    symmetric: bool = False
    symmetry_factor: float | None = None  # concrete states / stored states
    symmetry_exact: bool = True
    engine: str = "python"
    convergence_bound: int | None = None
    peak_memory: int | None = None  # bytes: peak resident memory of the process during the search
    memory_per_state: float | None = None  # bytes: (peak - resident memory before the search) / states
    store_bytes_per_state: float | None = None  # bytes the compiled engine's store holds per state
    collision_probability: float | None = None  # fingerprint store: chance that two keys were merged
    frontier_spilled: int = 0  # frontier segments that waited on disk
    workers: int = 1  # threads that expanded states (compiled engine)
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    figures: dict[str, dict[str, Any]] = field(default_factory=dict)  # a variant's own figures (zookeeper: the herd)
    search_cpu_seconds: float | None = None  # compiled engine: CPU of the search (before the graph part)
    serial_cpu_seconds: float | None = None  # compiled engine, workers > 1: CPU spent merging
    compiled_now: str | bool = False  # set by `groupspec check`: what this run compiled first (its notice), or False

    @property
    def ok(self) -> bool:
        return all(v.held is not False for v in self.verdicts.values())

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds > 0 else 0.0


class Explorer:
    engine = "python"
    workers = 1  # the Python search runs on one thread
    # What the graph part reads after a search: lists here, lazy views of the compiled engine's arrays there.
    _states: Any
    _parent: Any
    _fair: Any
    _converged: Any

    def __init__(self, proto: Spec, max_states: int | None = None, progress: Callable[[int, int], None] | None = None):
        self.proto = proto
        self.max_states = max_states
        self.progress = progress

    def run(self) -> Result:
        proto = self.proto
        cfg = proto.cfg
        res = Result(protocol=proto.name, assignor=proto.assignor_name, config=cfg, symmetric=proto.symmetric)
        reset_peak()
        rss0 = rss_bytes()
        t0 = time.perf_counter()
        c0 = time.process_time()
        key_of = proto.key
        index: dict[Any, int] = {}
        states: list[Any] = []
        parent: list[tuple[int, Any]] = []
        fair_edges: list[list[tuple[Any, int]]] = []
        converged: list[bool] = []
        first_violation: dict[str, tuple[int, Any, Any, str]] = {}  # name -> (node, action, next, why)
        sometimes_seen: dict[str, int] = {}
        safety = proto.safety_properties()  # every variant's, then its own (zookeeper)
        action_props = proto.action_properties()  # none where there are no generations (zookeeper)
        sometimes = proto.sometimes_properties()

        herd = proto.notifications  # zookeeper: watches fired per directory change (None elsewhere)
        fired: dict[int, set[int]] = {}  # group size -> watches one membership change fired
        changes = 0
        seen: dict[Any, int] = {}  # concrete state -> node: most successors were met before, exactly

        def add(s: Any, par: int, act: Any) -> int:
            nid = seen.get(s)
            if nid is not None:
                return nid
            k = key_of(s)
            nid = index.get(k)
            if nid is not None:
                seen[s] = nid
                return nid
            seen[s] = len(states)
            nid = len(states)
            index[k] = nid
            states.append(s)
            parent.append((par, act))
            fair_edges.append([])
            conv = proto.converged(s)
            converged.append(conv)
            for prop in safety:
                if prop.name not in first_violation:
                    why = prop.check(proto, s)
                    if why is not None:
                        first_violation[prop.name] = (nid, None, None, why)
            for prop in sometimes:
                if prop.name not in sometimes_seen and prop.check(proto, s) is None:
                    sometimes_seen[prop.name] = nid
            return nid

        for s in proto.init_states():
            add(s, -1, None)
        queue = deque(range(len(states)))
        if self.progress is not None:
            self.progress(len(states), len(queue))  # the count shows from the start
        edges = 0
        last_report = 0.0
        while queue:
            if self.max_states is not None and len(states) >= self.max_states:
                res.complete = False
                break
            nid = queue.popleft()
            s = states[nid]
            out = fair_edges[nid]
            for act, t in proto.successors(s):
                edges += 1
                if herd is not None:
                    n = herd(s, t)
                    if n is not None:
                        fired.setdefault(n[0], set()).add(n[1])
                        changes += 1
                for prop in action_props:
                    if prop.name not in first_violation:
                        why = prop.check(proto, s, t)
                        if why is not None:
                            first_violation[prop.name] = (nid, act, t, why)
                before = len(states)
                tid = add(t, nid, act)
                if len(states) > before:
                    queue.append(tid)
                if act.fair:
                    out.append((act, tid))
                if self.max_states is not None and len(states) >= self.max_states:
                    break  # stop at exactly max_states stored states
            if self.max_states is not None and len(states) >= self.max_states:
                res.complete = False
                break
            if self.progress is not None:
                now = time.perf_counter()
                if now - last_report > 0.1:
                    last_report = now
                    self.progress(len(states), len(queue))
        if self.progress is not None:
            self.progress(len(states), 0)
        res.states = len(states)
        res.edges = edges
        if fired:
            res.figures["watch notifications per membership change"] = {
                "changes": changes, "by_group_size": {n: sorted(v) for n, v in sorted(fired.items())}}
        self._states, self._parent, self._fair, self._converged = states, parent, fair_edges, converged

        for prop in safety + action_props:
            if prop.name in first_violation:
                node, act, nxt, why = first_violation[prop.name]
                trace = self.path_to(node)
                if act is not None:
                    trace.append(Step(act, nxt))
                res.verdicts[prop.name] = Verdict(prop.name, prop.kind.value, False, why, trace)
            else:
                res.verdicts[prop.name] = Verdict(prop.name, prop.kind.value, True)
        if not action_props:
            res.verdicts["generation_monotonic"] = Verdict(
                "generation_monotonic", "action", None, "this protocol has no generations"
            )
        if res.complete:
            res.verdicts["convergence"], res.convergence_bound = self.convergence()
        else:
            res.verdicts["convergence"] = Verdict("convergence", "eventually", None, "exploration stopped at --max-states")
        for prop in sometimes:
            res.verdicts[prop.name] = self.sometimes_verdict(prop, sometimes_seen.get(prop.name, -1), res.complete)
        res.seconds = time.perf_counter() - t0
        res.cpu_seconds = time.process_time() - c0
        res.peak_memory = peak_bytes()
        res.memory_per_state = (res.peak_memory - rss0) / res.states if res.states else None
        return res

    # ---------------------------------------------------------------------------------------------
    def sometimes_verdict(self, prop: Any, node: int, complete: bool) -> Verdict:
        """A SOMETIMES property: held with the path to the first state ``node`` where it holds (-1: none)."""
        if node >= 0:
            return Verdict(prop.name, prop.kind.value, True, "", self.path_to(node))
        if complete:
            return Verdict(prop.name, prop.kind.value, False, "never reached: the model may be vacuous")
        return Verdict(prop.name, prop.kind.value, None, "not reached before --max-states")

    def path_to(self, nid: int) -> list[Step]:
        steps = []
        while nid >= 0:
            par, act = self._parent[nid]
            steps.append(Step(act, self._states[nid]))
            nid = par
        steps.reverse()
        return steps

    def convergence(self) -> tuple[Verdict, int | None]:
        states, fair, conv = self._states, self._fair, self._converged
        name = "convergence"
        # Deadlocks and convergence that does not last, in BFS order (so the first is the shallowest).
        for nid in range(len(states)):
            if conv[nid]:
                for act, tid in fair[nid]:
                    if not conv[tid]:
                        trace = self.path_to(nid) + [Step(act, states[tid])]
                        return Verdict(name, "eventually", False, "a converged group leaves convergence without any perturbation", trace), None
            elif not fair[nid]:
                return Verdict(name, "eventually", False, "deadlock: not converged, and no protocol step is enabled", self.path_to(nid)), None
        g = nx.DiGraph()
        g.add_nodes_from(n for n in range(len(states)) if not conv[n])
        g.add_edges_from(
            (nid, tid) for nid in range(len(states)) if not conv[nid] for _act, tid in fair[nid] if not conv[tid]
        )
        cyclic = (
            comp for comp in nx.strongly_connected_components(g)
            if len(comp) > 1 or g.has_edge(next(iter(comp)), next(iter(comp)))
        )
        verdict = self.judge_cycles(cyclic)
        if verdict is not None:
            return verdict, None
        # Longest path to convergence over the DAG of protocol steps.
        dist = [0] * len(states)
        for v in reversed(list(nx.topological_sort(g))):
            best = 0
            for _act, tid in fair[v]:
                d = 0 if conv[tid] else dist[tid]
                if d + 1 > best:
                    best = d + 1
            dist[v] = best
        bound = max(dist) if dist else 0
        return Verdict(name, "eventually", True, f"every run converges within {bound} protocol steps of its last perturbation"), bound

    def judge_cycles(self, comps: Any) -> Verdict | None:
        """Convergence given the cyclic components of non-converged states (``None`` if there are none):
        a livelock for the first that a weakly fair run can follow forever, else "holds, no bound"."""
        cyclic = False
        for comp in comps:
            cyclic = True
            found = self._fair_cycle_concrete(comp) if self.proto.symmetric else self._fair_cycle_here(comp)
            if found is not None:
                trace, start, size = found
                return Verdict(
                    "convergence", "eventually", False,
                    f"livelock: {size} non-converged states form a cycle that a weakly fair run can follow forever",
                    self._replay(trace), loop_start=start,
                )
        if cyclic:
            return Verdict("convergence", "eventually", True, "holds under weak fairness (unfair cycles exist: no step bound)")
        return None

    def _replay(self, trace: list[Step]) -> list[Step]:
        """Re-run a trace's actions from its first state, so that every state shown is the real one.

        Stored states are equal up to a shift of generations; replaying makes the generations of a
        lasso's loop keep growing, as they do in the run it stands for.
        """
        s = trace[0].state
        out = [trace[0]]
        for st in trace[1:]:
            s = self.proto.step(s, st.action)
            out.append(Step(st.action, s))
        return out

    @staticmethod
    def _is_fair(comp: set[int], fair: list[list[tuple[Any, int]]]) -> bool:
        """Weak fairness: every fair action instance is taken inside ``comp`` or disabled somewhere in it.

        Action instances are compared by their labels, so every state of ``comp`` must use the same
        member labels: true of concrete states, not of states stored up to symmetry (see below).
        """
        taken = set()
        for v in comp:
            for act, tid in fair[v]:
                if tid in comp:
                    taken.add(act)
        enabled_everywhere = None
        for v in comp:
            here = {act for act, _t in fair[v]}
            enabled_everywhere = here if enabled_everywhere is None else enabled_everywhere & here
        return not (enabled_everywhere or set()) - taken

    def _fair_cycle_here(self, comp: set[int]) -> tuple[list[Step], int, int] | None:
        if not self._is_fair(comp, self._fair):
            return None
        entry = min(comp)
        trace = self.path_to(entry)
        start = len(trace) - 1
        return trace + self._cycle_through(entry, comp, self._states, self._fair), start, len(comp)

    def _fair_cycle_concrete(self, comp: set[int]) -> tuple[list[Step], int, int] | None:
        """Decide fairness of a cycle of states stored up to symmetry by unfolding it concretely.

        Each stored state carries its own member labels, so "SessionExpired of member 0" in two
        stored states may name two different processes, and the label test above would be wrong.
        A concrete fair cycle lies in the orbits of one such component, and some renaming of it is
        reachable from any concrete state of the component; so explore, with labels kept (only
        generations shifted), everything reachable by protocol steps inside the component's orbits,
        and test the concrete components exactly.
        """
        proto = self.proto
        keys = {proto.key(self._states[v]) for v in comp}
        entry = min(comp)
        start_state = self._states[entry]
        index: dict[Any, int] = {proto.exact_key(start_state): 0}
        states = [start_state]
        parent: list[tuple[int, Any]] = [(-1, None)]
        fair: list[list[tuple[Any, int]]] = [[]]
        q = deque([0])
        while q:
            v = q.popleft()
            for act, t in proto.successors(states[v]):
                if not act.fair:
                    continue
                if proto.key(t) not in keys:
                    fair[v].append((act, -1))  # enabled here, but leads out of the component
                    continue
                k = proto.exact_key(t)
                tid = index.get(k)
                if tid is None:
                    tid = index[k] = len(states)
                    states.append(t)
                    parent.append((v, act))
                    fair.append([])
                    q.append(tid)
                fair[v].append((act, tid))
        g = nx.DiGraph()
        g.add_nodes_from(range(len(states)))
        g.add_edges_from((v, t) for v in range(len(states)) for _a, t in fair[v] if t >= 0)
        for sub in nx.strongly_connected_components(g):
            if len(sub) == 1:
                (v,) = sub
                if not g.has_edge(v, v):
                    continue
            if self._is_fair(sub, fair):
                node = min(sub)
                inner = []
                w = node
                while w > 0:
                    pv, pa = parent[w]
                    inner.append(Step(pa, states[w]))
                    w = pv
                trace = self.path_to(entry) + inner[::-1]
                start = len(trace) - 1
                return trace + self._cycle_through(node, sub, states, fair), start, len(sub)
        return None

    @staticmethod
    def _cycle_through(start: int, comp: set[int], states: list[Any], fair: list[list[tuple[Any, int]]]) -> list[Step]:
        """A shortest cycle from ``start`` back to itself inside ``comp``."""
        prev: dict[int, tuple[int, Any]] = {}
        q = deque([start])
        seen = {start}
        while q:
            v = q.popleft()
            for act, t in fair[v]:
                if t not in comp:
                    continue
                if t == start:
                    steps = [Step(act, states[t])]
                    while v != start:
                        pv, pa = prev[v]
                        steps.append(Step(pa, states[v]))
                        v = pv
                    steps.reverse()
                    return steps
                if t not in seen:
                    seen.add(t)
                    prev[t] = (v, act)
                    q.append(t)
        return []

    def symmetry_factor(self, sample: int = 20000) -> tuple[float | None, bool]:
        """Concrete states per stored state (exact up to ``sample`` states, else a deterministic sample)."""
        proto = self.proto
        if not proto.symmetric:
            return 1.0, True
        n = len(self._states)
        if n == 0:
            return None, True
        idx = range(n) if n <= sample else range(0, n, max(1, n // sample))
        total = 0
        count = 0
        for i in idx:
            total += proto.orbit_size(self._states[i])  # the classic shape's, or the family's own
            count += 1
        return total / count, n <= sample
