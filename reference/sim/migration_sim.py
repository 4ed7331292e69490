"""A deterministic simulation of an online upgrade: classic consumers, then consumer-protocol ones, one group.

Theory of operation
-------------------
The driver of ``groupspec simulate SCENARIO --protocol classic-to-consumer``. Until the first
consumer-protocol heartbeat converts it, the group lives in the reference classic coordinator
(``classic.GroupCoordinator``); the conversion reads the coordinator's snapshot of the group
(``migration.MixedConsumerGroup.upgrade``), the parked classic requests are answered
``REBALANCE_IN_PROGRESS``, and from then on classic members talk to the consumer group. A classic
consumer here is the reference's classic client (``classic.Consumer``: Kafka's ``ConsumerCoordinator``,
``cooperative-sticky``, auto-commit every second), polled and ticked every 100 ms step; its requests go to
whichever coordinator holds the group at that moment, and the answers come back in the same step (a slow
follower's SyncGroup is held back for its delay). A consumer-protocol consumer is the reconciling
consumer (``consumer.ReconcilingConsumer``, on the one actor contract). A refused conversion
(``GROUP_ID_NOT_FOUND``) is fatal for the consumer, as for Kafka's Java client: its process is restarted
two seconds later, as a supervisor would.

The network is a parameter of the run (``network``, as for the classic and KIP-848 simulations): ``None``
answers every request in the step it is sent (the stories' default); a :class:`~.network.NetworkConfig` sends
every request and every answer through ``network.py``'s seeded network (delay, loss, duplication, reordering,
its own random stream): a request is handled by whichever coordinator holds the group when it *arrives*
(a heartbeat that arrives first converts the group), an answer reaches its process unless that process has
since been restarted, a consumer-protocol member keeps one heartbeat in flight (Kafka's client; an unanswered
one is sent again after ``request.timeout.ms``, 30 s; a later answer to it is ignored), and a
consumer-protocol commit is traced with its verdict when the answer arrives (``sent_ms``: when it was sent).

The simulation judges nothing: it writes a trace in the trace format (``trace.py``) while it runs — the
classic clients' own member events (``joined``, ``assigned`` / ``revoked`` / ``lost``, ``fenced``, ``commit``,
``left``, with ``protocol: "cooperative"`` and their generation, as the classic simulator writes them),
the consumer-protocol members' listener calls (``protocol: "consumer"``, their member epoch) and their
commits (every second) with the coordinator's verdict — and its callers (``groupspec simulate``, the
tests) hand :attr:`MigrationSimulation.trace` to the project's one trace checker, ``groupspec.trace``.
Same seed, same run.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable

from ..actor import COORDINATOR, CallListener, Received, Send, SetTimer, TimerFired
from ..assignors import get as get_assignor
from ..classic import (
    Consumer, ConsumerConfig, CoordinatorConfig, FindCoordinatorRequest, GroupCoordinator, HeartbeatRequest,
    JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse, OffsetCommitRequest,
    OffsetCommitResponse, SyncGroupRequest, SyncGroupResponse,
)
from ..classic import Send as ClassicSend
from ..consumer import ConsumerGroupCoordinator, ReconcilingConsumer
from ..errors import Error
from ..classic import CLIENT_FAULTS as CLASSIC_CLIENT_FAULTS
from ..migration import MIGRATION_FAULTS, MigrationRefused, MixedConsumerGroup
from .network import Envelope, Network, NetworkConfig
from .virtual_clock import TOPIC, VirtualClock

__all__ = ["MIGRATION_SCENARIOS", "EXPECT_VIOLATIONS", "MigrationScenarioError", "run_migration_scenario"]

STEP_MS = 100
REQUEST_TIMEOUT_MS = 30_000  # request.timeout.ms (Kafka's default): with a network, an unanswered heartbeat is resent
G = "g"
_CALLBACK_EVENT = {"onPartitionsAssigned": "assigned", "onPartitionsRevoked": "revoked", "onPartitionsLost": "lost"}
_COMMIT = TimerFired("commit")
EXPECT_VIOLATIONS = {"upgrade-mid-round"}  # Kafka's own double ownership, reproduced on purpose
MIGRATION_SCENARIOS = {
    "online-upgrade": "a stable classic group; every consumer in turn is restarted with group.protocol=consumer",
    "upgrade-mid-round": "a consumer-protocol consumer starts between the leader's SyncGroup and the (slow) "
                         "followers' (docs/migration.md, path 1): two members own a partition",
}


class MigrationScenarioError(ValueError):
    pass


@dataclass
class ClassicProc:
    """A process running the reference's classic client; ``held``: its SyncGroups held back (a slow follower)."""

    name: str
    consumer: Consumer
    sync_delay_ms: int = 0
    held: list[tuple[int, ClassicSend]] = field(default_factory=list)
    seen_events: int = 0

    @property
    def owned(self) -> set[tuple[str, int]]:
        return set(self.consumer.owned)

    @property
    def member_id(self) -> str:
        return self.consumer.member_id


