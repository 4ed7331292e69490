"""A deterministic simulator for the next-generation protocol (KIP-848): consumers, coordinator, virtual time.

Theory of operation
-------------------
The driver of ``groupspec simulate SCENARIO --protocol consumer``, beside the classic simulator
(``simulator.py``). Virtual time advances in steps of 100 ms on the one clock (``virtual_clock.py``);
each running consumer heartbeats at the coordinator's heartbeat interval (with a per-consumer jitter drawn
from the seed), reconciles
after each answer — revocations first, then assignments — and commits its partitions every second;
the coordinator's timers (session and rebalance timeouts) fire from :meth:`tick`. Scenario events
(joins, crashes, restarts, pauses, leaves) happen at fixed times; ``churn`` draws them from the seed.
The same seed gives the same run.

The simulation judges nothing: it writes a trace in the trace format (``trace.py``; the contract
``docs/formats.md``) while it runs, every line with ``protocol: "consumer"`` and the member epoch as
``generation``: ``joined`` when a process starts, ``assigned`` / ``revoked`` / ``lost`` when the
consumer's listener callbacks run (the consumer is an actor of the one contract, ``reference/actor.py``:
the simulation hands it timer events and the coordinator's answers and carries out its commands, writing
a trace line for each ``CallListener``),
``commit`` for every offset commit with the coordinator's verdict and its ``sent_ms``, ``fenced`` when a
heartbeat answers UNKNOWN_MEMBER_ID or FENCED_MEMBER_EPOCH, ``removed`` when the coordinator's timers
drop a member whose process still runs, ``left`` when a process closes or crashes. Its callers (``groupspec
simulate``, the sweep's consumer runs, the tests) hand :attr:`ConsumerSimulation.trace` to the project's one
trace checker, ``groupspec.trace``, which decides whether exclusive ownership and commit fencing held.
The report gives the events, the final assignment, the heartbeat count, the group epoch, the
partition-seconds during which a subscribed partition had no owner, the partitions that moved, and the trace.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from typing import Any, Callable

from ..actor import COORDINATOR, CallListener, Command, Invoked, Received, Send, SetTimer, TimerFired
from ..consumer import (ConsumerGroupCoordinator, HeartbeatRequest, HeartbeatResponse, ConsumerOffsetCommit,
                        ReconcilingConsumer)
from ..errors import Error
from .network import Envelope, Network, NetworkConfig
from .virtual_clock import TOPIC, VirtualClock

STEP_MS = 100
SCENARIOS = {
    "scale-out": "consumers join one at a time, each 3 s after the previous one",
    "rolling-restart": "every consumer in turn crashes and restarts with a new member id",
    "zombie": "a consumer pauses past its session timeout, then wakes up and tries to commit",
    "static-bounce": "static members: one leaves (epoch -2) and comes back within the session timeout",
    "churn": "random joins, crashes, pauses and leaves drawn from the seed",
}


_FENCED = (Error.UNKNOWN_MEMBER_ID, Error.FENCED_MEMBER_EPOCH)
_HEARTBEAT, _COMMIT = TimerFired("heartbeat"), TimerFired("commit")  # the two timers every step may fire
_CALLBACK_EVENT = {"onPartitionsAssigned": "assigned", "onPartitionsRevoked": "revoked", "onPartitionsLost": "lost"}


class ConsumerScenarioError(ValueError):
    pass


def process_name(member_id: str) -> str:
    """The process behind a member id (``c2.3`` is the third start of ``c2``): the trace's ``member``."""
    return member_id.split(".", 1)[0]


@dataclass
class Proc:
    slot: int
    client: ReconcilingConsumer
    state: str = "up"  # up | paused | down
    next_beat: int = 0
    resume_at: int | None = None
    beat_corr: int = 0  # with a network: the correlation id of the last heartbeat sent (older answers are ignored)


@dataclass
class SimReport:
    scenario: str
    seed: int
    members: int
    partitions: int
    duration_ms: int
    events: list[str] = field(default_factory=list)
    heartbeats: int = 0
    group_epoch: int = 0
    unowned_partition_ms: int = 0
    moved: int = 0
    rejected_commits: dict[str, int] = field(default_factory=dict)
    assignment: dict[str, list[int]] = field(default_factory=dict)
    trace: list[dict[str, Any]] = field(default_factory=list)  # the run in the trace format, for the trace checker

    def to_json(self) -> dict[str, Any]:
        """The figures of the run (the trace is written apart; the verdict is the trace checker's)."""
        return {k: getattr(self, k) for k in ("scenario", "seed", "members", "partitions", "duration_ms", "events",
                                               "heartbeats", "group_epoch", "unowned_partition_ms", "moved",
                                               "rejected_commits", "assignment")}


