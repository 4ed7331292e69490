"""Simulator stories added for issue 15: a static cooperative member left behind (the double ownership
the model finds is Kafka's too), the Connect stories, and replay commands that reproduce a run exactly."""
from __future__ import annotations

import json
import shlex

import pytest
from click.testing import CliRunner

from groupspec.cli import cli, main
from groupspec.reference.sim import ScenarioOptions, run_scenario


def run(*args: str) -> str:
    res = CliRunner().invoke(cli, ["simulate", *args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


@pytest.mark.parametrize("seed", [0, 1])
def test_static_member_left_behind_is_double_ownership_in_kafka_too(seed: int) -> None:
    """The reference reaches the model's static-cooperative counterexample: c1, kept by the rebalance
    timeout (KAFKA-8220), rejoins at its old generation and keeps a partition the new generation gave
    to another member until its next SyncGroup answer; it never commits it meanwhile."""
    rep = run_scenario("static-member-left-behind", ScenarioOptions(seed=seed))
    doubles = rep.ownership.double_owned
    assert doubles, "the overlap must show"
    first = doubles[0]
    assert "c1" in first["owners"]
    tp = first["partition"]
    # c1 was a member of the generation that formed next (it rejoined with its member id, not as new)
    later = [g for g in rep.generations if g["at"] > first["ts_ms"]]
    assert later and "c1" in later[0]["members"]
    # c1 revokes it at that generation's SyncGroup answer, and no commit of it by c1 is accepted
    revoked = [e for e in rep.sim.trace if e.get("member") == "c1" and e["event"] == "revoked"
               and [tp[0], tp[1]] in [list(p[:2]) for p in e["partitions"]]]
    assert revoked and revoked[0]["ts_ms"] > first["ts_ms"]
    accepted = [e for e in rep.sim.trace if e.get("member") == "c1" and e["event"] == "commit" and e.get("accepted")
                and first["ts_ms"] <= e["ts_ms"] <= revoked[0]["ts_ms"]
                and [tp[0], tp[1]] in [list(p[:2]) for p in e["partitions"]]]
    assert not accepted


def test_static_member_left_behind_needs_the_stale_rejoin() -> None:
    """Without static membership the slow member is dropped at the rebalance timeout and rejoins as new:
    its partitions are lost, not kept, and no live overlap remains (the scenario's timing is not what
    makes the overlap, KAFKA-8220 is)."""
    rep = run_scenario("static-member-left-behind", ScenarioOptions(protocol="cooperative"))
    lost = [e for e in rep.sim.trace if e.get("member") == "c1" and e["event"] == "lost"]
    assert lost
    for d in rep.ownership.double_owned:
        assert d["ts_ms"] <= lost[0]["ts_ms"]


def test_connect_worker_bounces_gets_its_tasks_back_after_the_delay() -> None:
    out = json.loads(run("connect-worker-bounces", "--json"))
    assert out["protocol"] == "connect" and out["assignor"] == "connect"
    assert out["totals"]["partitions_moved"] == 0  # nobody else ran c3's tasks
    assert out["totals"]["double_owned_instants"] == 0
    held = [ms for ms in out["unowned_ms"].values() if ms > 0]
    assert held and min(held) >= 10000  # held for the whole delay
    assert "replay" in out and "--assignor connect" in out["replay"]


def test_connect_worker_leaves_tasks_move_after_the_delay() -> None:
    out = json.loads(run("connect-worker-leaves", "--json"))
    assert out["totals"]["partitions_moved"] >= 2
    held = [ms for ms in out["unowned_ms"].values() if ms > 0]
    assert held and min(held) >= 10000
    assert out["totals"]["double_owned_instants"] == 0


@pytest.mark.parametrize("argv", [
    ["connect-worker-bounces", "--members", "2", "--partitions", "4", "--seed", "7"],
    ["new-consumer-joins", "--protocol", "cooperative", "--assignor", "cooperative-sticky", "--members", "2",
     "--partitions", "3", "--seed", "5", "--delay", "2-9"],
    ["consumer-bounces", "--protocol", "eager", "--assignor", "roundrobin", "--seed", "3", "--loss", "0.01"],
])
def test_printed_replay_command_reproduces_the_run(argv: list[str]) -> None:
    first = run(*argv)
    line = next(x for x in first.splitlines() if x.startswith("(replay: "))
    words = shlex.split(line[len("(replay: "):-1])
    assert words[:2] == ["groupspec", "simulate"] and "--assignor" in words
    again = run(*words[2:])
    assert again == first


@pytest.mark.parametrize("args,fragment", [
    (["connect-worker-leaves", "--assignor", "range"], "connect assignor"),
    (["connect-worker-leaves", "--protocol", "eager"], "runs connect members"),
    (["new-consumer-joins", "--assignor", "connect"], "unknown assignor"),
])
def test_connect_story_bad_options(args: list[str], fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["simulate", *args])
    assert e.value.code == 2
    out, err = capsys.readouterr()
    assert fragment in err and err.count("\n") == 1 and not out


def test_static_restart_in_cooperative_round_orphans_the_withheld_partitions() -> None:
    """The model's static-cooperative deadlock, in the reference: the partitions withheld from c2..cN
    stay without owner, even long after the scenario (nothing rebalances the group again)."""
    rep = run_scenario("static-restart-in-cooperative-round", ScenarioOptions(members=3, partitions=6))
    rep.sim.run_quietly_until(300000)
    owners = {tp for p in rep.sim.procs.values() if p.alive for tp in p.consumer.owned}
    orphans = {("t", k) for k in range(6)} - owners
    assert len(orphans) == 4
    assert all(p.consumer.state.value == "STABLE" and not p.consumer.rejoin_needed
               for p in rep.sim.procs.values() if p.alive)


def test_dynamic_restart_in_cooperative_round_hands_everything_out() -> None:
    """The same schedule with dynamic members: the restarted process joins as new, which rebalances."""
    rep = run_scenario("static-restart-in-cooperative-round", ScenarioOptions(protocol="cooperative"))
    owners = {tp for p in rep.sim.procs.values() if p.alive for tp in p.consumer.owned}
    assert owners == {("t", k) for k in range(6)}
