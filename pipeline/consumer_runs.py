"""One sweep point of the next-generation protocol (KIP-848): the consumer-protocol simulator, traced and measured.

Theory of operation
-------------------
:func:`run_consumer_point` runs a :class:`~groupspec.pipeline.grid.Point` with ``protocol:
consumer`` through the reference simulator of the new protocol (``reference.sim.consumer_sim``: the
``ConsumerGroupHeartbeat`` coordinator, reconciling consumers, 100 ms steps) on the same churn
schedule as the classic runs (:func:`groupspec.pipeline.runs._schedule`), and measures it with the
same functions, so the columns mean the same thing for both protocol families.

That simulator writes its run in the trace format as it goes (``ConsumerSimulation.trace``: every line
with ``protocol: "consumer"`` and the member epoch as ``generation``); the one trace checker
(``groupspec.trace``) then judges it like any other trace. :class:`TracedConsumerSimulation` adds the
point's timeouts and the counts the row needs (joins after the disturbance began, the coordinator's log
position then, the steps).

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

from groupspec.reference.consumer import CLIENT_FAULTS, COORDINATOR_FAULTS, HeartbeatRequest, HeartbeatResponse
from groupspec.reference.sim import STEP_MS, ConsumerSimulation, process_name

from .grid import Point
from .runs import MEASURE_FROM_MS, METRICS, TOPIC, point_end_ms, point_schedule, measure_trace

__all__ = ["run_consumer_point", "TracedConsumerSimulation", "FAULTS"]

FAULTS = COORDINATOR_FAULTS | CLIENT_FAULTS


class TracedConsumerSimulation(ConsumerSimulation):
    """The consumer-protocol simulator with the point's timeouts and the counts of its row."""


    def __init__(self, p: Point, faults: frozenset[str] = frozenset()) -> None:
        super().__init__(p.members, p.partitions, p.seed, p.assignor,
                         coordinator_faults=frozenset(faults) & COORDINATOR_FAULTS,
                         consumer_faults=frozenset(faults) & CLIENT_FAULTS)
        self.coord.session_timeout_ms = p.session_timeout_ms
        self.coord.heartbeat_interval_ms = p.heartbeat_interval_ms
        self.joins = 0  # epoch-0 heartbeats after the disturbance began
        self.steps = 0
        self.log_at_measure: int | None = None  # length of the coordinator's log when the disturbance began

    def send_heartbeat(self, req: HeartbeatRequest) -> HeartbeatResponse:
        if req.member_epoch == 0 and self.now >= MEASURE_FROM_MS:
            self.joins += 1
        return super().send_heartbeat(req)

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
    alive = sorted({process_name(proc.client.member_id) for proc in sim.procs.values()})
    row.update(measure_trace(trace, last, end, parts, alive, f"{sweep}/{p.point_id}"))
    row.update(
        rebalances=sim.target_epochs_after_measure(),
        generations=sim.coord.group_epoch,
        rebalance_attempts=sim.joins,
        commits_accepted=sim.commits[True],
        commits_rejected=sim.commits[False],
        protocol_messages=2 * (sim.report.heartbeats + sim.commits[True] + sim.commits[False]),
        sim_events=sim.steps,
        sim_end_ms=end,
    )
    return row, trace
