"""Benchmark of the one compiled search per protocol family (issue 26): states per CPU-second, serial and on workers.

Runs ``groupspec.checker.check`` on one instance of each compiled family (classic: ``cooperative``; KIP-848:
``consumer``; the migration: ``classic-to-consumer``), each in a fresh process after a warm-up that loads
the compiled engine, once per worker count (``--workers 1,2``), and prints per run: states, edges, CPU
seconds of the whole check (every thread), **states per CPU-second**, wall seconds; per family, the
two-worker wall speed-up measured in this run (from the least-CPU runs; with ``--repeat`` above 1 also from the
median walls and from the fastest runs: on a shared host the CPU time of the same work moves by a fifth from run
to run, and the three figures show how far that moves the ratio). With ``--old PYTHON`` (a Python whose ``groupspec`` is
another checkout, e.g. the commit before the one search: ``git worktree add /tmp/old <commit>`` and a venv
there), every run is made with both, alternately, and the table shows old and new side by side with the
ratio new / old of states per CPU-second, measured in the same run. Every pair of runs must give the same
states, edges and verdicts (the bench fails otherwise). Before the one search, the KIP-848 and migration
families ran on one thread whatever ``--workers`` said: their "old, 2 workers" row is a serial run.

On a shared machine the figures are indicative only: the load average is printed before and after.
Deterministic: no randomness, nothing to seed.

Run: ``.venv/bin/python bench/bench_families.py [--old /tmp/old/.venv/bin/python] [--repeat 2]``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from statistics import median

PROG = """
import json, sys, time
from groupspec.checker import check
name, m, k, faults, w = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), frozenset(sys.argv[4].split(",")), int(sys.argv[5])
check(name, members=2, partitions=2, with_symmetry_factor=False, workers=w)  # loads (or compiles) the engine
c0 = time.process_time()
proto, res = check(name, members=m, partitions=k, faults=faults, budget=2, with_symmetry_factor=False, workers=w)
print(json.dumps({"states": res.states, "edges": res.edges, "cpu": time.process_time() - c0, "wall": res.seconds,
                  "engine": res.engine, "workers": getattr(res, "workers", 1), "bound": res.convergence_bound,
                  "verdicts": sorted((n, v.held) for n, v in res.verdicts.items())}))
"""

FAMILIES = {  # family: (variant, members, partitions, faults); each about a million states or less, budget 2
    "classic": ("cooperative", 4, 4, "crash,timeout"),
    "consumer": ("consumer", 4, 6, "crash,timeout,zombie"),  # docs/consumer-protocol.md's instance
    "migration": ("classic-to-consumer-acked", 4, 6, "crash,timeout,zombie"),  # 1.46 M states (4x4, 0.65 M, is over in 2 s)
}


def run(python: str, case: tuple[str, int, int, str], workers: int) -> dict:
    name, m, k, faults = case
    # from a neutral folder: ``python -c`` puts the working folder first on sys.path, which would shadow the
    # other checkout's groupspec with this one's
    out = subprocess.run([python, "-c", PROG, name, str(m), str(k), faults, str(workers)], capture_output=True,
                         text=True, check=False, cwd=tempfile.gettempdir())
    if out.returncode != 0:
        raise SystemExit(f"bench_families: {python} {name} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def best(runs: list[dict]) -> dict:
    """The run with the least CPU (the least disturbed by the machine's load)."""
    return min(runs, key=lambda r: r["cpu"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", help="a Python whose groupspec is the commit to compare with")
    ap.add_argument("--workers", default="1,2", help="comma list of worker counts (default 1,2)")
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma list of " + ", ".join(FAMILIES))
    ap.add_argument("--repeat", type=int, default=1, help="runs per figure; the one with the least CPU counts")
    args = ap.parse_args(argv)
    counts = [int(x) for x in args.workers.split(",")]
    pythons = {"new": sys.executable} | ({"old": args.old} if args.old else {})
    print(f"[families] load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"(indicative figures on a shared machine)")
    header = f"{'family':10} {'instance':34} {'workers':>7} {'states':>10} {'edges':>10}"
    for tag in pythons:
        header += f" {tag + ' CPU s':>10} {tag + ' st/CPU-s':>13} {tag + ' wall':>9}"
    if "old" in pythons:
        header += f" {'new/old':>8}"
    print(header)
    failed = False
    for fam in args.families.split(","):
        case = FAMILIES[fam]
        walls: dict[tuple[str, int], float] = {}
        allwalls: dict[tuple[str, int], list[float]] = {}
        for w in counts:
            got: dict[str, list[dict]] = {tag: [] for tag in pythons}
            for _ in range(args.repeat):
                for tag, py in pythons.items():  # alternately, so that both see the same load
                    got[tag].append(run(py, case, w))
            rows = {tag: best(rs) for tag, rs in got.items()}
            for tag, rs in got.items():
                allwalls[(tag, w)] = [r["wall"] for r in rs]
            first = rows["new"]
            for tag, r in rows.items():
                if (r["states"], r["edges"], r["verdicts"], r["bound"]) != (first["states"], first["edges"],
                                                                           first["verdicts"], first["bound"]):
                    print(f"  MISMATCH {fam} workers {w}: {tag} differs from new: {r} vs {first}")
                    failed = True
            line = (f"{fam:10} {case[0] + f' {case[1]}x{case[2]} ' + case[3]:34} {w:>7} {first['states']:>10,} "
                    f"{first['edges']:>10,}")
            for tag, r in rows.items():
                walls[(tag, w)] = r["wall"]
                line += f" {r['cpu']:>10.2f} {r['states'] / r['cpu']:>13,.0f} {r['wall']:>9.2f}"
            if "old" in rows:
                line += f" {(rows['new']['states'] / rows['new']['cpu']) / (rows['old']['states'] / rows['old']['cpu']):>8.3f}"
            print(line)
        if 1 in counts and 2 in counts:
            speed = "  ".join(f"{tag}: {walls[(tag, 1)] / walls[(tag, 2)]:.2f}x" for tag in pythons)
            print(f"{'':10} two-worker wall speed-up (1 worker's wall / 2 workers'), least-CPU runs: {speed}")
            if args.repeat > 1:
                med = "  ".join(f"{tag}: {median(allwalls[(tag, 1)]) / median(allwalls[(tag, 2)]):.2f}x"
                                for tag in pythons)
                fast = "  ".join(f"{tag}: {min(allwalls[(tag, 1)]) / min(allwalls[(tag, 2)]):.2f}x" for tag in pythons)
                print(f"{'':10} the same from the median walls: {med}; from the fastest runs: {fast}")
    print(f"[families] load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
