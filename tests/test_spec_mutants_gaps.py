"""The fifth campaign's gaps (issue 30; docs/specification.md, "The fifth campaign's gaps"): each check added for a
survivor passes on the unchanged model and kills the mutant it was written for, so a weakened check fails here; and
the two Connect mutants judged equivalent are shown to be so on every reachable state of a small instance (a model
change that makes them observable fails here, and the equivalence must be judged again).
"""
from __future__ import annotations

from collections import deque

import pytest

from groupspec.specmut import generate, run_one
from groupspec.specmut.campaign import baseline


def _mutant(name: str):  # noqa: ANN202
    return next(m for m in generate() if m.name == name)


@pytest.mark.parametrize("name, killer", [
    # a member that takes the generation its parked JoinGroup opens: caught only where the group changed without a new
    # generation, the branch the mutant skips
    ("properties.ClassicObservations.generation_violation:drop-term#10", "broken:eager-join-generation-ahead 2m×2p b0"),
    # a classic leader one partition short: a classic group that leaves a partition unassigned is not converged
    ("migration.ClassicToConsumer.converged:drop-guard#6", "broken:classic-to-consumer-short-assignment 2m×2p leave b1"),
    # running processes no longer crash: a crashed member that is never expired is no longer reached
    ("migration.ClassicToConsumer.successors:negate-guard#17", "broken:classic-to-consumer-crash-lingers 2m×2p crash b1"),
    # a crashed member's process restarted before its session expired, merged with its old member: the reference
    # keeps the old member (its old id) and the restarted process is a new one
    ("migration.ClassicToConsumer.successors:drop-term#11", "conformance:migration 1m×2p 100×30"),
    # the static leader notices a subscription widened by a restart without the partitions fault: Kafka's leader
    # watches partition counts only
    ("classic.ClassicProtocol.successors:drop-term#4", "client:static·range 2m×2p×2t b4 explored"),
])
def test_checks_added_for_the_gaps_kill_them(name: str, killer: str) -> None:
    base = baseline(only=[killer], trace=False)
    assert base[killer].get("failure") is None and "error" not in base[killer], base[killer]
    row = run_one(_mutant(name), base)
    assert row["status"] == "killed" and row["killer"] == killer, row


def test_connect_settled_mutants_change_no_verdict_on_any_reachable_state() -> None:
    # _settled:drop-term#1 (the generation conjunct) and #2 (the inbox conjunct): the three predicates agree on every
    # reachable state of connect-keep-work at 2 × 2, budget 2, every Connect fault and timer
    from groupspec.model import Config, make
    from groupspec.model.core import MemberStatus as MS

    faults = "join,leave,crash,timeout,zombie,partitions,poll-timeout,initial-delay,two-step-join,sync-timeout,late-expiry"
    proto = make("connect-keep-work", Config(members=2, partitions=2, budget=2, assignor="sticky",
                                             faults=frozenset(faults.split(","))))
    seen = set(proto.init_states())
    todo = deque(seen)
    while todo:
        s = todo.popleft()
        for i, _owned in proto.live_ownership(s):
            c = s.clients[i]
            if c.status == MS.STABLE:  # a live STABLE worker: in the group's generation, no answer on its way
                assert c.generation == s.group.generation and c.inbox is None, (i, s)
        for _a, t in proto.successors(s):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    assert len(seen) > 1000  # the instance was explored, not just its initial state