class ConsumerSimulation(VirtualClock):
    def __init__(self, members: int, partitions: int, seed: int, assignor: str = "uniform", static: bool = False,
                 coordinator_faults: frozenset[str] = frozenset(), consumer_faults: frozenset[str] = frozenset(),
                 network: NetworkConfig | None = None) -> None:
        self.rng = random.Random(seed)
        # the network as a parameter (reference/sim/network.py, its own seeded stream); None: every request is
        # answered in the step it is sent (the stories' default)
        self.net = Network(network, random.Random(seed * 7_919 + 3)) if network is not None else None
        self._corr = 0
        self.coord = ConsumerGroupCoordinator("g", {"t": partitions}, assignor=assignor, session_timeout_ms=10_000,
                                              heartbeat_interval_ms=1_000, faults=coordinator_faults)
        self.partitions = partitions
        self.static = static
        self.consumer_faults = consumer_faults
        self.procs: dict[int, Proc] = {}
        self.restarts = [0] * members
        self._reset_clock()
        self.report = SimReport("", seed, members, partitions, 0)
        self.last_owner: dict[int, str] = {}
        self.trace: list[dict[str, Any]] = [{"ts_ms": 0, "event": "topic", "topic": TOPIC, "partitions": partitions}]
        self.report.trace = self.trace
        self.commits = {True: 0, False: 0}  # offset commits the coordinator accepted / rejected
        self._last_commit: dict[str, tuple[dict[tuple[str, int], int], list[list[Any]]]] = {}  # member id -> its last commit's offsets, trace list
        # measure()'s figures change only when ownership or membership does: a listener call, a process started or
        # gone, an epoch or membership change seen by a heartbeat, the coordinator's group epoch or member count
        self._dirty = True
        self._measured: tuple[int, int] = (-1, -1)
        self._unowned_now = 0

    def log(self, text: str) -> None:
        self.report.events.append(f"{self.now / 1000:7.1f}s  {text}")

    def emit(self, event: str, member_id: str, **fields: Any) -> None:
        """One trace line about ``member_id``'s process, now."""
        ev: dict[str, Any] = {"ts_ms": self.now, "group": "g", "member": process_name(member_id), "event": event,
                              "member_id": member_id, "protocol": "consumer"}
        ev.update(fields)
        self.trace.append(ev)

    def follow(self, p: "Proc", commands: list[Command]) -> None:
        """Carry out what a consumer's answer to an event asks for: a listener call is traced, a timer sets
        its next heartbeat (at the earliest, the next step)."""
        for cmd in commands:
            if isinstance(cmd, CallListener):
                self._dirty = True
                self.emit(_CALLBACK_EVENT[cmd.callback], p.client.member_id,
                          partitions=[list(tp) for tp in cmd.partitions], generation=cmd.generation)
            elif isinstance(cmd, SetTimer):
                p.next_beat = max(cmd.at_ms, self.now + STEP_MS)  # acknowledge soon

    # -- the coordinator, as the processes call it (every call traced) -------------------------------
    def send_heartbeat(self, req: HeartbeatRequest) -> HeartbeatResponse:
        """A ConsumerGroupHeartbeat to the coordinator, now; a fencing answer is traced."""
        resp = self.coord.heartbeat(req, self.now)
        self.report.heartbeats += 1
        if resp.error in _FENCED:
            self.emit("fenced", req.member_id, error=resp.error.name, generation=req.member_epoch)
        return resp

    def send_commit(self, member_id: str, member_epoch: int, offsets: dict[tuple[str, int], int]) -> Error:
        """An OffsetCommit to the coordinator, now; traced with its verdict."""
        err = self.coord.offset_commit(member_id, member_epoch, offsets)
        ok = err is Error.NONE
        self.commits[ok] += 1
        now = self.now  # the hot line of the trace: one dict, built at once (offsets come sorted: commit_offsets)
        last = self._last_commit.get(member_id)  # a member commits the same offsets until its assignment changes:
        if last is not None and last[0] == offsets:  # the lines share one (never mutated) partitions list
            parts = last[1]
        else:
            parts = [[t, p, o] for (t, p), o in offsets.items()]
            self._last_commit[member_id] = (offsets, parts)
        ev = {"ts_ms": now, "group": "g", "member": member_id.partition(".")[0], "event": "commit", "member_id": member_id,
              "protocol": "consumer", "partitions": parts, "accepted": ok, "sent_ms": now, "generation": member_epoch}
        if not ok:
            ev["error"] = err.name
        self.trace.append(ev)
        return err

    def tick_coordinator(self) -> list[str]:
        """The coordinator's timers, now; a member dropped while its process still runs is traced ``removed``."""
        removed = self.coord.tick(self.now)
        if not removed:
            return removed
        self._dirty = True
        running = {p.client.member_id for p in self.procs.values()}
        for mid in removed:
            if mid in running:  # a crashed process's member is gone already (its ``left`` is in the trace)
                self.emit("removed", mid)
        return removed

    # -- process events ---------------------------------------------------------------------------
    def start(self, slot: int) -> None:
        if slot in self.procs:  # a start of a running process: the old one is gone
            self.crash(slot)
        self.restarts[slot] += 1
        mid = f"c{slot + 1}" + (f".{self.restarts[slot]}" if self.restarts[slot] > 1 else "")
        client = ReconcilingConsumer(mid, ["t"], instance_id=f"c{slot + 1}" if self.static else None,
                                     faults=self.consumer_faults)
        self.procs[slot] = Proc(slot, client, next_beat=self.now + self.rng.randrange(0, 500))
        self._dirty = True
        self.log(f"c{slot + 1} starts (member id {mid})")
        self.emit("joined", mid)

    def crash(self, slot: int) -> None:
        p = self.procs.pop(slot, None)
        if p is not None:
            self._dirty = True
            self.log(f"{p.client.member_id} crashes")
            self.emit("left", p.client.member_id)

    def leave(self, slot: int) -> None:
        """Close: the consumer revokes everything (traced), then heartbeats with epoch -1 (-2 if static)."""
        p = self.procs.pop(slot, None)
        if p is not None:
            self._dirty = True
            for cmd in p.client.handle(self.now, Invoked("close")):
                if isinstance(cmd, Send) and self.net is not None:
                    self.transmit(p, cmd.message)
                elif isinstance(cmd, Send):
                    resp = self.send_heartbeat(cmd.message)
                    self.log(f"{p.client.member_id} leaves (epoch {cmd.message.member_epoch}): {resp.error.name}")
                else:
                    self.follow(p, [cmd])
            self.emit("left", p.client.member_id)

    def pause(self, slot: int, ms: int) -> None:
        p = self.procs.get(slot)
        if p is not None and p.state == "up":
            p.state, p.resume_at = "paused", self.now + ms
            self.log(f"{p.client.member_id} pauses for {ms / 1000:.0f}s")

    def _member_gone(self, slot: int) -> bool:
        prefix = f"c{slot + 1}"
        return not any(mid == prefix or mid.startswith(prefix + ".") for mid in self.coord.members)

    # -- the loop -----------------------------------------------------------------------------------
    def step(self) -> None:
        for mid in self.tick_coordinator():
            self.log(f"coordinator removes {mid} (timeout); group epoch {self.coord.group_epoch}")
        for slot in sorted(self.procs):
            p = self.procs[slot]
            c = p.client
            if p.state == "paused":
                if self.now >= (p.resume_at or 0):
                    p.state = "up"
                    self.log(f"{c.member_id} wakes up")
                else:
                    continue
            if self.now % 1000 == 0 and c.owned:  # the auto-commit interval
                for cmd in c.handle(self.now, _COMMIT):
                    if isinstance(cmd, Send) and self.net is not None:
                        self.transmit(p, cmd.message)
                    elif isinstance(cmd, Send) and isinstance(cmd.message, ConsumerOffsetCommit):
                        m = cmd.message
                        err = self.send_commit(m.member_id, m.member_epoch, m.offsets)
                        if err != Error.NONE:
                            self.report.rejected_commits[err.name] = self.report.rejected_commits.get(err.name, 0) + 1
                            self.log(f"{c.member_id}'s commit is rejected: {err.name}")
            if self.now >= p.next_beat:
                p.next_beat = self.now + self.coord.heartbeat_interval_ms
                before = (c.epoch, frozenset(c.owned))
                for cmd in c.handle(self.now, _HEARTBEAT):
                    if not (isinstance(cmd, Send) and cmd.to == COORDINATOR):
                        continue
                    if self.net is not None:
                        self.transmit(p, cmd.message)
                        continue
                    resp = self.send_heartbeat(cmd.message)
                    self.follow(p, c.handle(self.now, Received(COORDINATOR, resp)))
                    if resp.error != Error.NONE:
                        self.log(f"{c.member_id} heartbeats: {resp.error.name}")
                    if (c.epoch, frozenset(c.owned)) != before:
                        self._dirty = True
                        if resp.error == Error.NONE:
                            self.log(f"{c.member_id} epoch {c.epoch} owns {sorted(p for _t, p in c.owned)}")
        self.measure()

    # -- the network: requests and answers as envelopes on the clock's heap -------------------------------
    def transmit(self, p: Proc, message: Any) -> None:
        """A request of ``p``'s consumer goes out through the network (delay, loss, duplication, reordering);
        the coordinator handles each copy at the step it arrives, and its answer comes back the same way."""
        assert self.net is not None
        self._corr += 1
        if isinstance(message, HeartbeatRequest):
            p.beat_corr = self._corr
        for env in self.net.send(self.now, p.client.member_id, COORDINATOR, 0, self._corr, (self.now, message), False):
            self._push(env.deliver_at, "call", lambda env=env: self._at_coordinator(p, env))

    def _at_coordinator(self, p: Proc, env: Envelope) -> None:
        """A request reaches the coordinator: it answers (counted here), the answer goes back."""
        assert self.net is not None
        self.net.delivered += 1
        sent_ms, msg = env.payload
        mid = p.client.member_id
        (reply,) = self.coord.handle(self.now, Received(mid, msg))  # the coordinator on the one actor contract
        answer: Any = reply.message  # type: ignore[union-attr]  # (a request's one command: the Send of its answer)
        if isinstance(msg, ConsumerOffsetCommit):
            self.commits[answer is Error.NONE] += 1
            if answer != Error.NONE:
                self.report.rejected_commits[answer.name] = self.report.rejected_commits.get(answer.name, 0) + 1
                self.log(f"{mid}'s commit is rejected: {answer.name}")
        else:
            self.report.heartbeats += 1
            if msg.member_epoch < 0:
                self.log(f"{mid} leaves (epoch {msg.member_epoch}): {answer.error.name}")
        for back in self.net.send(self.now, COORDINATOR, mid, 0, env.corr, (sent_ms, msg, answer), True):
            self._push(back.deliver_at, "call", lambda back=back: self._at_consumer(p, back))

    def _at_consumer(self, p: Proc, back: Envelope) -> None:
        """An answer reaches the consumer, unless its process is gone (or, for a heartbeat, a later one is out):
        a commit's verdict and a fencing are traced as the consumer learns them."""
        assert self.net is not None
        sent_ms, msg, answer = back.payload
        if self.procs.get(p.slot) is not p or (isinstance(msg, HeartbeatRequest) and back.corr != p.beat_corr):
            self.net.dropped_stale += 1
            return
        if p.state == "paused":  # a paused process reads it when it wakes up
            self._push(max(p.resume_at or 0, self.now + STEP_MS), "call", lambda: self._at_consumer(p, back))
            return
        self.net.delivered += 1
        c = p.client
        if isinstance(msg, ConsumerOffsetCommit):
            ok = answer is Error.NONE
            self.emit("commit", msg.member_id, partitions=[[t, q, o] for (t, q), o in msg.offsets.items()], accepted=ok,
                      sent_ms=sent_ms, generation=msg.member_epoch, **({} if ok else {"error": answer.name}))
            return
        if answer.error in _FENCED:
            self.emit("fenced", msg.member_id, error=answer.error.name, generation=msg.member_epoch)
        before = (c.epoch, frozenset(c.owned))
        self.follow(p, c.handle(self.now, Received(COORDINATOR, answer)))
        if answer.error != Error.NONE:
            self.log(f"{c.member_id} heartbeats: {answer.error.name}")
        if (c.epoch, frozenset(c.owned)) != before:
            self._dirty = True
            if answer.error == Error.NONE:
                self.log(f"{c.member_id} epoch {c.epoch} owns {sorted(q for _t, q in c.owned)}")

    def measure(self) -> None:
        """The narration's figures (unowned partition-time, moves) among the members the coordinator counts;
        it judges nothing (the trace checker does). Recomputed only when something it reads may have changed
        (:attr:`_dirty`, or the coordinator's group epoch or member count): otherwise the same figures again."""
        members = self.coord.members
        key = (self.coord.group_epoch, len(members))
        if not self._dirty and key == self._measured:
            if self.procs:
                self.report.unowned_partition_ms += self._unowned_now
            return
        self._dirty, self._measured = False, key
        seen: dict[tuple[str, int], str] = {}  # partition -> its (last counted) owner; the hot loop of a run
        for p in self.procs.values():
            c = p.client
            if c.epoch > 0 and c.owned and c.member_id in members:
                seen.update(dict.fromkeys(c.owned, c.member_id))
        self._unowned_now = (self.partitions - len({tp[1] for tp in seen})) * STEP_MS
        if self.procs:
            self.report.unowned_partition_ms += self._unowned_now
        last, moved = self.last_owner, 0
        for tp, mid in seen.items():
            old = last.get(tp[1])
            if old is not None and old != mid:
                moved += 1
            last[tp[1]] = mid
        self.report.moved += moved

    def run_until(self, end: int, events: dict[int, list[Callable[..., object]]]) -> None:  # type: ignore[override]  # (a scenario run, not the clock's)
        """Every 100 ms up to ``end``: the scenario's events due then, then :meth:`step` (on the one clock)."""
        self.run_in_steps(end, events, STEP_MS)


