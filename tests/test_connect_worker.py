"""The sans-IO Kafka Connect worker (KIP-415) and its embedded protocol bytes (coordinator.md §6).

Most tests play the coordinator's part by hand, as tests/test_consumer.py does, so the worker's
requests, its work and its timers can be asserted one step at a time; the last ones run workers in the
simulator end to end. The fault switch ``drop_connect_delay`` is shown to change what the leader does.
"""
from __future__ import annotations

from typing import Any

import pytest

from groupspec.reference.connect import (
    CONNECTOR_TASK, ConnectAssignment, WorkerMetadata, decode_connect_assignment, decode_worker_metadata,
    encode_connect_assignment, encode_worker_metadata,
)
from groupspec.reference.connect import ConnectWorker, WorkerConfig
from groupspec.reference.classic import ConsumerConfig, MemberState, Send, ConsumerProtocolError
from groupspec.reference.errors import Error
from groupspec.reference.classic import (
    FindCoordinatorRequest, FindCoordinatorResponse, JoinGroupMember, JoinGroupRequest, JoinGroupResponse,
    LeaveGroupRequest, SyncGroupRequest, SyncGroupResponse,
)
from groupspec.reference.sim import SimConfig, Simulator

DELAY = 4000
CONN = ("t", CONNECTOR_TASK)


def T(k: int) -> tuple[str, int]:
    return ("t", k)


def make(tasks: list[int] | None = None, faults: frozenset[str] = frozenset(), **cfg: Any) -> ConnectWorker:
    counts = tasks if tasks is not None else [3]
    config = WorkerConfig(client_id="w1", session_timeout_ms=10000, heartbeat_interval_ms=3000,
                          max_poll_interval_ms=60000, max_delay_ms=cfg.pop("max_delay_ms", DELAY), **cfg)
    return ConnectWorker("w1", config, lambda: {"t": counts[0]}, lambda name: None, faults=faults)


def only(sends: list[Send], kind: type) -> Send:
    matching = [s for s in sends if isinstance(s.request, kind)]
    assert len(matching) == 1, sends
    return matching[0]


def joined(w: ConnectWorker, now: int = 0) -> Send:
    """A fresh worker finds the coordinator and sends JoinGroup (after MEMBER_ID_REQUIRED: with id m1)."""
    s = only(w.start(now), FindCoordinatorRequest)
    j = only(w.receive(now, s.corr, FindCoordinatorResponse(Error.NONE, node_id=1)), JoinGroupRequest)
    return only(w.receive(now, j.corr, JoinGroupResponse(Error.MEMBER_ID_REQUIRED, member_id="m1")), JoinGroupRequest)


def running_of(items: tuple[tuple[str, int], ...]) -> bytes:
    return encode_worker_metadata(WorkerMetadata("http://x/", 3, ConnectAssignment(assigned=items) if items else None, 2))


def lead(w: ConnectWorker, join: Send, others: dict[str, tuple[tuple[str, int], ...]], gen: int, now: int) -> dict[str, ConnectAssignment]:
    """The coordinator answers ``join`` (the worker's, as ``m1``) making it leader of m1 + ``others``;
    returns the assignments in the leader's SyncGroup (and keeps that SyncGroup as ``w._test_sync``)."""
    me = join.request.protocols[0][1]
    members = (JoinGroupMember("m1", None, me),) + tuple(JoinGroupMember(m, None, running_of(r)) for m, r in others.items())
    resp = JoinGroupResponse(Error.NONE, generation_id=gen, protocol_type="connect", protocol_name="sessioned",
                             leader="m1", member_id="m1", members=members)
    sync = only(w.receive(now, join.corr, resp), SyncGroupRequest)
    w._test_sync = sync  # type: ignore[attr-defined]
    return {mid: decode_connect_assignment(blob) for mid, blob in sync.request.assignments}


def synced(w: ConnectWorker, asg: ConnectAssignment, now: int) -> list[Send]:
    sync = w._test_sync  # type: ignore[attr-defined]
    return w.receive(now, sync.corr, SyncGroupResponse(Error.NONE, encode_connect_assignment(asg), "connect", "sessioned"))


def rejoin(w: ConnectWorker, now: int) -> Send:
    w.rejoin_needed = True
    return only(w.poll(now), JoinGroupRequest)


# ---------------------------------------------------------------------------- protocol bytes


