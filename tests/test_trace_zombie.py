"""The trace checker's zombie rule and generation monotonicity, on traces recorded with the real-stack
harness (`groupspec realstack run ...`, kept in tests/trace_data/recorded/) and then edited to plant
the defect (issue #31).

Recorded (kafka-python on `groupspec serve`, eager, generations on every line; confluent-kafka on
librdkafka's mock, no generations): the unedited traces hold. Each planted defect is a violation;
each case the protocol allows (the older owner fenced, removed, or left behind in an older
generation) is listed as a zombie overlap and changes no verdict.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from groupspec.trace import check_events, check_paths

DATA = Path(__file__).parent / "trace_data" / "recorded"
GS = [str(Path(sys.executable).parent / "groupspec")]
CLP = "consumer-leaves-permanently--kafka-python--groupspec--eager.jsonl"
NCJ = "new-consumer-joins--kafka-python--groupspec--eager.jsonl"
CLP_MOCK = "consumer-leaves-permanently--confluent-kafka--librdkafka-mock--eager.jsonl"


def load(name: str) -> list[dict]:
    return [json.loads(x) for x in (DATA / name).read_text().splitlines() if x.strip()]


def find(events: list[dict], ts: int, member: str, event: str) -> int:
    [i] = [i for i, e in enumerate(events) if e.get("ts_ms") == ts and e.get("member") == member and e["event"] == event]
    return i


def result(events: list[dict]) -> dict:
    d = check_events(sorted(events, key=lambda e: e["ts_ms"])).to_dict()
    [g] = d["groups"]
    return g


def violated(g: dict) -> list[str]:
    return sorted(p["id"] for p in g["properties"] if p["verdict"] == "violated")


def violations(g: dict, pid: str) -> list[dict]:
    return next(p for p in g["properties"] if p["id"] == pid)["violations"]


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.jsonl")))
def test_recorded_traces_hold(name):
    """Every recorded trace, unedited, holds (the static restarts included: they converge)."""
    rep = check_paths([str(DATA / name)])
    assert rep.ok, json.dumps(rep.to_dict(), indent=1)[:3000]


# ------------------------------------------------------------------------------------ planted defects
def test_same_generation_overlap_ended_by_a_clean_leave_is_a_violation():
    """c2 is also given c3's t-4 in generation 1 (c3's own generation), and c3 keeps it until it
    closes cleanly: a 3.1-s double ownership that c3's later `left` does not excuse."""
    t = load(CLP)
    i = find(t, 6967, "c2", "assigned")
    t[i]["partitions"] = t[i]["partitions"] + [["t", 4]]
    del t[find(t, 10099, "c3", "revoked")]
    g = result(t)
    assert violated(g) == ["exclusive_ownership"]
    [x] = violations(g, "exclusive_ownership")
    assert (x["members"], x["partition"], x["from_ms"], x["to_ms"], x["generations"], x["zombie"]) == (
        ["c3", "c2"], 4, 6967, 10106, [1, 1], None)
    assert g["zombie_overlaps"] == []


def test_same_generation_overlap_ended_by_a_clean_leave_without_generations_is_a_violation():
    """The same defect on librdkafka's mock (no generations on the lines): c2 is given t-3 with c3's
    own assignment, c3 keeps t-3 until its clean leave."""
    t = load(CLP_MOCK)
    i = find(t, 8684, "c2", "assigned")
    t[i]["partitions"] = [["t", 2], ["t", 3]]
    del t[find(t, 10040, "c3", "revoked")]
    g = result(t)
    assert "exclusive_ownership" in violated(g)
    x = violations(g, "exclusive_ownership")[0]
    assert (sorted(x["members"]), x["partition"], x["to_ms"], x["zombie"]) == (["c2", "c3"], 3, 10040, None)


def test_an_eager_member_that_never_revoked_is_a_violation():
    """c1 does not revoke before it rejoins (eager); c2 is given t-3..t-5 in generation 2, and c1 gets
    its next assignment (generation 2) two seconds later, still owning them meanwhile."""
    t = load(NCJ)
    del t[find(t, 8043, "c1", "revoked")]
    t[find(t, 8053, "c1", "assigned")]["ts_ms"] = 10053
    g = result(t)
    assert violated(g) == ["exclusive_ownership"]
    xs = violations(g, "exclusive_ownership")
    assert sorted(x["partition"] for x in xs) == [3, 4, 5]
    assert {(tuple(x["members"]), x["from_ms"], x["to_ms"], tuple(x["generations"])) for x in xs} == {
        (("c1", "c2"), 8052, 10053, (1, 2))}


