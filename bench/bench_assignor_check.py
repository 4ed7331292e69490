"""Benchmark of the assignor checker: examples per property per second on the project's own assignors,
and the exact optimum oracle (min-cost flow) on 50 members x 2,000 partitions.

Issue 17 adds two sections: the default check (200 examples per property) with the older small strategies
("before": at most 6 partitions, 5 members, 4 topics, generations up to 9) and with the current ones
("after": large groups too, int32 generations, tricky topic names), examples/s and total time, measured in the
same run; and the time to find each planted bug of tests/planted_assignors.py (shrinking included).

Targets (brief h4): >= 1,000 generated examples per property within 60 s for the project's own assignors;
the optimum oracle on 50 members x 2,000 partitions within 5 s. Prints wall and CPU seconds (the machine
may be shared: CPU time is the figure that does not depend on other load) and the load average.

Issue 34 adds three sections. ``default``: the default check exactly as ``groupspec assignor check NAME``
runs it (200 examples per property, the input-class catalogue, I10p over 8 hash seeds, the scale tier's default
sizes, the quality figures), target < 2 minutes for a correct assignor, against the same check without what
issue 34 added (no catalogue, 2 hash seeds, no scale tier) measured in the same run. ``scale``: the scale
tier's 2,000 members x 1,000,000 partitions case for the project's cooperative-sticky (reference call and
candidate call, as ``--thorough`` runs it), target < 5 minutes. ``blind``: each planted candidate of issue 34
with the catalogue (``per_class`` default) and without (``per_class=0``), same seed.

Usage: python bench/bench_assignor_check.py [--examples N] [--seed S] [--assignors range,sticky,...]
                                           [--sections oracle,sizes,planted,checker,default,scale,blind]
"""
from __future__ import annotations

import argparse
import os
import random
import resource
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


def bench_sizes(names: list[str], seed: int) -> None:
    """The default check (200 examples per property) with the small strategies and with the current ones."""
    print(f"== default check (200 examples per property), small strategies (before) vs current (after), seed {seed}")
    for name in names:
        figures = []
        for label, small in (("before", True), ("after", False)):
            w0, c0 = time.perf_counter(), time.process_time()
            rep = check_assignor(name, examples=200, seed=seed, small=small)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            tried = sum(p.examples for p in rep.properties if p.verdict != "not applicable" and p.id != "C1")
            figures.append((label, wall, cpu, tried, rep.ok))
            print(f"    {name:20s} {label:6s} wall {wall:6.1f} s  cpu {cpu:6.1f} s  {tried} examples  "
                  f"{tried / cpu if cpu else 0:7.0f} examples/cpu-s  ok {rep.ok}  "
                  f"target < 60 s: {'met' if wall < 60 else 'NOT met'}")
        (_, _, cb, tb, _), (_, _, ca, ta, _) = figures
        if cb and ca:
            print(f"    {name:20s} after/before examples per cpu-s: {(ta / ca) / (tb / cb):.2f}")


PLANTED = [("planted_assignors:string_generations", "I6'"), ("planted_assignors:string_sorted_range", "I7"),
           ("planted_assignors:ClassStateAssignor", "I10i"), ("planted_assignors:hash_seed_roundrobin", "I10p"),
           ("planted_assignors:RackModeAlwaysRange", "I12"), ("planted_assignors:RacklessMatchesNothingRange", "I7"),
           ("planted_assignors:LocalityOverBalanceRange", "I7")]


