"""Coordinator-side assignment (Kafka's 0.9 design draft, never released), simulated for the pictures.

Theory of operation
-------------------
One coordinator (a broker) keeps the group: its members, their subscriptions, the **generation**, and
who owns which partition. Consumers heartbeat to it; it alone detects changes and it alone computes
the assignment. A run:

1. A new consumer sends JoinGroup with its subscription. The coordinator starts a rebalance: from now
   on it answers every other member's heartbeat with ``ILLEGAL_GENERATION`` (the draft's word for
   "rebalance now"; Kafka 0.9 as released says ``REBALANCE_IN_PROGRESS``, see
   docs/learn/coordinator-side.md).
2. A member told so stops fetching, commits, gives up its partitions (eager: all of them) and sends
   JoinGroup. The coordinator parks every JoinGroup until every known member has joined, or the
   rebalance timeout passes (members that did not join are declared dead).
3. The coordinator computes the assignment itself (range: sorted partitions over sorted member
   names, per topic), bumps the generation, records the owners (the draft wrote them to ZooKeeper),
   and answers every parked JoinGroup with the member's partitions. The member starts fetching them.
4. A member that stops heartbeating (a crash) is declared dead after ``session_timeout_ms``; that starts
   a rebalance the same way.

Because the coordinator knows the owners, it can refuse an offset commit for a partition the committer
does not own in the current generation (``commit``): the draft's fencing, lost in the released design.

The actors
----------
The run is actors of the one contract (``reference/actor.py``) on the one actor driver
(``reference/sim/actor_sim.py``): the coordinator (:class:`CsCoordinator`) and one :class:`CsConsumer` per
process, exchanging ``JoinGroup`` / ``Heartbeat`` / ``OffsetCommit`` and their answers over the network, a
parameter of the run (``delay_ms``, uniform, or ``config.network``: ``reference/sim/network.py``'s delay, loss,
duplication). The coordinator answers a request's sender, one incarnation of a process: a process that crashed
and restarted does not get its predecessor's answers. Session and rebalance timeouts are the coordinator's
timers, the heartbeat interval the consumer's. A crashed process does nothing more (it neither heartbeats nor
commits).

One ``random.Random(seed)`` draws the message delays, so a run is a pure function of its inputs. It writes
the trace format of docs/formats.md (``joined``, eager ``assigned``, ``revoked``, ``left``; the consumers'
listener calls) for the one trace checker (``groupspec.trace``), and a transcript of requests and answers
(``from``/``to``, ``at``, ``request``, ``error``), the same shape as the classic simulator's, so the same
pictures can be drawn.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from ..actor import COORDINATOR, CallListener, Command, Event, Invoked, Received, Send, SetTimer, TimerFired
from ..sim import TOPIC, ActorSim, Address, Links, Network, NetworkConfig, NetworkLinks, UniformLinks

__all__ = ["CsConfig", "CoordinatorSideGroup", "CsCoordinator", "CsConsumer"]


@dataclass(frozen=True)
class CsConfig:
    seed: int = 0
    group_id: str = "g"
    partitions: int = 6
    session_timeout_ms: int = 10000
    heartbeat_interval_ms: int = 3000
    rebalance_timeout_ms: int = 10000  # how long the coordinator waits for known members to rejoin
    delay_ms: tuple[int, int] = (2, 20)  # one-way network delay, uniform
    network: NetworkConfig | None = None  # the network (None: delay_ms, uniform, nothing lost)


# ---------------------------------------------------------------- messages
@dataclass(frozen=True)
class JoinGroup:
    member: str


@dataclass(frozen=True)
class Heartbeat:
    member: str
    generation: int


@dataclass(frozen=True)
class OffsetCommit:
    member: str
    generation: int
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class HeartbeatAnswer:
    error: str  # NONE | UNKNOWN_MEMBER_ID | ILLEGAL_GENERATION (the draft's "rebalance now")


@dataclass(frozen=True)
class JoinAnswer:
    generation: int
    partitions: tuple[int, ...]


# ---------------------------------------------------------------- the coordinator
class CsCoordinator:
    """The broker that keeps the group and computes its assignment (an actor)."""

    def __init__(self, config: CsConfig) -> None:
        self.config = config
        self.members: dict[str, int] = {}  # member -> last time heard from
        self.generation = 0
        self.state = "Empty"  # Empty | Stable | PreparingRebalance
        self.parked: set[str] = set()
        self.answer_to: dict[str, Address] = {}  # a parked JoinGroup's sender: its answer goes there
        self.owners: dict[int, str] = {}
        self.generations: list[tuple[int, int, tuple[str, ...]]] = []  # (ms, generation, members)
        self.rebalances = 0
        self.commits = {"accepted": 0, "rejected": 0}

    def assignment(self, members: list[str]) -> dict[str, tuple[int, ...]]:
        """Range over sorted member names: the coordinator's one strategy (a new one needs a broker upgrade)."""
        out: dict[str, tuple[int, ...]] = {}
        n, k = self.config.partitions, len(members)
        per, extra = divmod(n, k) if k else (0, 0)
        start = 0
        for i, m in enumerate(sorted(members)):
            size = per + (1 if i < extra else 0)
            out[m] = tuple(range(start, start + size))
            start += size
        return out

    def handle(self, now_ms: int, event: Event) -> list[Command]:
        now = now_ms
        if isinstance(event, TimerFired):
            if event.key == "rebalance":
                return self._rebalance_timeout(now)
            return self._session_check(now, event.key.split(":", 1)[1])
        if not isinstance(event, Received) or not isinstance(event.sender, Address):
            return []
        msg, sender = event.message, event.sender
        if isinstance(msg, Heartbeat):
            if msg.member not in self.members:
                error = "UNKNOWN_MEMBER_ID"
            elif self.state == "PreparingRebalance" or msg.generation != self.generation:
                error = "ILLEGAL_GENERATION"
            else:
                error = "NONE"
            out = self._heard(now, msg.member) if msg.member in self.members else []
            return out + [Send(sender, HeartbeatAnswer(error))]
        if isinstance(msg, JoinGroup):
            out = self._heard(now, msg.member)
            self.parked.add(msg.member)
            self.answer_to[msg.member] = sender
            if self.state != "PreparingRebalance":
                out += self._start_rebalance(now)
            return out + self._maybe_complete(now)
        if isinstance(msg, OffsetCommit):  # the draft's fencing: only the owner, in the current generation
            ok = msg.generation == self.generation and all(self.owners.get(p) == msg.member for p in msg.partitions)
            self.commits["accepted" if ok else "rejected"] += 1
        return []

    def _heard(self, now: int, name: str) -> list[Command]:
        self.members[name] = now
        return [SetTimer(now + self.config.session_timeout_ms, f"session:{name}")]

    def _session_check(self, now: int, name: str) -> list[Command]:
        last = self.members.get(name)
        if last is None or now - last < self.config.session_timeout_ms or name in self.parked:
            return []
        del self.members[name]  # declared dead
        for p in [p for p, o in self.owners.items() if o == name]:
            del self.owners[p]
        out = [] if self.state == "PreparingRebalance" else self._start_rebalance(now)
        return out + self._maybe_complete(now)

    def _start_rebalance(self, now: int) -> list[Command]:
        self.state = "PreparingRebalance"
        self.rebalances += 1
        return [SetTimer(now + self.config.rebalance_timeout_ms, "rebalance")]  # replaces an older round's

    def _rebalance_timeout(self, now: int) -> list[Command]:
        if self.state != "PreparingRebalance":
            return []
        for name in [m for m in self.members if m not in self.parked]:
            del self.members[name]  # did not rejoin in time: declared dead
        return self._maybe_complete(now)

    def _maybe_complete(self, now: int) -> list[Command]:
        if self.state != "PreparingRebalance" or not self.parked or set(self.members) - self.parked:
            return []
        self.generation += 1
        members = sorted(self.parked)
        plan = self.assignment(members)
        self.owners = {p: m for m, ps in plan.items() for p in ps}  # the draft stores them (in ZooKeeper)
        self.generations.append((now, self.generation, tuple(members)))
        self.state = "Stable"
        self.parked = set()
        return [Send(self.answer_to[m], JoinAnswer(self.generation, plan[m])) for m in members]


