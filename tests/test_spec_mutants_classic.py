"""The classic family's survivors of its first full run (issue 30; docs/specification.md, "Classic survivors, the first
full run"): the check added for a survivor passes on the unchanged model and kills it, so a weakened check fails here;
and the survivors judged equivalent are shown to be so on every reachable state of small instances of the variants
that reach the changed rule (the reachable labelled graphs, and what the properties read on them, of the unchanged and
the mutated model compared), so a model change that makes one of them observable fails here and the equivalence must
be judged again.
"""
from __future__ import annotations

from collections import deque
from functools import lru_cache
from typing import Any, Iterator

import pytest

from groupspec.specmut import generate, run_one
from groupspec.specmut.campaign import baseline
from groupspec.specmut.equivalent import EQUIVALENT
from groupspec.specmut.loader import applied

C = "classic.ClassicProtocol."


def _mutant(name: str):  # noqa: ANN202
    return next(m for m in generate() if m.name == name)


def _proto(variant: str, members: int, partitions: int, topics: int, faults: str, budget: int) -> Any:
    from groupspec.model import Config, make

    return make(variant, Config(members=members, partitions=partitions, topics=topics, budget=budget,
                                assignor="sticky" if topics == 1 else "range",
                                faults=frozenset(f for f in faults.split(",") if f)))


def _states(proto: Any) -> Iterator[Any]:
    seen = {repr(s) for s in proto.init_states()}
    todo = deque(proto.init_states())
    while todo:
        s = todo.popleft()
        yield s
        for _a, t in proto.successors(s):
            if repr(t) not in seen:
                seen.add(repr(t))
                todo.append(t)


@lru_cache(maxsize=None)  # the unchanged model's graphs are shared by the cases
def observed(name: str | None, job: tuple[Any, ...]) -> tuple[dict[str, Any], set[tuple[str, ...]]]:
    """Every reachable state with what the properties read there (the safety properties, convergence, the live
    members), and every step that changes the state (stutters dropped: no property reads them), labelled."""
    with applied(_mutant(name) if name else None):
        proto = _proto(*job)
        members = job[1]
        obs: dict[str, Any] = {}
        edges: set[tuple[str, ...]] = set()
        for s in _states(proto):
            rs = repr(s)
            obs[rs] = (tuple(p.check(proto, s) for p in proto.safety_properties()), proto.converged(s),
                       tuple(proto.live_member(s, i) for i in range(members)))
            for a, t in proto.successors(s):
                if t != s:
                    edges.add((rs, repr(a), repr(t), tuple(p.check(proto, s, t) for p in proto.action_properties())))
        return obs, edges


@pytest.mark.parametrize("name, killer, bug", [
    # one consumer and the join fault: it must still start running (the held-back one is never the only one)
    (C + "init_states:drop-term#1", "broken:unfenced-commits 1m×2p join,zombie b1", "commit_fencing"),
    # as many partitions as topics: the partitions fault must not hold back a topic's only partition
    (C + "init_states:drop-term#5", "broken:eager-no-revoke 2m×2p partitions b0", "exclusive_ownership"),
    # the old owner of a partition has the new generation's JoinGroup answer unread: it is still a live member
    (C + "live_member:off-by-one#0", "broken:coordinator-assigns-no-revoke 2m×2p b0", "exclusive_ownership"),
])
def test_checks_added_for_the_survivors_kill_them(name: str, killer: str, bug: str) -> None:
    base = baseline(only=[killer], trace=False)
    assert base[killer].get("failure") is None and "error" not in base[killer], base[killer]
    assert base[killer]["verdicts"][bug] is False  # the broken variant's bug is found on the unchanged model
    row = run_one(_mutant(name), base)
    assert row["status"] == "killed" and row["killer"] == killer, row


