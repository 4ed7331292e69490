"""Benchmark of the checker's lean state store (issue 18): states per second and bytes per state.

Runs ``groupspec check`` on one instance of the cooperative protocol with crash + timeout faults
(budget 2) in a fresh process (so its peak memory is its own), after a warm-up that loads the
compiled engine, and prints: states, edges, CPU seconds and states per CPU second (one core), wall
seconds, peak memory, memory per state (peak growth / states), the store's own bytes per state,
and the load average (the machine may be shared: CPU time is the steadier figure). Deterministic:
no randomness, nothing to seed.

Run: ``.venv/bin/python bench/bench_scale.py`` (4 members x 5 partitions, about 2.1 M states);
``--members 5 --partitions 5`` is the issue's instance (34 M states, about 2 GB).
Targets: <= 64 bytes per stored state, >= 150,000 states per CPU second.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

PROG = """
import json, sys, time
from groupspec.checker import check
check("cooperative", members=2, partitions=2, with_symmetry_factor=False)  # loads the compiled engine
m, k = int(sys.argv[1]), int(sys.argv[2])
c0 = time.process_time()
proto, res = check("cooperative", members=m, partitions=k, faults=frozenset({"crash", "timeout"}), budget=2,
                   with_symmetry_factor=False)
print(json.dumps({"states": res.states, "edges": res.edges, "cpu": time.process_time() - c0, "wall": res.seconds,
                  "peak": res.peak_memory, "per_state": res.memory_per_state, "store": res.store_bytes_per_state,
                  "spilled": res.frontier_spilled, "ok": res.ok, "bound": res.convergence_bound}))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, default=4)
    ap.add_argument("--partitions", type=int, default=5)
    args = ap.parse_args(argv)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"[scale] cooperative {args.members} members x {args.partitions} partitions, crash+timeout, budget 2 "
          f"(load average before: {load})")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", PROG, str(args.members), str(args.partitions)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        print(out.stderr, file=sys.stderr)
        return 1
    r = json.loads(out.stdout.strip().splitlines()[-1])
    rate = r["states"] / r["cpu"]
    print(f"  states {r['states']:,}  edges {r['edges']:,}  every property held: {r['ok']}  bound {r['bound']}")
    print(f"  CPU {r['cpu']:.1f} s -> {rate:,.0f} states per CPU second (target >= 150,000: "
          f"{'MET' if rate >= 150_000 else 'MISSED'}); wall {r['wall']:.1f} s (process {time.perf_counter() - t0:.1f} s)")
    print(f"  peak memory {r['peak'] / 2**20:,.0f} MiB; memory per state {r['per_state']:.0f} bytes (peak growth / states; "
          f"target <= 64: {'MET' if r['per_state'] <= 64 else 'MISSED'}); store {r['store']:.0f} bytes per state; "
          f"frontier segments on disk {r['spilled']}")
    print(f"  load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0 if r["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
