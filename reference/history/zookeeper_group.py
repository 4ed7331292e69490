"""A ZooKeeper-era consumer group (Kafka 0.8's high-level consumer), simulated for measurement.

Theory of operation
-------------------
There is no coordinator. Every consumer registers an ephemeral node under ``/consumers/<g>/ids`` and
watches that directory. When the member list changes, ZooKeeper notifies **every** registered
consumer (one notification each: the herd). Each one, on its own, at the moment its notification
arrives:

1. releases everything it owns (deletes its ``/owners/<topic>/<p>`` nodes);
2. reads the member list - its *view* (``read_lag_ms`` can make it lag the truth, as a read served
   by a follower that is behind; by default it is current: a notified session reads at least the
   change it was notified of, and views still differ because consumers act at different moments);
3. computes its share with the range split over its view (sorted partitions over sorted consumers);
4. tries to create the owner node of each partition of its share. A node still held by another
   consumer fails the claim: it drops what it claimed, waits ``rebalance.backoff.ms`` and starts
   again from 1, at most ``rebalance.max.retries`` times; then it gives up
   (``ConsumerRebalanceFailedException``) and owns nothing until the next change.

*Split brain.* A consumer connected to a ZooKeeper follower that lags (``lagging``: consumer -> ms) gets
every notification that much later, and its reads show the registry as it was that long ago: it still
sees every change it was notified of, but it may miss the ones that came after. Such a consumer splits
the partitions over an older member list than the others, so two consumers pick the same partition:
the one that creates the owner node first keeps it, the other's claim fails (recorded in ``claims``:
time, claimer, partition, holder, the claimer's view), and it backs off and retries; partitions nobody's
share covers stay unowned, and a consumer whose retries run out gives up until the next change. The
owner nodes themselves are never held twice (creates are linearizable); what two consumers hold at
once is a *claim* on one partition, each from its own view. Every attempt is kept in ``attempts``
(time, consumer, view, share, whether the claims succeeded), and every notification in
``notified`` (time, consumer), and each give-up in ``gave_up_log``, for the pictures.

A closed consumer deletes its nodes at once; a crashed one keeps them until its ZooKeeper session
expires (``zookeeper.session.timeout.ms``), and only then do the others get notified.

Everything runs on one virtual clock with a ``random.Random(seed)`` for the notification delays and
read lags, so a run is a pure function of its inputs. It writes the same trace format as the
simulator (the trace format of docs/formats.md: ``joined``, eager ``assigned``, ``revoked``, ``left``; the
generation is the number of membership changes seen), and counts what the herd costs:
``notifications``, ``rebalance_attempts``, ``failed_claims``, ``gave_up``.

Kafka facts used (0.8 ``ZookeeperConsumerConnector``): backoff 2000 ms, 4 retries, session 6000 ms.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from ..sim import TOPIC, VirtualClock

__all__ = ["ZkConfig", "ZkGroup"]



@dataclass(frozen=True)
class ZkConfig:
    seed: int = 0
    group_id: str = "g"
    partitions: int = 6
    session_timeout_ms: int = 6000  # zookeeper.session.timeout.ms
    backoff_ms: int = 2000  # rebalance.backoff.ms
    max_retries: int = 4  # rebalance.max.retries
    notify_delay_ms: tuple[int, int] = (1, 50)  # watch notification delivery, uniform
    read_lag_ms: tuple[int, int] = (0, 0)  # how far behind a consumer's read of the member list is (0: none)
    lagging: tuple[tuple[str, int], ...] = ()  # (consumer, ms): its ZooKeeper server lags that far behind


@dataclass
class _Consumer:
    name: str
    alive: bool = True
    registered: bool = True
    owned: tuple[int, ...] = ()
    retries: int = 0
    epoch: int = 0  # bumped at every notification: older retries are dropped


@dataclass
class ZkGroup(VirtualClock):
    """One group's run; schedule with :meth:`at`, then :meth:`run_until`."""

    config: ZkConfig = field(default_factory=ZkConfig)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.config.seed)
        self.consumers: dict[str, _Consumer] = {}
        self.registry_history: list[tuple[int, tuple[str, ...]]] = [(0, ())]
        self.owners: dict[int, str] = {}
        self.changes = 0
        self.notifications = 0
        self.rebalance_attempts = 0
        self.failed_claims = 0
        self.gave_up = 0
        self.trace: list[dict[str, Any]] = self._start_clock(self.config.group_id, self.config.partitions)
        self.claims: list[tuple[int, str, int, str, tuple[str, ...]]] = []  # failed: (ms, claimer, partition, holder, view)
        self.attempts: list[tuple[int, str, tuple[str, ...], tuple[int, ...], bool]] = []  # (ms, who, view, share, ok)
        self.notified: list[tuple[int, str]] = []  # (ms delivered, consumer)
        self.gave_up_log: list[tuple[int, str]] = []  # (ms, consumer): its retries ran out
        self._lag = dict(self.config.lagging)

    # ---------------------------------------------------------------- scheduling
    def at(self, time_ms: int, action: str, name: str) -> None:
        if action not in ("start", "close", "crash"):
            raise ValueError(f"unknown ZooKeeper-group action {action!r}; choose from start, close, crash")
        self._push(time_ms, action, name)

    # ---------------------------------------------------------------- helpers
    def _line(self, name: str, event: str, parts: tuple[int, ...] | None = None) -> None:
        ev: dict[str, Any] = {"ts_ms": self.now, "group": self.config.group_id, "member": name, "event": event}
        if parts is not None:
            ev["partitions"] = [[TOPIC, p] for p in parts]
        ev["generation"] = self.changes
        ev["protocol"] = "eager"
        self.trace.append(ev)

    def _registry(self) -> tuple[str, ...]:
        return self.registry_history[-1][1]

    def view_at(self, as_of: int) -> tuple[str, ...]:
        """The registry's member list as it was at ``as_of`` (what a read served that late returns)."""
        return self._view(as_of)

    def _view(self, as_of: int) -> tuple[str, ...]:
        view: tuple[str, ...] = ()
        for t, members in self.registry_history:
            if t <= as_of:
                view = members
        return view

    def _set_registry(self, members: tuple[str, ...]) -> None:
        self.registry_history.append((self.now, tuple(sorted(members))))
        self.changes += 1
        for n in self._registry():
            self.notifications += 1
            lo, hi = self.config.notify_delay_ms
            self._push(self.now + self.rng.randint(lo, hi) + self._lag.get(n, 0), "notify", n)

    def _release(self, c: _Consumer) -> None:
        if c.owned:
            for p in c.owned:
                if self.owners.get(p) == c.name:
                    del self.owners[p]
            self._line(c.name, "revoked", c.owned)
            c.owned = ()

    def _share(self, name: str, view: tuple[str, ...]) -> tuple[int, ...]:
        if name not in view:
            return ()
        n, k = self.config.partitions, len(view)
        i = view.index(name)
        per, extra = divmod(n, k)
        start = i * per + min(i, extra)
        return tuple(range(start, start + per + (1 if i < extra else 0)))

    # ---------------------------------------------------------------- events
    def _on_start(self, name: str) -> None:
        old = self.consumers.get(name)
        if old is not None and old.alive:
            return
        c = _Consumer(name, epoch=(old.epoch + 1) if old else 0)
        self.consumers[name] = c
        self._line(name, "joined")
        self._set_registry(tuple(set(self._registry()) | {name}))

    def _on_close(self, name: str) -> None:
        c = self.consumers.get(name)
        if c is None or not c.alive:
            return
        self._release(c)
        c.alive = c.registered = False
        c.epoch += 1
        self._line(name, "left")
        self._set_registry(tuple(set(self._registry()) - {name}))

    def _on_crash(self, name: str) -> None:
        c = self.consumers.get(name)
        if c is None or not c.alive:
            return
        c.alive = False
        c.epoch += 1
        self._line(name, "left")  # it processes nothing more; its nodes stay until the session expires
        self._push(self.now + self.config.session_timeout_ms, "expire", name)

    def _on_expire(self, name: str) -> None:
        c = self.consumers[name]
        if c.alive or not c.registered:
            return
        c.registered = False
        for p in [p for p, o in self.owners.items() if o == name]:
            del self.owners[p]
        c.owned = ()
        self._set_registry(tuple(set(self._registry()) - {name}))

    def _on_notify(self, name: str) -> None:
        """A watch notification arrives: the consumer drops any retry it had pending and rebalances now."""
        c = self.consumers.get(name)
        if c is None or not c.alive:
            return
        c.epoch += 1
        c.retries = 0
        self.notified.append((self.now, name))
        self._on_rebalance((name, c.epoch))

    def _on_rebalance(self, arg: tuple[str, int]) -> None:
        name, epoch = arg
        c = self.consumers.get(name)
        if c is None or not c.alive or c.epoch != epoch:
            return
        self.rebalance_attempts += 1
        self._release(c)
        lo, hi = self.config.read_lag_ms
        view = self._view(self.now - self.rng.randint(lo, hi) - self._lag.get(name, 0))
        share = self._share(name, view)
        held = [p for p in share if p in self.owners]
        self.attempts.append((self.now, name, view, share, not held))
        if held:
            self.failed_claims += 1
            self.claims += [(self.now, name, p, self.owners[p], view) for p in held]
            if c.retries >= self.config.max_retries:
                self.gave_up += 1
                self.gave_up_log.append((self.now, name))
                return
            c.retries += 1
            self._push(self.now + self.config.backoff_ms, "rebalance", (name, epoch))
            return
        for p in share:
            self.owners[p] = name
        c.owned = share
        self._line(name, "assigned", share)
