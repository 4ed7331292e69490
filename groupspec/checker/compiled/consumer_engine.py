"""The KIP-848 consumer family and the migration as plug-ins of the one compiled search: their kernel binding
(:class:`ConsumerKernel`: rows, action codes, parameters, the target table) for ``CompiledExplorer``.

The same algorithm as the reference explorer and as the classic family (``engine.py``, ``search.py``): every
state a person reads is decoded back into a model state (``ConsumerState``, ``MigrationState``) and every
step of a trace replayed with the model's own ``proto.step``. What these families add is the target table:
assignments are the model's own answers (``Consumer.compute_target``, and the migration's classic leader's
``cooperative_assignment``), computed when the search first needs them.

It covers ``consumer``, ``consumer-static`` and the broken ``consumer-*`` variants with either
server-side assignor, and the migration ``classic-to-consumer``, ``classic-to-consumer-acked`` and their
broken variants; a variant that overrides any model function the encoding mirrors (``Consumer.encoded``,
``ClassicToConsumer.encoded``, model/spec.py) is refused (:func:`supports`) and runs on the reference
explorer. The search runs on one thread or several, as the classic family's.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from groupspec.model import actions as A
from groupspec.model.consumer import Consumer, ConsumerClient, ConsumerGroup, ConsumerState, Member, MemberState
from groupspec.model.consumer import ConsumerGroupHeartbeat, RebalanceTimeoutFence, RevokePartitions
from groupspec.model.consumer_flight import (OK, DelayHeartbeatAnswer, DeliverOffsetCommit, EarlyRestart,
                                             LoseHeartbeatAnswer, ReceiveHeartbeatAnswer, SendOffsetCommit)
from groupspec.model.core import GroupStatus, Proc
from groupspec.model.migration import ClassicToConsumer
from groupspec.model.migration_state import (ClassicGroup, ClassicHeartbeat, Client, Downgrade, JoinGroup, Kind,
                                             MigrationState, MMember, Phase, SyncGroup, Upgrade)

from . import consumer_kernel as CK
from . import consumer_keys as CKEY
from . import families as FAM
from . import migration_properties as MP
from .plugins import family_of
from .plugins import needs_compiling as _needs_compiling

ACTION_CLASSES = (ConsumerGroupHeartbeat, RevokePartitions, A.Resume, A.SessionExpired, RebalanceTimeoutFence,
                  JoinGroup, SyncGroup, ClassicHeartbeat, ReceiveHeartbeatAnswer, DeliverOffsetCommit,
                  A.Start, A.LeaveGroup, A.Crash, A.ExpireLive, A.Pause, A.ChangeSubscription, A.AddPartition,
                  Upgrade, Downgrade, LoseHeartbeatAnswer, DelayHeartbeatAnswer, SendOffsetCommit, EarlyRestart)
assert ACTION_CLASSES.index(ReceiveHeartbeatAnswer) == CK.RECEIVE_ANSWER and ACTION_CLASSES.index(EarlyRestart) == CK.EARLY_RESTART
assert all(c.fair for c in ACTION_CLASSES[:CK.FAIR_LIMIT // 8]) and not any(c.fair for c in ACTION_CLASSES[CK.FAIR_LIMIT // 8:])


def supports(proto: Any) -> bool:
    """Whether the encoding covers this protocol object: the ``consumer`` family (``consumer_kernel``) and the
    migration ``classic-to-consumer*`` (``migration_kernel``), each only where the variant keeps the model's rules
    (``Spec.compiled_encoding``)."""
    return family_of(proto) in (FAM.CONSUMER, FAM.MIGRATION)


def needs_compiling() -> bool:
    """Whether numba must compile the search first (``plugins.needs_compiling``: one search for every family)."""
    return _needs_compiling(1)


def action_code(a: A.Action) -> int:
    return ACTION_CLASSES.index(type(a)) * 8 + max(int(a.member), 0)


def action_of(code: int) -> A.Action:
    cls = ACTION_CLASSES[code // 8]
    return cls() if cls is A.AddPartition else cls(code % 8)


def encode(s: Any, n: int, flight_k: int = 0) -> np.ndarray:
    """State ``s`` as a row; ``flight_k``: the partitions when the in-flight faults are on (their tail), else 0."""
    g = s.group
    mig = isinstance(s, MigrationState)
    row = np.zeros(CK.flight_width(n, flight_k) if flight_k else CK.width(n, mig), np.int64)
    row[CK.H_EPOCH], row[CK.H_TEPOCH], row[CK.H_PARTS], row[CK.H_BUDGET] = g.epoch, g.target_epoch, g.partitions, s.budget
    for i, c in enumerate(s.clients):
        b = CK.HEADER + i * CK.SLOT
        row[b + CK.C_PROC: b + CK.C_TOPICS + 1] = (int(c.proc), c.epoch, c.owned, c.assigned, c.topics)
        r = g.members[i]
        if r is not None:
            row[b + CK.M_PRESENT: b + CK.M_LEFT + 1] = (1, int(r.state), r.epoch, r.previous_epoch, r.assigned,
                                                         r.revoking, r.topics, int(r.static), int(r.left))
        row[b + CK.T_TARGET] = g.target[i]
        if flight_k:
            y = CK.HEADER + n * CK.SLOT + i * (CK.FS + flight_k)
            if c.answer is not None:
                assert c.answer[0] == OK, c.answer  # only an OK answer is delayed
                row[y + CK.F_ANS: y + CK.F_ANS_ASSIGNED + 1] = (1, c.answer[1], c.answer[2])
            if c.commit is not None:
                row[y + CK.F_COM: y + CK.F_COM_PARTS + 1] = (1, c.commit[0], c.commit[1])
            if r is not None:
                row[y + CK.F_SINCE: y + CK.F_SINCE + flight_k] = r.since
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


def decode(row: np.ndarray, n: int, flight_k: int = 0) -> Any:
    v = [int(x) for x in row]
    mig = not flight_k and len(v) == CK.width(n, True)
    x = CK.HEADER + n * CK.SLOT
    clients: list[Any] = []
    members: list[Any] = []
    target: list[int] = []
    for i in range(n):
        b = CK.HEADER + i * CK.SLOT
        y = x + CK.XH + i * CK.XS
        client: dict[str, Any] = dict(proc=Proc(v[b + CK.C_PROC]), epoch=v[b + CK.C_EPOCH], owned=v[b + CK.C_OWNED],
                                      assigned=v[b + CK.C_ASSIGNED], topics=v[b + CK.C_TOPICS])
        since: tuple[int, ...] = ()
        if flight_k:
            f = CK.HEADER + n * CK.SLOT + i * (CK.FS + flight_k)
            if v[f + CK.F_ANS]:
                client["answer"] = (OK, v[f + CK.F_ANS_EPOCH], v[f + CK.F_ANS_ASSIGNED])
            if v[f + CK.F_COM]:
                client["commit"] = (v[f + CK.F_COM_EPOCH], v[f + CK.F_COM_PARTS])
            since = tuple(v[f + CK.F_SINCE: f + CK.F_SINCE + flight_k])
        clients.append(Client(**client, classic=bool(v[y + CK.XC_CLASSIC]), phase=Phase(v[y + CK.XC_PHASE])) if mig
                       else ConsumerClient(**client))
        member: dict[str, Any] = dict(state=MemberState(v[b + CK.M_STATE]), epoch=v[b + CK.M_EPOCH], previous_epoch=v[b + CK.M_PREV],
                      assigned=v[b + CK.M_ASSIGNED], revoking=v[b + CK.M_REVOKING], topics=v[b + CK.M_TOPICS],
                      static=bool(v[b + CK.M_STATIC]), left=bool(v[b + CK.M_LEFT]), since=since)
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
    P[CK.P_FLIGHT] = family_of(proto) == FAM.CONSUMER and bool(getattr(proto, "in_flight", False))
    P[CK.P_EPOCH_FENCE] = proto.fence_commit_epoch
    P[CK.P_PREV_SUBSET] = proto.previous_epoch_subset
    P[CK.P_LOSE_ON_FENCE] = proto.lose_on_fence
    P[CK.P_KIP1251] = proto.kip_1251
    P[CK.P_K19233] = proto.kafka_19233
    P[CK.P_KEEPS_RECORD] = proto.fenced_keeps_record
    if family_of(proto) == FAM.MIGRATION and isinstance(proto, ClassicToConsumer):  # the migration's pages
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
        # Read by worker threads while the driver fills it (parallel search): then every fill writes a copy
        # and swaps it in, so a thread sees the table before or after a fill, never half of one.
        self.shared = False
        self._alloc(capacity)

    def _alloc(self, capacity: int) -> None:
        self.tk = np.full((capacity, CK.query_len(self.n)), -1, np.int64)
        self.tv = np.zeros((capacity, self.n), np.int64)

    def fill(self, tq: np.ndarray | None = None) -> None:
        """Compute the target asked for in ``tq`` (default: the table's own query buffer) with the model and
        store it."""
        n = self.n
        query = self.tq if tq is None else tq
        q = [int(x) for x in query]
        if q[0] == CK.TAG_COOPERATIVE:  # the migration's classic leader
            assert isinstance(self.proto, ClassicToConsumer)  # only the migration's kernel asks this
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
        elif self.shared:
            self.tk, self.tv = self.tk.copy(), self.tv.copy()
        CK.store_target(self.tk, self.tv, query, np.array(target, dtype=np.int64))
        self.count += 1

    def args(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.tk, self.tv, self.tq


class ConsumerKernel:
    """The compiled functions of the family bound to one protocol object (for the explorer and the drift tests);
    the attributes the one search reads are ``engine.Kernel``'s."""

    action_of = staticmethod(action_of)

    def __init__(self, proto: Consumer) -> None:
        if not supports(proto):
            raise ValueError(f"the consumer encoding does not cover {proto.name!r}")
        self.proto = proto
        self.n = proto.cfg.members
        self.fam = family_of(proto)
        self.P, self.TM, self.blocks = parameters(proto)
        self.targets = Targets(proto)
        mig = self.fam == FAM.MIGRATION
        # the in-flight tail: its width depends on the partitions (each one's assignment epoch)
        self.flight_k = proto.cfg.partitions if (not mig and proto.in_flight) else 0
        self.F = CK.flight_width(self.n, self.flight_k) if self.flight_k else CK.width(self.n, mig)
        self.keylen = MP.key_len(self.n) if mig else CKEY.key_len(self.n, bool(proto.symmetric), self.flight_k)
        self.words = (self.keylen + 3) // 4
        self.plan = np.zeros((1, 5), np.int64)  # the classic family's packing plan: not used here
        self.maxs = self.n * CK.MAX_SUCC_PER_SLOT + 1  # families.max_successors

    def encode(self, s: Any) -> np.ndarray:
        return encode(s, self.n, self.flight_k)

    def decode(self, row: np.ndarray) -> Any:
        return decode(row, self.n, self.flight_k)

    def _resolve(self, call: Callable[[], int]) -> int:
        while True:
            r = call()
            if r != CK.MISS:
                return r
            self.targets.fill()

    def successors(self, s: Any) -> list[tuple[A.Action, Any]]:
        out = np.zeros((self.maxs, self.F), np.int64)
        acts = np.zeros(self.maxs, np.int64)
        u = np.zeros(self.F, np.int64)
        row = self.encode(s)
        ns = self._resolve(lambda: FAM.successors(self.fam, self.P, self.TM, row, out, acts, *self.targets.args(), u))
        return [(action_of(int(acts[j])), self.decode(out[j])) for j in range(ns)]

    def key(self, s: Any) -> bytes:
        n = self.n
        kv = np.zeros(self.keylen, np.int64)
        words = np.zeros(self.words, np.uint64)
        FAM.key_vector(self.fam, self.P, self.blocks, self.encode(s), np.zeros((n, CKEY.SYM_ROW), np.int64),
                       np.zeros(n, np.int64), np.zeros(self.proto.cfg.partitions, np.int64),
                       np.zeros(self.proto.cfg.partitions, np.int64), kv)
        CKEY.pack(kv, words)
        return words.tobytes()

    def converged(self, s: Any) -> bool:
        row = self.encode(s)
        return bool(self._resolve(lambda: FAM.converged(self.fam, self.P, self.TM, row, *self.targets.args())))

    def exclusive_ownership_ok(self, s: Any) -> bool:
        return bool(FAM.exclusive_ownership_ok(self.fam, self.P, self.encode(s)))

    def commit_fencing_ok(self, s: Any) -> bool:
        return bool(FAM.commit_fencing_ok(self.fam, self.P, self.encode(s)))

    def generation_ok(self, s: Any, t: Any) -> bool:
        return bool(FAM.generation_ok(self.fam, self.P, self.encode(s), self.encode(t)))
