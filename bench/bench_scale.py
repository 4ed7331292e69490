"""Benchmark of the checker's lean state store and its parallel search (issue 18).

Runs ``groupspec check``'s search on one instance of the cooperative protocol with crash + timeout
faults (budget 2) in a fresh process per run (so its peak memory is its own), after a warm-up that
loads the compiled engine, once per number of workers (``--workers 1,2``: one and two expansion
threads), and prints per run: states, edges, CPU seconds, CPU microseconds per state and states per
CPU second, wall seconds, peak memory, memory per state (peak growth / states), the store's own bytes
per state; then the **two-core speed-up** (wall time of one worker / wall time of two, measured in this
run) and, because a shared machine makes wall time noisy, the speed-up the CPU figures allow on two
idle cores (the whole check's CPU time over: the graph part's, which runs on one thread, plus the larger
of the CPU time spent merging, which cannot run in parallel, and half the search's). Every run must give the
same states, edges and verdicts as the first (the bench fails otherwise). Deterministic: no randomness, nothing to seed.

First it prints the **checker's targets** (issues 29 and 32), one fresh process per instance: the classic family
(cooperative 4 x 6, crash + timeout, budget 2), the KIP-848 family (consumer 4 x 6, crash + timeout + zombie,
budget 2) and the KIP-848 family with the requests and answers in flight (consumer 4 x 6, crash + timeout +
lose-answer + late-answer + late-commit, budget 1; commit fencing is violated there as in Kafka 4.3.1), each on one
worker: states, CPU seconds, **states per
CPU-second**, **bytes per state** (peak memory growth / states) and the store's own bytes per state, against
the targets and beside TLC's published throughput (:data:`TLC`). ``--targets-only`` stops there; ``--only
classic,consumer`` runs those targets only; ``--old PYTHON`` (a Python whose ``groupspec`` is another checkout, e.g.
``git archive <commit> | tar -x -C /tmp/old`` run with ``PYTHONPATH=/tmp/old``) runs each target with both,
alternately, and prints the old figures beside with the ratios new / old (the same states and verdicts required);
``--repeat N`` keeps the run with the least CPU of N.

Run: ``.venv/bin/python bench/bench_scale.py`` (4 members x 5 partitions, about 2.1 M states);
``--members 5 --partitions 5`` is the issue's instance (95 M states, about 6 GB; 34 M and 2 GB
before the rebalance timer's overtaking of a running member became the ``timeout`` perturbation, issue 15).
Targets: <= 64 bytes per stored state, >= 150,000 states per CPU second on one core.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

# TLC's published throughput, for scale: learntla.com's "Optimizing Model Checking" page
# (https://learntla.com/topics/optimization.html): its base model, 28,351,303 distinct states, "can take up to 28
# seconds" with one worker per core (the author's machine; cores not given), i.e. about 1 M distinct states per
# wall second on a multi-core machine; per core, at least several times less. A published figure, not measured here.
TLC = ("TLC (learntla.com, optimization page)", 28_351_303, 28.0)

TARGETS = (  # (label, variant, members, partitions, faults, budget, states per CPU-second at least, bytes per state
    # at most, the properties found violated as in Kafka: groupspec verify's "as in Kafka" rows)
    ("classic", "cooperative", 4, 6, "crash,timeout", 2, 200_000, 80, ()),
    ("consumer", "consumer", 4, 6, "crash,timeout,zombie", 2, 150_000, 150, ()),
    # budget 1: at budget 2 (exact keys, no member renaming) more than 180 CPU-s and 2 GB on the shared machine.
    # A late OffsetCommit at the member's own epoch is accepted, as in Kafka 4.3.1 (docs/consumer-protocol.md).
    ("consumer in flight", "consumer", 4, 6, "crash,timeout,lose-answer,late-answer,late-commit", 1, 150_000, 150,
     ("commit_fencing",)),
)

TARGET_PROG = """
import json, sys, time
from groupspec.checker import check
name, m, k, faults, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), frozenset(sys.argv[4].split(",")), int(sys.argv[5])
check(name, members=2, partitions=2, faults=faults, budget=1, with_symmetry_factor=False)  # loads the engine
c0 = time.process_time()
proto, res = check(name, members=m, partitions=k, faults=faults, budget=b, with_symmetry_factor=False)
print(json.dumps({"states": res.states, "cpu": time.process_time() - c0, "engine": res.engine,
                  "violated": sorted(n for n, v in res.verdicts.items() if not v.held),
                  "per_state": res.memory_per_state, "store": res.store_bytes_per_state, "wall": res.seconds}))
