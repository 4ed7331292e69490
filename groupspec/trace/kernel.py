"""The trace checker's compiled inner loop (numba): raw JSON Lines bytes in, one group's state out.

This is not a second checker. It is :class:`groupspec.trace.checker.GroupChecker`'s ``feed`` and
``_end_tick`` for the events that make up almost all of a long trace — ``commit``, ``assigned``,
``revoked``, ``joined``, ``left``, ``end``, ``snapshot`` and other kinds that decide nothing — while the
group is *quiet* (no overlap open or undecided, no timeline being captured, no finding about to be
made). It applies them to the same state, held as arrays (``groupspec.trace.fastpath`` moves the
state between the checker's objects and these arrays). Whenever a line would do anything else — a
finding, a trace defect, an overlap, a ``fenced``/``lost``/``removed``/``topic`` event, another
group's line, time going back, a line this parser does not read (escapes, non-ASCII, floats where
integers are expected, a duplicated field) — :func:`run` stops *before* changing anything for that
line and returns; the checker's Python code then handles that line exactly as it always did. The
drift test (``tests/test_trace_fast.py``) requires byte-identical reports with and without this loop on
every trace the tests have.

Lines are read and strings interned by ``groupspec.trace.scan``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .scan import (  # noqa: F401 - the state vector's slots, the line reader
    K_OTHER, K_COMMIT, K_ASSIGNED, K_REVOKED, K_JOINED, K_LEFT, K_END, K_BAIL, S_ALIVE, S_NONE, S_NUNIV, S_TICK,
    S_TICK_HAS, S_LAST_TS, S_FIRST_HAS, S_FIRST_TS, S_ALL_DIRTY, S_CHANGED, S_CUT, S_CUTBY_NONE, S_PFROM_HAS,
    S_PFROM, S_PNMEM, S_PSNAP, S_CONV_HAS, S_CONV, S_BROKEN_HAS, S_BROKEN_TS, S_NWIN, S_NPER, S_EVENTS, S_WITHIN,
    S_MAXLIST, S_WLISTED, S_PLISTED, S_NKNOWN, S_NDIRTY, S_GROUP, S_NWROWS, S_NPROWS, S_NSNAP, S_SNAPFILL, S_RINGN,
    S_NNAMES, S_NPARTS, S_LINE, S_STODEF, S_NWALONE, S_NRR, S_HOLD, S_SIZE, RING, MAXPARTS, intern, part_id,
    rehash_names, rehash_parts, skip_ws, read_string,
    read_number, read_literal, skip_value, key_is, W_TS, W_GROUP, W_MEMBER, W_EVENT, W_PARTS, W_GEN, W_PROTO,
    W_EAGER, W_CONSUMER, W_STO, W_TOPICS, W_SENT, kind_of, read_parts,
)


MAX_TS = (1 << 53) - 1  # groupspec.trace.reader.MAX_TS

# -- what run() returns as its status ---------------------------------------------------------------
ST_DONE = 0  # every line up to the end of the buffer was handled
ST_LINE = 1  # the line at the returned position is for the checker's Python code
ST_GROUP = 2  # the line at the returned position belongs to another group (or names none known here)
ST_FULL = 3  # a table of strings or partitions is full: the rest of the file is the Python code's
ST_SYNC = 4  # the snapshot pool is full: move the state back, then start again


# ---------------------------------------------------------------------------------------------- state
# columns of M (one row per interned string; rows of members of this group have M_KNOWN set)
M_KNOWN = 0
M_ALIVE = 1
M_LEFT = 2
M_FENCED = 3
M_REMOVED = 4
M_GEN = 5
M_LASTGEN = 6
M_LASTGEN_HAS = 7
M_NOWNED = 8
M_CUTBY = 9
M_CHANGER = 10
M_BROKEN = 11
M_SCRATCH = 12  # per-topic counts in the balance check
M_TSEEN = 13
M_WAIT = 14  # waiting for an assignment (``starved``) since M_WFROM
M_WFROM = 15
M_OHAS = 16  # another member was assigned meanwhile, first at M_OAT
M_OAT = 17
M_STO = 18  # session timeout of its latest joined line, 0 for none
M_CONSUMER = 19  # its listener lines say protocol "consumer" (KIP-848: generations are per-member epochs)
M_HN = 20  # how many generation changes are remembered (checker's _Member.gen_hist), at most GEN_HISTORY
M_HTS = 21  # M_HTS + k, M_HG + k: the k-th newest change (ts_ms, generation)
M_HG = M_HTS + 4
M_COLS = M_HG + 4
GEN_HISTORY = 4  # groupspec.trace.checker.GEN_HISTORY
# columns of P (one row per interned partition)
P_OWNER = 0  # the member's string id, -1 for none
P_GEN = 1  # the generation in which its owner got it
P_UNIV = 2
P_DIRTY = 3
P_WS_HAS = 4  # an unowned window is open since P_WS
P_WS = 5
P_MARK = 6  # scratch: on the current line
P_COLS = 7


@njit(cache=True, nogil=True)
def _set_gen(m, g, ts, M):
    """The checker's ``_set_gen``: a change of the member's generation is remembered."""
    if M[m, M_GEN] != g:
        M[m, M_GEN] = g
        for k in range(GEN_HISTORY - 1, 0, -1):
            M[m, M_HTS + k] = M[m, M_HTS + k - 1]
            M[m, M_HG + k] = M[m, M_HG + k - 1]
        M[m, M_HTS] = ts
        M[m, M_HG] = g
        if M[m, M_HN] < GEN_HISTORY:
            M[m, M_HN] += 1


@njit(cache=True, nogil=True)
def _dirty(pid, S, P, dirty):
    if P[pid, P_DIRTY] == 0:
        P[pid, P_DIRTY] = 1
        dirty[S[S_NDIRTY]] = pid
        S[S_NDIRTY] += 1


@njit(cache=True, nogil=True)
def _remove_owner(pid, m, S, M, P, dirty):
    P[pid, P_OWNER] = -1
    S[S_NONE] -= 1
    M[m, M_NOWNED] -= 1
    M[m, M_CHANGER] = 1
    S[S_CHANGED] = 1
    _dirty(pid, S, P, dirty)


@njit(cache=True, nogil=True)
def _release_all(m, S, M, P, univ, dirty):
    if M[m, M_NOWNED] == 0:
        return
    for k in range(S[S_NUNIV]):
        pid = univ[k]
        if P[pid, P_OWNER] == m:
            _remove_owner(pid, m, S, M, P, dirty)


@njit(cache=True, nogil=True)
def _start_waiting(m, ts, S, M):
    M[m, M_WAIT] = 1
    M[m, M_WFROM] = ts
    M[m, M_OHAS] = 0
    S[S_NWALONE] += 1


@njit(cache=True, nogil=True)
def _stop_waiting(m, M):
    M[m, M_WAIT] = 0
    M[m, M_OHAS] = 0


@njit(cache=True, nogil=True)
def _converged(S, M, known, P, univ, pkey):
    if S[S_PNMEM] == 0 or S[S_NONE] != S[S_NUNIV] or S[S_NUNIV] == 0:
        return False
    lo = np.int64(1) << 62
    hi = -lo
    for k in range(S[S_NKNOWN]):
        m = known[k]
        if M[m, M_ALIVE]:
            c = M[m, M_NOWNED]
            lo = min(lo, c)
            hi = max(hi, c)
    if hi < lo:
        return False
    if hi - lo <= 1:
        return True
    ok = True  # range balances every topic on its own
    for a in range(S[S_NUNIV]):
        t = pkey[univ[a]] // 2147483648
        if M[t, M_TSEEN] or not ok:
            continue
        M[t, M_TSEEN] = 1
        for b in range(S[S_NUNIV]):
            pid = univ[b]
            if pkey[pid] // 2147483648 == t and P[pid, P_OWNER] >= 0:
                M[P[pid, P_OWNER], M_SCRATCH] += 1
        lo = np.int64(1) << 62
        hi = -lo
        for k in range(S[S_NKNOWN]):
            m = known[k]
            if M[m, M_ALIVE]:
                lo = min(lo, M[m, M_SCRATCH])
                hi = max(hi, M[m, M_SCRATCH])
            M[m, M_SCRATCH] = 0
        for b in range(S[S_NUNIV]):
            pid = univ[b]
            if P[pid, P_OWNER] >= 0:
                M[P[pid, P_OWNER], M_SCRATCH] = 0
        if hi - lo > 1:
            ok = False
    for a in range(S[S_NUNIV]):
        M[pkey[univ[a]] // 2147483648, M_TSEEN] = 0
    return ok


@njit(cache=True, nogil=True)
def _end_tick(S, M, known, P, univ, dirty, pkey, wrows, prows, snap_off, snap_pool, RG, rr):
    """``GroupChecker._end_tick`` at ``S[S_TICK]``: 0 when done, 1 when it would make a finding (nothing
    changed: the Python code does this tick), 3 when the snapshot pool is full (nothing changed)."""
    ts = S[S_TICK]
    if not (S[S_CUT] or S[S_CHANGED] or S[S_ALL_DIRTY] or S[S_NDIRTY]):
        return 0
    within = S[S_WITHIN]
    take_broken = False
    if S[S_CHANGED] and not S[S_CUT] and S[S_CONV_HAS] and ts - S[S_CONV] >= S[S_HOLD]:
        # GroupChecker._end_tick: a change of an assignment that held cuts the period (on a return 1 or 3 the
        # Python code finds the cut pending, as it would have made it itself)
        S[S_CUT] = 1
        S[S_CUTBY_NONE] = 1
    if S[S_CUT]:
        conv_has = S[S_CONV_HAS]
        conv = S[S_CONV]
        if not conv_has and S[S_BROKEN_HAS]:
            sub = True
            anyf = False
            for k in range(S[S_NKNOWN]):
                m = known[k]
                if M[m, M_BROKEN] and not M[m, M_CUTBY]:
                    sub = False
                if M[m, M_CUTBY] and M[m, M_FENCED]:
                    anyf = True
            if sub or anyf:
                take_broken = True
                conv_has = 1
                conv = S[S_BROKEN_TS]
        pf = S[S_PFROM]
        if S[S_PFROM_HAS] and ts > pf:
            if ts - pf > within and S[S_PNMEM] > 0 and (not conv_has or conv - pf > within):
                return 1
        if S[S_NSNAP] + 2 >= snap_off.shape[0] or S[S_SNAPFILL] + S[S_NKNOWN] > snap_pool.shape[0]:
            return 3
    anyone = S[S_ALIVE] > 0
    alld = S[S_ALL_DIRTY]
    n = S[S_NUNIV] if alld else S[S_NDIRTY]
    for k in range(n):
        pid = univ[k] if alld else dirty[k]
        unowned = anyone and P[pid, P_OWNER] < 0
        if P[pid, P_WS_HAS] and not unowned and ts - P[pid, P_WS] > within:
            return 1
    # -- from here on this tick is ours
    maxl = S[S_MAXLIST]
    if S[S_CUT]:
        if take_broken:
            S[S_CONV_HAS] = 1
            S[S_CONV] = S[S_BROKEN_TS]
        _close_period(ts, S, prows)
        S[S_PFROM] = ts
        S[S_PFROM_HAS] = 1
        s = S[S_NSNAP]
        fill = S[S_SNAPFILL]
        for k in range(S[S_NKNOWN]):
            m = known[k]
            if M[m, M_ALIVE]:
                snap_pool[fill] = m
                fill += 1
        snap_off[s + 1] = fill
        S[S_PNMEM] = fill - S[S_SNAPFILL]
        S[S_SNAPFILL] = fill
        S[S_NSNAP] = s + 1
        S[S_PSNAP] = s
        S[S_CONV_HAS] = 0
        S[S_BROKEN_HAS] = 0
        for k in range(S[S_NKNOWN]):
            m = known[k]
            M[m, M_BROKEN] = 0
            M[m, M_CUTBY] = 0
        S[S_CUT] = 0
        S[S_CUTBY_NONE] = 0
        S[S_CHANGED] = 1
    for k in range(n):
        pid = univ[k] if alld else dirty[k]
        unowned = anyone and P[pid, P_OWNER] < 0
        if unowned and not P[pid, P_WS_HAS]:
            P[pid, P_WS_HAS] = 1
            P[pid, P_WS] = ts
        elif not unowned and P[pid, P_WS_HAS]:
            P[pid, P_WS_HAS] = 0
            start = P[pid, P_WS]
            if ts > start:
                S[S_NWIN] += 1
                if S[S_WLISTED] < maxl:
                    r = S[S_NWROWS]
                    wrows[r, 0] = pid
                    wrows[r, 1] = start
                    wrows[r, 2] = ts
                    S[S_NWROWS] = r + 1
                    S[S_WLISTED] += 1
    if (S[S_CHANGED] or alld) and S[S_PFROM_HAS]:
        was_has = S[S_CONV_HAS]
        if _converged(S, M, known, P, univ, pkey):
            S[S_CONV_HAS] = 1
            S[S_CONV] = ts
            S[S_BROKEN_HAS] = 0
            for k in range(S[S_NKNOWN]):
                M[known[k], M_BROKEN] = 0
        else:
            S[S_CONV_HAS] = 0
            if was_has:
                S[S_BROKEN_HAS] = 1
                S[S_BROKEN_TS] = S[S_CONV]
                for k in range(S[S_NKNOWN]):
                    m = known[k]
                    M[m, M_BROKEN] = M[m, M_CHANGER]
            elif S[S_BROKEN_HAS]:
                for k in range(S[S_NKNOWN]):
                    m = known[k]
                    if M[m, M_CHANGER]:
                        M[m, M_BROKEN] = 1
    # members that left are retired (GroupChecker._retire): out of ``known``, their names marked in RG
    g3 = S[S_GROUP] + 3
    j = 0
    for k in range(S[S_NKNOWN]):
        m = known[k]
        M[m, M_CHANGER] = 0
        if M[m, M_LEFT] and S[S_NRR] < rr.shape[0]:
            RG[m] = g3 if (RG[m] == 0 or RG[m] == g3) else 1
            rr[S[S_NRR]] = m + 1
            S[S_NRR] += 1
            for c in range(M_COLS):
                M[m, c] = 0
        else:
            known[j] = m
            j += 1
    S[S_NKNOWN] = j
    for k in range(S[S_NDIRTY]):
        P[dirty[k], P_DIRTY] = 0
    S[S_NDIRTY] = 0
    S[S_ALL_DIRTY] = 0
    S[S_CHANGED] = 0
    return 0


@njit(cache=True, nogil=True)
def _close_period(end, S, prows):
    if not S[S_PFROM_HAS] or end <= S[S_PFROM]:
        return
    S[S_NPER] += 1
    if S[S_PLISTED] < S[S_MAXLIST]:
        r = S[S_NPROWS]
        prows[r, 0] = S[S_PFROM]
        prows[r, 1] = end
        prows[r, 2] = S[S_PSNAP]
        prows[r, 3] = S[S_CONV_HAS]
        prows[r, 4] = S[S_CONV]
        S[S_NPROWS] = r + 1
        S[S_PLISTED] += 1


@njit(cache=True, nogil=True)
def run(buf, pos, end, S, M, known, P, univ, dirty, wrows, prows, snap_off, snap_pool, ring, tmp,
        htab, pool, pool_off, ptab, pkey, RG, rr):
    """Handle the lines of ``buf[pos:end]`` for the group ``S[S_GROUP]``: ``(status, position)``."""
    while pos < end:
        nl = pos
        while nl < end and buf[nl] != 10:
            nl += 1
        nxt = nl + 1 if nl < end else end
        i = pos
        while i < nl and (buf[i] == 32 or buf[i] == 9 or buf[i] == 13 or buf[i] == 11 or buf[i] == 12):
            i += 1
        if i == nl:
            S[S_LINE] += 1
            pos = nxt
            continue
        # ---- parse the line
        if buf[i] != 123:
            return ST_LINE, pos
        i = skip_ws(buf, i + 1, nl)
        seen = 0
        ts = np.int64(0)
        grp = -1
        mem = -1
        kind = -1
        nparts = 0
        gen_has = False
        gen = np.int64(0)
        eager = True
        pcons = -1  # protocol "consumer" (1), another one (0), none given (-1)
        sto = np.int64(0)
        sent_has = False  # an integer sent_ms (a commit judged by the generation it had when sent)
        sent = np.int64(0)
        if i < nl and buf[i] == 125:
            return ST_LINE, pos
        while True:
            if i >= nl or buf[i] != 34:
                return ST_LINE, pos
            j = read_string(buf, i, nl)
            if j < 0:
                return ST_LINE, pos
            ka = i + 1
            i = skip_ws(buf, j + 1, nl)
            if i >= nl or buf[i] != 58:
                return ST_LINE, pos
            i = skip_ws(buf, i + 1, nl)
            if i >= nl:
                return ST_LINE, pos
            c = buf[i]
            bit = 0
            if key_is(buf, ka, j, W_TS):
                bit = 1
                i, ts, integer = read_number(buf, i, nl)
                if i < 0 or not integer or ts < 0 or ts > MAX_TS:
                    return ST_LINE, pos  # (a time that is no time: the Python code refuses the file)
            elif key_is(buf, ka, j, W_EVENT):
                bit = 2
                if c != 34:
                    return ST_LINE, pos
                k = read_string(buf, i, nl)
                if k < 0:
                    return ST_LINE, pos
                kind = kind_of(buf, i + 1, k)
                i = k + 1
            elif key_is(buf, ka, j, W_MEMBER):
                bit = 4
                if c != 34:
                    return ST_LINE, pos
                k = read_string(buf, i, nl)
                if k < 0:
                    return ST_LINE, pos
                mem = intern(buf, i + 1, k, S, htab, pool, pool_off)
                if mem < 0:
                    return ST_FULL, pos
                i = k + 1
            elif key_is(buf, ka, j, W_GROUP):
                bit = 8
                if c == 34:
                    k = read_string(buf, i, nl)
                    if k < 0:
                        return ST_LINE, pos
                    grp = intern(buf, i + 1, k, S, htab, pool, pool_off)
                    if grp < 0:
                        return ST_FULL, pos
                    i = k + 1
                elif c == 110:
                    i = read_literal(buf, i, nl)
                    if i < 0:
                        return ST_LINE, pos
                else:
                    return ST_LINE, pos
            elif key_is(buf, ka, j, W_PARTS):
                bit = 16
                i, nparts = read_parts(buf, i, nl, S, htab, pool, pool_off, ptab, pkey, tmp)
                if nparts == -2:
                    return ST_FULL, pos
                if i < 0:
                    return ST_LINE, pos
            elif key_is(buf, ka, j, W_GEN):
                bit = 32
                if c == 45 or 48 <= c <= 57:
                    i, gen, gen_has = read_number(buf, i, nl)
                else:
                    i = skip_value(buf, i, nl)
            elif key_is(buf, ka, j, W_SENT):
                bit = 512
                if c == 45 or 48 <= c <= 57:
                    i, sent, sent_has = read_number(buf, i, nl)
                    if not sent_has:
                        return ST_LINE, pos  # a float, or more digits than int64 holds: the Python code's
                else:
                    i = skip_value(buf, i, nl)
            elif key_is(buf, ka, j, W_TOPICS):
                bit = 256  # a subscription: the Python code's line
                i = skip_value(buf, i, nl)
            elif key_is(buf, ka, j, W_STO):
                bit = 128
                if c == 45 or 48 <= c <= 57:
                    i, sto, sto_int = read_number(buf, i, nl)
                    if i >= 0 and (not sto_int or sto < 0):
                        sto = 0
                else:
                    i = skip_value(buf, i, nl)
            elif key_is(buf, ka, j, W_PROTO):
                bit = 64
                eager = False
                if c == 34:
                    k = read_string(buf, i, nl)
                    if k < 0:
                        return ST_LINE, pos
                    eager = key_is(buf, i + 1, k, W_EAGER)
                    pcons = 1 if key_is(buf, i + 1, k, W_CONSUMER) else 0
                    i = k + 1
                else:
                    pcons = -1 if c == 110 else 0
                    i = skip_value(buf, i, nl)
            else:
                i = skip_value(buf, i, nl)
            if i < 0 or (seen & bit):
                return ST_LINE, pos
            seen |= bit
            i = skip_ws(buf, i, nl)
            if i < nl and buf[i] == 44:
                i = skip_ws(buf, i + 1, nl)
                continue
            if i < nl and buf[i] == 125:
                i += 1
                break
            return ST_LINE, pos
        if skip_ws(buf, i, nl) != nl:
            return ST_LINE, pos
        # ---- whose line, and is it ours to handle
        if grp != S[S_GROUP]:
            return ST_GROUP, pos
        if not (seen & 1) or kind < 0 or kind == K_BAIL or (seen & 256):
            return ST_LINE, pos
        if not S[S_TICK_HAS] or ts != S[S_TICK]:
            if S[S_TICK_HAS] and ts < S[S_TICK]:
                return ST_LINE, pos
            if S[S_TICK_HAS]:
                r = _end_tick(S, M, known, P, univ, dirty, pkey, wrows, prows, snap_off, snap_pool, RG, rr)
                if r == 1:
                    return ST_LINE, pos
                if r == 3:
                    return ST_SYNC, pos
            S[S_TICK] = ts
            S[S_TICK_HAS] = 1
            if not S[S_FIRST_HAS]:
                S[S_FIRST_HAS] = 1
                S[S_FIRST_TS] = ts
                S[S_PFROM_HAS] = 1
                S[S_PFROM] = ts
        # from here on a return leaves the tick as it is: the Python code reads the line at this tick
        if kind == K_COMMIT and mem >= 0 and M[mem, M_KNOWN] and not M[mem, M_LEFT] and not M[mem, M_REMOVED]:
            if gen_has:
                if sent_has and sent <= ts and M[mem, M_HN] and sent <= M[mem, M_HTS]:
                    return ST_LINE, pos  # sent before the member's last generation change: the Python code's
                if 0 <= gen < M[mem, M_GEN]:
                    return ST_LINE, pos  # a generation going down: a finding, the Python code's
                M[mem, M_LASTGEN] = gen
                M[mem, M_LASTGEN_HAS] = 1
        elif kind != K_END:
            if mem < 0 or M[mem, M_REMOVED]:
                return ST_LINE, pos
            m = mem
            new = M[m, M_KNOWN] == 0
            if not new and M[m, M_LEFT] and kind != K_JOINED:
                return ST_LINE, pos
            # a name retired in this group comes back with ``joined`` (any other line of it, or a name
            # retired in another group, is the Python code's)
            if new and RG[m] != 0 and (RG[m] != S[S_GROUP] + 3 or kind != K_JOINED or S[S_NRR] >= rr.shape[0]):
                return ST_LINE, pos
            if kind == K_ASSIGNED or kind == K_REVOKED:
                if gen_has and 0 <= gen < M[m, M_GEN]:
                    return ST_LINE, pos
                bad = False
                for a in range(nparts):
                    pid = tmp[a]
                    o = P[pid, P_OWNER]
                    if P[pid, P_MARK]:
                        bad = True
                    P[pid, P_MARK] = 1
                    if kind == K_ASSIGNED:
                        if (o >= 0 and o != m) or (o == m and not eager):
                            bad = True
                    elif o != m:
                        bad = True
                if bad:
                    for a in range(nparts):
                        P[tmp[a], P_MARK] = 0
                    return ST_LINE, pos
            if (kind == K_ASSIGNED or kind == K_LEFT) and not new and M[m, M_WAIT] and M[m, M_OHAS]:
                thr = M[m, M_STO] if M[m, M_STO] > 0 else S[S_STODEF]
                if ts - M[m, M_OAT] > thr:  # a starved member's wait ends: a notice, the Python code's
                    if kind == K_ASSIGNED:
                        for a in range(nparts):
                            P[tmp[a], P_MARK] = 0
                    return ST_LINE, pos
            # ---- the line is ours: apply it
            if new:
                if RG[m] != 0:  # revived
                    RG[m] = 0
                    rr[S[S_NRR]] = -(m + 1)
                    S[S_NRR] += 1
                M[m, M_KNOWN] = 1
                M[m, M_ALIVE] = 1
                M[m, M_LEFT] = 0
                M[m, M_FENCED] = 0
                M[m, M_REMOVED] = 0
                M[m, M_GEN] = -1
                M[m, M_HN] = 0
                M[m, M_LASTGEN_HAS] = 0
                M[m, M_NOWNED] = 0
                M[m, M_CUTBY] = 0
                M[m, M_CHANGER] = 0
                M[m, M_BROKEN] = 0
                M[m, M_WAIT] = 0
                M[m, M_OHAS] = 0
                M[m, M_STO] = 0
                known[S[S_NKNOWN]] = m
                S[S_NKNOWN] += 1
                S[S_ALIVE] += 1
                S[S_ALL_DIRTY] = 1
                if kind != K_JOINED:
                    S[S_CUT] = 1
                    M[m, M_CUTBY] = 1
            if gen_has:
                M[m, M_LASTGEN] = gen
                M[m, M_LASTGEN_HAS] = 1
            if (kind == K_ASSIGNED or kind == K_REVOKED) and pcons >= 0:
                M[m, M_CONSUMER] = pcons
            if kind == K_ASSIGNED:
                _stop_waiting(m, M)
                if S[S_NWALONE] > 0:
                    for k in range(S[S_NKNOWN]):
                        w = known[k]
                        if M[w, M_WAIT] and not M[w, M_OHAS]:
                            M[w, M_OHAS] = 1
                            M[w, M_OAT] = ts
                    S[S_NWALONE] = 0
                if gen_has and (gen > M[m, M_GEN] or gen == -1):
                    _set_gen(m, gen, ts, M)
                M[m, M_FENCED] = 0
                M[m, M_REMOVED] = 0
                g = gen if gen_has else -1
                if eager and M[m, M_NOWNED]:
                    for a in range(S[S_NUNIV]):
                        pid = univ[a]
                        if P[pid, P_OWNER] == m and not P[pid, P_MARK]:
                            _remove_owner(pid, m, S, M, P, dirty)
                for a in range(nparts):
                    pid = tmp[a]
                    P[pid, P_MARK] = 0
                    if P[pid, P_OWNER] == m:
                        continue
                    if not P[pid, P_UNIV]:
                        P[pid, P_UNIV] = 1
                        univ[S[S_NUNIV]] = pid
                        S[S_NUNIV] += 1
                        S[S_ALL_DIRTY] = 1
                    P[pid, P_OWNER] = m
                    P[pid, P_GEN] = g
                    M[m, M_NOWNED] += 1
                    M[m, M_CHANGER] = 1
                    S[S_NONE] += 1
                    S[S_CHANGED] = 1
                    _dirty(pid, S, P, dirty)
            elif kind == K_REVOKED:
                if not M[m, M_WAIT]:
                    _start_waiting(m, ts, S, M)
                for a in range(nparts):
                    pid = tmp[a]
                    P[pid, P_MARK] = 0
                    _remove_owner(pid, m, S, M, P, dirty)
            elif kind == K_JOINED:
                if not M[m, M_ALIVE]:
                    M[m, M_ALIVE] = 1
                    S[S_ALIVE] += 1
                    S[S_ALL_DIRTY] = 1
                _release_all(m, S, M, P, univ, dirty)
                M[m, M_LEFT] = 0
                M[m, M_FENCED] = 0
                M[m, M_REMOVED] = 0
                _set_gen(m, -1, ts, M)
                S[S_CUT] = 1
                M[m, M_CUTBY] = 1
                M[m, M_STO] = sto
                if M[m, M_WAIT] and not M[m, M_OHAS]:
                    S[S_NWALONE] -= 1
                _start_waiting(m, ts, S, M)
            elif kind == K_LEFT:
                if M[m, M_WAIT] and not M[m, M_OHAS]:
                    S[S_NWALONE] -= 1
                _stop_waiting(m, M)
                _release_all(m, S, M, P, univ, dirty)
                M[m, M_LEFT] = 1
                if M[m, M_ALIVE]:
                    M[m, M_ALIVE] = 0
                    S[S_ALIVE] -= 1
                    S[S_ALL_DIRTY] = 1
                S[S_CUT] = 1
                M[m, M_CUTBY] = 1
            if gen_has and gen == -1:
                _set_gen(m, -1, ts, M)
        S[S_EVENTS] += 1
        S[S_LAST_TS] = ts
        S[S_LINE] += 1
        r = S[S_RINGN] % RING
        ring[r, 0] = S[S_LINE]
        ring[r, 1] = pos
        ring[r, 2] = nl
        S[S_RINGN] += 1
        pos = nxt
    return ST_DONE, pos
