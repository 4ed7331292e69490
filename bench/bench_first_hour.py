"""What a new user waits for: Ctrl-C on the long commands, and a bad output path.

* ``groupspec verify`` and ``groupspec prove``: started, left to work for a few seconds (worker processes
  busy), then sent SIGINT as a terminal's Ctrl-C does (to the whole process group). Prints the seconds from
  the signal to the exit, the exit status, and whether any process of the group was left. Target: < 5 s.
* ``groupspec simulate new-consumer-joins --trace /nonexistent/dir/x.jsonl``: seconds to the one-line
  error. Target: < 2 s (the path is refused while the arguments are read, before any simulation).

No randomness; the figures depend on the machine's load, which is printed with them.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

GROUPSPEC = str(Path(sys.executable).with_name("groupspec"))


def interrupt(command: str, after: float) -> tuple[float, int | None, bool]:
    p = subprocess.Popen([GROUPSPEC, command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         start_new_session=True)
    time.sleep(after)
    t0 = time.perf_counter()
    os.killpg(p.pid, signal.SIGINT)
    try:
        p.wait(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    seconds = time.perf_counter() - t0
    left = subprocess.run(["pgrep", "-g", str(p.pid)], capture_output=True, text=True).stdout.split()
    return seconds, p.returncode, bool(left)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--after", type=float, default=8.0, help="seconds of work before the Ctrl-C")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for command in ("verify", "prove"):
        secs, rc, left = interrupt(command, args.after)
        verdict = "ok" if secs < 5 and rc == 130 and not left else "SLOW OR UNCLEAN"
        print(f"groupspec {command}: Ctrl-C after {args.after:g} s of work -> exit {rc} in {secs:.2f} s, "
              f"{'processes left behind' if left else 'no process left'} (target < 5 s: {verdict})")
    t0 = time.perf_counter()
    r = subprocess.run([GROUPSPEC, "simulate", "new-consumer-joins", "--trace", "/nonexistent/dir/x.jsonl"],
                       capture_output=True, text=True)
    secs = time.perf_counter() - t0
    lines = r.stderr.count("\n")
    print(f"groupspec simulate --trace /nonexistent/dir/x.jsonl: exit {r.returncode}, {lines} line on stderr, "
          f"{len(r.stdout)} bytes on stdout, in {secs:.2f} s (target < 2 s: {'ok' if secs < 2 else 'SLOW'})")


if __name__ == "__main__":
    main()
