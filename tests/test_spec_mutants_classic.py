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
from typing import Any

import pytest

from groupspec.specmut import generate, run_one
from groupspec.specmut.campaign import baseline
from groupspec.specmut.equivalent import EQUIVALENT
from groupspec.specmut.loader import applied
from spec_graphs import instance, mutant as _mutant, reachable as _states

C = "classic.ClassicProtocol."


def _proto(*job: Any) -> Any:
    return instance(*job, assignor="sticky")


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


# --- the rolling upgrade's survivors (docs/specification.md, "Classic survivors: cupgrade") -------------------------
U = "upgrade.EagerToCooperative."
ONE_BOUNCE = ("upgrade-one-bounce", 2, 2, 2, "", 0)  # the broken variant whose leader runs the validation


@pytest.mark.parametrize("name, killer, detail", [
    # the range generation's leader: its client's SyncGroup (Kafka's range) must carry the model's target
    (U + "group_assignor:negate-guard#0", "client:eager-to-cooperative·range 3m×3p 300×60", "Kafka's leader"),
    # upgrade-one-bounce at 2 x 2: validateCooperativeAssignment is what keeps one owner per partition there
    (U + "_receive_join:off-by-one#0", "broken:upgrade-one-bounce 2m×2p b0", "exclusive_ownership violated"),
    (U + "_receive_join:negate-guard#1", "broken:upgrade-one-bounce 2m×2p b0", "raised AttributeError"),
    (U + "_receive_join:drop-guard#1", "broken:upgrade-one-bounce 2m×2p b0", "raised AttributeError"),
    # upgrade-one-bounce at 3 x 1: two owners through an eager leader, which Kafka does not validate
    (U + "_receive_join:drop-term#2", "broken:upgrade-one-bounce 3m×1p b0", "exclusive_ownership no longer violated"),
    # upgrade-one-bounce mirrored by Kafka's client (its range declaring COOPERATIVE support): only the leader validates,
    # and it stops only when a partition is added to one member while revoked from another
    (U + "_receive_join:drop-term#1", "client:upgrade-one-bounce·range 2m×2p b0 explored", "its client runs on"),
    (U + "_receive_join:negate-guard#2", "client:upgrade-one-bounce·range 2m×2p b0 explored", "its client runs on"),
    (U + "_receive_join:drop-guard#2", "client:upgrade-one-bounce·range 2m×2p b0 explored", "its client runs on"),
])
def test_upgrade_survivors_are_killed(name: str, killer: str, detail: str) -> None:
    assert name not in EQUIVALENT
    base = baseline(only=[killer], trace=False)
    assert base[killer].get("failure") is None and "error" not in base[killer], base[killer]
    if killer == "broken:upgrade-one-bounce 2m×2p b0":
        assert base[killer]["verdicts"]["exclusive_ownership"] is True  # the validation holds the broken mix safe
    row = run_one(_mutant(name), base)
    assert row["status"] == "killed" and row["killer"] == killer and detail in row["detail"], row


UPGRADE_CASES = [
    (U + "_join:drop-guard#0", [UPGRADE]),
    (U + "_join:drop-term#1", [UPGRADE]),
    (U + "_join:drop-term#2", [UPGRADE]),
    # the validation's guard: never entered where a member is COOPERATIVE only with cooperative-sticky alone, and in the
    # broken variant that enters it these terms are implied by the others
    (U + "_receive_join:drop-term#3", [UPGRADE, ONE_BOUNCE]),
    (U + "_receive_join:drop-term#4", [UPGRADE, ONE_BOUNCE]),
    (U + "_receive_join:drop-term#6", [UPGRADE, ONE_BOUNCE]),
    (U + "_receive_join:drop-term#7", [UPGRADE, ONE_BOUNCE]),
    (U + "_keep_config:drop-guard#1", [UPGRADE]),
    # the property cooperative_assignor (compared on every state by observed, with the other safety properties)
    ("upgrade.cooperative_assignor:drop-term#0", [UPGRADE]),
    ("upgrade.cooperative_assignor:drop-term#1", [UPGRADE]),
    ("upgrade.cooperative_assignor:drop-term#2", [UPGRADE]),
]


