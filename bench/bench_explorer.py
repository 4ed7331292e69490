"""Benchmark: the explicit-state checker on cooperative rebalancing with faults.

Prints, per instance: stored (canonical) states, edges, wall and CPU seconds, canonical states per
CPU-second, and the symmetry reduction factor (concrete states per stored state). CPU seconds are
reported because a shared machine's wall clock is noisy; on an idle machine the two agree.

Usage: python bench/bench_explorer.py [--big]   (--big adds 4 members x 6 partitions, crash+timeout)
"""
from __future__ import annotations

import sys

from groupspec.explorer import check

CASES = [
    ("cooperative", 3, 3, {"crash", "timeout", "zombie", "leave"}, 2),
    ("cooperative", 3, 4, {"crash", "timeout", "zombie", "leave"}, 2),
    ("cooperative", 4, 4, {"crash", "timeout"}, 1),
]
BIG = [("cooperative", 4, 6, {"crash", "timeout"}, 2)]


def main() -> None:
    cases = CASES + (BIG if "--big" in sys.argv else [])
    print(f"{'instance':48} {'states':>10} {'edges':>10} {'wall s':>8} {'cpu s':>8} {'states/cpu-s':>13} {'symmetry':>9}")
    for proto, m, p, faults, budget in cases:
        _proto, res = check(proto, members=m, partitions=p, faults=frozenset(faults), budget=budget)
        label = f"{proto} {m}m x {p}p {','.join(sorted(faults))} budget {budget}"
        rate = res.states / res.cpu_seconds if res.cpu_seconds else 0.0
        sym = f"{res.symmetry_factor:.2f}x" if res.symmetry_factor else "-"
        print(f"{label:48} {res.states:>10,} {res.edges:>10,} {res.seconds:>8.1f} {res.cpu_seconds:>8.1f} {rate:>13,.0f} {sym:>9}"
              f"  ok={res.ok} bound={res.convergence_bound}")


if __name__ == "__main__":
    main()
