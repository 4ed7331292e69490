"""Benchmark: the README's "A first look" commands, timed here, printed beside the figure the README gives.

The README promises times and state counts ("149 k states, about 2 s"). This runs each of its ``groupspec check``
and ``simulate`` lines as a user would (a new process, the engine already compiled: a warm-up run first), takes
the median wall time of a few runs and the CPU time of the median run, reads the state count from ``--json``,
and prints them next to the README's own comment, so a figure the machine cannot keep shows up at once. CPU
seconds are printed because a shared machine's wall clock is noisy (the load average is printed too).

Then every other timing the README gives (found in its text by a pattern, so a timing added later shows up as
"not measured" until it gets a measurement here): the engine's first compilation, measured with numba's cache
in an empty folder (``NUMBA_CACHE_DIR``) for each family and worker count, with whether the "first run only"
notice was printed; ``make smoke``; ``make test``; ``make verify``. The long ones run with ``--all`` only; otherwise they are
listed as skipped, beside the README's figure.

Usage: python bench/bench_readme.py [--runs N] [--all] [--smoke] [--only-compile]
  --all           also the lines the README marks as minutes long (cooperative 5 x 5: ~12 CPU-minutes, ~6 GB),
                  make smoke and make test
  --smoke         also make smoke (a minute or two)
  --only-compile  only the first-compilation rows
"""
from __future__ import annotations

import json
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GROUPSPEC = str(Path(sys.executable).with_name("groupspec"))


def readme_lines() -> list[tuple[str, str]]:
    """(command, the README's comment) for each ``.venv/bin/groupspec check|simulate`` line of "A first look"."""
    text = (ROOT / "README.md").read_text()
    block = text.split("## A first look", 1)[1].split("```", 2)[1]
    out = []
    for line in block.splitlines():
        m = re.match(r"\.venv/bin/groupspec (check|simulate) (.*?)(?:\s+#\s*(.*))?$", line.strip())
        if m:
            out.append((f"{m.group(1)} {m.group(2).strip()}", m.group(3) or ""))
    return out


def run_once(command: str) -> tuple[float, float, dict | None]:
    args = shlex.split(command)
    as_json = args[0] == "check"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = subprocess.run([GROUPSPEC, *args, *(["--json"] if as_json else [])], capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if r.returncode not in (0, 1):
        raise SystemExit(f"bench_readme: `groupspec {command}` failed ({r.returncode}): {r.stderr.strip()[-300:]}")
    data = json.loads(r.stdout) if as_json else None
    return wall, cpu, data


# Every timing phrase of the README: a number with a unit of time (s, min, CPU-s, CPU-seconds, CPU-minutes).
TIMING = re.compile(r"[~≈]?\d[\d.,–-]*(?: min \d+ s| ?(?:CPU-minutes|CPU-seconds|CPU-s|minutes|min|s))\b")

# What measures each of the README's timing phrases: (a piece of the sentence around it, the row that measures it).
CLAIMS = [
    ("first run also\ncompiles the checker's engine (~50 s", "compile"),
    ("first run only, ~50 s", "compile"),
    ("about 50 CPU-seconds", "compile"),
    ("measured 320 s by the clock", "compile"),
    ("~6 CPU-seconds", "compile parallel"),
    ("`make smoke` took 49–70 s", "make smoke"),
    ("under 2 minutes once set up", "make smoke"),
    ("takes about 35 minutes", "make test"),
    ("its main run took 1,915 s", "make test"),
    ("2,360 s against", "make test"),
    ("against 2,794 s", "make test"),
    ("about 2.5 minutes more", "make test"),
    ("ran it in 25 min 40 s", "make test"),
    ("took 5 min 18 s", "make verify"),
    ("set-up about 1 min", "make verify"),
    ("the main job\n249 s", "make verify"),
    ("load 14–19: 1.7, 22.6 and 1.3 CPU-s", "first look"),
    ("cold: + ~40 s", "compile"),
]


def readme_timings() -> list[tuple[str, str]]:
    """(the README's phrase around a timing, the row that measures it or "") for every timing outside the
    "A first look" block (whose lines the first table times)."""
    text = (ROOT / "README.md").read_text()
    head, rest = text.split("## A first look", 1)
    intro, _block, tail = rest.split("```", 2)
    out = []
    for part in (head, intro, tail):
        for m in TIMING.finditer(part):
            around = part[max(0, m.start() - 60): m.end() + 20]
            row = next((r for piece, r in CLAIMS if m.group(0) in piece and piece.replace("\n", "\n") in part
                        and part.find(piece) <= m.start() < part.find(piece) + len(piece)), "")
            out.append((" ".join(around.split()), row))
    return out


def first_compile(args: list[str], cache: Path) -> tuple[float, float, bool]:
    """(wall s, CPU s, notice printed) of ``groupspec check ARGS`` with numba's cache in ``cache``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = subprocess.run([GROUPSPEC, "check", *args], capture_output=True, text=True, env=env)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if r.returncode not in (0, 1):
        raise SystemExit(f"bench_readme: `groupspec check {' '.join(args)}` failed ({r.returncode}): {r.stderr[-300:]}")
    return wall, cpu, "compiling the checker's" in r.stdout + r.stderr


# One machine's first runs in order: the first compiles; each later one says whether it compiled again
# (its time beside the warm run of the same line) and whether it said so.
COMPILE_ORDER = [
    ["--protocol", "eager", "--members", "2", "--partitions", "2"],
    ["--protocol", "consumer", "--members", "2", "--partitions", "2"],
    ["--protocol", "classic-to-consumer", "--members", "2", "--partitions", "2"],
    ["--protocol", "eager", "--members", "2", "--partitions", "2", "--workers", "2"],
    ["--protocol", "consumer", "--members", "2", "--partitions", "2", "--workers", "2"],
]


def compile_rows() -> list[tuple[str, float, float, bool, float]]:
    """(command, wall, CPU, notice, warm CPU) for each line of COMPILE_ORDER on a machine that never compiled."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-numba-") as cache:
        for args in COMPILE_ORDER:
            wall, cpu, notice = first_compile(args, Path(cache))
            rows.append((" ".join(args), wall, cpu, notice))
        warm = [first_compile(args, Path(cache))[1] for args in COMPILE_ORDER]
    return [(c, w, cpu, n, wc) for (c, w, cpu, n), wc in zip(rows, warm)]


