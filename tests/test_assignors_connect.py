"""Connect's incremental cooperative assignor (KIP-415): delays, lost work, two-round balancing."""
from __future__ import annotations

import random

import pytest

from conftest import DEEP
from groupspec.reference.assignors.connect import (
    LeaderState,
    Running,
    WorkerAssignment,
    apply_assignment,
    assign_round,
    backoff_ms,
)

CONFIG = {"conn-a": 4, "conn-b": 4, "conn-c": 4}  # 3 connectors, 12 tasks
MAX = 300_000


class Cluster:
    """A tiny driver: the leader's state plus what every worker runs; one call = one rebalance round."""

    def __init__(self, config=CONFIG, max_delay=MAX):
        self.config = dict(config)
        self.max_delay = max_delay
        self.state = LeaderState()
        self.running: dict[str, Running] = {}
        self.generation = 0
        self.last: dict[str, WorkerAssignment] = {}

    def join(self, *workers):
        for w in workers:
            self.running.setdefault(w, Running())

    def leave(self, w):
        self.running.pop(w)

    def round(self, now):
        self.generation += 1
        res = assign_round(self.running, self.config, self.state, generation=self.generation,
                           last_completed_generation=self.generation - 1, now=now, max_delay=self.max_delay)
        for w, a in res.assignments.items():
            self.running[w] = apply_assignment(self.running[w], a)
        self.state = res.state
        self.last = res.assignments
        return res

    def tasks(self, w):
        return self.running[w].tasks

    def counts(self):
        return {w: (len(r.connectors), len(r.tasks)) for w, r in sorted(self.running.items())}


def no_double_run(running: dict[str, Running]) -> list[str]:
    """Invariant: no connector or task runs on two workers at once."""
    seen: dict = {}
    problems = []
    for w, r in running.items():
        for item in list(r.connectors) + list(r.tasks):
            if item in seen:
                problems.append(f"{item!r} runs on {seen[item]!r} and {w!r}")
            seen[item] = w
    return problems


def everything_runs(running: dict[str, Running], config) -> list[str]:
    want = {c for c in config} | {(c, i) for c, n in config.items() for i in range(n)}
    have = set().union(*(r.connectors | r.tasks for r in running.values()))
    return [f"not running: {sorted(map(str, want - have))[:3]}"] if want - have else []


def balanced(cluster: Cluster) -> bool:
    cs = [c for c, _ in cluster.counts().values()]
    ts = [t for _, t in cluster.counts().values()]
    return max(cs) - min(cs) <= 1 and max(ts) - min(ts) <= 1


def start(cluster: Cluster, workers, now=0):
    cluster.join(*workers)
    cluster.round(now)
    assert everything_runs(cluster.running, cluster.config) == [] and balanced(cluster)


def test_fresh_group_spreads_everything_evenly():
    c = Cluster()
    start(c, ["w1", "w2", "w3"])
    assert c.counts() == {"w1": (1, 4), "w2": (1, 4), "w3": (1, 4)}
    assert all(a.delay == 0 for a in c.last.values())


def test_bounce_within_delay_gets_its_work_back():
    c = Cluster()
    start(c, ["w1", "w2", "w3"])
    before = c.running["w3"]
    c.leave("w3")
    res = c.round(now=1_000)  # w3 gone: its work is lost and held back
    assert set(res.lost_tasks) == set(before.tasks) and res.state.delay == MAX
    assert all(a.delay == MAX for a in res.assignments.values())
    assert everything_runs(c.running, c.config) != []  # the lost work is not reassigned yet
    c.join("w3-again")  # the worker comes back (new member id) within the delay, running nothing
    res = c.round(now=100_000)
    assert res.state.candidate_workers == ("w3-again",) and res.state.delay == MAX - 99_000
    assert c.running["w3-again"].is_empty()
    res = c.round(now=1_000 + MAX)  # the scheduled rebalance
    assert c.running["w3-again"] == before
    assert res.state.delay == 0 and res.state.scheduled_rebalance == 0
    assert no_double_run(c.running) == [] and everything_runs(c.running, c.config) == []


def test_permanent_leave_redistributes_after_the_delay():
    c = Cluster()
    start(c, ["w1", "w2", "w3"])
    c.leave("w3")
    c.round(now=5_000)
    assert everything_runs(c.running, c.config) != []
    c.round(now=5_000 + MAX - 1)  # a rebalance before the scheduled time changes nothing
    assert everything_runs(c.running, c.config) != []
    c.round(now=5_000 + MAX)
    assert everything_runs(c.running, c.config) == [] and no_double_run(c.running) == []
    assert balanced(c)


def test_max_delay_zero_reassigns_at_once():
    c = Cluster(max_delay=0)
    start(c, ["w1", "w2", "w3"])
    c.leave("w3")
    res = c.round(now=1)
    assert res.state.delay == 0
    assert everything_runs(c.running, c.config) == [] and no_double_run(c.running) == [] and balanced(c)


