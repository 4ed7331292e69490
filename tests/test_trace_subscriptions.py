"""Balance is judged among members with the same subscription (the trace contract), from ``subscribed`` lines.

Found on Apache Kafka 4.3.1 (the real-stack matrix, ``subscription-change``, every client): c3 adds topic u to its
subscription; range gives c3 t-4, t-5, u-0, u-1 and c1, c2 two partitions of t each. That is balanced — c1 and c2
do not subscribe to u — but a checker that counts every member in every topic's balance reported ``convergence``
violated. The harness now writes each member's subscription; these tests plant the shapes by hand, through both
the Python loop and the compiled one (a file past the size where the compiled loop starts).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from groupspec.trace import check_events, check_paths
from groupspec.trace.fastpath import MIN_FAST

T = [["t", p] for p in range(6)]


def _trace(*, subscribed: bool, c3_gets: list[list], c1_gets: list[list] | None = None, end_ms: int = 60_000,
           pad_to: int = 0) -> list[dict]:
    ev: list[dict] = [{"ts_ms": 0, "event": "topic", "topic": "t", "partitions": 6}]
    for i, m in enumerate(("c1", "c2", "c3")):
        if subscribed:
            ev.append({"ts_ms": 10 * i, "member": m, "event": "subscribed", "topics": ["t"]})
        ev.append({"ts_ms": 10 * i + 1, "member": m, "event": "joined"})
    ev += [{"ts_ms": 2_000, "member": "c1", "event": "assigned", "partitions": T[0:2], "generation": 1},
           {"ts_ms": 2_000, "member": "c2", "event": "assigned", "partitions": T[2:4], "generation": 1},
           {"ts_ms": 2_000, "member": "c3", "event": "assigned", "partitions": T[4:6], "generation": 1}]
    # c3 adds u at 10 s: the group rebalances (eager: everyone revokes, then range assigns)
    if subscribed:
        ev.append({"ts_ms": 10_000, "member": "c3", "event": "subscribed", "topics": ["t", "u"]})
    ev.append({"ts_ms": 10_000, "event": "topic", "topic": "u", "partitions": 2})
    ev += [{"ts_ms": 10_500, "member": "c1", "event": "revoked", "partitions": T[0:2], "generation": 1},
           {"ts_ms": 10_500, "member": "c2", "event": "revoked", "partitions": T[2:4], "generation": 1},
           {"ts_ms": 10_500, "member": "c3", "event": "revoked", "partitions": T[4:6], "generation": 1},
           {"ts_ms": 11_000, "member": "c1", "event": "assigned", "partitions": c1_gets or T[0:2], "generation": 2},
           {"ts_ms": 11_000, "member": "c2", "event": "assigned", "partitions": T[2:4], "generation": 2},
           {"ts_ms": 11_000, "member": "c3", "event": "assigned", "partitions": c3_gets, "generation": 2}]
    ts, k = 11_001, 0
    size = sum(len(json.dumps(e)) + 1 for e in ev)
    while size < pad_to:  # commits in the steady state: enough bytes for the compiled loop to take the file
        e = {"ts_ms": ts, "member": "c1", "event": "commit", "partitions": [["t", k % 2, k]], "accepted": True,
             "generation": 2}
        ev.append(e)
        size += len(json.dumps(e)) + 1
        ts = min(ts + 1, end_ms - 1)
        k += 1
    ev.append({"ts_ms": end_ms, "event": "end"})
    return ev


def _verdicts(events: list[dict], tmp_path: Path | None = None) -> dict[str, str]:
    if tmp_path is None:
        tr = check_events(events).to_dict()
    else:
        f = tmp_path / "trace.jsonl"
        f.write_text("".join(json.dumps(e) + "\n" for e in events))
        [tr] = check_paths([str(f)]).to_dict()["traces"]
    [g] = tr["groups"]
    return {p["id"]: p["verdict"] for p in g["properties"]}


RANGE = T[4:6] + [["u", 0], ["u", 1]]


@pytest.mark.parametrize("big", [False, True], ids=["python-loop", "compiled-loop"])
def test_range_after_a_subscription_change_converges_when_subscriptions_are_known(tmp_path, big):
    ev = _trace(subscribed=True, c3_gets=RANGE, pad_to=MIN_FAST + 4096 if big else 0)
    v = _verdicts(ev, tmp_path if big else None)
    assert v["convergence"] == "held" and v["completeness"] == "held", v


def test_without_subscriptions_every_member_counts_in_every_topic():
    # the rule the subscriptions change: without them, c1 and c2 are taken to subscribe to u as well
    v = _verdicts(_trace(subscribed=False, c3_gets=RANGE))
    assert v["convergence"] == "violated", v


@pytest.mark.parametrize("big", [False, True], ids=["python-loop", "compiled-loop"])
def test_an_unbalanced_assignment_among_same_subscription_members_is_still_violated(tmp_path, big):
    ev = _trace(subscribed=True, c3_gets=RANGE, c1_gets=T[0:2], pad_to=MIN_FAST + 4096 if big else 0)
    for e in ev:  # c2 gives its two to c1: c1 owns 4, c2 owns 0 - both subscribe to t alone
        if e.get("ts_ms") == 11_000 and e.get("member") == "c2":
            e["partitions"] = []
        if e.get("ts_ms") == 11_000 and e.get("member") == "c1":
            e["partitions"] = T[0:4]
    v = _verdicts(ev, tmp_path if big else None)
    assert v["convergence"] == "violated", v


def test_a_partition_of_a_topic_nobody_alive_subscribes_to_is_not_unowned():
    ev = _trace(subscribed=True, c3_gets=RANGE)
    # c3 leaves at 20 s: nobody subscribes to u any more; t is rebalanced over c1 and c2
    ev = [e for e in ev if e["event"] != "end"]
    ev += [{"ts_ms": 20_000, "member": "c3", "event": "left"},
           {"ts_ms": 20_500, "member": "c1", "event": "revoked", "partitions": T[0:2], "generation": 2},
           {"ts_ms": 20_500, "member": "c2", "event": "revoked", "partitions": T[2:4], "generation": 2},
           {"ts_ms": 21_000, "member": "c1", "event": "assigned", "partitions": T[0:3], "generation": 3},
           {"ts_ms": 21_000, "member": "c2", "event": "assigned", "partitions": T[3:6], "generation": 3},
           {"ts_ms": 60_000, "event": "end"}]
    v = _verdicts(ev)
    assert v["completeness"] == "held" and v["convergence"] == "held", v
    # the same, with c3's subscription unknown to the checker: u is unowned for 40 s while c1 and c2 live
    for e in ev:
        if e["event"] == "subscribed":
            e["topics"] = ["t", "u"]
    assert _verdicts(ev)["completeness"] == "violated"


def test_a_bad_subscribed_line_is_a_trace_defect():
    ev = _trace(subscribed=True, c3_gets=RANGE)
    ev.insert(3, {"ts_ms": 15, "member": "c2", "event": "subscribed", "topics": "t"})
    [g] = check_events(ev).to_dict()["groups"]
    wf = next(p for p in g["properties"] if p["id"] == "well_formed")
    assert any("topics" in x["message"] for x in wf["violations"]), wf


def test_the_real_stack_run_ends_by_the_same_balance_rule():
    # groupspec/realstack/ending.py decides when a recording may stop ("converged") with the checker's rule
    from groupspec.realstack.ending import Ownership

    for subscribed, want in ((True, True), (False, False)):
        own = Ownership()
        for e in _trace(subscribed=subscribed, c3_gets=RANGE):
            own.feed(e)
        assert own.converged({"c1", "c2", "c3"}) is want, subscribed
    own = Ownership()  # the unbalanced one: c1 four of t, c2 none, both subscribing to t alone
    for e in _trace(subscribed=True, c3_gets=RANGE, c1_gets=T[0:4]):
        if e.get("ts_ms") == 11_000 and e.get("member") == "c2":
            e = {**e, "partitions": []}
        own.feed(e)
    assert own.converged({"c1", "c2", "c3"}) is False
