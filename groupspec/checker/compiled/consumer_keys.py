"""The consumer protocol's keys (``Consumer.key`` / ``exact_key``), compiled with numba, on ``consumer_kernel``'s rows.

Checked against the model by ``tests/test_compiled_consumer.py``: two states get equal key vectors exactly
when the model's keys are equal.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .consumer_kernel import (
    C_ASSIGNED, C_EPOCH, C_OWNED, C_PROC, C_TOPICS, H_BUDGET, H_EPOCH, H_PARTS, H_TEPOCH, HEADER, M_ASSIGNED,
    M_EPOCH, M_LEFT, M_PREV, M_PRESENT, M_REVOKING, M_STATE, M_STATIC, M_TOPICS, OLDEST, P_FLIGHT, P_K, P_N, P_SYM,
    SLOT, T_TARGET, F_ANS, F_ANS_ASSIGNED, F_ANS_EPOCH, F_COM, F_COM_EPOCH, F_COM_PARTS, F_SINCE, FS, fslot,
)


# -- keys ------------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def rel(e, base):
    """``groupspec.model.consumer._rel``."""
    if e <= 0:
        return 100 - e
    d = base - e
    return d if d < OLDEST else OLDEST


@njit(cache=True, inline="always")
def rel_exact(e, base):
    """``_rel`` with ``oldest`` unbounded (the in-flight faults: no epoch merged)."""
    if e <= 0:
        return 100 - e
    return base - e


@njit(cache=True, inline="always")
def popcount(x):
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


@njit(cache=True, inline="always")
def remap(mask, perm):
    out = 0
    p = 0
    while mask:
        if mask & 1:
            out |= 1 << perm[p]
        mask >>= 1
        p += 1
    return out


KH = 3  # key header: epoch - assignment epoch, existing partitions, budget
EXACT_ROW = 15
SHAPE = 15  # proc, rel(epoch), topics, present, state, rel(epoch), rel(previous), topics, static, left, 5 sizes
SYM_ROW = SHAPE + 5


def key_len(n: int, symmetric: bool, flight_k: int = 0) -> int:
    """The key vector's length; ``flight_k``: the partitions, when the in-flight faults are on (0: off)."""
    if flight_k:
        return KH + n * (EXACT_ROW + FS + flight_k)
    return KH + n * (SYM_ROW if symmetric else EXACT_ROW)


@njit(cache=True)
def _less(a, b):
    for x in range(a.shape[0]):
        if a[x] != b[x]:
            return a[x] < b[x]
    return False


@njit(cache=True, inline="always")
def _row_less(rows, i, j, length):
    """``rows[i, :length] < rows[j, :length]`` lexicographically (``_less`` without the slices)."""
    for x in range(length):
        a = rows[i, x]
        b = rows[j, x]
        if a != b:
            return a < b
    return False


@njit(cache=True)
def _flight_key(P, s, kv):
    """``Consumer.exact_key`` with the in-flight faults (``Consumer._rows``' first branch): no epoch merged, each
    partition's assignment epoch, the answer and the OffsetCommit on their way."""
    n = P[P_N]
    K = P[P_K]
    base = s[H_EPOCH]
    kv[1] = s[H_PARTS]
    row = EXACT_ROW + FS + K
    for i in range(n):
        b = HEADER + i * SLOT
        y = fslot(P, i)
        o = KH + i * row
        kv[o] = s[b + C_PROC]
        kv[o + 1] = rel_exact(s[b + C_EPOCH], base)
        kv[o + 2] = s[b + C_OWNED]
        kv[o + 3] = s[b + C_ASSIGNED]
        kv[o + 4] = s[b + C_TOPICS]
        if s[b + M_PRESENT]:
            kv[o + 5] = 1
            kv[o + 6] = s[b + M_STATE]
            kv[o + 7] = rel_exact(s[b + M_EPOCH], base)
            kv[o + 8] = rel_exact(s[b + M_PREV], base)
            kv[o + 9] = s[b + M_ASSIGNED]
            kv[o + 10] = s[b + M_REVOKING]
            kv[o + 11] = s[b + M_TOPICS]
            kv[o + 12] = s[b + M_STATIC]
            kv[o + 13] = s[b + M_LEFT]
            for p in range(K):
                kv[o + EXACT_ROW + FS + p] = rel_exact(s[y + F_SINCE + p], base)
        else:
            for f in range(5, 14):
                kv[o + f] = 0
            for p in range(K):
                kv[o + EXACT_ROW + FS + p] = 0
        kv[o + 14] = s[b + T_TARGET]
        x = o + EXACT_ROW
        if s[y + F_ANS]:
            kv[x] = 1
            kv[x + 1] = rel_exact(s[y + F_ANS_EPOCH], base)
            kv[x + 2] = s[y + F_ANS_ASSIGNED]
        else:
            kv[x] = kv[x + 1] = kv[x + 2] = 0
        if s[y + F_COM]:
            kv[x + 3] = 1
            kv[x + 4] = rel_exact(s[y + F_COM_EPOCH], base)
            kv[x + 5] = s[y + F_COM_PARTS]
        else:
            kv[x + 3] = kv[x + 4] = kv[x + 5] = 0