@pytest.mark.parametrize("name, jobs", UPGRADE_CASES, ids=[c[0] for c in UPGRADE_CASES])
def test_equivalent_upgrade_survivors(name: str, jobs: list[tuple[Any, ...]]) -> None:
    test_equivalent_survivors_leave_the_reachable_graph_as_it_was(name, jobs)


def _upgraded_on(name: str | None, job: tuple[Any, ...]) -> dict[str, bool]:
    with applied(_mutant(name) if name else None):
        from groupspec.model import upgraded

        proto = _proto(*job)
        return {repr(s): upgraded(proto, s) for s in _states(proto)}


def test_upgraded_without_the_protocol_term_is_the_same_predicate() -> None:
    """upgraded:drop-term#1: on every reachable state the predicate (which the client walks read) is unchanged, and
    the upgrade is over on some of them."""
    name = "upgrade.upgraded:drop-term#1"
    assert name in EQUIVALENT
    before, after = _upgraded_on(None, UPGRADE), _upgraded_on(name, UPGRADE)
    assert before == after and any(before.values()), UPGRADE


# --- the join phase's survivors (docs/specification.md, "Classic survivors: cjoin") ----------------------------------
J = "join_phase.JoinPhase."
DELAYED = ("connect-delayed", 2, 2, 1, f"{ALL},partitions", 2)
TWO_STEP = ("cooperative", 2, 2, 1, "join,crash,timeout,two-step-join", 2)  # only pending ids left to join: the timer
TWO_STEP_EAGER = ("eager", 2, 2, 1, "join,leave,zombie,two-step-join,timeout", 2)
GRAPH_CASES_CJOIN = [
    # a process that is down holds no member id (a crash, a close, a fence reset it): the guard is implied
    (J + "_prepare_rebalance:drop-term#2", [EAGER, DYN, STATIC, CONNECT]),
    (J + "_complete_join:drop-term#7", [EAGER, DYN, STATIC, CONNECT]),
    # where the coordinator does not assign, every stored assignment is empty while COMPLETING_REBALANCE
    (J + "_remove:drop-term#2", [CONNECT, DELAYED]),
    # clearing a flag that is already clear; a mask with no bit held back: the same state
    (J + "_remove:drop-guard#1", [DYN, STATIC]),
    (J + "_complete_join:drop-guard#6", [DYN, STATIC]),
    (J + "compute_target:drop-guard#0", [EAGER, DYN, DELAYED]),
    # a record whose JoinGroup is parked exists only while the group is PREPARING_REBALANCE
    (J + "_remove:drop-term#4", [EAGER, DYN, STATIC, CONNECT]),
]


@pytest.mark.parametrize("name, jobs", GRAPH_CASES_CJOIN, ids=[c[0] for c in GRAPH_CASES_CJOIN])
def test_equivalent_join_phase_survivors(name: str, jobs: list[tuple[Any, ...]]) -> None:
    test_equivalent_survivors_leave_the_reachable_graph_as_it_was(name, jobs)


def join_phase_graph(name: str | None, job: tuple[Any, ...], cut_name: str) -> tuple[dict[str, Any], set[tuple[str, ...]]]:
    """``observed`` seen through a cut: every reachable state (cut) with what the properties read there, and every
    changing step (cut), labelled, with what the action properties read on it."""
    with applied(_mutant(name) if name else None):
        from groupspec.model import Id, Proc

        proto = _proto(*job)
        members = job[1]

        def cut(s: Any) -> str:
            if cut_name == "down-id":  # the member id a process that is down holds (it starts afresh without one)
                return repr(s.but(clients=tuple(c.but(id=Id.NONE) if c.proc == Proc.DOWN else c for c in s.clients)))
            if cut_name == "held-for":  # whom the hold is for, while nothing is held
                return repr(s if s.group.held else s.but(group=s.group.but(held_for=-1)))
            assert cut_name == "budget"
            return repr(s.but(budget=0))

        obs: dict[str, Any] = {}
        edges: set[tuple[str, ...]] = set()
        for s in _states(proto):
            v = (tuple(p.check(proto, s) for p in proto.safety_properties()), proto.converged(s),
                 tuple(proto.live_member(s, i) for i in range(members)))
            assert obs.setdefault(cut(s), v) == v  # the cut leaves out nothing a property reads
            for a, t in proto.successors(s):
                if cut(t) != cut(s):
                    edges.add((cut(s), repr(a), cut(t), tuple(p.check(proto, s, t) for p in proto.action_properties())))
        return obs, edges


