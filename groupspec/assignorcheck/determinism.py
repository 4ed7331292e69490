"""Determinism beyond one call: across processes (I10p) and across instances in one process (I10i).

Theory of operation
-------------------
I10 (in :mod:`.check`) calls the candidate twice and once with the input reordered, all in this process. Two
kinds of nondeterminism escape it:

* **Across processes (I10p).** Python randomises ``str`` hashing per process, so an assignor that iterates a
  ``set`` (or a dict built from one) of topic or member names gives different results in different consumer
  processes, and a group whose leader changes gets a different assignment (faust-streaming's assignor does
  this). The check starts eight worker processes (:mod:`.procworker`) with ``PYTHONHASHSEED`` 1 to 8 (16 with
  ``--thorough``), loads the same target in each, sends all of them the same input before reading any answer
  (so they compute in parallel: a call's time limit there is ``--call-timeout`` times the workers per core,
  ``worker_call_timeout``) and compares the results as sets; two seeds are not enough, since results can
  agree under seeds 1, 2, 3, 5 and differ under 4, 6, 7, 8. The workers stay up for the whole run, so one
  example costs one call per worker and one JSON round trip each; Hypothesis shrinks as usual.
  It applies to candidates named by a target (``module:attribute`` or a built-in name), which a new process can
  load; an object handed over from Python is not applicable.
* **Across instances (I10i).** Two consumers in one process each own an assignor instance. An assignor that
  keeps state in class attributes (aiokafka's and kafka-python 2.0.x's sticky assignors) lets one consumer's
  state leak into the other's. For kafka-python/aiokafka assignors the check drives the members as one process
  does (every member's ``on_assignment`` first, then every member's ``metadata``) and compares with each
  member alone; for any candidate with instances it then calls instance A on input S, instance B on another
  input S2, A on S again and B on S: all results must agree. A plain function has no instances: not
  applicable.

Both are skipped (not applicable) when the candidate declares itself nondeterministic
(``--nondeterministic-ok``).
"""
from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
from typing import Any

from .core import Assignment, as_sets, canonical, diff_assignments
from .engine import State, Ctx, Skip
from .load import BUILTIN_NAMES
from .racks import racks_of

HASH_SEEDS = tuple(range(1, 9))  #: the default: PYTHONHASHSEED 1..8, one worker process each
_STARTUP_SECONDS = 60.0


class ProcessWorker:
    """A worker process holding the candidate loaded under one ``PYTHONHASHSEED``; one JSON line per call.

    ``wait=False`` starts the process without waiting for it to load the candidate (:meth:`ready` waits), so
    several workers load in parallel."""

    def __init__(self, target: str, hash_seed: int, call_timeout: float, kind: str | None = None,
                 wait: bool = True):
        self.target, self.hash_seed, self.call_timeout, self.kind = target, hash_seed, call_timeout, kind
        self.proc: subprocess.Popen[str] | None = None
        self.error: str | None = None
        self._spawn()
        if wait:
            self.ready()

    def _spawn(self) -> None:
        env = dict(os.environ)
        env["PYTHONHASHSEED"] = str(self.hash_seed)
        paths = [os.getcwd()] + [p for p in sys.path if p]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "groupspec.assignorcheck.procworker", self.target, str(self.call_timeout)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
            cwd=os.getcwd(), bufsize=1)

    def ready(self) -> None:
        """Wait for the worker to say it loaded the candidate (or why it could not)."""
        if self.proc is None:
            return
        first = self._read(_STARTUP_SECONDS)
        if first is None or "ready" not in first:
            self.error = (first or {}).get("load_error") or "the worker process did not start"
            self.close()

    def _start(self) -> None:
        self._spawn()
        self.ready()

    def _read(self, timeout: float) -> dict[str, Any] | None:
        assert self.proc is not None and self.proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        try:
            if not sel.select(timeout):
                return None
            line = self.proc.stdout.readline()
        finally:
            sel.close()
        if not line:
            return None
        try:
            answer: dict[str, Any] = json.loads(line)
        except json.JSONDecodeError:
            return None
        return answer

    def send(self, ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> str | None:
        """Hand the worker one input; ``None`` when sent, else why not."""
        if self.proc is None:
            self._start()
            if self.proc is None:
                return self.error or "worker process unavailable"
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps([ppt, subs, racks_of(ppt)]) + "\n")
            self.proc.stdin.flush()
        except OSError:
            self.close()
            return "the worker process died"
        return None

    def receive(self) -> tuple[Assignment | None, str]:
        """The answer to the input :meth:`send` handed over: the result, or ``(None, why)``."""
        if self.proc is None:
            return None, self.error or "worker process unavailable"
        ans = self._read(self.call_timeout + 10.0)
        if ans is None:
            self.close()  # hung or died: the next call starts a fresh worker
            return None, f"no answer from the worker process within {self.call_timeout + 10.0:g} s"
        if "failure" in ans:
            return None, str(ans["failure"])
        return {m: [(t, int(p)) for t, p in parts] for m, parts in ans["out"].items()}, ""

    def call(self, ppt: dict[str, int], subs: dict[str, dict[str, Any]]) -> tuple[Assignment | None, str]:
        """The candidate's result in this process, or ``(None, why)`` when it failed there."""
        why = self.send(ppt, subs)
        return (None, why) if why else self.receive()

    def close(self) -> None:
        if self.proc is not None:
            try:
                if self.proc.stdin:
                    self.proc.stdin.close()
                self.proc.kill()
                self.proc.wait(timeout=5)
            except Exception:  # noqa: BLE001 - best effort: the process may already be gone
                pass
            self.proc = None