def run_consumer_scenario(name: str, members: int = 3, partitions: int = 6, seed: int = 0, assignor: str | None = None,
                          faults: frozenset[str] = frozenset(), network: NetworkConfig | None = None) -> SimReport:
    """Run one scenario; raises :class:`ConsumerScenarioError` on bad options. ``network``: requests and answers
    go through the seeded network (delay, loss, duplication, reordering); None: answered in the step they are sent."""
    from ..consumer import COORDINATOR_FAULTS, CLIENT_FAULTS

    if name not in SCENARIOS:
        raise ConsumerScenarioError(f"unknown scenario {name!r} for --protocol consumer; choose from {', '.join(SCENARIOS)}")
    if not 1 <= members <= 1000 or not 1 <= partitions <= 100_000:
        raise ConsumerScenarioError("--members must be 1..1000 and --partitions 1..100000")
    unknown = set(faults) - COORDINATOR_FAULTS - CLIENT_FAULTS
    if unknown:
        raise ConsumerScenarioError(f"unknown fault {sorted(unknown)[0]!r}; choose from {', '.join(sorted(COORDINATOR_FAULTS | CLIENT_FAULTS))}")
    assignor = assignor or "uniform"
    if assignor not in ("uniform", "range"):
        raise ConsumerScenarioError(f"--assignor {assignor!r}: the consumer protocol's server-side assignors are uniform, range")
    sim = ConsumerSimulation(members, partitions, seed, assignor, static=(name == "static-bounce"),
                             coordinator_faults=frozenset(faults) & COORDINATOR_FAULTS,
                             consumer_faults=frozenset(faults) & CLIENT_FAULTS, network=network)
    sim.report.scenario = name
    ev: dict[int, list[Callable[..., object]]] = {}  # (the events: lambdas binding their arguments as defaults)

    def at(ms: int, fn: Callable[..., object]) -> None:
        ev.setdefault(ms - ms % STEP_MS, []).append(fn)

    if name == "scale-out":
        for i in range(members):
            at(i * 3000, lambda i=i: sim.start(i))
        end = members * 3000 + 15_000
    else:
        for i in range(members):
            at(0, lambda i=i: sim.start(i))
        if name == "rolling-restart":
            for i in range(members):
                at(10_000 + i * 15_000, lambda i=i: sim.crash(i))
                at(10_500 + i * 15_000, lambda i=i: sim.start(i))
            end = 10_000 + members * 15_000 + 15_000
        elif name == "zombie":
            at(10_000, lambda: sim.pause(0, 15_000))
            end = 45_000
        elif name == "static-bounce":
            at(10_000, lambda: sim.leave(0))
            at(13_000, lambda: sim.start(0))
            end = 30_000
        else:  # churn
            rng = random.Random(seed * 7919 + 1)
            t = 5_000
            while t < 60_000:
                slot = rng.randrange(members)
                kind = rng.choice(("crash", "pause", "leave", "start"))
                if kind == "crash":
                    at(t, lambda s=slot: sim.crash(s))
                    at(t + 12_000, lambda s=slot: sim.start(s) if s not in sim.procs else None)
                elif kind == "pause":
                    at(t, lambda s=slot, d=rng.randrange(2_000, 15_000): sim.pause(s, d))
                elif kind == "leave":
                    at(t, lambda s=slot: sim.leave(s))
                else:
                    at(t, lambda s=slot: sim.start(s) if s not in sim.procs and sim._member_gone(s) else None)
                t += rng.randrange(1_000, 6_000)
            end = 80_000
    sim.run_until(end, ev)
    r = sim.report
    r.duration_ms = end
    r.group_epoch = sim.coord.group_epoch
    r.assignment = {mid: [p for _t, p in sorted(m.assigned)] for mid, m in sorted(sim.coord.members.items())}
    return r

