"""The one compiled breadth-first search, serial and parallel, for every family (``families.py``).

Theory of operation
-------------------
The search is the reference explorer's breadth-first search (same successor order, same keys, same
first-found representative per key) on the lean store of ``lean.py`` (fingerprint index, parent pointers,
compact fair edges, frontier segments). Per expanded state it does two kinds of work:

* *expansion*: the successors of its row, each successor's 96-bit fingerprint, convergence and the
  properties of each successor and step. It depends on the row alone (and on the target table: the
  model's assignor answers, for the families that have one);
* the *merge*: looking each fingerprint up in the seen set, numbering the new states, recording parent,
  action, flags and edges, and the first state that violates each property. It depends on everything
  stored before.

:func:`search` does both, state by state (one thread; it computes a new state's properties only when the
state is new). :func:`expand` and :func:`merge` split them for ``parallel.py``: threads expand jobs
of consecutive rows ahead of the merge, and the jobs are merged strictly in order (by whichever thread finds
the next one ready), doing exactly what :func:`search` does per step, in the same order, on the same seen set, so the states, ids, edges and
every "first state that ..." are those of the serial search whatever the number of workers.

Statuses: IN_EMPTY, OUT_FULL, GROW, CHUNK_DONE, LIMIT (``lean.py``), :data:`NEED_TARGET` (a target family
asked for a target the table does not hold: the driver fills it with the model and calls again; nothing
was written for the state being expanded) and :data:`BATCH_DONE` (the merge used up its job).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import families as FAM
from . import kernel as K
from . import lean as L

NEED_TARGET = 6  # beside lean's DONE, GROW, CHUNK_DONE, LIMIT, OUT_FULL, IN_EMPTY
BATCH_DONE = 7  # merge: the job is merged entirely

# property bits of a successor, computed by the expansion
B_CONV = np.uint8(1)  # converged
B_EXCL = np.uint8(2)  # exclusive ownership violated
B_FENCE = np.uint8(4)  # commit fencing violated
B_SOME = np.uint8(8)  # sometimes_all_stable holds
B_GEN = np.uint8(16)  # the step to it violates generation monotonicity

# bctl: the merge's position in its job
M_STATE = 0  # next state of the job to merge
M_EDGE = 1  # its first successor's index in the job's buffers
M_LEN = 2
# xctl: the expansion's position in its job (where it stopped for a target)
X_ROW = 0  # next row to expand
X_EDGE = 1  # its first successor's index in the job's buffers
X_SEEN = 2  # positions indexed in the job's ``ltab``
X_LEN = 3
PREFETCH_SLOTS = 16  # the merge prefetches the seen set's slot this many lookups ahead
PREFETCH_RECORDS = 8  # and the fingerprint record of the id in it this many
LTAB_SLOTS = 1 << 13  # a job's index of its successors (32 KiB): at most half of them used


@njit(cache=True)
def _check_new(fam, P, t, conv, nid, flags, ctl):
    flags[nid] = L.CONV if conv else np.uint8(0)
    if ctl[K.CT_EXCL] < 0 and not FAM.exclusive_ownership_ok(fam, P, t):
        ctl[K.CT_EXCL] = nid
    if ctl[K.CT_FENCE] < 0 and not FAM.commit_fencing_ok(fam, P, t):
        ctl[K.CT_FENCE] = nid
    if ctl[K.CT_SOMETIMES] < 0 and conv and FAM.members_in_group(fam, P, t) >= FAM.initial_members(fam, P):
        ctl[K.CT_SOMETIMES] = nid


@njit(cache=True)
def _put_row(seg, j, t):
    for f in range(t.shape[0]):
        v = t[f]
        if v < -32768 or v > 32767:
            raise ValueError("state field out of range for storage")
        seg[j, f] = v


@njit(cache=True)
def insert_initial(fam, P, TM, blocks, plan, nwords, row, table, fpq, parent, pact, flags, outseg, ctl, tk, tv, tq):
    """Store an initial state (a root of the parent forest) unless its key is known: 1 if stored, 0 if not,
    NEED_TARGET."""
    conv = 0
    if FAM.needs_targets(fam):
        conv = FAM.converged(fam, P, TM, row, tk, tv, tq)
        if conv < 0:
            return NEED_TARGET
    rows, order, cols, perm, kv, words = FAM.key_scratch(fam, P, plan, nwords)
    h, q = FAM.fingerprint(fam, P, blocks, plan, row, rows, order, cols, perm, kv, words)
    nid = ctl[K.CT_COUNT]
    if L.lookup_or_insert(table, fpq, h, q, nid) >= 0:
        return 0
    parent[nid] = -1
    pact[nid] = 255
    if not FAM.needs_targets(fam):
        conv = FAM.converged(fam, P, TM, row, tk, tv, tq)
    _check_new(fam, P, row, conv, nid, flags, ctl)
    _put_row(outseg, ctl[L.L_OLEN], row)
    ctl[L.L_OLEN] += 1
    ctl[K.CT_COUNT] = nid + 1
    return 1


@njit(cache=True)
def search(fam, P, TM, blocks, plan, nwords, inseg, outseg, table, fpq, parent, pact, flags, outdeg, edst, eact,
           ctl, max_states, chunk, table_load, tk, tv, tq):
    """Expand the input segment's rows (ids ``ctl[CT_HEAD]`` on), appending new states to ``outseg``.

    Returns IN_EMPTY (the input segment is used up), OUT_FULL (the output segment cannot take another
    state's successors), GROW (a per-state or per-edge array or the index must grow), CHUNK_DONE
    (``chunk`` states expanded: time to report progress), LIMIT (``max_states`` stored) or NEED_TARGET.
    """
    maxs = FAM.max_successors(fam, P[K.P_N])
    F = inseg.shape[1]
    out, acts, convs, row, u = np.zeros((maxs, F), np.int64), np.zeros(maxs, np.int64), np.zeros(maxs, np.int64), \
        np.zeros(F, np.int64), np.zeros(F, np.int64)
    fh, fq = np.zeros(maxs, np.uint64), np.zeros(maxs, np.uint32)
    rows, order, cols, perm, kv, words = FAM.key_scratch(fam, P, plan, nwords)
    B = L.borrow  # NOTE(numba-refcount) in lean.borrow: the arguments are held by the caller, the scratch below
    status = _search(fam, B(P), B(TM), B(blocks), B(plan), B(inseg), B(outseg), B(table), B(fpq), B(parent), B(pact),
                     B(flags), B(outdeg), B(edst), B(eact), B(ctl), max_states, chunk, table_load, B(tk), B(tv), B(tq),
                     B(out), B(acts), B(convs), B(row), B(u), B(rows), B(order), B(cols), B(perm), B(kv), B(words),
                     B(fh), B(fq))
    return _alive(status, out, acts, convs, row, u, rows, order, cols, perm, kv, words, fh, fq)


@njit(cache=True)
def _alive(status, *scratch):
    """``status``, after the last use of ``scratch``: keeps the arrays a function borrowed views of alive until its
    callee using the views has returned (numba frees an array after its last use; a borrowed view does not count)."""
    return status


@njit(cache=True)
def _search(fam, P, TM, blocks, plan, inseg, outseg, table, fpq, parent, pact, flags, outdeg, edst, eact,
            ctl, max_states, chunk, table_load, tk, tv, tq, out, acts, convs, row, u, rows, order, cols, perm, kv, words,
            fh, fq):
    """:func:`search` on borrowed views, its scratch passed in."""
    n = P[K.P_N]
    F = inseg.shape[1]
    maxs = FAM.max_successors(fam, n)
    fair = FAM.fair_limit(fam)
    targets = FAM.needs_targets(fam)
    done = 0
    while True:
        if ctl[L.L_IPOS] >= ctl[L.L_ILEN]:
            return L.IN_EMPTY
        if max_states > 0 and ctl[K.CT_COUNT] >= max_states:
            return L.LIMIT
        if done >= chunk:
            return L.CHUNK_DONE
        count = ctl[K.CT_COUNT]
        if (count + maxs > parent.shape[0] or ctl[K.CT_FAIR] + maxs > edst.shape[0]
                or count + maxs > table_load * table.shape[0]):
            return L.GROW
        if ctl[L.L_OLEN] + maxs > outseg.shape[0]:
            return L.OUT_FULL
        nid = ctl[K.CT_HEAD]
        ip = ctl[L.L_IPOS]
        for f in range(F):
            row[f] = inseg[ip, f]
        ns = FAM.successors(fam, P, TM, row, out, acts, tk, tv, tq, u)
        if ns < 0:
            return NEED_TARGET
        if targets:  # every target this state's successors need, before anything is written
            for j in range(ns):
                convs[j] = FAM.converged(fam, P, TM, out[j], tk, tv, tq)
                if convs[j] < 0:
                    return NEED_TARGET
        for j in range(ns):  # the fingerprints first, each lookup's first read prefetched (lean.prefetch)
            fh[j], fq[j] = FAM.fingerprint(fam, P, blocks, plan, out[j], rows, order, cols, perm, kv, words)
            L.prefetch_slot(table, fh[j])
        for j in range(ns):  # then the second read (the id's fingerprint record), the first having arrived
            L.prefetch_record(table, fpq, fh[j])
        conv_here = flags[nid] & L.CONV
        nfair = 0
        for j in range(ns):
            t = out[j]
            act = acts[j]
            ctl[K.CT_EDGES] += 1
            if ctl[K.CT_GEN] < 0 and not FAM.generation_ok(fam, P, row, t):
                ctl[K.CT_GEN] = nid
                ctl[K.CT_GENACT] = act
            c = ctl[K.CT_COUNT]
            tid = L.lookup_or_insert(table, fpq, fh[j], fq[j], c)
            if tid < 0:
                tid = c
                parent[c] = nid
                pact[c] = act
                conv = convs[j] if targets else FAM.converged(fam, P, TM, t, tk, tv, tq)
                _check_new(fam, P, t, conv, c, flags, ctl)
                _put_row(outseg, ctl[L.L_OLEN], t)
                ctl[L.L_OLEN] += 1
                ctl[K.CT_COUNT] = c + 1
                if max_states > 0 and c + 1 >= max_states:
                    return L.LIMIT  # stop at exactly max_states stored states (this expansion is left incomplete)
            if act < fair:
                e = ctl[K.CT_FAIR]
                edst[e] = tid
                eact[e] = act
                ctl[K.CT_FAIR] = e + 1
                nfair += 1
                if conv_here and not (flags[tid] & L.CONV) and ctl[L.L_LEAVE] < 0:
                    ctl[L.L_LEAVE] = nid
        outdeg[nid] = nfair
        if nfair == 0 and not conv_here and ctl[L.L_DEAD] < 0:
            ctl[L.L_DEAD] = nid
        ctl[K.CT_HEAD] = nid + 1
        ctl[L.L_IPOS] = ip + 1
        done += 1


@njit(cache=True, nogil=True)
def _in_job(ltab, sfp, sfq, h, q, at, xctl):
    """The position of an earlier successor of the job with fingerprint (h, q), among those ``ltab`` indexes,
    or -1; if none, and ``at >= 0``, index position ``at`` (whose fingerprint is (h, q)) under it, while
    ``ltab`` (a power of two of slots, -1 when free) is less than half full (``xctl[X_SEEN]`` counts them): an
    index that misses a repeat only costs the repeat being treated as perhaps new."""
    mask = ltab.shape[0] - 1
    s = np.int64(h & np.uint64(mask))
    while True:
        v = ltab[s]
        if v < 0:
            if at >= 0 and 2 * (xctl[X_SEEN] + 1) <= ltab.shape[0]:
                ltab[s] = at
                xctl[X_SEEN] += 1
            return -1
        if sfp[v] == h and sfq[v] == q:
            return v
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def expand(fam, P, TM, blocks, plan, nwords, inseg, base, lo, hi, srows, sact, sfp, sfq, sbits, scount, xctl,
           tk, tv, tq, table, fpq, known, ltab, sref):
    """Expand rows ``lo:hi`` of ``inseg`` (a job that starts at row ``base``; its buffers are filled from
    ``xctl[X_EDGE]`` on): per row, its number of successors (``scount[row - base]``); per successor, in
    order, its row, action, fingerprint and property bits. Depends on the rows (and the target table) only.

    Per successor also ``sref``, what the merge needs to know of it beyond its fingerprint: the id of the
    stored state it is, when it is among the first ``known`` stored states (``lean.stored_before`` on the seen
    set as the merge is filling it: exact when it answers); ``-2 - p`` when it is the successor at position
    ``p`` of the job again (``ltab``, the job's own index of its successors, by position: the merge resolves
    that one first); -1 otherwise: perhaps new. Only a perhaps-new successor gets its own property bits and
    its row written (the merge reads neither for a stored state): most successors are stored states, and
    their properties were most of the expansion's cost; and the merge looks only perhaps-new ones up.

    Returns 0 when done, or NEED_TARGET with ``xctl`` at the row that needs it (its query in ``tq``, nothing
    of that row written): fill the target and call again from ``xctl[X_ROW]``."""
    maxs = FAM.max_successors(fam, P[K.P_N])
    F = inseg.shape[1]
    out, acts, row, u = np.zeros((maxs, F), np.int64), np.zeros(maxs, np.int64), np.zeros(F, np.int64), \
        np.zeros(F, np.int64)
    rows, order, cols, perm, kv, words = FAM.key_scratch(fam, P, plan, nwords)
    B = L.borrow  # NOTE(numba-refcount) in lean.borrow: two threads would bounce the shared arrays' counts
    status = _expand(fam, B(P), B(TM), B(blocks), B(plan), B(inseg), base, lo, hi, B(srows), B(sact), B(sfp), B(sfq),
                     B(sbits), B(scount), B(xctl), B(tk), B(tv), B(tq), B(table), B(fpq), known, B(ltab), B(sref),
                     B(out), B(acts), B(row), B(u), B(rows), B(order), B(cols), B(perm), B(kv), B(words))
    return _alive(status, out, acts, row, u, rows, order, cols, perm, kv, words)


@njit(cache=True, nogil=True)
def _expand(fam, P, TM, blocks, plan, inseg, base, lo, hi, srows, sact, sfp, sfq, sbits, scount, xctl,
            tk, tv, tq, table, fpq, known, ltab, sref, out, acts, row, u, rows, order, cols, perm, kv, words):
    """:func:`expand` on borrowed views, its scratch passed in."""
    F = inseg.shape[1]
    initial = FAM.initial_members(fam, P)
    e = xctl[X_EDGE]
    if e == 0:
        ltab[:] = -1
        xctl[X_SEEN] = 0
    for ip in range(lo, hi):
        xctl[X_ROW], xctl[X_EDGE] = ip, e
        for f in range(F):
            row[f] = inseg[ip, f]
        ns = FAM.successors(fam, P, TM, row, out, acts, tk, tv, tq, u)
        if ns < 0:
            return NEED_TARGET
        e0 = e
        for j in range(ns):  # the fingerprints first, the seen set's reads prefetched (as in _search)
            sfp[e0 + j], sfq[e0 + j] = FAM.fingerprint(fam, P, blocks, plan, out[j], rows, order, cols, perm, kv, words)
            L.prefetch_slot(table, sfp[e0 + j])
        for j in range(ns):
            L.prefetch_record(table, fpq, sfp[e0 + j])
        for j in range(ns):
            t = out[j]
            x = e0 + j
            h, q = sfp[x], sfq[x]
            bits = np.uint8(0)
            p = _in_job(ltab, sfp, sfq, h, q, -1, xctl)
            ref = -2 - p if p >= 0 else L.stored_before(table, fpq, h, q, known)
            if ref == -1:  # perhaps new: its properties and its row
                c = FAM.converged(fam, P, TM, t, tk, tv, tq)
                if c < 0:
                    return NEED_TARGET  # the row's successors written so far are written again on the next call
                if c:
                    bits |= B_CONV
                    if FAM.members_in_group(fam, P, t) >= initial:
                        bits |= B_SOME
                if not FAM.exclusive_ownership_ok(fam, P, t):
                    bits |= B_EXCL
                if not FAM.commit_fencing_ok(fam, P, t):
                    bits |= B_FENCE
                for f in range(F):
                    v = t[f]
                    if v < -32768 or v > 32767:
                        raise ValueError("state field out of range for storage")
                    srows[x, f] = v
            if not FAM.generation_ok(fam, P, row, t):
                bits |= B_GEN
            sact[x] = acts[j]
            sref[x] = ref
            sbits[x] = bits
        for x in range(e0, e0 + ns):  # only now: a row stopped for a target is written again from its start
            _in_job(ltab, sfp, sfq, sfp[x], sfq[x], x, xctl)
        e = e0 + ns
        scount[ip - base] = ns
    xctl[X_ROW], xctl[X_EDGE] = hi, e
    return 0


@njit(cache=True, nogil=True)
def merge(fam, P, first_id, nrows, srows, sact, sfp, sfq, sbits, sref, stid, scount, bctl, outseg, table, fpq,
          parent, pact, flags, outdeg, edst, eact, ctl, max_states, table_load):
    """Merge an expanded job (states ``first_id`` ...) into the store, as :func:`search` would expand them. A
    successor :func:`expand` resolved (``sref``) is not looked up again; ``stid``: the id of each successor
    merged so far, by position.

    Returns BATCH_DONE, GROW or OUT_FULL (call again after growing / pushing: ``bctl`` keeps the
    position) or LIMIT (``max_states`` stored)."""
    B = L.borrow  # NOTE(numba-refcount) in lean.borrow: the workers pass table and fpq at the same time
    return _merge(fam, B(P), first_id, nrows, B(srows), B(sact), B(sfp), B(sfq), B(sbits), B(sref), B(stid), B(scount),
                  B(bctl), B(outseg), B(table), B(fpq), B(parent), B(pact), B(flags), B(outdeg), B(edst), B(eact), B(ctl),
                  max_states, table_load)


@njit(cache=True, nogil=True)
def _merge(fam, P, first_id, nrows, srows, sact, sfp, sfq, sbits, sref, stid, scount, bctl, outseg, table, fpq,
           parent, pact, flags, outdeg, edst, eact, ctl, max_states, table_load):
    """:func:`merge` on borrowed views."""
    n = P[K.P_N]
    F = srows.shape[1]
    maxs = FAM.max_successors(fam, n)
    fair = FAM.fair_limit(fam)
    etot = bctl[M_EDGE]  # the job's successors end here
    for i in range(bctl[M_STATE], nrows):
        etot += scount[i]
    pa = pb = bctl[M_EDGE]  # the lookups whose first / second read is prefetched (lean.prefetch) end here
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
            while pa < etot and pa < e + PREFETCH_SLOTS:
                if sref[pa] == -1:
                    L.prefetch_slot(table, sfp[pa])
                pa += 1
            while pb < etot and pb < e + PREFETCH_RECORDS:
                if sref[pb] == -1:
                    L.prefetch_record(table, fpq, sfp[pb])
                pb += 1
            act = sact[e]
            bits = sbits[e]
            ctl[K.CT_EDGES] += 1
            if ctl[K.CT_GEN] < 0 and (bits & B_GEN):
                ctl[K.CT_GEN] = nid
                ctl[K.CT_GENACT] = act
            c = ctl[K.CT_COUNT]
            ref = sref[e]
            if ref >= 0:
                tid = ref
            elif ref < -1:
                tid = stid[-2 - ref]
            else:
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
                    return L.LIMIT  # exactly max_states stored, as search
            stid[e] = tid
            if act < fair:
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


@njit(cache=True)
def reconstruct(fam, P, TM, roots, parent, pact, nid, out_row, tk, tv, tq):
    """The stored row of state ``nid``: its initial state, then the compiled step along the parent chain."""
    depth = 0
    v = nid
    while parent[v] >= 0:
        depth += 1
        v = parent[v]
    chain = np.empty(depth, np.int64)
    v = nid
    d = depth
    while parent[v] >= 0:
        d -= 1
        chain[d] = pact[v]
        v = parent[v]
    F = roots.shape[1]
    row = np.empty(F, np.int64)
    for f in range(F):
        row[f] = roots[v, f]
    maxs = FAM.max_successors(fam, P[K.P_N])
    out = np.zeros((maxs, F), np.int64)
    acts = np.zeros(maxs, np.int64)
    u = np.zeros(F, np.int64)
    for d in range(depth):
        ns = FAM.successors(fam, P, TM, row, out, acts, tk, tv, tq, u)
        found = False
        for j in range(ns):
            if acts[j] == chain[d]:
                row[:] = out[j]
                found = True
                break
        if not found:
            raise ValueError("compiled engine drift: a stored step is not enabled on replay")
    out_row[:] = row


@njit(cache=True)
def reconstruct_all(fam, P, TM, roots, parent, pact, out_rows, tk, tv, tq):
    """Every stored row, in id order (``out_rows[i]`` for state ``i``): what :func:`reconstruct` gives state by
    state, at one compiled step per state. A root's row is its initial state; any other state's is its parent's
    row and the stored step from it, and its parent's row is already made: a breadth-first search numbers a
    state after the state it was found from."""
    F = roots.shape[1]
    maxs = FAM.max_successors(fam, P[K.P_N])
    out = np.zeros((maxs, F), np.int64)
    acts = np.zeros(maxs, np.int64)
    u = np.zeros(F, np.int64)
    row = np.empty(F, np.int64)
    for i in range(parent.shape[0]):
        p = parent[i]
        if p < 0:
            for f in range(F):
                out_rows[i, f] = roots[i, f]
            continue
        if p >= i:
            raise ValueError("compiled engine drift: a state is numbered before the state it was found from")
        for f in range(F):
            row[f] = out_rows[p, f]
        ns = FAM.successors(fam, P, TM, row, out, acts, tk, tv, tq, u)
        found = False
        for j in range(ns):
            if acts[j] == pact[i]:
                for f in range(F):
                    out_rows[i, f] = out[j, f]
                found = True
                break
        if not found:
            raise ValueError("compiled engine drift: a stored step is not enabled on replay")
