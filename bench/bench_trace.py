"""Benchmark: `groupspec trace check` by the shape of the trace — few members, many members, out of order.

Three traces of about the same size (default 200 MB; generated into a temporary directory and removed
afterwards, never kept in the repository), one group, topic ``t`` with 6 partitions, eager
rebalances, offset commits between them. A *cycle*: the oldest of three live members revokes and
leaves, the other two revoke and are re-assigned, a member joins, all revoke and are re-assigned
(generations grow by one per rebalance), with commits every 500 ms in between:

* ``3 members``: the member that joins is the one that left (a restart under the same name): three
  member names in the whole trace;
* ``30,000 members``: the member that joins has a name never seen before (a long-lived fleet whose
  consumers come and go): about 30,000 distinct names at 200 MB;
* ``unsorted``: the 3-member trace with every other cycle written before the one it follows, so the
  file is not in time order and the checker sorts it (in bounded memory, spilling to disk).

Each is checked by ``groupspec.trace.check_paths`` (what ``groupspec trace check`` runs) in a fresh
process; the bench prints CPU-seconds (user + system), events per CPU-second, peak RSS, the share of
events the compiled inner loop read, the verdict, and the ratio of the 30,000-member rate to the
3-member rate (the issue's target: within 2x) measured in the same run. CPU-seconds, not wall time:
the machine may be shared.

Usage: python bench/bench_trace.py [MEGABYTES] [--only 3|30000|unsorted]
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

CHECKER = r'''
import json, sys, resource
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
import groupspec.trace.fastpath as fastpath
from groupspec.trace import check_paths
fastpath.MIN_FAST = 0
check_paths([sys.argv[2]])  # a tiny trace first: numba loads the compiled loop (from its cache) once
fastpath.MIN_FAST = 1 << 20
t0 = cpu()
rep = check_paths([sys.argv[1]])
t = rep.traces[0]
d = t.to_dict()
dt = cpu() - t0
g = d["groups"][0]
print(json.dumps({"events": t.events, "seconds": dt, "ok": rep.ok, "fast": t.fast_events, "sorted": t.sorted_by_checker,
                  "members": len(g["members"]),
                  "violated": [p["id"] for p in g["properties"] if p["verdict"] == "violated"],
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
'''

PARTS = 6


def generate(path: str, megabytes: float, fresh_names: bool, unsorted: bool = False, commits: int = 4) -> dict:
    """Write the trace; returns its size, events and distinct member names."""
    limit = int(megabytes * 1e6)
    size = events = 0
    names: set[str] = set()
    f = open(path, "w", encoding="ascii", buffering=1 << 20)
    block: list[str] = []
    pending = [0]
    nblock = 0

    def w(ts: int, body: str) -> None:
        nonlocal size, events
        line = '{"ts_ms":%d,"group":"g",%s}\n' % (ts, body)
        size += len(line)
        events += 1
        if unsorted:
            block.append(line)
        else:
            f.write(line)

    def cycle_end() -> None:
        """Unsorted: every other cycle is written before the one it follows (times strictly increase
        from one cycle to the next, so sorting by time, then line, gives back the trace)."""
        nonlocal nblock
        if not unsorted:
            return
        nblock += 1
        if nblock % 2 == 0:
            cut = pending[0]
            f.write("".join(block[cut:]) + "".join(block[:cut]))
            block.clear()
        else:
            pending[:] = [len(block)]

    def ev(ts: int, m: str, kind: str, parts: list[int] | None = None, gen: int | None = None, extra: str = "") -> None:
        body = '"member":"%s","event":"%s"' % (m, kind)
        if parts is not None:
            body += ',"partitions":[%s]' % ",".join('["t",%d]' % p for p in parts)
        if gen is not None:
            body += ',"generation":%d' % gen
        w(ts, body + extra)

    def assign(ts: int, live: list[str], gen: int) -> dict[str, list[int]]:
        out = {m: [p for p in range(PARTS) if p % len(live) == i] for i, m in enumerate(live)}
        for m in live:
            ev(ts, m, "assigned", out[m], gen)
        return out

    def commit_for(ts: int, own: dict[str, list[int]], gen: int, n: int) -> int:
        for k in range(n):
            ts += 500
            for m, ps in own.items():
                w(ts, '"member":"%s","event":"commit","partitions":[%s],"accepted":true,"generation":%d'
                  % (m, ",".join('["t",%d,%d]' % (p, ts // 10) for p in ps), gen))
        return ts

    w(0, '"event":"topic","topic":"t","partitions":%d' % PARTS)
    live = ["c0", "c1", "c2"]
    names.update(live)
    ts, gen = 10, 1
    for m in live:
        ev(ts, m, "joined")
    ts += 100
    own = assign(ts, live, gen)
    nxt = 3
    while size < limit:
        ts = commit_for(ts, own, gen, commits)
        # the oldest leaves; the others revoke and are re-assigned
        old = live.pop(0)
        ts += 200
        ev(ts, old, "revoked", own[old], gen)
        ev(ts, old, "left")
        for m in live:
            ev(ts + 5, m, "revoked", own[m], gen)
        gen += 1
        ts += 300
        own = assign(ts, live, gen)
        ts = commit_for(ts, own, gen, commits)
        # a member joins: the leaver again (3 names), or a new name (a fleet)
        new = f"c{nxt}" if fresh_names else old
        nxt += 1
        names.add(new)
        ts += 200
        ev(ts, new, "joined")
        for m in live:
            ev(ts + 5, m, "revoked", own[m], gen)
        live.append(new)
        gen += 1
        ts += 300
        own = assign(ts, live, gen)
        cycle_end()
    f.write("".join(block))
    f.close()
    return {"bytes": size, "events": events, "names": len(names)}


def measure(path: str, warm: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHECKER, path, warm], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"checker failed on {path}:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    if only:
        args = [a for a in args if a != only]
    mb = float(args[0]) if args else 200.0
    tmp = tempfile.mkdtemp(prefix="gs-bench-trace-")
    warm = os.path.join(tmp, "warm.jsonl")
    generate(warm, 0.02, False)
    shapes = [("3", "3 members", False, False, 4), ("30000", "30,000 members", True, False, 6),
              ("unsorted", "unsorted", False, True, 4)]
    results: dict[str, dict] = {}
    try:
        for key, label, fresh, unsorted, commits in shapes:
            if only and key != only:
                continue
            path = os.path.join(tmp, f"{key}.jsonl")
            t0 = time.perf_counter()
            info = generate(path, mb, fresh, unsorted, commits)
            gen_s = time.perf_counter() - t0
            r = measure(path, warm)
            os.remove(path)
            rate = r["events"] / r["seconds"]
            results[key] = {**r, "rate": rate}
            print(f"{label:15} {info['bytes'] / 1e6:6.0f} MB, {info['events']:>10,} events, {info['names']:>6,} member "
                  f"names (generated in {gen_s:.0f} s): {r['seconds']:7.2f} CPU-s = {rate:>10,.0f} events/CPU-s, peak RSS "
                  f"{r['maxrss_kb'] / 1024:6.1f} MB; inner loop {r['fast'] / max(r['events'], 1):.1%}"
                  f"{', sorted by the checker' if r['sorted'] else ''} (ok={r['ok']}, violated={r['violated']})",
                  flush=True)
    finally:
        for f in os.listdir(tmp):
            os.remove(os.path.join(tmp, f))
        os.rmdir(tmp)
    if "3" in results:
        print(f"target  >= 500,000 events/CPU-s on 3 members: {'met' if results['3']['rate'] >= 500_000 else 'NOT met'}")
    if "3" in results and "30000" in results:
        ratio = results["3"]["rate"] / results["30000"]["rate"]
        print(f"ratio   3 members run at {ratio:.2f}x the 30,000-member rate (target: within 2x): "
              f"{'met' if ratio <= 2 else 'NOT met'}; 30,000 members in {results['30000']['seconds']:.1f} CPU-s "
              f"(target < 60): {'met' if results['30000']['seconds'] < 60 else 'NOT met'}")
    if "unsorted" in results:
        peak = results["unsorted"]["maxrss_kb"] / 1024
        print(f"memory  unsorted trace peak RSS {peak:.0f} MB (target < 600 MB): {'met' if peak < 600 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
