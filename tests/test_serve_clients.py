"""Real Kafka clients (kafka-python, confluent-kafka/librdkafka, aiokafka) against `groupspec serve`.

Three consumers of each client join a served group, consume 60 records produced to it, commit,
get an injected REBALANCE_IN_PROGRESS, go through a failover (the coordinator moves to node 1,
with a 300 ms load), consume 60 more records and commit again. Checked: every record consumed,
every committed offset at the end of its partition, no partition owned by two members at once
in the listener trace (and every invariant of the project's trace checker when it is installed),
and the session's recorded script replays to the recorded transcript byte for byte.
"""
from __future__ import annotations

import json
import pathlib

import pytest

from groupspec.reference.sim import run_script
from serve_clients import CLIENTS, PARTITIONS, TOPIC, ownership_overlaps, run_consumer_protocol_scenario, run_scenario

DATA = pathlib.Path(__file__).resolve().parent / "serve_data"


def _trace_checker():
    try:
        from groupspec.trace import check_events
    except ImportError:  # the trace room is built on another branch; the listener check below stands alone
        return None
    return check_events


@pytest.mark.parametrize("client", list(CLIENTS))
def test_three_consumers_survive_injected_rebalance_and_failover(client):
    o = run_scenario(client)
    assert o.rec.consumed == {(p, off) for p in range(PARTITIONS) for off in range(20)}
    assert o.end_offsets == [20] * PARTITIONS
    assert o.committed == {(TOPIC, p): 20 for p in range(PARTITIONS)}
    assert ownership_overlaps(o.rec.events) == []
    members = {e["member"] for e in o.rec.events if e["event"] == "assigned"}
    assert len(members) == 3, members
    # the faults happened, and the transcript says so
    assert '"injected": "REBALANCE_IN_PROGRESS"' in o.script
    for fault in ("unload", "load_start", "load_finish"):
        assert f'"fault": "{fault}"' in o.script
    assert o.stats.get("failovers") == 1
    # replaying the session against the reference gives the transcript back
    assert "".join(line + "\n" for line in run_script(o.script)) == o.transcript
    check_events = _trace_checker()
    if check_events is not None:
        result = check_events(o.rec.events, source=client, converge_within_s=20)
        assert result.ok, json.dumps(result.to_dict())[:2000]


@pytest.mark.parametrize("client", list(CLIENTS))
def test_recorded_real_client_session_replays_exactly(client):
    script = (DATA / f"{client}.script.jsonl").read_text()
    transcript = (DATA / f"{client}.transcript.jsonl").read_text()
    assert "".join(line + "\n" for line in run_script(script)) == transcript
    # and a broken coordinator does not reproduce it
    assert "".join(line + "\n" for line in run_script(script, faults={"heartbeat_none_in_prepare",
                                                                      "no_generation_bump"})) != transcript


def test_listener_overlap_check_catches_a_double_owner():
    events = [
        {"ts_ms": 0, "member": "a", "event": "assigned", "partitions": [["t", 0]]},
        {"ts_ms": 5, "member": "b", "event": "assigned", "partitions": [["t", 0]]},
        {"ts_ms": 9, "member": "a", "event": "revoked", "partitions": [["t", 0]]},
    ]
    assert ownership_overlaps(events) == ["('t', 0) assigned to b at 5 while a owns it"]
    events[1]["ts_ms"] = 10
    assert ownership_overlaps(sorted(events, key=lambda e: e["ts_ms"])) == []


@pytest.mark.parametrize("client", [
    "kafka-python",
    pytest.param("confluent-kafka", marks=pytest.mark.deep),
    pytest.param("aiokafka", marks=pytest.mark.deep),
])
def test_expired_session_leaves_only_a_zombie_that_commits_nothing(client):
    # expire_session: the first consumer's heartbeats are answered NONE on the way and never reach
    # the coordinator, which expires it after session.timeout.ms (10 s); the member cannot tell
    # until its next heartbeat after the expiry gets UNKNOWN_MEMBER_ID
    o = run_scenario(client, inject_rebalance=False, failover=False, expire=True)
    assert o.rec.consumed == {(p, off) for p in range(PARTITIONS) for off in range(20)}
    assert o.committed == {(TOPIC, p): 20 for p in range(PARTITIONS)}
    assert o.generations[-1] > o.generations[0]
    zombie = f"{client}-0"
    overlaps = ownership_overlaps(o.rec.events)
    assert all(f"while {zombie} owns it" in x for x in overlaps), overlaps
    if overlaps:  # while its partitions were someone else's, the zombie had no commit accepted
        start = min(int(x.split(" at ")[1].split(" ")[0]) for x in overlaps)
        end = min(e["ts_ms"] for e in o.rec.events if e["member"] == zombie and e["event"] in ("lost", "revoked")
                  and e["ts_ms"] >= start)
        assert not [e for e in o.rec.events if e["member"] == zombie and e["event"] == "commit" and e["accepted"]
                    and start <= e["ts_ms"] <= end]
    assert "".join(line + "\n" for line in run_script(o.script)) == o.transcript
    check_events = _trace_checker()
    if check_events is not None:
        result = check_events(o.rec.events, source=client, converge_within_s=20)
        assert result.ok, json.dumps(result.to_dict())[:2000]


def test_consumer_protocol_three_librdkafka_consumers_join_consume_commit_and_fail_over():
    # KIP-848: confluent-kafka (librdkafka) with group.protocol=consumer against --protocol consumer
    from groupspec.reference.sim import run_consumer_script

    o = run_consumer_protocol_scenario()
    assert o.rec.consumed == {(p, off) for p in range(PARTITIONS) for off in range(20)}
    assert o.end_offsets == [20] * PARTITIONS
    assert o.committed == {(TOPIC, p): 20 for p in range(PARTITIONS)}
    assert ownership_overlaps(o.rec.events) == []
    assert len({e["member"] for e in o.rec.events if e["event"] == "assigned" and e["partitions"]}) == 3
    assert o.stats["ConsumerGroupHeartbeat"] > 0 and "JoinGroup" not in o.stats
    assert o.stats.get("failovers") == 1
    assert '"answered": "NOT_COORDINATOR"' in o.script  # heartbeats that reached the old node after the move
    assert '"send": "OffsetCommit"' in o.script
    # the recorded session replays against the reference's next-generation coordinator to the same transcript
    assert "".join(line + "\n" for line in run_consumer_script(o.script)) == o.transcript
    # and a broken coordinator does not reproduce it
    assert "".join(line + "\n" for line in run_consumer_script(o.script, faults=frozenset({"no_wait_release"}))) != o.transcript
