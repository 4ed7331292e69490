"""The consumer's poll timeout (``max.poll.interval.ms``): the model's ``PollTimeoutLeave`` (fault
``poll-timeout``, model/formation.py) against the reference.

Kafka's heartbeat thread (``AbstractCoordinator.HeartbeatThread``, running while the member is
COMPLETING_REBALANCE or STABLE) calls ``maybeLeaveGroup`` once the application has not polled for
``max.poll.interval.ms``: a dynamic member sends LeaveGroup, every member resets its member id and
generation, and the process runs on; its next poll reports its partitions lost and rejoins as a new member.

* the model's step itself (what it removes, what the process keeps, where it is enabled);
* the conformance harness matches the reference's poll-timeout leave with it (a stalled poll loop, every
  classic variant the randomized suite runs, and the schedule ``--hypothesis-seed=2692966313`` found);
* mutants of the step (absent; the partitions kept) fail that conformance check: the check compares the model
  with the reference, so a misreading of the rule is caught there (the harness no longer lets a close and a
  restart, ``LeaveGroup`` + ``Start``, stand for a LeaveGroup whose process runs on: ``Harness._runs_on``).
"""
from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from groupspec.conformance import ConformanceFailure, Harness, make_machine
from groupspec.conformance.refinement import REBALANCE_MS
from groupspec.model import Config, Id, MemberStatus as MS, Proc, make
from groupspec.model.cooperative import Cooperative
from groupspec.model.eager import Eager


# -- the model's step -----------------------------------------------------------------------------
def _stable(name: str, faults=("poll-timeout",), members: int = 1):  # type: ignore[no-untyped-def]
    proto = make(name, Config(members=members, partitions=2, faults=frozenset(faults), budget=1))
    s = proto.init_states()[0]
    while not proto.converged(s):
        s = next(t for a, t in proto.successors(s) if a.fair)
    return proto, s


@pytest.mark.parametrize("name", ["eager", "cooperative"])
def test_a_dynamic_member_leaves_resets_and_loses_its_partitions(name) -> None:  # type: ignore[no-untyped-def]
    proto, s = _stable(name)
    assert s.clients[0].owned
    t = next(t for a, t in proto.successors(s) if a.name == "PollTimeoutLeave")
    c = t.clients[0]
    assert t.group.records[0] is None and t.budget == s.budget - 1  # LeaveGroup sent; a perturbation
    assert c.proc == Proc.UP and c.id == Id.NONE and c.status == MS.UNJOINED and c.owned == 0 and c.inbox is None
    assert any(a.name == "SendJoinGroup" for a, _t in proto.successors(t))  # it rejoins at its next poll


def test_a_static_member_sends_no_leave_and_is_replaced_when_it_rejoins() -> None:
    proto, s = _stable("static")
    t = next(t for a, t in proto.successors(s) if a.name == "PollTimeoutLeave")
    assert t.group.records[0] is not None and t.clients[0].id == Id.NONE and t.clients[0].owned == 0
    u = next(u for a, u in proto.successors(t) if a.name == "SendJoinGroup")  # "" + instance id: replacement
    assert u.clients[0].id == Id.CURRENT and u.group.generation == s.group.generation


def test_the_step_needs_its_fault_and_a_joined_running_member() -> None:
    proto, s = _stable("cooperative", faults=("leave", "join"))
    assert all(a.name != "PollTimeoutLeave" for a, _t in proto.successors(s))
    proto, s = _stable("cooperative", faults=("poll-timeout", "zombie"))
    paused = next(t for a, t in proto.successors(s) if a.name == "Pause")
    assert all(a.name != "PollTimeoutLeave" for a, _t in proto.successors(paused))  # it resumes first
    fresh = proto.init_states()[0]
    assert all(a.name != "PollTimeoutLeave" for a, _t in proto.successors(fresh))  # never joined: no thread


# -- against the reference ----------------------------------------------------------------------
class NoPollTimeoutLeave(Cooperative):
    """Mutant: the step is absent (a close and a restart are all that is left)."""

    poll_timeout_faults = ()


class KeepsPartitions(Cooperative):
    """Mutant: the member keeps its partitions across the reset (no onPartitionsLost)."""

    def _poll_timeout_leave(self, s, i):  # type: ignore[no-untyped-def]
        t = super()._poll_timeout_leave(s, i)
        return self._with(t, clients=self._set(t.clients, i, replace(t.clients[i], owned=s.clients[i].owned)))


class EagerNoPollTimeoutLeave(Eager):
    poll_timeout_faults = ()


def _stall(h: Harness) -> None:
    for n in h.names:
        h.act("start", n, config=h.consumer_config(n))
        h.run_for(300)
    h.quiesce()
    h.act("stall", "c2", duration_ms=REBALANCE_MS + 2000)  # no poll; the heartbeat thread runs on
    h.run_for(REBALANCE_MS + 3000)
    h.quiesce()


@pytest.mark.parametrize("variant", ["eager-range", "cooperative-sticky", "static-range", "connect-delayed"])
def test_a_stalled_member_is_the_models_poll_timeout_leave(variant) -> None:  # type: ignore[no-untyped-def]
    h = Harness(variant, seed=5)
    _stall(h)
    steps = [line.action.text for line in h.timeline if line.action is not None and "PollTimeoutLeave" in line.action.text]
    # a dynamic member's at its LeaveGroup's delivery; a static member's (it sends nothing) at its reset
    assert steps and ("LeaveGroup from c2" in steps[0]) != variant.startswith("static"), steps
    assert h.converged() and not h.gaps


@pytest.mark.parametrize("variant,mutant", [("cooperative-sticky", NoPollTimeoutLeave), ("cooperative-sticky", KeepsPartitions),
                                            ("eager-range", EagerNoPollTimeoutLeave)])
def test_a_wrong_poll_timeout_step_fails_conformance(variant, mutant) -> None:  # type: ignore[no-untyped-def]
    h = Harness(variant, seed=5)
    h.proto = mutant(h.cfg)
    with pytest.raises(ConformanceFailure) as info:
        _stall(h)
    assert info.value.check == "refinement" and "LeaveGroup from c2  <-- refinement" in str(info.value)


def test_the_found_schedule_fails_without_the_step() -> None:
    """The schedule of ``--hypothesis-seed=2692966313`` (tests/conformance_regressions.json): c3's rejoin after
    its poll-timeout leave reaches the coordinator before the LeaveGroup. It passes (test_conformance.py) and
    fails on the model without the step."""
    regressions = json.loads((Path(__file__).parent / "conformance_regressions.json").read_text())
    r = next(x for x in regressions if x["name"] == "poll-timeout-rejoin-overtakes-its-leave")
    machine = make_machine(r["variant"], topics=r["topics"])()
    machine.boot(seed=r["seed"])
    machine.h.proto = NoPollTimeoutLeave(machine.h.cfg)
    with pytest.raises(ConformanceFailure) as info:
        for call in r["rules"]:
            rule, args = re.fullmatch(r"(\w+)\((.*)\)", call).groups()  # type: ignore[union-attr]
            kwargs = {k: (v.strip("'") if v.startswith("'") else int(v))
                      for k, v in (a.split("=") for a in args.split(", ") if a)}
            getattr(machine, rule)(**kwargs)
        machine.teardown()
    assert info.value.check == "refinement" and "LeaveGroup from c3  <-- refinement" in str(info.value)
