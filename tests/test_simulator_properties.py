"""Hypothesis-driven schedules for the simulator and arbitrary responses for the consumer.

* Any schedule of crashes, restarts, GC pauses, stalled applications (max.poll.interval.ms), coordinator failovers, failed writes and lossy
  network periods, followed by a healed network and a quiet period, converges: every partition has
  exactly one live owner, every live member is STABLE, and any double ownership on the way
  involved a member that was then fenced or left (a zombie). Failing schedules shrink.
* The consumer survives any sequence of well-typed responses (any error code, any order, late and
  repeated replies) without raising, and keeps its own invariants.
"""
from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from groupspec.reference.assignors import get
from groupspec.reference.classic import Consumer, ConsumerConfig, MemberState
from groupspec.reference.classic import Assignment, Subscription, encode_assignment, encode_subscription
from groupspec.reference.errors import Error
from groupspec.reference.classic import (
    FindCoordinatorResponse, HeartbeatResponse, JoinGroupMember, JoinGroupResponse, LeaveGroupResponse,
    OffsetCommitResponse, SyncGroupResponse,
)
from groupspec.reference.sim import NetworkConfig, member_config, SimConfig, Simulator, ownership
from groupspec.trace import check_events


NAMES = ["c1", "c2", "c3"]

actions = st.one_of(
    st.tuples(st.just("crash"), st.sampled_from(NAMES)),
    st.tuples(st.just("close"), st.sampled_from(NAMES)),
    st.tuples(st.just("restart"), st.sampled_from(NAMES)),
    st.tuples(st.just("pause"), st.sampled_from(NAMES), st.sampled_from([1000, 5000, 15000])),
    st.tuples(st.just("stall"), st.sampled_from(NAMES), st.sampled_from([5000, 70000])),
    st.tuples(st.just("failover")),
    st.tuples(st.just("store_fails"), st.sampled_from(["NOT_ENOUGH_REPLICAS", "NOT_LEADER_OR_FOLLOWER"])),
    st.tuples(st.just("lossy"), st.sampled_from([0.02, 0.1])),
)
schedules = st.lists(st.tuples(st.integers(min_value=200, max_value=6000), actions), max_size=6)


@given(st.sampled_from(["eager", "cooperative", "static"]), schedules, st.integers(min_value=0, max_value=2**16))
def test_any_fault_schedule_converges(protocol: str, schedule: list[tuple[int, tuple[Any, ...]]], seed: int) -> None:
    sim = Simulator(SimConfig(seed=seed))
    for i, n in enumerate(NAMES):
        sim.at(i * 300, "start", n, config=member_config(n, protocol, None))
    t = 8000
    for gap, act in schedule:
        t += gap
        kind = act[0]
        if kind in ("pause", "stall"):
            sim.at(t, kind, act[1], duration_ms=act[2])
        elif kind == "failover":
            sim.at(t, "failover")
        elif kind == "store_fails":
            sim.at(t, "store_fails", error=act[1])
        elif kind == "lossy":
            sim.at(t, "network", config=NetworkConfig(1, 10, act[1]))
        else:
            sim.at(t, kind, act[1])
    heal = t + 1000
    sim.at(heal, "network", config=NetworkConfig())
    for n in NAMES:
        sim.at(heal, "start", n, config=member_config(n, protocol, None))
    end = heal + 150000
    sim.run_quietly_until(end)
    snap = sim.snapshot()
    live = {n for n, m in snap["members"].items() if m["alive"] and m["fatal"] is None}
    assert all(snap["members"][n]["state"] == "STABLE" for n in live), snap["members"]
    own = ownership(sim.trace, 0, end)
    assert all(len(v) == 1 and v[0] in live for v in own.final_owners.values()), own.final_owners
    props = check_events(sim.trace).to_dict()["groups"][0]["properties"]
    assert next(p for p in props if p["id"] == "exclusive_ownership")["verdict"] == "held", own.double_owned


# ------------------------------------------------------------------------------ consumer fuzz

errors = st.sampled_from(list(Error))


def _response(kind: str, err: Error, data: st.DataObject) -> Any:
    if kind == "find":
        return FindCoordinatorResponse(err, node_id=1)
    if kind == "join":
        leader = data.draw(st.booleans())
        members = (
            (JoinGroupMember("m1", None, encode_subscription(Subscription(("t",), owned_partitions=(("t", 1),)))),
             JoinGroupMember("m2", None, encode_subscription(Subscription(("t",)))))
            if leader else ()
        )
        return JoinGroupResponse(err, data.draw(st.integers(0, 5)), "consumer",
                                 data.draw(st.sampled_from(["range", "cooperative-sticky", "other"])),
                                 "m1" if leader else "m0", "m1", members)
    if kind == "sync":
        parts = data.draw(st.lists(st.tuples(st.sampled_from(["t", "u"]), st.integers(0, 5)), max_size=4, unique=True))
        blob = data.draw(st.sampled_from([encode_assignment(Assignment(tuple(parts))), b"", b"\x00\x01junk"]))
        return SyncGroupResponse(err, blob, "consumer", data.draw(st.sampled_from([None, "range", "cooperative-sticky"])))
    if kind == "heartbeat":
        return HeartbeatResponse(err)
    if kind == "commit":
        return OffsetCommitResponse((("t", 0, err),))
    return LeaveGroupResponse(err)


@given(st.sampled_from([("range",), ("cooperative-sticky",), ("range", "cooperative-sticky")]),
       st.booleans(), st.data())
def test_consumer_survives_any_responses(assignors: tuple[str, ...], static: bool, data: st.DataObject) -> None:
    cfg = ConsumerConfig(assignors=assignors, group_instance_id="i1" if static else None, session_timeout_ms=10000,
                         heartbeat_interval_ms=3000, max_poll_interval_ms=60000)
    c = Consumer("c1", cfg, lambda: {"t": 6}, get)
    now = 0
    c.start(now)
    answered: list[tuple[int, Any]] = []
    for _ in range(data.draw(st.integers(5, 40))):
        now += data.draw(st.integers(0, 4000))
        step = data.draw(st.sampled_from(["reply", "reply", "reply", "late", "poll", "tick"]))
        if step == "poll":
            c.poll(now)
        elif step == "tick":
            c.tick(now)
        elif step == "late" and answered:
            corr, resp = data.draw(st.sampled_from(answered))
            c.receive(now, corr, resp)
        elif c.inflight:
            corr = data.draw(st.sampled_from(sorted(c.inflight)))
            kind = c.inflight[corr].kind
            err = data.draw(st.one_of(st.just(Error.NONE), errors))
            resp = _response(kind, err, data)
            answered.append((corr, resp))
            c.receive(now, corr, resp)
        assert isinstance(c.state, MemberState)
        assert list(c.owned) == sorted(set(c.owned))
        if c.fatal is not None:
            assert c.poll(now + 1) == [] and c.tick(now + 1) == []