ALL = "join,leave,crash,timeout,zombie"
DYN = ("cooperative", 2, 2, 1, f"{ALL},poll-timeout,two-step-join,late-expiry", 2)
EAGER = ("eager", 2, 2, 1, f"{ALL},partitions", 2)
CONNECT = ("connect-keep-work", 2, 2, 1, f"{ALL},poll-timeout", 2)
UPGRADE = ("eager-to-cooperative", 2, 2, 1, ALL, 1)
STATIC = ("static", 2, 2, 1, f"{ALL},sync-timeout,late-expiry,poll-timeout", 2)
STATIC_COOP = ("static-cooperative", 2, 3, 1, f"{ALL},late-expiry", 2)
SNAPSHOT = ("static-leader-snapshot", 2, 2, 1, "crash,join,partitions,poll-timeout", 2)
STATIC_NOTICE = ("static", 2, 2, 1, "join,crash,timeout,partitions", 3)  # a static leader noticing a new partition
EVERY = [EAGER, DYN, STATIC, STATIC_COOP, SNAPSHOT]  # (Connect and the upgrade where the argument is about them)
GRAPH_CASES = [
    # (mutant, instances: variant, members, partitions, topics, faults, budget)
    (C + "alive:drop-term#2", EVERY + [CONNECT, UPGRADE]),
    (C + "successors:drop-term#13", EVERY),
    (C + "successors:drop-term#19", EVERY),
    (C + "_sync:drop-term#1", EVERY),
    (C + "_join:drop-term#2", EVERY + [CONNECT, UPGRADE]),
    (C + "_join:drop-term#8", EVERY + [CONNECT, UPGRADE]),
    (C + "successors:timer-early#0", EVERY),
    (C + "successors:drop-term#7", [EAGER, CONNECT, SNAPSHOT, STATIC_NOTICE]),
    (C + "successors:drop-term#6", [EAGER, CONNECT, SNAPSHOT, STATIC_NOTICE]),
    (C + "successors:drop-term#3", EVERY),
    (C + "successors:drop-term#0", EVERY),
    (C + "_join:drop-term#12", EVERY + [STATIC_NOTICE]),
    (C + "_join:off-by-one#0", EVERY),
    (C + "live_member:drop-term#1", EVERY),  # (live_member itself is compared on every state: observed)
    (C + "_join:drop-term#10", [EAGER, DYN, CONNECT, STATIC, ("static", 2, 2, 2, "join,crash,subscription,timeout", 3)]),
    (C + "_static_replace:keep-owned#0", [STATIC, STATIC_COOP, SNAPSHOT]),
    # a fault's selection left out: with the fault selected, the mutant is the unchanged model
    (C + "successors:drop-term#11", [DYN, STATIC, STATIC_COOP]),
    (C + "_static_replace:drop-term#0", [STATIC, ("static-leader-snapshot", 2, 2, 1, "crash,join,partitions,sync-timeout", 3)]),
]


@pytest.mark.parametrize("name, jobs", GRAPH_CASES, ids=[c[0] for c in GRAPH_CASES])
def test_equivalent_survivors_leave_the_reachable_graph_as_it_was(name: str, jobs: list[tuple[Any, ...]]) -> None:
    assert name in EQUIVALENT
    for job in jobs:
        before, after = observed(None, job), observed(name, job)
        assert len(before[0]) > 100, job  # the instance was explored, not just its initial state
        assert before == after, (name, job)



def projected(name: str | None, job: tuple[Any, ...]) -> tuple[set[Any], set[tuple[str, str]]]:
    """The reachable states and changing steps, unlabelled, with the rejoin flag of a process that holds no current
    member id left out (what a stale process rejoins with is decided by its next request, answered UNKNOWN_MEMBER_ID
    whether it is a heartbeat or a JoinGroup), and what the properties read on each state."""
    with applied(_mutant(name) if name else None):
        from groupspec.model import Id

        proto = _proto(*job)

        def cut(s: Any) -> str:  # (text: the mutant's model is loaded afresh, its classes are others)
            return repr(s.but(clients=tuple(c if c.id == Id.CURRENT else c.but(rejoin=False) for c in s.clients)))

        states, edges = set(), set()
        for s in _states(proto):
            states.add((cut(s), tuple(p.check(proto, s) for p in proto.safety_properties()), proto.converged(s)))
            for _a, t in proto.successors(s):
                if cut(t) != cut(s):
                    edges.add((cut(s), cut(t)))
        return states, edges


@pytest.mark.parametrize("name", [C + "successors:drop-term#9"])
def test_equivalent_up_to_a_stale_process_rejoin_flag(name: str) -> None:
    assert name in EQUIVALENT
    for job in [CONNECT, ("connect-delayed", 2, 2, 1, ALL, 2)]:
        before, after = projected(None, job), projected(name, job)
        assert len(before[0]) > 100, job
        assert before == after, (name, job)