def test_assignment_bytes_round_trip_and_group_items_by_connector() -> None:
    a = ConnectAssignment(2, 0, "m1", "http://m1/", 7, (CONN, T(0), T(2), ("u", 1)), (T(1),), 1500)
    blob = encode_connect_assignment(a)
    assert blob[:2] == b"\x00\x02"
    assert decode_connect_assignment(blob) == a
    # a missing trailing delay takes its default, a longer (newer) blob is read up to what is known
    assert decode_connect_assignment(blob[:-4]).delay == 0
    assert decode_connect_assignment(blob + b"\x00\x07") == a


def test_worker_metadata_round_trip_with_and_without_allocation() -> None:
    m = WorkerMetadata("http://w/", 12, ConnectAssignment(assigned=(CONN, T(3))), 1)
    assert decode_worker_metadata(encode_worker_metadata(m)) == m
    assert decode_worker_metadata(encode_worker_metadata(m)).running == (CONN, T(3))
    empty = WorkerMetadata("", -1, None, 2)
    assert decode_worker_metadata(encode_worker_metadata(empty)) == empty and empty.running == ()


@pytest.mark.parametrize("blob", [b"", b"\x00", b"\xff\xff", b"\x00\x01\x00\x00\x00\x05ab"])
def test_malformed_connect_bytes_raise_the_protocol_error(blob: bytes) -> None:
    with pytest.raises(ConsumerProtocolError):
        decode_connect_assignment(blob)
    with pytest.raises(ConsumerProtocolError):
        decode_worker_metadata(blob)


# ---------------------------------------------------------------------------- the worker


def test_config_and_faults_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown Connect worker fault"):
        make(faults=frozenset({"skip_revoke_before_join"}))
    with pytest.raises(TypeError):
        ConnectWorker("w", ConsumerConfig(), lambda: {}, lambda n: None)
    with pytest.raises(ValueError, match="incremental protocol only"):
        make(connect_protocol="default")


def test_join_group_is_a_connect_join_offering_sessioned_then_compatible() -> None:
    j = joined(make())
    req = j.request
    assert req.protocol_type == "connect" and req.group_instance_id is None and req.member_id == "m1"
    assert [n for n, _ in req.protocols] == ["sessioned", "compatible"]
    versions = [decode_worker_metadata(b).version for _, b in req.protocols]
    assert versions == [2, 1]
    md = decode_worker_metadata(req.protocols[0][1])
    assert md.url == "http://w1:8083/" and md.config_offset == 3 and md.allocation is None
    assert [n for n, _ in joined(make(connect_protocol="compatible")).request.protocols] == ["compatible"]


def test_a_lone_leader_starts_the_connector_and_every_task_and_reports_them_next_time() -> None:
    w = make()
    asg = lead(w, joined(w), {}, gen=1, now=0)["m1"]
    assert set(asg.assigned) == {CONN, T(0), T(1), T(2)} and asg.revoked == () and asg.delay == 0
    assert asg.leader == "m1" and asg.config_offset == 3
    assert synced(w, asg, 1) == []
    assert w.state is MemberState.STABLE and w.owned == (CONN, T(0), T(1), T(2))
    assert w.last_completed_generation == 1
    assert [(e.event, e.partitions) for e in w.events if e.event == "assigned"] == [("assigned", (CONN, T(0), T(1), T(2)))]
    md = decode_worker_metadata(rejoin(w, 2).request.protocols[0][1])
    assert md.running == (CONN, T(0), T(1), T(2))  # the allocation: everything it runs


def test_a_revocation_stops_the_work_and_rejoins_at_once() -> None:
    w = make()
    synced(w, lead(w, joined(w), {}, gen=1, now=0)["m1"], 1)
    j = rejoin(w, 10)
    out = lead(w, j, {"m2": ()}, gen=2, now=11)
    assert set(out["m1"].revoked) and not out["m2"].assigned  # balance: revoke first, assign next round
    sends = synced(w, out["m1"], 12)
    assert only(sends, JoinGroupRequest)  # rejoined in the same poll: the revoked work can now move
    assert not set(out["m1"].revoked) & set(w.owned)
    assert [e.event for e in w.events if e.event in ("revoked", "assigned")][-2:] == ["revoked", "assigned"]


