"""Benchmark: the README's "A first look" commands, timed here, printed beside the figure the README gives.

The README promises times and state counts ("149 k states, about 2 s"). This runs each of its ``groupspec check``
and ``simulate`` lines as a user would (a new process, the engine already compiled: a warm-up run first), takes
the median wall time of a few runs and the CPU time of the median run, reads the state count from ``--json``,
and prints them next to the README's own comment, so a figure the machine cannot keep shows up at once. CPU
seconds are printed because a shared machine's wall clock is noisy (the load average is printed too).

Usage: python bench/bench_readme.py [--runs N] [--all]
  --all   also the lines the README marks as minutes long (cooperative 5 x 5: ~12 CPU-minutes, ~6 GB)
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


def main(argv: list[str]) -> int:
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 3
    everything = "--all" in argv
    lines = [(c, note) for c, note in readme_lines() if everything or "minutes" not in note.lower()]
    print(f"bench_readme: {len(lines)} README commands, {runs} runs each, load average {os.getloadavg()[0]:.1f}",
          flush=True)
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