# --- the next 15 survivors (docs/specification.md, "Classic survivors, the first full run (continued)") ---------------
GRAPH_CASES_2 = [
    (C + "_perturbations:drop-guard#7", [EAGER, STATIC_COOP, DYN]),  # _poll_timeout_steps asks self.poll_timeout again
    (C + "_receive_error:drop-guard#1", EVERY),  # no FENCED_INSTANCE_ID answer is ever put in an inbox
    (C + "_heartbeat:drop-term#4", EVERY),  # it adds only a stutter (observed drops stutters)
    (C + "_heartbeat:drop-term#0", EVERY + [CONNECT, UPGRADE]),  # a dynamic stale process has no record
    (C + "_receive_sync:drop-guard#1", [EAGER, DYN, CONNECT, UPGRADE, STATIC]),  # an eager member owns nothing then
    (C + "_heartbeat:drop-term#3", EVERY),
    # the leave fault's selection left out: with it selected (every instance here), the mutant is the unchanged model
    (C + "_perturbations:drop-guard#2", [EAGER, DYN, STATIC]),
]


@pytest.mark.parametrize("name, jobs", GRAPH_CASES_2, ids=[c[0] for c in GRAPH_CASES_2])
def test_equivalent_survivors_continued(name: str, jobs: list[tuple[Any, ...]]) -> None:
    test_equivalent_survivors_leave_the_reachable_graph_as_it_was(name, jobs)


def cut_graph(name: str | None, job: tuple[Any, ...], cut_name: str) -> tuple[set[Any], set[tuple[str, str]]]:
    """The reachable states and changing steps, unlabelled, seen through a cut (below), with what the properties read
    on each state."""
    with applied(_mutant(name) if name else None):
        from groupspec.model import Id, MemberStatus

        proto = _proto(*job)

        def cut(s: Any) -> str:
            if cut_name == "budget":  # the perturbation budget left out
                return repr(s.but(budget=0))
            if cut_name == "stale-rejoin":  # the rejoin flag of a process without the current id left out
                return repr(s.but(clients=tuple(c if c.id == Id.CURRENT else c.but(rejoin=False) for c in s.clients)))
            assert cut_name == "unjoined-rejoin"  # the rejoin flag of an UNJOINED process left out
            return repr(s.but(clients=tuple(c if c.status != MemberStatus.UNJOINED else c.but(rejoin=False)
                                            for c in s.clients)))

        states, edges = set(), set()
        for s in _states(proto):
            states.add((cut(s), tuple(p.check(proto, s) for p in proto.safety_properties()), proto.converged(s)))
            for _a, t in proto.successors(s):
                if cut(t) != cut(s):
                    edges.add((cut(s), cut(t)))
        return states, edges


CUT_CASES = [
    # a step that changes nothing but spends the budget: a no-op AddPartition, a Crash of a process already down
    (C + "successors:drop-term#27", "budget", [EAGER, ("static", 2, 2, 1, "join,crash,timeout,partitions", 2)]),
    (C + "_perturbations:drop-guard#5", "budget", [EAGER, DYN, STATIC]),
    # the rejoin flag kept on a process reset to UNJOINED: its JoinGroup clears it, nothing else reads it there
    (C + "_heartbeat:keep-rejoin#0", "stale-rejoin", [EAGER, DYN, STATIC, CONNECT]),
    (C + "_heartbeat:keep-rejoin#1", "unjoined-rejoin", [EAGER, DYN, STATIC, STATIC_COOP]),
]


@pytest.mark.parametrize("name, cut_name, jobs", CUT_CASES, ids=[c[0] for c in CUT_CASES])
def test_equivalent_up_to_a_cut(name: str, cut_name: str, jobs: list[tuple[Any, ...]]) -> None:
    assert name in EQUIVALENT
    for job in jobs:
        before, after = cut_graph(None, job, cut_name), cut_graph(name, job, cut_name)
        assert len(before[0]) > 100, job
        assert before == after, (name, job)


