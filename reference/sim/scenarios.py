"""Built-in simulator scenarios and the narrated report of a run.

Theory of operation
-------------------
A scenario is a schedule of simulator actions (who starts, stops, crashes, pauses when) for a
group of ``members`` consumers ``c1..cN`` subscribed to one topic ``t`` with ``partitions``
partitions (``subscription-change`` also has a topic ``u`` with half as many: all but ``cN`` read it
from the start, ``cN`` adds it). :func:`run_scenario` builds a :class:`~groupspec.reference.sim.Simulator`,
schedules the actions, steps it to the end, and turns what happened into a
:class:`ScenarioReport`: a timeline for people (actions, each generation, every listener call,
who owned what whenever the group settled), the time each partition had no owner, and totals
(rebalances, partitions revoked / paused / moved, partition-seconds without an owner, any instant a
partition had two owners). Totals are measured from the scenario's ``measure_from_ms`` (the moment
of the disturbance) to its end, so start-up does not count.

``protocol`` picks the members' configuration:

* ``eager``: ``partition.assignment.strategy=[range]`` (or ``--assignor``), EAGER;
* ``cooperative``: ``[cooperative-sticky]`` (or ``--assignor``; it must support COOPERATIVE);
* ``static``: like ``eager`` plus ``group.instance.id`` per member (KIP-345);
* ``static-cooperative``: like ``cooperative`` plus ``group.instance.id`` per member (KIP-345 with
  KIP-429, what Kafka Streams runs);
* ``connect``: Kafka Connect workers ``c1..cN`` (:class:`~groupspec.reference.connect.worker.ConnectWorker`)
  running one connector named ``t`` whose task count is the partition count; the leader's assignor is
  Connect's incremental cooperative one (``--assignor connect``, the only choice), with
  ``scheduled.rebalance.max.delay.ms`` = 10 s. Workers keep running their work across a member-id
  reset, as Kafka's do.

Every member uses session.timeout.ms=10000, heartbeat.interval.ms=3000,
max.poll.interval.ms=60000 (the rebalance timeout), auto-commit every 5 s and commit-on-revoke;
members start 700 ms apart so their heartbeats are not in lock-step. The broker uses
group.initial.rebalance.delay.ms=3000.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..assignors import NAMES as ASSIGNOR_NAMES, get as get_assignor
from ..classic import CLIENT_FAULTS as CONSUMER_FAULTS, COORDINATOR_FAULTS, ConsumerConfig
from ..connect import ConnectWorker, WorkerConfig
from .network import NetworkConfig
from .simulator import SimConfig, Simulator
from .trace import Ownership, ownership

__all__ = ["SCENARIOS", "PROTOCOLS", "ScenarioOptions", "ScenarioReport", "run_scenario", "ScenarioError"]

PROTOCOLS = ("eager", "cooperative", "static", "static-cooperative", "connect")
CONNECT_ASSIGNOR = "connect"  # the Connect leader's incremental cooperative assignor
CONNECT_DELAY_MS = 10000  # scheduled.rebalance.max.delay.ms in the Connect stories
TOPIC = "t"
SECOND_TOPIC = "u"  # the topic the subscription-change story adds (half as many partitions as t, at least 1)
STAGGER_MS = 700
# Sizes a scenario can meaningfully run: every member of the stable group must have started (700 ms apart)
# at least SETTLE_MS before the scenario's event, or the story told is "the group is still forming"; more
# partitions than MAX_PARTITIONS only make the per-partition table unreadable and the run slow.
SETTLE_MS = 5000
MAX_PARTITIONS = 1000


class ScenarioError(ValueError):
    """Bad scenario input (unknown name, impossible option combination)."""


@dataclass(frozen=True)
class ScenarioOptions:
    protocol: str | None = None  # None: the scenario's default
    assignor: str | None = None
    members: int = 3
    partitions: int = 6
    seed: int = 0
    faults: frozenset[str] = frozenset()  # consumer and/or coordinator fault switches (mutants)
    network: NetworkConfig = NetworkConfig()
    failover_at_ms: int | None = None


@dataclass
class _Setup:
    sim: Simulator
    opts: ScenarioOptions
    protocol: str

    def config(self, name: str, assignors: tuple[str, ...] | None = None, static: bool | None = None) -> ConsumerConfig:
        return member_config(name, self.protocol, self.opts.assignor, assignors, static)

    def start(self, t: int, name: str, assignors: tuple[str, ...] | None = None, static: bool | None = None,
              topics: tuple[str, ...] | None = None) -> None:
        if self.protocol == "connect":
            self.sim.at(t, "start", name, config=worker_config(name), faults=self.opts.faults & CONSUMER_FAULTS,
                        member=ConnectWorker)
            return
        cfg = self.config(name, assignors, static)
        if topics is not None:
            cfg = dataclasses.replace(cfg, topics=topics)
        self.sim.at(t, "start", name, config=cfg, faults=self.opts.faults & CONSUMER_FAULTS)

    def names(self) -> list[str]:
        return [f"c{i}" for i in range(1, self.opts.members + 1)]


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    default_protocol: str
    build: Callable[[_Setup], None]
    measure_from_ms: int
    end_ms: Callable[[ScenarioOptions], int]
    min_members: int = 2
    # The property Kafka itself violates in this story (it reproduces a counterexample of the model):
    # "" for the stories in which every property holds.
    finding: str = ""
    second_topic: bool = False  # the cluster also has topic u (nobody subscribes to it at first)


def member_config(
    name: str,
    protocol: str,
    assignor: str | None,
    assignors: tuple[str, ...] | None = None,
    static: bool | None = None,
) -> ConsumerConfig:
    """The consumer configuration a scenario gives member ``name``."""
    if assignors is None:
        cooperative = protocol in ("cooperative", "static-cooperative")
        default = "cooperative-sticky" if cooperative else "range"
        assignors = (assignor or default,)
        if cooperative and "cooperative" not in get_assignor(assignors[0]).supported_protocols:
            raise ScenarioError(f"assignor {assignors[0]} does not support the cooperative protocol; use cooperative-sticky")
    is_static = protocol in ("static", "static-cooperative") if static is None else static
    return ConsumerConfig(
        group_id="g",
        client_id=name,
        topics=(TOPIC,),
        assignors=assignors,
        group_instance_id=f"{name}-instance" if is_static else None,
        session_timeout_ms=10000,
        heartbeat_interval_ms=3000,
        max_poll_interval_ms=60000,
        enable_auto_commit=True,
        auto_commit_interval_ms=5000,
        commit_on_revoke=True,
    )


def worker_config(name: str) -> WorkerConfig:
    """The Connect worker configuration the Connect stories give worker ``name``."""
    return WorkerConfig(
        group_id="g", client_id=name, topics=(), connector=TOPIC,
        session_timeout_ms=10000, heartbeat_interval_ms=3000, max_poll_interval_ms=60000,
        max_delay_ms=CONNECT_DELAY_MS,
    )


# ------------------------------------------------------------------------------ the scenarios


def _start_all(s: _Setup, names: list[str]) -> None:
    for i, n in enumerate(names):
        s.start(i * STAGGER_MS, n)


def _new_consumer_joins(s: _Setup) -> None:
    names = s.names()
    _start_all(s, names[:-1])
    s.start(20000, names[-1])


def _consumer_bounces(s: _Setup) -> None:
    names = s.names()
    _start_all(s, names)
    s.sim.at(20000, "close", names[-1])
    s.start(25000, names[-1])


def _consumer_leaves(s: _Setup) -> None:
    names = s.names()
    _start_all(s, names)
    s.sim.at(20000, "close", names[-1])


def _consumer_crashes(s: _Setup) -> None:
    """cN crashes: no LeaveGroup, so the coordinator notices only when its session times out."""
    names = s.names()
    _start_all(s, names)
    s.sim.at(20000, "crash", names[-1])


def _consumers_join_one_by_one(s: _Setup) -> None:
    """c1 starts alone at 20 s and leads; every 6 s one more consumer joins, and each join is a rebalance."""
    for i, n in enumerate(s.names()):
        s.start(20000 + i * 6000, n)


def _subscription_change(s: _Setup) -> None:
    """Every member but cN reads topics t and u, cN reads t only; at 14 s cN subscribes to u too: its metadata
    changed, so it rejoins and the group rebalances (u is then split over every member). (14 s, not 20: the trace
    checker times convergence from the last membership change, and a subscription change is not one.)"""
    names = s.names()
    for i, n in enumerate(names):
        s.start(i * STAGGER_MS, n, topics=(TOPIC, SECOND_TOPIC) if n != names[-1] else None)
    s.sim.at(14000, "subscribe", names[-1], topics=(TOPIC, SECOND_TOPIC))


def _static_member_restart(s: _Setup) -> None:
    names = s.names()
    for i, n in enumerate(names):
        s.start(i * STAGGER_MS, n, static=True)
    s.sim.at(20000, "crash", names[-1])
    s.start(24000, names[-1], static=True)


def _static_member_left_behind(s: _Setup) -> None:
    """c1 is busy (no poll) through a rebalance and comes back just as the rebalance timeout fires.

    cN joins at 20 s; c1 last polled at 20.2 s, learns of the rebalance from its heartbeat while busy,
    and polls again at 80.005 s: within max.poll.interval.ms of its last poll (so it keeps its member
    id and generation), but its JoinGroup reaches the coordinator after the rebalance timeout has
    completed the join phase without it. Being static it was kept (KAFKA-8220) with the metadata of
    its previous JoinGroup, which did not list the partitions it has owned since; the new generation
    hands some of them to others. c1 rejoins cooperatively, reporting what it owns at its old
    generation: the sticky assignor's claim resolution leaves the partitions with the newer owners,
    and c1 revokes them only at its next SyncGroup answer. Until then two members own them; c1 cannot
    commit them (it is not STABLE, and its generation is stale).
    """
    names = s.names()
    for i, n in enumerate(names[:-1]):
        s.start(i * STAGGER_MS, n)
    s.start(20000, names[-1])
    s.sim.at(20300, "stall", names[0], duration_ms=59705)


def _worker_bounces(s: _Setup) -> None:
    """cN stops and comes back 4 s later, within scheduled.rebalance.max.delay.ms: its tasks wait for it."""
    names = s.names()
    _start_all(s, names)
    s.sim.at(20000, "close", names[-1])
    s.start(24000, names[-1])


def _worker_leaves(s: _Setup) -> None:
    """cN stops for good: its tasks are held for the delay, then handed to the others."""
    names = s.names()
    _start_all(s, names)
    s.sim.at(20000, "close", names[-1])


def _static_restart_in_cooperative_round(s: _Setup) -> None:
    """c1 owns everything; c2..cN join; c1 crashes between its SyncGroup and the answer, restarts 1 s later.

    The round that c2..cN joined withheld every partition moving away from c1 (KIP-429): c1 was to
    revoke them and rejoin, and the follow-up round would hand them out. The restarted process is a
    static replacement in a Stable group: no rebalance (KIP-345), it is given its stored assignment,
    owns nothing it must revoke, and so nobody rejoins. The withheld partitions stay without an owner
    until some other event rebalances the group. The crash moment is found by a dry run of the same
    seed (the moment the coordinator has c1's SyncGroup and its answer is still on the way).
    """
    names = s.names()
    s.start(0, names[0])
    for n in names[1:]:
        s.start(20000, n)
    sync_at, answer_at = _first_sync_after(s, names[0], 20000)
    crash = sync_at + 1 if answer_at - sync_at >= 2 else sync_at  # the request is on the wire already
    s.sim.at(crash, "crash", names[0])
    s.start(crash + 1000, names[0])


def _first_sync_after(s: _Setup, name: str, after: int) -> tuple[int, int]:
    """Dry run of this setup's schedule so far: when the coordinator gets ``name``'s first SyncGroup
    after ``after`` ms, and when its answer reaches ``name``."""
    import copy

    dry = copy.deepcopy(s.sim)
    sync_at = None
    while dry.pending():
        rec = dry.step()
        assert rec is not None
        if rec.time_ms < after or rec.kind != "deliver":
            continue
        if sync_at is None and rec.detail == f"SyncGroup from {name}":
            sync_at = rec.time_ms
        elif sync_at is not None and rec.actor == name and rec.detail.startswith("SyncGroup response"):
            return sync_at, rec.time_ms
        if rec.time_ms > after + 60000:
            break
    raise ScenarioError(f"no SyncGroup from {name} after {after} ms")


def _rolling_restart(s: _Setup) -> None:
    names = s.names()
    _start_all(s, names)
    for i, n in enumerate(names):
        t = 20000 + i * 15000
        s.sim.at(t, "close", n)
        s.start(t + 3000, n)


def _eager_stop_the_world(s: _Setup) -> None:
    names = s.names()
    _start_all(s, names[:-1])
    s.sim.at(19500, "pause", names[0], duration_ms=8000)
    s.start(20000, names[-1])


def _partitions_added(s: _Setup) -> None:
    names = s.names()
    _start_all(s, names)
    s.sim.at(20000, "partitions", topic=TOPIC, count=s.opts.partitions + s.opts.members)


def _upgrade(s: _Setup) -> None:
    names = s.names()
    for i, n in enumerate(names):
        s.start(i * STAGGER_MS, n, assignors=("range",), static=False)
    t = 20000
    for phase in (("range", "cooperative-sticky"), ("cooperative-sticky",)):
        for n in names:
            s.sim.at(t, "close", n)
            s.start(t + 2000, n, assignors=phase, static=False)
            t += 12000


SCENARIOS: dict[str, Scenario] = {
    sc.name: sc
    for sc in (
        Scenario("new-consumer-joins", "consumer cN joins a stable group of N-1", "cooperative",
                 _new_consumer_joins, 20000, lambda o: 45000),
        Scenario("consumer-bounces", "cN shuts down and comes back 5 s later (within session.timeout.ms)", "eager",
                 _consumer_bounces, 20000, lambda o: 50000),
        Scenario("consumer-leaves-permanently", "cN shuts down for good", "eager",
                 _consumer_leaves, 20000, lambda o: 45000),
        Scenario("consumer-crashes", "cN crashes (no LeaveGroup): noticed when its session times out (10 s)", "eager",
                 _consumer_crashes, 20000, lambda o: 45000),
        Scenario("consumers-join-one-by-one", "c1 starts alone and leads; one more consumer joins every 6 s", "eager",
                 _consumers_join_one_by_one, 20000, lambda o: 20000 + o.members * 6000 + 10000),
        Scenario("subscription-change", "cN reads t, the others t and u; cN subscribes to u too at 14 s", "eager",
                 _subscription_change, 14000, lambda o: 40000, second_topic=True),
        Scenario("static-member-restart", "static member cN is killed and restarts 4 s later", "static",
                 _static_member_restart, 20000, lambda o: 45000),
        Scenario("static-member-left-behind",
                 "static c1 is busy through a rebalance and rejoins just after the rebalance timeout",
                 "static-cooperative", _static_member_left_behind, 20000, lambda o: 100000,
                 finding="exclusive_ownership"),
        Scenario("connect-worker-bounces",
                 "Connect worker cN stops and comes back 4 s later, within the 10 s delay", "connect",
                 _worker_bounces, 20000, lambda o: 60000),
        Scenario("connect-worker-leaves",
                 "Connect worker cN stops for good; its tasks wait out the 10 s delay, then move", "connect",
                 _worker_leaves, 20000, lambda o: 60000),
        Scenario("static-restart-in-cooperative-round",
                 "static c1 restarts between its SyncGroup and the answer in a round that withheld its partitions",
                 "static-cooperative", _static_restart_in_cooperative_round, 20000, lambda o: 80000,
                 finding="convergence"),
        Scenario("rolling-restart", "every member in turn shuts down and restarts 3 s later", "eager",
                 _rolling_restart, 20000, lambda o: 20000 + o.members * 15000 + 15000),
        Scenario("eager-stop-the-world", "cN joins while c1 is in an 8 s GC pause", "eager",
                 _eager_stop_the_world, 19500, lambda o: 45000),
        Scenario("partitions-added", "topic t grows by N partitions at 20 s; the leader notices and rebalances",
                 "cooperative", _partitions_added, 20000, lambda o: 45000),
        Scenario("upgrade-eager-to-cooperative",
                 "two rolling bounces: [range] -> [range, cooperative-sticky] -> [cooperative-sticky]", "eager",
                 _upgrade, 20000, lambda o: 20000 + 2 * o.members * 12000 + 15000),
    )
}


# ------------------------------------------------------------------------------ the report


@dataclass
class ScenarioReport:
    scenario: str
    protocol: str
    assignor: str
    seed: int
    members: int
    partitions: int
    timeline: list[tuple[int, str]]
    ownership: Ownership
    generations: list[dict[str, Any]]
    sim: Simulator
    totals: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "protocol": self.protocol,
            "assignor": self.assignor,
            "seed": self.seed,
            "members": self.members,
            "partitions": self.partitions,
            "timeline": [{"ts_ms": t, "text": s} for t, s in self.timeline],
            "generations": self.generations,
            "unowned_ms": {f"{t}-{p}": ms for (t, p), ms in sorted(self.ownership.unowned_ms.items())},
            "double_owned": self.ownership.double_owned,
            "totals": self.totals,
        }


def _fmt_parts(parts: list[list[Any]] | list[tuple[str, int]]) -> str:
    if not parts:
        return "nothing"
    return ",".join(f"connector {t}" if p == -1 else f"{t}-{p}" for t, p in parts)


def _narrate_trace(line: dict[str, Any], leaving: bool = False) -> str | None:
    """One timeline line for a trace line, in the history's words (stop-the-world, two-phase revoke/assign);
    ``leaving``: the member leaves in the same step (its revocation is its goodbye, not a rebalance's)."""
    who = line.get("member", "")
    ev = line["event"]
    gen = line.get("generation")
    if ev == "joined":
        return None  # the start action already says so
    if ev == "assigned":
        verb = "is assigned" if line.get("protocol") == "eager" else "gains"
        return f"{who} {verb} {_fmt_parts(line['partitions'])} (generation {gen}, onPartitionsAssigned)"
    if ev == "revoked":
        why = ""
        if not leaving and line.get("protocol") == "eager":
            why = "; stop-the-world: everything, before rejoining"
        elif not leaving and line.get("protocol") == "cooperative":
            why = "; two-phase revoke/assign, round 1: only what moves"
        return f"{who} revokes {_fmt_parts(line['partitions'])} (onPartitionsRevoked{why})"
    if ev == "lost":
        return f"{who} lost {_fmt_parts(line['partitions'])} (onPartitionsLost)"
    if ev == "left":
        return f"{who} left"
    if ev == "fenced":
        return f"{who} was fenced: {line.get('error')}"
    if ev == "commit" and line.get("accepted") is False:
        return f"{who} commit of {_fmt_parts([p[:2] for p in line['partitions']])} rejected ({line.get('error')})"
    return None


def _settled(sim: Simulator) -> bool:
    live = [p for p in sim.procs.values() if p.alive and p.consumer.fatal is None]
    if not live:
        return False
    return all(p.consumer.state.value == "STABLE" and not p.consumer.rejoin_needed for p in live)


def _owners_line(sim: Simulator) -> str:
    parts = []
    for n, p in sorted(sim.procs.items()):
        if p.alive:
            parts.append(f"{n}: {_fmt_parts(list(p.consumer.owned))}")
    return "owners: " + " | ".join(parts)


def max_members(sc: Scenario) -> int:
    """The most members ``sc`` can meaningfully run: all started ``SETTLE_MS`` before its event."""
    return (sc.measure_from_ms - SETTLE_MS) // STAGGER_MS + 1


def run_scenario(
    name: str, opts: ScenarioOptions, progress: Callable[[int, int], None] | None = None
) -> ScenarioReport:
    """Run a built-in scenario; raises :class:`ScenarioError` for bad input.

    ``progress(now_ms, end_ms)`` is called every few thousand events (for a progress bar)."""
    sc = SCENARIOS.get(name)
    if sc is None:
        raise ScenarioError(f"unknown scenario {name!r}; choose from {', '.join(SCENARIOS)}")
    protocol = opts.protocol or sc.default_protocol
    if protocol not in PROTOCOLS:
        raise ScenarioError(f"unknown protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")
    if protocol == "connect" or sc.default_protocol == "connect":
        if protocol != sc.default_protocol:
            raise ScenarioError(f"scenario {name} runs {sc.default_protocol} members; --protocol {protocol} does not apply")
        if opts.assignor not in (None, CONNECT_ASSIGNOR):
            raise ScenarioError(f"Connect workers use the {CONNECT_ASSIGNOR} assignor, not {opts.assignor!r}")
    elif opts.assignor is not None and opts.assignor not in ASSIGNOR_NAMES:
        raise ScenarioError(f"unknown assignor {opts.assignor!r}; choose from {', '.join(ASSIGNOR_NAMES)}")
    if opts.members < sc.min_members:
        raise ScenarioError(f"scenario {name} needs at least {sc.min_members} members, got {opts.members}")
    most = max_members(sc)
    if opts.members > most:
        raise ScenarioError(f"scenario {name} runs with at most {most} members (they start {STAGGER_MS} ms apart and "
                            f"must all be in the group before its event at {sc.measure_from_ms / 1000:g} s), "
                            f"got {opts.members}")
    if not 1 <= opts.partitions <= MAX_PARTITIONS:
        raise ScenarioError(f"--partitions must be between 1 and {MAX_PARTITIONS}, got {opts.partitions}")
    if opts.failover_at_ms is not None and not 0 <= opts.failover_at_ms < sc.end_ms(opts):
        raise ScenarioError(f"--failover-at must be between 0 and {sc.end_ms(opts) - 1} ms (the run ends at "
                            f"{sc.end_ms(opts)} ms), got {opts.failover_at_ms}")
    bad = opts.faults - CONSUMER_FAULTS - COORDINATOR_FAULTS
    if bad:
        raise ScenarioError(f"unknown fault(s) {', '.join(sorted(bad))}; choose from "
                            f"{', '.join(sorted(CONSUMER_FAULTS | COORDINATOR_FAULTS))}")
    topics = ((TOPIC, opts.partitions),) + (((SECOND_TOPIC, max(1, opts.partitions // 2)),) if sc.second_topic else ())
    sim = Simulator(SimConfig(seed=opts.seed, topics=topics, network=opts.network,
                              coordinator_faults=opts.faults & COORDINATOR_FAULTS))
    setup = _Setup(sim, opts, protocol)
    sc.build(setup)
    if opts.failover_at_ms is not None:
        sim.at(opts.failover_at_ms, "failover")
    end = sc.end_ms(opts)
    timeline: list[tuple[int, str]] = []
    last_owners = ""
    seen_groups = 0
    delays: dict[str, int | None] = {}
    while sim.pending() and (sim.next_time() or 0) <= end:
        rec = sim.step()
        assert rec is not None
        if progress is not None and sim.steps % 4096 == 0:
            progress(sim.now, end)
        if rec.kind == "action":
            timeline.append((rec.time_ms, f"[{rec.actor}] {rec.detail}"))
        for g in sim.group_log[seen_groups:]:
            if g["state"] == "CompletingRebalance":
                timeline.append((g["at"], f"generation {g['generation']} formed: protocol {g['protocol']}, "
                                          f"leader {g['leader']}, members {', '.join(g['members'])}"))
            elif g["state"] in ("PreparingRebalance", "Empty") and (seen_groups == 0 or sim.group_log[seen_groups - 1]["state"] != g["state"]):
                timeline.append((g["at"], f"group -> {g['state']} (generation {g['generation']})"))
            seen_groups += 1
        leaving = {line.get("member") for line in rec.trace if line["event"] == "left"}
        for line in rec.trace:
            text = _narrate_trace(line, line.get("member") in leaving)
            if text is not None:
                timeline.append((line["ts_ms"], text))
        for who, pr in sim.procs.items():  # Connect: the scheduled rebalance delay each assignment carries
            due = getattr(pr.consumer, "scheduled_rejoin_ms", None) if pr.alive else None
            if due is not None and delays.get(who) != due:
                timeline.append((rec.time_ms, f"{who} holds back: scheduled rebalance delay, {(due - rec.time_ms) / 1000:.1f}s "
                                              f"left (it rejoins at {due / 1000:.3f}s; a departed worker's tasks wait)"))
            delays[who] = due
        if any(line["event"] in ("assigned", "revoked", "lost", "left") for line in rec.trace) and _settled(sim):
            owners = _owners_line(sim)
            if owners != last_owners:
                timeline.append((rec.time_ms, owners))
                last_owners = owners
    sim.run_quietly_until(end)
    own = ownership(sim.trace, sc.measure_from_ms, end)
    gens = [g for g in sim.group_log if g["state"] == "CompletingRebalance"]
    gen_at_start = max((g["generation"] for g in sim.group_log if g["at"] < sc.measure_from_ms), default=0)
    rebalances = len({g["generation"] for g in sim.group_log if g["at"] >= sc.measure_from_ms and g["generation"] > gen_at_start
                      and g["state"] in ("CompletingRebalance", "Empty")})
    if protocol == "connect":
        assignor = CONNECT_ASSIGNOR
    else:
        assignor = opts.assignor or ("cooperative-sticky" if protocol in ("cooperative", "static-cooperative") else "range")
    report = ScenarioReport(name, protocol, assignor, opts.seed, opts.members, opts.partitions, timeline, own, gens, sim)
    report.totals = {
        "rebalances": rebalances,
        "partitions_revoked": own.revoked,
        "partitions_paused": sum(1 for ms in own.unowned_ms.values() if ms > 0),
        "partitions_moved": own.moved,
        "partition_seconds_without_owner": round(own.unowned_partition_seconds, 3),
        "double_owned_instants": len(own.double_owned),
        "protocol_messages": sim.messages,
        "measured_from_ms": sc.measure_from_ms,
        "end_ms": end,
    }
    return report
