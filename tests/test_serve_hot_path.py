"""The heartbeat hot path of `groupspec serve` (issue 32) answers as the general path, and the reference
coordinator's timer heap, compacted as sessions are re-armed, fires as one that is never compacted.

* the socket layer's Heartbeat lane (``Cluster.heartbeat_answer``, its conditions inlined) against the general
  path (``Cluster.request``) on two clusters in the same condition (a fault rule, a capture, lost heartbeats,
  a connection to a node that is not the coordinator, or none): the same answer bytes, statistics and capture
  on every generated heartbeat; lanes that skip one of the conditions are caught;
* the coordinator's ``_schedule`` against the same coordinator whose heap only grows (lazy deletion alone):
  the same answers and expirations on generated heartbeat schedules, the heap bounded; a compaction that
  rebuilds the heap before recording the new timer is caught.
"""
from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupspec.reference import messages as m
from groupspec.reference.classic import CoordinatorConfig, GroupCoordinator
from groupspec.reference.classic.group import Timer
from groupspec.serve import Cluster, FaultPlan, wire
from kafka.protocol.consumer import HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, SyncGroupRequest

CONDITIONS = ("none", "rule", "capture", "lost", "other-node")


def _cluster(condition: str) -> tuple[Cluster, Any, str, int, list[float]]:
    """Two brokers, one member joined and synced through node 0 (fake clock), then ``condition`` set; returns
    (cluster, the connection its heartbeats come on, member id, generation, the clock)."""
    now = [0.0]
    c = Cluster(topics={"t": 2}, brokers=2, record=False, config=CoordinatorConfig(initial_rebalance_delay_ms=0),
                clock=lambda: now[0], member_id_seed=7)
    conn = c.connect(0)
    p = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"")
    member_id, generation = "", -1
    for _ in range(2):
        req = JoinGroupRequest(version=5, group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=10000,
                               member_id=member_id, group_instance_id=None, protocol_type="consumer", protocols=[p])
        c.request(conn, wire.frame_request(req, 1, "m", 5)[4:])
        c.tick()
        if c.out:
            answer = JoinGroupResponse[5].decode(c.out[-1][1][8:])
            member_id, generation = answer.member_id, answer.generation_id
        c.out.clear()
    asg = SyncGroupRequest.SyncGroupRequestAssignment
    c.request(conn, wire.frame_request(SyncGroupRequest(version=3, group_id="g", generation_id=generation,
                                                        member_id=member_id, group_instance_id=None,
                                                        assignments=[asg(member_id=member_id, assignment=b"")]),
                                       2, "m", 3)[4:])
    c.out.clear()
    if condition == "rule":
        c.plan.add(FaultPlan.parse_rule({"on": {"api": "Heartbeat"}, "do": "error", "error": "NOT_COORDINATOR"}))
    elif condition == "capture":
        c.capture = {}
    elif condition == "lost":
        c.expire_session(member_id)
    elif condition == "other-node":
        conn = c.connect(1)
    return c, conn, member_id, generation, now


def _answers(c: Cluster, conn: Any, frame: bytes, lane: bool) -> list[tuple[int, bytes | None]]:
    """``frame`` handed to ``c`` through the lane first (as server.py's ``_Link._pump``) or through ``request``
    alone: the answers given, in order, as (connection number, bytes)."""
    answer = c.heartbeat_answer(conn, frame) if lane and len(frame) > 9 and frame[1] == 12 else None
    if answer is None:
        c.request(conn, frame)
    out = [(x.number, data) for x, data, _d in c.out] + ([(conn.number, answer)] if answer else [])
    c.out.clear()
    return out


STEPS = st.lists(st.tuples(st.integers(0, 2), st.integers(-1, 2), st.integers(0, 6000), st.integers(3, 4),
                           st.sampled_from([None, 12, 20])), min_size=1, max_size=10)


def _lane_differs(condition: str, steps: list[tuple[int, int, int, int, int | None]]) -> bool:
    """Whether the lane and the general path, each on its own cluster in ``condition``, answered ``steps``
    (member: 0 the joined one, 1 an unknown id, 2 empty; generation offset; ms; version; cut) differently."""
    lane, lconn, mid, gen, lnow = _cluster(condition)
    full, fconn, _mid, _gen, fnow = _cluster(condition)
    clock_ms = 0
    for member, offset, ms, version, cut in steps:
        clock_ms += ms
        member_id = (mid, "unknown", "")[member]
        frame = wire.frame_request(HeartbeatRequest(version=version, group_id="g", generation_id=gen + offset,
                                                    member_id=member_id, group_instance_id=None), 9, "m", version)[4:]
        if cut is not None:
            frame = frame[:cut]
        got = []
        for c, conn, now in ((lane, lconn, lnow), (full, fconn, fnow)):
            now[0] = clock_ms / 1000
            c.tick()
            got.append((_answers(c, conn, frame, c is lane), dict(c.stats), c.capture))
        if got[0] != got[1]:
            return True
    return False


@settings(max_examples=60, deadline=None)
@given(condition=st.sampled_from(CONDITIONS), steps=STEPS)
def test_the_heartbeat_lane_answers_as_the_general_path_in_every_condition(condition: str, steps: list[Any]) -> None:
    assert not _lane_differs(condition, steps)