def leader_with_departed_follower(faults: frozenset[str] = frozenset()) -> tuple[ConnectWorker, dict[str, ConnectAssignment]]:
    """m1 leads m1 + m2 (both start empty: the work is spread, nothing revoked); then m2 departs and m1
    assigns the next generation alone. Returns m1 and that generation's assignments."""
    w = make(faults=faults)
    first = lead(w, joined(w), {"m2": ()}, gen=1, now=0)
    assert not first["m1"].revoked
    synced(w, first["m1"], 1)
    m2 = first["m2"].assigned
    assert m2, "m2 must have work to lose"
    keep = lead(w, rejoin(w, 5), {"m2": m2}, gen=2, now=6)  # m2 reports it: nothing changes
    assert not keep["m1"].assigned and not keep["m1"].revoked and keep["m1"].delay == 0
    synced(w, keep["m1"], 7)
    w._test_m2 = m2  # type: ignore[attr-defined]
    return w, lead(w, rejoin(w, 10_000), {}, gen=3, now=10_001)


def test_a_departed_workers_work_is_held_for_the_delay_and_everyone_is_told_when_to_rejoin() -> None:
    w, out = leader_with_departed_follower()
    m2 = w._test_m2  # type: ignore[attr-defined]
    asg = out["m1"]
    assert not set(asg.assigned) & set(m2)  # held back: nobody gets it
    assert asg.delay == DELAY and w.leader_state.scheduled_rebalance == 10_001 + DELAY
    assert w.last_round is not None and set(w.last_round.result.lost_tasks) | {
        (c, CONNECTOR_TASK) for c in w.last_round.result.lost_connectors} == set(m2)
    synced(w, asg, 10_002)
    assert w.scheduled_rejoin_ms == 10_002 + DELAY
    assert w.poll(10_002 + DELAY - 1) == [] and not w.rejoin_needed
    j = only(w.poll(10_002 + DELAY), JoinGroupRequest)  # the scheduled rebalance
    assert w.scheduled_rejoin_ms is None
    # the delay is over: the lost work goes out now (m2 never came back: to m1)
    again = lead(w, j, {}, gen=w.generation.generation_id + 1, now=10_003 + DELAY)
    assert set(m2) <= set(again["m1"].assigned) and again["m1"].delay == 0


def test_a_worker_that_comes_back_in_time_gets_nothing_until_the_scheduled_rebalance() -> None:
    w, out = leader_with_departed_follower()
    m2 = w._test_m2  # type: ignore[attr-defined]
    synced(w, out["m1"], 10_002)
    # m2 restarts (a new member id, running nothing) before the delay is over: it is a candidate
    back = lead(w, rejoin(w, 11_000), {"m9": ()}, gen=w.generation.generation_id + 1, now=11_001)
    assert not back["m9"].assigned and not set(back["m1"].assigned) & set(m2)
    assert back["m1"].delay == 10_001 + DELAY - 11_001  # the time left
    assert w.leader_state.candidate_workers == ("m9",)
    synced(w, back["m1"], 11_002)
    j = only(w.poll(11_002 + back["m1"].delay), JoinGroupRequest)
    final = lead(w, j, {"m9": ()}, gen=w.generation.generation_id + 1, now=11_003 + back["m1"].delay)
    assert set(final["m9"].assigned) == set(m2)  # given back, to the candidate, at the scheduled rebalance


def test_mutant_drop_connect_delay_hands_the_work_out_at_once() -> None:
    w, out = leader_with_departed_follower(frozenset({"drop_connect_delay"}))
    m2 = w._test_m2  # type: ignore[attr-defined]
    assert set(m2) <= set(out["m1"].assigned) and out["m1"].delay == 0


def test_a_later_assignment_without_delay_cancels_the_scheduled_rejoin() -> None:
    w, out = leader_with_departed_follower()
    synced(w, out["m1"], 10_002)
    assert w.scheduled_rejoin_ms is not None
    nxt = lead(w, rejoin(w, 10_500), {}, gen=w.generation.generation_id + 1, now=10_501)
    synced(w, ConnectAssignment(leader="m1", config_offset=3, delay=0), 10_502)
    assert w.scheduled_rejoin_ms is None
    del nxt


