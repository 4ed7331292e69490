"""Benchmark of the reference coordinator: golden-script replay and large-group rebalances.

Prints: lines/s replaying tests/replay/*.jsonl; for N dynamic members, the wall time of a full
rebalance (two-step joins, join completion, leader sync, follower syncs, one heartbeat round) and
of letting every session expire.
"""
from __future__ import annotations

import pathlib
import time

from groupspec.reference.classic import CoordinatorConfig, GroupCoordinator
from groupspec.reference.classic import HeartbeatRequest, JoinGroupRequest, SyncGroupRequest
from groupspec.reference.sim import run_script

ROOT = pathlib.Path(__file__).resolve().parents[1]


def bench_replay(rounds: int = 20) -> None:
    scripts = [p.read_text() for p in sorted((ROOT / "tests" / "replay").glob("*.jsonl"))]
    start = time.perf_counter()
    lines = 0
    for _ in range(rounds):
        for text in scripts:
            lines += len(run_script(text))
    elapsed = time.perf_counter() - start
    print(f"replay: {len(scripts)} scripts x {rounds} rounds, {lines} transcript lines in {elapsed:.2f}s "
          f"({lines / elapsed:,.0f} lines/s)")


def bench_group(n: int) -> None:
    c = GroupCoordinator(CoordinatorConfig(initial_rebalance_delay_ms=100))
    protos = (("range", b"subscription"),)
    start = time.perf_counter()
    now = 0
    ids = []
    for i in range(n):
        r = c.handle(now, i, JoinGroupRequest("g", "", "consumer", protos, 10000, 60000))[0].response
        c.handle(now, i, JoinGroupRequest("g", r.member_id, "consumer", protos, 10000, 60000))
        ids.append(r.member_id)
    out = c.advance(now + 1000)
    assert len(out) == n
    leader = next(o for o in out if o.response.members)
    gen = leader.response.generation_id
    c.handle(1000, leader.destination, SyncGroupRequest("g", leader.response.member_id, gen,
                                                        {m: b"a" for m in ids}))
    for i, m in enumerate(ids):
        c.handle(1001, i, SyncGroupRequest("g", m, gen))
    for i, m in enumerate(ids):
        c.handle(2000, i, HeartbeatRequest("g", m, gen))
    rebalance = time.perf_counter() - start
    view = c.group("g")
    assert view is not None and view.status.value == "Stable" and len(view.members) == n
    start = time.perf_counter()
    c.advance(100000)
    expiry = time.perf_counter() - start
    view = c.group("g")
    assert view is not None and view.status.value == "Empty"
    print(f"group of {n}: join+sync+heartbeat {rebalance:.3f}s ({3 * n / rebalance:,.0f} requests/s), "
          f"all sessions expire {expiry:.3f}s")


if __name__ == "__main__":
    bench_replay()
    for size in (10, 100, 1000):
        bench_group(size)