def make_target(target: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = subprocess.run(["make", target], cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        print(f"bench_readme: make {target} failed ({r.returncode}); its time is still printed", flush=True)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 3
    everything = "--all" in argv
    only_compile = "--only-compile" in argv
    print(f"bench_readme: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (figures under load are "
          "indicative: CPU seconds are the steadier ones)", flush=True)
    if not only_compile:
        first_look(runs, everything)
    measured: dict[str, str] = {}
    print("\nfirst compilation of the engine (numba's cache in an empty folder), in the order a new user meets it:")
    print(f"{'check ...':58}  {'wall':>7}  {'CPU':>7}  {'warm CPU':>8}  {'compiled?':>9}  notice  accurate")
    crows = compile_rows()
    for i, (cmd, wall, cpu, notice, warm) in enumerate(crows):
        compiled = cpu - warm > 5.0  # seconds of CPU beyond the warm run: numba compiled
        accurate = "yes" if notice == compiled else "NO"
        print(f"{cmd:58}  {wall:5.1f} s  {cpu:5.1f} s  {warm:6.1f} s  {('yes' if compiled else 'no'):>9}  "
              f"{('yes' if notice else 'no'):6}  {accurate}")
    cmd, wall, cpu, _n, warm = crows[0]
    measured["compile"] = f"{wall:.0f} s wall, {cpu - warm:.0f} CPU-s beyond a warm run (first line above)"
    par = next(r for r in crows if "--workers" in r[0])
    measured["compile parallel"] = (f"{par[1]:.0f} s wall, {par[2] - par[4]:.1f} CPU-s beyond a warm run "
                                    "(first --workers line above)")
    if not only_compile:
        if everything or "--smoke" in argv:
            w, c = make_target("smoke")
            measured["make smoke"] = f"{w:.0f} s wall, {c:.0f} CPU-s"
        if everything:
            w, c = make_target("test")
            measured["make test"] = f"{w / 60:.0f} min {w % 60:.0f} s wall, {c / 60:.0f} CPU-minutes"
            w, c = make_target("verify")
            measured["make verify"] = f"{w / 60:.0f} min {w % 60:.0f} s wall, {c / 60:.0f} CPU-minutes"
        measured["first look"] = "the table above"
    print("\nthe README's other timings:")
    for phrase, row in readme_timings():
        got = measured.get(row) if row else None
        if not row:
            got = "NOT MEASURED: add it to CLAIMS in bench/bench_readme.py"
        elif got is None:
            got = {"make smoke": "skipped (--smoke or --all)", "make test": "skipped (--all)",
                   "make verify": "skipped (--all)"}.get(row, "skipped")
        print(f"  README: ...{phrase}...\n      measured: {got}")
    return 0


def first_look(runs: int, everything: bool) -> None:
    lines = [(c, note) for c, note in readme_lines() if everything or "minutes" not in note.lower()]
    print(f"bench_readme: {len(lines)} README commands, {runs} runs each", flush=True)
    for command, _ in lines:  # warm-up: the engine's compilation (once per machine) is not what the README times
        run_once(command)
    rows = []
    for command, note in lines:
        samples = sorted((run_once(command) for _ in range(runs)), key=lambda s: s[0])
        wall, cpu, data = samples[len(samples) // 2]
        states = f"{data['states']:,}" if data and "states" in data else "-"
        rows.append((command, note, wall, cpu, states, statistics.pstdev(s[0] for s in samples)))
    width = max(len(r[0]) for r in rows)
    print(f"{'command':{width}}  {'median wall':>11}  {'CPU':>7}  {'states':>12}  README says")
    for command, note, wall, cpu, states, _sd in rows:
        print(f"{command:{width}}  {wall:9.1f} s  {cpu:5.1f} s  {states:>12}  {note}")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
