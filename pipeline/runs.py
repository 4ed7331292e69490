"""One sweep point: run the reference simulator deterministically and measure it (no Spark here).

:func:`run_point` builds the group a :class:`~groupspec.pipeline.grid.Point` describes, schedules
its churn, runs it to the end, and returns one row (:data:`METRICS`). The same point gives the same
row, byte for byte, on any machine and in any executor: the run's only randomness is
``random.Random(seed)`` (the simulator's network, the churn's random faults).

Timeline of every run: members ``c1..cN`` start 700 ms apart (closer in groups above 17) (the group forms); the disturbance
starts at ``MEASURE_FROM_MS`` (20 s); totals are measured from there to the end, so start-up does
not count. Churn patterns (:data:`~groupspec.pipeline.grid.CHURN`):

* ``steady``: nothing happens (a baseline); ``join``: ``cN`` starts only at 20 s;
* ``leave``: ``cN`` closes at 20 s; ``crash``: ``cN`` crashes at 20 s (no LeaveGroup);
* ``bounce``: ``cN`` closes at 20 s and starts again ``bounce_ms`` later (a static member's close
  sends no LeaveGroup, as Kafka's Java client);
* ``rolling-restart``: every member in turn closes and restarts 3 s later, 15 s apart;
* ``random``: crashes (each followed by a restart 3 s later) and GC pauses (2-15 s) drawn at
  ``crash_per_min`` / ``pause_per_min`` over 60 s; these rates also add to any other pattern.

The run ends ``settle`` after the last churn action: ``max(30 s, session timeout + 20 s)``, plus
the Connect delay for ``connect``. Metrics:

* ``rebalances``: generations formed after 20 s (ZooKeeper: membership changes seen);
  ``generations``: the last generation; ``rebalance_attempts``: JoinGroups sent after 20 s
  (ZooKeeper: every consumer's rebalance attempts, retries included); ``notifications``
  (ZooKeeper: watch notifications);
* ``partitions_moved``: owner changes after 20 s; ``moves_optimum``: the fewest owner changes that
  turn the ownership at 20 s into a balanced assignment over the members alive at the end;
* ``partition_seconds_unowned``: the sum over partitions of the time without an owner while a member
  was alive; ``seconds_to_converge``: from the last churn action to the last ownership change, when the
  group ends complete and balanced (else null, and ``converged`` false);
* ``violations`` / ``violated``: what the project's trace checker (``groupspec.trace``) finds in the
  run's trace (violations, and the ids of the violated properties);
* records (:mod:`groupspec.reference.sim.records`): produced, processed, processed twice, skipped,
  commits accepted / rejected (null for ``connect`` and ``zookeeper``).
"""
from __future__ import annotations

import random
from typing import Any

from groupspec.reference.connect import ConnectWorker, WorkerConfig
from groupspec.reference.classic import ConsumerConfig
from groupspec.reference.sim import NetworkConfig, RecordFlow, RecordsConfig, strategy_config, SimConfig, Simulator
from groupspec.reference.sim import ownership
from groupspec.reference.history import ZkConfig, ZkGroup

from .grid import Point

__all__ = ["run_point", "run_point_with_trace", "run_length_ms", "METRICS", "ROW_SCHEMA", "MEASURE_FROM_MS", "check_trace",
           "measure_trace"]

MEASURE_FROM_MS = 20_000
STAGGER_MS = 700
TOPIC = "t"

