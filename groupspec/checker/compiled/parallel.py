"""The compiled engine's search on several cores, for every family: expansion in worker threads, one ordered
merge.

Theory of operation
-------------------
The one-worker search (``search.search``) does two kinds of work per expanded state: *expansion* — the
successors of its row, each successor's symmetry-reduced key and 96-bit fingerprint, the properties of
each successor and of each step — which depends on the row alone; and the *merge* — looking each
fingerprint up in the seen set, numbering the new states, recording parent, action, flags and edges —
which depends on everything stored before. Expansion is most of the time (about nine tenths, see
docs/scale.md), so it is what runs in parallel:

* the rows waiting in the frontier are cut into *jobs* of consecutive rows (state-id order); ``workers``
  threads run ``search.expand`` on jobs ahead of the merge, each into its own buffer of successor rows,
  actions, fingerprints and property bits;
* the main thread runs ``search.merge`` on the jobs strictly in order, doing exactly what ``search.search``
  does per step, in the same order, on the same seen set.

So the states, their ids, parents, actions, edges and every "first state that ..." are those of the
one-worker search, whatever the number of workers or the timing of the threads: verdicts, counts and
counterexamples are identical by construction (and ``tests/test_scale_parallel.py`` compares them).

The families with a target table (KIP-848, the migration): a job whose expansion needs a target the table
does not hold stops at that row (nothing of the row written) with the query in the job's own ``tq``; the
worker that ran it computes the target with the model (under a lock: one fill at a time; a target two
workers asked for at once is stored twice, the same answer in the same slot), stores it (the table is copied
on write while it is shared, ``Targets.shared``, so another worker sees it before or after a fill) and
resumes the job at the row it stopped at. The main thread only merges. (Handing each stopped job back to the
main thread to fill and resubmit put about 1,500 round trips per million states through it, and a stopped
job at the head of the line held the merge up.) The answers are the model's whatever the timing, so the
result is the serial one.

A worker skips what the merge will not read: the properties and the row of a successor it can tell is
already stored (``search.expand``: the seen set's first ``known`` states, read while the merge fills it, and
the job's own earlier successors).

Threads, not processes: ``search.expand`` and ``search.merge`` are compiled with ``nogil=True``, so the
worker threads and the merge run on separate cores at once, and they share the frontier and the store
without copying or shared-memory segments (a process per worker would ship every successor row between
processes, which is the very work being saved).
"""
from __future__ import annotations

import threading
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

import numpy as np

from . import kernel as K
from . import lean as L
from .search import B_CONV, B_EXCL, B_FENCE, B_GEN, B_SOME, BATCH_DONE, LTAB_SLOTS, M_LEN, NEED_TARGET, X_LEN, X_ROW
from .search import expand, merge

__all__ = ["B_CONV", "B_EXCL", "B_FENCE", "B_GEN", "B_SOME", "JOB_ROWS", "expand", "merge", "run_search"]

JOB_ROWS = 1024  # rows expanded per job
AHEAD = 2  # jobs per worker expanded ahead of the merge
MIN_JOB_ROWS = 64  # the least a job is cut to when the frontier runs low (``_job_rows``)


