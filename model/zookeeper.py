"""ZooKeeper-based rebalancing: the original high-level consumer (Kafka 0.8, for teaching).

The protocol
------------
There is no group coordinator. Each consumer registers an *ephemeral* node under
``/consumers/<group>/ids`` and sets a **watch** on that directory. When the watch fires, the consumer
rebalances *on its own*: it releases every partition it owns (deletes its ephemeral
``/owners/<topic>/<partition>`` nodes), reads the list of consumers — its **view**, which may already be
stale when it acts on it — computes its share with the range assignor over that view, and claims each
partition of its share by creating the owner node. A claim fails while another consumer still holds
the node; the consumer then retries (``rebalance.max.retries`` times, with backoff).

Exclusive ownership holds because ZooKeeper's owner nodes are created atomically: at most one live
session holds each. But every consumer acts on its own view, so views disagree during a change,
claims collide and consumers retry (the "herd effect"); and nothing fences a consumer whose session
expired while it was paused: it wakes up still believing it owns its partitions, and **its offset
commits (written to ZooKeeper) are accepted**. So with the ``zombie`` or ``timeout`` fault the
commit-fencing property fails — the historical reason the group coordinator and generations were
introduced (Kafka 0.9). There are no generations, so generation monotonicity does not apply.

Modelled faults: join, leave, crash, timeout, zombie (topic changes are not modelled here).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator

from . import actions as A
from .assignors import range_
from .core import Config, Proc, bits
from .properties import exclusive_ownership  # noqa: F401  (documentation cross-reference)

SUPPORTED_FAULTS = frozenset({"join", "leave", "crash", "timeout", "zombie"})


@dataclass(frozen=True, slots=True)
class ZkConsumer:
    proc: Proc = Proc.DOWN
    registered: bool = False  # its ephemeral registration node exists (its session is alive)
    view: int = 0  # the consumers (bit mask of slots) it read when it last rebalanced
    owned: int = 0  # partitions it believes it owns
    pending: bool = False  # some claim of its share failed: it will retry


@dataclass(frozen=True, slots=True)
class ZkState:
    registry: int  # /consumers/<group>/ids: registered consumers (bit mask of slots)
    owners: tuple[int, ...]  # /owners/<topic>/<p>: the slot whose ephemeral node holds p, or -1
    consumers: tuple[ZkConsumer, ...]
    budget: int = 0


@dataclass(frozen=True, slots=True, repr=False)
class Register(A.Action):
    verb = "opens a ZooKeeper session, registers its ephemeral consumer node and drops what it owned"


@dataclass(frozen=True, slots=True, repr=False)
class Rebalance(A.Action):
    verb = "sees the consumer list changed: releases everything, recomputes its share, claims it"


@dataclass(frozen=True, slots=True, repr=False)
class RetryClaims(A.Action):
    verb = "retries claiming the partitions of its share that were still owned"


@dataclass(frozen=True, slots=True, repr=False)
class ZkSessionExpired(A.Action):
    verb = "loses its ZooKeeper session: its ephemeral nodes are deleted"


class ZooKeeper:
    name = "zookeeper"
    summary = "0.8 high-level consumer: each consumer rebalances alone from its own ZooKeeper view"
    broken = False
    bug = ""
    expect_violation = ""
    has_generations = False
    coordinator_assigns = False

    def __init__(self, cfg: Config) -> None:
        unsupported = set(cfg.faults) - SUPPORTED_FAULTS
        if unsupported:
            raise ValueError(f"fault {sorted(unsupported)[0]!r} is not modelled for protocol zookeeper")
        self.cfg = cfg
        self.assignor_name = "range"
        self.symmetric = False
        n = cfg.members
        self._acts = {
            cls: tuple(cls(i) for i in range(n))
            for cls in (Register, Rebalance, RetryClaims, ZkSessionExpired, A.Resume,
                        A.Start, A.LeaveGroup, A.Crash, A.ExpireLive, A.Pause)
        }

    # -- states -------------------------------------------------------------------------------------
    def init_states(self) -> list[ZkState]:
        n = self.cfg.members
        late = "join" in self.cfg.faults and n > 1
        consumers = tuple(ZkConsumer(proc=Proc.DOWN if late and i == n - 1 else Proc.UP) for i in range(n))
        return [ZkState(registry=0, owners=(-1,) * self.cfg.partitions, consumers=consumers, budget=self.cfg.budget)]

    def share(self, view: int, i: int) -> int:
        if not view >> i & 1:
            return 0
        cfg = self.cfg
        members = [(j, cfg.all_topics, 0, -1, False) for j in bits(view)]
        return range_(cfg, members, (1 << cfg.partitions) - 1)[i]

    @staticmethod
    def _set(t: tuple, i: int, v: object) -> tuple:
        return t[:i] + (v,) + t[i + 1 :]

    def _claim(self, owners: tuple[int, ...], c: ZkConsumer, i: int) -> tuple[tuple[int, ...], ZkConsumer]:
        want = self.share(c.view, i)
        owned = c.owned
        o = list(owners)
        missing = False
        for p in bits(want & ~owned):
            if o[p] == -1:
                o[p] = i
                owned |= 1 << p
            else:
                missing = True
        return tuple(o), replace(c, owned=owned, pending=missing)

    def _drop_session(self, s: ZkState, i: int) -> ZkState:
        owners = tuple(-1 if o == i else o for o in s.owners)
        c = replace(s.consumers[i], registered=False)
        return replace(s, registry=s.registry & ~(1 << i), owners=owners, consumers=self._set(s.consumers, i, c))

    # -- transitions ----------------------------------------------------------------------------------
    def successors(self, s: ZkState) -> Iterator[tuple[A.Action, ZkState]]:
        acts = self._acts
        faults = self.cfg.faults
        for i, c in enumerate(s.consumers):
            if c.proc == Proc.UP:
                if not c.registered:
                    yield acts[Register][i], replace(
                        s, registry=s.registry | 1 << i,
                        consumers=self._set(s.consumers, i, replace(c, registered=True, view=0, owned=0, pending=False)),
                    )
                elif c.view != s.registry:
                    owners = tuple(-1 if o == i else o for o in s.owners)
                    c2 = replace(c, owned=0, view=s.registry)
                    owners, c2 = self._claim(owners, c2, i)
                    yield acts[Rebalance][i], replace(s, owners=owners, consumers=self._set(s.consumers, i, c2))
                elif c.pending and any(s.owners[p] == -1 for p in bits(self.share(c.view, i) & ~c.owned)):
                    owners, c2 = self._claim(s.owners, c, i)
                    yield acts[RetryClaims][i], replace(s, owners=owners, consumers=self._set(s.consumers, i, c2))
            elif c.proc == Proc.PAUSED:
                yield acts[A.Resume][i], replace(s, consumers=self._set(s.consumers, i, replace(c, proc=Proc.UP)))
            if c.registered and c.proc != Proc.UP:
                yield acts[ZkSessionExpired][i], self._drop_session(s, i)
            if s.budget > 0:
                spend = s.budget - 1
                if "join" in faults and c.proc == Proc.DOWN and not c.registered:
                    yield acts[A.Start][i], replace(s, budget=spend, consumers=self._set(s.consumers, i, ZkConsumer(proc=Proc.UP)))
                if c.proc == Proc.UP and "leave" in faults:
                    t = self._drop_session(s, i)
                    yield acts[A.LeaveGroup][i], replace(t, budget=spend, consumers=self._set(t.consumers, i, ZkConsumer()))
                if c.proc != Proc.DOWN and "crash" in faults:
                    c2 = ZkConsumer(registered=c.registered)
                    yield acts[A.Crash][i], replace(s, budget=spend, consumers=self._set(s.consumers, i, c2))
                if c.proc == Proc.UP and c.registered and "timeout" in faults:
                    yield acts[A.ExpireLive][i], replace(self._drop_session(s, i), budget=spend)
                if c.proc == Proc.UP and "zombie" in faults:
                    yield acts[A.Pause][i], replace(s, budget=spend, consumers=self._set(s.consumers, i, replace(c, proc=Proc.PAUSED)))

    def enabled(self, s: ZkState) -> list[A.Action]:
        return [a for a, _t in self.successors(s)]

    def step(self, s: ZkState, a: A.Action) -> ZkState:
        for b, t in self.successors(s):
            if b == a:
                return t
        raise ValueError(f"{a!r} is not enabled")

    # -- what the properties ask ------------------------------------------------------------------------
    def member_name(self, i: int) -> str:
        return f"c{i + 1}"

    def partition_name(self, p: int) -> str:
        return f"t-{p}"

    def live_member(self, s: ZkState, i: int) -> bool:
        c = s.consumers[i]
        return c.proc != Proc.DOWN and c.registered

    def live_ownership(self, s: ZkState):
        for i, c in enumerate(s.consumers):
            if c.owned and self.live_member(s, i):
                yield i, c.owned

    def commit_violation(self, s: ZkState) -> str | None:
        # Offsets are written to ZooKeeper with no fencing at all: every commit is accepted.
        for i, c in enumerate(s.consumers):
            if c.proc != Proc.UP or not c.owned:
                continue
            for p in bits(c.owned):
                if s.owners[p] != i:
                    holder = s.owners[p]
                    by = f", which {self.member_name(holder)} now owns" if holder >= 0 else ""
                    return f"{self.member_name(i)} no longer holds {self.partition_name(p)}{by}, yet its commit is accepted (no fencing)"
        return None

    def generation_violation(self, s: ZkState, t: ZkState) -> str | None:
        return None

    def initial_members(self) -> int:
        return sum(1 for c in self.init_states()[0].consumers if c.proc == Proc.UP)

    def members_in_group(self, s: ZkState) -> int:
        return bin(s.registry).count("1")

    def converged(self, s: ZkState) -> bool:
        if s.registry == 0 and all(c.proc == Proc.DOWN for c in s.consumers):
            return True  # everyone is gone: nothing to do
        everything = 0
        for i, c in enumerate(s.consumers):
            if c.proc == Proc.PAUSED or (c.proc == Proc.DOWN and c.registered):
                return False
            if c.proc == Proc.DOWN:
                continue
            if not c.registered or c.view != s.registry or c.pending:
                return False
            if c.owned != self.share(s.registry, i):
                return False
            everything |= c.owned
        return s.registry != 0 and everything == (1 << self.cfg.partitions) - 1

    def commit_accepted(self, s: ZkState, i: int, ghost: bool = False) -> bool:
        return True

    def key(self, s: ZkState):
        return s

    def exact_key(self, s: ZkState):
        return s