# name -> (Arrow/Spark type, meaning); the key columns come first (the Point's fields)
METRICS: dict[str, tuple[str, str]] = {
    "rebalances": ("long", "generations formed after the disturbance (ZooKeeper: membership changes)"),
    "generations": ("long", "the last generation"),
    "generations_completed": ("long", "generations the group completed (reached Stable), start-up included "
                                      "(null for ZooKeeper)"),
    "rebalance_attempts": ("long", "JoinGroups sent after the disturbance (ZooKeeper: rebalance attempts incl. retries)"),
    "notifications": ("long", "ZooKeeper watch notifications (null for the coordinator protocols)"),
    "failed_claims": ("long", "ZooKeeper owner-node claims that failed (null otherwise)"),
    "partitions_moved": ("long", "owner changes after the disturbance"),
    "moves_optimum": ("long", "fewest owner changes reaching a balanced assignment of the final members"),
    "partition_seconds_unowned": ("double", "partition-seconds without an owner while a member was alive"),
    "seconds_to_converge": ("double", "last churn action -> last ownership change, if the end is complete and balanced"),
    "converged": ("boolean", "the group ended with a complete, balanced assignment"),
    "violations": ("long", "violations the trace checker found (null if it is not installed)"),
    "violated": ("string", "ids of the violated properties, comma-separated"),
    "double_owned_instants": ("long", "instants at which a partition had two owners (the simulator's own replay)"),
    "records_produced": ("long", "records appended to the topic"),
    "records_processed": ("long", "record processings"),
    "records_processed_twice": ("long", "extra processings of records processed before"),
    "records_skipped": ("long", "records below the committed offset that nobody processed"),
    "commits_accepted": ("long", "offset commits the coordinator accepted"),
    "commits_rejected": ("long", "offset commits that failed"),
    "protocol_messages": ("long", "requests and responses sent"),
    "sim_events": ("long", "simulator events processed"),
    "sim_end_ms": ("long", "simulated time at the end"),
    "trace_events": ("long", "lines in the run's trace"),
}

_KEY_TYPES = {
    "tag": "string", "protocol": "string", "assignor": "string", "members": "long", "partitions": "long",
    "churn": "string", "crash_per_min": "double", "pause_per_min": "double", "loss": "double",
    "session_timeout_ms": "long", "heartbeat_interval_ms": "long", "max_poll_interval_ms": "long",
    "connect_delay_ms": "long", "bounce_ms": "long", "poll_interval_ms": "long", "commit": "string", "rate_per_s": "double", "seed": "long",
}
ROW_SCHEMA: list[tuple[str, str]] = (
    [("sweep", "string"), ("point_id", "string")] + list(_KEY_TYPES.items()) + [(k, t) for k, (t, _) in METRICS.items()]
)