def _workers(ctx: Ctx) -> list[ProcessWorker]:
    ws = getattr(ctx, "_proc_workers", None)
    if ws is None:
        target = ctx.cand.target
        seeds = hash_seeds(ctx)
        ws = [ProcessWorker(target, h, worker_call_timeout(ctx.runner.call_timeout or 30.0, len(seeds)), wait=False)
              for h in seeds]
        for w in ws:  # started together, they load the candidate in parallel
            w.ready()
        ctx._proc_workers = ws  # type: ignore[attr-defined]
        for w in ws:
            ctx.closers.append(w.close)
    return ws


def worker_call_timeout(call_timeout: float, workers: int, cpus: int | None = None) -> float:
    """A call's time limit in a worker process: ``--call-timeout`` times the number of workers that share each
    core (they all compute the same input at once), so that a call that keeps within the limit alone (I11's
    judgement, in this process) does not time out only because eight workers share two cores."""
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return call_timeout * max(1, -(-workers // max(1, cpus)))


def hash_seeds(ctx: Ctx) -> tuple[int, ...]:
    """The ``PYTHONHASHSEED`` values of the worker processes: 1..n (``ctx.hash_seeds``, default 8)."""
    return tuple(range(1, getattr(ctx, "hash_seeds", len(HASH_SEEDS)) + 1))


def applies_processes(ctx: Ctx) -> str | None:
    if ctx.nondeterministic_ok:
        return "the candidate declares itself nondeterministic (--nondeterministic-ok)"
    target = ctx.cand.target
    if not target or not (":" in target or target in BUILTIN_NAMES):
        return "the candidate was handed over as a Python object; name it module:attribute to check it in other processes"
    errors = [w.error for w in _workers(ctx) if w.error]
    if errors:
        return f"the target cannot be loaded in a worker process: {errors[0]}"
    return None


def p_across_processes(state: State, ctx: Ctx) -> tuple[str, Assignment | None, dict[str, Any]] | None:
    """Every worker gets the input before any answer is read, so the workers compute in parallel."""
    ppt, subs = state
    ws = _workers(ctx)
    sent = [w.send(ppt, subs) for w in ws]
    answers = [(None, why) if why else w.receive() for w, why in zip(ws, sent)]
    outs: list[Assignment] = []
    for w, (out, why) in zip(ws, answers):
        if out is None:
            raise Skip(f"in the worker process with PYTHONHASHSEED={w.hash_seed}: {why}")
        outs.append(out)
    seeds = [w.hash_seed for w in ws]
    first = as_sets(outs[0])
    same = [h for h, out in zip(seeds, outs) if as_sets(out) == first]
    other = [(h, out) for h, out in zip(seeds, outs) if as_sets(out) != first]
    if other:
        h, b = other[0]
        how = diff_assignments(outs[0], b, f"under PYTHONHASHSEED={seeds[0]} it got")
        return (f"the result depends on the process's string hashing: under PYTHONHASHSEED={h} {how} "
                f"(agrees with hash seed {seeds[0]} under {_seeds(same)}, differs under {_seeds([x for x, _ in other])})",
                b, {"hash_seeds": seeds, "output_other_process": canonical(outs[0]),
                    "differing_hash_seeds": [x for x, _ in other]})
    return None


def _seeds(xs: list[int]) -> str:
    return ", ".join(map(str, xs))


def applies_instances(ctx: Ctx) -> str | None:
    if ctx.nondeterministic_ok:
        return "the candidate declares itself nondeterministic (--nondeterministic-ok)"
    if ctx.cand.instances is None:
        return "a plain function has no instances"
    return None


def p_across_instances(pair: tuple[State, State], ctx: Ctx) -> tuple[str, Assignment | None, dict[str, Any]] | None:
    (ppt, subs), (ppt2, subs2) = pair
    assert ctx.cand.instances is not None
    alone = ctx.round(ppt, subs)
    inst_a, inst_b = ctx.cand.instances(), ctx.cand.instances()
    a1 = ctx.round(ppt, subs, inst_a)
    if as_sets(a1) != as_sets(alone):
        why = diff_assignments(alone, a1, "with each member alone it got")
        return (f"members driven as consumers of one process (every on_assignment, then every metadata) get "
                f"another result: {why}", a1, {})
    try:
        ctx.round(ppt2, subs2, inst_b)
    except Skip:
        pass  # B failing on the other input is I11's business; what matters is whether A is affected
    a2 = ctx.round(ppt, subs, inst_a)
    extra = {"other_input": {"partitions_per_topic": ppt2, "subscriptions": subs2}}
    if as_sets(a2) != as_sets(a1):
        why = diff_assignments(a1, a2, "before, instance A got")
        return (f"instance A's result changed after another instance B was called on another input: {why}",
                a2, extra)
    b1 = ctx.round(ppt, subs, inst_b)
    if as_sets(b1) != as_sets(a1):
        why = diff_assignments(a1, b1, "instance A got")
        return f"two instances give different results on the same input: {why}", b1, extra
    return None
