"""The lean store's breadth-first search (``groupspec.checker.compiled.lean``) on the consumer encoding.

``lean.search`` is bound to the classic kernel at compile time (numba inlines ``kernel.successors``), so
the consumer family has this twin of it: the same loop, the same store (fingerprint index, parent
pointers, compact fair edges, frontier segments), the same counters (``ctl``, with lean's indices), with
``consumer_kernel``'s functions, or ``migration_kernel``'s when ``P[P_MIG]`` is set (the dispatch below). What it adds is the target table: when a step or a convergence check
needs a target the table does not hold, the search returns :data:`NEED_TARGET` *before* it has written
anything for the state it was expanding, the driver fills the table with the model's assignor, and the
search expands that state again from the start. The fingerprint functions, the index, the graph
algorithms and the frontier are lean's own.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import consumer_kernel as CK
from . import kernel as K
from . import lean as L
from . import consumer_keys as CKEY
from . import migration_kernel as MK
from . import migration_properties as MP

NEED_TARGET = 6  # beside lean's DONE, GROW, CHUNK_DONE, LIMIT, OUT_FULL, IN_EMPTY


# -- the family's two machines: the consumer group (consumer_kernel) and the migration (migration_kernel)
@njit(cache=True)
def successors(P, TM, s, out, acts, tk, tv, tq, u):
    if P[CK.P_MIG]:
        return MK.successors(P, TM, s, out, acts, tk, tv, tq, u)
    return CK.successors(P, TM, s, out, acts, tk, tv, tq)


@njit(cache=True)
def converged(P, TM, s, tk, tv, tq):
    if P[CK.P_MIG]:
        return MP.converged(P, TM, s, tk, tv, tq)
    return CK.converged(P, TM, s, tk, tv, tq)


@njit(cache=True)
def exclusive_ownership_ok(P, s):
    return MP.exclusive_ownership_ok(P, s) if P[CK.P_MIG] else CK.exclusive_ownership_ok(P, s)


@njit(cache=True)
def commit_fencing_ok(P, s):
    return MP.commit_fencing_ok(P, s) if P[CK.P_MIG] else CK.commit_fencing_ok(P, s)


@njit(cache=True)
def generation_ok(P, s, t):
    return MP.generation_ok(P, s, t) if P[CK.P_MIG] else CK.generation_ok(P, s, t)


@njit(cache=True)
def members_in_group(P, s):
    return MP.members_in_group(P, s) if P[CK.P_MIG] else CK.members_in_group(P, s)


@njit(cache=True)
def key_vector(P, blocks, t, rows, order, cols, perm, kv):
    n = P[CK.P_N]
    if P[CK.P_MIG]:
        need = 2 + max(5 + 3 * n, 1 + 8 * n) + 6 * n
    else:
        need = CKEY.KH + n * (CKEY.SYM_ROW if P[CK.P_SYM] else CKEY.EXACT_ROW)
    if kv.shape[0] < need or rows.shape[1] < CKEY.SYM_ROW or cols.shape[0] < P[CK.P_K] or perm.shape[0] < P[CK.P_K]:
        raise ValueError("key buffers do not fit the parameters")  # compiled code does not check bounds
    if P[CK.P_MIG]:
        MP.key_vector(P, t, kv)
    else:
        CKEY.key_vector(P, blocks, t, rows, order, cols, perm, kv)


@njit(cache=True)
def _key(P, blocks, t, rows, order, cols, perm, kv, words):
    key_vector(P, blocks, t, rows, order, cols, perm, kv)
    CKEY.pack(kv, words)
    return L.fingerprint(words)


@njit(cache=True)
def _check_new(P, t, conv, nid, flags, ctl):
    flags[nid] = L.CONV if conv else np.uint8(0)
    if ctl[K.CT_EXCL] < 0 and not exclusive_ownership_ok(P, t):
        ctl[K.CT_EXCL] = nid
    if ctl[K.CT_FENCE] < 0 and not commit_fencing_ok(P, t):
        ctl[K.CT_FENCE] = nid
    if ctl[K.CT_SOMETIMES] < 0 and conv and members_in_group(P, t) >= P[CK.P_INITIAL]:
        ctl[K.CT_SOMETIMES] = nid


@njit(cache=True)
def _put_row(seg, j, t):
    for f in range(t.shape[0]):
        v = t[f]
        if v < -32768 or v > 32767:
            raise ValueError("state field out of range for storage")
        seg[j, f] = v


@njit(cache=True)
def _scratch(P, nwords):
    n = P[CK.P_N]
    keylen = CKEY.KH + n * (CKEY.SYM_ROW if P[CK.P_SYM] else CKEY.EXACT_ROW)
    if P[CK.P_MIG]:
        keylen = 2 + max(5 + 3 * n, 1 + 8 * n) + 6 * n  # migration_kernel.key_len
    return (np.zeros((n, CKEY.SYM_ROW), np.int64), np.zeros(n, np.int64), np.zeros(P[CK.P_K], np.int64),
            np.zeros(P[CK.P_K], np.int64), np.zeros(keylen, np.int64), np.zeros(nwords, np.uint64))


@njit(cache=True)
def insert_initial(P, TM, blocks, nwords, row, table, fpq, parent, pact, flags, outseg, ctl, tk, tv, tq):
    """Store an initial state unless its key is known: 1 if stored, 0 if not, NEED_TARGET."""
    conv = converged(P, TM, row, tk, tv, tq)
    if conv < 0:
        return NEED_TARGET
    rows, order, cols, perm, kv, words = _scratch(P, nwords)
    h, q = _key(P, blocks, row, rows, order, cols, perm, kv, words)
    nid = ctl[K.CT_COUNT]
    if L.lookup_or_insert(table, fpq, h, q, nid) >= 0:
        return 0
    parent[nid] = -1
    pact[nid] = 255
    _check_new(P, row, conv, nid, flags, ctl)
    _put_row(outseg, ctl[L.L_OLEN], row)
    ctl[L.L_OLEN] += 1
    ctl[K.CT_COUNT] = nid + 1
    return 1


@njit(cache=True)
def search(P, TM, blocks, nwords, inseg, outseg, table, fpq, parent, pact, flags, outdeg, edst, eact,
           ctl, max_states, chunk, table_load, tk, tv, tq):
    """``lean.search`` on the consumer encoding; returns lean's statuses or NEED_TARGET."""
    n = P[CK.P_N]
    F = inseg.shape[1]
    maxs = n * CK.MAX_SUCC_PER_SLOT + 1
    out = np.zeros((maxs, F), np.int64)
    acts = np.zeros(maxs, np.int64)
    convs = np.zeros(maxs, np.int64)
    row = np.zeros(F, np.int64)
    u = np.zeros(F, np.int64)
    rows, order, cols, perm, kv, words = _scratch(P, nwords)
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
        ns = successors(P, TM, row, out, acts, tk, tv, tq, u)
        if ns < 0:
            return NEED_TARGET
        for j in range(ns):  # every target this state's successors need, before anything is written
            convs[j] = converged(P, TM, out[j], tk, tv, tq)
            if convs[j] < 0:
                return NEED_TARGET
        conv_here = flags[nid] & L.CONV
        nfair = 0
        for j in range(ns):
            t = out[j]
            act = acts[j]
            ctl[K.CT_EDGES] += 1
            if ctl[K.CT_GEN] < 0 and not generation_ok(P, row, t):
                ctl[K.CT_GEN] = nid
                ctl[K.CT_GENACT] = act
            h, q = _key(P, blocks, t, rows, order, cols, perm, kv, words)
            c = ctl[K.CT_COUNT]
            tid = L.lookup_or_insert(table, fpq, h, q, c)
            if tid < 0:
                tid = c
                parent[c] = nid
                pact[c] = act
                _check_new(P, t, convs[j], c, flags, ctl)
                _put_row(outseg, ctl[L.L_OLEN], t)
                ctl[L.L_OLEN] += 1
                ctl[K.CT_COUNT] = c + 1
                if max_states > 0 and c + 1 >= max_states:
                    return L.LIMIT  # stop at exactly max_states stored states
            if act < CK.FAIR_LIMIT:
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


@njit(cache=True)
def reconstruct(P, TM, roots, parent, pact, nid, out_row, tk, tv, tq):
    """State ``nid``'s row: its initial state, then the compiled step along the parent chain."""
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
    maxs = P[CK.P_N] * CK.MAX_SUCC_PER_SLOT + 1
    out = np.zeros((maxs, F), np.int64)
    acts = np.zeros(maxs, np.int64)
    u = np.zeros(F, np.int64)
    for d in range(depth):
        ns = successors(P, TM, row, out, acts, tk, tv, tq, u)
        found = False
        for j in range(ns):
            if acts[j] == chain[d]:
                row[:] = out[j]
                found = True
                break
        if not found:
            raise ValueError("compiled engine drift: a stored step is not enabled on replay")
    out_row[:] = row