def test_partition_added_past_the_budget_lies_between_budgets() -> None:
    """successors:drop-term#25: AddPartition no longer needs budget left (it overdraws it by one): with the budget
    projected away, the mutant's reachable graph at budget b lies between the unchanged model's at b and at b + 1."""
    name = C + "successors:drop-term#25"
    assert name in EQUIVALENT
    for variant, b in [("eager", 1), ("cooperative", 1), ("static", 2)]:
        job = (variant, 2, 2, 1, "join,crash,timeout,partitions", b)
        lo, mid = cut_graph(None, job, "budget"), cut_graph(name, job, "budget")
        hi = cut_graph(None, job[:-1] + (b + 1,), "budget")
        assert lo[0] < mid[0] <= hi[0] and lo[1] < mid[1] <= hi[1], job


SHORTCUT_CASES = [
    # a paused static member with a zombie already restarted again: the same as GhostFenced (free), then Start
    (C + "_perturbations:drop-term#8", "Start", [("static", 1, 2, 1, "join,zombie,timeout", 4),
                                                  ("static-cooperative", 1, 2, 1, "join,zombie,crash", 4)]),
    # a STABLE process whose id went stale changes its subscription: the same as the change before the removal
    (C + "_perturbations:drop-term#13", "ChangeSubscription", [("eager", 2, 2, 2, "join,leave,crash,timeout,subscription", 3),
                                                               ("static", 2, 2, 2, "join,crash,subscription,timeout", 2)]),
]


@pytest.mark.parametrize("name, action, jobs", SHORTCUT_CASES, ids=[c[0] for c in SHORTCUT_CASES])
def test_equivalent_up_to_shortcuts_between_reachable_states(name: str, action: str, jobs: list[tuple[Any, ...]]) -> None:
    """The mutant reaches exactly the same states, with the same property verdicts; it adds only steps of one
    perturbation (they spend the budget: no cycle) between states reachable anyway, each passing the action properties."""
    assert name in EQUIVALENT
    for job in jobs:
        before, after = observed(None, job), observed(name, job)
        assert len(before[0]) > 100, job
        assert before[0] == after[0] and before[1] <= after[1], (name, job)
        added = after[1] - before[1]
        assert added, job  # the instance reaches the changed rule
        assert all(e[1].startswith(action + "(") and all(v is None for v in e[3]) for e in added), (name, job)


def test_dropping_the_only_topic_is_killed_by_a_client_walk() -> None:
    """_perturbations:drop-term#14 (a subscription change with one topic drops it): the reference client, explored
    along the model's paths at one topic with the subscription fault, passes on the unchanged model and tells the
    mutant's member subscribed to nothing (Kafka's subscribe of no topic is unsubscribe: it leaves the group)."""
    name, killer = C + "_perturbations:drop-term#14", "client:eager·sticky 2m×2p b2 explored"
    assert name not in EQUIVALENT
    base = baseline(only=[killer], trace=False)
    assert base[killer].get("failure") is None and "error" not in base[killer], base[killer]
    row = run_one(_mutant(name), base)
    assert row["status"] == "killed" and row["killer"] == killer and "subscribes to no topic" in row["detail"], row


# --- cclassic: classic.py's successors, _heartbeat, _leave, converged, and three left open (docs/specification.md,
# "Classic survivors: cclassic") ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, killer, says", [
    # a static member restarted whose old session runs out before the new process joins (Kafka expires it)
    (C + "alive:drop-term#1", "kafka-run:static-restart-before-expiry", "SessionExpired(0): not a step of the model"),
    # a member resumed from a long pause heartbeats: Kafka accepts it (NONE) and its session is refreshed
    (C + "_heartbeat:negate-guard#4", "kafka-run:resumed-member-heartbeats", "Heartbeat(0): not a step of the model"),
    # a static member's close sends no LeaveGroup: Kafka keeps its record
    (C + "_leave:drop-term#2", "kafka:static·sticky 2m×2p 20×20", "LeaveGroup("),
    # a static member's JoinGroup in a stable group (a restart): Kafka stores the metadata it sent (nothing owned)
    (C + "_static_replace:skip-callback#0", "client:static·range 2m×2p b4 explored", "the model's record holds"),
])
def test_checks_added_for_cclassic_kill_them(name: str, killer: str, says: str) -> None:
    assert name not in EQUIVALENT
    base = baseline(only=[killer], trace=False)
    assert base[killer].get("failure") is None and "error" not in base[killer], base[killer]
    row = run_one(_mutant(name), base)
    assert row["status"] == "killed" and row["killer"] == killer and says in row["detail"], row