def test_an_eager_member_that_never_revoked_and_whose_successor_leaves_is_a_violation():
    """As above, and the new owner's next membership event is a clean `left`: not a zombie either."""
    t = load(NCJ)
    del t[find(t, 8043, "c1", "revoked")]
    t[find(t, 8053, "c1", "assigned")]["ts_ms"] = 10053
    t = [e for e in t if e["ts_ms"] < 12000 or e.get("event") in ("topic", "end")]
    t.append({"ts_ms": 12000, "group": "g", "member": "c2", "event": "left", "protocol": "eager", "generation": 2})
    g = result(t)
    assert "exclusive_ownership" in violated(g)
    assert g["zombie_overlaps"] == []


@pytest.mark.parametrize("event,ts,member,edit", [
    ("revoked", 14148, "c1", {"generation": 1}),
])
def test_a_line_with_an_older_generation_is_a_violation(event, ts, member, edit):
    t = load(NCJ)
    t[find(t, ts, member, event)].update(edit)
    g = result(t)
    assert violated(g) == ["generation_monotonic"]
    [x] = violations(g, "generation_monotonic")
    assert (x["member"], x["event"], x["from_generation"], x["to_generation"]) == (member, event, 2, 1)


def test_a_commit_or_lost_with_an_older_generation_is_a_violation():
    base = load(NCJ)
    commit = {"ts_ms": 15000, "group": "g", "member": "c2", "event": "commit", "partitions": [["t", 2, 10]],
              "accepted": True, "generation": 2, "protocol": "eager"}
    g = result(base + [commit])
    assert violated(g) == ["generation_monotonic"]
    [x] = violations(g, "generation_monotonic")
    assert (x["member"], x["event"], x["from_generation"], x["to_generation"]) == ("c2", "commit", 3, 2)
    lost = {"ts_ms": 15000, "group": "g", "member": "c1", "event": "lost", "partitions": [["t", 0]],
            "generation": 2, "protocol": "eager"}
    g = result(base + [lost])
    assert "generation_monotonic" in violated(g)
    assert violations(g, "generation_monotonic")[0]["event"] == "lost"
    # the same lines in the member's own generation, or after a reset, are fine
    ok = dict(commit, generation=3)
    assert "generation_monotonic" not in violated(result(base + [ok]))
    fenced = {"ts_ms": 14900, "group": "g", "member": "c2", "event": "fenced", "error": "ILLEGAL_GENERATION",
              "protocol": "eager"}
    assert "generation_monotonic" not in violated(result(base + [fenced, commit]))


def test_generation_going_down_on_a_revoke_fails_the_cli(tmp_path):
    """Through `groupspec trace check` (long enough for the compiled inner loop to read most lines)."""
    t = load(NCJ)
    t[find(t, 14148, "c1", "revoked")]["generation"] = 1
    body = [e for e in t if e["event"] != "end"]
    lines = []
    span = 30_000
    for k in range(400):  # ~1.3 MB: past the size from which the compiled loop is used
        for e in body:
            if e["event"] == "topic" and k:
                continue
            lines.append(json.dumps(dict(e, ts_ms=e["ts_ms"] + k * span)))
        for m in ("c1", "c2", "c3"):
            lines.append(json.dumps({"ts_ms": k * span + 27_000, "group": "g", "member": m, "event": "left"}))
    p = tmp_path / "long.jsonl"
    p.write_text("\n".join(lines) + "\n")
    out = subprocess.run(GS + ["trace", "check", "--json", str(p)], capture_output=True, text=True)
    assert out.returncode == 1, out.stderr
    g = json.loads(out.stdout)["traces"][0]["groups"][0]
    assert violated(g) == ["generation_monotonic"]
    assert len(violations(g, "generation_monotonic")) == 400


# ------------------------------------------------------------------------------------ allowed: zombies
def test_left_behind_in_an_older_generation_is_a_zombie():
    """c3 does not leave at 10.1 s; the group completes generation 2 without it (c2 gets t-4, t-5);
    c3, still in generation 1, closes at 12 s: it was left behind (KAFKA-8220), a zombie."""
    t = load(CLP)
    del t[find(t, 10099, "c3", "revoked")]
    t[find(t, 10106, "c3", "left")]["ts_ms"] = 12000
    g = result(t)
    assert "exclusive_ownership" not in violated(g)
    assert {(z["zombie"], z["partition"], tuple(z["generations"])) for z in g["zombie_overlaps"]} == {
        ("c3", 4, (1, 2)), ("c3", 5, (1, 2))}


