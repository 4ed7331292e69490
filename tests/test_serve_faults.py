"""Fault injection and the transcript of `groupspec serve`, driven without sockets on a fake clock."""
from __future__ import annotations

import pytest

from groupspec.reference.classic import Subscription, encode_subscription, CoordinatorConfig
from groupspec.reference.sim import run_script
from groupspec.serve import Cluster, FaultError, FaultPlan, wire
from kafka.protocol.consumer import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t

    def ms(self, ms: int) -> None:
        self.t += ms / 1000


class Client:
    """A scripted consumer speaking the wire protocol to a Cluster (JoinGroup v9, SyncGroup v5, Heartbeat v4)."""

    def __init__(self, cluster: Cluster, name: str, node: int = 0) -> None:
        self.cluster, self.name = cluster, name
        self.conn = cluster.connect(node)
        self.member_id = ""
        self.generation = -1
        self.corr = 0

    def send(self, req, version: int) -> None:
        self.corr += 1
        self.cluster.request(self.conn, wire.frame_request(req, self.corr, self.name, version)[4:])

    def answers(self, cls, version: int) -> list:
        mine = [o for o in self.cluster.out if o[0] is self.conn]
        self.cluster.out = [o for o in self.cluster.out if o[0] is not self.conn]
        return [cls.decode(data[4:], version=version, header=True) if data else None for _, data, _ in mine]

    def join(self) -> None:
        meta = encode_subscription(Subscription(("t",)))
        p = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=meta)
        self.send(JoinGroupRequest(version=9, group_id="g", session_timeout_ms=6000, rebalance_timeout_ms=6000,
                                   member_id=self.member_id, group_instance_id=None, protocol_type="consumer",
                                   protocols=[p], reason=None), 9)

    def heartbeat(self) -> int:
        self.send(HeartbeatRequest(version=4, group_id="g", generation_id=self.generation, member_id=self.member_id,
                                   group_instance_id=None), 4)
        (r,) = self.answers(HeartbeatResponse, 4)
        return r.error_code


def _cluster(*rules, clock=None, **kw) -> tuple[Cluster, Clock]:
    clock = clock or Clock()
    plan = FaultPlan()
    for r in rules:
        plan.add(FaultPlan.parse_rule(r))
    c = Cluster(topics={"t": 2}, config=CoordinatorConfig(initial_rebalance_delay_ms=0), plan=plan, clock=clock,
                record_group="g", **kw)
    return c, clock


def _stable_member(c: Cluster, clock: Clock, name: str = "a") -> Client:
    a = Client(c, name)
    a.join()
    (r,) = a.answers(JoinGroupResponse, 9)
    assert r.error_code == 79
    a.member_id = r.member_id
    a.join()
    c.tick()  # the initial delay (0 ms) runs out
    (r,) = a.answers(JoinGroupResponse, 9)
    assert r.error_code == 0
    a.generation = r.generation_id
    a.send(SyncGroupRequest(version=5, group_id="g", generation_id=a.generation, member_id=a.member_id,
                            group_instance_id=None, protocol_type="consumer", protocol_name="range",
                            assignments=[SyncGroupRequest.SyncGroupRequestAssignment(member_id=a.member_id, assignment=b"")]), 5)
    (s,) = a.answers(SyncGroupResponse, 5)
    assert s.error_code == 0
    return a


def _replays(c: Cluster) -> None:
    assert c.recorder is not None
    assert "".join(x + "\n" for x in run_script(c.recorder.script_text())) == c.recorder.transcript_text()


def test_error_rule_answers_the_nth_request_and_only_it():
    c, clock = _cluster({"on": {"api": "Heartbeat", "nth": 2, "count": 2}, "do": "error", "error": "REBALANCE_IN_PROGRESS"})
    a = _stable_member(c, clock)
    assert [a.heartbeat() for _ in range(5)] == [0, 27, 27, 0, 0]
    assert sum(1 for line in c.recorder.script if '"injected": "REBALANCE_IN_PROGRESS"' in line) == 2
    _replays(c)


def test_delay_and_drop_rules():
    c, clock = _cluster({"on": {"api": "Heartbeat", "nth": 1}, "do": "delay", "ms": 250},
                        {"on": {"api": "Heartbeat", "nth": 2}, "do": "drop"})
    a = _stable_member(c, clock)
    a.send(HeartbeatRequest(version=4, group_id="g", generation_id=a.generation, member_id=a.member_id), 4)
    assert [(d, bool(data)) for conn, data, d in c.out] == [(250, True)]
    c.out.clear()
    a.send(HeartbeatRequest(version=4, group_id="g", generation_id=a.generation, member_id=a.member_id), 4)
    assert [(d, data) for conn, data, d in c.out] == [(0, b"")]  # done, nothing written
    c.out.clear()
    assert a.heartbeat() == 0