"""


def target_run(python: str, name: str, m: int, k: int, faults: str, budget: int) -> dict | None:
    # from a neutral folder: ``python -c`` puts the working folder first on sys.path, which would shadow another
    # checkout's groupspec (``--old``) with this one's
    out = subprocess.run([python, "-c", TARGET_PROG, name, str(m), str(k), faults, str(budget)],
                         capture_output=True, text=True, check=False, cwd=tempfile.gettempdir())
    if out.returncode != 0:
        print(out.stderr, file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def targets(only: set[str] | None = None, old: str | None = None, repeat: int = 1) -> bool:
    """The checker's targets, one instance per family (``only``: those labels); whether every target was met.
    With ``old`` (a Python whose groupspec is another checkout), each instance is run with both, alternately, and
    the old figures and the ratios new / old are printed beside (the same states and verdicts are required)."""
    met = True
    print(f"[checker targets] one worker (load average before: "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; CPU time of the check in a fresh process, "
          f"{'the least of ' + str(repeat) + ' runs' if repeat > 1 else 'one run'})")
    print(f"  {'family':20} {'instance':50} {'states':>11} {'CPU s':>7} {'states/CPU-s':>13} {'target':>9} "
          f"{'B/state':>8} {'target':>7} {'store B':>8}")
    pythons = {"new": sys.executable} | ({"old": old} if old else {})
    for label, name, m, k, faults, budget, rate_t, bytes_t, as_in_kafka in TARGETS:
        if only is not None and label not in only:
            continue
        got: dict[str, list[dict]] = {tag: [] for tag in pythons}
        for _ in range(repeat):
            for tag, py in pythons.items():  # alternately, so that both see the same load
                r = target_run(py, name, m, k, faults, budget)
                if r is None:
                    return False
                got[tag].append(r)
        rows = {tag: min(rs, key=lambda r: r["cpu"]) for tag, rs in got.items()}
        r = rows["new"]
        rate = r["states"] / r["cpu"]
        ok = (rate >= rate_t and r["per_state"] <= bytes_t and r["engine"] == "compiled"
              and tuple(r["violated"]) == as_in_kafka)
        met = met and ok
        print(f"  {label:20} {f'{name} {m}x{k} {faults} b{budget}':50} {r['states']:>11,} {r['cpu']:>7.1f} {rate:>13,.0f} "
              f">={rate_t / 1000:>5.0f} k {r['per_state']:>8.0f} {'<=' + str(bytes_t):>7} {r['store']:>8.0f}  "
              f"{'MET' if ok else 'MISSED'} ({r['engine']}; violated: {', '.join(r['violated']) or 'none'}"
              + (", as in Kafka" if as_in_kafka else "") + ")")
        if "old" in rows:
            o = rows["old"]
            orate = o["states"] / o["cpu"]
            same = (o["states"], o["violated"]) == (r["states"], r["violated"])
            met = met and same
            print(f"  {'  old':20} {'(--old, same run, alternately)':50} {o['states']:>11,} {o['cpu']:>7.1f} "
                  f"{orate:>13,.0f} {'':>9} {o['per_state']:>8.0f} {'':>7} {o['store']:>8.0f}  "
                  f"new/old: states/CPU-s x{rate / orate:.2f}, bytes/state x{r['per_state'] / o['per_state']:.2f}"
                  + ("" if same else "  MISMATCH: another state count or verdicts"))
    what, states, secs = TLC
    print(f"  beside: {what}: {states:,} distinct states in up to {secs:.0f} wall s on all cores = "
          f"{states / secs:,.0f} states per wall second (published, not measured here)")
    print(f"  load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return met


PROG = """
import json, sys, time
from groupspec.checker import check
check("cooperative", members=2, partitions=2, with_symmetry_factor=False, workers=int(sys.argv[3]))  # loads the engine
m, k, w = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
c0 = time.process_time()
proto, res = check("cooperative", members=m, partitions=k, faults=frozenset({"crash", "timeout"}), budget=2,
                   with_symmetry_factor=False, workers=w)
