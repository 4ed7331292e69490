"""Conformance of the Connect workers with the model's connect-delayed variant (groupspec.conformance.connect).

Fixed scenarios on the harness: the hold shows in ``alpha`` (``held``/``held_for``) exactly while the
reference holds the departed worker's work, a worker that comes back in time gets nothing until the
scheduled rebalance, and the ``connect_hold`` check catches the leader that hands held work out at once
(the ``drop_connect_delay`` switch), where refinement alone cannot (the target is pinned and the model's
delay may expire at any moment).
"""
from __future__ import annotations

import pytest

from groupspec.conformance import ConformanceFailure, Harness, project
from groupspec.conformance.connect import CONNECT_DELAY_MS


def boot(h: Harness) -> None:
    for n in h.names:
        h.act("start", n, config=h.consumer_config(n))
        h.run_for(300)
    h.quiesce()


def test_items_are_partitions_connector_first() -> None:
    h = Harness("connect-delayed", seed=5)
    boot(h)
    assert h.cfg.partitions == h.max_partitions + 1  # the connector is one more work item
    assert h.state.group.partitions == 0b1111  # connector + 3 tasks
    owned = 0
    for c in h.state.clients:
        owned |= c.owned
    assert owned == 0b1111 and h.converged()


def test_a_bounce_within_the_delay_is_held_until_the_scheduled_rebalance() -> None:
    h = Harness("connect-delayed", seed=5)
    boot(h)
    c2 = h.state.group.records[1].assignment
    assert c2
    h.act("close", "c2")
    h.run_for(1500)
    g = h.state.group
    assert g.held == c2 and g.held_for == 1
    h.act("start", "c2")
    h.run_for(1500)  # back, in a new generation, still within the delay
    g = h.state.group
    assert g.records[1] is not None and g.records[1].assignment == 0 and g.held == c2
    h.run_for(CONNECT_DELAY_MS)
    h.quiesce()
    g = h.state.group
    assert g.held == 0 and g.records[1].assignment == c2  # given back to it at the scheduled rebalance
    assert any("scheduled rebalance" in r for r in h.connect.releases)
    assert h.model_steps > 20 and not h.gaps


def test_connect_hold_catches_a_leader_that_drops_the_delay() -> None:
    h = Harness("connect-delayed", seed=5, consumer_faults=("drop_connect_delay",))
    for n in h.names:
        h.act("start", n, config=h.consumer_config(n), faults=frozenset({"drop_connect_delay"}))
        h.run_for(300)
    h.quiesce()
    with pytest.raises(ConformanceFailure) as info:
        h.act("close", "c2")
        h.run_for(3000)
    assert info.value.check == "connect_hold"
    assert "before the delay was over" in str(info.value) and "<-- connect_hold" in str(info.value)


def test_held_work_is_part_of_the_refinement_projection() -> None:
    h = Harness("connect-delayed", seed=5)
    s = h.state
    from dataclasses import replace

    held = replace(s, group=replace(s.group, held=1, held_for=0))
    assert project(held) != project(s)