def test_failover_moves_the_coordinator_with_a_load_window():
    c, clock = _cluster({"on": {"api": "Heartbeat", "nth": 1}, "do": "failover", "load_ms": 500})
    a = _stable_member(c, clock)
    assert a.heartbeat() == 0  # answered, then the coordinator moves
    assert c.coordinator_node == 1
    assert a.heartbeat() == 16  # NOT_COORDINATOR from node 0
    a.send(FindCoordinatorRequest(version=4, key_type=0, coordinator_keys=["g"]), 4)
    (f,) = a.answers(FindCoordinatorResponse, 4)
    assert f.coordinators[0].node_id == 1 and f.coordinators[0].port == c.ports[1]
    b = Client(c, "a", node=1)
    b.member_id, b.generation = a.member_id, a.generation
    clock.ms(100)
    assert c.coordinator.group("g") is None  # still loading
    assert b.heartbeat() == 0  # Kafka turns COORDINATOR_LOAD_IN_PROGRESS into NONE for Heartbeat
    b.join()
    (r,) = b.answers(JoinGroupResponse, 9)
    assert r.error_code == 14  # COORDINATOR_LOAD_IN_PROGRESS
    clock.ms(500)
    c.tick()
    assert c.coordinator.group("g").member_ids == (a.member_id,)  # loaded from the log
    assert b.heartbeat() == 0
    steps = [line for line in c.recorder.script if '"fault"' in line]
    assert [s.split('"fault": ')[1][:12] for s in steps] == ['"unload"}', '"load_start"', '"load_finish']
    _replays(c)


def test_expire_session_loses_heartbeats_until_the_coordinator_expires_the_member():
    c, clock = _cluster({"on": {"api": "Heartbeat", "nth": 2}, "do": "expire_session"})
    a = _stable_member(c, clock)
    assert a.heartbeat() == 0
    assert a.heartbeat() == 0  # the trigger: this one reached the coordinator
    for _ in range(5):
        clock.ms(1000)
        c.tick()
        assert a.heartbeat() == 0  # lost on the way, answered NONE by the network
    clock.ms(1500)
    c.tick()
    assert c.coordinator.group("g").members == ()
    assert a.heartbeat() == 25  # UNKNOWN_MEMBER_ID: its session expired
    _replays(c)


def test_pause_clock_stops_the_coordinators_time():
    c, clock = _cluster({"on": {"at_ms": 1000}, "do": "pause_clock", "ms": 10000})
    a = _stable_member(c, clock)
    clock.ms(1000)
    c.tick()
    assert c.now_ms() == 1000
    clock.ms(9000)
    c.tick()
    assert c.now_ms() == 1000  # no session expired while the clock stood still
    assert a.heartbeat() == 0
    clock.ms(2000)
    assert c.now_ms() == 2000


def test_without_faults_the_session_expires():
    # the pause test is not vacuous: the same member without the pause is expired
    c, clock = _cluster()
    a = _stable_member(c, clock)
    clock.ms(10000)
    c.tick()
    assert a.heartbeat() == 25


def test_transcript_replay_check_catches_a_broken_coordinator():
    c, clock = _cluster()
    a = _stable_member(c, clock)
    b = Client(c, "b")
    b.join()
    (r,) = b.answers(JoinGroupResponse, 9)
    b.member_id = r.member_id
    b.join()
    assert a.heartbeat() == 27
    a.join()
    c.tick()
    _replays(c)
    # the same session replayed against a coordinator that keeps the generation at join completion
    mutant = "".join(x + "\n" for x in run_script(c.recorder.script_text(), faults={"no_generation_bump"}))
    assert mutant != c.recorder.transcript_text()


@pytest.mark.parametrize("rule, message", [
    ({"on": {"api": "Nope"}, "do": "drop"}, "on.api"),
    ({"on": {"api": "Heartbeat"}, "do": "error", "error": "NOT_AN_ERROR"}, "Kafka error name"),
    ({"on": {"at_ms": 5}, "do": "drop"}, "acts on a request"),
    ({"on": {"api": "Heartbeat"}, "do": "delay"}, "needs field 'ms'"),
    ({"on": {"api": "Heartbeat", "nth": 0}, "do": "drop"}, "'nth' must be an integer >= 1"),
    ({"on": {"api": "Heartbeat"}, "do": "drop", "extra": 1}, "unknown field 'extra'"),
])
def test_bad_rules_are_named(rule, message):
    with pytest.raises(FaultError, match=message):
        FaultPlan.parse_rule(rule)


def test_fault_script_errors_name_the_line():
    with pytest.raises(FaultError, match="f.jsonl: line 3: bad JSON"):
        FaultPlan.parse_lines('# comment\n{"on": {"api": "Heartbeat"}, "do": "drop"}\n{oops\n', source="f.jsonl")
