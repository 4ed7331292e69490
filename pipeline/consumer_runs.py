"""One sweep point of the next-generation protocol (KIP-848): the consumer-protocol simulator, traced and measured.

Theory of operation
-------------------
:func:`run_consumer_point` runs a :class:`~groupspec.pipeline.grid.Point` with ``protocol:
consumer`` through the reference simulator of the new protocol (``reference.sim.consumer_sim``: the
``ConsumerGroupHeartbeat`` coordinator, reconciling consumers, 100 ms steps) on the same churn
schedule as the classic runs (:func:`groupspec.pipeline.runs._schedule`), and measures it with the
same functions, so the columns mean the same thing for both protocol families.

That simulator keeps no trace; :class:`TracedConsumerSimulation` writes one in the trace format
(``docs/formats.md``) while it runs, every line with ``protocol: "consumer"``
and the member epoch as ``generation``: ``joined`` when a process starts, ``assigned`` /
``revoked`` / ``lost`` when the consumer's listener callbacks run (its callback list records them
the moment they happen), ``commit`` for every offset commit with the coordinator's verdict and its
``sent_ms``, ``fenced`` when a heartbeat answers UNKNOWN_MEMBER_ID or FENCED_MEMBER_EPOCH,
``removed`` when the coordinator's timers drop a member whose process still runs, ``left`` when a process closes or crashes.
The one trace checker (``groupspec.trace``) then judges it like any other trace.

Churn: ``start`` starts a process (a new member id; a process that is still running is replaced);
``close`` is a leave (the consumer revokes everything, committing first, then heartbeats with epoch
-1); ``crash`` stops the process without a word (the coordinator removes it after the session
timeout); ``pause`` stops its heartbeats and commits (the simulator's pause). Every pattern of the
grid runs. What the consumer-protocol simulator does not model, the grid collapses or drops
(:func:`groupspec.pipeline.grid._normalise`): it has no network (``loss`` > 0 is dropped), no
application poll loop (``poll_interval_ms`` and ``max_poll_interval_ms`` do not apply: the
consumer reconciles right after each heartbeat answer; its rebalance timeout is the client's 300 s),
no record flow (``commit`` is ``periodic``: every owned partition committed every second;
``rate_per_s`` does not apply, the records columns are null), and no static membership in the
grid (the ``static`` protocols are classic ones).

Metrics, where they differ from the classic runs: ``rebalances`` counts the target-assignment epochs
computed after 20 s (the coordinator's ``target`` log entries), ``generations`` is the last group
epoch, ``rebalance_attempts`` the heartbeats sent with epoch 0 (joins and rejoins) after 20 s,
``protocol_messages`` the heartbeats and offset commits with their answers, ``sim_events`` the
simulator's 100 ms steps.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable

from groupspec.reference.consumer import COORDINATOR_FAULTS, HeartbeatRequest, HeartbeatResponse
from groupspec.reference.consumer import CLIENT_FAULTS, ReconcilingConsumer
from groupspec.reference.sim import STEP_MS, ConsumerSimulation
from groupspec.reference.errors import Error

from .grid import Point
from .runs import MEASURE_FROM_MS, METRICS, TOPIC, point_end_ms, point_schedule, measure_trace

__all__ = ["run_consumer_point", "TracedConsumerSimulation", "FAULTS"]

FAULTS = COORDINATOR_FAULTS | CLIENT_FAULTS
_FENCED = (Error.UNKNOWN_MEMBER_ID, Error.FENCED_MEMBER_EPOCH)
_CALLBACK_EVENT = {"onPartitionsAssigned": "assigned", "onPartitionsRevoked": "revoked", "onPartitionsLost": "lost"}


def _name(member_id: str) -> str:
    """The process behind a member id (``c2.3`` is the third start of ``c2``)."""
    return member_id.split(".", 1)[0]


class _Callbacks(list[tuple[str, list[tuple[str, int]]]]):
    """A consumer's callback list that writes each listener callback into the trace as it runs."""

    def __init__(self, sim: "TracedConsumerSimulation", client: ReconcilingConsumer) -> None:
        super().__init__()
        self.sim = sim
        self.client = client

    def append(self, item: tuple[str, list[tuple[str, int]]]) -> None:
        super().append(item)
        kind = _CALLBACK_EVENT.get(item[0])
        if kind is not None:  # "commit" callbacks are the client's intent; commits are traced at the coordinator
            self.sim.emit(kind, self.client.member_id, partitions=[list(tp) for tp in item[1]],
                          generation=self.client.epoch)


class _CoordinatorTap:
    """The coordinator as the simulator calls it; commits, fences and removals go into the trace."""

    def __init__(self, coord: Any, sim: "TracedConsumerSimulation") -> None:
        self._coord = coord
        self._sim = sim

    def __getattr__(self, name: str) -> Any:
        return getattr(self._coord, name)

    def heartbeat(self, req: HeartbeatRequest, now: int = 0) -> HeartbeatResponse:
        resp = self._coord.heartbeat(req, now)
        self._sim.heartbeats += 1
        if req.member_epoch == 0 and now >= MEASURE_FROM_MS:
            self._sim.joins += 1
        if resp.error in _FENCED:
            self._sim.emit("fenced", req.member_id, error=resp.error.name, generation=req.member_epoch)
        return resp

    def offset_commit(self, member_id: str, member_epoch: int, offsets: dict[tuple[str, int], int]) -> Error:
        err = self._coord.offset_commit(member_id, member_epoch, offsets)
        ok = err == Error.NONE
        self._sim.commits[ok] += 1
        self._sim.emit("commit", member_id, partitions=[[t, p, o] for (t, p), o in sorted(offsets.items())],
                       accepted=ok, sent_ms=self._sim.now, generation=member_epoch,
                       **({} if ok else {"error": err.name}))
        return err

    def tick(self, now: int) -> list[str]:
        removed: list[str] = self._coord.tick(now)
        running = {p.client.member_id for p in self._sim.procs.values()}
        for mid in removed:
            if mid in running:  # a crashed process's member is gone already (its ``left`` is in the trace)
                self._sim.emit("removed", mid)
        return removed


