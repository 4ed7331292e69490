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
    root = root or os.getpid()
    procs: dict[int, tuple[int, str, float, float]] = {}
    try:
        pids = [int(d) for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return {"driver": 0.0, "jvm": 0.0, "workers": 0.0, "reaped": 0.0, "total": 0.0}
    for pid in pids:
        s = _stat(pid)
        if s is not None:
            procs[pid] = s
    kids: dict[int, list[int]] = {}
    for pid, (ppid, *_rest) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    out = {"driver": 0.0, "jvm": 0.0, "workers": 0.0, "reaped": 0.0}
    stack = [(root, "driver")]
    while stack:
        pid, role = stack.pop()
        if pid not in procs:
            continue
        _ppid, comm, own, reaped = procs[pid]
        if pid != root:
            role = "jvm" if comm == "java" else ("workers" if role in ("jvm", "workers") else role)
        out[role] += own
        # children already reaped: the JVM's and the daemon's are Python workers; the driver's others
        out["workers" if role in ("jvm", "workers") else "reaped"] += reaped
        stack.extend((k, role) for k in kids.get(pid, []))
    out["total"] = sum(out.values())
    return out


def diff(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    return {k: round(b[k] - a[k], 2) for k in a}


def load() -> str:
    try:
        return "load average %.1f %.1f %.1f" % os.getloadavg()
    except OSError:
        return "load average n/a"
