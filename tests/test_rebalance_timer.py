"""The rebalance timer: free when nobody who has not rejoined can, a budgeted perturbation when it overtakes
a running member (``RebalanceTimeoutOvertakes``, the ``timeout`` fault; model/classic.py, docs/scale.md).

The same rule in the three engines: the model, the compiled kernel and the bounded Z3 encoding.
"""
from __future__ import annotations

from dataclasses import replace

import pytest

from groupspec.checker import Explorer
from groupspec.checker.compiled import Kernel
from groupspec.model import Config, make
from groupspec.model.core import GroupStatus as GS, Proc
from groupspec.proofs.drift import check_state
from groupspec.proofs.finite import Encoding


def _straggler_state(faults: str, budget: int = 1):  # type: ignore[no-untyped-def]
    """A reachable join phase of a static-cooperative 3-member group: c1 rejoined, c2 running and not
    rejoined yet, c3 crashed (not rejoined)."""
    proto = make("static-cooperative", Config(members=3, partitions=2, faults=frozenset(faults.split(",")),
                                              budget=budget))
    ex = Explorer(make("static-cooperative", Config(members=3, partitions=2, faults=frozenset({"crash"}),
                                                    budget=1)), max_states=20_000)
    ex.run()
    for s in ex._states:
        g = s.group
        if g.status != GS.PREPARING_REBALANCE or g.forming:
            continue
        recs = g.records
        if all(r is not None for r in recs) and recs[0].joined and not recs[1].joined and not recs[2].joined \
                and proto.alive(s, 1) and s.clients[2].proc == Proc.DOWN:
            return proto, replace(s, budget=budget)
    raise AssertionError("no such state reached")


def _names(proto, s):  # type: ignore[no-untyped-def]
    return [a.name for a, _t in proto.successors(s)]


def test_the_timer_does_not_overtake_a_running_member_for_free() -> None:
    proto, s = _straggler_state("crash")
    assert "RebalanceTimeout" not in _names(proto, s)
    assert "RebalanceTimeoutOvertakes" not in _names(proto, s)  # not without the timeout fault


def test_overtaking_a_running_member_costs_one_unit_of_the_timeout_budget() -> None:
    proto, s = _straggler_state("crash,timeout")
    steps = [(a, t) for a, t in proto.successors(s) if a.name.startswith("RebalanceTimeout")]
    assert [a.name for a, _t in steps] == ["RebalanceTimeoutOvertakes"]
    (a, t), = steps
    assert not a.fair and a.fault == "timeout"
    assert t.budget == s.budget - 1 and t.group.status == GS.COMPLETING_REBALANCE
    assert t.group.records[1] is not None and not t.group.records[1].joined  # static: kept, a generation behind
    assert "RebalanceTimeoutOvertakes" not in _names(proto, replace(s, budget=0))


def test_the_timer_is_free_once_nobody_who_has_not_rejoined_can() -> None:
    proto, s = _straggler_state("crash,timeout")
    paused = replace(s, clients=tuple(replace(c, proc=Proc.PAUSED) if i == 1 else c for i, c in enumerate(s.clients)))
    names = _names(proto, paused)
    assert "RebalanceTimeout" in names and "RebalanceTimeoutOvertakes" not in names
    t = next(t for a, t in proto.successors(paused) if a.name == "RebalanceTimeout")
    assert t.budget == s.budget


@pytest.mark.parametrize("faults", ["crash", "crash,timeout"])
@pytest.mark.parametrize("budget", [0, 1])
def test_the_compiled_kernel_and_the_z3_encoding_take_the_same_timer_steps(faults: str, budget: int) -> None:
    proto, s = _straggler_state(faults, budget)
    paused = replace(s, clients=tuple(replace(c, proc=Proc.PAUSED) if i == 1 else c for i, c in enumerate(s.clients)))
    kn = Kernel(proto)
    enc = Encoding(proto)
    for state in (s, paused):
        assert kn.successors(state) == list(proto.successors(state))
        assert check_state(proto, enc, state) == []
