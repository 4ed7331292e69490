"""Benchmark: the explicit-state checker on cooperative rebalancing with faults, both engines.

Prints, per instance and engine: stored (canonical) states, edges, wall and CPU seconds, canonical
states per CPU-second, the symmetry reduction factor (concrete states per stored state), and the
compiled engine's speed-up over the reference (Python) explorer measured in the same run. Both engines
must agree on states, edges, verdicts and bound (the benchmark fails if they do not). CPU seconds are
reported because a shared machine's wall clock is noisy; on an idle machine the two agree.

The compiled engine is compiled (numba) on its first use and cached; the warm-up before the table
reports that one-off cost separately.

Targets (issue 2): at least 50,000 canonical states per second; cooperative 4 members x 6 partitions,
crash + timeout, explored exhaustively in under 5 minutes.

Usage: python bench/bench_explorer.py [--big] [--big-peer]
  --big       adds cooperative 4m x 6p crash,timeout budget 2 (2.4 M states) on the compiled engine
  --big-peer  also runs that instance on the Python explorer (about 6 minutes)
"""
from __future__ import annotations

import sys
import time

from groupspec.checker import check

CASES = [
    ("cooperative", 3, 3, {"crash", "timeout", "zombie", "leave"}, 2),
    ("cooperative", 3, 4, {"crash", "timeout", "zombie", "leave"}, 2),
    ("cooperative", 4, 4, {"crash", "timeout"}, 1),
]
BIG = ("cooperative", 4, 6, {"crash", "timeout"}, 2)


def run(case, engine: str, symmetry: bool = True):
    proto, m, p, faults, budget = case
    _proto, res = check(proto, members=m, partitions=p, faults=frozenset(faults), budget=budget, engine=engine,
                        with_symmetry_factor=symmetry)
    return res


def line(case, res) -> str:
    proto, m, p, faults, budget = case
    label = f"{proto} {m}m x {p}p {','.join(sorted(faults))} b{budget}"
    rate = res.states / res.cpu_seconds if res.cpu_seconds else 0.0
    sym = f"{res.symmetry_factor:.1f}x" if res.symmetry_factor else "-"
    return (f"{label:50} {res.engine:9} {res.states:>10,} {res.edges:>10,} {res.seconds:>8.2f} {res.cpu_seconds:>8.2f}"
            f" {rate:>13,.0f} {sym:>9}  ok={res.ok} bound={res.convergence_bound}")


def same(a, b) -> bool:
    return (a.states, a.edges, a.convergence_bound, {k: v.held for k, v in a.verdicts.items()}) == (
        b.states, b.edges, b.convergence_bound, {k: v.held for k, v in b.verdicts.items()})


def against_peer(case, fast) -> bool:
    """Run ``case`` on the Python explorer, print it and the speed-up; whether both engines agree."""
    ref = run(case, "python", symmetry=False)
    ref.symmetry_factor = fast.symmetry_factor
    print(line(case, ref))
    agree = same(fast, ref)
    print(f"{'':50} speed-up {ref.cpu_seconds / fast.cpu_seconds:.1f}x (CPU), engines agree: {agree}")
    return agree


def main() -> None:
    t0 = time.perf_counter()
    check("cooperative", members=2, partitions=2, engine="compiled", with_symmetry_factor=False)
    print(f"warm-up (numba compile or cache load): {time.perf_counter() - t0:.1f} s")
    print(f"{'instance':50} {'engine':9} {'states':>10} {'edges':>10} {'wall s':>8} {'cpu s':>8} {'states/cpu-s':>13} {'symmetry':>9}")
    failed = False
    for case in CASES:
        fast = run(case, "compiled")
        print(line(case, fast))
        failed |= not against_peer(case, fast)
    if "--big" in sys.argv or "--big-peer" in sys.argv:
        fast = run(BIG, "compiled")
        print(line(BIG, fast))
        print(f"{'':50} target: under 300 s -> {'met' if fast.seconds < 300 else 'NOT met'} ({fast.seconds:.1f} s wall)")
        if "--big-peer" in sys.argv:
            failed |= not against_peer(BIG, fast)
    if failed:
        raise SystemExit("the two engines disagree")


if __name__ == "__main__":
    main()