JOIN_CUT_CASES = [
    # a dynamic member dropped by the rebalance timer while its process is down: the mutant marks its id stale; a
    # process that is down sends nothing, and its next start is a fresh process without a member id
    (J + "_complete_join:drop-guard#1", "down-id", [EAGER, DYN, CONNECT]),
    # a departed worker with nothing assigned held back for: nothing is held, and the next hold names its own worker
    (J + "_complete_join:drop-term#4", "held-for", [CONNECT, DELAYED]),
]


@pytest.mark.parametrize("name, cut_name, jobs", JOIN_CUT_CASES, ids=[c[0] for c in JOIN_CUT_CASES])
def test_equivalent_join_phase_survivors_up_to_a_cut(name: str, cut_name: str, jobs: list[tuple[Any, ...]]) -> None:
    assert name in EQUIVALENT
    for job in jobs:
        before, after = join_phase_graph(None, job, cut_name), join_phase_graph(name, job, cut_name)
        assert len(before[0]) > 100, job
        assert before == after, (name, job)


TIMER_CASES = [
    # the rebalance timer with only pending member ids (KIP-394) left to join: the join phase completes as it does
    # when the pending id's process sends its first JoinGroup after the last member's (free, or spending the budget)
    (J + "_rebalance_timer:drop-term#4", "", "RebalanceTimeout", [TWO_STEP, TWO_STEP_EAGER]),
    (J + "_rebalance_timer:drop-term#6", "budget", "RebalanceTimeoutOvertakes", [TWO_STEP, TWO_STEP_EAGER]),
]


@pytest.mark.parametrize("name, cut_name, action, jobs", TIMER_CASES, ids=[c[0] for c in TIMER_CASES])
def test_rebalance_timer_survivors_add_only_shortcuts(name: str, cut_name: str, action: str,
                                                      jobs: list[tuple[Any, ...]]) -> None:
    """The mutant reaches the same states (seen through the cut), with the same property verdicts; it adds only
    steps of the rebalance timer (each bumps the generation: no cycle) between states reachable anyway, each passing
    the action properties."""
    assert name in EQUIVALENT
    for job in jobs:
        before = join_phase_graph(None, job, cut_name) if cut_name else observed(None, job)
        after = join_phase_graph(name, job, cut_name) if cut_name else observed(name, job)
        assert len(before[0]) > 100, job
        assert before[0] == after[0] and before[1] <= after[1], (name, job)
        added = after[1] - before[1]
        assert added, job  # the instance reaches the changed rule
        assert all(e[1] == action + "()" and all(v is None for v in e[3]) for e in added), (name, job)


def test_held_work_given_out_at_once_is_killed_by_a_broken_variant() -> None:
    """compute_target:negate-guard#0 (Connect's held work handed out in the round after the departure): the broken
    variant whose workers never rejoin for released work (no scheduled rebalance) then converges; on the unchanged
    model it does not (the work released after the round that held it back is never handed out)."""
    name, killer = J + "compute_target:negate-guard#0", "broken:connect-no-scheduled-rebalance 2m×2p crash b1"
    assert name not in EQUIVALENT
    base = baseline(only=[killer], trace=False)
    assert base[killer].get("failure") is None and "error" not in base[killer], base[killer]
    assert base[killer]["verdicts"]["convergence"] is False
    row = run_one(_mutant(name), base)
    assert row["status"] == "killed" and row["killer"] == killer, row


