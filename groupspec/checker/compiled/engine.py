"""The compiled explorer: the same search as ``groupspec.checker.explorer.Explorer``, on rows of integers.

Theory of operation
-------------------
``groupspec.checker.explorer.Explorer`` is the reference checker: it runs the model's own Python
(``ClassicProtocol.successors``, keys, properties) on frozen dataclasses, about ten thousand states a
second. This explorer runs the *same algorithm* on the compiled encoding of the classic protocol
(``groupspec.checker.compiled.kernel``): breadth-first search with the same successor order and the same keys,
so it stores the same states in the same order and takes the same edges; safety on every state and
step; convergence from the graph of protocol steps (deadlocks, convergence that does not last, the
longest path to convergence in compiled code, strongly connected components with scipy where there are
cycles). States are kept in the lean store of ``groupspec.checker.compiled.lean`` (fingerprints, parent
pointers, compact edges; rows rebuilt by replay when a report needs them).

Everything a person reads is produced by the model's own code: counterexample states are decoded back
into model ``State`` values, every step of a reported trace is replayed with ``proto.step`` (so a wrong
compiled step cannot produce a wrong trace: it fails the replay), the explanation of a violation is the
model property's own sentence (and the model must agree that it is violated), and a cycle of
non-converged states is judged for weak fairness by the reference explorer's own methods on decoded
states. The drift tests (``tests/test_compiled.py``) compare the two explorers state by state.

It covers every variant written on ``groupspec.model.classic`` (eager, static, cooperative,
connect-delayed, coordinator-assigns and the broken ones); ``zookeeper`` is a different machine and
runs on the reference explorer.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from groupspec.checker.explorer import Explorer, Result, Step, Verdict
from groupspec.checker.memory import peak_bytes, reset_peak, rss_bytes
from groupspec.model.spec import Spec

from . import families as FAM
from . import kernel as K
from . import lean as L
from . import parallel as PAR
from . import search as S
from .layout import action_of, decode, encode, width
from .plugins import classic_kernel_covers, family_of

CHUNK = 20000  # states expanded between two progress reports
GROWTH = 1.25  # per-state and per-edge arrays grow by a quarter (in place)
TABLE_LOAD = 0.75  # the fingerprint index is rebuilt larger when this full ...
TABLE_FILL = 0.5  # ... to this fill
FRONTIER_BUDGET = 128 << 20  # bytes of frontier rows kept in memory; the rest waits on disk (written once, read once)
SEGMENT_ROWS = 1 << 15  # frontier rows per segment
# bytes held per stored state: fingerprint 8 + 4, parent 4, action 1, flags 1, out-degree 1, and its
# share of the index (4 bytes a slot at a fill between TABLE_FILL and TABLE_LOAD: 4 / 0.6 on average);
# per protocol-step edge: target 4, action 1
STORE_BYTES_PER_STATE = 8 + 4 + 4 + 1 + 1 + 1 + 4 / 0.6
STORE_BYTES_PER_EDGE = 4 + 1


def parameters(proto: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's parameter vector, topic masks and topic block boundaries for ``proto``."""
    cfg = proto.cfg
    P = np.zeros(K.P_LEN, dtype=np.int64)
    P[K.P_N] = cfg.members
    P[K.P_K] = cfg.partitions
    P[K.P_T] = cfg.topics
    P[K.P_COOP] = proto.rebalance == "cooperative"
    P[K.P_STATIC] = proto.static_members
    P[K.P_COORD] = proto.coordinator_assigns
    P[K.P_DELAYED] = proto.delayed
    P[K.P_REVOKE] = proto.revoke_before_join
    P[K.P_WITHHOLD] = proto.withhold_transfers
    P[K.P_FENCE] = proto.fence_commits
    P[K.P_ASSIGNOR] = K.ASSIGNOR_IDS[proto.assignor_name]
    P[K.P_FAULTS] = sum(K.FAULT_BITS[f] for f in cfg.faults)
    P[K.P_ALLTOPICS] = cfg.all_topics
    P[K.P_SYM] = proto.symmetric
    P[K.P_INITIAL] = proto.initial_members()
    P[K.P_DEAD] = proto.canon.dead  # a classic page's Canonicalizer (symmetry.forget_dead_fields sets it)
    TM = np.array(cfg.topic_masks, dtype=np.int64)
    blocks = [0]
    for t in range(cfg.topics):
        blocks.append(blocks[-1] + sum(1 for p in range(cfg.partitions) if cfg.topic_of[p] == t))
    return P, TM, np.array(blocks, dtype=np.int64)


