"""The compiled explorer: the same search as ``groupspec.checker.explorer.Explorer``, on rows of integers.

Theory of operation
-------------------
``groupspec.checker.explorer.Explorer`` is the reference checker: it runs the model's own Python
(``ClassicProtocol.successors``, keys, properties) on frozen dataclasses, about ten thousand states a
second. This explorer runs the *same algorithm* on the compiled encoding of the classic protocol
(``groupspec.checker.compiled.kernel``): breadth-first search with the same successor order and the same keys,
so it stores the same states in the same order and takes the same edges; safety on every state and
step; convergence from the graph of protocol steps (deadlocks, convergence that does not last, strongly
connected components with scipy, the longest path to convergence in compiled code).

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
from groupspec.model.classic import ClassicProtocol
from groupspec.model.properties import ACTIONS, SAFETY, SOMETIMES

from . import kernel as K
from .layout import action_of, decode, encode, width

CHUNK = 20000  # states expanded between two progress reports


def supports(proto: Any) -> bool:
    """Whether the compiled encoding covers this protocol object (a classic variant, a known assignor)."""
    return isinstance(proto, ClassicProtocol) and proto.assignor_name in K.ASSIGNOR_IDS and proto.cfg.members <= 7


def parameters(proto: ClassicProtocol) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    TM = np.array(cfg.topic_masks, dtype=np.int64)
    blocks = [0]
    for t in range(cfg.topics):
        blocks.append(blocks[-1] + sum(1 for p in range(cfg.partitions) if cfg.topic_of[p] == t))
    return P, TM, np.array(blocks, dtype=np.int64)


class Kernel:
    """The compiled functions bound to one protocol object (for the explorer and the drift tests)."""

    def __init__(self, proto: ClassicProtocol) -> None:
        if not supports(proto):
            raise ValueError(f"the compiled engine does not cover {proto.name!r} with assignor {proto.assignor_name!r}")
        self.proto = proto
        self.n = proto.cfg.members
        self.P, self.TM, self.blocks = parameters(proto)
        self.widths = K.key_widths(proto.cfg.members, proto.cfg.partitions, proto.cfg.topics)
        self.offsets = K.key_offsets()
        self.words = K.key_words(self.widths)
        self.F = width(self.n)

    def successors(self, s: Any) -> list[tuple[Any, Any]]:
        maxs = self.n * K.MAX_SUCC_PER_SLOT + 3
        out = np.zeros((maxs, self.F), np.int64)
        acts = np.zeros(maxs, np.int64)
        ns = K.successors(self.P, self.TM, encode(s, self.n), out, acts)
        return [(action_of(int(acts[j])), decode(out[j], self.n)) for j in range(ns)]

    def key(self, s: Any) -> bytes:
        n = self.n
        kv = np.zeros(K.KH + n * K.ROWLEN, np.int64)
        words = np.zeros(self.words, np.uint64)
        K.key_vector(self.P, self.blocks, encode(s, n), np.zeros((n, K.ROWLEN), np.int64), np.zeros(n, np.int64),
                     np.zeros(self.proto.cfg.partitions, np.int64), np.zeros(self.proto.cfg.partitions, np.int64), kv)
        K.pack(kv, self.widths, self.offsets, words)
        return words.tobytes()

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
    def __init__(self, store: np.ndarray, n: int) -> None:
        self.store, self.n = store, n

    def __len__(self) -> int:
        return self.store.shape[0]

    def __getitem__(self, i: int) -> Any:
        return decode(self.store[i], self.n)


class _Parents:
    def __init__(self, parent: np.ndarray, pact: np.ndarray) -> None:
        self.parent, self.pact = parent, pact

    def __getitem__(self, i: int) -> tuple[int, Any]:
        a = int(self.pact[i])
        return int(self.parent[i]), (action_of(a) if a >= 0 else None)


class _Fair:
    def __init__(self, offs: np.ndarray, edst: np.ndarray, eact: np.ndarray) -> None:
        self.offs, self.edst, self.eact = offs, edst, eact

    def __getitem__(self, v: int) -> list[tuple[Any, int]]:
        lo, hi = int(self.offs[v]), int(self.offs[v + 1])
        return [(action_of(int(self.eact[e])), int(self.edst[e])) for e in range(lo, hi)]


def _grow(a: np.ndarray, size: int, fill: int = 0) -> np.ndarray:
    b = np.full((size,) + a.shape[1:], fill, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


class CompiledExplorer(Explorer):
    """``Explorer`` with the search and the graph algorithms on the compiled encoding."""

    engine = "compiled"

    def __init__(self, proto: Any, max_states: int | None = None, progress: Callable[[int, int], None] | None = None):
        super().__init__(proto, max_states=max_states, progress=progress)
        self.kernel = Kernel(proto)

    def run(self) -> Result:
        proto, kn = self.proto, self.kernel
        cfg = proto.cfg
        res = Result(protocol=proto.name, assignor=proto.assignor_name, config=cfg, symmetric=proto.symmetric)
        t0 = time.perf_counter()
        c0 = time.process_time()
        F, W = kn.F, kn.words
        cap, ecap, hcap = 1 << 14, 1 << 16, 1 << 15
        store = np.zeros((cap, F), np.int16)
        parent = np.zeros(cap, np.int32)
        pact = np.zeros(cap, np.int16)
        conv = np.zeros(cap, np.bool_)
        hkeys = np.zeros((hcap, W), np.uint64)
        hval = np.full(hcap, -1, np.int32)
        esrc = np.zeros(ecap, np.int32)
        edst = np.zeros(ecap, np.int32)
        eact = np.zeros(ecap, np.int16)
        ctl = np.zeros(K.CT_LEN, np.int64)
        for f in (K.CT_EXCL, K.CT_FENCE, K.CT_GEN, K.CT_SOMETIMES):
            ctl[f] = -1
        gen_next = np.zeros(F, np.int64)
        for s in proto.init_states():
            K.insert_initial(kn.P, kn.TM, kn.blocks, kn.widths, kn.offsets, encode(s, kn.n), store, parent, pact,
                             conv, hkeys, hval, ctl)
        max_states = self.max_states or 0
        while True:
            status = K.search(kn.P, kn.TM, kn.blocks, kn.widths, kn.offsets, store, parent, pact, conv, hkeys, hval,
                              esrc, edst, eact, ctl, gen_next, max_states, CHUNK)
            if status == 1:  # grow what is full
                need = int(ctl[K.CT_COUNT]) + kn.n * K.MAX_SUCC_PER_SLOT + 3
                if need > store.shape[0]:
                    size = store.shape[0] * 2
                    store, parent, pact, conv = _grow(store, size), _grow(parent, size), _grow(pact, size), _grow(conv, size)
                if int(ctl[K.CT_FAIR]) + kn.n * K.MAX_SUCC_PER_SLOT + 3 > esrc.shape[0]:
                    size = esrc.shape[0] * 2
                    esrc, edst, eact = _grow(esrc, size), _grow(edst, size), _grow(eact, size)
                if 2 * need > hval.shape[0]:
                    size = hval.shape[0] * 2
                    nk = np.zeros((size, W), np.uint64)
                    nv = np.full(size, -1, np.int32)
                    K.rehash(hkeys, hval, nk, nv)
                    hkeys, hval = nk, nv
                continue
            if self.progress is not None:
                self.progress(int(ctl[K.CT_COUNT]), int(ctl[K.CT_COUNT] - ctl[K.CT_HEAD]))
            if status == 2:
                continue
            if status == 3:
                res.complete = False
            break
        count = int(ctl[K.CT_COUNT])
        nfair = int(ctl[K.CT_FAIR])
        del hkeys, hval
        self.store = store[:count]
        self.conv = conv[:count]
        self.esrc, self.edst, self.eact = esrc[:nfair], edst[:nfair], eact[:nfair]
        self.offs = np.searchsorted(self.esrc, np.arange(count + 1), side="left").astype(np.int64)
        self._states = _States(self.store, kn.n)
        self._parent = _Parents(parent[:count], pact[:count])
        self._fair = _Fair(self.offs, self.edst, self.eact)
        self._converged = self.conv
        res.states = count
        res.edges = int(ctl[K.CT_EDGES])

        firsts = {"exclusive_ownership": int(ctl[K.CT_EXCL]), "commit_fencing": int(ctl[K.CT_FENCE])}
        for prop in SAFETY:
            node = firsts[prop.name]
            if node < 0:
                res.verdicts[prop.name] = Verdict(prop.name, prop.kind.value, True)
                continue
            trace = self.path_to(node)
            why = prop.check(proto, trace[-1].state)
            if why is None:
                raise AssertionError(f"compiled engine drift: the model does not find {prop.name} violated in state {node}")
            res.verdicts[prop.name] = Verdict(prop.name, prop.kind.value, False, why, trace)
        for prop in ACTIONS:
            node = int(ctl[K.CT_GEN])
            if node < 0:
                res.verdicts[prop.name] = Verdict(prop.name, prop.kind.value, True)
                continue
            act = action_of(int(ctl[K.CT_GENACT]))
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
        for prop in SOMETIMES:
            res.verdicts[prop.name] = self.sometimes_verdict(prop, int(ctl[K.CT_SOMETIMES]), res.complete)
        res.seconds = time.perf_counter() - t0
        res.cpu_seconds = time.process_time() - c0
        return res

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
        src, dst = self.esrc, self.edst
        nout = np.diff(self.offs)
        # Deadlocks, and convergence that does not last: the first state (in BFS order) with either.
        leaving = conv[src] & ~conv[dst]
        first_leave = int(src[leaving].min()) if leaving.any() else count
        dead = np.flatnonzero(~conv & (nout == 0))
        first_dead = int(dead[0]) if len(dead) else count
        if first_leave < first_dead:
            nid = first_leave
            for act, tid in self._fair[nid]:
                if not conv[tid]:
                    trace = self.path_to(nid) + [Step(act, self._states[tid])]
                    return Verdict(name, "eventually", False, "a converged group leaves convergence without any perturbation", trace), None
        if first_dead < count:
            return Verdict(name, "eventually", False, "deadlock: not converged, and no protocol step is enabled", self.path_to(first_dead)), None
        inner = ~conv[src] & ~conv[dst]
        s_in, d_in = src[inner], dst[inner]
        graph = csr_matrix((np.ones(len(s_in), np.int8), (s_in, d_in)), shape=(count, count))
        _nc, labels = connected_components(graph, directed=True, connection="strong")
        sizes = np.bincount(labels)
        cyclic_labels = set(np.flatnonzero(sizes > 1).tolist()) | set(labels[s_in[s_in == d_in]].tolist())
        cyclic_labels -= set(labels[conv].tolist()) if conv.any() else set()
        if cyclic_labels:
            order = np.argsort(labels, kind="stable")
            starts = np.searchsorted(labels[order], np.arange(len(sizes) + 1))
            comps = sorted(
                (order[starts[lab]:starts[lab + 1]] for lab in cyclic_labels), key=lambda members: int(members.min())
            )
            verdict = self.judge_cycles(set(int(v) for v in members) for members in comps)
            assert verdict is not None
            return verdict, None
        bound, _ordered = K.longest_to_convergence(count, self.offs, self.edst, conv)
        bound = int(bound)
        return Verdict(name, "eventually", True, f"every run converges within {bound} protocol steps of its last perturbation"), bound