def test_session_kept_running_after_the_join_completion_is_killed_by_a_kafka_walk() -> None:
    """_complete_join:negate-guard#7 (a resumed member's woke flag kept across the join completion: its session may
    run out right after it): the Kafka walks now hold a running member's late expiry to Kafka's join completions since
    its resume (each restarts every member's session timer). The walk that tells the mutant apart passes on the
    unchanged model; the killer is the campaign's static Kafka walk job with late-expiry (the eager one's walk 127
    tells it apart too)."""
    from groupspec.specmut.kafka_walks import Divergence, WALK_JOBS, run_walks
    from groupspec.specmut.killers import killers

    name, killer = J + "_complete_join:negate-guard#7", "kafka:static·sticky 3m×2p 300×40"
    assert name not in EQUIVALENT
    job = next(k.job for k in killers() if k.name == killer)
    assert job in WALK_JOBS and "late-expiry" in job[5]
    walk = frozenset({10})  # (seeded on its own: the same walk every run)
    assert run_walks(*job, only=walk) is None
    with applied(_mutant(name)):
        with pytest.raises(Divergence, match="restarts every member's session timer"):
            run_walks(*job, only=walk)


# --- cform: the formation and timer rules (model/formation.py) and the snapshot leader (model/static_leader.py) --------
F = "formation.FormationRules."
S = "static_leader.StaticLeaderSnapshot."
STATIC_PENDING = ("static", "sticky", 3, 2, 1, "join,crash,sync-timeout,two-step-join", 6, 110, 25)
STATIC_POLL = ("static", "sticky", 3, 2, 1, "join,crash,sync-timeout,poll-timeout", 6, 30, 40)
WOKE_PARKED = ("eager", "sticky", 3, 2, 1, "join,zombie,late-expiry", 6, 140, 40)
SNAPSHOT_WALKS = ("static-leader-snapshot", "range", 3, 3, 2, "join,crash,timeout,zombie,partitions", 6, 300, 50)
SNAPSHOT_EXPLORED = ("static-leader-snapshot", "range", 2, 2, 1, "join,crash,partitions", 4, 0, 0)
FORMATION_KILLS = [
    # (mutant, kind, job, the walk that reaches the rule (None: explored), what the divergence says)
    # Kafka never answers a static member MEMBER_ID_REQUIRED, two-step-join selected or not
    (F + "_formation_init:drop-term#1", "kafka", STATIC_PENDING, 0, "MEMBER_ID_REQUIRED"),
    # a static member replaced before it synced while another follower has not synced either: Kafka's pending-sync
    # timer removes that follower too (PendingSyncExpired is for the replaced id alone)
    (F + "_formation_steps:drop-term#7", "kafka", STATIC_PENDING, 109, "members (slots)"),
    # a static member's poll timeout sends no LeaveGroup: Kafka keeps its record for the replacement
    (F + "_poll_timeout_leave:drop-term#2", "kafka", STATIC_POLL, 3, "answers"),
    # Kafka never expires a member whose SyncGroup (drop-term#2) or JoinGroup (drop-term#3) is parked
    (F + "_late_expirable:drop-term#2", "kafka", WOKE_PARKED, 136, "SessionExpired"),
    (F + "_late_expirable:drop-term#3", "kafka", WOKE_PARKED, 65, "SessionExpired"),
    # ... and expires a resumed member whose session ran out and none of whose requests is parked, joined or not
    (F + "_late_expirable:drop-term#5", "kafka", WOKE_PARKED, 2, "the model cannot expire it"),
    # the snapshot leader's client notices a partition added since it assigned; the model's leader must be able to
    (S + "_complete_join:negate-guard#0", "client", SNAPSHOT_WALKS, 3, "cannot notice it"),
    # a follower's restart in a STABLE group renews no snapshot (only a replaced leader's skipAssignment does)
    (S + "_static_replace:drop-term#1", "client", SNAPSHOT_EXPLORED, None, "cannot notice it"),
]