class NoTargets:
    """The target table of a family that has none (the classic kernel computes its assignments itself)."""

    def __init__(self) -> None:
        self.tk = np.full((1, 1), -1, np.int64)
        self.tv = np.zeros((1, 1), np.int64)
        self.tq = np.zeros(1, np.int64)
        self.shared = False

    def args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.tk, self.tv, self.tq

    def fill(self, tq: np.ndarray | None = None) -> None:
        raise AssertionError("the classic kernel never asks for a target")


class Kernel:
    """The compiled functions of the classic family bound to one protocol object (for the explorer and the drift
    tests); what the one search reads of any family's kernel: ``fam``, ``n``, ``F`` (row width), ``P``, ``TM``,
    ``blocks``, ``plan``, ``words``, ``maxs``, ``targets``, ``encode``, ``decode`` and ``action_of``."""

    fam = FAM.CLASSIC
    action_of = staticmethod(action_of)

    def __init__(self, proto: Any) -> None:
        if not classic_kernel_covers(proto):
            raise ValueError(f"the compiled engine does not cover {proto.name!r} with assignor {proto.assignor_name!r}")
        self.proto = proto
        self.n = proto.cfg.members
        self.P, self.TM, self.blocks = parameters(proto)
        self.widths = K.key_widths(proto.cfg.members, proto.cfg.partitions, proto.cfg.topics)
        self.offsets = K.key_offsets()
        self.words = K.key_words(self.widths)
        self.plan = L.pack_plan(self.widths, self.offsets)
        self.F = width(self.n)
        self.maxs = self.n * K.MAX_SUCC_PER_SLOT + 3  # families.max_successors
        self.targets = NoTargets()

    def encode(self, s: Any) -> np.ndarray:
        return encode(s, self.n)

    def decode(self, row: np.ndarray) -> Any:
        return decode(row, self.n)

    def successors(self, s: Any) -> list[tuple[Any, Any]]:
        maxs = self.n * K.MAX_SUCC_PER_SLOT + 3
        out = np.zeros((maxs, self.F), np.int64)
        acts = np.zeros(maxs, np.int64)
        ns = K.successors(self.P, self.TM, encode(s, self.n), out, acts)
        return [(action_of(int(acts[j])), decode(out[j], self.n)) for j in range(ns)]

    def key(self, s: Any) -> bytes:
        """The packed key the search fingerprints (``families.key_words``: ``classic_words`` where it applies)."""
        rows, order, cols, perm, kv, words = FAM.key_scratch(self.fam, self.P, self.plan, self.words)
        nw = FAM.key_words(self.fam, self.P, self.blocks, self.plan, encode(s, self.n), rows, order, cols, perm, kv,
                           words)
        return bytes(words[:nw].tobytes())

    def converged(self, s: Any) -> bool:
        return bool(K.converged(self.P, self.TM, encode(s, self.n)))

    def exclusive_ownership_ok(self, s: Any) -> bool:
        return bool(K.exclusive_ownership_ok(self.P, encode(s, self.n)))

    def commit_fencing_ok(self, s: Any) -> bool:
        return bool(K.commit_fencing_ok(self.P, encode(s, self.n)))

    def generation_ok(self, s: Any, t: Any) -> bool:
        return bool(K.generation_ok(self.P, encode(s, self.n), encode(t, self.n)))


# -- lazy views, so that the reference explorer's methods read the compiled search's arrays -------------
class _States:
    """State ``i``, rebuilt from the parent chain (``search.reconstruct``) and decoded into a model state."""

    def __init__(self, kn: Any, roots: np.ndarray, parent: np.ndarray, pact: np.ndarray) -> None:
        self.kn, self.roots, self.parent, self.pact = kn, roots, parent, pact
        self._row = np.zeros(roots.shape[1], np.int64)
        self._cache: dict[int, Any] = {}

    def __len__(self) -> int:
        return int(self.parent.shape[0])

    def row(self, i: int) -> np.ndarray:
        if not 0 <= i < len(self):
            raise IndexError(i)
        kn = self.kn
        S.reconstruct(kn.fam, kn.P, kn.TM, self.roots, self.parent, self.pact, i, self._row, *kn.targets.args())
        return self._row.copy()

    def rows(self) -> np.ndarray:
        """Every state's row, in id order (``int16``, as the search stores rows): one compiled step per state,
        where :meth:`row` replays the whole parent chain of one."""
        kn = self.kn
        out = np.empty((len(self), self.roots.shape[1]), np.int16)
        S.reconstruct_all(kn.fam, kn.P, kn.TM, self.roots, self.parent, self.pact, out, *kn.targets.args())
        return out

    def __getitem__(self, i: int) -> Any:
        s = self._cache.get(i)
        if s is None:
            s = self.kn.decode(self.row(i))
            if len(self._cache) > 100_000:
                self._cache.clear()
            self._cache[i] = s
        return s


