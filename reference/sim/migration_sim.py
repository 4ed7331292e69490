"""A deterministic simulation of an online upgrade: classic consumers, then consumer-protocol ones, one group.

Theory of operation
-------------------
The driver of ``groupspec simulate SCENARIO --protocol classic-to-consumer``. Until the first
consumer-protocol heartbeat converts it, the group lives in the reference classic coordinator
(``coordinator.GroupCoordinator``, real JoinGroup / SyncGroup / Heartbeat / LeaveGroup requests); the
conversion reads the coordinator's snapshot of the group (``migration.MixedConsumerGroup.upgrade``), the
parked classic requests are answered ``REBALANCE_IN_PROGRESS``, and from then on classic members talk to
the consumer group. A classic consumer here is a cooperative one (``cooperative-sticky``): it rejoins
reporting what it owns, the leader computes one cooperative round, and a member that had to revoke
rejoins. A consumer-protocol consumer is ``consumer_next.ReconcilingConsumer``. A refused conversion
(``GROUP_ID_NOT_FOUND``) is fatal for the consumer, as for Kafka's Java client: its process is restarted
two seconds later, as a supervisor would.

The simulation judges nothing: it writes a trace in the trace format (``trace.py``) while it runs —
``joined`` / ``left`` for processes, ``assigned`` / ``revoked`` / ``lost`` when a member's ownership changes
(classic members with ``protocol: "cooperative"`` and their generation, consumer-protocol members with
``protocol: "consumer"`` and their member epoch, through the listener callbacks), ``fenced`` when a classic
request is refused UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION, ``commit`` for every offset commit
(classic consumers commit when stable, every second) with the coordinator's verdict — and its callers
(``groupspec simulate``, the tests) hand :attr:`MigrationSimulation.trace` to the project's one trace
checker, ``groupspec.trace``. Same seed, same run.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from ..assignors import get as get_assignor
from ..consumer import ConsumerGroupCoordinator, ReconcilingConsumer
from ..classic import (
    Assignment, CoordinatorConfig, GroupCoordinator, HeartbeatRequest, JoinGroupRequest, JoinGroupResponse,
    LeaveGroupRequest, MemberIdentity, Subscription, SyncGroupRequest, SyncGroupResponse, decode_assignment,
    decode_subscription, encode_assignment, encode_subscription,
)
from ..errors import Error
from ..migration import MIGRATION_FAULTS, MigrationRefused, MixedConsumerGroup
from ..actor import COORDINATOR, CallListener, Received, Send, SetTimer, TimerFired
from .virtual_clock import TOPIC, VirtualClock

__all__ = ["MIGRATION_SCENARIOS", "EXPECT_VIOLATIONS", "MigrationScenarioError", "run_migration_scenario"]

STEP_MS = 100
G = "g"
_CALLBACK_EVENT = {"onPartitionsAssigned": "assigned", "onPartitionsRevoked": "revoked", "onPartitionsLost": "lost"}
EXPECT_VIOLATIONS = {"upgrade-mid-round"}  # Kafka's own double ownership, reproduced on purpose
MIGRATION_SCENARIOS = {
    "online-upgrade": "a stable classic group; every consumer in turn is restarted with group.protocol=consumer",
    "upgrade-mid-round": "a consumer-protocol consumer starts between the leader's SyncGroup and the (slow) "
                         "followers' (docs/migration.md, path 1): two members own a partition",
}


class MigrationScenarioError(ValueError):
    pass


@dataclass
class ClassicClient:
    """A cooperative classic consumer (Kafka's ConsumerCoordinator, in miniature)."""

    name: str
    member_id: str = ""
    generation: int = -1
    owned: set = field(default_factory=set)
    phase: str = "join"  # join | wait (request parked) | sync (join answered) | stable
    leader_members: tuple = ()
    sync_at: int = 0
    next_beat: int = 0
    sync_delay_ms: int = 0


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

    def to_json(self) -> dict:
        """The figures of the run (the trace is written apart; the verdict is the trace checker's)."""
        return {k: getattr(self, k) for k in ("scenario", "seed", "members", "partitions", "duration_ms", "events",
                                               "group_type", "group_epoch", "unowned_partition_ms", "assignment")}


class MigrationSimulation(VirtualClock):
    def __init__(self, members: int, partitions: int, seed: int, faults: frozenset[str] = frozenset()) -> None:
        self.rng = random.Random(seed)
        self.faults = frozenset(faults)  # the mixed group's fault switches (MIGRATION_FAULTS), for mutants
        self.partitions = partitions
        self.classic = GroupCoordinator(CoordinatorConfig(initial_rebalance_delay_ms=0))
        self.mixed: MixedConsumerGroup | None = None
        self.procs: dict[str, ClassicClient | ReconcilingConsumer] = {}
        self.beats: dict[str, int] = {}
        self._reset_clock()
        self.report = MigrationReport("", seed, members, partitions)
        self.on_leader_sync = None  # a scenario hook: called once the leader's SyncGroup is stored
        self.assignor = get_assignor("cooperative-sticky")
        self.trace: list[dict[str, Any]] = [{"ts_ms": 0, "event": "topic", "topic": TOPIC, "partitions": partitions}]
        self.report.trace = self.trace

    def log(self, text: str) -> None:
        self.report.events.append(f"{self.now / 1000:7.1f}s  {text}")

    def emit(self, event: str, name: str, protocol: str = "consumer", **fields: Any) -> None:
        """One trace line about process ``name`` (a classic member's lines say ``protocol="cooperative"``)."""
        ev: dict[str, Any] = {"ts_ms": self.now, "group": G, "member": name, "event": event, "protocol": protocol}
        ev.update(fields)
        self.trace.append(ev)

    def _emit_classic(self, event: str, c: ClassicClient, parts: set | None = None, **fields: Any) -> None:
        if parts is not None:
            fields["partitions"] = [list(tp) for tp in sorted(parts)]
        self.emit(event, c.name, "cooperative", generation=c.generation,
                  **({"member_id": c.member_id} if c.member_id else {}), **fields)

    # -- processes ----------------------------------------------------------------------------------
    def start_classic(self, name: str, sync_delay_ms: int = 0) -> None:
        self.procs[name] = ClassicClient(name, next_beat=self.now + self.rng.randrange(0, 500), sync_delay_ms=sync_delay_ms)
        self.log(f"{name} starts (classic protocol)")
        self.emit("joined", name, "cooperative")

    def start_consumer(self, name: str) -> None:
        client = ReconcilingConsumer(name, ["t"])
        self.procs[name] = client
        self.beats[name] = self.now
        self.log(f"{name} starts (group.protocol=consumer)")
        self.emit("joined", name, member_id=name)

    def restart_as_consumer(self, name: str) -> None:
        c = self.procs.pop(name, None)
        if isinstance(c, ClassicClient) and c.member_id:
            if c.owned:
                self.log(f"{name} closes: revokes {sorted(p for _t, p in c.owned)}")
                self._emit_classic("revoked", c, c.owned)
            if self.mixed is None:
                self.classic.handle(self.now, name, LeaveGroupRequest(G, (MemberIdentity(c.member_id),)))
            else:
                self.mixed.leave_group(c.member_id)
        if isinstance(c, ClassicClient):
            self._emit_classic("left", c)
        self.start_consumer(name)

    # -- classic requests ------------------------------------------------------------------------------
    def _protocols(self, c: ClassicClient) -> tuple:
        sub = Subscription(topics=("t",), owned_partitions=tuple(sorted(c.owned)), generation_id=c.generation)
        return (("cooperative-sticky", encode_subscription(sub)),)

    def _send(self, c: ClassicClient, req) -> None:
        if self.mixed is not None:
            fn = {JoinGroupRequest: self.mixed.join_group, SyncGroupRequest: self.mixed.sync_group,
                  HeartbeatRequest: self.mixed.heartbeat}[type(req)]
            ans = fn(req, self.now)
            if ans is not None:
                self._answer(c, ans)
                return
            self.log("the empty consumer group is deleted: the JoinGroup makes a classic group")
            self.mixed = None  # and the request goes to the classic coordinator below
        before = self.classic.group(G)
        for out in self.classic.handle(self.now, c.name, req):
            target = self.procs.get(out.destination)
            if isinstance(target, ClassicClient):
                self._answer(target, out.response)
        after = self.classic.group(G)
        if (isinstance(req, SyncGroupRequest) and req.assignments and before is not None and after is not None
                and after.status.name == "STABLE" and self.on_leader_sync is not None):
            hook, self.on_leader_sync = self.on_leader_sync, None
            hook()

    def _lose(self, c: ClassicClient, why: str, reset_id: bool) -> None:
        self._emit_classic("fenced", c, error=why.split()[-1])
        if c.owned:
            self.log(f"{c.name}: {why}: loses {sorted(p for _t, p in c.owned)}")
            self._emit_classic("lost", c, c.owned)
        c.owned = set()
        c.generation = -1
        if reset_id:
            c.member_id = ""
        c.phase = "join"

    def _answer(self, c: ClassicClient, ans) -> None:
        err = ans.error
        if isinstance(ans, JoinGroupResponse):
            if err == Error.MEMBER_ID_REQUIRED:
                c.member_id, c.phase = ans.member_id, "join"
            elif err == Error.NONE:
                c.generation, c.phase = ans.generation_id, "sync"
                c.leader_members = ans.members if ans.is_leader else ()
                c.sync_at = self.now + c.sync_delay_ms
            elif err == Error.UNKNOWN_MEMBER_ID:
                self._lose(c, "JoinGroup UNKNOWN_MEMBER_ID", True)
            else:
                c.phase = "join"
            return
        if isinstance(ans, SyncGroupResponse) and err == Error.NONE:
            self._take(c, set(decode_assignment(ans.assignment).partitions))
            return
        if err == Error.REBALANCE_IN_PROGRESS:
            c.phase = "join"
        elif err in (Error.ILLEGAL_GENERATION, Error.UNKNOWN_MEMBER_ID):
            self._lose(c, err.name, err == Error.UNKNOWN_MEMBER_ID)

    def _take(self, c: ClassicClient, given: set) -> None:
        """A cooperative member's SyncGroup assignment: revoke what it lost (onPartitionsRevoked, then rejoin),
        take what it gained (onPartitionsAssigned)."""
        revoked = c.owned - given
        if revoked or given - c.owned:
            self.log(f"{c.name} (generation {c.generation}) revokes {sorted(p for _t, p in revoked)}, "
                     f"owns {sorted(p for _t, p in given)}")
        if revoked:
            self._emit_classic("revoked", c, revoked)
        if given - c.owned:
            self._emit_classic("assigned", c, given - c.owned)
        c.owned = given
        c.phase = "join" if revoked else "stable"

    def _classic_step(self, c: ClassicClient) -> None:
        if c.phase == "join":
            c.phase = "wait"
            self._send(c, JoinGroupRequest(G, c.member_id, "consumer", self._protocols(c), client_id=c.name))
        elif c.phase == "sync" and self.now >= c.sync_at:
            c.phase = "wait"
            asg = ()
            if c.leader_members:
                subs = {}
                for m in c.leader_members:
                    s = decode_subscription(m.metadata)
                    subs[m.member_id] = {"topics": list(s.topics), "owned": [list(tp) for tp in s.owned_partitions],
                                         "generation": s.generation_id}
                result = self.assignor.assign({"t": self.partitions}, subs)
                asg = tuple((mid, encode_assignment(Assignment(tuple(tps)))) for mid, tps in sorted(result.items()))
            self._send(c, SyncGroupRequest(G, c.member_id, c.generation, asg, protocol_type="consumer",
                                           protocol_name="cooperative-sticky"))
        elif c.phase == "stable" and self.now >= c.next_beat:
            c.next_beat = self.now + 1000
            self._send(c, HeartbeatRequest(G, c.member_id, c.generation))

    # -- consumer-protocol requests ------------------------------------------------------------------
    def _consumer_step(self, c: ReconcilingConsumer) -> None:
        if self.now < self.beats.get(c.member_id, 0):
            return
        self.beats[c.member_id] = self.now + 1000
        req = next(cmd.message for cmd in c.handle(self.now, TimerFired("heartbeat")) if isinstance(cmd, Send))
        if self.mixed is None:
            view = self.classic.group(G)
            try:
                if view is None or not view.members:
                    self.mixed = MixedConsumerGroup(ConsumerGroupCoordinator(G, {"t": self.partitions}), faults=self.faults)
                else:
                    self.mixed = MixedConsumerGroup.upgrade(view, {"t": self.partitions}, faults=self.faults, now=self.now)
                    self.log(f"{c.member_id}'s heartbeat converts the classic group (generation {view.generation}) "
                             f"into a consumer group")
                    for p in self.procs.values():  # parked JoinGroup / SyncGroup: REBALANCE_IN_PROGRESS
                        if isinstance(p, ClassicClient) and p.phase == "wait":
                            p.phase = "join"
            except MigrationRefused as e:
                self.log(f"{c.member_id}: GROUP_ID_NOT_FOUND ({e}): fatal, restarted in 2 s")
                del self.procs[c.member_id]
                self.emit("left", c.member_id, member_id=c.member_id)
                self.pending.append((self.now + 2000, c.member_id))
                return
        resp = self.mixed.consumer_heartbeat(req, self.now)
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
    pending: list

    def step(self) -> None:
        for due, name in [x for x in self.pending if x[0] <= self.now]:
            self.pending.remove((due, name))
            self.start_consumer(name)
        if self.mixed is not None:
            self.mixed.tick(self.now)
        else:
            for out in self.classic.advance(self.now):
                target = self.procs.get(out.destination)
                if isinstance(target, ClassicClient):
                    self._answer(target, out.response)
        for name in sorted(self.procs):
            p = self.procs.get(name)
            if isinstance(p, ClassicClient):
                self._classic_step(p)
            elif p is not None:
                self._consumer_step(p)
        self.check()

    def _is_member(self, name: str) -> tuple[str | None, int]:
        """(member id, the epoch or generation its commit would carry) if the coordinator counts it."""
        p = self.procs[name]
        if isinstance(p, ClassicClient):
            if self.mixed is not None:
                return (p.member_id if p.member_id in self.mixed.group.members else None), p.generation
            view = self.classic.group(G)
            return (p.member_id if view is not None and p.member_id in view.member_ids else None), p.generation
        if self.mixed is not None and p.member_id in self.mixed.group.members and p.epoch > 0:
            return p.member_id, p.epoch
        return None, -1

    def check(self) -> None:
        """The narration's unowned partition-time among the members the coordinator counts, and the commits
        (every second, once the group is a consumer group; classic consumers only when stable), traced with
        the coordinator's verdict. It judges nothing (the trace checker does)."""
        seen: set = set()
        for name in sorted(self.procs):
            mid, _e = self._is_member(name)
            if mid is not None:
                seen |= self.procs[name].owned
        if self.procs:
            self.report.unowned_partition_ms += (self.partitions - len(seen)) * STEP_MS
        if self.now % 1000 or self.mixed is None:
            return
        for name in sorted(self.procs):  # commits: classic consumers only when stable
            p = self.procs[name]
            mid, epoch = self._is_member(name)
            if mid is None or not p.owned or (isinstance(p, ClassicClient) and p.phase != "stable"):
                continue
            offsets = {tp: 0 for tp in p.owned}
            err = self.mixed.offset_commit(mid, epoch, offsets)
            ok = err == Error.NONE
            self.emit("commit", name, "cooperative" if isinstance(p, ClassicClient) else "consumer", member_id=mid,
                      partitions=[[t, q, o] for (t, q), o in sorted(offsets.items())], accepted=ok,
                      sent_ms=self.now, generation=epoch, **({} if ok else {"error": err.name}))


def run_migration_scenario(name: str, members: int = 3, partitions: int = 6, seed: int = 0,
                           faults: frozenset[str] = frozenset()) -> MigrationReport:
    """Run one scenario; :class:`MigrationScenarioError` on bad options. ``faults``: the mixed group's fault
    switches (``MIGRATION_FAULTS``), for mutants."""
    if name not in MIGRATION_SCENARIOS:
        raise MigrationScenarioError(f"unknown scenario {name!r} for --protocol classic-to-consumer; "
                                     f"choose from {', '.join(MIGRATION_SCENARIOS)}")
    if not 2 <= members <= 50 or not 1 <= partitions <= 1000:
        raise MigrationScenarioError("--members must be 2..50 and --partitions 1..1000 for --protocol classic-to-consumer")
    unknown = set(faults) - MIGRATION_FAULTS
    if unknown:
        raise MigrationScenarioError(f"unknown fault {sorted(unknown)[0]!r}; choose from {', '.join(sorted(MIGRATION_FAULTS))}")
    sim = MigrationSimulation(members, partitions, seed, faults)
    sim.pending = []
    sim.report.scenario = name
    ev: dict[int, list] = {}

    def at(ms: int, fn) -> None:
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
            sim._consumer_step(sim.procs[f"c{members + 2}"])

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