@pytest.mark.parametrize("name, kind, job, walk, says", FORMATION_KILLS, ids=[c[0] for c in FORMATION_KILLS])
def test_formation_checks_kill_their_survivors(name: str, kind: str, job: tuple[Any, ...], walk: int | None,
                                               says: str) -> None:
    """The walk that reaches the rule passes on the unchanged model and fails on the mutant (the registered job)."""
    from groupspec.specmut.killers import FORMATION_WALK_JOBS, GAP_CLIENT_JOBS, killers

    assert name not in EQUIVALENT
    if kind == "kafka":
        from groupspec.specmut.kafka_walks import check
        assert job in FORMATION_WALK_JOBS
    else:
        from groupspec.specmut.client_walks import CLIENT_WALK_JOBS
        from groupspec.specmut.client_walks import check  # type: ignore[assignment]  # (the same signature)
        assert job in CLIENT_WALK_JOBS + GAP_CLIENT_JOBS
    assert any(k.kind == kind and k.job == job for k in killers())
    only = None if walk is None else frozenset({walk})
    assert check(job, only) is None
    with applied(_mutant(name)):
        why = check(job, only)
    assert why is not None and says in why, why


PENDING = ("eager", 2, 2, 1, "join,leave,crash,zombie,two-step-join,initial-delay", 2)
PENDING_COOP = ("cooperative", 2, 2, 1, "join,leave,crash,timeout,two-step-join,sync-timeout", 2)
POLL = ("cooperative", 2, 2, 1, "join,leave,crash,zombie,poll-timeout,late-expiry", 2)
POLL_STATIC = ("static", 2, 2, 1, "join,crash,zombie,poll-timeout,late-expiry,sync-timeout", 2)
POLL_CONNECT = ("connect-keep-work", 2, 2, 1, "join,leave,crash,poll-timeout", 2)
GRAPH_CASES_CFORM = [
    # a pending id is dropped only when its process is down or its holder left: a JoinGroup with Id.PENDING always
    # finds the bit set (the unknown-pending branch is never taken)
    (F + "_pending_unknown:drop-guard#0", [PENDING, PENDING_COOP]),
    (F + "_pending_unknown:keep-id#0", [PENDING, PENDING_COOP]),
    # the loop below tests each slot's bit anyway
    (F + "_formation_steps:timer-early#1", [PENDING, PENDING_COOP]),
    # a slot without the bit: g.pending is unchanged, so the step is a stutter (dropped: no property reads it)
    (F + "_formation_steps:drop-term#0", [PENDING, PENDING_COOP]),
    # a slot whose bit is set holds Id.PENDING while running, or its process is down (Id.NONE)
    (F + "_formation_steps:drop-term#2", [PENDING, PENDING_COOP]),
    (F + "_formation_steps:drop-term#3", [PENDING, PENDING_COOP]),
    # a joined process (COMPLETING_REBALANCE, STABLE) holds its current or a stale id, never none or a pending one
    (F + "_poll_timeout_steps:drop-term#2", [POLL, POLL_STATIC]),
    # a dynamic process whose id went stale has no record (its slot's record is its own); Id.CURRENT has its record
    (F + "_poll_timeout_leave:drop-term#0", [POLL, POLL_STATIC, POLL_CONNECT]),
    (F + "_poll_timeout_leave:drop-term#1", [POLL, POLL_STATIC]),
    # its only caller asks c.woke first
    (F + "_late_expirable:drop-term#0", [POLL, POLL_STATIC]),
    # a record is joined only in PREPARING_REBALANCE (a completion clears it; a JoinGroup outside prepares one)
    (F + "_late_expirable:drop-term#4", [POLL, POLL_STATIC]),
]


@pytest.mark.parametrize("name, jobs", GRAPH_CASES_CFORM, ids=[c[0] for c in GRAPH_CASES_CFORM])
def test_equivalent_formation_survivors(name: str, jobs: list[tuple[Any, ...]]) -> None:
    test_equivalent_survivors_leave_the_reachable_graph_as_it_was(name, jobs)


# a fault's selection left out: with the fault selected (or, where the variant has no such fault, with the faults the
# checks select for it), the mutant is the unchanged model
SELECTION_CASES_CFORM = [
    (F + "_formation_steps:drop-term#8", [("eager", 2, 2, 1, "join,crash,two-step-join,sync-timeout", 2), PENDING_COOP]),
    (F + "_formation_init:drop-term#3",
     [("coordinator-assigns", 2, 2, 1, "join,crash,zombie,initial-delay,two-step-join,late-expiry,poll-timeout", 2)]),
]


