"""The compiled engine's search on several cores: expansion in worker threads, one ordered merge.

Theory of operation
-------------------
The one-worker search (``lean.search``) does two kinds of work per expanded state: *expansion* — the
successors of its row, each successor's symmetry-reduced key and 96-bit fingerprint, the properties of
each successor and of each step — which depends on the row alone; and the *merge* — looking each
fingerprint up in the seen set, numbering the new states, recording parent, action, flags and edges —
which depends on everything stored before. Expansion is most of the time (about nine tenths, see
docs/scale.md), so it is what runs in parallel:

* the rows waiting in the frontier are cut into *jobs* of consecutive rows (state-id order); ``workers``
  threads run :func:`expand` on jobs ahead of the merge, each into its own buffer of successor rows,
  actions, fingerprints and property bits;
* the main thread runs :func:`merge` on the jobs strictly in order, doing exactly what ``lean.search``
  does per step, in the same order, on the same seen set.

So the states, their ids, parents, actions, edges and every "first state that ..." are those of the
one-worker search, whatever the number of workers or the timing of the threads: verdicts, counts and
counterexamples are identical by construction (and ``tests/test_scale_parallel.py`` compares them).

Threads, not processes: :func:`expand` and :func:`merge` are compiled with ``nogil=True``, so the worker
threads and the merge run on separate cores at once, and they share the frontier and the store without
copying or shared-memory segments (a process per worker would ship every successor row between
processes, which is the very work being saved).
"""
from __future__ import annotations

import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

import numpy as np
from numba import njit

from . import kernel as K
from . import lean as L

# property bits of a successor, computed by the worker
B_CONV = np.uint8(1)  # converged
B_EXCL = np.uint8(2)  # exclusive ownership violated
B_FENCE = np.uint8(4)  # commit fencing violated
B_SOME = np.uint8(8)  # sometimes_all_stable holds
B_GEN = np.uint8(16)  # the step to it violates generation monotonicity

JOB_ROWS = 1024  # rows expanded per job

# bctl: the merge's position in its job
M_STATE = 0  # next state of the job to merge
M_EDGE = 1  # its first successor's index in the job's buffers
M_LEN = 2

BATCH_DONE = 6  # merge: the job is merged entirely


@njit(cache=True, nogil=True)
def expand(P, TM, blocks, plan, inseg, lo, hi, srows, sact, sfp, sfq, sbits, scount):
    """Expand rows ``lo:hi`` of ``inseg``: per row, its number of successors (``scount``); per
    successor, in order, its row, action, fingerprint and property bits. Depends on the rows only."""
    n = P[K.P_N]
    F = inseg.shape[1]
    maxs = n * K.MAX_SUCC_PER_SLOT + 3
    out = np.zeros((maxs, F), np.int64)
    acts = np.zeros(maxs, np.int64)
    row = np.zeros(F, np.int64)
    rows = np.zeros((n, K.ROWLEN), np.int64)
    order = np.zeros(n, np.int64)
    cols = np.zeros(P[K.P_K], np.int64)
    perm = np.zeros(P[K.P_K], np.int64)
    kv = np.zeros(K.KH + n * K.ROWLEN, np.int64)
    words = np.zeros(plan[plan.shape[0] - 1, 1] + 1, np.uint64)
    e = 0
    for ip in range(lo, hi):
        for f in range(F):
            row[f] = inseg[ip, f]
        ns = K.successors(P, TM, row, out, acts)
        scount[ip - lo] = ns
        for j in range(ns):
            t = out[j]
            bits = np.uint8(0)
            if not K.generation_ok(P, row, t):
                bits |= B_GEN
            h, q = L._key(P, blocks, plan, t, rows, order, cols, perm, kv, words)
            c = K.converged(P, TM, t)
            if c:
                bits |= B_CONV
                if K.members_in_group(P, t) >= P[K.P_INITIAL]:
                    bits |= B_SOME
            if not K.exclusive_ownership_ok(P, t):
                bits |= B_EXCL
            if not K.commit_fencing_ok(P, t):
                bits |= B_FENCE
            for f in range(F):
                v = t[f]
                if v < -32768 or v > 32767:
                    raise ValueError("state field out of range for storage")
                srows[e, f] = v
            sact[e] = acts[j]
            sfp[e] = h
            sfq[e] = q
            sbits[e] = bits
            e += 1
    return e


