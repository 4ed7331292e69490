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


# --- the survivors in the properties, check_transition and action_properties (docs/specification.md, "Classic
# survivors: cprops") ---------------------------------------------------------------------------------------------------
P = "properties.ClassicObservations."


@pytest.mark.parametrize("name, killer, bug", [
    # one broken variant per branch of generation_violation: the group's generation kept at a completed join phase ...
    (P + "generation_violation:negate-guard#0", "broken:eager-join-keeps-generation 2m×2p b0", "generation_monotonic"),
    (P + "generation_violation:drop-guard#0", "broken:eager-join-keeps-generation 2m×2p b0", "generation_monotonic"),
    # ... grown at the move to STABLE (no join phase) ...
    (P + "generation_violation:drop-guard#5", "broken:eager-sync-bumps-generation 2m×2p b0", "generation_monotonic"),
    # ... and a member's own step taking its generation down by one
    (P + "generation_violation:negate-guard#1", "broken:eager-sync-rolls-back-generation 2m×2p b0", "generation_monotonic"),
    (P + "generation_violation:off-by-one#0", "broken:eager-sync-rolls-back-generation 2m×2p b0", "generation_monotonic"),
    # a group that converges, but never with every started consumer in it
    ("properties.sometimes_stable_all:drop-term#1", "broken:eager-group-max-size-one 2m×2p b0", "sometimes_all_stable"),
    # no action property checked at all: the generation ahead is no longer found (judge: a complete run's None)
    ("spec.SpecBase.action_properties:negate-guard#0", "broken:eager-join-generation-ahead 2m×2p b0", "generation_monotonic"),
])
def test_cprops_broken_variants_kill_the_weakened_properties(name: str, killer: str, bug: str) -> None:
    assert name not in EQUIVALENT
    test_checks_added_for_the_survivors_kill_them(name, killer, bug)


def test_cprops_classic_partition_names_are_read_back_by_the_trace_checker() -> None:
    """partition_name:negate-guard#0 (both topics' partitions named t-N): the classic model's walks at two topics,
    written as traces, pass the trace checker on the unchanged model and are rejected for the mutant."""
    name, killer = P + "partition_name:negate-guard#0", "trace:cooperative·sticky 2m×4p×2t 20×25"
    base = baseline(only=[killer], trace=False)
    assert base[killer].get("failure") is None and "error" not in base[killer], base[killer]
    row = run_one(_mutant(name), base)
    assert row["status"] == "killed" and row["killer"] == killer and "well_formed" in row["detail"], row


def test_cprops_a_group_never_moves_to_its_own_status() -> None:
    """core.check_transition has no exemption for a move to the status the group is in (Kafka's transitionTo asserts
    validPreviousStates alone): so the mutant that dropped the exemption is gone, and no reachable step makes such a
    move (the explorations below would raise IllegalTransition)."""
    from groupspec.model.core import GroupStatus, IllegalTransition, check_transition

    assert not any(m.name.startswith("core.check_transition:drop-term") for m in generate())
    with pytest.raises(IllegalTransition):
        check_transition(GroupStatus.PREPARING_REBALANCE, GroupStatus.PREPARING_REBALANCE)
    check_transition(GroupStatus.DEAD, GroupStatus.DEAD)
    for job in [EAGER, STATIC, DYN]:
        assert len(observed(None, job)[0]) > 100


def verdicts(name: str | None, job: tuple[Any, ...]) -> tuple[dict[str, Any], set[tuple[str, ...]]]:
    """As ``observed``, but only whether each property holds (not its explanation), on states and changing steps."""
    obs, edges = observed(name, job)
    return ({k: (tuple(w is None for w in v[0]),) + v[1:] for k, v in obs.items()},
            {e[:3] + (tuple(w is None for w in e[3]),) for e in edges})


CPROPS_CASES = [
    # whom the explanation names (a ghost or the member): the verdict is decided before (static: ghosts; the broken
    # unfenced-commits: the explanation written)
    (P + "commit_violation:negate-guard#3", verdicts, [STATIC, ("unfenced-commits", 2, 2, 1, "zombie", 1)]),
    # b <= a under the guard a != b is b < a: the same verdicts and explanations (the broken variant's member goes down)
    (P + "generation_violation:off-by-one#2", observed, [EAGER, STATIC]),
    # a changed client with its generation unchanged: ahead of the unmoved group only if a reported step put it there
    (P + "generation_violation:drop-term#1", observed, [EAGER, STATIC, DYN]),
    # no classic step moves a group to DEAD
    (P + "generation_violation:drop-term#9", observed, [EAGER, STATIC, DYN, CONNECT]),
]


