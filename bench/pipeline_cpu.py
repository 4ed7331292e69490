"""CPU-seconds of this process and every process under it (Spark's JVM, its Python daemon and workers),
read from /proc: the benchmarks' measure that the other engineers' load on the machine does not skew.

:func:`tree_cpu` sums user + system time of the live processes under (and including) this one, plus the
time of their children already reaped (``cutime``/``cstime``), split into ``driver`` (this process),
``jvm`` (java) and ``workers`` (Python under the JVM). A difference of two readings is the CPU a job used.
"""
from __future__ import annotations

import os
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[int, str, float, float] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    comm = raw[raw.index("(") + 1: raw.rindex(")")]
    f = raw[raw.rindex(")") + 2:].split()
    # fields after the name: state ppid ... utime(11) stime(12) cutime(13) cstime(14)
    own = (int(f[11]) + int(f[12])) / _TICK
    reaped = (int(f[13]) + int(f[14])) / _TICK
    return int(f[1]), comm, own, reaped


def tree_cpu(root: int | None = None) -> dict[str, float]:
    """``{"driver", "jvm", "workers", "reaped", "total"}`` CPU-seconds of ``root`` (default: this process) and its
    descendants (``/proc``; zeros where it is not available)."""
    out = {"driver": 0.0, "jvm": 0.0, "workers": 0.0, "reaped": 0.0}
    for _pid, role, own, reaped in _walk(root or os.getpid()):
        out[role] += own
        # children already reaped: the JVM's and the daemon's are Python workers; the driver's others
        out["workers" if role in ("jvm", "workers") else "reaped"] += reaped
    out["total"] = sum(out.values())
    return out


def diff(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    return {k: round(b[k] - a[k], 2) for k in a}


def load() -> str:
    try:
        return "load average %.1f %.1f %.1f" % os.getloadavg()
    except OSError:
        return "load average n/a"


class CpuMeter:
    """CPU-seconds of the process tree over a span, robust to processes that exit inside it (Spark kills
    Python workers idle for a minute, and a reaped worker's time may show in no ``cutime``): samples
    every process of the tree every ``period`` seconds and counts each one's last sample minus its first
    (0 for processes born inside the span). Use as a context manager; ``result`` is like :func:`tree_cpu`'s."""

    def __init__(self, period: float = 0.25) -> None:
        import threading

        self.period = period
        self._first: dict[int, float] = {}
        self._last: dict[int, tuple[str, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.result: dict[str, float] = {}

    def _sample(self, initial: bool = False) -> None:
        for pid, role, own in _tree(os.getpid()):
            if initial:
                self._first[pid] = own
            self._first.setdefault(pid, 0.0)
            self._last[pid] = (role, own)

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self._sample()

    def __enter__(self) -> "CpuMeter":
        self._sample(initial=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        out = {"driver": 0.0, "jvm": 0.0, "workers": 0.0, "reaped": 0.0}
        for pid, (role, own) in self._last.items():
            out[role] += own - self._first[pid]
        out = {k: round(v, 2) for k, v in out.items()}
        out["total"] = round(sum(out.values()), 2)
        self.result = out


def _tree(root: int) -> list[tuple[int, str, float]]:
    """``(pid, role, own CPU-seconds)`` of ``root`` and its live descendants."""
    return [(pid, role, own) for pid, role, own, _reaped in _walk(root)]


def _walk(root: int) -> list[tuple[int, str, float, float]]:
    """``(pid, role, own CPU-seconds, reaped children's CPU-seconds)`` of ``root`` and its live descendants;
    role: ``driver`` (root and its other children), ``jvm`` (java), ``workers`` (Python under the JVM)."""
    procs: dict[int, tuple[int, str, float, float]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for d in names:
        if d.isdigit():
            s = _stat(int(d))
            if s is not None:
                procs[int(d)] = s
    kids: dict[int, list[int]] = {}
    for pid, (ppid, *_rest) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    out = []
    stack = [(root, "driver")]
    while stack:
        pid, role = stack.pop()
        if pid not in procs:
            continue
        _ppid, comm, own, reaped = procs[pid]
        if pid != root:
            role = "jvm" if comm == "java" else ("workers" if role in ("jvm", "workers") else role)
        out.append((pid, role, own, reaped))
        stack.extend((k, role) for k in kids.get(pid, []))
    return out


_BUSY = "import time\nt0 = time.monotonic()\nwhile time.monotonic() - t0 < {s}:\n    pass\nprint(time.process_time())\n"


def session_ceiling(seconds: float = 2.0) -> dict[str, float]:
    """How much more CPU this session gets from two busy processes than from one, now: one busy-loop child for
    ``seconds`` of wall time, then two at once, then one again; ``{"one", "two"}`` CPU-seconds per wall-second (one:
    the mean of the two single runs) and ``"ratio"``.

    Linux gives every login session one share of the CPUs when they are contended (the scheduler's *autogroup*,
    ``/proc/sys/kernel/sched_autogroup_enabled``; each engineer on this machine runs in a session of their own), so
    while the machine is busy, two processes of one session get together what one would get alone: the ratio is
    the most that ``local[2]`` can gain over ``local[1]`` at that moment (2.0 on two idle cores)."""
    import subprocess
    import sys

    def busy(n: int) -> float:
        procs = [subprocess.Popen([sys.executable, "-c", _BUSY.format(s=seconds)], stdout=subprocess.PIPE, text=True)
                 for _ in range(n)]
        return sum(float(p.communicate()[0]) for p in procs) / seconds

    first = busy(1)
    two = busy(2)
    one = (first + busy(1)) / 2  # one, two, one: a load that drifts during the measure drifts out of the ratio
    return {"one": round(one, 2), "two": round(two, 2), "ratio": round(two / one, 2) if one else float("nan")}


def autogroup() -> str:
    """Whether the scheduler groups by session (``autogroup on``/``off``; ``n/a`` where the file is absent)."""
    try:
        return "autogroup " + ("on" if Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1" else "off")
    except OSError:
        return "autogroup n/a"
