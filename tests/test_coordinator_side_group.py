"""The coordinator-side assignment group (reference/history/coordinator_side_group.py, Kafka's 0.9 draft)."""
from __future__ import annotations

import pytest

from groupspec.reference.history import CoordinatorSideGroup, CsConfig, CsCoordinator
from groupspec.reference.sim import ownership


def _group(seed: int = 0) -> CoordinatorSideGroup:
    g = CoordinatorSideGroup(CsConfig(seed=seed))
    for i, t in enumerate((0, 700, 1400)):
        g.at(t, "start", f"c{i + 1}")
    return g


def test_a_join_is_one_rebalance_decided_by_the_coordinator() -> None:
    g = _group()
    g.run_until(19_999)
    gen, rebalances = g.generation, g.rebalances
    g.at(20_000, "start", "c4")
    g.run_until(40_000)
    assert g.generation == gen + 1 and g.rebalances == rebalances + 1
    assert g.generations[-1][2] == ("c1", "c2", "c3", "c4")
    # the others learned it from a heartbeat answered ILLEGAL_GENERATION, then rejoined
    told = {r["to"] for r in g.transcript if r.get("error") == "ILLEGAL_GENERATION" and r["at"] >= 20_000}
    assert told == {"c1", "c2", "c3"}
    own = ownership(g.trace, 20_000, 40_000)
    assert own.double_owned == []
    assert {tp: o[0] for tp, o in own.final_owners.items()} == {
        ("t", p): m for m, ps in g.assignment(["c1", "c2", "c3", "c4"]).items() for p in ps}


def test_a_crash_is_noticed_at_the_session_timeout() -> None:
    g = _group()
    g.run_until(20_000)
    gen = g.generation
    g.at(20_000, "crash", "c3")
    g.run_until(20_000 + g.config.session_timeout_ms - g.config.heartbeat_interval_ms)
    assert g.generation == gen and "c3" in g.members  # not yet
    g.run_until(40_000)
    assert g.generation == gen + 1 and "c3" not in g.members
    assert sorted(set(g.owners.values())) == ["c1", "c2"]


def test_the_coordinator_refuses_a_commit_from_a_non_owner() -> None:
    g = _group()
    g.run_until(10_000)
    mine = g.consumers["c1"].owned
    other = g.consumers["c2"].owned
    g.at(10_000, "commit", "c1", partitions=mine)
    g.at(10_100, "commit", "c1", partitions=other)
    g.run_until(11_000)
    assert g.commits == {"accepted": 1, "rejected": 1}


def test_runs_replay_exactly() -> None:
    def run(seed: int) -> tuple[list[dict], list[dict]]:
        g = _group(seed)
        g.at(20_000, "start", "c4")
        g.at(30_000, "crash", "c1")
        g.run_until(60_000)
        return g.trace, g.transcript

    assert run(3) == run(3)


def test_unknown_action_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown coordinator-side action"):
        CoordinatorSideGroup().at(0, "pause", "c1")


def test_its_traces_pass_the_trace_checker() -> None:
    from groupspec.trace import check_events

    g = _group()
    g.at(20_000, "start", "c4")
    g.at(40_000, "crash", "c2")
    g.run_until(80_000)
    r = check_events(g.trace, source="coordinator-side")
    assert r.ok, r.to_dict()


def test_the_trace_checker_catches_a_coordinator_that_assigns_a_partition_twice(monkeypatch) -> None:
    from groupspec.trace import check_events

    def greedy(self, members):  # a broken coordinator: everybody gets every partition
        return {m: tuple(range(self.config.partitions)) for m in members}

    monkeypatch.setattr(CsCoordinator, "assignment", greedy)
    g = _group()
    g.run_until(30_000)
    r = check_events(g.trace, source="coordinator-side-greedy")
    assert not r.ok and "exclusive_ownership" in str(r.to_dict())


def test_the_network_is_a_parameter_of_the_run() -> None:
    """Requests and answers go over ``network.py``'s network when one is given: on a lossy one some heartbeats
    are lost, the coordinator declares live members dead and rebalances more; the same seed replays the run."""
    from groupspec.reference.sim import NetworkConfig

    def run(config: CsConfig) -> CoordinatorSideGroup:
        g = CoordinatorSideGroup(config)
        for i, t in enumerate((0, 700, 1400)):
            g.at(t, "start", f"c{i + 1}")
        g.run_until(120_000)
        return g

    calm = run(CsConfig(seed=2))
    lossy = run(CsConfig(seed=2, network=NetworkConfig(2, 20, loss=0.3)))
    assert lossy.rebalances > calm.rebalances
    assert run(CsConfig(seed=2, network=NetworkConfig(2, 20, loss=0.3))).trace == lossy.trace


def test_an_answer_to_a_process_that_restarted_is_not_delivered() -> None:
    """The coordinator answers one incarnation: c1 crashes and restarts while the answer to its JoinGroup is on
    the way; that answer is dropped (the first process never says ``assigned``), the new process joins by itself."""
    g = CoordinatorSideGroup(CsConfig(seed=0, delay_ms=(50, 50)))
    g.at(0, "start", "c1")  # its JoinGroup arrives at 50, the answer (generation 1) at 100
    g.at(60, "crash", "c1")
    g.at(61, "start", "c1")
    g.run_until(30_000)
    assert g.dropped == 1
    assigned = [(e["ts_ms"], e["generation"]) for e in g.trace if e["event"] == "assigned"]
    assert assigned == [(161, 2)]