@njit(cache=True, nogil=True)
def merge(P, first_id, nrows, srows, sact, sfp, sfq, sbits, scount, bctl, outseg, table, fpq, parent, pact, flags,
          outdeg, edst, eact, ctl, max_states, table_load):
    """Merge an expanded job (states ``first_id`` ...) into the store, as ``lean.search`` would expand them.

    Returns BATCH_DONE, GROW or OUT_FULL (call again after growing / pushing: ``bctl`` keeps the
    position) or LIMIT (``max_states`` stored)."""
    n = P[K.P_N]
    F = srows.shape[1]
    maxs = n * K.MAX_SUCC_PER_SLOT + 3
    while True:
        i = bctl[M_STATE]
        if i >= nrows:
            return BATCH_DONE
        if max_states > 0 and ctl[K.CT_COUNT] >= max_states:
            return L.LIMIT
        count = ctl[K.CT_COUNT]
        if (count + maxs > parent.shape[0] or ctl[K.CT_FAIR] + maxs > edst.shape[0]
                or count + maxs > table_load * table.shape[0]):
            return L.GROW
        if ctl[L.L_OLEN] + maxs > outseg.shape[0]:
            return L.OUT_FULL
        nid = first_id + i
        conv_here = flags[nid] & L.CONV
        e0 = bctl[M_EDGE]
        ns = scount[i]
        nfair = 0
        for j in range(ns):
            e = e0 + j
            act = sact[e]
            bits = sbits[e]
            ctl[K.CT_EDGES] += 1
            if ctl[K.CT_GEN] < 0 and (bits & B_GEN):
                ctl[K.CT_GEN] = nid
                ctl[K.CT_GENACT] = act
            c = ctl[K.CT_COUNT]
            tid = L.lookup_or_insert(table, fpq, sfp[e], sfq[e], c)
            if tid < 0:
                tid = c
                parent[c] = nid
                pact[c] = act
                flags[c] = L.CONV if (bits & B_CONV) else np.uint8(0)
                if ctl[K.CT_EXCL] < 0 and (bits & B_EXCL):
                    ctl[K.CT_EXCL] = c
                if ctl[K.CT_FENCE] < 0 and (bits & B_FENCE):
                    ctl[K.CT_FENCE] = c
                if ctl[K.CT_SOMETIMES] < 0 and (bits & B_SOME):
                    ctl[K.CT_SOMETIMES] = c
                o = ctl[L.L_OLEN]
                for f in range(F):
                    outseg[o, f] = srows[e, f]
                ctl[L.L_OLEN] = o + 1
                ctl[K.CT_COUNT] = c + 1
                if max_states > 0 and c + 1 >= max_states:
                    return L.LIMIT  # exactly max_states stored, as lean.search
            if act < K.FAIR_LIMIT:
                x = ctl[K.CT_FAIR]
                edst[x] = tid
                eact[x] = act
                ctl[K.CT_FAIR] = x + 1
                nfair += 1
                if conv_here and not (flags[tid] & L.CONV) and ctl[L.L_LEAVE] < 0:
                    ctl[L.L_LEAVE] = nid
        outdeg[nid] = nfair
        if nfair == 0 and not conv_here and ctl[L.L_DEAD] < 0:
            ctl[L.L_DEAD] = nid
        ctl[K.CT_HEAD] = nid + 1
        bctl[M_STATE] = i + 1
        bctl[M_EDGE] = e0 + ns


class _Job:
    """One job's input slice and its buffers (reused once merged)."""

    def __init__(self, rows: int, maxs: int, width: int) -> None:
        cap = rows * maxs
        self.srows = np.empty((cap, width), np.int16)
        self.sact = np.empty(cap, np.uint8)
        self.sfp = np.empty(cap, np.uint64)
        self.sfq = np.empty(cap, np.uint32)
        self.sbits = np.empty(cap, np.uint8)
        self.scount = np.empty(rows, np.int64)
        self.bctl = np.zeros(M_LEN, np.int64)
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
    maxs = kn.n * K.MAX_SUCC_PER_SLOT + 3
    depth = 2 * workers + 1  # jobs expanded ahead of the merge
    free = [_Job(JOB_ROWS, maxs, kn.F) for _ in range(depth + 1)]
    inflight: deque[tuple[_Job, Future[int]]] = deque()
    cur: tuple[np.ndarray, int] | None = None  # the input segment being cut into jobs, and its next row
    cur_len = 0
    next_id = 0  # state id of the next row to hand out
    last_report = 0
    complete = True

    def submit(pool: ThreadPoolExecutor) -> bool:
        nonlocal cur, cur_len, next_id
        if cur is None or cur[1] >= cur_len:
            nxt = front.pop()
            if nxt is None:
                return False
            cur, cur_len = (nxt[0], 0), nxt[1]
        seg, pos = cur
        hi = min(cur_len, pos + JOB_ROWS)
        job = free.pop()
        job.inseg, job.first_id, job.nrows = seg, next_id, hi - pos
        job.bctl[:] = 0
        next_id += hi - pos
        cur = (seg, hi)
        fut = pool.submit(expand, kn.P, kn.TM, kn.blocks, kn.plan, seg, pos, hi, job.srows, job.sact,
                          job.sfp, job.sfq, job.sbits, job.scount)
        inflight.append((job, fut))
        return True

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="groupspec-expand") as pool:
        try:
            while True:
                while len(inflight) < depth and submit(pool):
                    pass
                if not inflight:
                    if ctl[L.L_OLEN] == 0:
                        break
                    outseg = front.hand_over(outseg, ctl)  # expand what the output segment holds so far
                    continue
                job, fut = inflight.popleft()
                fut.result()
                while True:
                    s = store
                    status = merge(kn.P, job.first_id, job.nrows, job.srows, job.sact, job.sfp, job.sfq, job.sbits,
                                   job.scount, job.bctl, outseg, s.table, s.fpq, s.parent, s.pact, s.flags,
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

