"""Deterministic discrete-event simulator: consumers, a coordinator (plus a standby), a network.

Theory of operation
-------------------
Everything happens on a virtual clock (ms). The simulator is a thin driver around sans-IO actors:

* two brokers, each a :class:`~groupspec.reference.classic.coordinator.GroupCoordinator` sharing one
  :class:`~groupspec.reference.classic.coordinator.GroupMetadataLog` (the ``__consumer_offsets`` data).
  Broker 1 leads the group's offsets partition at the start; broker 2 is the standby that loads it
  on failover (``unload_partition`` on the old leader, ``load_partition(complete=False)`` on the
  new one, ``finish_loading`` after ``load_delay_ms``; meanwhile it answers
  COORDINATOR_LOAD_IN_PROGRESS as Kafka does);
* N :class:`~groupspec.reference.classic.client.Consumer` members, each with an application thread
  that polls every ``poll_interval_ms`` and a heartbeat thread woken at ``next_timer_ms()``;
* a :class:`~groupspec.reference.sim.network.Network` deciding delay, loss, duplication and
  reordering - a parameter of the run, invisible to the actors.

One priority queue holds every future event ``(time, seq, kind, ...)``; ``seq`` is a global
counter, so ties are broken by creation order and a run is a pure function of its inputs and the
seed. The run's ``random.Random(seed)`` is the only source of randomness (the network uses it; the
coordinator's member ids come from a counter). Same seed and inputs -> the same trace and the
same transcript, byte for byte.

Connections: a request carries the sender's connection number (``Consumer.connection``, bumped on
every disconnect, and the process incarnation, bumped on restart). The coordinator answers to
that connection; a reply arriving on a connection the consumer has since dropped is discarded
(counted as ``dropped_stale``). Replies are matched to requests exactly,
through the sender identity ``(process, connection, correlation id)`` handed to the coordinator.

Members are consumers; ``start`` with ``member=ConnectWorker`` (from
:mod:`groupspec.reference.connect.worker`) runs a Kafka Connect worker instead, whose connector's task
count is the partition count of the topic named like the connector (``partitions`` changes it).

Faults (scheduled with :meth:`Simulator.at` or the helpers): ``start``, ``close`` (graceful),
``crash`` (no callbacks, no LeaveGroup), ``restart`` (crash if alive, then a fresh process with
the same name), ``pause`` (a GC pause: the process handles nothing - no poll, no heartbeat, no
replies - until it ends; queued inputs are then handled in order), ``stall`` (the application
thread is busy processing and does not poll, while the heartbeat thread keeps running: this is how
``max.poll.interval.ms`` expires), ``failover`` (coordinator
moves to the other broker), ``store_fails`` (the next group-metadata write fails with an error),
``network`` (switch to another :class:`NetworkConfig` from now on, e.g. to heal a lossy network),
``partitions`` (a topic's partition count changes; a ``topic`` trace line records it).
Application calls: ``subscribe`` (``topics=(...)``: ``KafkaConsumer.subscribe`` on a running
member, which rejoins at its next poll) and ``commit`` (``KafkaConsumer.commitAsync()`` of the
owned partitions); a call made while the process is paused or busy waits until that ends.

Inspection: :meth:`step` processes one event and returns a :class:`StepRecord` (what happened and
the trace lines it produced); :meth:`run_until` and :meth:`run` loop over it; :meth:`snapshot`
gives plain data for every actor at any point. ``trace`` is the trace-format (docs/formats.md) event
list, ``transcript()`` the coordinator's requests and answers, ``group_log`` each change of the
group's status or generation.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..actor import Command, Event, Invoked, Received, Send as ActorSend, SetTimer, TimerFired
from ..assignors import get as get_assignor
from ..classic import (
    DEADLINE, TICK, Consumer, ConsumerConfig, ConsumerProtocolError, CoordinatorConfig, FindCoordinatorRequest,
    FindCoordinatorResponse, GroupCoordinator, GroupMetadataLog, MemberEvent, Outbound, Request, Response, Send,
    decode_assignment, request_name,
)
from ..connect import decode_connect_assignment
from ..errors import Error
from .network import Envelope, Network, NetworkConfig
from .virtual_clock import VirtualClock

__all__ = ["SimConfig", "Simulator", "StepRecord"]

_TICK, _POLL = TimerFired(TICK), Invoked("poll")  # the two most frequent events (immutable: shared)
_CONN_SPAN = 1_000_000  # connection id = incarnation * span + Consumer.connection
_QUIET = ("", "", "")
_BROKER_NAME = {1: "broker-1", 2: "broker-2"}  # a broker's network name, and back
_BROKER_NODE = {v: k for k, v in _BROKER_NAME.items()}  # what a step says on the quiet path (run_quietly_until reads no StepRecord)


@dataclass(frozen=True)
class SimConfig:
    """Inputs of a run besides the scheduled actions."""

    seed: int = 0
    group_id: str = "g"
    topics: tuple[tuple[str, int], ...] = (("t", 6),)
    network: NetworkConfig = NetworkConfig()
    initial_rebalance_delay_ms: int = 3000
    poll_interval_ms: int = 200
    load_delay_ms: int = 500
    coordinator_faults: frozenset[str] = frozenset()


@dataclass(frozen=True)
class StepRecord:
    """What one :meth:`Simulator.step` did."""

    time_ms: int
    kind: str  # deliver | poll | tick | broker | action | drop
    actor: str
    detail: str
    trace: tuple[dict[str, Any], ...] = ()


@dataclass
class SimProc:
    name: str
    incarnation: int
    consumer: Consumer
    alive: bool = True
    paused_until: int = 0
    stalled_until: int = 0  # the application thread is busy (no poll); the heartbeat thread runs
    seen_events: int = 0


class Simulator(VirtualClock):
    """A seeded, step-wise simulation of one consumer group."""

    def __init__(self, config: SimConfig | None = None) -> None:
        self.config = config or SimConfig()
        self.rng = random.Random(self.config.seed)
        self.network = Network(self.config.network, self.rng)
        self._reset_clock()
        self.log = GroupMetadataLog()
        cc = CoordinatorConfig(initial_rebalance_delay_ms=self.config.initial_rebalance_delay_ms)
        self.partition = GroupCoordinator(cc).partition_of(self.config.group_id)
        self.brokers: dict[int, GroupCoordinator] = {
            1: GroupCoordinator(replace(cc, node_id=1), self.log, self.config.coordinator_faults, [self.partition]),
            2: GroupCoordinator(replace(cc, node_id=2), self.log, self.config.coordinator_faults, []),
        }
        self.leader: int | None = 1
        self.procs: dict[str, SimProc] = {}
        self.topic_counts: dict[str, int] = dict(self.config.topics)
        self.trace: list[dict[str, Any]] = [
            {"ts_ms": 0, "group": self.config.group_id, "event": "topic", "topic": t, "partitions": n}
            for t, n in self.config.topics
        ]
        self.group_log: list[dict[str, Any]] = []
        self._transcript: list[tuple[Any, ...]] = []
        # earliest pending wake-up per consumer process / broker (later ones are not queued: the
        # earlier wake-up re-arms the timer when it fires)
        self._wake_at: dict[Any, int] = {}
        self._quiet = False  # run_quietly_until: steps return no description
        self._last_group: tuple[Any, ...] | None = None
        # NOTE(sim-hooks): observers run after every consumer input, before its sends go out; each may
        # adjust the member (positions) and return more requests (reference/sim/records.py uses this).
        self.hooks: list[Callable[[Simulator, SimProc], list[Send]]] = []

    # ------------------------------------------------------------------ scheduling API

    def at(self, time_ms: int, action: str, name: str | None = None, **args: Any) -> None:
        """Schedule an action: start, close, crash, restart, pause, stall, failover, store_fails,
        network, partitions, subscribe (``topics=...``), commit (the application's commitAsync)."""
        if action not in _ACTIONS:
            raise ValueError(f"unknown simulator action {action!r}; choose from {', '.join(sorted(_ACTIONS))}")
        self._push(time_ms, "action", (action, name), args)

    def metadata(self) -> dict[str, int]:
        """Cluster metadata as every client sees it (refreshed at once; Kafka refreshes lazily)."""
        return self.topic_counts

    # ------------------------------------------------------------------ the loop

    def step(self) -> StepRecord | None:
        """Process the next event; ``None`` when nothing is left."""
        if not self._queue:
            return None
        trace_start = len(self.trace)
        rec = self._step()
        return StepRecord(self.now, rec[0], rec[1], rec[2], tuple(self.trace[trace_start:]))

    def _step(self) -> tuple[str, str, str]:
        at, kind, a, b = self._pop()
        self.steps += 1
        if kind == "deliver":
            return self._deliver(a)
        if kind == "poll":
            return self._on_poll(a, b)
        if kind == "tick":
            if self._wake_at.get((a, b)) != at:
                return ("tick", a, "superseded wake-up")  # an earlier wake-up re-armed the timer
            del self._wake_at[(a, b)]
            return self._on_tick(a, b)
        if kind == "bwake":
            if self._wake_at.get(a) != at:
                return ("broker", f"broker-{a}", "superseded wake-up")
            del self._wake_at[a]
            return self._on_broker_wake(a)
        if kind == "load":
            return self._on_finish_load(a)
        return self._on_action(a, b)

    def _wake(self, key: Any, at: int, kind: str, a: Any, b: Any = None) -> None:
        cur = self._wake_at.get(key)
        if cur is None or at < cur:
            self._wake_at[key] = at
            self._push(at, kind, a, b)

    def run_until(self, time_ms: int) -> list[StepRecord]:
        """Process every event due at or before ``time_ms``; the clock ends at ``time_ms``."""
        out: list[StepRecord] = []
        while self._queue and self._queue[0][0] <= time_ms:
            r = self.step()
            assert r is not None
            out.append(r)
        self.now = max(self.now, time_ms)
        return out

    def run_quietly_until(self, time_ms: int) -> int:
        """Like :meth:`run_until` without collecting records (the fast path); returns the step count."""
        n = 0
        self._quiet = True  # the frequent steps skip their description
        try:
            while self._queue and self._queue[0][0] <= time_ms:
                self._step()
                n += 1
        finally:
            self._quiet = False
        self.now = max(self.now, time_ms)
        return n

    # ------------------------------------------------------------------ consumers

    def _proc(self, name: str, inc: int) -> SimProc | None:
        p = self.procs.get(name)
        if p is None or p.incarnation != inc or not p.alive:
            return None
        return p

    def _deferred(self, p: SimProc, at_kind: str, a: Any, b: Any) -> bool:
        """A paused process handles nothing: push the event to the end of the pause."""
        if p.paused_until > self.now:
            self._push(p.paused_until, at_kind, a, b)
            return True
        return False

    def _conn(self, p: SimProc) -> int:
        return p.incarnation * _CONN_SPAN + p.consumer.connection

    def _drive(self, p: SimProc, event: Event) -> list[Send]:
        """One event to the member through the actor contract; its requests go out, its timer is set."""
        cmds = p.consumer.handle(self.now, event)
        # its SetTimer comes last (its CallListener commands are in its member events, which make the trace)
        due = None
        n = len(cmds)
        if n and type(cmds[-1]) is SetTimer:
            due = cmds[-1].at_ms
            n -= 1
        sends = [c.message for c in cmds if type(c) is ActorSend] if n else []
        if self.hooks:
            self._after_consumer(p, sends, due)
            return sends
        for s in sends:  # _after_consumer without hooks, inlined (the hot path of every run)
            self._send_request(p, s)
        if len(p.consumer.events) > p.seen_events:
            self._flush_events(p)
        if due is not None:
            self._wake((p.name, p.incarnation), max(due, self.now), "tick", p.name, p.incarnation)
        return sends

    def _after_consumer(self, p: SimProc, sends: list[Send], due: int | None) -> None:
        """The hooks (the records layer), then the member's requests, events and timer. A hook that calls into the
        member returns what it sent (and one that sends nothing changes no timer: an application commit that fails
        locally only adds a member event); when one did, the member's timer is asked again."""
        c = p.consumer
        called = False
        for hook in self.hooks:
            more = hook(self, p)
            if more:
                sends = sends + more
                called = True
        for s in sends:
            self._send_request(p, s)
        if len(c.events) > p.seen_events:
            self._flush_events(p)
        nt = c.next_timer_ms() if called else due
        if nt is not None:
            self._wake((p.name, p.incarnation), max(nt, self.now), "tick", p.name, p.incarnation)

    def _flush_events(self, p: SimProc) -> None:
        evs = p.consumer.events
        for e in evs[p.seen_events :]:
            self.trace.append(self._trace_line(p, e))
        p.seen_events = len(evs)

    def _trace_line(self, p: SimProc, e: MemberEvent) -> dict[str, Any]:
        line: dict[str, Any] = {"ts_ms": e.ts_ms, "group": self.config.group_id, "member": p.name, "event": e.event}
        if e.event in ("assigned", "revoked", "lost", "commit"):
            line["partitions"] = [list(x) for x in e.partitions]
        line["generation"] = e.generation
        line["protocol"] = e.protocol
        line["member_id"] = e.member_id
        iid = p.consumer.config.group_instance_id
        if iid is not None:
            line["instance_id"] = iid
        if e.error is not None:
            line["error"] = e.error
        if e.accepted is not None:
            line["accepted"] = e.accepted
        return line

    def _send_request(self, p: SimProc, s: Send) -> None:
        c = p.consumer
        if s.dest == "any":
            node = self.leader if self.leader is not None else 1
        else:
            node = c.coordinator_node if c.coordinator_node is not None else 1
        for env in self.network.send(self.now, p.name, _BROKER_NAME[node], self._conn(p), s.corr, s.request, False):
            self._push(env.deliver_at, "deliver", env)

    def _on_poll(self, name: str, inc: int) -> tuple[str, str, str]:
        p = self._proc(name, inc)
        if p is None:
            return ("poll", name, "process gone")
        if self._deferred(p, "poll", name, inc):
            return ("poll", name, "paused")
        if p.stalled_until > self.now:
            self._push(p.stalled_until, "poll", name, inc)
            return ("poll", name, "application busy")
        sends = self._drive(p, _POLL)
        self._push(self.now + self.config.poll_interval_ms, "poll", name, inc)
        return _QUIET if self._quiet else ("poll", name, _describe_sends(sends))

    def _on_tick(self, name: str, inc: int) -> tuple[str, str, str]:
        p = self._proc(name, inc)
        if p is None:
            return ("tick", name, "process gone")
        if p.paused_until > self.now:
            # Re-armed at the pause's end, like the deferred poll: whichever was pushed first runs first. A GC
            # pause stops every thread of a JVM and resumes them together, so Kafka's heartbeat thread may find
            # the poll timeout expired before the application polls again (a LeaveGroup, the model's
            # PollTimeoutLeave) or not: both orders are Kafka's, and the model has both.
            self._wake((name, inc), p.paused_until, "tick", name, inc)
            return ("tick", name, "paused")
        sends = self._drive(p, _TICK)
        return _QUIET if self._quiet else ("tick", name, _describe_sends(sends))

    # ------------------------------------------------------------------ delivery

    def _deliver(self, env: Envelope) -> tuple[str, str, str]:
        if env.is_reply:
            return self._deliver_reply(env)
        return self._deliver_request(env)

    def _deliver_reply(self, env: Envelope) -> tuple[str, str, str]:
        inc, conn = divmod(env.conn, _CONN_SPAN)
        p = self._proc(env.dst, inc)
        if p is None:
            return ("drop", env.dst, f"{request_name(env.payload)} reply for a process that is gone")
        if self._deferred(p, "deliver", env, None):
            return ("deliver", env.dst, "paused")
        if conn != p.consumer.connection:
            self.network.dropped_stale += 1
            return ("drop", env.dst, f"{request_name(env.payload)} reply on stale connection {conn}")
        self.network.delivered += 1
        self._drive(p, Received(env.src, (env.corr, env.payload)))
        if self._quiet:
            return _QUIET
        err = getattr(env.payload, "error", None)
        return ("deliver", env.dst, f"{request_name(env.payload)} response {err.name if err is not None else ''}".strip())

    def _deliver_request(self, env: Envelope) -> tuple[str, str, str]:
        node = _BROKER_NODE[env.dst]
        req: Request = env.payload
        api = request_name(req)
        self.network.delivered += 1
        # The sender identity is (process, connection, correlation id): the coordinator treats it
        # as opaque and answers to it, so every answer finds its request even when parked.
        sender = (env.src, env.conn, env.corr)
        self._transcript.append((self.now, node, "in", env.src, api, None))
        if isinstance(req, FindCoordinatorRequest):
            # Any broker answers from cluster metadata: the current leader of the offsets partition.
            if self.leader is None:
                cmds: list[Command] = [ActorSend(sender, FindCoordinatorResponse(Error.COORDINATOR_NOT_AVAILABLE))]
            else:
                cmds = self.brokers[self.leader].handle(self.now, Received(sender, req))
            # this broker's next deadline: the SetTimer among cmds only when it answered itself
            own: list[Command] | None = cmds if self.leader == node else None
        else:
            cmds = own = self.brokers[node].handle(self.now, Received(sender, req))
        self._reply(node, cmds)
        self._after_broker(node, api, own)
        return _QUIET if self._quiet else ("deliver", env.dst, f"{api} from {env.src}")

    def _reply(self, node: int, outs: list[Command] | list[Outbound]) -> None:
        """A broker's answers onto the network: its ``Send`` commands (the actor contract) or, after an operator's
        action on it (unload, load, failover), its ``Outbound`` list; its ``SetTimer`` is ``_after_broker``'s."""
        name: str  # (a destination: the request's sender, (client name, connection, correlation id); Hashable to the broker)
        conn: int
        corr: int
        for o in outs:
            if type(o) is ActorSend:
                dest, response = o.to, o.message
            elif type(o) is Outbound:
                dest, response = o.destination, o.response
            else:
                continue
            name, conn, corr = dest  # type: ignore[misc]
            api = request_name(response)
            self._transcript.append((self.now, node, "out", name, api, response))
            for env in self.network.send(self.now, _BROKER_NAME[node], name, conn, corr, response, True):
                self._push(env.deliver_at, "deliver", env)

    def _after_broker(self, node: int, api: str, cmds: list[Command] | None = None) -> None:
        """Re-arm the broker's wake-up at its next deadline: its ``SetTimer`` among ``cmds``, or (after an
        operator's action, ``cmds`` None) asked of it."""
        if api in ("Heartbeat", "OffsetCommit") and node in self._wake_at:
            # these only push a member's session deadline later; the pending wake-up re-arms
            return
        b = self.brokers[node]
        if cmds is None:
            nd = b.next_deadline()
        else:
            nd = next((c.at_ms for c in cmds if type(c) is SetTimer), None)
        if nd is not None:
            self._wake(node, max(nd, self.now), "bwake", node)
        if api not in ("Heartbeat", "OffsetCommit", "FindCoordinator"):
            self._observe_group()

    def _observe_group(self) -> None:
        if self.leader is None:
            return
        key = self.brokers[self.leader].group_outline(self.config.group_id)
        if key is None:
            return
        if key != self._last_group:
            self._last_group = key
            status, generation, protocol, leader, member_ids = key
            self.group_log.append(
                {
                    "at": self.now,
                    "state": status.value,
                    "generation": generation,
                    "protocol": protocol,
                    "leader": self._who(leader),
                    "members": [self._who(m) for m in member_ids],
                }
            )

    def _who(self, member_id: str | None) -> str | None:
        """The process name behind a member id (the coordinator records which connection got it)."""
        if member_id is None:
            return None
        for b in self.brokers.values():
            owner = b.id_owner.get(member_id)
            if owner is not None:
                return str(owner[0])  # type: ignore[index]
        for p in self.procs.values():
            if p.consumer.member_id == member_id:
                return p.name
        return member_id

    def _on_broker_wake(self, node: int) -> tuple[str, str, str]:
        cmds = self.brokers[node].handle(self.now, TimerFired(DEADLINE))
        self._reply(node, cmds)
        self._after_broker(node, "timer", cmds)
        answers = sum(1 for c in cmds if type(c) is ActorSend)
        return ("broker", f"broker-{node}", f"timers fired, {answers} answer(s)")

    def _on_finish_load(self, node: int) -> tuple[str, str, str]:
        outs = self.brokers[node].finish_loading(self.partition, self.now)
        self._reply(node, outs)
        self._after_broker(node, "load")
        return ("broker", f"broker-{node}", "finished loading the group")

    # ------------------------------------------------------------------ actions (faults)

    def _on_action(self, what: tuple[str, str | None], args: dict[str, Any]) -> tuple[str, str, str]:
        action, name = what
        return _ACTIONS[action](self, name, args)

    def _start(self, name: str | None, args: dict[str, Any]) -> tuple[str, str, str]:
        assert name is not None
        old = self.procs.get(name)
        if old is not None and old.alive:
            return ("action", name, "already running")
        config: ConsumerConfig = args.get("config") or (old.consumer.config if old else ConsumerConfig())
        faults: frozenset[str] = args.get("faults", old.consumer.faults if old else frozenset())
        # the kind of group member: a Consumer, or a subclass such as a Connect worker (kept on restart)
        kind: type[Consumer] = args.get("member") or (type(old.consumer) if old else Consumer)
        inc = old.incarnation + 1 if old else 1
        c = kind(name, config, self.metadata, get_assignor, faults=frozenset(faults))
        p = SimProc(name, inc, c)
        self.procs[name] = p
        self._drive(p, Invoked("start"))
        self._push(self.now + self.config.poll_interval_ms, "poll", name, inc)
        what = "Connect worker" if c.protocol_type == "connect" else f"assignors {','.join(config.assignors)}"
        return ("action", name, f"started (incarnation {inc}, {what})")

    def _close(self, name: str | None, args: dict[str, Any]) -> tuple[str, str, str]:
        assert name is not None
        p = self.procs.get(name)
        if p is None or not p.alive:
            return ("action", name, "not running")
        self._drive(p, Invoked("close"))
        p.alive = False
        return ("action", name, "closed")

    def _crash(self, name: str | None, args: dict[str, Any]) -> tuple[str, str, str]:
        assert name is not None
        p = self.procs.get(name)
        if p is None or not p.alive:
            return ("action", name, "not running")
        p.consumer.handle(self.now, Invoked("crash"))
        self._flush_events(p)
        p.alive = False
        return ("action", name, "crashed")

    def _restart(self, name: str | None, args: dict[str, Any]) -> tuple[str, str, str]:
        assert name is not None
        p = self.procs.get(name)
        if p is not None and p.alive:
            self._crash(name, {})
        return self._start(name, args)

    def _pause(self, name: str | None, args: dict[str, Any]) -> tuple[str, str, str]:
        assert name is not None
        p = self.procs.get(name)
        if p is None or not p.alive:
            return ("action", name, "not running")
        p.paused_until = max(p.paused_until, self.now + int(args["duration_ms"]))
        return ("action", name, f"GC pause until {p.paused_until} ms")

    def _stall(self, name: str | None, args: dict[str, Any]) -> tuple[str, str, str]:
        assert name is not None
        p = self.procs.get(name)
        if p is None or not p.alive:
            return ("action", name, "not running")
        p.stalled_until = max(p.stalled_until, self.now + int(args["duration_ms"]))
        return ("action", name, f"application busy (no poll) until {p.stalled_until} ms")

    def _app_call(self, name: str | None, args: dict[str, Any], action: str) -> SimProc | None:
        """The application thread calls the consumer: not while it is paused or busy (the call waits
        until the pause or the busy spell ends)."""
        assert name is not None
        p = self.procs.get(name)
        if p is None or not p.alive:
            return None
        wait = max(p.paused_until, p.stalled_until)
        if wait > self.now:
            self._push(wait, "action", (action, name), args)
            return None
        return p

    def _subscribe(self, name: str | None, args: dict[str, Any]) -> tuple[str, str, str]:
        p = self._app_call(name, args, "subscribe")
        if p is None:
            return ("action", name or "", "not running now (or paused: the call waits)")
        topics = tuple(args["topics"])
        self._drive(p, Invoked("subscribe", (topics,)))
        return ("action", p.name, f"subscribe({', '.join(topics)})")

    def _commit(self, name: str | None, args: dict[str, Any]) -> tuple[str, str, str]:
        p = self._app_call(name, args, "commit")
        if p is None:
            return ("action", name or "", "not running now (or paused: the call waits)")
        sends = self._drive(p, Invoked("commit_async"))
        return ("action", p.name, f"commitAsync(): {_describe_sends(sends)}")

    def _failover(self, name: str | None, args: dict[str, Any]) -> tuple[str, str, str]:
        old = self.leader
        new = 2 if old == 1 else 1
        if old is not None:
            outs = self.brokers[old].unload_partition(self.partition, self.now)
            self._reply(old, outs)
        self.leader = new
        outs = self.brokers[new].load_partition(self.partition, self.now, complete=False)
        self._reply(new, outs)
        delay = int(args.get("load_delay_ms", self.config.load_delay_ms))
        self._push(self.now + delay, "load", new)
        self._last_group = None
        return ("action", f"broker-{new}", f"coordinator failover broker-{old} -> broker-{new} (loading {delay} ms)")

    def _store_fails(self, name: str | None, args: dict[str, Any]) -> tuple[str, str, str]:
        err = Error.from_name(str(args.get("error", "NOT_ENOUGH_REPLICAS")))
        node = self.leader if self.leader is not None else 1
        self.brokers[node].fail_next_store(err)
        return ("action", f"broker-{node}", f"next group metadata write fails with {err.name}")

    def _network(self, name: str | None, args: dict[str, Any]) -> tuple[str, str, str]:
        cfg = args["config"]
        assert isinstance(cfg, NetworkConfig)
        self.network.config = cfg
        return ("action", "network", f"network now {cfg}")

    def _partitions(self, name: str | None, args: dict[str, Any]) -> tuple[str, str, str]:
        topic, count = str(args["topic"]), int(args["count"])
        self.topic_counts[topic] = count
        self.trace.append({"ts_ms": self.now, "group": self.config.group_id, "event": "topic", "topic": topic,
                           "partitions": count})
        return ("action", "cluster", f"topic {topic} now has {count} partitions")

    # ------------------------------------------------------------------ inspection

    def snapshot(self) -> dict[str, Any]:
        """Plain data for every actor right now."""
        group = None
        if self.leader is not None:
            v = self.brokers[self.leader].group(self.config.group_id)
            if v is not None:
                group = {
                    "state": v.status.value,
                    "generation": v.generation,
                    "protocol": v.protocol_name,
                    "leader": v.leader,
                    "members": list(v.member_ids),
                    "static": dict(v.static),
                    "names": {m: self._who(m) for m in v.member_ids},  # member id -> process name
                }
        return {
            "now": self.now,
            "coordinator_node": self.leader,
            "group": group,
            "members": {
                n: dict(p.consumer.snapshot(), alive=p.alive, incarnation=p.incarnation, paused_until=p.paused_until)
                for n, p in sorted(self.procs.items())
            },
            "network": self.network.stats(),
            "queued_events": len(self._queue),
        }

    def transcript(self) -> list[dict[str, Any]]:
        """The coordinator side: every request received and answer sent, in order.

        Answers follow the coordinator-script format's transcript lines (docs/formats.md) (members named by their
        process, ``assignment`` decoded) plus the broker ``node``."""
        out: list[dict[str, Any]] = []
        for at, node, direction, who, api, resp in self._transcript:
            line: dict[str, Any] = {"at": at, "node": node}
            if direction == "in":
                line.update({"from": who, "request": api})
            else:
                line.update({"to": who, "request": api, "error": resp.error.name})
                if api == "JoinGroup":
                    line.update({
                        "member": self._who(resp.member_id) if resp.member_id else "",
                        "generation": resp.generation_id,
                        "leader": self._who(resp.leader) if resp.leader else "",
                        "protocol": resp.protocol_name,
                        "members": [self._who(m.member_id) for m in resp.members],
                        "skip_assignment": resp.skip_assignment,
                    })
                elif api == "SyncGroup" and resp.error is Error.NONE:
                    line["assignment"] = _assignment_list(resp.assignment, resp.protocol_type == "connect")
                elif api == "LeaveGroup":
                    line["members"] = [{"member": self._who(m.member_id) if m.member_id else "", "error": m.error.name}
                                       for m in resp.members]
            out.append(line)
        return out

    def requests_received(self, api: str, since_ms: int = 0) -> int:
        """How many ``api`` requests (e.g. ``"JoinGroup"``) the brokers received at or after ``since_ms``:
        the request lines of :meth:`transcript`, counted without building it."""
        return sum(1 for at, _n, d, _w, a, _r in self._transcript if d == "in" and a == api and at >= since_ms)

    @property
    def messages(self) -> int:
        """Protocol messages handed to the network (requests and responses)."""
        return self.network.sent


def _assignment_list(blob: bytes, connect: bool = False) -> list[list[Any]] | None:
    """The partitions in a SyncGroup assignment (a Connect worker's: the items it is to start), or None
    if the bytes are not an assignment."""
    try:
        if connect:
            return [list(item) for item in decode_connect_assignment(blob).assigned]
        return [list(tp) for tp in decode_assignment(blob).partitions]
    except ConsumerProtocolError:
        return None


def _describe_sends(sends: list[Send]) -> str:
    return ", ".join(f"sent {request_name(s.request)}" for s in sends) or "nothing to send"


_ACTIONS: dict[str, Callable[[Simulator, str | None, dict[str, Any]], tuple[str, str, str]]] = {
    "start": Simulator._start,
    "close": Simulator._close,
    "crash": Simulator._crash,
    "restart": Simulator._restart,
    "pause": Simulator._pause,
    "stall": Simulator._stall,
    "failover": Simulator._failover,
    "store_fails": Simulator._store_fails,
    "network": Simulator._network,
    "partitions": Simulator._partitions,
    "subscribe": Simulator._subscribe,
    "commit": Simulator._commit,
}