@njit(cache=True)
def key_vector(P, blocks, s, rows, order, cols, perm, kv):
    """``Consumer.key`` (``exact_key`` when the assignor is not symmetric) as a vector of integers:
    two states have equal vectors exactly when the model's keys are equal."""
    n = P[P_N]
    base = s[H_EPOCH]
    kv[0] = s[H_EPOCH] - s[H_TEPOCH]
    kv[2] = s[H_BUDGET]
    if P[P_FLIGHT]:
        _flight_key(P, s, kv)
        return
    if not P[P_SYM]:
        kv[1] = s[H_PARTS]
        for i in range(n):
            b = HEADER + i * SLOT
            o = KH + i * EXACT_ROW
            kv[o] = s[b + C_PROC]
            kv[o + 1] = rel(s[b + C_EPOCH], base)
            kv[o + 2] = s[b + C_OWNED]
            kv[o + 3] = s[b + C_ASSIGNED]
            kv[o + 4] = s[b + C_TOPICS]
            if s[b + M_PRESENT]:
                kv[o + 5] = 1
                kv[o + 6] = s[b + M_STATE]
                kv[o + 7] = rel(s[b + M_EPOCH], base)
                kv[o + 8] = rel(s[b + M_PREV], base)
                kv[o + 9] = s[b + M_ASSIGNED]
                kv[o + 10] = s[b + M_REVOKING]
                kv[o + 11] = s[b + M_TOPICS]
                kv[o + 12] = s[b + M_STATIC]
                kv[o + 13] = s[b + M_LEFT]
            else:
                for f in range(5, 14):
                    kv[o + f] = 0
            kv[o + 14] = s[b + T_TARGET]
        return
    # rows[i]: the shape, then the masks (owned, assigned, target, member assigned, member revoking)
    for i in range(n):
        b = HEADER + i * SLOT
        r = rows[i]
        r[0] = s[b + C_PROC]
        r[1] = rel(s[b + C_EPOCH], base)
        r[2] = s[b + C_TOPICS]
        if s[b + M_PRESENT]:
            r[3] = 1
            r[4] = s[b + M_STATE]
            r[5] = rel(s[b + M_EPOCH], base)
            r[6] = rel(s[b + M_PREV], base)
            r[7] = s[b + M_TOPICS]
            r[8] = s[b + M_STATIC]
            r[9] = s[b + M_LEFT]
            r[SHAPE + 3] = s[b + M_ASSIGNED]
            r[SHAPE + 4] = s[b + M_REVOKING]
        else:
            for f in range(3, 10):
                r[f] = 0
            r[SHAPE + 3] = 0
            r[SHAPE + 4] = 0
        r[SHAPE] = s[b + C_OWNED]
        r[SHAPE + 1] = s[b + C_ASSIGNED]
        r[SHAPE + 2] = s[b + T_TARGET]
        for k in range(5):
            r[10 + k] = popcount(r[SHAPE + k])
    # order: slots sorted by shape (stable, as Python's sorted)
    for i in range(n):
        order[i] = i
    for x in range(1, n):
        v = order[x]
        y = x - 1
        while y >= 0 and _row_less(rows, v, order[y], SHAPE):
            order[y + 1] = order[y]
            y -= 1
        order[y + 1] = v
    K = P[P_K]
    for p in range(K):
        cols[p] = 0
    full = (1 << K) - 1
    for j in range(n):
        i = order[j]
        for k in range(5):
            m = rows[i, SHAPE + k] & full  # (the partitions 0 .. K-1, as the loop over them was)
            bit = 1 << (j * 5 + k)
            p = 0
            while m:
                if m & 1:
                    cols[p] |= bit
                m >>= 1
                p += 1
    top = 1 << (n * 5)
    for p in range(K):
        if s[H_PARTS] >> p & 1:
            cols[p] |= top
    # within each topic block, the k-th partition by column (stable) becomes the block's k-th
    for t in range(blocks.shape[0] - 1):
        lo, hi = blocks[t], blocks[t + 1]
        for p in range(lo, hi):
            rank = 0
            for q in range(lo, hi):
                if cols[q] < cols[p] or (cols[q] == cols[p] and q < p):
                    rank += 1
            perm[p] = lo + rank
    kv[1] = remap(s[H_PARTS], perm)
    for i in range(n):
        for k in range(5):
            rows[i, SHAPE + k] = remap(rows[i, SHAPE + k], perm)
    # rows sorted as whole tuples
    for i in range(n):
        order[i] = i
    for x in range(1, n):
        v = order[x]
        y = x - 1
        while y >= 0 and _row_less(rows, v, order[y], SYM_ROW):
            order[y + 1] = order[y]
            y -= 1
        order[y + 1] = v
    for j in range(n):
        o = KH + j * SYM_ROW
        r = rows[order[j]]
        for f in range(SYM_ROW):
            kv[o + f] = r[f]


KEY_OFFSET = 256  # relative epochs may fall below 0 in a broken variant; every field must fit 16 bits


@njit(cache=True)
def pack(kv, words):
    """Four 16-bit fields per 64-bit word, losslessly (a field that does not fit is an error)."""
    nk = kv.shape[0]
    for w in range(words.shape[0]):  # each word put together in a register: one store, not four
        acc = np.uint64(0)
        for k in range(4):
            x = 4 * w + k
            if x < nk:
                v = kv[x] + KEY_OFFSET
                if v < 0 or v >= 65536:
                    raise ValueError("key field out of range")
                acc |= np.uint64(v) << np.uint64(16 * k)
        words[w] = acc


def key_words(n: int, symmetric: bool) -> int:
    return (key_len(n, symmetric) + 3) // 4