# ---------------------------------------------------------------- a consumer
class CsConsumer:
    """One consumer (an actor): it joins, heartbeats, and on ``ILLEGAL_GENERATION`` gives up everything (eager)
    and rejoins; it fetches what the coordinator's answer gives it."""

    def __init__(self, name: str, config: CsConfig) -> None:
        self.name = name
        self.config = config
        self.alive = True
        self.generation = 0
        self.owned: tuple[int, ...] = ()
        self.joining = False

    def _join(self) -> list[Command]:
        self.joining = True
        return [Send(COORDINATOR, JoinGroup(self.name))]

    def _beat(self, now: int) -> SetTimer:
        return SetTimer(now + self.config.heartbeat_interval_ms, "heartbeat")

    def handle(self, now_ms: int, event: Event) -> list[Command]:
        now = now_ms
        if isinstance(event, Invoked):
            if event.call == "start":
                return self._join()
            if event.call == "commit":
                parts = dict(event.args).get("partitions", self.owned)
                return [Send(COORDINATOR, OffsetCommit(self.name, self.generation, tuple(parts)))]
            self.alive = False  # a crash: it processes nothing more; the coordinator notices at the session timeout
            self.owned = ()
            return []
        if isinstance(event, TimerFired):
            return [] if self.joining else [Send(COORDINATOR, Heartbeat(self.name, self.generation))]
        msg = event.message
        if isinstance(msg, HeartbeatAnswer):
            if msg.error == "NONE":
                return [self._beat(now)]
            if self.joining:
                return []
            out: list[Command] = []
            if self.owned:  # stop, commit, give up everything, rejoin
                out.append(CallListener("onPartitionsRevoked", tuple((TOPIC, p) for p in self.owned), self.generation))
                self.owned = ()
            return out + self._join()
        if isinstance(msg, JoinAnswer):
            self.joining = False
            self.generation = msg.generation
            self.owned = msg.partitions
            return [CallListener("onPartitionsAssigned", tuple((TOPIC, p) for p in msg.partitions), msg.generation),
                    self._beat(now)]
        return []