class _Parents:
    """State ``i``'s parent and the action from it (``None`` for a root), decoded by ``action_of``."""

    def __init__(self, parent: np.ndarray, pact: np.ndarray, action_of: Callable[[int], Any]) -> None:
        self.parent, self.pact, self.action_of = parent, pact, action_of

    def __getitem__(self, i: int) -> tuple[int, Any]:
        p = int(self.parent[i])
        return p, (self.action_of(int(self.pact[i])) if p >= 0 else None)


class _Fair:
    """State ``v``'s protocol steps (the edges the graph part reads): ``(action, target)`` pairs."""

    def __init__(self, offs: np.ndarray, edst: np.ndarray, eact: np.ndarray, action_of: Callable[[int], Any]) -> None:
        self.offs, self.edst, self.eact, self.action_of = offs, edst, eact, action_of

    def __getitem__(self, v: int) -> list[tuple[Any, int]]:
        lo, hi = int(self.offs[v]), int(self.offs[v + 1])
        return [(self.action_of(int(self.eact[e])), int(self.edst[e])) for e in range(lo, hi)]


def make_grower(st: "_Store", ctl: np.ndarray, maxs: int, shared: bool = False) -> Callable[[], None]:
    """The driver's answer to ``lean.GROW``: enlarge the store's arrays so that ``maxs`` more states (and their
    edges) fit, and rebuild the hash table when it would pass its load factor. ``shared``: worker threads read
    the index and the fingerprints while the driver grows them (the parallel search): the fingerprints are then
    copied into a new array, never resized in place (which may move them under a reader); a rebuilt index is a
    new array anyway."""

    def on_grow() -> None:
        count = int(ctl[K.CT_COUNT])
        if count + maxs > st.parent.shape[0]:
            size = int(st.parent.shape[0] * GROWTH) + maxs
            for name in ("parent", "pact", "flags", "outdeg"):
                setattr(st, name, L.grow(getattr(st, name), size))
            if not shared:
                st.fpq = L.grow(st.fpq, size)
            elif size > st.fpq.shape[0]:
                # a copy: twice the size, so that the copies add up to about twice the final array, not five
                # times (a quarter's growth each); left unwritten past ``count`` (nothing reads a record before
                # the merge writes it), so the pages not yet used are not touched
                fpq = np.empty((max(size, 2 * st.fpq.shape[0]), 3), np.uint32)
                fpq[:count] = st.fpq[:count]
                st.fpq = fpq
        if int(ctl[K.CT_FAIR]) + maxs > st.edst.shape[0]:
            size = int(st.edst.shape[0] * GROWTH) + maxs
            st.edst, st.eact = L.grow(st.edst, size), L.grow(st.eact, size)
        if st.table is None or count + maxs > TABLE_LOAD * st.table.shape[0]:
            size = int((count + maxs) / TABLE_FILL) + 1
            st.table = None
            st.table = np.empty(size, np.int32)
            L.rebuild(st.table, st.fpq, count)

    return on_grow


def drive(chunk: Callable[[np.ndarray, np.ndarray], int], F: int, front: L.Frontier, ctl: np.ndarray,
          outseg: np.ndarray, on_grow: Callable[[], None], report: Callable[[], None] | None,
          answers: dict[int, Callable[[], None]] | None = None) -> bool:
    """The one-worker search loop around a compiled search ``chunk(inseg, outseg) -> status``: grow the store,
    move full output segments to the frontier, take the next input segment, report progress. ``answers``: what
    to do for an encoding's own statuses before calling it again. Whether the search completed."""
    inseg = np.zeros((0, F), np.int16)
    while True:
        status = chunk(inseg, outseg)
        if answers and status in answers:
            answers[status]()
            continue
        if status == L.GROW:
            on_grow()
            continue
        if status == L.OUT_FULL:
            outseg = front.hand_over(outseg, ctl)
            continue
        if status == L.IN_EMPTY:
            nxt = front.pop()
            if nxt is None and ctl[L.L_OLEN] > 0:  # expand what the output segment holds so far
                outseg = front.hand_over(outseg, ctl)
                nxt = front.pop()
            if nxt is None:
                return True
            inseg, length = nxt
            ctl[L.L_IPOS], ctl[L.L_ILEN] = 0, length
            continue
        if report is not None:
            report()
        if status == L.CHUNK_DONE:
            continue
        return False  # LIMIT


