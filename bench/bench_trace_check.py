"""Benchmark: `groupspec trace check` on a large synthetic trace generated from the simulator.

The trace is the simulator's ``rolling-restart`` run (every member closes and restarts in turn,
with commits every 5 s), repeated end to end with shifted times until it holds EVENTS events (default
10,000,000; it is written to a temporary directory and removed afterwards): one group whose members
keep restarting, so the checker's state stays the size of the group while the trace grows. For the
trace and for its first tenth it prints, from the same run, each in a fresh process:

* the trace checker (``groupspec.trace.check_paths``, what ``groupspec trace check`` runs), single
  process: CPU-seconds (user + system, ``getrusage``), events per CPU-second, peak RSS, and the share
  of events its compiled inner loop handled;
* a plain-Python line-by-line baseline: ``json.loads`` each line and keep who owns what in a dict (no
  properties, no windows, no periods): the same figures.

CPU-seconds, not wall time: the machine may be shared. Peak RSS includes numba's compiled code
(about 90 MB, the same for any length); the point is that it does not grow from the tenth to the whole.

Usage: python bench/bench_trace_check.py [EVENTS] [--keep FILE]
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

BASELINE = r'''
import json, sys, time, resource
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t0 = cpu()
owners = {}
owned = {}
n = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        ev = json.loads(line)
        n += 1
        k = ev.get("event")
        m = ev.get("member")
        if k == "assigned":
            if ev.get("protocol", "eager") == "eager":
                for tp in owned.pop(m, ()):
                    owners.pop(tp, None)
            for t, p in ev["partitions"]:
                owners[(t, p)] = m
                owned.setdefault(m, set()).add((t, p))
        elif k in ("revoked", "lost"):
            for t, p in ev["partitions"]:
                owners.pop((t, p), None)
                owned.get(m, set()).discard((t, p))
        elif k == "left":
            for tp in owned.pop(m, ()):
                owners.pop(tp, None)
dt = cpu() - t0
print(json.dumps({"events": n, "seconds": dt, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
'''

CHECKER = r'''
import json, sys, time, resource
from groupspec.trace import check_paths
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
import groupspec.trace.fastpath as fastpath
fastpath.MIN_FAST = 0
check_paths([sys.argv[2]])  # a tiny trace first, through the compiled loop: numba loads its code (from its cache) once
fastpath.MIN_FAST = 1 << 20
t0 = cpu()
rep = check_paths([sys.argv[1]])
d = rep.to_dict()
dt = cpu() - t0
fast = rep.traces[0].fast_events
g = d["traces"][0]["groups"][0]
print(json.dumps({"events": d["traces"][0]["events"], "seconds": dt, "ok": rep.ok, "fast": fast,
                  "violated": [p["id"] for p in g["properties"] if p["verdict"] == "violated"],
                  "periods": len(g["periods"]), "windows": len(g["unowned_windows"]),
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
'''


def generate(path: str, events: int) -> int:
    from groupspec.reference.sim import ScenarioOptions, run_scenario

    rep = run_scenario("rolling-restart", ScenarioOptions(seed=7))
    base = [e for e in rep.sim.trace]
    topic = [e for e in base if e["event"] == "topic"]
    body = [e for e in base if e["event"] != "topic"]
    span = max(e["ts_ms"] for e in body) + 10_000
    # each copy ends with every member leaving, so the next copy starts a fresh group
    members = sorted({e["member"] for e in body})
    enc = json.JSONEncoder(separators=(",", ":")).encode
    n = 0
    with open(path, "w", encoding="utf-8", buffering=1 << 20) as f:
        for e in topic:
            f.write(enc(e) + "\n")
            n += 1
        k = 0
        while n < events:
            off = k * span
            chunk = []
            for e in body:
                d = dict(e)
                d["ts_ms"] = e["ts_ms"] + off
                chunk.append(enc(d))
            end = off + span - 5_000
            for m in members:
                chunk.append(enc({"ts_ms": end, "group": "g", "member": m, "event": "left"}))
            take = chunk[: events - n]
            f.write("\n".join(take) + "\n")
            n += len(take)
            k += 1
    return n


def measure(script: str, path: str, warm: str) -> dict:
    out = subprocess.run([sys.executable, "-c", script, path, warm], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def head(src: str, dst: str, lines: int) -> None:
    with open(src, "rb") as f, open(dst, "wb") as g:
        for k, line in enumerate(f):
            if k >= lines:
                break
            g.write(line)


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    events = int(args[0]) if args else 10_000_000
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
    tmpdir = tempfile.mkdtemp(prefix="gs-bench-trace-")
    big = keep or os.path.join(tmpdir, "big.jsonl")
    small = os.path.join(tmpdir, "small.jsonl")
    warm = os.path.join(tmpdir, "warm.jsonl")
    try:
        t0 = time.perf_counter()
        n = generate(big, events)
        head(big, small, max(events // 10, 1))
        head(big, warm, 200)
        print(f"generated {n:,} events ({os.path.getsize(big) / 1e6:,.0f} MB) from the simulator's rolling-restart "
              f"in {time.perf_counter() - t0:.1f} s (wall)")
        rates = {}
        for label, path in (("tenth", small), ("whole", big)):
            chk = measure(CHECKER, path, warm)
            base = measure(BASELINE, path, warm)
            rate, brate = chk["events"] / chk["seconds"], base["events"] / base["seconds"]
            rates[label] = (rate, chk)
            print(f"trace check {chk['events']:>11,} events: {chk['seconds']:7.2f} CPU-s = {rate:>10,.0f} events/CPU-s, "
                  f"peak RSS {chk['maxrss_kb'] / 1024:6.1f} MB; inner loop {chk['fast'] / chk['events']:.2%} of events "
                  f"(ok={chk['ok']}, violated={chk['violated']}, {chk['periods']:,} periods and {chk['windows']:,} "
                  f"unowned windows listed)")
            print(f"baseline    {base['events']:>11,} events: {base['seconds']:7.2f} CPU-s = {brate:>10,.0f} events/CPU-s, "
                  f"peak RSS {base['maxrss_kb'] / 1024:6.1f} MB (json.loads per line + an owner dict)")
            print(f"ratio       trace check runs at {rate / brate:.1f}x the baseline's speed")
        (r1, c1), (r2, c2) = rates["tenth"], rates["whole"]
        print(f"memory      checker peak RSS {c1['maxrss_kb'] / 1024:.1f} MB on {c1['events']:,} events, "
              f"{c2['maxrss_kb'] / 1024:.1f} MB on {c2['events']:,} events")
        print(f"target      >= 500,000 events/CPU-s on {c2['events']:,} events: {'met' if r2 >= 500_000 else 'NOT met'} "
              f"({r2:,.0f})")
    finally:
        for p in (small, warm) + (() if keep else (big,)):
            if os.path.exists(p):
                os.remove(p)
        if not keep:
            os.rmdir(tmpdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
