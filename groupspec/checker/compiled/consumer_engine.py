"""The compiled explorer for the KIP-848 consumer family and the migration: ``CompiledExplorer`` on
``consumer_kernel`` / ``migration_kernel``.

The same algorithm as the reference explorer and as the classic compiled engine (see ``engine.py``): the
search of ``consumer_search`` (lean's store and loop), then lean's convergence analysis, and every state a
person reads decoded back into a model state (``ConsumerState``, ``MigrationState``) and every step of a
trace replayed with the model's own ``proto.step``. The one thing the driver adds is the target table:
assignments are the model's own answers (``Consumer.compute_target``, and the migration's classic leader's
``cooperative_assignment``), computed when the search first needs them.

It covers ``consumer``, ``consumer-static`` and the broken ``consumer-*`` variants with either
server-side assignor, and the migration ``classic-to-consumer``, ``classic-to-consumer-acked`` and their
broken variants; a variant that overrides any model function the encoding mirrors is refused
(:func:`supports`) and runs on the reference explorer. The search runs on one thread.
"""
from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from groupspec.checker.explorer import Result
from groupspec.checker.memory import reset_peak, rss_bytes
from groupspec.model import actions as A
from groupspec.model.consumer import Consumer, ConsumerClient, ConsumerGroup, ConsumerState, Member, MemberState
from groupspec.model.consumer import ConsumerGroupHeartbeat, RebalanceTimeoutFence, RevokePartitions
from groupspec.model.core import GroupStatus, Proc
from groupspec.model.migration import ClassicToConsumer
from groupspec.model.migration_state import (ClassicGroup, ClassicHeartbeat, Client, Downgrade, JoinGroup, Kind,
                                             MigrationState, MMember, Phase, SyncGroup, Upgrade)

from . import consumer_kernel as CK
from . import consumer_search as CS
from . import kernel as K
from . import lean as L
from . import consumer_keys as CKEY
from . import migration_properties as MP
from .engine import CHUNK, FRONTIER_BUDGET, SEGMENT_ROWS
from .engine import TABLE_LOAD, CompiledExplorer, _Store, drive, make_grower

ACTION_CLASSES = (ConsumerGroupHeartbeat, RevokePartitions, A.Resume, A.SessionExpired, RebalanceTimeoutFence,
                  JoinGroup, SyncGroup, ClassicHeartbeat,
                  A.Start, A.LeaveGroup, A.Crash, A.ExpireLive, A.Pause, A.ChangeSubscription, A.AddPartition,
                  Upgrade, Downgrade)
