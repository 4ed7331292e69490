"""The record layer (reference/sim/records.py): the ledger's counting, the commit strategies in runs,
and the commit_ahead mutant that the ledger must catch (records skipped)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from groupspec.reference.classic import ConsumerConfig
from groupspec.reference.sim import Ledger, RecordFlow, RecordsConfig, strategy_config, SimConfig, Simulator


def test_ledger_counts_duplicates_and_skips() -> None:
    led = Ledger()
    tp = ("t", 0)
    led.processed(tp, 0, 10, "a")
    led.processed(tp, 5, 12, "b")  # 5..9 processed twice
    led.processed(tp, 15, 20, "b")  # 12..14 never processed
    s = led.summary({tp: 30}, {tp: 20})
    assert s == {"records_produced": 30, "records_processed": 22, "records_processed_twice": 5, "records_skipped": 3}
    # committed past anything processed: those are skipped too
    assert led.summary({tp: 30}, {tp: 25})["records_skipped"] == 8


def test_unknown_strategy_is_refused() -> None:
    with pytest.raises(ValueError, match="commit strategy"):
        RecordsConfig(strategy="whenever")
    with pytest.raises(ValueError, match="commit strategy"):
        strategy_config(ConsumerConfig(), "whenever")


def _run(strategy: str, faults: frozenset[str] = frozenset(), crash: bool = False) -> dict[str, int]:
    sim = Simulator(SimConfig(seed=3, topics=(("t", 4),)))
    flow = RecordFlow(RecordsConfig(strategy=strategy, faults=faults))
    flow.attach(sim)
    base = ConsumerConfig(group_id="g", topics=("t",), assignors=("range",), session_timeout_ms=10000)
    for i, n in enumerate(("c1", "c2")):
        sim.at(i * 700, "start", n, config=strategy_config(replace(base, client_id=n), strategy))
    if crash:
        sim.at(20000, "crash", "c2")
    else:
        sim.at(20000, "close", "c2")
    sim.run_quietly_until(50000)
    return flow.summary()


@pytest.mark.parametrize("strategy", ["auto", "on-revoke", "sync", "async"])
def test_a_clean_leave_skips_nothing_and_processes_records(strategy: str) -> None:
    s = _run(strategy)
    assert s["records_processed"] > 500
    assert s["records_skipped"] == 0
    assert s["commits_accepted"] > 0


def test_a_crash_with_auto_commit_processes_records_twice() -> None:
    s = _run("auto", crash=True)
    assert s["records_processed_twice"] > 0 and s["records_skipped"] == 0


def test_sync_after_processing_loses_less_than_auto_on_a_crash() -> None:
    assert _run("sync", crash=True)["records_processed_twice"] < _run("auto", crash=True)["records_processed_twice"]


def test_mutant_commit_ahead_is_caught_as_skipped_records() -> None:
    assert _run("async", crash=True)["records_skipped"] == 0
    s = _run("async", frozenset({"commit_ahead"}), crash=True)
    assert s["records_skipped"] > 0


def test_runs_are_deterministic() -> None:
    assert _run("async", crash=True) == _run("async", crash=True)



class _AlwaysAsks(Simulator):
    """The simulator before its shortcut: after the hooks, the member's timer is always asked again."""

    def _after_consumer(self, p, sends, due):  # type: ignore[no-untyped-def]
        for hook in self.hooks:
            sends = sends + hook(self, p)
        for s in sends:
            self._send_request(p, s)
        if len(p.consumer.events) > p.seen_events:
            self._flush_events(p)
        nt = p.consumer.next_timer_ms()
        if nt is not None:
            self._wake((p.name, p.incarnation), max(nt, self.now), "tick", p.name, p.incarnation)


@pytest.mark.parametrize("strategy", ["auto", "sync", "async"])
def test_the_timer_is_asked_again_only_when_it_can_have_moved(strategy: str) -> None:
    """The simulator asks a member's timer again after the hooks only when one sent on its behalf (the record
    layer's commits): step for step the same run as a simulator that always asks. The coordinator becomes
    unreachable mid-run, so the record layer's commits are lost and their deadlines, earlier than the member's
    next heartbeat, are what its timer must wake it for; a simulator that never asks again keeps the timer from
    before the commit (mutant: fewer heartbeats, other commits)."""
    from groupspec.reference.sim import NetworkConfig

    def run(cls: type[Simulator]) -> tuple[list[tuple[int, str, str, str]], list[dict]]:
        sim = cls(SimConfig(seed=2, topics=(("t", 4),)))
        RecordFlow(RecordsConfig(strategy=strategy)).attach(sim)
        base = ConsumerConfig(group_id="g", topics=("t",), assignors=("range",), session_timeout_ms=10000,
                              heartbeat_interval_ms=3000, request_timeout_ms=500)
        for i, n in enumerate(("c1", "c2")):
            sim.at(i * 700, "start", n, config=strategy_config(replace(base, client_id=n), strategy))
        sim.at(10000, "network", None, config=NetworkConfig(loss=1.0))
        steps = [(r.time_ms, r.kind, r.actor, r.detail) for r in sim.run_until(20000)]
        return steps, sim.trace

    assert run(Simulator) == run(_AlwaysAsks)
