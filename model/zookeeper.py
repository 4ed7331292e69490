"""ZooKeeper-based rebalancing: the original high-level consumer (Kafka 0.8, for teaching).

The protocol (the ZooKeeper era of the protocol's history)
----------------------------------------------------------
There is no group coordinator. Each consumer registers an *ephemeral* node under
``/consumers/<group>/ids`` and sets a **watch** on that directory. Every change of the directory fires
the watch of every registered consumer (the **herd effect**: a change in a group of N wakes the N-1
others, each of which rebalances). A woken consumer rebalances *on its own*: it releases every
partition it owns (deletes its ephemeral ``/owners/<topic>/<partition>`` nodes), reads the list of
consumers — its **view** — computes its share with the range assignor over that view, and tries to
create one owner node per partition of its share. The claim is all or nothing: if a node is still held
by another consumer, it drops the claims of this attempt and retries after ``rebalance.backoff.ms``, at
most ``rebalance.max.retries`` times (Kafka: 4; here :attr:`ZooKeeper.max_retries` = 2 to keep the
state space small: any finite number runs out the same way in an untimed model); then it gives up
(``ConsumerRebalanceFailedException``) owning nothing, until the next change of the directory.

**Views are per consumer and may be stale.** A read may be served by a ZooKeeper server that has not
applied the latest write yet (``lagging``: the directory as it was before its last change), so a
consumer may compute its share over a list that is already out of date while another consumer acts on
the current one: the *split brain* of the protocol's history — two consumers pick one partition (one loses the
create race and retries), some partition nobody picks, and nobody can tell whether the group has
settled. A consumer whose view is not the directory rebalances again (the needless extra rebalance).

What ZooKeeper guarantees, and what it does not:

* ``exclusive_ownership`` (no partition owned by two consumers holding a live session) **holds**,
  stale views or not: owner nodes are created atomically and vanish with their session.
* ``exclusive_processing`` (no partition believed owned by two *running* consumers) **fails** with the
  ``timeout`` or ``zombie`` fault, as in Kafka 0.8: a consumer whose session expired has a stale view of
  *itself* — it still believes it is registered and owns its partitions, and keeps processing them,
  while the others, notified, rebalance and one of them claims the freed node. It learns of the expiry
  only later (``Register``: a new session, ``handleNewSession``, drops everything). Stale *directory*
  reads alone never produce this: with ``join``, ``leave`` and ``crash`` only, it holds.
* ``commit_fencing`` fails with ``zombie``/``timeout``: offsets are plain ZooKeeper writes, never fenced
  (the historical reason for the group coordinator and generations, Kafka 0.9).
* ``convergence`` fails as soon as a claim can collide: an untimed run may use up every retry of a
  consumer before the holder of the node it wants gets round to releasing it, and the consumer then
  gives up with its share unconsumed until the next membership change (the history's "retries run out").
  Kafka makes that unlikely with time (backoff × retries), not impossible.
* There are no generations, so generation monotonicity does not apply.

The herd effect as a number: :meth:`ZooKeeper.notifications` is the number of watches a step fires
(every consumer registered before and after a change of the directory); the checker reports it per
membership change (``groupspec check --protocol zookeeper``: "watch notifications per membership change").

Modelled faults: join, leave, crash, timeout, zombie (topic changes are not modelled here).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Hashable, Iterator, TypeVar

from . import actions as A
from .assignors import range_
from .core import Config, Proc, bits
from .spec import SpecBase
from .properties import Kind, Property, exclusive_ownership  # noqa: F401  (documentation cross-reference)

_V = TypeVar("_V")

SUPPORTED_FAULTS = frozenset({"join", "leave", "crash", "timeout", "zombie"})


@dataclass(frozen=True, slots=True)
class ZkConsumer:
    proc: Proc = Proc.DOWN
    registered: bool = False  # its ephemeral registration node exists (its session is alive)
    view: int = 0  # the consumers (bit mask of slots) it read when it last rebalanced
    owned: int = 0  # partitions it believes it owns
    pending: bool = False  # its last claim failed (a node was held): it will retry after the backoff
    retries: int = 0  # retries left in this rebalance (rebalance.max.retries)
    failed: bool = False  # it gave up (ConsumerRebalanceFailedException) until the next directory change


@dataclass(frozen=True, slots=True)
class ZkState:
    registry: int  # /consumers/<group>/ids: registered consumers (bit mask of slots)
    owners: tuple[int, ...]  # /owners/<topic>/<p>: the slot whose ephemeral node holds p, or -1
    consumers: tuple[ZkConsumer, ...]
    budget: int = 0
    lagging: int = 0  # the directory as a lagging ZooKeeper server still serves it (before its last change)


@dataclass(frozen=True, slots=True, repr=False)
class Register(A.Action):
    verb = "opens a ZooKeeper session, registers its ephemeral consumer node and drops what it owned"


@dataclass(frozen=True, slots=True, repr=False)
class Rebalance(A.Action):
    verb = "sees the consumer list changed: releases everything, recomputes its share, claims it"


@dataclass(frozen=True, slots=True, repr=False)
class RebalanceStale(A.Action):
    verb = ("sees the consumer list changed, releases everything, but reads the list from a lagging ZooKeeper "
            "server (a stale view), computes its share over it and claims it")


@dataclass(frozen=True, slots=True, repr=False)
class RetryClaims(A.Action):
    verb = "retries claiming its share after the backoff (and gives up when its retries are used up)"


@dataclass(frozen=True, slots=True, repr=False)
class ZkSessionExpired(A.Action):
    verb = "loses its ZooKeeper session: its ephemeral nodes are deleted"


def exclusive_processing(proto: "ZooKeeper", s: "ZkState") -> str | None:
    """No partition is believed owned by two *running* consumers (ZooKeeper era only).

    Stronger than ``exclusive_ownership``, which counts only consumers holding a live session: here a
    consumer whose session expired but which has not noticed yet (a stale view of itself) counts too,
    because it keeps processing what it believes it owns. Fails in Kafka 0.8 (duplicates), as here.
    """
    seen: dict[int, int] = {}
    for i, owned in proto.running_ownership(s):
        for p in bits(owned):
            if p in seen:
                return (f"partition {proto.partition_name(p)} is processed by both {proto.member_name(seen[p])} and "
                        f"{proto.member_name(i)} (one of them acts on a stale view: its session is gone)")
            seen[p] = i
    return None


EXCLUSIVE_PROCESSING = Property("exclusive_processing", Kind.ALWAYS, exclusive_processing.__doc__ or "",
                                exclusive_processing)


class ZooKeeper(SpecBase):
    name = "zookeeper"
    summary = "0.8 high-level consumer: each consumer rebalances alone from its own ZooKeeper view"
    broken = False
    bug = ""
    expect_violation = ""
    has_generations = False
    coordinator_assigns = False
    max_retries = 2  # rebalance.max.retries (Kafka's default is 4)
    extra_safety = (EXCLUSIVE_PROCESSING,)  # checked by the explorer beside the common properties

    @classmethod
    def applicable_faults(cls) -> frozenset[str]:
        """No topic changes."""
        return SUPPORTED_FAULTS

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
            for cls in (Register, Rebalance, RebalanceStale, RetryClaims, ZkSessionExpired, A.Resume,
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
    def _set(t: tuple[_V, ...], i: int, v: _V) -> tuple[_V, ...]:
        return t[:i] + (v,) + t[i + 1 :]

    def _claim(self, owners: tuple[int, ...], c: ZkConsumer, i: int) -> tuple[tuple[int, ...], ZkConsumer]:
        """Create an owner node per partition of the share, all or nothing (a held node: drop them, retry)."""
        want = self.share(c.view, i)
        if any(owners[p] not in (-1, i) for p in bits(want)):
            return owners, replace(c, owned=0, pending=True)
        o = list(owners)
        for p in bits(want):
            o[p] = i
        return tuple(o), replace(c, owned=want, pending=False)

    def _rebalance(self, s: ZkState, i: int, view: int) -> ZkState:
        c = s.consumers[i]
        owners = tuple(-1 if o == i else o for o in s.owners)
        c2 = replace(c, owned=0, view=view, retries=self.max_retries, failed=False)
        owners, c2 = self._claim(owners, c2, i)
        return replace(s, owners=owners, consumers=self._set(s.consumers, i, c2))

    def _drop_session(self, s: ZkState, i: int) -> ZkState:
        owners = tuple(-1 if o == i else o for o in s.owners)
        c = replace(s.consumers[i], registered=False)
        return replace(s, registry=s.registry & ~(1 << i), lagging=s.registry, owners=owners,
                       consumers=self._set(s.consumers, i, c))

    # -- transitions ----------------------------------------------------------------------------------
    def successors(self, s: ZkState) -> Iterator[tuple[A.Action, ZkState]]:
        acts = self._acts
        faults = self.cfg.faults
        for i, c in enumerate(s.consumers):
            if c.proc == Proc.UP:
                if not c.registered:
                    yield acts[Register][i], replace(
                        s, registry=s.registry | 1 << i, lagging=s.registry,
                        consumers=self._set(s.consumers, i, ZkConsumer(proc=c.proc, registered=True)),
                    )
                elif c.view != s.registry:
                    yield acts[Rebalance][i], self._rebalance(s, i, s.registry)
                    if s.lagging != s.registry and c.view != s.lagging:
                        yield acts[RebalanceStale][i], self._rebalance(s, i, s.lagging)
                elif c.pending:
                    owners, c2 = self._claim(s.owners, c, i)
                    if c2.pending:
                        c2 = replace(c2, retries=c.retries - 1) if c.retries > 1 else replace(
                            c2, retries=0, pending=False, failed=True)
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
    def explain(self, before: ZkState, action: A.Action, after: ZkState) -> str:
        """One line for a step of the timeline (the checker's printer asks the variant)."""
        who = self.member_name(action.member) if action.member >= 0 else ""
        if isinstance(action, A.ExpireLive):
            return (f"{who}'s ZooKeeper session expires while it runs (a network blip): its ephemeral nodes are "
                    f"deleted, but it has not noticed and goes on processing what it owned")
        if isinstance(action, RetryClaims) and after.consumers[action.member].failed:
            return f"{who} retries claiming its share, fails again and gives up: rebalance.max.retries used up"
        if isinstance(action, RetryClaims):
            return f"{who} retries claiming its share after the backoff"
        return action.describe(who).strip()

    def member_name(self, i: int) -> str:
        return f"c{i + 1}"

    def partition_name(self, p: int) -> str:
        return f"t-{p}"

    def live_member(self, s: ZkState, i: int) -> bool:
        c = s.consumers[i]
        return c.proc != Proc.DOWN and c.registered

    def live_ownership(self, s: ZkState) -> Iterator[tuple[int, int]]:
        for i, c in enumerate(s.consumers):
            if c.owned and self.live_member(s, i):
                yield i, c.owned

    def running_ownership(self, s: ZkState) -> Iterator[tuple[int, int]]:
        """Who processes what: every running consumer, with what it believes it owns (session or not)."""
        for i, c in enumerate(s.consumers):
            if c.owned and c.proc == Proc.UP:
                yield i, c.owned

    def notifications(self, s: ZkState, t: ZkState) -> tuple[int, int] | None:
        """Watches fired by the step ``s -> t``: ``None`` unless the consumer directory changed; then
        ``(N, n)``: the group's size N (after a join, before a leave) and n, one watch per consumer
        registered both before and after the change (each wakes up, re-reads and rebalances)."""
        if s.registry == t.registry:
            return None
        size = max(bin(s.registry).count("1"), bin(t.registry).count("1"))
        return size, bin(s.registry & t.registry).count("1")

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
            if not c.registered or c.view != s.registry or c.pending or c.failed:
                return False
            if c.owned != self.share(s.registry, i):
                return False
            everything |= c.owned
        return s.registry != 0 and everything == (1 << self.cfg.partitions) - 1

    def commit_accepted(self, s: ZkState, i: int, ghost: bool = False) -> bool:
        return True

    def key(self, s: ZkState) -> Hashable:
        return s

    def exact_key(self, s: ZkState) -> Hashable:
        return s