assert all(c.fair for c in ACTION_CLASSES[:CK.FAIR_LIMIT // 8]) and not any(c.fair for c in ACTION_CLASSES[CK.FAIR_LIMIT // 8:])


# The model functions each encoding mirrors: a variant that overrides any of them is another machine.
ENCODED = ("init_states", "successors", "heartbeat", "reconcile", "_next_assignment", "_bump", "_remove",
           "held_by_others", "compute_target", "converged", "key", "exact_key", "live_member", "commit_accepted",
           "commit_violation", "generation_violation", "members_in_group", "initial_members", "live_ownership")
# The class switches of the in-flight rules: the encoding has the model's defaults.
SWITCHES = ("fence_commit_epoch", "previous_epoch_subset", "lose_on_fence", "kip_1251", "kafka_19233",
            "fenced_keeps_record")
MIGRATION_ENCODED = ENCODED + (
    "_join", "_sync", "_heartbeat_classic", "_consumer_heartbeat", "_upgrade", "_settle", "_classic_remove", "_prepare",
    "_maybe_complete", "cooperative_assignment", "_drop", "_restart", "_lost", "_apply_sync", "_converged_consumer",
    "is_member", "epoch_of")


def _migration(proto: Any) -> bool:
    return isinstance(proto, ClassicToConsumer)


def supports(proto: Any) -> bool:
    """Whether the encoding covers this protocol object: the ``consumer`` family (``consumer_kernel``) and the
    migration ``classic-to-consumer*`` (``migration_kernel``), each only where the variant keeps the model's rules."""
    if _migration(proto):
        return all(getattr(type(proto), f) is getattr(ClassicToConsumer, f) for f in MIGRATION_ENCODED)
    if getattr(proto, "in_flight", False):  # lose-answer, late-answer, late-commit, early-restart: not encoded
        return False
    if not _migration(proto) and any(getattr(type(proto), f, None) != getattr(Consumer, f) for f in SWITCHES):
        return False  # a broken variant of the in-flight rules (model/broken.py): the Python explorer
    return isinstance(proto, Consumer) and all(getattr(type(proto), f) is getattr(Consumer, f) for f in ENCODED)


def needs_compiling() -> bool:
    """Whether numba must compile this engine first (see ``engine.needs_compiling``)."""
    try:
        return not CS.search._cache._cache_file._load_index()
    except Exception:  # noqa: BLE001 - private numba internals; never let them stop a search
        return False


def action_code(a: A.Action) -> int:
    return ACTION_CLASSES.index(type(a)) * 8 + max(a.member, 0)


def action_of(code: int) -> A.Action:
    cls = ACTION_CLASSES[code // 8]
    return cls() if cls is A.AddPartition else cls(code % 8)


def encode(s: Any, n: int) -> np.ndarray:
    g = s.group
    mig = isinstance(s, MigrationState)
    row = np.zeros(CK.width(n, mig), np.int64)
    row[CK.H_EPOCH], row[CK.H_TEPOCH], row[CK.H_PARTS], row[CK.H_BUDGET] = g.epoch, g.target_epoch, g.partitions, s.budget
    for i, c in enumerate(s.clients):
        b = CK.HEADER + i * CK.SLOT
        row[b + CK.C_PROC: b + CK.C_TOPICS + 1] = (int(c.proc), c.epoch, c.owned, c.assigned, c.topics)
        r = g.members[i]
        if r is not None:
            row[b + CK.M_PRESENT: b + CK.M_LEFT + 1] = (1, int(r.state), r.epoch, r.previous_epoch, r.assigned,
                                                         r.revoking, r.topics, int(r.static), int(r.left))
        row[b + CK.T_TARGET] = g.target[i]
    if mig:
        x = CK.HEADER + n * CK.SLOT
        cg = s.classic
        row[x: x + CK.XH] = (int(s.kind), int(cg.status), cg.generation, cg.members, cg.joined, cg.leader, cg.unsynced)
        for i, c in enumerate(s.clients):
            y = x + CK.XH + i * CK.XS
            r = g.members[i]
            row[y: y + CK.XS] = (int(c.classic), int(c.phase), int(getattr(r, "classic", False)), cg.reported[i],
                                 cg.assignment[i], cg.pending[i])
    return row


def decode(row: np.ndarray, n: int) -> Any:
    v = [int(x) for x in row]
    mig = len(v) == CK.width(n, True)
    x = CK.HEADER + n * CK.SLOT
    clients, members, target = [], [], []
    for i in range(n):
        b = CK.HEADER + i * CK.SLOT
        y = x + CK.XH + i * CK.XS
        client = dict(proc=Proc(v[b + CK.C_PROC]), epoch=v[b + CK.C_EPOCH], owned=v[b + CK.C_OWNED],
                      assigned=v[b + CK.C_ASSIGNED], topics=v[b + CK.C_TOPICS])
        clients.append(Client(**client, classic=bool(v[y + CK.XC_CLASSIC]), phase=Phase(v[y + CK.XC_PHASE])) if mig
                       else ConsumerClient(**client))
        member = dict(state=MemberState(v[b + CK.M_STATE]), epoch=v[b + CK.M_EPOCH], previous_epoch=v[b + CK.M_PREV],
                      assigned=v[b + CK.M_ASSIGNED], revoking=v[b + CK.M_REVOKING], topics=v[b + CK.M_TOPICS],
                      static=bool(v[b + CK.M_STATIC]), left=bool(v[b + CK.M_LEFT]))
        if not v[b + CK.M_PRESENT]:
            members.append(None)
        elif mig and v[y + CK.XM_CLASSIC]:
            members.append(MMember(**member, classic=True))  # it joined with JoinGroup
        else:
            members.append(Member(**member))
        target.append(v[b + CK.T_TARGET])
    group = ConsumerGroup(epoch=v[CK.H_EPOCH], target_epoch=v[CK.H_TEPOCH], target=tuple(target),
                          members=tuple(members), partitions=v[CK.H_PARTS])
    if not mig:
        return ConsumerState(group=group, clients=tuple(clients), budget=v[CK.H_BUDGET])
    per = [[v[x + CK.XH + i * CK.XS + f] for i in range(n)] for f in (CK.XR_REPORTED, CK.XR_ASSIGN, CK.XR_PENDING)]
    cg = ClassicGroup(status=GroupStatus(v[x + CK.X_CSTATUS]), generation=v[x + CK.X_CGEN], members=v[x + CK.X_CMEMBERS],
                      joined=v[x + CK.X_CJOINED], reported=tuple(per[0]), assignment=tuple(per[1]), pending=tuple(per[2]),
                      leader=v[x + CK.X_CLEADER], unsynced=v[x + CK.X_CUNSYNCED])
    return MigrationState(Kind(v[x + CK.X_KIND]), cg, group, tuple(clients), v[CK.H_BUDGET])


def parameters(proto: Consumer) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    cfg = proto.cfg
    P = np.zeros(CK.P_LEN, dtype=np.int64)
    P[CK.P_N], P[CK.P_K], P[CK.P_T] = cfg.members, cfg.partitions, cfg.topics
    P[CK.P_STATIC] = proto.static_members
    P[CK.P_WAIT] = proto.wait_for_release
    P[CK.P_FENCE] = proto.fence_commits
    P[CK.P_BUMP] = proto.bump_on_change
    P[CK.P_SYM] = proto.symmetric
    P[CK.P_FAULTS] = sum(CK.FAULT_BITS[f] for f in cfg.faults)
    P[CK.P_ALLTOPICS] = cfg.all_topics
    P[CK.P_INITIAL] = proto.initial_members()
    if _migration(proto):
        P[CK.P_MIG] = 1
        P[CK.P_ACKED] = proto.upgrade_waits_for_ack
        P[CK.P_SYNC_TARGET] = proto.sync_gives_target
        P[CK.P_REJOIN] = proto.classic_rejoin_signal
    blocks = [0]
    for t in range(cfg.topics):
        blocks.append(blocks[-1] + sum(1 for p in range(cfg.partitions) if cfg.topic_of[p] == t))
    return P, np.array(cfg.topic_masks, dtype=np.int64), np.array(blocks, dtype=np.int64)


class Targets:
    """The target table: the model's assignor answers, keyed by the assignor's input (``consumer_kernel``)."""

    def __init__(self, proto: Consumer, capacity: int = 1 << 10) -> None:
        self.proto = proto
        self.n = proto.cfg.members
        self.count = 0
        self.tq = np.zeros(CK.query_len(self.n), np.int64)
        self._alloc(capacity)

    def _alloc(self, capacity: int) -> None:
        self.tk = np.full((capacity, CK.query_len(self.n)), -1, np.int64)
        self.tv = np.zeros((capacity, self.n), np.int64)

    def fill(self) -> None:
        """Compute the target asked for in ``tq`` with the model and store it."""
        n = self.n
        q = [int(x) for x in self.tq]
        if q[0] == CK.TAG_COOPERATIVE:  # the migration's classic leader
            target = self.proto.cooperative_assignment(q[1], tuple(q[2:2 + n]))
        else:
            members = tuple(None if code == 0 else Member(topics=(code - 1) >> 1, static=bool((code - 1) & 1))
                            for code in q[2:2 + n])
            target = self.proto.compute_target(ConsumerGroup(target=tuple(q[2 + n:]), members=members, partitions=q[1]))
        if 2 * (self.count + 1) > self.tk.shape[0]:
            old_k, old_v = self.tk, self.tv
            self._alloc(2 * old_k.shape[0])
            for x in np.flatnonzero(old_k[:, 0] >= 0):
                CK.store_target(self.tk, self.tv, old_k[x], old_v[x])
        CK.store_target(self.tk, self.tv, self.tq, np.array(target, dtype=np.int64))
        self.count += 1

    def args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.tk, self.tv, self.tq


class ConsumerKernel:
    """The compiled functions bound to one protocol object of the family (for the explorer and the drift tests)."""

    def __init__(self, proto: Consumer) -> None:
        if not supports(proto):
            raise ValueError(f"the consumer encoding does not cover {proto.name!r}")
        self.proto = proto
        self.n = proto.cfg.members
        self.P, self.TM, self.blocks = parameters(proto)
        self.targets = Targets(proto)
        mig = _migration(proto)
        self.F = CK.width(self.n, mig)
        self.keylen = MP.key_len(self.n) if mig else CKEY.key_len(self.n, bool(proto.symmetric))
        self.words = (self.keylen + 3) // 4

    def _resolve(self, call: Callable[[], int]) -> int:
        while True:
            r = call()
            if r != CK.MISS:
                return r
            self.targets.fill()

    def successors(self, s: Any) -> list[tuple[A.Action, Any]]:
        maxs = self.n * CK.MAX_SUCC_PER_SLOT + 1
        out = np.zeros((maxs, self.F), np.int64)
        acts = np.zeros(maxs, np.int64)
        u = np.zeros(self.F, np.int64)
        row = encode(s, self.n)
        ns = self._resolve(lambda: CS.successors(self.P, self.TM, row, out, acts, *self.targets.args(), u))
        return [(action_of(int(acts[j])), decode(out[j], self.n)) for j in range(ns)]

    def key(self, s: Any) -> bytes:
        n = self.n
        kv = np.zeros(self.keylen, np.int64)
        words = np.zeros(self.words, np.uint64)
        CS.key_vector(self.P, self.blocks, encode(s, n), np.zeros((n, CKEY.SYM_ROW), np.int64), np.zeros(n, np.int64),
                      np.zeros(self.proto.cfg.partitions, np.int64), np.zeros(self.proto.cfg.partitions, np.int64), kv)
        CKEY.pack(kv, words)
        return words.tobytes()

    def converged(self, s: Any) -> bool:
        row = encode(s, self.n)
        return bool(self._resolve(lambda: CS.converged(self.P, self.TM, row, *self.targets.args())))

    def exclusive_ownership_ok(self, s: Any) -> bool:
        return bool(CS.exclusive_ownership_ok(self.P, encode(s, self.n)))

    def commit_fencing_ok(self, s: Any) -> bool:
        return bool(CS.commit_fencing_ok(self.P, encode(s, self.n)))

    def generation_ok(self, s: Any, t: Any) -> bool:
        return bool(CS.generation_ok(self.P, encode(s, self.n), encode(t, self.n)))


# -- lazy views of the search's arrays, for the reference explorer's methods ---------------------------
class _States:
    def __init__(self, kn: ConsumerKernel, roots: np.ndarray, parent: np.ndarray, pact: np.ndarray) -> None:
        self.kn, self.roots, self.parent, self.pact = kn, roots, parent, pact
        self._row = np.zeros(roots.shape[1], np.int64)
        self._cache: dict[int, Any] = {}

    def __len__(self) -> int:
        return self.parent.shape[0]

    def __getitem__(self, i: int) -> ConsumerState:
        if not 0 <= i < len(self):
            raise IndexError(i)
        s = self._cache.get(i)
        if s is None:
            CS.reconstruct(self.kn.P, self.kn.TM, self.roots, self.parent, self.pact, i, self._row, *self.kn.targets.args())
            s = decode(self._row, self.kn.n)
            if len(self._cache) > 100_000:
                self._cache.clear()
            self._cache[i] = s
        return s


class ConsumerExplorer(CompiledExplorer):
    """``CompiledExplorer`` on the consumer encoding (one thread): its own kernel, states view, action codes and
    search call; the driver loop, the graph part, the verdicts and the figures are ``CompiledExplorer``'s."""

    engine = "compiled"
    action_of = staticmethod(action_of)

    def __init__(self, proto: Any, max_states: int | None = None, progress: Callable[[int, int], None] | None = None,
                 frontier_budget: int = FRONTIER_BUDGET, segment_rows: int = SEGMENT_ROWS, initial_capacity: int = 1 << 12,
                 workers: int = 1):
        self.proto, self.max_states, self.progress = proto, max_states, progress
        self.workers = 1  # the consumer search runs on one thread whatever is asked
        self.serial_cpu_seconds = None
        self.kernel = ConsumerKernel(proto)
        self.frontier_budget, self.segment_rows, self.initial_capacity = frontier_budget, segment_rows, initial_capacity

    def _states_view(self, roots: np.ndarray, parent: np.ndarray, pact: np.ndarray) -> Any:
        return _States(self.kernel, roots, parent, pact)

    def run(self) -> Result:
        proto, kn = self.proto, self.kernel
        res = Result(protocol=proto.name, assignor=proto.assignor_name, config=proto.cfg, symmetric=proto.symmetric)
        reset_peak()
        rss0 = rss_bytes()
        t0 = time.perf_counter()
        c0 = time.process_time()
        st = _Store(self.initial_capacity)
        ctl = L.new_ctl()
        front = L.Frontier(kn.F, self.segment_rows, self.frontier_budget)
        maxs = kn.n * CK.MAX_SUCC_PER_SLOT + 1
        roots = []
        outseg = front.new_segment()
        tg = kn.targets

        on_grow = make_grower(st, ctl, maxs)

        try:
            for s in proto.init_states():
                row = encode(s, kn.n)
                while True:
                    r = CS.insert_initial(kn.P, kn.TM, kn.blocks, kn.words, row, st.table, st.fpq, st.parent,
                                          st.pact, st.flags, outseg, ctl, *tg.args())
                    if r != CS.NEED_TARGET:
                        break
                    tg.fill()
                if r == 1:
                    roots.append(row)
            outseg = front.hand_over(outseg, ctl)
            if self.progress is not None:
                self.progress(int(ctl[K.CT_COUNT]), int(ctl[K.CT_COUNT] - ctl[K.CT_HEAD]))
            res.complete = self._search(kn, st, front, ctl, outseg, self.max_states or 0, on_grow)
        finally:
            self.frontier_spilled = front.spilled
            front.close()
        st.table = None
        count = int(ctl[K.CT_COUNT])
        nfair = int(ctl[K.CT_FAIR])
        self.search_seconds = time.perf_counter() - t0
        self.search_cpu_seconds = time.process_time() - c0
        parent, pact, flags, outdeg = (L.grow(a, count) for a in (st.parent, st.pact, st.flags, st.outdeg))
        edst, eact = L.grow(st.edst, nfair), L.grow(st.eact, nfair)
        del st
        self._keep_graph(count, flags, outdeg, edst, eact, parent, pact,
                         np.array(roots, dtype=np.int64).reshape(len(roots), kn.F), ctl)
        res.states = count
        res.edges = int(ctl[K.CT_EDGES])
        self._verdicts(res, ctl)
        self._finish(res, t0, c0, rss0, count, nfair)
        return res

    def _search(self, kn: ConsumerKernel, st: _Store, front: L.Frontier, ctl: np.ndarray, outseg: np.ndarray,
                max_states: int, on_grow: Callable[[], None]) -> bool:
        """``CompiledExplorer._search_one`` with the target table (filled when the search asks); whether it completed."""
        tg = kn.targets

        def chunk(inseg: np.ndarray, out: np.ndarray) -> int:
            return CS.search(kn.P, kn.TM, kn.blocks, kn.words, inseg, out, st.table, st.fpq, st.parent, st.pact,
                             st.flags, st.outdeg, st.edst, st.eact, ctl, max_states, CHUNK, TABLE_LOAD, *tg.args())

        def report() -> None:
            assert self.progress is not None
            self.progress(int(ctl[K.CT_COUNT]), int(ctl[K.CT_COUNT] - ctl[K.CT_HEAD]))

        return drive(chunk, kn.F, front, ctl, outseg, on_grow, report if self.progress is not None else None,
                     {CS.NEED_TARGET: tg.fill})