@pytest.mark.parametrize("how", ["fenced", "lost", "removed"])
def test_a_fenced_or_removed_older_owner_is_a_zombie(how):
    """The same-generation overlap of the first planted defect, but the protocol says c3 was out."""
    t = load(CLP)
    i = find(t, 6967, "c2", "assigned")
    t[i]["partitions"] = t[i]["partitions"] + [["t", 4]]
    del t[find(t, 10099, "c3", "revoked")]
    base = {"group": "g", "member": "c3", "protocol": "eager"}
    if how == "fenced":
        t.append({**base, "ts_ms": 9000, "event": "fenced", "error": "UNKNOWN_MEMBER_ID", "generation": -1})
    elif how == "lost":
        t.append({**base, "ts_ms": 9000, "event": "lost", "partitions": [["t", 4], ["t", 5]], "generation": -1})
    else:
        t.append({**base, "ts_ms": 6965, "event": "removed"})
    g = result(t)
    assert "exclusive_ownership" not in violated(g)
    assert [z["zombie"] for z in g["zombie_overlaps"]] == ["c3"]


# ------------------------------------------------------------------------------------ static restarts converge
KIP848_STATIC = "static-member-restart--confluent-kafka--librdkafka-mock--consumer.jsonl"


def _delayed(shift: int, end: int) -> list[dict]:
    """The KIP-848 static restart on librdkafka's mock (c3 killed at 10 s, back at 13.4 s with t-3 again:
    complete and balanced at once), with the mock's later reassignment (c1 gives up t-1 at 15.5 s, c2
    moves to t-1) made to come ``shift`` ms later, and the recording ending at ``end``."""
    t = load(KIP848_STATIC)
    for e in t:
        if e["event"] == "end":
            e["ts_ms"] = end
        elif e["ts_ms"] >= 15_000:
            e["ts_ms"] += shift
    return t


def test_a_static_restart_that_held_its_assignment_converged():
    """Complete and balanced from 13,407 ms, unchanged for 12 s, then disturbed without a membership
    change: the period from the restart converged at 13,407 ms (the assignment held for half of
    --converge-within), not 'never'; the disturbance starts a period of its own."""
    g = result(_delayed(10_000, 40_000))
    assert "convergence" not in violated(g), violations(g, "convergence")
    assert [(p["from_ms"], p["to_ms"], p["converged_at_ms"]) for p in g["periods"]][-2:] == [
        (13_406, 25_484, 13_407), (25_484, 40_000, None)]


def test_a_static_restart_that_did_not_hold_long_enough_is_still_a_violation():
    """The same disturbance 7 s after (less than the 10 s hold): the period never converged."""
    g = result(_delayed(5_000, 36_000))
    assert "convergence" in violated(g)
    assert g["periods"][-1]["converged_at_ms"] is None


def test_kip848_a_lower_member_epoch_is_no_excuse():
    """KIP-848 (protocol: consumer) on librdkafka's mock: c2 is given t-1 (epoch 5) while c1 (epoch 4)
    has not yet revoked it; c1 revokes it 1 s later, still in its epoch 4. Member epochs are each
    member's own — the coordinator hands a partition on only once its owner acknowledged the revocation
    — so a lower epoch does not make c1 a zombie (with generations of the classic protocol it would:
    see test_left_behind_in_an_older_generation_is_a_zombie)."""
    t = load(KIP848_STATIC)
    i = find(t, 15484, "c1", "revoked")
    t[i]["ts_ms"] = 17_000
    g = result(t)
    assert "exclusive_ownership" in violated(g)
    [x] = violations(g, "exclusive_ownership")
    assert (x["members"], x["partition"], x["from_ms"], x["to_ms"], x["generations"], x["zombie"]) == (
        ["c1", "c2"], 1, 16_015, 17_000, [2, 5], None)
    # the same lines read as the classic protocol: c1 was left behind in an older generation
    for e in t:
        if e.get("protocol") == "consumer":
            e["protocol"] = "cooperative"
    g = result(t)
    assert "exclusive_ownership" not in violated(g)
    assert [z["zombie"] for z in g["zombie_overlaps"]] == ["c1"]