@dataclass
class MigrationReport:
    scenario: str
    seed: int
    members: int
    partitions: int
    duration_ms: int = 0
    events: list[str] = field(default_factory=list)
    group_type: str = "classic"
    group_epoch: int = 0
    unowned_partition_ms: int = 0
    assignment: dict[str, list[int]] = field(default_factory=dict)
    trace: list[dict[str, Any]] = field(default_factory=list)  # the run in the trace format, for the trace checker

    def to_json(self) -> dict[str, Any]:
        """The figures of the run (the trace is written apart; the verdict is the trace checker's)."""
        return {k: getattr(self, k) for k in ("scenario", "seed", "members", "partitions", "duration_ms", "events",
                                               "group_type", "group_epoch", "unowned_partition_ms", "assignment")}


class MigrationSimulation(VirtualClock):
    def __init__(self, members: int, partitions: int, seed: int, faults: frozenset[str] = frozenset(),
                 network: NetworkConfig | None = None) -> None:
        self.rng = random.Random(seed)
        # the network as a parameter (its own seeded stream); None: every request is answered in the step it is sent
        self.net = Network(network, random.Random(seed * 7_919 + 3)) if network is not None else None
        self._corr = 0
        self._beat_corr: dict[str, int] = {}  # with a network: a consumer's last heartbeat (older answers are ignored)
        self._beat_out: dict[str, int] = {}  # with a network: when a consumer's unanswered heartbeat was sent
        self._last_commit: dict[str, tuple[Any, list[list[Any]]]] = {}  # process -> its last commit's offsets, lines
        self._at_classic: set[tuple[str, int]] = set()  # (process, corr): JoinGroup / SyncGroup the classic coordinator got
        self.faults = frozenset(faults) & MIGRATION_FAULTS  # the mixed group's fault switches, for mutants
        self.client_faults = frozenset(faults) & CLASSIC_CLIENT_FAULTS  # the classic clients' (mutants too)
        self.partitions = partitions
        self.classic = GroupCoordinator(CoordinatorConfig(initial_rebalance_delay_ms=0))
        self.mixed: MixedConsumerGroup | None = None
        self.procs: dict[str, ClassicProc | ReconcilingConsumer] = {}
        self.beats: dict[str, int] = {}
        self._reset_clock()
        self.report = MigrationReport("", seed, members, partitions)
        self.on_leader_sync: Callable[[], None] | None = None  # a scenario hook: called once the leader's SyncGroup is stored
        self.trace: list[dict[str, Any]] = [{"ts_ms": 0, "event": "topic", "topic": TOPIC, "partitions": partitions}]
        self.report.trace = self.trace

    def log(self, text: str) -> None:
        self.report.events.append(f"{self.now / 1000:7.1f}s  {text}")

    def emit(self, event: str, name: str, protocol: str = "consumer", **fields: Any) -> None:
        """One trace line about process ``name``, now."""
        ev: dict[str, Any] = {"ts_ms": self.now, "group": G, "member": name, "event": event, "protocol": protocol}
        ev.update(fields)
        self.trace.append(ev)

    def _flush(self, p: ClassicProc) -> None:
        """The classic client's member events since the last flush, as trace lines (and the narration)."""
        evs = p.consumer.events
        if len(evs) == p.seen_events:  # the common case: a step with no member event
            return
        for e in evs[p.seen_events:]:
            line: dict[str, Any] = {"ts_ms": e.ts_ms, "group": G, "member": p.name, "event": e.event}
            if e.event in ("assigned", "revoked", "lost", "commit"):
                line["partitions"] = [list(x) for x in e.partitions]
            line.update(generation=e.generation, protocol=e.protocol, member_id=e.member_id)
            if e.error is not None:
                line["error"] = e.error
            if e.accepted is not None:
                line["accepted"] = e.accepted
            self.trace.append(line)
            if e.event in ("assigned", "revoked", "lost") and e.partitions:
                self.log(f"{p.name} (generation {e.generation}) {e.event} {sorted(q for _t, q in e.partitions)}")
            elif e.event == "fenced":
                self.log(f"{p.name}: {e.error}")
        p.seen_events = len(evs)

    # -- processes ----------------------------------------------------------------------------------
    def start_classic(self, name: str, sync_delay_ms: int = 0) -> None:
        cfg = ConsumerConfig(group_id=G, client_id=name, topics=(TOPIC,), assignors=("cooperative-sticky",),
                             session_timeout_ms=10_000, heartbeat_interval_ms=1_000, max_poll_interval_ms=60_000,
                             auto_commit_interval_ms=1_000)
        c = Consumer(name, cfg, lambda: {TOPIC: self.partitions}, get_assignor, faults=self.client_faults)
        p = ClassicProc(name, c, sync_delay_ms)
        self.procs[name] = p
        self.log(f"{name} starts (classic protocol)")
        self._carry(p, c.start(self.now))

    def start_consumer(self, name: str) -> None:
        client = ReconcilingConsumer(name, ["t"])
        self.procs[name] = client
        self.beats[name] = self.now
        self.log(f"{name} starts (group.protocol=consumer)")
        self.emit("joined", name, member_id=name)

    def restart_as_consumer(self, name: str) -> None:
        p = self.procs.get(name)
        if isinstance(p, ClassicProc):
            if p.owned:
                self.log(f"{name} closes: revokes {sorted(q for _t, q in p.owned)}")
            sends = p.consumer.close(self.now)
            self._carry(p, sends)
        self.procs.pop(name, None)
        self.start_consumer(name)

    # -- classic requests, to whichever coordinator holds the group ------------------------------------
    def _carry(self, p: ClassicProc, sends: list[ClassicSend]) -> None:
        """Send the classic client's requests (a slow follower's SyncGroup waits), deliver the answers."""
        for s in sends:
            if isinstance(s.request, SyncGroupRequest) and p.sync_delay_ms:
                p.held.append((self.now + p.sync_delay_ms, s))
            else:
                self._transmit(p, s)
        self._flush(p)

    def _transmit(self, p: ClassicProc, s: ClassicSend) -> None:
        """A classic request goes out: handled now, or (with a network) when each copy arrives."""
        if self.net is None:
            self._request(p, s)
            return
        self._corr += 1
        for env in self.net.send(self.now, p.name, COORDINATOR, 0, self._corr, s, False):
            self._push(env.deliver_at, "call", lambda: self._arrives(p, s))

    def _arrives(self, p: ClassicProc, s: ClassicSend) -> None:
        assert self.net is not None
        self.net.delivered += 1
        self._request(p, s)

    def _answer(self, name: str, corr: int, response: Any) -> None:
        """A coordinator's answer to process ``name``'s request ``corr``: delivered now, or over the network."""
        self._at_classic.discard((name, corr))  # answered: no longer parked
        if self.net is None:
            self._deliver(name, corr, response)
            return
        p = self.procs.get(name)
        for env in self.net.send(self.now, COORDINATOR, name, 0, corr, response, True):
            self._push(env.deliver_at, "call", lambda: self._answer_arrives(p, name, corr, response))

    def _answer_arrives(self, p: Any, name: str, corr: int, response: Any) -> None:
        assert self.net is not None
        if p is None or self.procs.get(name) is not p:  # the process was restarted: its connection is gone
            self.net.dropped_stale += 1
            return
        self.net.delivered += 1
        self._deliver(name, corr, response)

    def _deliver(self, name: str, corr: int, response: Any) -> None:
        p = self.procs.get(name)
        if isinstance(p, ClassicProc):
            self._carry(p, p.consumer.receive(self.now, corr, response))

    def _request(self, p: ClassicProc, s: ClassicSend) -> None:
        req = s.request
        if self.mixed is not None and not isinstance(req, FindCoordinatorRequest):
            ans = self._to_mixed(req)
            if ans is not None:
                self._answer(p.name, s.corr, ans)
                return
            self.log("the empty consumer group is deleted: the JoinGroup makes a classic group")
            self.mixed = None  # and the request goes to the classic coordinator below
        hooked = isinstance(req, SyncGroupRequest) and bool(req.assignments) and self.on_leader_sync is not None
        before = self.classic.group(G) if hooked else None
        if isinstance(req, (JoinGroupRequest, SyncGroupRequest)):
            self._at_classic.add((p.name, s.corr))
        name: str  # (a destination: the request's sender, (client name, connection, correlation id))
        corr: int
        for out in self.classic.handle(self.now, (p.name, 0, s.corr), req):
            name, _conn, corr = out.destination  # type: ignore[misc]
            self._answer(name, corr, out.response)
        after = self.classic.group(G) if hooked else None
        if hooked and before is not None and after is not None and after.status.name == "STABLE":
            hook, self.on_leader_sync = self.on_leader_sync, None
            hook()  # type: ignore[misc]  # (hooked: it was not None)

    def _to_mixed(self, req: Any) -> Any:
        """A classic request answered by the consumer group (``None``: the empty group was deleted by a JoinGroup)."""
        m = self.mixed
        assert m is not None
        if isinstance(req, JoinGroupRequest):
            return m.join_group(req, self.now)
        if isinstance(req, SyncGroupRequest):
            return m.sync_group(req, self.now)
        if isinstance(req, HeartbeatRequest):
            return m.heartbeat(req, self.now)
        if isinstance(req, LeaveGroupRequest):
            errors = [m.leave_group(x.member_id) for x in req.members]
            return LeaveGroupResponse(next((e for e in errors if e != Error.NONE), Error.NONE))
        if isinstance(req, OffsetCommitRequest):
            err = m.offset_commit(req.member_id, req.generation_id, {(t, q): o for t, q, o in req.offsets})
            return OffsetCommitResponse(tuple((t, q, err) for t, q, _o in req.offsets))
        raise TypeError(f"no consumer-group answer for {type(req).__name__}")

    def _classic_step(self, p: ClassicProc) -> None:
        for due, s in [x for x in p.held if x[0] <= self.now] if p.held else ():
            p.held.remove((due, s))
            self._transmit(p, s)
            self._flush(p)
        if self.procs.get(p.name) is p:
            self._carry(p, p.consumer.poll(self.now) + p.consumer.tick(self.now))

    # -- consumer-protocol requests ------------------------------------------------------------------
    def _answer_parked(self) -> None:
        """The conversion answers the classic coordinator's parked JoinGroup / SyncGroup REBALANCE_IN_PROGRESS."""
        for name in sorted(self.procs):
            p = self.procs[name]
            if not isinstance(p, ClassicProc):
                continue
            for corr, f in sorted(p.consumer.inflight.items()):  # those the classic coordinator has (parked)
                if f.kind == "join" and (name, corr) in self._at_classic:
                    self._answer(name, corr, JoinGroupResponse(Error.REBALANCE_IN_PROGRESS))
                elif f.kind == "sync" and (name, corr) in self._at_classic:
                    self._answer(name, corr, SyncGroupResponse(Error.REBALANCE_IN_PROGRESS))

    def _consumer_step(self, c: ReconcilingConsumer) -> None:
        if self.now < self.beats.get(c.member_id, 0):
            return
        if self.now < self._beat_out.get(c.member_id, -REQUEST_TIMEOUT_MS) + REQUEST_TIMEOUT_MS:
            return  # one heartbeat in flight at a time (Kafka's client); a lost one is sent again after the timeout
        self.beats[c.member_id] = self.now + 1000
        req = next(cmd.message for cmd in c.handle(self.now, TimerFired("heartbeat")) if isinstance(cmd, Send))
        if self.net is None:
            self._heartbeat_answer(c, self._heartbeat_at_coordinator(c.member_id, req))
            return
        self._corr += 1
        corr = self._beat_corr[c.member_id] = self._corr
        self._beat_out[c.member_id] = self.now
        for env in self.net.send(self.now, c.member_id, COORDINATOR, 0, corr, req, False):
            self._push(env.deliver_at, "call", lambda: self._heartbeat_arrives(c, corr, req))

    def _heartbeat_arrives(self, c: ReconcilingConsumer, corr: int, req: Any) -> None:
        """A consumer-protocol heartbeat reaches the coordinator (with a network); the answer goes back."""
        assert self.net is not None
        self.net.delivered += 1
        answer = self._heartbeat_at_coordinator(c.member_id, req)
        for env in self.net.send(self.now, COORDINATOR, c.member_id, 0, corr, answer, True):
            self._push(env.deliver_at, "call", lambda: self._heartbeat_answer_arrives(c, corr, answer))

    def _heartbeat_answer_arrives(self, c: ReconcilingConsumer, corr: int, answer: Any) -> None:
        assert self.net is not None
        if self.procs.get(c.member_id) is not c or self._beat_corr.get(c.member_id) != corr:
            self.net.dropped_stale += 1  # its process is gone, or a later heartbeat is out
            return
        self.net.delivered += 1
        self._beat_out.pop(c.member_id, None)
        self._heartbeat_answer(c, answer)

    def _heartbeat_at_coordinator(self, mid: str, req: Any) -> Any:
        """The coordinator's answer to a consumer-protocol heartbeat: the first one converts the classic group
        (a refusal, ``MigrationRefused``, is the answer then)."""
        if self.mixed is None:
            view = self.classic.group(G)
            try:
                if view is None or not view.members:
                    self.mixed = MixedConsumerGroup(ConsumerGroupCoordinator(G, {"t": self.partitions}), faults=self.faults)
                else:
                    self.mixed = MixedConsumerGroup.upgrade(view, {"t": self.partitions}, faults=self.faults, now=self.now)
                    self.log(f"{mid}'s heartbeat converts the classic group (generation {view.generation}) "
                             f"into a consumer group")
                    self._answer_parked()
            except MigrationRefused as e:
                return e
        return self.mixed.consumer_heartbeat(req, self.now)

    def _heartbeat_answer(self, c: ReconcilingConsumer, resp: Any) -> None:
        """The answer reaches the consumer: a refused conversion is fatal (restarted 2 s later); otherwise the
        consumer's commands are carried out on the one actor contract (listener calls traced)."""
        if isinstance(resp, MigrationRefused):
            self.log(f"{c.member_id}: GROUP_ID_NOT_FOUND ({resp}): fatal, restarted in 2 s")
            del self.procs[c.member_id]
            self.emit("left", c.member_id, member_id=c.member_id)
            self.pending.append((self.now + 2000, c.member_id))
            return
        before = frozenset(c.owned)
        for cmd in c.handle(self.now, Received(COORDINATOR, resp)):  # the one actor contract (reference/actor.py)
            if isinstance(cmd, CallListener):
                self.emit(_CALLBACK_EVENT[cmd.callback], c.member_id, partitions=[list(tp) for tp in cmd.partitions],
                          generation=cmd.generation)
            elif isinstance(cmd, SetTimer):
                self.beats[c.member_id] = max(cmd.at_ms, self.now + STEP_MS)  # acknowledge soon
        if frozenset(c.owned) != before:
            self.log(f"{c.member_id} epoch {c.epoch} owns {sorted(p for _t, p in c.owned)}")

    # -- the loop --------------------------------------------------------------------------------------
    # the scenario's delayed starts, (due, name); shadows VirtualClock.pending(), which this simulation does not call
    pending: list[tuple[int, str]]  # type: ignore[assignment]

    def step(self) -> None:
        for due, name in [x for x in self.pending if x[0] <= self.now]:
            self.pending.remove((due, name))
            self.start_consumer(name)
        if self.mixed is not None:
            self.mixed.tick(self.now)
        else:
            corr: int  # (a destination: (client name, connection, correlation id))
            for out in self.classic.advance(self.now):
                name, _conn, corr = out.destination  # type: ignore[misc]
                self._answer(name, corr, out.response)
        for name in sorted(self.procs):
            p = self.procs.get(name)
            if isinstance(p, ClassicProc):
                self._classic_step(p)
            elif p is not None:
                self._consumer_step(p)
        self.check()

    def _counted(self) -> Any:
        """The member ids the coordinator that holds the group counts now."""
        if self.mixed is not None:
            return self.mixed.group.members
        view = self.classic.group(G)
        return view.member_ids if view is not None else ()

    def _is_member(self, name: str, counted: Any) -> tuple[str | None, int]:
        """(member id, the epoch or generation its commit would carry) if the coordinator counts it."""
        p = self.procs[name]
        if isinstance(p, ClassicProc):
            mid, gen = p.consumer.member_id, p.consumer.generation.generation_id
            return (mid if mid in counted else None), gen
        if self.mixed is not None and p.member_id in counted and p.epoch > 0:
            return p.member_id, p.epoch
        return None, -1

    def check(self) -> None:
        """The narration's unowned partition-time among the members the coordinator counts, and the
        consumer-protocol members' commits (every second, once the group is a consumer group), traced with the
        coordinator's verdict (the classic clients commit by themselves). It judges nothing (the trace checker
        does)."""
        seen: set[tuple[str, int]] = set()
        counted = self._counted()  # once a step: the classic coordinator's view is built on each call
        mixed = self.mixed is not None
        for p in self.procs.values():  # _is_member inlined (the hot loop of a run)
            if type(p) is ClassicProc:
                c = p.consumer
                if c.generation.member_id in counted:
                    seen.update(c.owned)
            elif mixed and p.member_id in counted and p.epoch > 0:  # type: ignore[union-attr]
                seen.update(p.owned)
        if self.procs:
            self.report.unowned_partition_ms += (self.partitions - len(seen)) * STEP_MS
        if self.now % 1000 or self.mixed is None:
            return
        for name in sorted(self.procs):
            p = self.procs[name]
            if isinstance(p, ClassicProc):
                continue
            mid, _epoch = self._is_member(name, counted)
            if mid is None:
                continue
            for cmd in p.handle(self.now, _COMMIT):  # the consumer's auto-commit, on the one actor contract
                m = cmd.message  # type: ignore[union-attr]  # (an auto-commit's one command: the Send of its request)
                if self.net is not None:
                    self._corr += 1
                    for env in self.net.send(self.now, name, COORDINATOR, 0, self._corr, (self.now, m), False):
                        self._push(env.deliver_at, "call", lambda env=env: self._commit_arrives(p, mid, env))
                    continue
                err = self.mixed.offset_commit(m.member_id, m.member_epoch, m.offsets)
                self._commit_line(name, mid, m, self.now, err)

    def _commit_line(self, name: str, mid: str, m: Any, sent_ms: int, err: Error) -> None:
        ok = err == Error.NONE
        last = self._last_commit.get(name)  # a member commits the same offsets until its assignment changes: the
        if last is not None and last[0] == m.offsets:  # lines share one (never mutated) partitions list
            parts = last[1]
        else:
            parts = [[t, q, o] for (t, q), o in sorted(m.offsets.items())]
            self._last_commit[name] = (m.offsets, parts)
        self.emit("commit", name, member_id=mid, partitions=parts,
                  accepted=ok, sent_ms=sent_ms, generation=m.member_epoch, **({} if ok else {"error": err.name}))

    def _commit_arrives(self, p: ReconcilingConsumer, mid: str, env: Envelope) -> None:
        """A consumer-protocol commit reaches the coordinator (with a network): judged by the group that holds it
        now (a classic group does not know the member); the verdict goes back and is traced when it arrives."""
        assert self.net is not None
        self.net.delivered += 1
        sent_ms, m = env.payload
        err = self.mixed.offset_commit(m.member_id, m.member_epoch, m.offsets) if self.mixed is not None else Error.UNKNOWN_MEMBER_ID
        for back in self.net.send(self.now, COORDINATOR, p.member_id, 0, env.corr, None, True):
            self._push(back.deliver_at, "call", lambda: self._verdict_arrives(p, mid, m, sent_ms, err))

    def _verdict_arrives(self, p: ReconcilingConsumer, mid: str, m: Any, sent_ms: int, err: Error) -> None:
        assert self.net is not None
        if self.procs.get(p.member_id) is not p:
            self.net.dropped_stale += 1
            return
        self.net.delivered += 1
        self._commit_line(p.member_id, mid, m, sent_ms, err)


