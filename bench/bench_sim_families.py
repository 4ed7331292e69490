"""The simulators of every family, side by side with another checkout: CPU seconds per run, and the ratio.

Runs, each in a fresh process after a warm-up run: the classic simulator (``bench_simulator.py``'s group: 30
consumers heartbeating every 100 ms with churn, 60 s virtual; messages per CPU-second), the KIP-848 simulation
(``run_consumer_scenario``: ``churn``, 40 consumers, 120 partitions, and ``scale-out``, 30 x 90; no network,
the stories' default: the "bare" run) and the migration (``run_migration_scenario``: ``online-upgrade``, 8
consumers, 24 partitions). With ``--old DIR`` (a folder whose ``groupspec`` is another checkout's package, put
first on ``PYTHONPATH``, e.g. the commit before the one actor contract), every workload runs with both,
alternately, ``--repeat`` times, and the table shows the least CPU of each side (the run least disturbed by the
machine's load) and new / old. The two sides need not do the same work (an older migration simulation ran a
classic client in miniature): the figure compared is CPU seconds for the same scenarios (each run several times in one process, about a
CPU-second), and for the
classic simulator messages per CPU-second.

On a shared machine the figures are indicative only: the load average is printed before and after.
Deterministic: every run is seeded (seed 0).

Run: ``.venv/bin/python bench/bench_sim_families.py [--old /tmp/old/pkg] [--repeat 3] [--only classic,consumer]``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

PROG = r"""
import json, sys, time
from dataclasses import replace
what = sys.argv[1]
def classic():
    from groupspec.reference.sim import NetworkConfig, member_config, SimConfig, Simulator
    members, virtual_ms = 30, 60_000
    sim = Simulator(SimConfig(seed=0, topics=(("t", members * 4),), network=NetworkConfig(1, 5), poll_interval_ms=1000))
    for i in range(members):
        cfg = replace(member_config(f"c{i + 1}", "cooperative", None), heartbeat_interval_ms=100, session_timeout_ms=6000,
                      auto_commit_interval_ms=1000)
        sim.at(i * 10, "start", f"c{i + 1}", config=cfg)
    for k, t in enumerate(range(10000, virtual_ms - 5000, 5000)):
        sim.at(t, "restart", f"c{k % members + 1}")
    sim.run_quietly_until(virtual_ms)
    return sim.messages
def churn():
    from groupspec.reference.sim import run_consumer_scenario
    return len(run_consumer_scenario("churn", members=40, partitions=120, seed=0).events)
def scale_out():
    from groupspec.reference.sim import run_consumer_scenario
    return len(run_consumer_scenario("scale-out", members=30, partitions=90, seed=0).events)
def migration():
    from groupspec.reference.sim import run_migration_scenario
    return len(run_migration_scenario("online-upgrade", members=8, partitions=24, seed=0).events)
fn = {"classic": classic, "consumer-churn": churn, "consumer-scale-out": scale_out, "migration": migration}[what]
REPS = {"classic": 4, "consumer-churn": 12, "consumer-scale-out": 16, "migration": 16}[what]  # ~1 CPU-s each
fn()  # warm-up (imports, caches)
c0 = time.process_time()
n = sum(fn() for _ in range(REPS))
print(json.dumps({"cpu": time.process_time() - c0, "count": n}))
"""

WORKLOADS = ("classic", "consumer-churn", "consumer-scale-out", "migration")


def run(pkg: str | None, what: str) -> dict:
    env = dict(os.environ)
    if pkg:
        env["PYTHONPATH"] = pkg + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # from a neutral folder: ``python -c`` puts the working folder first on sys.path
    out = subprocess.run([sys.executable, "-c", PROG, what], capture_output=True, text=True, check=False,
                         cwd=tempfile.gettempdir(), env=env)
    if out.returncode != 0:
        raise SystemExit(f"bench_sim_families: {what} ({pkg or 'this checkout'}) failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--old", default=None, help="a folder whose groupspec package is the other checkout's")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default=",".join(WORKLOADS))
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print(f"{'workload':20} {'new CPU-s':>10} {'old CPU-s':>10} {'new/old CPU':>12} {'count (new / old)':>20}")
    for what in args.only.split(","):
        new: list[dict] = []
        old: list[dict] = []
        for _ in range(args.repeat):
            new.append(run(None, what))
            if args.old:
                old.append(run(args.old, what))
        b = min(new, key=lambda r: r["cpu"])
        if old:
            o = min(old, key=lambda r: r["cpu"])
            print(f"{what:20} {b['cpu']:10.3f} {o['cpu']:10.3f} {b['cpu'] / o['cpu']:12.3f} {b['count']:>9} / {o['count']:<9}")
        else:
            print(f"{what:20} {b['cpu']:10.3f} {'-':>10} {'-':>12} {b['count']:>9}")
        if what == "classic":
            rate = b["count"] / b["cpu"]
            extra = f"; old {o['count'] / o['cpu']:,.0f}, new / old {rate / (o['count'] / o['cpu']):.3f}" if old else ""
            print(f"{'':20} classic: {rate:,.0f} messages per CPU-second{extra}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