INITIAL_DELAY = [("eager", 2, 2, 1, "join,leave,crash,timeout,zombie,initial-delay", 2),
                 ("static", 2, 2, 1, "join,crash,timeout,zombie,initial-delay", 2)]
DELAYED = [("connect-delayed", 2, 2, 1, "leave,crash", 2), ("connect-hold-outlives-group", 2, 2, 1, "crash", 2)]
TWO_STEP = ("eager", 2, 2, 1, "join,leave,crash,two-step-join,poll-timeout", 2)
GRAPH_CASES_3 = [
    (C + "_leave:drop-term#0", [EAGER, DYN]),  # without static members a record means the current id
    (C + "_leave:drop-term#1", [EAGER, DYN]),  # the current id means a record
    (C + "_leave:drop-term#3", [DYN, TWO_STEP]),  # a pending id's slot is never run by a process without it
    (C + "_leave:drop-term#4", [DYN, TWO_STEP]),  # a running process holding a pending id: the coordinator has it
    (C + "_heartbeat:drop-guard#4", [DYN]),  # it adds only stutters (observed drops stutters)
    (C + "successors:drop-term#22", INITIAL_DELAY[:1]),  # while the initial delay runs every member has joined
    (C + "successors:drop-term#23", DELAYED),  # work is held only where self.delayed
    (C + "successors:drop-term#24", DELAYED),  # DelayExpired with nothing held: a stutter
]


@pytest.mark.parametrize("name, jobs", GRAPH_CASES_3, ids=[c[0] for c in GRAPH_CASES_3])
def test_equivalent_survivors_cclassic(name: str, jobs: list[tuple[Any, ...]]) -> None:
    test_equivalent_survivors_leave_the_reachable_graph_as_it_was(name, jobs)


def clamped_budget_graph(name: str | None, job: tuple[Any, ...]) -> tuple[set[Any], set[tuple[str, str]]]:
    """``cut_graph`` through the budget cut, explored with the budget clamped at 0: the mutant's AddPartition spends
    the budget below 0 without end (an infinite state space), and below 0 a state has the steps it has at 0."""
    with applied(_mutant(name) if name else None):
        proto = _proto(*job)

        def cut(s: Any) -> str:
            return repr(s.but(budget=0))

        def clamp(s: Any) -> Any:
            return s if s.budget >= 0 else s.but(budget=0)

        todo = deque(clamp(s) for s in proto.init_states())
        seen = {repr(s) for s in todo}
        states, edges = set(), set()
        while todo:
            s = todo.popleft()
            states.add((cut(s), tuple(p.check(proto, s) for p in proto.safety_properties()), proto.converged(s)))
            for _a, t in proto.successors(s):
                t = clamp(t)
                if cut(t) != cut(s):
                    edges.add((cut(s), cut(t)))
                if repr(t) not in seen:
                    seen.add(repr(t))
                    todo.append(t)
        return states, edges


def test_partitions_step_always_enabled_changes_only_the_budget() -> None:
    """successors:drop-guard#10 (AddPartition always enabled: past the budget, and with nothing left to add): a step
    that changes nothing but the budget, or the partitions fault's addition past the budget (drop-term#27 and #25
    together). With the budget projected away, the reachable graph is the unchanged model's without the partitions
    fault, and lies between the unchanged model's at budget b and b + 1 with it."""
    name = C + "successors:drop-guard#10"
    assert name in EQUIVALENT
    for job in [("eager", 2, 2, 1, "join,leave,crash,timeout,zombie", 2)]:
        before, after = clamped_budget_graph(None, job), clamped_budget_graph(name, job)
        assert len(before[0]) > 100 and before == after, job
    for variant in ("eager",):
        job = (variant, 2, 2, 1, "join,crash,timeout,partitions", 1)
        lo, mid = clamped_budget_graph(None, job), clamped_budget_graph(name, job)
        hi = clamped_budget_graph(None, job[:-1] + (2,))
        assert lo[0] < mid[0] <= hi[0] and lo[1] < mid[1] <= hi[1], job