def point_schedule(p: Point) -> tuple[list[tuple[int, str, str, dict[str, Any]]], int]:
    """The churn as ``(time, action, member, args)`` and the time of the last churn action."""
    rng = random.Random(f"churn:{p.seed}")
    names = [f"c{i}" for i in range(1, p.members + 1)]
    acts: list[tuple[int, str, str, dict[str, Any]]] = []
    first = names if p.churn != "join" else names[:-1]
    stagger = min(STAGGER_MS, 12_000 // max(1, p.members))  # the group has formed before 20 s
    for i, n in enumerate(first):
        acts.append((i * stagger, "start", n, {}))
    t0 = MEASURE_FROM_MS
    last = t0
    if p.churn == "join":
        acts.append((t0, "start", names[-1], {}))
    elif p.churn == "leave":
        acts.append((t0, "close", names[-1], {}))
    elif p.churn == "crash":
        acts.append((t0, "crash", names[-1], {}))
    elif p.churn == "bounce":
        acts.append((t0, "close", names[-1], {}))
        acts.append((t0 + p.bounce_ms, "start", names[-1], {}))
        last = t0 + p.bounce_ms
    elif p.churn == "rolling-restart":
        for i, n in enumerate(names):
            t = t0 + i * 15_000
            acts.append((t, "close", n, {}))
            acts.append((t + 3000, "start", n, {}))
            last = t + 3000
    random_window = 60_000 if p.churn == "random" else 0
    if p.churn == "random" or p.crash_per_min or p.pause_per_min:
        window = max(random_window, last - t0)
        for rate, kind in ((p.crash_per_min, "crash"), (p.pause_per_min, "pause")):
            if rate <= 0:
                continue
            at = float(t0)
            while True:
                at += rng.expovariate(rate / 60_000.0)
                if at > t0 + window:
                    break
                who = rng.choice(names)
                if kind == "crash":
                    acts.append((int(at), "crash", who, {}))
                    acts.append((int(at) + 3000, "start", who, {}))
                    last = max(last, int(at) + 3000)
                else:
                    acts.append((int(at), "pause", who, {"duration_ms": rng.randint(2000, 15000)}))
                    last = max(last, int(at))
        last = max(last, t0 + random_window)
    return acts, last


def run_length_ms(p: Point) -> int:
    """Simulated time at which the point's run ends."""
    return point_end_ms(p, point_schedule(p)[1])


def point_end_ms(p: Point, last: int) -> int:
    settle = max(30_000, p.session_timeout_ms + 20_000)
    if p.protocol == "connect":
        settle += p.connect_delay_ms + p.session_timeout_ms
    return last + settle


def _member_config(p: Point, name: str) -> ConsumerConfig:
    static = p.protocol.startswith("static")
    if p.protocol == "connect":
        return WorkerConfig(group_id="g", client_id=name, connector=TOPIC, max_delay_ms=p.connect_delay_ms,
                            session_timeout_ms=p.session_timeout_ms, heartbeat_interval_ms=p.heartbeat_interval_ms,
                            max_poll_interval_ms=p.max_poll_interval_ms)
    cfg = ConsumerConfig(
        group_id="g", client_id=name, topics=(TOPIC,), assignors=(p.assignor,),
        group_instance_id=f"{name}-instance" if static else None,
        session_timeout_ms=p.session_timeout_ms, heartbeat_interval_ms=p.heartbeat_interval_ms,
        max_poll_interval_ms=p.max_poll_interval_ms,
    )
    return strategy_config(cfg, p.commit)


def _owners_at(events: list[dict[str, Any]], t: int) -> dict[tuple[str, int], str]:
    own = ownership([e for e in events if int(e["ts_ms"]) < t], 0, t)
    return {tp: o[0] for tp, o in own.final_owners.items() if len(o) == 1}


def _optimum(before: dict[tuple[str, int], str], final_members: list[str], parts: list[tuple[str, int]]) -> int:
    """Fewest owner changes from ``before`` to a balanced assignment over ``final_members``."""
    if not final_members:
        return 0
    held = {m: sum(1 for tp in parts if before.get(tp) == m) for m in final_members}
    per, extra = divmod(len(parts), len(final_members))
    order = sorted(final_members, key=lambda m: -held[m])
    kept = sum(min(held[m], per + (1 if i < extra else 0)) for i, m in enumerate(order))
    return len(parts) - kept


def _settled_at(events: list[dict[str, Any]], after: int, parts: list[tuple[str, int]],
                alive: list[str]) -> tuple[bool, float | None]:
    own = ownership(events, 0, None)
    owners = own.final_owners
    counts = {m: 0 for m in alive}
    complete = True
    for tp in parts:
        o = owners.get(tp, [])
        if len(o) != 1 or o[0] not in counts:
            complete = False
            break
        counts[o[0]] += 1
    balanced = bool(counts) and max(counts.values()) - min(counts.values()) <= 1
    if not (complete and balanced):
        return False, None
    last = max((int(e["ts_ms"]) for e in events if e.get("event") in ("assigned", "revoked", "lost", "left")
                and e.get("partitions", True) and int(e["ts_ms"]) >= after), default=after)
    return True, round((last - after) / 1000.0, 3)


def check_trace(events: list[dict[str, Any]], source: str) -> tuple[int | None, str | None]:
    """The project's trace checker on one run's trace: (violations, violated property ids)."""
    try:
        from groupspec.trace import check_events
    except ImportError:
        return None, None
    res = check_events(events, source=source).to_dict()
    n = 0
    ids: set[str] = set()
    for g in res.get("groups", []):
        for prop in g.get("properties", []):
            if prop.get("verdict") == "violated":
                ids.add(prop["id"])
                n += len(prop.get("violations", [])) or 1
    return n, ",".join(sorted(ids))


def run_point_with_trace(p: Point, sweep: str = "") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The row of metrics and the run's trace."""
    if p.protocol == "consumer":
        raise ValueError("a consumer-protocol point runs in groupspec.pipeline.points.run_point (consumer_runs.py)")
    acts, last = point_schedule(p)
    end = point_end_ms(p, last)
    parts = [(TOPIC, i) for i in range(p.partitions)]
    row: dict[str, Any] = {"sweep": sweep, "point_id": p.point_id, **p.to_dict()}
    row.update({k: None for k in METRICS})
    if p.protocol == "zookeeper":
        zk = ZkGroup(ZkConfig(seed=p.seed, partitions=p.partitions))
        for t, action, who, _ in acts:
            if action in ("start", "close", "crash"):
                zk.at(t, action, who)  # GC pauses are not modelled in the ZooKeeper group
        changes_before = None
        zk.run_until(MEASURE_FROM_MS - 1)
        changes_before = zk.changes
        attempts_before = zk.rebalance_attempts
        notif_before = zk.notifications
        claims_before = zk.failed_claims
        zk.run_until(end)
        trace = zk.trace
        alive = sorted(n for n, c in zk.consumers.items() if c.alive)
        row.update(rebalances=zk.changes - changes_before, generations=zk.changes,
                   rebalance_attempts=zk.rebalance_attempts - attempts_before,
                   notifications=zk.notifications - notif_before, failed_claims=zk.failed_claims - claims_before,
                   protocol_messages=None, sim_events=zk.steps, sim_end_ms=zk.now)
    else:
        sim = Simulator(SimConfig(seed=p.seed, topics=((TOPIC, p.partitions),), poll_interval_ms=p.poll_interval_ms,
                                  network=NetworkConfig(loss=p.loss) if p.loss else NetworkConfig()))
        flow = None
        if p.protocol != "connect":
            flow = RecordFlow(RecordsConfig(strategy=p.commit, rate_per_s=p.rate_per_s))
            flow.attach(sim)
        for t, action, who, args in acts:
            if action == "start":
                extra: dict[str, Any] = {"config": _member_config(p, who)}
                if p.protocol == "connect":
                    extra["member"] = ConnectWorker
                sim.at(t, "start", who, **extra)
            else:
                sim.at(t, action, who, **args)
        sim.run_quietly_until(end)
        trace = sim.trace
        gl = sim.group_log
        gen_at_start = max((g["generation"] for g in gl if g["at"] < MEASURE_FROM_MS), default=0)
        formed = {g["generation"] for g in gl if g["at"] >= MEASURE_FROM_MS and g["generation"] > gen_at_start
                  and g["state"] in ("CompletingRebalance", "Empty")}
        completed = len({g["generation"] for g in gl if g["state"] == "Stable"})
        joins = sim.requests_received("JoinGroup", MEASURE_FROM_MS)
        alive = sorted(n for n, pr in sim.procs.items() if pr.alive and pr.consumer.fatal is None)
        row.update(rebalances=len(formed), generations=max((g["generation"] for g in gl), default=0),
                   generations_completed=completed,
                   rebalance_attempts=joins, protocol_messages=sim.messages, sim_events=sim.steps, sim_end_ms=sim.now)
        if flow is not None:
            row.update(flow.summary())
    row.update(measure_trace(trace, last, end, parts, alive, f"{sweep}/{p.point_id}"))
    return row, trace


def measure_trace(trace: list[dict[str, Any]], last: int, end: int, parts: list[tuple[str, int]],
                  alive: list[str], source: str) -> dict[str, Any]:
    """The metrics every protocol's run reads from its trace alone (the classic runs here, the
    next-generation protocol's in :mod:`groupspec.pipeline.consumer_runs`): ownership after the
    disturbance, the fewest moves, convergence after the last churn action (``last``) with the members
    ``alive`` at the end, and the trace checker's verdicts."""
    own = ownership(trace, MEASURE_FROM_MS, end)
    before = _owners_at(trace, MEASURE_FROM_MS)
    converged, secs = _settled_at(trace, last, parts, alive)
    violations, violated = check_trace(trace, source)
    return {
        "partitions_moved": own.moved,
        "moves_optimum": _optimum(before, alive, parts),
        "partition_seconds_unowned": round(own.unowned_partition_seconds, 3),
        "seconds_to_converge": secs,
        "converged": converged,
        "violations": violations,
        "violated": violated,
        "double_owned_instants": len(own.double_owned),
        "trace_events": len(trace),
    }


def run_point(p: Point, sweep: str = "") -> dict[str, Any]:
    """The row of metrics of one point."""
    return run_point_with_trace(p, sweep)[0]