print(json.dumps({"states": res.states, "edges": res.edges, "cpu": time.process_time() - c0, "wall": res.seconds,
                  "search_cpu": res.search_cpu_seconds, "serial_cpu": res.serial_cpu_seconds,
                  "peak": res.peak_memory, "per_state": res.memory_per_state, "store": res.store_bytes_per_state,
                  "spilled": res.frontier_spilled, "ok": res.ok, "bound": res.convergence_bound,
                  "verdicts": sorted((n, v.held) for n, v in res.verdicts.items())}))
"""


def run(members: int, partitions: int, workers: int) -> dict | None:
    out = subprocess.run([sys.executable, "-c", PROG, str(members), str(partitions), str(workers)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        print(out.stderr, file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--members", type=int, default=4)
    ap.add_argument("--partitions", type=int, default=5)
    ap.add_argument("--workers", default="1,2", help="comma list of worker counts, one run each (default 1,2)")
    ap.add_argument("--targets-only", action="store_true", help="print the checker's targets only")
    ap.add_argument("--only", help="comma list of the targets' family labels to run (default: every one): "
                    + ", ".join(t[0] for t in TARGETS))
    ap.add_argument("--old", help="a Python whose groupspec is another checkout: the targets side by side with it")
    ap.add_argument("--repeat", type=int, default=1, help="runs per target figure; the one with the least CPU counts")
    args = ap.parse_args(argv)
    only = None
    if args.only:
        only = {x.strip() for x in args.only.split(",")}
        unknown = only - {t[0] for t in TARGETS}
        if unknown:
            ap.error(f"unknown target label(s): {', '.join(sorted(unknown))}")
    met = targets(only, args.old, max(1, args.repeat))
    if args.targets_only:
        return 0 if met else 1
    counts = [int(x) for x in args.workers.split(",")]
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"[scale] cooperative {args.members} members x {args.partitions} partitions, crash+timeout, budget 2 "
          f"(load average before: {load})")
    runs: dict[int, dict] = {}
    for w in counts:
        t0 = time.perf_counter()
        r = run(args.members, args.partitions, w)
        if r is None:
            return 1
        runs[w] = r
        rate = r["states"] / r["cpu"]
        print(f"  workers {w}: states {r['states']:,}  edges {r['edges']:,}  every property held: {r['ok']}  "
              f"bound {r['bound']}")
        print(f"    CPU {r['cpu']:.1f} s = {r['cpu'] / r['states'] * 1e6:.2f} CPU us per state -> {rate:,.0f} states per "
              f"CPU second" + (f" (one-core target >= 150,000: {'MET' if rate >= 150_000 else 'MISSED'})" if w == 1 else "")
              + f"; wall {r['wall']:.1f} s (process {time.perf_counter() - t0:.1f} s)")
        print(f"    peak memory {r['peak'] / 2**20:,.0f} MiB; memory per state {r['per_state']:.0f} bytes (peak growth / "
              f"states; target <= 64: {'MET' if r['per_state'] <= 64 else 'MISSED'}); store {r['store']:.0f} bytes "
              f"per state; frontier segments on disk {r['spilled']}")
        first = runs[counts[0]]
        if (r["states"], r["edges"], r["verdicts"], r["bound"]) != (first["states"], first["edges"], first["verdicts"],
                                                                   first["bound"]):
            print(f"  workers {w} gave another result than workers {counts[0]}", file=sys.stderr)
            return 1
    if 1 in runs and 2 in runs:
        one, two = runs[1], runs[2]
        rest = two["cpu"] - two["search_cpu"]  # the graph part and the reports: one thread
        ideal = two["cpu"] / (rest + max(two["serial_cpu"], two["search_cpu"] / 2))
        print(f"  two-core speed-up (wall, this run): {one['wall'] / two['wall']:.2f}x "
              f"({one['wall']:.1f} s -> {two['wall']:.1f} s); CPU per state {one['cpu'] / one['states'] * 1e6:.2f} -> "
              f"{two['cpu'] / two['states'] * 1e6:.2f} us (x{two['cpu'] / one['cpu']:.2f} for the parallel machinery)")
        print(f"  speed-up on two idle cores allowed by the CPU figures: at most {ideal:.2f}x (CPU {two['cpu']:.1f} s: "
              f"search {two['search_cpu']:.1f} s, of which the merge {two['serial_cpu']:.1f} s runs on one thread; "
              f"graph part and reports {rest:.1f} s on one thread)")
    print(f"  load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
          + ("  (above 2: other jobs share the cores, wall-clock figures are not the machine's)"
             if os.getloadavg()[0] > 2 else ""))
    return 0 if all(r["ok"] for r in runs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