def verdicts(name: str | None, job: tuple[Any, ...]) -> dict[str, Any]:
    """The explorer's verdicts (the safety, action, convergence and non-vacuity properties) on one instance."""
    with applied(_mutant(name) if name else None):
        from groupspec.checker import Explorer

        return {k: v.held for k, v in Explorer(_proto(*job)).run().verdicts.items()}


CONVERGED_EARLIER = [
    # everyone gone while the initial delay still runs (the last member left the forming group)
    (C + "converged:drop-term#0", "InitialDelayExpired", [INITIAL_DELAY[0]]),
    # everyone gone but a paused old process of a restarted static member (a zombie)
    (C + "converged:drop-term#3", "GhostFenced", [("static", 1, 2, 1, "join,zombie,crash", 3)]),
    # everyone gone but a pending member id of a process that crashed before its second JoinGroup
    (C + "converged:drop-term#5", "PendingExpired", [TWO_STEP]),
]


@pytest.mark.parametrize("name, step, jobs", CONVERGED_EARLIER, ids=[c[0] for c in CONVERGED_EARLIER])
def test_converged_one_free_step_earlier(name: str, step: str, jobs: list[tuple[Any, ...]]) -> None:
    """The mutant calls converged a state where everyone is gone but a timer of the coordinator's (or a zombie) is
    still to run out: one free protocol step (enabled until taken, weakly fair) that changes nothing else leads from
    it to a state both call converged. The graphs, the safety verdicts and the explorer's verdicts are the same."""
    assert name in EQUIVALENT
    for job in jobs:
        before, after = observed(None, job), observed(name, job)
        assert len(before[0]) > 100 and set(before[0]) == set(after[0]) and before[1] == after[1], job
        differ = [rs for rs in before[0] if before[0][rs] != after[0][rs]]
        assert differ, job  # the instance reaches such a state
        for rs in differ:
            b, a = before[0][rs], after[0][rs]
            assert (b[0], b[2], b[1], a[1]) == (a[0], a[2], False, True), rs
            nxt = [e for e in before[1] if e[0] == rs and e[1].startswith(step + "(")]
            assert nxt and all(before[0][e[2]][1] for e in nxt), rs
        assert verdicts(None, job) == verdicts(name, job), job


def test_live_member_left_behind_with_an_older_answer_changes_no_verdict() -> None:
    """live_member:drop-term#2 (a static member left behind counted live while a JoinGroup answer of an older generation
    is on its way): that member sent the JoinGroup after onJoinPrepare, so it owns nothing (eager) or only what its record
    reports, which every later assignment gives back to it or withholds from everyone (cooperative), and its commits are
    refused (its generation is older). Same graphs, same verdicts on every state; only the live members differ."""
    name = C + "live_member:drop-term#2"
    assert name in EQUIVALENT
    for job in [("static-cooperative", 2, 2, 1, "join,timeout", 3)]:  # (eager, static: it owns nothing then)
        before, after = observed(None, job), observed(name, job)
        assert set(before[0]) == set(after[0]) and before[1] == after[1], job
        assert all(before[0][k][:2] == after[0][k][:2] for k in before[0]), job
        assert any(before[0][k][2] != after[0][k][2] for k in before[0]), job  # the instance reaches the changed rule


def test_a_time_limit_wrapped_by_a_check_is_no_kill(monkeypatch: pytest.MonkeyPatch) -> None:
    """successors:drop-guard#10 was reported killed by conformance:static-range when the per-mutant time limit fired
    inside its Hypothesis run, which wrapped the TimeoutError in a FlakyFailure ("the model raised"): a time limit
    wrapped by a check is still the time limit (the mutant undecided), never a kill."""
    import importlib

    camp = importlib.import_module("groupspec.specmut.campaign")  # (the package's name campaign is the function)

    def wrapped(*_a: Any, **_k: Any) -> Any:
        try:
            raise TimeoutError("per-mutant time limit")
        except TimeoutError as e:
            raise ExceptionGroup("Inconsistent results: a test case failed on the first run but now succeeds", [e])

    monkeypatch.setattr(camp, "run_killer", wrapped)
    name = C + "successors:drop-guard#10"
    row = camp.run_one(_mutant(name), {"model:eager 3m×2p b1": {"verdicts": {}}}, planned=[("model:eager 3m×2p b1", None)])
    assert row["status"] == "timeout" and row["killer"] is None, row