def _job_rows(length: int, more_queued: bool, workers: int) -> int:
    """The rows per job for a segment of ``length`` rows: ``JOB_ROWS``, or, when it is the last input there
    is (``more_queued`` false: the search's tail, or its start), a share per worker, so that a small
    segment still keeps every worker busy (never below ``MIN_JOB_ROWS``, which keeps a job's fixed cost
    small beside its rows)."""
    if more_queued:
        return JOB_ROWS
    return max(1, min(JOB_ROWS, max(MIN_JOB_ROWS, -(-length // workers))))


class _Job:
    """One job's input slice and its buffers (reused once merged)."""

    def __init__(self, rows: int, maxs: int, width: int, query: int) -> None:
        cap = rows * maxs
        self.srows = np.empty((cap, width), np.int16)
        self.sact = np.empty(cap, np.uint8)
        self.sfp = np.empty(cap, np.uint64)
        self.sfq = np.empty(cap, np.uint32)
        self.sbits = np.empty(cap, np.uint8)
        self.sref = np.empty(cap, np.int64)  # per successor: its stored id, -2 - a repeat's first position, or -1
        self.stid = np.empty(cap, np.int32)  # per successor: its id, as the merge resolves it
        self.scount = np.empty(rows, np.int64)
        self.bctl = np.zeros(M_LEN, np.int64)
        self.xctl = np.zeros(X_LEN, np.int64)  # where the expansion stopped (for a target); its index's fill
        self.tq = np.zeros(query, np.int64)  # the target it asked for
        self.ltab = np.empty(LTAB_SLOTS, np.int32)  # the job's index of its successors
        self.lo = 0
        self.first_id = 0
        self.nrows = 0
        self.inseg: np.ndarray | None = None


def run_search(kn: Any, store: "Any", front: L.Frontier, ctl: np.ndarray, outseg: np.ndarray, max_states: int,
               workers: int, on_grow: Callable[[], None], progress: Callable[[], None] | None,
               chunk: int, table_load: float) -> tuple[np.ndarray, bool, float]:
    """Run the search to the end (or ``max_states``) with ``workers`` expansion threads.

    ``store`` holds the growing arrays as attributes (``table, fpq, parent, pact, flags, outdeg,
    edst, eact``); ``on_grow()`` enlarges them as the one-worker driver does. Returns the last output
    segment (its ``ctl[L_OLEN]`` rows not yet queued), whether the search completed, and the CPU seconds
    of the main thread (the merge and this driver: the part that does not run in parallel)."""
    c0 = time.thread_time()
    tg = kn.targets
    depth = AHEAD * workers + 1  # jobs expanded ahead of the merge
    free = [_Job(JOB_ROWS, kn.maxs, kn.F, tg.tq.shape[0]) for _ in range(depth + 1)]
    inflight: deque[tuple[_Job, Future[int]]] = deque()
    cur: tuple[np.ndarray, int] | None = None  # the input segment being cut into jobs, and its next row
    cur_len = 0
    cur_rows = JOB_ROWS  # its rows per job
    next_id = 0  # state id of the next row to hand out
    last_report = 0
    complete = True

    fill_lock = threading.Lock()

    def run(job: _Job, lo: int, table: np.ndarray, fpq: np.ndarray, known: int) -> int:
        """Expand ``job`` from row ``lo`` to its end, on a worker thread, filling every target it stops for."""
        while True:
            tk, tv, _tq = tg.args()  # the table as it is now (a fill replaces it, never changes it: Targets.shared)
            status = expand(kn.fam, kn.P, kn.TM, kn.blocks, kn.plan, kn.words, job.inseg, job.lo, lo,
                            job.lo + job.nrows, job.srows, job.sact, job.sfp, job.sfq, job.sbits, job.scount, job.xctl,
                            tk, tv, job.tq, table, fpq, known, job.ltab, job.sref)
            if status != NEED_TARGET:
                return int(status)
            with fill_lock:
                tg.fill(job.tq)
            lo = int(job.xctl[X_ROW])

    def submit(pool: ThreadPoolExecutor) -> bool:
        nonlocal cur, cur_len, cur_rows, next_id
        if cur is None or cur[1] >= cur_len:
            nxt = front.pop()
            if nxt is None:
                return False
            cur, cur_len = (nxt[0], 0), nxt[1]
            cur_rows = _job_rows(cur_len, bool(front.queue), workers)
        seg, pos = cur
        hi = min(cur_len, pos + cur_rows)
        job = free.pop()
        job.inseg, job.first_id, job.nrows, job.lo = seg, next_id, hi - pos, pos
        job.bctl[:] = 0
        job.xctl[:] = 0
        next_id += hi - pos
        cur = (seg, hi)
        # the seen set as it is now: its first ``known`` states are stored for good (see search.expand)
        inflight.append((job, pool.submit(run, job, pos, store.table, store.fpq, int(ctl[K.CT_COUNT]))))
        return True

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="groupspec-expand") as pool:
        try:
            while True:
                while len(inflight) < depth and submit(pool):
                    pass
                if len(inflight) < workers and ctl[L.L_OLEN] > 0:
                    # the input is used up and a worker would wait: the states merged so far are the next
                    # input (the rows stay in id order: the output segment is queued behind everything
                    # handed out, as when nothing is in flight)
                    outseg = front.hand_over(outseg, ctl)
                    continue
                if not inflight:
                    break
                job, fut = inflight.popleft()
                fut.result()  # expanded to its end (a worker's exception is raised here)
                while True:
                    s = store
                    status = merge(kn.fam, kn.P, job.first_id, job.nrows, job.srows, job.sact, job.sfp, job.sfq, job.sbits,
                                   job.sref, job.stid, job.scount, job.bctl, outseg, s.table, s.fpq, s.parent, s.pact, s.flags,
                                   s.outdeg, s.edst, s.eact, ctl, max_states, table_load)
                    if status == L.GROW:
                        on_grow()
                        continue
                    if status == L.OUT_FULL:
                        outseg = front.hand_over(outseg, ctl)
                        continue
                    break
                job.inseg = None
                free.append(job)
                if status == L.LIMIT:
                    complete = False
                    break
                if progress is not None and ctl[K.CT_HEAD] - last_report >= chunk:
                    last_report = int(ctl[K.CT_HEAD])
                    progress()
        finally:
            for _job, fut in inflight:
                fut.cancel()
            inflight.clear()
    if progress is not None and not complete:
        progress()
    return outseg, complete, time.thread_time() - c0