@pytest.mark.parametrize("name, view, jobs", CPROPS_CASES, ids=[c[0] for c in CPROPS_CASES])
def test_cprops_equivalent_properties_decide_alike(name: str, view: Any, jobs: list[tuple[Any, ...]]) -> None:
    assert name in EQUIVALENT
    for job in jobs:
        before, after = view(None, job), view(name, job)
        assert len(before[0]) > 20, job
        assert before == after, (name, job)


def explored(name: str | None, job: tuple[Any, ...]) -> dict[str, Any]:
    """The explorer's verdicts with their explanations (a broken variant whose generations grow without bound has no
    finite concrete graph: the explorer's state key bounds it)."""
    from groupspec.checker import Explorer

    with applied(_mutant(name) if name else None):
        res = Explorer(_proto(*job)).run()
        return {k: (v.held, v.explanation) for k, v in res.verdicts.items()}


@pytest.mark.parametrize("name", [P + "generation_violation:off-by-one#2", P + "generation_violation:drop-term#1"])
def test_cprops_equivalent_generation_checks_find_the_broken_generations_alike(name: str) -> None:
    """The broken variants whose bug is a generation (a member one down on its own step, one ahead at a parked JoinGroup)
    are found with the same counterexample."""
    assert name in EQUIVALENT
    for job in [("eager-sync-rolls-back-generation", 2, 2, 1, "", 0), ("eager-join-generation-ahead", 2, 2, 1, "", 0)]:
        before = explored(None, job)
        assert before["generation_monotonic"][0] is False, job
        assert explored(name, job) == before, job


def test_cprops_the_convergence_property_function_is_read_by_nothing() -> None:
    """properties.convergence:negate-guard#0: the explorer decides convergence from ``converged`` on the state graph
    and never calls the EVENTUALLY property's function, so the mutant (which answers the opposite) changes no verdict
    and no bound, on a correct variant nor on the broken one that must not converge."""
    from groupspec.checker import Explorer

    name = "properties.convergence:negate-guard#0"
    assert name in EQUIVALENT
    for job in [("eager", 2, 2, 1, "crash,leave", 1), ("cooperative-flappy", 2, 2, 1, "", 0)]:
        got = []
        for m in (None, name):
            with applied(_mutant(m) if m else None):
                from groupspec.model import properties

                proto = _proto(*job)
                s = proto.init_states()[0]
                answer = properties.convergence(proto, s) is None
                assert answer == (proto.converged(s) if m is None else not proto.converged(s))  # the change is real
                res = Explorer(proto).run()
                got.append(({k: v.held for k, v in res.verdicts.items()}, res.convergence_bound, res.states))
        assert got[0] == got[1], job


def test_cprops_a_paused_committer_is_flagged_one_resume_later() -> None:
    """commit_violation:drop-term#0 (a process's commit judged whether it runs or not): the same verdicts on every
    reachable state of a correct variant; where a paused process's commit would be accepted wrongly (the broken
    unfenced-commits), the mutant flags the paused state and the unchanged property the state its Resume (a free protocol
    step, always enabled, that changes only proc and woke, which the property does not read) reaches."""
    name = P + "commit_violation:drop-term#0"
    assert name in EQUIVALENT
    for job in [EAGER, STATIC]:
        assert verdicts(None, job) == verdicts(name, job), job
    job = ("unfenced-commits", 2, 2, 1, "zombie", 1)
    (before, edges), (after, _e) = verdicts(None, job), verdicts(name, job)
    assert set(before) == set(after)
    differ = [k for k in before if before[k] != after[k]]
    assert differ  # the instance reaches the changed rule
    resumed = {e[0]: e[2] for e in edges if e[1].startswith("Resume(")}
    for k in differ:
        assert before[k][0][1] and not after[k][0][1]  # only commit_fencing, only flagged by the mutant
        assert "Proc.PAUSED" in k and not before[resumed[k]][0][1], k  # ... and by the unchanged model after Resume


def test_cprops_a_member_owning_nothing_never_commits_wrongly_where_commits_are_fenced() -> None:
    """commit_violation:drop-term#2 (a member owning nothing counted as committing): with commits fenced an accepted
    commit comes from a live member of the group's generation, and an empty set has no stray or shared partition, so
    every correct variant's verdicts are the same; so are those of the broken unfenced-commits on its registered jobs."""
    name = P + "commit_violation:drop-term#2"
    assert name in EQUIVALENT
    for job in [EAGER, STATIC, DYN, ("unfenced-commits", 2, 2, 1, "zombie", 1), ("unfenced-commits", 1, 2, 1, "join,zombie", 1)]:
        assert verdicts(None, job) == verdicts(name, job), job
