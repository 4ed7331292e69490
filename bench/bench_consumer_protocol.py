"""Benchmark of the next-generation consumer protocol (KIP-848): checker, reference coordinator, uniform assignor.

Prints:
* the explicit-state checker's canonical states per CPU-second on the ``consumer`` variants (the compiled
  engine, at the issue's instance 4 members x 6 partitions with crash, timeout and zombie) and on the
  migration (``classic-to-consumer-acked``, 4 x 4), next to the classic ``cooperative`` variant on the same
  engine in the same run (the ratio), and the compiled engine against the reference (Python) explorer on
  smaller instances of both;
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


def _run(proto: str, bounds: tuple[int, int], faults: frozenset[str], engine: str) -> tuple[int, int, float, bool]:
    from groupspec.checker import check

    m, p = bounds
    c0 = time.process_time()
    _p, res = check(proto, assignor="sticky", members=m, partitions=p, faults=faults, engine=engine,
                    with_symmetry_factor=False)
    return res.states, res.edges, time.process_time() - c0, res.ok


def bench_checker(bounds: tuple[int, int], faults: str, classic: tuple[int, int], reference: tuple[int, int],
                  migration: tuple[int, int]) -> None:
    """The compiled engine on the consumer variants at ``bounds``, on the migration (``classic-to-consumer-acked``)
    at ``migration`` and on classic ``cooperative`` at ``classic`` (the same run: the ratio), and the reference
    (Python) explorer against it at ``reference``."""
    f = frozenset(x for x in faults.split(",") if x)
    c0 = time.process_time()
    _run("consumer", (2, 2), f, "compiled")  # compiles the consumer and migration engine (or loads numba's cache)
    _run("cooperative", (2, 2), f, "compiled")
    print(f"checker: compiling or loading both compiled engines: {time.process_time() - c0:.1f} CPU-s (not counted below)")
    rates = {}
    for proto, at in (("consumer", bounds), ("consumer-static", bounds), ("classic-to-consumer-acked", migration),
                      ("cooperative", classic)):
        states, edges, cpu, ok = _run(proto, at, f, "compiled")
        rates[proto] = states / cpu
        print(f"checker: {proto:25} {at[0]}m x {at[1]}p {faults}: {states:,} states, {edges:,} edges in {cpu:.1f} CPU-s "
              f"({rates[proto]:,.0f} states/CPU-s, compiled engine, ok={ok})")
    print(f"checker: consumer / cooperative (compiled engine, same run): {rates['consumer'] / rates['cooperative']:.2f}x "
          f"(target: consumer >= 50,000 states/CPU-s)")
    for proto in ("consumer", "classic-to-consumer-acked"):
        ref = {}
        for engine in ("python", "compiled"):
            states, _edges, cpu, _ok = _run(proto, reference, f, engine)
            ref[engine] = states / cpu
            print(f"checker: {proto} {reference[0]}m x {reference[1]}p {faults}: {states:,} states in {cpu:.2f} CPU-s "
                  f"({ref[engine]:,.0f} states/CPU-s, {engine} engine)")
        print(f"checker: compiled / python engine on {proto} (same run): {ref['compiled'] / ref['python']:.1f}x")


def bench_coordinator(members: int, partitions: int, rounds: int) -> None:
    from groupspec.reference.consumer import ConsumerGroupCoordinator, ReconcilingConsumer

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
        bench_checker((3, 4), "crash,timeout,zombie", (3, 4), (2, 3), (3, 3))
        bench_coordinator(50, 300, 20)
        bench_assignor(100_000, 200)
    else:
        bench_checker((4, 6), "crash,timeout,zombie", (4, 5), (3, 4), (4, 4))
        bench_coordinator(500, 3_000, 100)
        bench_assignor(1_000_000, 2_000)


if __name__ == "__main__":
    main()