def run_migration_scenario(name: str, members: int = 3, partitions: int = 6, seed: int = 0,
                           faults: frozenset[str] = frozenset(), network: NetworkConfig | None = None) -> MigrationReport:
    """Run one scenario; :class:`MigrationScenarioError` on bad options. ``faults``: the mixed group's fault
    switches (``MIGRATION_FAULTS``) and the classic clients' (``classic.CLIENT_FAULTS``), for mutants.
    ``network``: requests and answers go through the seeded network (delay, loss, duplication, reordering);
    None: answered in the step they are sent."""
    if name not in MIGRATION_SCENARIOS:
        raise MigrationScenarioError(f"unknown scenario {name!r} for --protocol classic-to-consumer; "
                                     f"choose from {', '.join(MIGRATION_SCENARIOS)}")
    if not 2 <= members <= 50 or not 1 <= partitions <= 1000:
        raise MigrationScenarioError("--members must be 2..50 and --partitions 1..1000 for --protocol classic-to-consumer")
    unknown = set(faults) - MIGRATION_FAULTS - CLASSIC_CLIENT_FAULTS
    if unknown:
        raise MigrationScenarioError(f"unknown fault {sorted(unknown)[0]!r}; choose from "
                                     f"{', '.join(sorted(MIGRATION_FAULTS | CLASSIC_CLIENT_FAULTS))}")
    sim = MigrationSimulation(members, partitions, seed, faults, network)
    sim.pending = []
    sim.report.scenario = name
    ev: dict[int, list[Callable[..., object]]] = {}  # (the events: lambdas binding their arguments as defaults)

    def at(ms: int, fn: Callable[..., object]) -> None:
        ev.setdefault(ms - ms % STEP_MS, []).append(fn)

    names = [f"c{i + 1}" for i in range(members)]
    for i, n in enumerate(names):
        at(i * 500, lambda n=n: sim.start_classic(n, sync_delay_ms=1500 if (name == "upgrade-mid-round" and i > 0) else 0))
    if name == "online-upgrade":
        for i, n in enumerate(names):
            at(10_000 + i * 8_000, lambda n=n: sim.restart_as_consumer(n))
        end = 10_000 + members * 8_000 + 15_000
    else:
        extra = f"c{members + 1}"
        at(10_000, lambda: sim.start_classic(extra))

        def hook() -> None:
            sim.start_consumer(f"c{members + 2}")
            sim._consumer_step(sim.procs[f"c{members + 2}"])  # type: ignore[arg-type]  # (just started as a consumer)

        at(10_000, lambda: setattr(sim, "on_leader_sync", hook))
        end = 30_000
    sim.run_in_steps(end, ev, STEP_MS)
    r = sim.report
    r.duration_ms = end
    if sim.mixed is not None and sim.mixed.downgraded is None:
        r.group_type = "consumer"
        r.group_epoch = sim.mixed.group.group_epoch
        names_of = {p.member_id: n for n, p in sim.procs.items()}
        r.assignment = {names_of.get(mid, mid): [p for _t, p in sorted(m.assigned)]
                        for mid, m in sorted(sim.mixed.group.members.items())}
    return r