@pytest.mark.parametrize("name, jobs", SELECTION_CASES_CFORM, ids=[c[0] for c in SELECTION_CASES_CFORM])
def test_formation_fault_selection_left_out(name: str, jobs: list[tuple[Any, ...]]) -> None:
    test_equivalent_survivors_leave_the_reachable_graph_as_it_was(name, jobs)


def test_poll_timeout_of_a_paused_process_is_a_shortcut() -> None:
    """_poll_timeout_steps:drop-term#1: a paused joined process may miss its poll timeout without resuming first; the
    step lands where Resume then PollTimeoutLeave lands (the reset process is a fresh running one either way)."""
    test_equivalent_up_to_shortcuts_between_reachable_states(
        F + "_poll_timeout_steps:drop-term#1", "PollTimeoutLeave",
        [("static", 2, 2, 1, "join,crash,zombie,poll-timeout", 2), ("cooperative", 2, 2, 1, "join,zombie,poll-timeout,late-expiry", 2)])


def _budget_graph(name: str | None, job: tuple[Any, ...], floor: int) -> tuple[set[Any], set[tuple[str, str]]]:
    """The reachable states and changing steps with the budget projected away (as cut_graph's "budget"), states whose
    budget is below ``floor`` not expanded (the mutant overdraws the budget without bound)."""
    with applied(_mutant(name) if name else None):
        proto = _proto(*job)
        seen = {repr(s) for s in proto.init_states()}
        todo = deque(proto.init_states())
        states, edges = set(), set()
        while todo:
            s = todo.popleft()
            cut = repr(s.but(budget=0))
            states.add((cut, tuple(p.check(proto, s) for p in proto.safety_properties()), proto.converged(s)))
            if s.budget < floor:
                continue
            for _a, t in proto.successors(s):
                if repr(t.but(budget=0)) != cut:
                    edges.add((cut, repr(t.but(budget=0))))
                if repr(t) not in seen:
                    seen.add(repr(t))
                    todo.append(t)
        return states, edges


def test_sync_timeout_past_the_budget_lies_between_budgets() -> None:
    """_formation_steps:drop-term#9: SyncTimeout no longer needs budget left (it overdraws it, again at every slow
    member met): with the budget projected away, the mutant's graph explored down to one overdraw lies between the
    unchanged model's at b and at b + 1."""
    name = F + "_formation_steps:drop-term#9"
    assert name in EQUIVALENT
    for variant, b in [("eager", 1), ("static", 1)]:
        job = (variant, 2, 2, 1, "join,crash,sync-timeout", b)
        lo, mid = _budget_graph(None, job, 0), _budget_graph(name, job, 0)
        hi = _budget_graph(None, job[:-1] + (b + 1,), 0)
        assert lo[0] < mid[0] <= hi[0] and lo[1] < mid[1] <= hi[1], job


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


def property_verdicts(name: str | None, job: tuple[Any, ...]) -> tuple[dict[str, Any], set[tuple[str, ...]]]:
    """As ``observed``, but only whether each property holds (not its explanation), on states and changing steps."""
    obs, edges = observed(name, job)
    return ({k: (tuple(w is None for w in v[0]),) + v[1:] for k, v in obs.items()},
            {e[:3] + (tuple(w is None for w in e[3]),) for e in edges})


CPROPS_CASES = [
    # whom the explanation names (a ghost or the member): the verdict is decided before (static: ghosts; the broken
    # unfenced-commits: the explanation written)
    (P + "commit_violation:negate-guard#3", property_verdicts, [STATIC, ("unfenced-commits", 2, 2, 1, "zombie", 1)]),
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
        assert property_verdicts(None, job) == property_verdicts(name, job), job
    job = ("unfenced-commits", 2, 2, 1, "zombie", 1)
    (before, edges), (after, _e) = property_verdicts(None, job), property_verdicts(name, job)
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
        assert property_verdicts(None, job) == property_verdicts(name, job), job
