"""The compiled engine's search on several cores, for every family: expansion on every thread, one ordered
merge.

Theory of operation
-------------------
The one-worker search (``search.search``) does two kinds of work per expanded state: *expansion* — the
successors of its row, each successor's symmetry-reduced key and 96-bit fingerprint, the properties of
each successor and of each step — which depends on the row alone; and the *merge* — looking each
fingerprint up in the seen set, numbering the new states, recording parent, action, flags and edges —
which depends on everything stored before. Expansion is most of the time (about nine tenths, see
docs/scale.md), so it is what runs in parallel:

* the rows waiting in the frontier are cut into *jobs* of consecutive rows (state-id order) and lined up in
  that order; ``workers`` threads each take the next job and run ``search.expand`` on it, into the job's own
  buffers of successor rows, actions, fingerprints and property bits;
* the jobs are merged (``search.merge``) strictly in line order, doing exactly what ``search.search`` does per
  step, in the same order, on the same seen set. There is no merging thread: whichever thread finds the job
  at the head of the line expanded, while no other is merging, merges it and every expanded job behind it,
  then goes back to expanding. So exactly ``workers`` threads run (a third, merging thread on two cores
  waited for a core at every job and put its cache traffic between the workers'), and a job is often merged
  by the thread that just expanded it, its buffers still in that core's caches.

So the states, their ids, parents, actions, edges and every "first state that ..." are those of the
one-worker search, whatever the number of workers or the timing of the threads: verdicts, counts and
counterexamples are identical by construction (and ``tests/test_scale_parallel.py`` compares them).

When the input is used up and a thread would wait, the states merged so far become the input (queued behind
every row handed out, so the rows stay in id order), and the last segment there is is cut into a share per
worker (``_job_rows``), so that the start and the tail of the search, where the frontier is small, keep
every thread busy.

The families with a target table (KIP-848, the migration): a job whose expansion needs a target the table
does not hold stops at that row (nothing of the row written) with the query in the job's own ``tq``; the
thread expanding it computes the target with the model (under a lock: one fill at a time; a target two
threads asked for at once is stored twice, the same answer in the same slot), stores it (the table is copied
on write while it is shared, ``Targets.shared``, so another thread sees it before or after a fill) and
resumes the job at the row it stopped at. The answers are the model's whatever the timing, so the result is
the serial one.

A thread skips what the merge will not read: the properties and the row of a successor it can tell is
already stored (``search.expand``: the seen set's first ``known`` states, as they were when the job was
taken, and the job's own earlier successors).

Threads, not processes: ``search.expand`` and ``search.merge`` are compiled with ``nogil=True``, so the
threads run on separate cores at once, and they share the frontier and the store without copying or
shared-memory segments (a process per worker would ship every successor row between processes, which is the
very work being saved).
"""
from __future__ import annotations

import threading
import time
from collections import deque
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
        self.done = False  # expanded to its end
        self.table: np.ndarray | None = None  # the seen set as it was when the job was taken, and its first
        self.fpq: np.ndarray | None = None  # ``known`` states (stored for good)
        self.known = 0


def run_search(kn: Any, store: "Any", front: L.Frontier, ctl: np.ndarray, outseg: np.ndarray, max_states: int,
               workers: int, on_grow: Callable[[], None], progress: Callable[[], None] | None,
               chunk: int, table_load: float) -> tuple[np.ndarray, bool, float]:
    """Run the search to the end (or ``max_states``) on ``workers`` threads.

    ``store`` holds the growing arrays as attributes (``table, fpq, parent, pact, flags, outdeg,
    edst, eact``); ``on_grow()`` enlarges them as the one-worker driver does. Returns the last output
    segment (its ``ctl[L_OLEN]`` rows not yet queued), whether the search completed, and the CPU seconds
    spent merging (on whichever thread: the part that does not run in parallel)."""
    run = _Run(kn, store, front, ctl, outseg, max_states, workers, on_grow, progress, chunk, table_load)
    threads = [threading.Thread(target=run.work, name=f"groupspec-search-{i}", daemon=True) for i in range(workers)]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except BaseException:  # Ctrl-C on the waiting thread: stop the workers before leaving
        with run.cv:
            run.stop = True
            run.cv.notify_all()
        for t in threads:
            t.join()
        raise
    if run.error is not None:
        raise run.error
    if progress is not None and not run.complete:
        progress()
    return run.outseg, run.complete, run.merge_cpu