def bench_planted(seed: int) -> None:
    """Time to find (and shrink) each planted bug, with the small strategies and with the current ones."""
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
    print(f"== planted bugs (tests/planted_assignors.py): time to find and shrink, 1,000 examples at most, seed {seed}")
    for target, pid in PLANTED:
        for label, small in (("before", True), ("after", False)):
            w0, c0 = time.perf_counter(), time.process_time()
            rep = check_assignor(target, examples=1000, seed=seed, properties=[pid], quality=False, small=small)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            p = rep.properties[0]
            found = f"found after {p.examples} examples" if p.verdict == "violated" else f"NOT found ({p.verdict})"
            size = ""
            if p.counterexample:
                inp = p.counterexample["input"]
                size = (f", shrunk to {len(inp['subscriptions'])} members / "
                        f"{sum(inp['partitions_per_topic'].values())} partitions")
            print(f"    {target.split(':')[1]:24s} {pid:5s} {label:6s} {found}{size}; wall {wall:6.1f} s  cpu {cpu:6.1f} s")


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def bench_default(names: list[str], seed: int) -> None:
    """The default check as the CLI runs it, against the same check without issue 34's additions."""
    print(f"== default check (200 examples per property, quality on), seed {seed}; peer: without the catalogue, "
          f"with 2 hash seeds and no scale tier (before issue 34)")
    for name in names:
        figs = {}
        for label, kw in (("before", {"per_class": 0, "hash_seeds": 2, "scale": None}), ("after", {})):
            w0, c0, k0 = time.perf_counter(), time.process_time(), _children_cpu()
            rep = check_assignor(name, examples=200, seed=seed, **kw)
            wall, cpu, kids = time.perf_counter() - w0, time.process_time() - c0, _children_cpu() - k0
            figs[label] = (wall, cpu + kids)
            cov = rep.coverage
            hit = min((c["hits"] for c in cov["classes"]), default=0)
            s1 = next((p.note for p in rep.properties if p.id == "S1"), "")
            print(f"    {name:20s} {label:6s} wall {wall:6.1f} s  cpu {cpu:6.1f} s + workers {kids:5.1f} s  "
                  f"ok {rep.ok}  fewest class hits {hit}  target < 120 s: {'met' if wall < 120 else 'NOT met'}"
                  + (f"\n        S1: {s1}" if s1 else ""))
        (wb, cb), (wa, ca) = figs["before"], figs["after"]
        print(f"    {name:20s} after/before: wall {wa / wb:.2f}x  cpu {ca / cb:.2f}x")


def bench_scale(seed: int) -> None:
    """S1's 2,000 x 1M case for the project's cooperative-sticky (reference + candidate), as --thorough runs it."""
    print("== scale tier: 2,000 members x 1,000,000 partitions (NotTimeout shape), project's cooperative-sticky; "
          "peer: the reference call on the same input")
    w0, c0 = time.perf_counter(), time.process_time()
    rep = check_assignor("cooperative-sticky", examples=1, seed=seed, properties=["S1"], quality=False,
                         scale=[(2000, 500, 2000)])
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    p = rep["S1"]
    print(f"    S1 {p.verdict}: {p.note or (p.counterexample or {}).get('explanation')}")
    print(f"    whole case (input built, reference call, candidate call, I1-I4 judged): wall {wall:.1f} s  "
          f"cpu {cpu:.1f} s  target < 300 s: {'met' if wall < 300 else 'NOT met'}")


BLIND = [("planted_assignors:unknown_generation_trusted", "I6'"), ("planted_assignors:first_claim_compared", "I6'"),
         ("planted_assignors:stale_unsubscribed_drops_top", "I6'"), ("planted_assignors:member_count_sticky", "I4")]


def bench_blind(seed: int) -> None:
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
    print(f"== issue 34's planted candidates: 200 examples, with the input-class catalogue and without, seed {seed}")
    for target, pid in BLIND:
        for label, per_class in (("without", 0), ("with", None)):
            w0 = time.perf_counter()
            rep = check_assignor(target, examples=200, seed=seed, properties=[pid], quality=False,
                                 per_class=per_class)
            p = rep.properties[0]
            found = f"found after {p.examples} examples" if p.verdict == "violated" else f"NOT found ({p.verdict})"
            print(f"    {target.split(':')[1]:30s} {pid:4s} {label:7s} {found}; wall {time.perf_counter() - w0:5.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--assignors", default="range,roundrobin,sticky,cooperative-sticky")
    ap.add_argument("--sections", default="oracle,sizes,planted,checker,default,blind,scale")
    args = ap.parse_args()
    sections = args.sections.split(",")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if "oracle" in sections:
        bench_oracle(args.seed)
    if "sizes" in sections:
        bench_sizes(args.assignors.split(","), args.seed)
    if "planted" in sections:
        bench_planted(args.seed)
    if "checker" in sections:
        bench_checker(args.assignors.split(","), args.examples, args.seed)
    if "default" in sections:
        bench_default(args.assignors.split(","), args.seed)
    if "blind" in sections:
        bench_blind(args.seed)
    if "scale" in sections:
        bench_scale(args.seed)


if __name__ == "__main__":
    main()