class _Store:
    """The search's growing arrays (the lean store), enlarged in place by the driver."""

    def __init__(self, cap: int) -> None:
        self.parent = np.zeros(cap, np.int32)
        self.pact = np.zeros(cap, np.uint8)
        self.flags = np.zeros(cap, np.uint8)
        self.outdeg = np.zeros(cap, np.uint8)
        self.fpq = np.zeros((cap, 3), np.uint32)  # fingerprint: h's low and high halves, q
        self.table: np.ndarray | None = np.full(2 * cap, -1, np.int32)
        self.edst = np.zeros(4 * cap, np.int32)
        self.eact = np.zeros(4 * cap, np.uint8)


def kernel_for(proto: Spec) -> Any:
    """The family kernel bound to ``proto`` (ValueError where no compiled encoding covers it)."""
    fam = family_of(proto)
    if fam is None:
        raise ValueError(f"the compiled engine does not cover {proto.name!r} with assignor {proto.assignor_name!r}")
    if fam == FAM.CLASSIC:
        return Kernel(proto)
    from groupspec.model.consumer import Consumer

    from .consumer_engine import ConsumerKernel  # the KIP-848 family and the migration

    if not isinstance(proto, Consumer):  # both families' pages derive from the KIP-848 one
        raise ValueError(f"the compiled {proto.compiled_encoding()} encoding covers KIP-848 pages only, not {proto.name!r}")
    return ConsumerKernel(proto)


