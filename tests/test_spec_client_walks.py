"""The client checks of the spec-mutation campaign (groupspec/specmut/client_walks.py) on the families added last.

Each check passes on the unchanged model and fails on the mutant it was written to kill, with the divergence it
names: the rolling upgrade (members with two assignor lists, the protocol check and vote, ``upgraded``), the Connect
workers (groupspec/specmut/connect_walks.py: the reference ``ConnectWorker``, keeping its work across a reset as Kafka's
does); and the broken Connect variant that answers a weaker convergence predicate.
"""
from __future__ import annotations

import pytest

from groupspec.specmut.client_walks import CLIENT_WALK_JOBS
from groupspec.specmut.client_walks import check as client_check
from groupspec.specmut.connect_walks import CONNECT_WALK_JOBS
from groupspec.specmut.connect_walks import check as connect_check


def check(job):
    return (connect_check if job[0].startswith("connect") else client_check)(job)
from groupspec.specmut.loader import applied
from groupspec.specmut.operators import generate

UPGRADE_EXPLORED = ("eager-to-cooperative", "range", 2, 2, 1, "join,leave,crash,timeout,zombie", 1, 0, 0)
UPGRADE_WALKS = ("eager-to-cooperative", "range", 3, 3, 1, "join,leave,crash,timeout,zombie", 4, 300, 60)
KEEP_WORK_WALKS = ("connect-keep-work", "sticky", 3, 3, 1, "join,leave,crash,timeout,zombie,partitions", 6, 300, 50)
KEEP_WORK_EXPLORED = ("connect-keep-work", "sticky", 2, 2, 1, "join,leave,crash,timeout,zombie", 2, 0, 0)
DELAYED_EXPLORED = ("connect-delayed", "sticky", 2, 2, 1, "join,leave,crash,timeout,zombie,partitions", 2, 0, 0)

# (mutant, job, what the divergence says)
KILLS = [
    # a joining member checked against the lists of processes outside the group: Kafka's coordinator checks the
    # members' protocols only (an empty group takes any list)
    ("upgrade.EagerToCooperative._join:drop-guard#1", UPGRADE_EXPLORED, "stops (fenced); its client runs on"),
    # "the upgrade is over" with a member out of the group
    ("upgrade.upgraded:drop-term#2", UPGRADE_EXPLORED, "the model says the upgrade is over"),
    ("upgrade.upgraded:drop-term#2", UPGRADE_WALKS, "the model says the upgrade is over"),
    # a Connect worker that loses its work at a reset (Kafka's keeps running it: onJoinPrepare revokes nothing)
    ("connect_delayed.ConnectKeepWork._kept:skip-callback#0", KEEP_WORK_EXPLORED, "the model's member owns {}; its client"),
    ("connect_delayed.ConnectKeepWork._kept:negate-guard#0", KEEP_WORK_WALKS, "the model's member owns {}; its client"),
]


@pytest.mark.parametrize("job", [UPGRADE_EXPLORED, UPGRADE_WALKS, KEEP_WORK_WALKS, KEEP_WORK_EXPLORED, DELAYED_EXPLORED],
                         ids=lambda j: f"{j[0]}-{'walks' if j[7] else 'explored'}")
def test_the_check_is_registered_and_passes_on_the_unchanged_model(job):
    assert job in CLIENT_WALK_JOBS + CONNECT_WALK_JOBS
    assert check(job) is None


@pytest.mark.parametrize("name,job,says", KILLS, ids=[f"{n}@{j[0]}-{'walks' if j[7] else 'explored'}" for n, j, _s in KILLS])
def test_the_check_kills_its_mutant(name, job, says):
    mutant = next(m for m in generate([name.split(".", 1)[0]]) if m.name == name)
    with applied(mutant):
        why = check(job)
    assert why is not None and says in why, why
    assert check(job) is None  # the unchanged model is back


def test_a_broken_connect_variant_kills_the_weaker_convergence():
    """``connect-hold-outlives-group`` (model/broken.py) deadlocks with work held and every worker gone: the
    convergence property catches it only while ``converged`` counts held work as not converged."""
    from groupspec.specmut.killers import BROKEN_JOBS, Killer, _explore, judge

    job = ("connect-hold-outlives-group", "sticky", 2, 2, 1, "crash", 2)
    assert job in BROKEN_JOBS
    k = Killer("broken:connect-hold-outlives-group", "model", job[0], job)
    base = _explore(job)
    assert base["verdicts"]["convergence"] is False
    mutant = next(m for m in generate(["classic"]) if m.name == "classic.ClassicProtocol.converged:drop-term#4")
    with applied(mutant):
        got = _explore(job)
    assert judge(k, base, got) == "convergence no longer violated (the broken variant's own bug)"


@pytest.mark.parametrize("name,job", [
    # duplicate_work_settles made stricter (a worker counts as settled before it is STABLE): fails on the model
    ("connect_delayed._settled:drop-term#0", ("connect-keep-work", "sticky", 2, 3, 1, "timeout,leave", 1)),
    # ... made weaker (nobody is ever settled): connect-ignores-revocation's lingering duplicate goes unnoticed
    ("connect_delayed._settled:off-by-one#0", ("connect-ignores-revocation", "sticky", 2, 2, 1, "timeout,leave", 1)),
])
def test_the_connect_property_mutants_are_killed_by_an_exploration(name, job):
    from groupspec.specmut.killers import BROKEN_JOBS, EXPLORER_JOBS, Killer, _explore, judge

    assert job in EXPLORER_JOBS + BROKEN_JOBS
    k = Killer("model", "model", job[0], job)
    base = _explore(job)
    mutant = next(m for m in generate(["connect_delayed"]) if m.name == name)
    with applied(mutant):
        got = _explore(job)
    assert judge(k, base, got) is not None
