"""Benchmark of the assignor checker: examples per property per second on the project's own assignors,
and the exact optimum oracle (min-cost flow) on 50 members x 2,000 partitions.

Targets (brief h4): >= 1,000 generated examples per property within 60 s for the project's own assignors;
the optimum oracle on 50 members x 2,000 partitions within 5 s. Prints wall and CPU seconds (the machine
may be shared: CPU time is the figure that does not depend on other load) and the load average.

Usage: python bench/bench_assignor_check.py [--examples N] [--seed S] [--assignors range,sticky,...]
"""
from __future__ import annotations

import argparse
import os
import random
import time

from groupspec.assignorcheck.check import check_assignor
from groupspec.assignorcheck.optimum import optimum


def bench_checker(names: list[str], examples: int, seed: int) -> None:
    print(f"== checker: {examples} examples per property, seed {seed}")
    for name in names:
        w0, c0 = time.perf_counter(), time.process_time()
        rep = check_assignor(name, examples=examples, seed=seed, quality=False)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        applicable = [p for p in rep.properties if p.verdict != "not applicable"]
        print(f"{name:20s} wall {wall:6.1f} s  cpu {cpu:6.1f} s  {rep.calls} calls  "
              f"{len(applicable)} applicable properties")
        for p in applicable:
            rate = p.examples / p.seconds if p.seconds else float("inf")
            print(f"    {p.id:4s} {p.verdict:9s} {p.examples:5d} examples  {p.seconds:6.2f} s  ({rate:7.0f}/s)")
        slowest = max((p.seconds for p in applicable if p.id != "C1"), default=0.0)
        ok = all(p.examples >= examples or p.verdict == "violated" for p in applicable if p.id != "C1")
        print(f"    slowest property {slowest:.1f} s; every property tried {examples} examples: {ok}; "
              f"target <= 60 s per property: {'met' if slowest <= 60 else 'NOT met'}")


def _state(members: int, topics: int, parts: int, uniform: bool, history: bool, rng: random.Random):
    ppt = {f"t{i}": parts for i in range(topics)}
    names = list(ppt)
    subs = {}
    for m in range(members):
        ts = names if uniform else rng.sample(names, rng.randint(1, len(names)))
        subs[f"m{m:02d}"] = {"topics": list(ts), "owned": [], "generation": 5, "instance_id": None}
    if history:
        ids = list(subs)[1:]  # member m00 is new, the others own everything
        for t in names:
            for p in range(parts):
                subs[rng.choice(ids)]["owned"].append([t, p])
    return ppt, subs


def bench_oracle(seed: int) -> None:
    print(f"== optimum oracle (min-cost flow), 50 members x 2,000 partitions, seed {seed}")
    rng = random.Random(seed)
    cases = [("uniform, fresh", 20, 100, True, False), ("uniform, history", 20, 100, True, True),
             ("non-uniform, history", 20, 100, False, True), ("non-uniform, 200 topics x 10", 200, 10, False, True)]
    for label, topics, parts, uniform, history in cases:
        ppt, subs = _state(50, topics, parts, uniform, history, rng)
        w0, c0 = time.perf_counter(), time.process_time()
        opt = optimum(ppt, subs)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        print(f"    {label:30s} wall {wall:5.2f} s  cpu {cpu:5.2f} s  partitions {opt.partitions}  "
              f"moves needed {opt.moves}  spread {opt.spread}  target <= 5 s: {'met' if wall <= 5 else 'NOT met'}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--assignors", default="range,roundrobin,sticky,cooperative-sticky")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    bench_oracle(args.seed)
    bench_checker(args.assignors.split(","), args.examples, args.seed)


if __name__ == "__main__":
    main()