class CompiledExplorer(Explorer):
    """``Explorer`` with the search and the graph algorithms on the compiled encoding and the lean store: one
    driver for every family (its kernel: :func:`kernel_for`), on one thread or ``workers`` (``parallel.py``)."""

    engine = "compiled"

    def __init__(self, proto: Any, max_states: int | None = None, progress: Callable[[int, int], None] | None = None,
                 frontier_budget: int = FRONTIER_BUDGET, segment_rows: int = SEGMENT_ROWS, initial_capacity: int = 1 << 12,
                 workers: int = 1):
        super().__init__(proto, max_states=max_states, progress=progress)
        if workers < 1:
            raise ValueError(f"workers must be at least 1 (got {workers})")
        self.workers = workers
        self.serial_cpu_seconds: float | None = None  # CPU spent merging, on whichever thread (workers > 1)
        self.kernel = kernel_for(proto)
        self.action_of = self.kernel.action_of  # an encoding's action code -> the model's action
        self.frontier_budget, self.segment_rows, self.initial_capacity = frontier_budget, segment_rows, initial_capacity

    def run(self) -> Result:
        proto, kn = self.proto, self.kernel
        res = Result(protocol=proto.name, assignor=proto.assignor_name, config=proto.cfg, symmetric=proto.symmetric)
        reset_peak()
        rss0 = rss_bytes()
        t0 = time.perf_counter()
        c0 = time.process_time()
        F = kn.F
        st = _Store(self.initial_capacity)
        ctl = L.new_ctl()
        front = L.Frontier(F, self.segment_rows, self.frontier_budget)
        roots = []
        outseg = front.new_segment()
        tg = kn.targets
        tg.shared = self.workers > 1  # filled while worker threads read it: copy on write

        on_grow = make_grower(st, ctl, kn.maxs, shared=self.workers > 1)

        def report() -> None:
            assert self.progress is not None
            self.progress(int(ctl[K.CT_COUNT]), int(ctl[K.CT_COUNT] - ctl[K.CT_HEAD]))

        try:
            for s in proto.init_states():
                row = kn.encode(s)
                while True:
                    r = S.insert_initial(kn.fam, kn.P, kn.TM, kn.blocks, kn.plan, kn.words, row, st.table, st.fpq,
                                         st.parent, st.pact, st.flags, outseg, ctl, *tg.args())
                    if r != S.NEED_TARGET:
                        break
                    tg.fill()
                if r == 1:
                    roots.append(row)
            outseg = front.hand_over(outseg, ctl)
            max_states = self.max_states or 0
            if self.progress is not None:  # the count shows from the start
                report()
            if self.workers > 1:
                outseg, res.complete, self.serial_cpu_seconds = PAR.run_search(
                    kn, st, front, ctl, outseg, max_states, self.workers, on_grow,
                    report if self.progress is not None else None, CHUNK, TABLE_LOAD)
            else:
                res.complete = self._search_one(kn, st, front, ctl, outseg, max_states, on_grow,
                                                report if self.progress is not None else None)
        finally:
            self.frontier_spilled = front.spilled
            self.frontier_peak_bytes = front.peak_bytes
            front.close()
        del outseg
        st.table = None
        parent, pact, flags, outdeg, fpq, edst, eact = (st.parent, st.pact, st.flags, st.outdeg, st.fpq, st.edst,
                                                        st.eact)
        del st
        count = int(ctl[K.CT_COUNT])
        nfair = int(ctl[K.CT_FAIR])
        self.search_seconds = time.perf_counter() - t0
        self.search_cpu_seconds = time.process_time() - c0
        # Keep only what the graph part and the reports need, trimmed to size.
        parent, pact, flags, outdeg = (L.grow(a, count) for a in (parent, pact, flags, outdeg))
        del fpq
        edst, eact = L.grow(edst, nfair), L.grow(eact, nfair)
        self._keep_graph(count, flags, outdeg, edst, eact, parent, pact, np.array(roots, dtype=np.int64).reshape(len(roots), F), ctl)
        del outdeg
        res.states = count
        res.edges = int(ctl[K.CT_EDGES])
        self._verdicts(res, ctl)
        self._finish(res, t0, c0, rss0, count, nfair)
        return res

    @staticmethod
    def _search_one(kn: Any, st: "_Store", front: L.Frontier, ctl: np.ndarray, outseg: np.ndarray, max_states: int,
                    on_grow: Callable[[], None], report: Callable[[], None] | None) -> bool:
        """The one-worker search (``search.search`` in a loop, the target table filled when it asks); whether it
        completed."""
        tg = kn.targets

        def chunk(inseg: np.ndarray, out: np.ndarray) -> int:
            return int(S.search(kn.fam, kn.P, kn.TM, kn.blocks, kn.plan, kn.words, inseg, out, st.table, st.fpq,
                            st.parent, st.pact, st.flags, st.outdeg, st.edst, st.eact, ctl, max_states, CHUNK,
                            TABLE_LOAD, *tg.args()))

        return drive(chunk, kn.F, front, ctl, outseg, on_grow, report, {S.NEED_TARGET: tg.fill})

    def _states_view(self, roots: np.ndarray, parent: np.ndarray, pact: np.ndarray) -> Any:
        return _States(self.kernel, roots, parent, pact)

    def _keep_graph(self, count: int, flags: np.ndarray, outdeg: np.ndarray, edst: np.ndarray, eact: np.ndarray,
                    parent: np.ndarray, pact: np.ndarray, roots: np.ndarray, ctl: np.ndarray) -> None:
        """Keep what the graph part and the reports need: converged flags, edge offsets, lazy views."""
        self.flags, self.edst, self.eact = flags, edst, eact
        self.conv = (flags & 1).astype(np.bool_)
        self.offs = np.zeros(count + 1, np.int64)
        np.cumsum(outdeg, out=self.offs[1:])
        self.roots = roots
        self._states = self._states_view(roots, parent, pact)
        self._parent = _Parents(parent, pact, self.action_of)
        self._fair = _Fair(self.offs, self.edst, self.eact, self.action_of)
        self._converged = self.conv
        self._first_dead, self._first_leave = int(ctl[L.L_DEAD]), int(ctl[L.L_LEAVE])

    def _verdicts(self, res: Result, ctl: np.ndarray) -> None:
        """Every property's verdict; a violation's trace is replayed and explained by the model's own code."""
        proto = self.proto
        firsts = {"exclusive_ownership": int(ctl[K.CT_EXCL]), "commit_fencing": int(ctl[K.CT_FENCE])}
        for prop in proto.safety_properties():  # a property no kernel checks: KeyError, never a silent pass
            node = firsts[prop.name]
            if node < 0:
                res.verdicts[prop.name] = Verdict(prop.name, prop.kind.value, True)
                continue
            trace = self.path_to(node)
            why = prop.check(proto, trace[-1].state)
            if why is None:
                raise AssertionError(f"compiled engine drift: the model does not find {prop.name} violated in state {node}")
            res.verdicts[prop.name] = Verdict(prop.name, prop.kind.value, False, why, trace)
        for prop in proto.action_properties():
            node = int(ctl[K.CT_GEN])
            if node < 0:
                res.verdicts[prop.name] = Verdict(prop.name, prop.kind.value, True)
                continue
            act = self.action_of(int(ctl[K.CT_GENACT]))
            trace = self.path_to(node)
            nxt = proto.step(trace[-1].state, act)
            why = prop.check(proto, trace[-1].state, nxt)
            if why is None:
                raise AssertionError(f"compiled engine drift: the model does not find {prop.name} violated after state {node}")
            trace.append(Step(act, nxt))
            res.verdicts[prop.name] = Verdict(prop.name, prop.kind.value, False, why, trace)
        if res.complete:
            res.verdicts["convergence"], res.convergence_bound = self.convergence()
        else:
            res.verdicts["convergence"] = Verdict("convergence", "eventually", None, "exploration stopped at --max-states")
        for prop in proto.sometimes_properties():
            res.verdicts[prop.name] = self.sometimes_verdict(prop, int(ctl[K.CT_SOMETIMES]), res.complete)

    def _finish(self, res: Result, t0: float, c0: float, rss0: int, count: int, nfair: int) -> None:
        """The run's time, CPU and memory figures."""
        res.seconds = time.perf_counter() - t0
        res.cpu_seconds = time.process_time() - c0
        res.peak_memory = peak_bytes()
        res.memory_per_state = (res.peak_memory - rss0) / count if count else None
        res.frontier_spilled = self.frontier_spilled
        res.store_bytes_per_state = STORE_BYTES_PER_STATE + STORE_BYTES_PER_EDGE * nfair / count if count else None
        res.collision_probability = L.collision_probability(count)
        res.search_cpu_seconds = self.search_cpu_seconds
        res.serial_cpu_seconds = self.serial_cpu_seconds

    def path_to(self, nid: int) -> list[Step]:
        """The stored path, replayed with the model's own ``step`` from the initial state."""
        steps = super().path_to(nid)
        s = steps[0].state
        out = [steps[0]]
        for st in steps[1:]:
            s = self.proto.step(s, st.action)
            if s != st.state:
                raise AssertionError(f"compiled engine drift: replaying {st.action!r} does not give the stored state")
            out.append(Step(st.action, st.state))
        return out

    def convergence(self) -> tuple[Verdict, int | None]:
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import connected_components

        name = "convergence"
        count = len(self.conv)
        conv = self.conv
        # Deadlocks, and convergence that does not last: the first state (in BFS order) with either,
        # both found during the search.
        first_leave = self._first_leave if self._first_leave >= 0 else count
        first_dead = self._first_dead if self._first_dead >= 0 else count
        if first_leave < first_dead:
            nid = first_leave
            for act, tid in self._fair[nid]:
                if not conv[tid]:
                    trace = self.path_to(nid) + [Step(act, self._states[tid])]
                    return Verdict(name, "eventually", False, "a converged group leaves convergence without any perturbation", trace), None
        if first_dead < count:
            return Verdict(name, "eventually", False, "deadlock: not converged, and no protocol step is enabled", self.path_to(first_dead)), None
        bound, _ordered, _nonconv, removed = L.longest_to_convergence(count, self.offs, self.edst, self.flags)
        if bound >= 0:
            bound = int(bound)
            return Verdict(name, "eventually", True, f"every run converges within {bound} protocol steps of its last perturbation"), bound
        # Cycles among non-converged states: they all lie among the states Kahn's order could not remove.
        s_in, d_in = L.cyclic_subgraph(count, self.offs, self.edst, self.flags, removed)
        del removed
        nodes = np.unique(np.concatenate([s_in, d_in]))
        graph = csr_matrix((np.ones(len(s_in), np.int8), (np.searchsorted(nodes, s_in), np.searchsorted(nodes, d_in))),
                           shape=(len(nodes), len(nodes)))
        _nc, labels = connected_components(graph, directed=True, connection="strong")
        sizes = np.bincount(labels)
        loops = s_in == d_in
        cyclic_labels = set(np.flatnonzero(sizes > 1).tolist()) | set(labels[np.searchsorted(nodes, s_in[loops])].tolist())
        order = np.argsort(labels, kind="stable")
        starts = np.searchsorted(labels[order], np.arange(len(sizes) + 1))
        comps = sorted((nodes[order[starts[lab]:starts[lab + 1]]] for lab in cyclic_labels), key=lambda members: int(members.min()))
        verdict = self.judge_cycles(set(int(v) for v in members) for members in comps)
        assert verdict is not None
        return verdict, None