@contextmanager
def _lane_without(check: str) -> Iterator[None]:
    """A mutant of the lane that does not look at one of its conditions: hidden from it during the call."""
    real = Cluster.heartbeat_answer

    def mutant(self: Cluster, conn: Any, frame: bytes) -> bytes | None:
        saved = (self.plan, self.capture, self._lost_heartbeats, conn.node)
        if check == "rule":
            self.plan = FaultPlan()
        elif check == "capture":
            self.capture = None
        elif check == "lost":
            self._lost_heartbeats = set()
        elif check == "other-node":
            conn.node = self.coordinator_node
        try:
            return real(self, conn, frame)
        finally:
            self.plan, self.capture, self._lost_heartbeats, conn.node = saved

    Cluster.heartbeat_answer = mutant  # type: ignore[method-assign]
    try:
        yield
    finally:
        Cluster.heartbeat_answer = real  # type: ignore[method-assign]


@pytest.mark.parametrize("check", CONDITIONS[1:])
def test_a_lane_that_skips_a_condition_is_caught(check: str) -> None:
    # (lost heartbeats are answered NONE too, without renewing the session: the third, past the 10 s session, tells)
    steps = [(0, 0, 10, 4, None), (0, 0, 6000, 4, None), (0, 0, 6000, 4, None)]
    assert not _lane_differs(check, steps)
    with _lane_without(check):
        assert _lane_differs(check, steps)


# ------------------------------------------------------------------------------------------ the timer heap

def _grow_only(self: GroupCoordinator, key: Any, delay_ms: int, **payload: Any) -> None:
    """``_schedule`` with lazy deletion alone (every re-arm a new heap entry): the heap before compaction."""
    self._seq += 1
    deadline = self.now_ms + delay_ms
    self._timers[key] = Timer(deadline, self._seq, payload)
    heapq.heappush(self._heap, (deadline, self._seq, key))


def _rebuild_first(self: GroupCoordinator, key: Any, delay_ms: int, **payload: Any) -> None:
    """A broken compaction: the heap rebuilt from the timers before the new one is recorded (its entry lost)."""
    self._seq += 1
    deadline = self.now_ms + delay_ms
    if len(self._heap) > 4 * len(self._timers) + 64:
        self._heap[:] = [(t.deadline, t.seq, k) for k, t in self._timers.items()]
        heapq.heapify(self._heap)
        self._timers[key] = Timer(deadline, self._seq, payload)
    else:
        self._timers[key] = Timer(deadline, self._seq, payload)
        heapq.heappush(self._heap, (deadline, self._seq, key))


def _run(schedule: Callable[..., None] | None, plan: list[tuple[int, int]], members: int) -> tuple[list[Any], int]:
    """``members`` join one group (session 6 s, the least Kafka allows) and sync; then each (member, ms) of ``plan``: time passes by ms and
    the member heartbeats (a member past its session is gone: UNKNOWN_MEMBER_ID). Returns (every answer and
    expiry, the largest heap seen)."""
    c = GroupCoordinator(CoordinatorConfig(initial_rebalance_delay_ms=100, member_id_seed=3))
    if schedule is not None:
        c._schedule = schedule.__get__(c)  # type: ignore[method-assign]
    meta = (("range", b""),)
    ids, joined = [], []
    for i in range(members):
        first = c.handle(0, f"a{i}", m.JoinGroupRequest("g", "", "consumer", meta, 6000, 6000, client_id=f"a{i}"))
        ids.append(first[0].response.member_id)
        joined += c.handle(0, f"a{i}", m.JoinGroupRequest("g", ids[-1], "consumer", meta, 6000, 6000, client_id=f"a{i}"))
    joined += c.advance(200)
    answers = [o.response for o in joined if isinstance(o.response, m.JoinGroupResponse)]
    assert len(answers) == members and all(a.error is m.Error.NONE for a in answers), joined
    generation = answers[0].generation_id
    log: list[Any] = [(o.destination, o.response) for o in joined]
    for i, mid in enumerate(ids):
        log += [(o.destination, o.response) for o in c.handle(200, f"a{i}", m.SyncGroupRequest("g", mid, generation, ()))]
    now, peak = 200, 0
    for member, ms in plan:
        now += ms
        out = c.handle(now, f"a{member}", m.HeartbeatRequest("g", ids[member], generation, version=4))
        log += [(now, o.destination, o.response) for o in out]
        peak = max(peak, len(c._heap))
    log += [(o.destination, o.response) for o in c.advance(now + 10_000)]
    log.append(sorted((k, t.deadline) for k, t in c._timers.items()))
    return log, peak


PLANS = st.lists(st.tuples(st.integers(0, 2), st.sampled_from([0, 1, 3, 50, 400, 7000])), min_size=50, max_size=400)


@settings(max_examples=40, deadline=None)
@given(plan=PLANS)
def test_the_compacted_timer_heap_fires_as_the_one_that_only_grows(plan: list[tuple[int, int]]) -> None:
    compacted, peak = _run(None, plan, 3)
    grown, _ = _run(_grow_only, plan, 3)
    assert compacted == grown
    assert peak <= 4 * 4 + 64 + 1  # at most three sessions, one sync timer: proportional to the live timers


def test_a_compaction_that_loses_the_new_timer_is_caught() -> None:
    # one member heartbeats often and then stops while the other goes on every second: the first member's last
    # session timer must expire it (the other then hears REBALANCE_IN_PROGRESS); one of these lengths ends on a
    # compaction, whose re-armed timer the broken one loses
    caught = False
    for n in range(70, 160):
        plan = [(0, 1)] * n + [(1, 1000)] * 8
        grown, grown_peak = _run(_grow_only, plan, 2)
        assert _run(None, plan, 2)[0] == grown
        assert grown_peak >= n  # without compaction the heap holds every re-arm
        caught |= _run(_rebuild_first, plan, 2)[0] != grown
    assert caught