def test_balancing_takes_two_rounds():
    c = Cluster(config={"conn-a": 6, "conn-b": 6})
    start(c, ["w1", "w2", "w3"])
    c.join("w4")
    r1 = c.round(now=10)
    assert r1.assignments["w4"] == WorkerAssignment()  # round 1: only revocations, nothing moves directly
    revoked = [a for a in r1.assignments.values() if a.revokes_anything]
    assert revoked and all(not a.tasks_to_start and not a.connectors_to_start for a in revoked)
    assert not balanced(c)
    c.round(now=20)  # the revoking workers re-join at once; round 2 hands the freed work to w4
    assert balanced(c) and everything_runs(c.running, c.config) == [] and no_double_run(c.running) == []
    assert c.counts()["w4"] == (0, 3)


def test_successive_balancing_revocations_back_off():
    assert [backoff_ms(k, MAX) for k in (1, 2, 3, 4)] == [40, 1600, 64000, MAX]
    assert backoff_ms(3, 0) == 0
    c = Cluster(config={"conn-a": 8})
    start(c, ["w1"])
    c.join("w2")
    r1 = c.round(now=0)
    assert any(a.revokes_anything for a in r1.assignments.values()) and r1.state.revoked_in_previous
    c.join("w3")  # joins before round 2: balance is still off after the freed tasks are placed
    r2 = c.round(now=1)
    assert r2.state.delay == 40 and not any(a.revokes_anything for a in r2.assignments.values())


def test_deleted_connector_is_revoked_and_duplicates_are_stopped_everywhere():
    c = Cluster()
    start(c, ["w1", "w2"])
    owner = next(w for w, r in c.running.items() if "conn-c" in r.connectors)
    del c.config["conn-c"]
    r = c.round(now=1)
    assert "conn-c" in r.assignments[owner].connectors_to_revoke
    assert all(t[0] != "conn-c" for run in c.running.values() for t in run.tasks)
    # a task reported by two workers is revoked from both
    dup = next(iter(c.running["w1"].tasks))
    c.running["w2"] = Running(c.running["w2"].connectors, c.running["w2"].tasks | {dup})
    r = c.round(now=2)
    assert dup in r.assignments["w1"].tasks_to_revoke and dup in r.assignments["w2"].tasks_to_revoke


def test_leader_change_discards_the_remembered_assignment():
    c = Cluster()
    start(c, ["w1", "w2"])
    c.leave("w2")
    # a new leader (no state) sees no previous assignment: w2's work is "created", assigned at once
    res = assign_round(c.running, c.config, LeaderState(), generation=7, last_completed_generation=6, now=1, max_delay=MAX)
    assert res.state.delay == 0 and res.lost_tasks == ()
    # a stale generation has the same effect
    res = assign_round(c.running, c.config, c.state, generation=9, last_completed_generation=8, now=1, max_delay=MAX)
    assert res.state.delay == 0 and res.lost_tasks == ()


@pytest.mark.parametrize("seed", range(200) if DEEP else range(8))
def test_random_churn_never_double_runs_and_settles(seed):
    """Random joins/leaves/bounces; after the churn stops and the delay passes, all work runs, once, balanced."""
    rng = random.Random(seed)
    print(f"seed={seed}")
    c = Cluster(config={f"conn{i}": rng.randint(0, 5) for i in range(rng.randint(1, 5))}, max_delay=rng.choice([0, 1000, MAX]))
    start(c, [f"w{i}" for i in range(rng.randint(1, 4))])
    now = 0
    for step in range(12):
        now += rng.randint(1, 2000)
        action = rng.random()
        if action < 0.3 and len(c.running) > 1:
            c.leave(rng.choice(sorted(c.running)))
        elif action < 0.6:
            c.join(f"w-new{step}")
        c.round(now)
        assert no_double_run(c.running) == []
    for _ in range(4):  # quiet period: scheduled rebalance and follow-up rounds
        now += c.max_delay + 1
        c.round(now)
    assert everything_runs(c.running, c.config) == [] and no_double_run(c.running) == []
    assert balanced(c)


def test_checks_catch_a_broken_assignor():
    """The invariants used above catch a mutant that starts revoked work elsewhere in the same round."""
    running = {"w1": Running.of(["conn-a"], [("conn-a", 0)]), "w2": Running()}
    assert no_double_run(running) == []
    mutant = {"w1": running["w1"], "w2": apply_assignment(running["w2"], WorkerAssignment(tasks_to_start=(("conn-a", 0),)))}
    assert no_double_run(mutant) != []
    assert everything_runs({"w1": Running()}, {"conn-a": 1}) != []


def test_bad_input():
    with pytest.raises(ValueError):
        assign_round({}, CONFIG, LeaderState(), generation=1, last_completed_generation=0, now=0)
    with pytest.raises(ValueError):
        assign_round({"w": Running()}, {"c": -1}, LeaderState(), generation=1, last_completed_generation=0, now=0)
