"""Checks added to kill the classic survivors of the spec-mutation campaign (issue 30; docs/specification.md,
"The fourth campaign's classic survivors"): each passes on the unchanged model and fails on the mutant it was
written for (its broken variant), so a weakened check fails here.
"""
from __future__ import annotations

from groupspec.specmut import generate
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
