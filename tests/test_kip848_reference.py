"""The KIP-848 reference: server-side assignors, the ConsumerGroupHeartbeat coordinator, the reconciling
consumer, and `groupspec simulate --protocol consumer`."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from groupspec.cli import cli
from groupspec.reference.assignors.server import RangeServerAssignor, UniformAssignor, uniform_homogeneous
from groupspec.reference.consumer import ConsumerGroupCoordinator, HeartbeatRequest, MemberState, ReconcilingConsumer
from groupspec.reference.sim import NetworkConfig, run_consumer_scenario
from groupspec.reference.errors import Error
from groupspec.trace import check_trace, violations_of


def test_uniform_balanced_and_sticky():
    a = UniformAssignor()
    first = a.assign({"t": 10, "u": 3}, {"a": ["t", "u"], "b": ["t", "u"], "c": ["t", "u"]})
    sizes = sorted(sum(len(v) for v in per.values()) for per in first.values())
    assert sizes == [4, 4, 5]
    second = a.assign({"t": 10, "u": 3}, {m: ["t", "u"] for m in "abcd"}, first)
    moved = sum(1 for m in "abc" for t, ps in first[m].items() for p in ps if p not in second[m].get(t, []))
    assert moved == 3  # only what the new member needs (13 // 4 = 3) moves
    assert sorted(sum(len(v) for v in per.values()) for per in second.values()) == [3, 3, 3, 4]


def test_uniform_heterogeneous_respects_subscriptions():
    out = UniformAssignor().assign({"t": 4, "u": 2}, {"a": ["t"], "b": ["t", "u"]})
    assert "u" not in out["a"] and sorted(out["a"]["t"] + out["b"]["t"]) == [0, 1, 2, 3]


def test_range():
    out = RangeServerAssignor().assign({"t": 5}, {"b": ["t"], "a": ["t"]})
    assert out == {"a": {"t": [0, 1, 2]}, "b": {"t": [3, 4]}}


def test_uniform_homogeneous_arrays():
    fresh = uniform_homogeneous({"t": np.full(1000, -1, dtype=np.int32)}, 7)
    counts = np.bincount(fresh["t"], minlength=7)
    assert counts.min() == 142 and counts.max() == 143
    after = uniform_homogeneous({"t": fresh["t"].copy()}, 8)
    assert int(np.count_nonzero(after["t"] != fresh["t"])) == 125  # exactly the new member's share


def beat(coord, c, now=0):
    resp = coord.heartbeat(c.heartbeat_request(), now)
    c.on_heartbeat_response(resp)
    return resp


def test_revocation_before_assignment_and_callbacks_in_order():
    coord = ConsumerGroupCoordinator("g", {"t": 2})
    a, b = ReconcilingConsumer("a", ["t"]), ReconcilingConsumer("b", ["t"])
    beat(coord, a)
    a.reconcile()
    assert a.owned == {("t", 0), ("t", 1)} and coord.group_epoch == 1
    beat(coord, b)  # b joins: epoch 2; t-1 still held by a
    assert coord.members["b"].state == MemberState.UNRELEASED_PARTITIONS and not b.assigned
    beat(coord, a)
    assert coord.members["a"].state == MemberState.UNREVOKED_PARTITIONS and a.epoch == 1
    a.reconcile()
    assert a.callbacks[-2:] == [("commit", [("t", 1)]), ("onPartitionsRevoked", [("t", 1)])]
    beat(coord, a)
    assert a.epoch == 2 and coord.members["a"].previous_epoch == 1
    beat(coord, b)
    b.reconcile()
    assert b.owned == {("t", 1)} and b.callbacks == [("onPartitionsAssigned", [("t", 1)])]


def test_fencing_and_commit_errors():
    coord = ConsumerGroupCoordinator("g", {"t": 2})
    a = ReconcilingConsumer("a", ["t"])
    beat(coord, a)
    a.reconcile()
    assert coord.offset_commit("a", 1, {("t", 0): 5}) == Error.NONE
    assert coord.offset_commit("a", 7, {("t", 0): 5}) == Error.STALE_MEMBER_EPOCH
    assert coord.heartbeat(HeartbeatRequest("a", 7)).error == Error.FENCED_MEMBER_EPOCH
    # Kafka 4.3.1 writes nothing on FENCED_MEMBER_EPOCH: the member keeps its record, epoch and partitions (found
    # by the Kafka oracle, tests/oracle/consumer_fenced_rejoin.jsonl) until it rejoins or its session expires
    assert coord.members["a"].assigned == {("t", 0), ("t", 1)} and coord.members["a"].epoch == 1
    assert coord.offset_commit("a", 1, {("t", 0): 5}) == Error.NONE
    coord.expire_session("a")
    assert coord.offset_commit("a", 1, {("t", 0): 5}) == Error.UNKNOWN_MEMBER_ID
    assert beat(coord, a).error == Error.UNKNOWN_MEMBER_ID
    assert not a.owned and a.epoch == 0 and a.callbacks[-1][0] == "onPartitionsLost"
    assert beat(coord, a).error == Error.NONE and a.epoch == coord.group_epoch


def test_the_migration_rule_removes_a_fenced_member():
    coord = ConsumerGroupCoordinator("g", {"t": 2})
    coord.fenced_keeps_record = False  # the migration's groups (their model removes a fenced member)
    a = ReconcilingConsumer("a", ["t"])
    beat(coord, a)
    assert coord.heartbeat(HeartbeatRequest("a", 7)).error == Error.FENCED_MEMBER_EPOCH
    assert "a" not in coord.members and coord.group_epoch == 2


def test_previous_epoch_tolerated_once():
    coord = ConsumerGroupCoordinator("g", {"t": 2})
    a, b = ReconcilingConsumer("a", ["t"]), ReconcilingConsumer("b", ["t"])
    beat(coord, a)
    a.reconcile()
    beat(coord, b)
    beat(coord, a)
    a.reconcile()
    lost = coord.heartbeat(a.heartbeat_request())  # the answer with epoch 2 is lost
    assert lost.member_epoch == 2 and a.epoch == 1
    retry = coord.heartbeat(HeartbeatRequest("a", 1, topic_partitions={"t": [0]}))
    assert retry.error == Error.NONE and retry.member_epoch == 2


def test_session_and_rebalance_timeouts():
    coord = ConsumerGroupCoordinator("g", {"t": 2}, session_timeout_ms=1000)
    a, b = ReconcilingConsumer("a", ["t"]), ReconcilingConsumer("b", ["t"])
    beat(coord, a, 0)
    a.reconcile()
    beat(coord, b, 0)
    beat(coord, a, 0)  # a must revoke, never does
    coord.members["a"].rebalance_timeout_ms = 10**9
    assert coord.tick(500) == []
    assert coord.tick(1000) == ["a", "b"]
    assert coord.group_epoch == 4


def test_static_member_comes_back_without_new_epoch():
    coord = ConsumerGroupCoordinator("g", {"t": 2})
    a = ReconcilingConsumer("a", ["t"], instance_id="i")
    beat(coord, a)
    a.reconcile()
    epoch = coord.group_epoch
    coord.heartbeat(a.leave_request())
    assert coord.members["a"].left
    a2 = ReconcilingConsumer("a2", ["t"], instance_id="i")
    assert beat(coord, a2).error == Error.NONE
    assert coord.group_epoch == epoch and a2.assigned == {("t", 0), ("t", 1)}
    a3 = ReconcilingConsumer("a3", ["t"], instance_id="i")
    assert beat(coord, a3).error == Error.UNRELEASED_INSTANCE_ID


def test_regex_subscription_resolved_by_the_broker():
    coord = ConsumerGroupCoordinator("g", {"orders": 2, "payments": 1, "audit": 1})
    r = coord.heartbeat(HeartbeatRequest("a", 0, subscribed_topic_regex="orders|pay.*", topic_partitions={}))
    assert r.error == Error.NONE and set(r.assignment) == {"orders", "payments"}


@pytest.mark.parametrize("scenario", ["scale-out", "rolling-restart", "zombie", "static-bounce", "churn"])
def test_scenarios_hold_and_replay_by_seed(scenario):
    """The simulation writes a trace; the one trace checker finds it well formed and its safety held."""
    r1 = run_consumer_scenario(scenario, members=3, partitions=6, seed=4)
    assert check_trace(r1.trace) == [] and (r1.assignment or scenario == "churn")
    assert {e["event"] for e in r1.trace} >= {"topic", "joined", "assigned", "commit"}
    again = run_consumer_scenario(scenario, members=3, partitions=6, seed=4)
    assert again.events == r1.events and again.trace == r1.trace


def test_the_trace_checker_catches_a_coordinator_that_does_not_wait_for_revocation():
    """Exclusive ownership, judged on the simulator's trace: the mutant's run is flagged, the correct one is not."""
    r = run_consumer_scenario("scale-out", members=3, partitions=6, seed=0, faults=frozenset({"no_wait_release"}))
    found = violations_of(r.trace)
    assert found and found[0].check == "exclusive_ownership" and found[0].ts_ms == 3200
    assert found[0].members == ("c1", "c2") and found[0].partition == ("t", 3)


def test_the_trace_checker_catches_a_coordinator_that_accepts_a_removed_members_commit():
    """Commit fencing, judged on the simulator's trace: the zombie's commit is refused, unless the mutant accepts it."""
    ok = run_consumer_scenario("zombie", members=3, partitions=6, seed=0)
    assert violations_of(ok.trace) == [] and ok.rejected_commits == {"UNKNOWN_MEMBER_ID": 1}
    bad = run_consumer_scenario("zombie", members=3, partitions=6, seed=0, faults=frozenset({"unfenced_commits"}))
    found = violations_of(bad.trace)
    assert {v.check for v in found} == {"commit_fencing"} and found[0].members == ("c1",)


def test_simulate_cli():
    out = CliRunner().invoke(cli, ["simulate", "zombie", "--protocol", "consumer", "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["rejected_commits"] == {"UNKNOWN_MEMBER_ID": 1} and doc["violations"] == []
    bad = CliRunner().invoke(cli, ["simulate", "scale-out", "--protocol", "consumer", "--mutants", "no_wait_release"])
    assert bad.exit_code == 1 and "VIOLATIONS" in bad.output and "[exclusive_ownership]" in bad.output


def test_simulate_cli_writes_the_consumer_trace(tmp_path):
    from groupspec.reference.sim import read_trace

    path = tmp_path / "z.jsonl"
    out = CliRunner().invoke(cli, ["simulate", "zombie", "--protocol", "consumer", "--trace", str(path)])
    assert out.exit_code == 0, out.output
    assert read_trace(path) == run_consumer_scenario("zombie", members=3, partitions=6, seed=0).trace


def test_simulate_cli_bad_scenario(capsys):
    from groupspec.cli import main

    with pytest.raises(SystemExit) as ex:
        main(["simulate", "nope", "--protocol", "consumer"])
    err = capsys.readouterr()
    assert ex.value.code == 2 and err.out == "" and err.err.startswith("groupspec: error:") and "nope" in err.err


SCRIPT = """{"config": {"group_protocol": "consumer", "topics": {"t": 2}}}
{"at": 0, "from": "A", "send": "ConsumerGroupHeartbeat", "member_epoch": 0, "subscribed_topic_names": ["t"], "owned": []}
{"at": 5, "from": "B", "send": "ConsumerGroupHeartbeat", "member_epoch": 0, "subscribed_topic_names": ["t"], "owned": []}
{"at": 6, "from": "A", "send": "ConsumerGroupHeartbeat", "member_epoch": 1, "owned": [["t", 0], ["t", 1]]}
{"at": 8, "from": "A", "send": "ConsumerGroupHeartbeat", "member_epoch": 1, "owned": [["t", 0]]}
{"at": 9, "from": "B", "send": "ConsumerGroupHeartbeat", "member_epoch": 2}
{"at": 10, "from": "A", "send": "OffsetCommit", "member_epoch": 1, "offsets": [["t", 0, 42]]}
{"at": 11, "from": "A", "send": "OffsetCommit", "member_epoch": 1, "offsets": [["t", 1, 43]]}
{"at": 60000, "advance": true}
"""


def test_replay_consumer_group_heartbeat_steps():
    from groupspec.reference.sim import run_script

    lines = [json.loads(x) for x in run_script(SCRIPT)]
    answers = [x for x in lines if "request" in x]
    assert [a["member_epoch"] for a in answers if a["request"] == "ConsumerGroupHeartbeat"] == [1, 2, 1, 2, 2]
    assert answers[3]["assignment"] == [["t", 0]] and answers[4]["assignment"] == [["t", 1]]
    # KIP-1251 (4.3.1): A's commit at its previous epoch is accepted for t-0, which it has held since epoch 1,
    # and STALE_MEMBER_EPOCH for t-1, which it gave up (ConsumerGroup.validateOffsetCommit)
    assert answers[-2] == {"at": 10, "to": "A", "request": "OffsetCommit", "error": "NONE"}
    assert answers[-1] == {"at": 11, "to": "A", "request": "OffsetCommit", "error": "STALE_MEMBER_EPOCH"}
    assert [x["member"] for x in lines if x.get("event") == "removed"] == ["A", "B"]
    assert run_script(SCRIPT) == run_script(SCRIPT)  # deterministic


def test_replay_consumer_script_errors_name_the_line():
    from groupspec.reference.sim import ScriptError, run_script

    bad = SCRIPT + '{"at": 70000, "from": "A", "send": "JoinGroup", "member_id": ""}\n'
    with pytest.raises(ScriptError, match="line 10: unknown step kind 'JoinGroup'"):
        run_script(bad)


@pytest.mark.parametrize("net", [NetworkConfig(1, 50, loss=0.2), NetworkConfig(1, 300, duplicate=0.3, reorder=0.3)])
def test_the_network_is_a_parameter_of_the_kip848_simulation(net):
    """Requests and answers through the seeded network (delay, loss, duplication, reordering): the same seed gives
    the same run, safety holds on the correct coordinator and the one trace checker still catches the mutant."""
    for scenario in ("scale-out", "zombie", "churn"):
        r = run_consumer_scenario(scenario, members=3, partitions=6, seed=1, network=net)
        assert violations_of(r.trace) == [], scenario
        assert run_consumer_scenario(scenario, members=3, partitions=6, seed=1, network=net).trace == r.trace
        assert r.trace != run_consumer_scenario(scenario, members=3, partitions=6, seed=1).trace
    bad = run_consumer_scenario("scale-out", members=3, partitions=6, seed=0, faults=frozenset({"no_wait_release"}),
                                network=net)
    assert "exclusive_ownership" in {v.check for v in violations_of(bad.trace)}


def test_simulate_cli_takes_the_network_options_for_the_consumer_protocol():
    out = CliRunner().invoke(cli, ["simulate", "zombie", "--protocol", "consumer", "--loss", "0.2", "--delay", "1-50"])
    assert out.exit_code == 0, out.output
    assert "network 1-50 ms, loss 0.2" in out.output and "--delay 1-50 --loss 0.2" in out.output
    assert "no violation" in out.output
