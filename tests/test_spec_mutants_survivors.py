"""Checks added to kill the classic survivors of the spec-mutation campaign (issue 30; docs/specification.md,
"The fourth campaign's classic survivors"): each passes on the unchanged model and fails on the mutant it was
written for (its broken variant), so a weakened check fails here.
"""
from __future__ import annotations

import pytest

from groupspec.specmut import generate, run_one
from groupspec.specmut.campaign import baseline
from groupspec.specmut.kafka_walks import BIASED_WALK_JOBS, check
from groupspec.specmut.loader import applied


def _mutant(name: str):  # noqa: ANN202
    return next(m for m in generate() if m.name == name)


def test_parked_crash_walks_refute_expiring_an_old_parked_member():
    # Kafka keeps a member whose JoinGroup is parked (hasSatisfiedHeartbeat) although its process died; the mutant
    # expires it. The even walks never reach an *old* member parked and then crashed; the biased walks do.
    job = next(j for j in BIASED_WALK_JOBS if j[9] == "parked-crash")
    with applied(None):
        assert check(job) is None
    with applied(_mutant("classic.ClassicProtocol.successors:drop-term#16")):
        why = check(job)
    assert why is not None and "members (slots)" in why, why


@pytest.mark.parametrize("name, killer", [
    # PendingSyncExpired never fires: a static member replaced in a STABLE group before its old id synced leaves the
    # group waiting for ever (convergence), where Kafka's pending-sync timer rebalances it
    ("formation.FormationRules._formation_steps:timer-never#2", "model:static 2m×2p b3"),
    # a Connect worker drops its work at the poll-timeout reset: the duplicate Kafka's workers show (reproduced by
    # the reference) disappears
    ("formation.FormationRules._poll_timeout_leave:negate-guard#1", "model:connect-keep-work 2m×3p b2"),
])
def test_explorer_jobs_added_for_survivors_kill_them(name: str, killer: str):
    base = baseline(only=[killer], trace=False)
    assert base[killer].get("failure") is None and "error" not in base[killer]
    row = run_one(_mutant(name), base)
    assert row["status"] == "killed" and row["killer"] == killer, row
