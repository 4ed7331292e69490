"""Benchmark of the next-generation consumer protocol (KIP-848): checker, reference coordinator, uniform assignor.

Prints:
* the explicit-state checker's canonical states/s on the ``consumer`` variants, next to the classic
  ``cooperative`` variant explored by the same Python engine in the same run (the ratio);
* the reference ``ConsumerGroupHeartbeat`` coordinator's heartbeats per CPU-second, for a stable
  group (every member heartbeating with nothing to change) and while members join one by one;
* the uniform server-side assignor on 1,000,000 partitions x 2,000 members: a fresh target, and the
  target after one more member joins (sticky relative to the previous one), with the number of
  partitions that moved.

Targets (the issue's): checker >= 50,000 states/s, coordinator >= 50,000 heartbeats/CPU-s, assignor
<= 2 s fresh and <= 0.5 s after one join.
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def bench_checker(bounds: tuple[int, int], faults: str) -> None:
    from groupspec.checker import check

    m, p = bounds
    f = frozenset(x for x in faults.split(",") if x)
    rates = {}
    for proto in ("consumer", "consumer-static", "cooperative"):
        c0 = time.process_time()
        _p, res = check(proto, assignor="sticky", members=m, partitions=p, faults=f, engine="python",
                        with_symmetry_factor=False)
        cpu = time.process_time() - c0
        rates[proto] = res.states / cpu
        print(f"checker: {proto:16} {m}m x {p}p {faults}: {res.states:,} states in {cpu:.1f} CPU-s "
              f"({rates[proto]:,.0f} states/CPU-s, python engine, ok={res.ok})")
    print(f"checker: consumer / cooperative (python engine, same run): {rates['consumer'] / rates['cooperative']:.2f}x")


def bench_coordinator(members: int, partitions: int, rounds: int) -> None:
    from groupspec.reference.consumer_group import ConsumerGroupCoordinator
    from groupspec.reference.consumer_next import ReconcilingConsumer

    coord = ConsumerGroupCoordinator("g", {"t": partitions})
    clients = [ReconcilingConsumer(f"m{i:05d}", ["t"]) for i in range(members)]
    c0 = time.process_time()
    beats = 0
    for c in clients:  # members join one by one, each reconciling everyone after it joins
        c.on_heartbeat_response(coord.heartbeat(c.heartbeat_request()))
        beats += 1
    for _ in range(6):
        for c in clients:
            c.reconcile()
            c.on_heartbeat_response(coord.heartbeat(c.heartbeat_request()))
            beats += 1
    cpu = time.process_time() - c0
    print(f"coordinator: {members} members join and reconcile: {beats:,} heartbeats in {cpu:.2f} CPU-s "
          f"({beats / cpu:,.0f} heartbeats/CPU-s)")
    stable = all(m.state.value == "stable" for m in coord.members.values())
    c0 = time.process_time()
    beats = 0
    for _ in range(rounds):
        for c in clients:
            c.on_heartbeat_response(coord.heartbeat(c.heartbeat_request(), now=0))
            beats += 1
    cpu = time.process_time() - c0
    print(f"coordinator: stable group of {members} (all stable: {stable}): {beats:,} heartbeats in {cpu:.2f} CPU-s "
          f"({beats / cpu:,.0f} heartbeats/CPU-s)")


def bench_assignor(partitions: int, members: int) -> None:
    from groupspec.reference.assignors.server import uniform_homogeneous

    owners = {"t": np.full(partitions, -1, dtype=np.int32)}
    c0 = time.process_time()
    fresh = uniform_homogeneous(owners, members)
    t_fresh = time.process_time() - c0
    counts = np.bincount(fresh["t"], minlength=members)
    print(f"uniform assignor: fresh target, {partitions:,} partitions x {members:,} members: {t_fresh:.3f} CPU-s "
          f"(load {counts.min()}..{counts.max()})")
    c0 = time.process_time()
    after = uniform_homogeneous({"t": fresh["t"].copy()}, members + 1)
    t_join = time.process_time() - c0
    moved = int(np.count_nonzero(after["t"] != fresh["t"]))
    counts = np.bincount(after["t"], minlength=members + 1)
    print(f"uniform assignor: after one member joins: {t_join:.3f} CPU-s, {moved:,} partitions moved "
          f"(the minimum is {partitions // (members + 1):,}), load {counts.min()}..{counts.max()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller instances (a smoke run)")
    args = ap.parse_args()
    if args.quick:
        bench_checker((2, 3), "crash,timeout,zombie")
        bench_coordinator(50, 300, 20)
        bench_assignor(100_000, 200)
    else:
        bench_checker((3, 3), "crash,timeout,zombie")
        bench_coordinator(500, 3_000, 100)
        bench_assignor(1_000_000, 2_000)


if __name__ == "__main__":
    main()