class TracedConsumerSimulation(ConsumerSimulation):  # type: ignore[misc]  # mypy does not see groupspec.reference (installed from reference/)
    """The consumer-protocol simulator with the point's timeouts, writing a trace as it runs."""

    coord: Any  # the simulator's ConsumerGroupCoordinator, then the _CoordinatorTap standing in for it

    def __init__(self, p: Point, faults: frozenset[str] = frozenset()) -> None:
        super().__init__(p.members, p.partitions, p.seed, p.assignor,
                         coordinator_faults=frozenset(faults) & COORDINATOR_FAULTS,
                         consumer_faults=frozenset(faults) & CLIENT_FAULTS)
        self.coord.session_timeout_ms = p.session_timeout_ms
        self.coord.heartbeat_interval_ms = p.heartbeat_interval_ms
        self.coord = _CoordinatorTap(self.coord, self)
        self.trace: list[dict[str, Any]] = [{"ts_ms": 0, "event": "topic", "topic": TOPIC, "partitions": p.partitions}]
        self.heartbeats = 0
        self.joins = 0  # epoch-0 heartbeats after the disturbance began
        self.commits = {True: 0, False: 0}
        self.steps = 0
        self.log_at_measure: int | None = None  # length of the coordinator's log when the disturbance began

    def emit(self, event: str, member_id: str, **fields: Any) -> None:
        ev: dict[str, Any] = {"ts_ms": self.now, "group": "g", "member": _name(member_id), "event": event,
                              "member_id": member_id, "protocol": "consumer"}
        ev.update(fields)
        self.trace.append(ev)

    def start(self, slot: int) -> None:
        old = self.procs.get(slot)
        if old is not None:  # a start of a running process: the old one is gone
            self.crash(slot)
        super().start(slot)
        client = self.procs[slot].client
        client.callbacks = _Callbacks(self, client)
        self.emit("joined", client.member_id)

    def crash(self, slot: int) -> None:
        p = self.procs.get(slot)
        super().crash(slot)
        if p is not None:
            self.emit("left", p.client.member_id)

    def leave(self, slot: int) -> None:
        p = self.procs.get(slot)
        super().leave(slot)  # revokes (callbacks traced), then heartbeats with epoch -1
        if p is not None:
            self.emit("left", p.client.member_id)

    def mark_measure(self) -> None:
        """The disturbance begins (run before the churn actions of that instant)."""
        self.log_at_measure = len(self.coord.log)

    def step(self) -> None:
        super().step()
        self.steps += 1

    def target_epochs_after_measure(self) -> int:
        """Target assignments (distinct epochs) the coordinator computed after the disturbance began."""
        log = self.coord.log[self.log_at_measure or len(self.coord.log):]
        return len({e["epoch"] for e in log if e.get("event") == "target"})


def run_consumer_point(p: Point, sweep: str = "", faults: frozenset[str] = frozenset()
                       ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The row of metrics and the trace of one ``protocol: consumer`` point.

    ``faults``: the reference coordinator's or consumer's fault switches (:data:`FAULTS`), for mutants.
    """
    unknown = set(faults) - FAULTS
    if unknown:
        raise ValueError(f"unknown fault {sorted(unknown)[0]!r}; choose from {', '.join(sorted(FAULTS))}")
    acts, last = point_schedule(p)
    end = point_end_ms(p, last)
    parts = [(TOPIC, i) for i in range(p.partitions)]
    row: dict[str, Any] = {"sweep": sweep, "point_id": p.point_id, **p.to_dict()}
    row.update({k: None for k in METRICS})
    sim = TracedConsumerSimulation(p, frozenset(faults))
    events: dict[int, list[Callable[[], Any]]] = {}
    for t, action, who, args in acts:
        slot = int(who[1:]) - 1
        pause_ms: int = args.get("duration_ms", 0)
        table: dict[str, Callable[[], Any]] = {
            "start": partial(sim.start, slot), "close": partial(sim.leave, slot), "crash": partial(sim.crash, slot),
            "pause": partial(sim.pause, slot, pause_ms)}
        events.setdefault(t - t % STEP_MS, []).append(table[action])
    events[MEASURE_FROM_MS] = [sim.mark_measure] + events.get(MEASURE_FROM_MS, [])
    sim.run_until(end, events)
    trace = sim.trace
    alive = sorted({_name(proc.client.member_id) for proc in sim.procs.values()})
    row.update(measure_trace(trace, last, end, parts, alive, f"{sweep}/{p.point_id}"))
    row.update(
        rebalances=sim.target_epochs_after_measure(),
        generations=sim.coord.group_epoch,
        rebalance_attempts=sim.joins,
        commits_accepted=sim.commits[True],
        commits_rejected=sim.commits[False],
        protocol_messages=2 * (sim.heartbeats + sim.commits[True] + sim.commits[False]),
        sim_events=sim.steps,
        sim_end_ms=end,
    )
    return row, trace