@pytest.mark.parametrize("keep", [True, False])
def test_work_across_a_member_id_reset(keep: bool) -> None:
    w = make(keep_work_on_reset=keep)
    synced(w, lead(w, joined(w), {}, gen=1, now=0)["m1"], 1)
    w._reset_generation(keep_member_id=False)  # e.g. a heartbeat answered UNKNOWN_MEMBER_ID
    j = only(w.poll(5), JoinGroupRequest)
    md = decode_worker_metadata(j.request.protocols[0][1])
    if keep:  # Kafka: the worker keeps running its work and reports it
        assert w.owned and md.running == w.owned and not [e for e in w.events if e.event == "lost"]
    else:  # the model's member: its work is lost at onJoinPrepare
        assert w.owned == () and md.running == () and [e.event for e in w.events][-1] == "lost"


def test_a_task_count_change_makes_a_stable_worker_rejoin() -> None:
    tasks = [3]
    w = make(tasks)
    synced(w, lead(w, joined(w), {}, gen=1, now=0)["m1"], 1)
    assert w.poll(2) == []
    tasks[0] = 4
    j = only(w.poll(3), JoinGroupRequest)
    out = lead(w, j, {}, gen=2, now=4)
    assert T(3) in out["m1"].assigned and out["m1"].config_offset == 4


def test_close_stops_the_work_and_leaves() -> None:
    w = make()
    synced(w, lead(w, joined(w), {}, gen=1, now=0)["m1"], 1)
    only(w.close(2), LeaveGroupRequest)
    assert w.owned == () and [e.event for e in w.events][-2:] == ["revoked", "left"]


# ---------------------------------------------------------------------------- in the simulator


def run(actions: list[tuple[int, str, str]], until: int, faults: frozenset[str] = frozenset()) -> Simulator:
    sim = Simulator(SimConfig(seed=3, topics=(("t", 3),), initial_rebalance_delay_ms=0))
    for at, action, name in actions:
        if action == "start":
            cfg = WorkerConfig(client_id=name, session_timeout_ms=10000, heartbeat_interval_ms=1000,
                               max_poll_interval_ms=6000, request_timeout_ms=20000, max_delay_ms=DELAY)
            sim.at(at, "start", name, config=cfg, faults=faults, member=ConnectWorker)
        else:
            sim.at(at, action, name)
    sim.run_until(until)
    return sim


def owned_at(sim: Simulator) -> dict[str, set[tuple[str, int]]]:
    """Who runs what, from the trace (cooperative reading: assigned adds, revoked/lost remove, left clears)."""
    own: dict[str, set[tuple[str, int]]] = {}
    for ev in sim.trace:
        m = ev.get("member")
        if m is None:
            continue
        parts = {(p[0], p[1]) for p in ev.get("partitions", [])}
        if ev["event"] == "assigned":
            own.setdefault(m, set()).update(parts)
        elif ev["event"] in ("revoked", "lost"):
            own.setdefault(m, set()).difference_update(parts)
        elif ev["event"] == "left":
            own[m] = set()
    return own


START = [(0, "start", "w1"), (300, "start", "w2"), (600, "start", "w3")]


def test_simulated_bounce_within_the_delay_gets_the_work_back_only_at_the_scheduled_rebalance() -> None:
    before = owned_at(run(START, 4900))
    w2 = before["w2"]
    assert w2 and sum(len(v) for v in before.values()) == 4  # the connector and 3 tasks, each once
    # w2 closes at 5 s and is back at 6.5 s, well within the 4 s delay
    sim = run(START + [(5000, "close", "w2"), (6500, "start", "w2")], 9000)
    mid = owned_at(sim)
    assert not mid["w2"] and not any(w2 & mid[m] for m in ("w1", "w3"))  # held: nobody runs it
    sim = run(START + [(5000, "close", "w2"), (6500, "start", "w2")], 12000)
    assert owned_at(sim)["w2"] == w2  # back at the scheduled rebalance, to the returning candidate


def test_simulated_worker_that_never_returns_loses_its_work_to_the_others_after_the_delay() -> None:
    w2 = owned_at(run(START, 4900))["w2"]
    early = owned_at(run(START + [(5000, "close", "w2")], 8000))
    assert not any(w2 & early[m] for m in ("w1", "w3"))
    late = owned_at(run(START + [(5000, "close", "w2")], 12000))
    assert w2 <= late["w1"] | late["w3"]


def test_simulated_mutant_drop_connect_delay_moves_the_work_at_once() -> None:
    faults = frozenset({"drop_connect_delay"})
    w2 = owned_at(run(START, 4900, faults))["w2"]
    early = owned_at(run(START + [(5000, "close", "w2")], 7000, faults))
    assert w2 <= early["w1"] | early["w3"]