class _Run:
    """One parallel search's shared state. Every thread runs :meth:`work`: it takes the next job (rows in
    state-id order) and expands it, and whichever thread finds the job at the head of the line expanded
    while no other is merging merges it, and every expanded job behind it, in order (``merging`` says a
    thread is at it). So exactly ``workers`` threads run: no merging thread waits for a core, and a job
    is often merged by the thread whose caches hold its buffers. ``mu`` guards the line, the frontier, the
    output segment's hand-over and the growth of the store; a merge itself runs outside it (only the
    merging thread writes the store, ``ctl`` and the output segment)."""

    def __init__(self, kn: Any, store: Any, front: L.Frontier, ctl: np.ndarray, outseg: np.ndarray, max_states: int,
                 workers: int, on_grow: Callable[[], None], progress: Callable[[], None] | None, chunk: int,
                 table_load: float) -> None:
        self.kn, self.store, self.front, self.ctl, self.outseg = kn, store, front, ctl, outseg
        self.max_states, self.workers, self.on_grow, self.progress = max_states, workers, on_grow, progress
        self.chunk, self.table_load = chunk, table_load
        self.depth = AHEAD * workers + 1  # jobs taken and not yet merged, at most
        tg = kn.targets
        self.free = [_Job(JOB_ROWS, kn.maxs, kn.F, tg.tq.shape[0]) for _ in range(self.depth)]
        self.line: deque[_Job] = deque()  # jobs taken, in state-id order, until merged
        self.cur: np.ndarray | None = None  # the input segment being cut into jobs
        self.cur_pos = self.cur_len = 0
        self.cur_rows = JOB_ROWS
        self.next_id = 0  # state id of the next row to hand out
        self.known = int(ctl[K.CT_COUNT])  # stored states whose fingerprints are written (read under ``mu``)
        self.merging = False
        self.stop = False
        self.complete = True
        self.error: BaseException | None = None
        self.merge_cpu = 0.0
        self.last_report = 0
        self.mu = threading.Lock()
        self.cv = threading.Condition(self.mu)
        self.fill_lock = threading.Lock()

    def work(self) -> None:
        try:
            self._work()
        except BaseException as e:  # noqa: BLE001 - handed to the waiting thread, which raises it
            with self.cv:
                if self.error is None:
                    self.error = e
                self.stop = True
                self.cv.notify_all()

    def _work(self) -> None:
        while True:
            with self.cv:
                while True:
                    if self.stop:
                        return
                    if not self.merging and self.line and self.line[0].done:
                        self.merging = True
                        job = None
                        break
                    job = self._take()
                    if job is not None:
                        break
                    if not self.merging and not self.line:
                        if self.ctl[L.L_OLEN] == 0:  # nothing left anywhere: the search is over
                            self.stop = True
                            self.cv.notify_all()
                            return
                        self.outseg = self.front.hand_over(self.outseg, self.ctl)
                        continue
                    self.cv.wait()
            if job is None:
                self._merge_line()
            else:
                self._expand(job)
                with self.cv:
                    job.done = True
                    self.cv.notify_all()

    def _take(self) -> _Job | None:
        """The next job, cut from the input (under ``mu``), or None: the line is full, or the input is used
        up. When it is used up and a thread would wait, the rows merged so far become the input (queued
        behind everything handed out, so still in id order), unless a merge is writing them."""
        if len(self.line) >= self.depth:
            return None
        if self.cur is None or self.cur_pos >= self.cur_len:
            nxt = self.front.pop()
            if nxt is None and not self.merging and self.line and len(self.line) < self.workers \
                    and self.ctl[L.L_OLEN] > 0:
                self.outseg = self.front.hand_over(self.outseg, self.ctl)
                nxt = self.front.pop()
            if nxt is None:
                return None
            self.cur, self.cur_pos, self.cur_len = nxt[0], 0, nxt[1]
            self.cur_rows = _job_rows(self.cur_len, bool(self.front.queue), self.workers)
        pos = self.cur_pos
        hi = min(self.cur_len, pos + self.cur_rows)
        job = self.free.pop()
        job.inseg, job.first_id, job.nrows, job.lo = self.cur, self.next_id, hi - pos, pos
        job.bctl[:] = 0
        job.xctl[:] = 0
        job.done = False
        # the seen set as it is now: its first ``known`` states are stored for good (see search.expand)
        job.table, job.fpq, job.known = self.store.table, self.store.fpq, self.known
        self.next_id += hi - pos
        self.cur_pos = hi
        self.line.append(job)
        return job

    def _expand(self, job: _Job) -> None:
        """Expand ``job`` to its end, filling every target it stops for (outside ``mu``)."""
        kn, tg = self.kn, self.kn.targets
        lo = job.lo
        while True:
            tk, tv, _tq = tg.args()  # the table as it is now (a fill replaces it, never changes it: Targets.shared)
            status = expand(kn.fam, kn.P, kn.TM, kn.blocks, kn.plan, kn.words, job.inseg, job.lo, lo,
                            job.lo + job.nrows, job.srows, job.sact, job.sfp, job.sfq, job.sbits, job.scount, job.xctl,
                            tk, tv, job.tq, job.table, job.fpq, job.known, job.ltab, job.sref)
            if status != NEED_TARGET:
                return
            with self.fill_lock:
                tg.fill(job.tq)
            lo = int(job.xctl[X_ROW])

    def _merge_line(self) -> None:
        """Merge the expanded jobs at the head of the line, in order, while there are (this thread holds
        ``merging``)."""
        kn, ctl = self.kn, self.ctl
        while True:
            c0 = time.thread_time()
            with self.cv:
                job = self.line[0]
            while True:
                s = self.store
                status = merge(kn.fam, kn.P, job.first_id, job.nrows, job.srows, job.sact, job.sfp, job.sfq, job.sbits,
                               job.sref, job.stid, job.scount, job.bctl, self.outseg, s.table, s.fpq, s.parent, s.pact,
                               s.flags, s.outdeg, s.edst, s.eact, ctl, self.max_states, self.table_load)
                if status == L.GROW:
                    with self.cv:
                        self.on_grow()
                    continue
                if status == L.OUT_FULL:
                    with self.cv:
                        self.outseg = self.front.hand_over(self.outseg, ctl)
                    continue
                break
            self.merge_cpu += time.thread_time() - c0
            report = False
            with self.cv:
                self.line.popleft()
                job.inseg = job.table = job.fpq = None
                self.free.append(job)
                self.known = int(ctl[K.CT_COUNT])
                if status == L.LIMIT:
                    self.complete = False
                    self.stop = True
                elif self.progress is not None and ctl[K.CT_HEAD] - self.last_report >= self.chunk:
                    self.last_report = int(ctl[K.CT_HEAD])
                    report = True
                more = not self.stop and bool(self.line) and self.line[0].done
                if not more:
                    self.merging = False
                self.cv.notify_all()
            if report:
                assert self.progress is not None
                self.progress()
            if not more:
                return