# ---------------------------------------------------------------- the run
class CoordinatorSideGroup(ActorSim):
    """One group's run on the one actor driver; schedule with :meth:`at`, then :meth:`run_until`."""

    def __init__(self, config: CsConfig | None = None) -> None:
        self.config = config or CsConfig()
        self.rng = random.Random(self.config.seed)  # the message delays
        self.trace = self._start_clock(self.config.group_id, self.config.partitions)
        links: Links = (NetworkLinks(Network(self.config.network, self.rng)) if self.config.network is not None
                        else UniformLinks(self.rng, self.config.delay_ms))
        self._start_actors(links)
        self.coordinator = CsCoordinator(self.config)
        self.spawn(COORDINATOR, self.coordinator)
        self.consumers: dict[str, CsConsumer] = {}  # the current process of every consumer ever started
        self.transcript: list[dict[str, Any]] = []

    # ---------------------------------------------------------------- scheduling
    def at(self, time_ms: int, action: str, name: str, **args: Any) -> None:
        if action not in ("start", "crash", "commit"):
            raise ValueError(f"unknown coordinator-side action {action!r}; choose from start, crash, commit")
        self.schedule(time_ms, action, name, args)

    def act(self, name: str, call: str, args: dict[str, Any]) -> None:
        if call == "start":
            if self.is_up(name):
                return
            self.consumers[name] = CsConsumer(name, self.config)
            self.spawn(name, self.consumers[name])
            self._line(name, "joined")
            self.handle(name, Invoked("start"))
        elif self.is_up(name):
            self.handle(name, Invoked(call, tuple(args.items())))
            if call == "crash":
                self._line(name, "left")
                self.kill(name)
        self.drain()

    # ---------------------------------------------------------------- the trace and the transcript
    def _line(self, name: str, event: str, parts: tuple[int, ...] | None = None, generation: int = 0) -> None:
        ev: dict[str, Any] = {"ts_ms": self.now, "group": self.config.group_id, "member": name, "event": event}
        if parts is not None:
            ev["partitions"] = [[TOPIC, p] for p in parts]
        ev["generation"] = generation
        ev["protocol"] = "eager"
        self.trace.append(ev)

    def listener_line(self, name: str, cmd: CallListener) -> None:
        event = "assigned" if cmd.callback == "onPartitionsAssigned" else "revoked"
        self._line(name, event, tuple(p for _t, p in cmd.partitions), cmd.generation)

    def observe(self, kind: str, src: Address, dst: str | Address, message: object) -> None:
        """The transcript: every JoinGroup sent, every JoinGroup answer and failed heartbeat a process reads."""
        if kind == "sent" and isinstance(message, JoinGroup):
            self.transcript.append({"at": self.now, "request": "JoinGroup", "from": src.name})
        elif kind == "delivered" and isinstance(dst, Address):
            if isinstance(message, JoinAnswer):
                self.transcript.append({"at": self.now, "request": "JoinGroup", "to": dst.name, "error": "NONE"})
            elif isinstance(message, HeartbeatAnswer) and message.error != "NONE":
                self.transcript.append({"at": self.now, "request": "Heartbeat", "to": dst.name, "error": message.error})

    # ---------------------------------------------------------------- what the pictures and tests read
    def assignment(self, members: list[str]) -> dict[str, tuple[int, ...]]:
        return self.coordinator.assignment(members)

    @property
    def members(self) -> dict[str, int]:
        return self.coordinator.members

    @property
    def owners(self) -> dict[int, str]:
        return self.coordinator.owners

    @property
    def generation(self) -> int:
        return self.coordinator.generation

    @property
    def generations(self) -> list[tuple[int, int, tuple[str, ...]]]:
        return self.coordinator.generations

    @property
    def rebalances(self) -> int:
        return self.coordinator.rebalances

    @property
    def commits(self) -> dict[str, int]:
        return self.coordinator.commits
