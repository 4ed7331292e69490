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

The actors
----------
The run is actors of the one contract (``reference/actor.py``) on the one actor driver
(``reference/sim/actor_sim.py``): the ensemble (:class:`ZooKeeper`: the registry and its history, the owner
nodes, the sessions, and the lagging servers' reads) and one :class:`ZkConsumer` per process. A consumer's
ZooKeeper calls (``Register``, ``Read``, ``Create``, ``Close``) are synchronous links (the client blocks until
the server answers); the watch notifications (``WatchFired``) go over the network, a parameter of the run
(``notify_delay_ms``, uniform, or ``config.network``: ``reference/sim/network.py``'s delay, loss,
duplication), plus the lagging server's lag. A crash drops the process's connection (``SessionLost``); the
ensemble's own timer expires the session. The consumers' listener calls become the trace lines.

One ``random.Random(seed)`` draws the notification delays and read lags, in order, so a run is a pure function
of its inputs. It writes the same trace format as the simulator (the trace format of docs/formats.md:
``joined``, eager ``assigned``, ``revoked``, ``left``; the era has no generation: a line's ``generation`` is
the number of membership changes so far) for the one trace checker (``groupspec.trace``), and counts what the
herd costs (:class:`ZkRecord`): ``notifications``, ``rebalance_attempts``, ``failed_claims``, ``gave_up``.

Kafka facts used (0.8 ``ZookeeperConsumerConnector``): backoff 2000 ms, 4 retries, session 6000 ms.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from ..actor import CallListener, Command, Event, Invoked, Received, Send, SetTimer, TimerFired
from ..sim import TOPIC, ActorSim, Address, Network, NetworkConfig, NetworkLinks, UniformLinks

__all__ = ["ZkConfig", "ZkGroup", "ZooKeeper", "ZkConsumer", "ZkRecord", "ZOOKEEPER"]

ZOOKEEPER = "zookeeper"  # the ensemble's name among the actors


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
    network: NetworkConfig | None = None  # the watch notifications' network (None: notify_delay_ms, uniform)


# ---------------------------------------------------------------- messages
# A consumer's ZooKeeper calls (the client blocks until the server answers: synchronous links) ...
@dataclass(frozen=True)
class Register:
    """Create my ephemeral node under ``/consumers/<g>/ids`` (and watch the directory)."""


@dataclass(frozen=True)
class Close:
    """Delete my owner nodes ``owned`` and my ephemeral node (a graceful close)."""

    owned: tuple[int, ...]


@dataclass(frozen=True)
class SessionLost:
    """My process died: its connection is gone; the session lives until it expires."""


@dataclass(frozen=True)
class Read:
    """Delete my owner nodes ``release``, then read the member list."""

    release: tuple[int, ...]


@dataclass(frozen=True)
class View:
    """The member list as the consumer's server has it."""

    members: tuple[str, ...]


@dataclass(frozen=True)
class Create:
    """Create the owner node of every partition of ``share``, all or none (a ZooKeeper multi)."""

    share: tuple[int, ...]


@dataclass(frozen=True)
class Created:
    """``held``: the partitions whose node another consumer holds, with the holder (empty: all created)."""

    held: tuple[tuple[int, str], ...]


# ... and the ensemble's watch notification (over the network).
@dataclass(frozen=True)
class WatchFired:
    """The member list changed."""


@dataclass
class ZkRecord:
    """What the consumers' rebalances cost, for the pictures and the sweep (the actors write it)."""

    rebalance_attempts: int = 0
    failed_claims: int = 0
    gave_up: int = 0
    claims: list[tuple[int, str, int, str, tuple[str, ...]]] = field(default_factory=list)  # failed: (ms, claimer, partition, holder, view)
    attempts: list[tuple[int, str, tuple[str, ...], tuple[int, ...], bool]] = field(default_factory=list)  # (ms, who, view, share, ok)
    notified: list[tuple[int, str]] = field(default_factory=list)  # (ms delivered, consumer)
    gave_up_log: list[tuple[int, str]] = field(default_factory=list)  # (ms, consumer): its retries ran out


# ---------------------------------------------------------------- the ensemble
class ZooKeeper:
    """The ensemble (an actor): the member registry with its history, the owner nodes, the sessions. A
    lagging server (``lagging``) answers reads that far in the past and delivers watches that much later."""

    def __init__(self, config: ZkConfig, rng: random.Random) -> None:
        self.config = config
        self.rng = rng
        self.registry_history: list[tuple[int, tuple[str, ...]]] = [(0, ())]
        self.owners: dict[int, str] = {}
        self.changes = 0
        self.notifications = 0
        self.lag = dict(config.lagging)
        self.registered: set[str] = set()
        self.lost: set[str] = set()  # sessions whose process died, until they expire
        self._expiries = 0

    def registry(self) -> tuple[str, ...]:
        return self.registry_history[-1][1]

    def view_at(self, as_of: int) -> tuple[str, ...]:
        """The registry's member list as it was at ``as_of`` (what a read served that late returns)."""
        view: tuple[str, ...] = ()
        for t, members in self.registry_history:
            if t <= as_of:
                view = members
        return view

    def _set_registry(self, now: int, members: set[str]) -> list[Command]:
        self.registry_history.append((now, tuple(sorted(members))))
        self.changes += 1
        self.notifications += len(self.registry())
        return [Send(n, WatchFired()) for n in self.registry()]

    def _drop_owner_nodes(self, name: str, parts: tuple[int, ...] | None = None) -> None:
        for p in [p for p, o in self.owners.items() if o == name] if parts is None else parts:
            if self.owners.get(p) == name:
                del self.owners[p]

    def handle(self, now_ms: int, event: Event) -> list[Command]:
        now = now_ms
        if isinstance(event, TimerFired):  # a lost session's timeout
            name = event.key.split(":", 2)[2]
            if name not in self.lost or name not in self.registered:
                return []
            self.registered.discard(name)
            self.lost.discard(name)
            self._drop_owner_nodes(name)
            return self._set_registry(now, set(self.registry()) - {name})
        if not isinstance(event, Received) or not isinstance(event.sender, Address):
            return []
        who, msg = event.sender, event.message
        name = who.name
        if isinstance(msg, Read):
            self._drop_owner_nodes(name, msg.release)
            lo, hi = self.config.read_lag_ms
            return [Send(who, View(self.view_at(now - self.rng.randint(lo, hi) - self.lag.get(name, 0))))]
        if isinstance(msg, Create):
            held = tuple((p, self.owners[p]) for p in msg.share if p in self.owners)
            if not held:
                for p in msg.share:
                    self.owners[p] = name
            return [Send(who, Created(held))]
        if isinstance(msg, Register):
            self.registered.add(name)
            self.lost.discard(name)
            return self._set_registry(now, set(self.registry()) | {name})
        if isinstance(msg, Close):
            self._drop_owner_nodes(name, msg.owned)
            if name not in self.registered:  # its node is gone already (or never was): no write, no watch fires
                return []
            self.registered.discard(name)
            return self._set_registry(now, set(self.registry()) - {name})
        if isinstance(msg, SessionLost):
            self.lost.add(name)
            self._expiries += 1  # every loss expires on its own (a later one does not replace it)
            return [SetTimer(now + self.config.session_timeout_ms, f"expire:{self._expiries}:{name}")]
        return []


# ---------------------------------------------------------------- a consumer
class ZkConsumer:
    """One consumer (an actor): on every watch notification it drops what it owns, reads the member list,
    computes its range share and claims it; a failed claim backs off and retries, at most ``max_retries`` times."""

    def __init__(self, name: str, config: ZkConfig, record: ZkRecord) -> None:
        self.name = name
        self.config = config
        self.record = record
        self.alive = True
        self.owned: tuple[int, ...] = ()
        self.retries = 0
        self.epoch = 0  # bumped at every notification: older retries are dropped
        self._view: tuple[str, ...] = ()
        self._share: tuple[int, ...] = ()

    def share(self, view: tuple[str, ...]) -> tuple[int, ...]:
        """Range over the view: sorted partitions over sorted consumers."""
        if self.name not in view:
            return ()
        n, k = self.config.partitions, len(view)
        i = view.index(self.name)
        per, extra = divmod(n, k)
        start = i * per + min(i, extra)
        return tuple(range(start, start + per + (1 if i < extra else 0)))

    def _revoke(self) -> list[Command]:
        owned, self.owned = self.owned, ()
        return [CallListener("onPartitionsRevoked", tuple((TOPIC, p) for p in owned))] if owned else []

    def _rebalance(self, now: int) -> list[Command]:
        self.record.rebalance_attempts += 1
        owned = self.owned
        return [*self._revoke(), Send(ZOOKEEPER, Read(owned))]

    def handle(self, now_ms: int, event: Event) -> list[Command]:
        now = now_ms
        if isinstance(event, Invoked):
            if event.call == "start":
                return [Send(ZOOKEEPER, Register())]
            self.alive = False
            if event.call == "close":
                owned = self.owned
                return [*self._revoke(), Send(ZOOKEEPER, Close(owned))]
            return [Send(ZOOKEEPER, SessionLost())]  # a crash: its nodes stay until the session expires
        if isinstance(event, TimerFired):  # a retry after the backoff, unless a notification came since
            return self._rebalance(now) if event.key == f"rebalance:{self.epoch}" else []
        msg = event.message
        if isinstance(msg, WatchFired):  # drop any pending retry and rebalance now
            self.epoch += 1
            self.retries = 0
            self.record.notified.append((now, self.name))
            return self._rebalance(now)
        if isinstance(msg, View):
            self._view, self._share = msg.members, self.share(msg.members)
            return [Send(ZOOKEEPER, Create(self._share))]
        if isinstance(msg, Created):
            r, view, share = self.record, self._view, self._share
            r.attempts.append((now, self.name, view, share, not msg.held))
            if not msg.held:
                self.owned = share
                return [CallListener("onPartitionsAssigned", tuple((TOPIC, p) for p in share))]
            r.failed_claims += 1
            r.claims += [(now, self.name, p, holder, view) for p, holder in msg.held]
            if self.retries >= self.config.max_retries:
                r.gave_up += 1
                r.gave_up_log.append((now, self.name))
                return []
            self.retries += 1
            return [SetTimer(now + self.config.backoff_ms, f"rebalance:{self.epoch}")]
        return []


class ZkLinks:
    """The run's network: a consumer's ZooKeeper calls are synchronous; a watch notification takes the network's
    delay (``notify_delay_ms`` uniform, or ``config.network``'s) plus its lagging server's lag."""

    def __init__(self, config: ZkConfig, rng: random.Random) -> None:
        self.lag = dict(config.lagging)
        self.net = (NetworkLinks(Network(config.network, rng)) if config.network is not None
                    else UniformLinks(rng, config.notify_delay_ms))

    def deliveries(self, now: int, src: str, dst: str, message: object) -> list[int] | None:
        if not isinstance(message, WatchFired):
            return None
        at = self.net.deliveries(now, src, dst, message)
        return [t + self.lag.get(dst, 0) for t in at] if at else at


# ---------------------------------------------------------------- the run
class ZkGroup(ActorSim):
    """One group's run on the one actor driver; schedule with :meth:`at`, then :meth:`run_until`."""

    def __init__(self, config: ZkConfig | None = None) -> None:
        self.config = config or ZkConfig()
        self.rng = random.Random(self.config.seed)  # one stream: notification delays and read lags, in order
        self.trace = self._start_clock(self.config.group_id, self.config.partitions)
        self._start_actors(ZkLinks(self.config, self.rng))
        self.zookeeper = ZooKeeper(self.config, self.rng)
        self.spawn(ZOOKEEPER, self.zookeeper)
        self.record = ZkRecord()
        self.consumers: dict[str, ZkConsumer] = {}  # the current process of every consumer ever started

    # ---------------------------------------------------------------- scheduling
    def at(self, time_ms: int, action: str, name: str) -> None:
        if action not in ("start", "close", "crash"):
            raise ValueError(f"unknown ZooKeeper-group action {action!r}; choose from start, close, crash")
        self.schedule(time_ms, action, name)

    def act(self, name: str, call: str, args: dict[str, Any]) -> None:
        if call == "start":
            if self.is_up(name):
                return
            self.consumers[name] = ZkConsumer(name, self.config, self.record)
            self.spawn(name, self.consumers[name])
            self._line(name, "joined")
            self.handle(name, Invoked("start"))
        else:  # close (it deletes its nodes) or crash (its session expires later)
            if not self.is_up(name):
                return
            self.handle(name, Invoked(call))
            self._line(name, "left")
            self.kill(name)
        self.drain()

    # ---------------------------------------------------------------- the trace
    def _line(self, name: str, event: str, parts: tuple[int, ...] | None = None) -> None:
        ev: dict[str, Any] = {"ts_ms": self.now, "group": self.config.group_id, "member": name, "event": event}
        if parts is not None:
            ev["partitions"] = [[TOPIC, p] for p in parts]
        ev["generation"] = self.zookeeper.changes  # the era has no generation: the membership changes so far
        ev["protocol"] = "eager"
        self.trace.append(ev)

    def listener_line(self, name: str, cmd: CallListener) -> None:
        event = "assigned" if cmd.callback == "onPartitionsAssigned" else "revoked"
        self._line(name, event, tuple(p for _t, p in cmd.partitions))

    # ---------------------------------------------------------------- what the pictures read
    @property
    def registry_history(self) -> list[tuple[int, tuple[str, ...]]]:
        return self.zookeeper.registry_history

    @property
    def owners(self) -> dict[int, str]:
        return self.zookeeper.owners

    @property
    def changes(self) -> int:
        return self.zookeeper.changes

    @property
    def notifications(self) -> int:
        return self.zookeeper.notifications

    def view_at(self, as_of: int) -> tuple[str, ...]:
        return self.zookeeper.view_at(as_of)

    @property
    def rebalance_attempts(self) -> int:
        return self.record.rebalance_attempts

    @property
    def failed_claims(self) -> int:
        return self.record.failed_claims

    @property
    def gave_up(self) -> int:
        return self.record.gave_up

    @property
    def claims(self) -> list[tuple[int, str, int, str, tuple[str, ...]]]:
        return self.record.claims

    @property
    def attempts(self) -> list[tuple[int, str, tuple[str, ...], tuple[int, ...], bool]]:
        return self.record.attempts

    @property
    def notified(self) -> list[tuple[int, str]]:
        return self.record.notified

    @property
    def gave_up_log(self) -> list[tuple[int, str]]:
        return self.record.gave_up_log
