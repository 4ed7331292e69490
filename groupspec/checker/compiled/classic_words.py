"""The classic family's symmetry-reduced key as packed words directly (the search's fast path of ``kernel.key_vector``
followed by ``lean.pack_words``): the same canonical form, computed on whole 64-bit words instead of field by field.

Theory of operation
-------------------
``kernel.key_vector`` writes each member slot's key row (``kernel.slot_row``: 19 shape fields, the sizes of its
six partition masks, the six masks), sorts the slots twice by comparing rows field by field, renames the
partitions, and writes the sorted rows into a key vector that ``lean.pack_words`` then packs field by field
(about 110 fields at four members, each shifted, offset and range-checked). Here each slot's row is packed at
once into two words, most significant field first, so that comparing two rows field by field (lexicographic
order, fields of fixed width, every value made non-negative by the same offsets as the packing) is comparing
the two words as integers:

* ``shape word``: the 19 shape fields then the six mask sizes (what the first sort compares);
* ``mask word``: the six masks, ``K`` bits each, renamed by the partition permutation (what the second sort
  compares after the shape).

The slots are sorted (stable insertion sort, as Python's ``sorted`` and as ``kernel.key_vector``) by the shape
word, the partition columns and the permutation are computed exactly as in ``kernel.key_vector``, the masks
renamed, the slots sorted again by (shape word, mask word), and the key is one header word (status, renamed
partitions and held set, target absent, budget) then each sorted slot's two words. Every field is range-checked
as ``lean.pack_words`` checks it, so the words are an injective function of the key vector: two states get the
same words exactly when ``kernel.key_vector`` gives them the same vector (the words themselves differ; nothing
stores them beyond a search, whose fingerprints they feed).

It covers the symmetry-reduced keys without ``--forget-dead`` whose shape word fits 63 bits (:func:`fits`:
``34 + 2 * topics + 6 * bits(partitions) <= 63`` and ``6 * partitions <= 63``); elsewhere the search keeps
``kernel.key_vector`` and ``lean.pack_words`` (``families.fingerprint``). The drift tests compare the keys with
the model's through ``engine.Kernel.key``, which uses the same choice.
"""
from __future__ import annotations

from numba import njit

from .kernel import NMASK, OLDEST, P_DEAD, P_K, P_N, P_SYM, P_T, popcount
from .layout import (
    HEADER, SLOT, C_GEN, C_GH, C_GHGEN, C_GHOWN, C_IB, C_IBASG, C_IBGEN, C_ID, C_OWNED, C_PROC, C_REJOIN, C_STATUS, C_TOPICS,
    G_BUDGET, G_GEN, G_HELD, G_HELDFOR, G_LEADER, G_PARTS, G_STATUS, G_TSET, R_ASG, R_AWAIT, R_GEN, R_JOINED,
    R_OWNED, R_SET, R_STATIC, R_SYNCED, R_TOPICS, T_ASG,
)

NO_GEN = -1
REL_OFF = 8  # kernel.key_offsets: relative generations (-2 .. OLDEST) are stored plus 8, in 4 bits
# scratch columns of ``rows`` (kernel.ROWLEN wide): the six masks, then the two words
X_SW = NMASK
X_MW = NMASK + 1


@njit(cache=True, inline="always")
def _b(i):
    """Slot ``i``'s first field (kernel._b)."""
    return HEADER + i * SLOT


@njit(cache=True, inline="always")
def bits(x):
    """Bits needed to hold 0..x."""
    b = 0
    while x >> b:
        b += 1
    return b


@njit(cache=True, inline="always")
def fits(P):
    """Whether this instance's keys take the fast path (symmetric keys, no forgotten fields, words that fit)."""
    k = P[P_K]
    return (P[P_SYM] != 0 and P[P_DEAD] == 0 and 34 + 2 * P[P_T] + NMASK * bits(k) <= 63
            and NMASK * k <= 63 and 3 + 2 * k + 1 + 4 <= 63)


@njit(cache=True, inline="always")
def nwords(P):
    """Words of a key: the header, then two per slot."""
    return 1 + 2 * P[P_N]


@njit(cache=True, inline="always")
def _put(w, v, off, width):
    v += off
    if v < 0 or v >= (1 << width):
        raise ValueError("key field out of range")
    return (w << width) | v


@njit(cache=True, inline="always")
def _rel(gen, base):
    """kernel.rel."""
    if gen == NO_GEN:
        return -1
    d = base - gen
    return d if d < OLDEST else OLDEST


@njit(cache=True)
def key_words(P, blocks, row, rows, order, cols, perm, words):
    """The key of ``row`` as ``nwords(P)`` words in ``words`` (see the module's docstring); only where
    :func:`fits`."""
    n = P[P_N]
    K = P[P_K]
    t = P[P_T]
    pcw = bits(K)
    base = row[G_GEN]
    full = (1 << K) - 1
    for i in range(n):
        b = _b(i)
        r = rows[i]
        ib = row[b + C_IB]
        gh = row[b + C_GH]
        rset = row[b + R_SET]
        sw = 0
        sw = _put(sw, row[b + C_PROC], 0, 2)
        sw = _put(sw, row[b + C_STATUS], 0, 2)
        sw = _put(sw, row[b + C_ID], 0, 2)
        sw = _put(sw, _rel(row[b + C_GEN], base), REL_OFF, 4)
        sw = _put(sw, row[b + C_TOPICS], 0, t)
        sw = _put(sw, row[b + C_REJOIN], 0, 1)
        if ib:
            sw = _put(sw, 1, 0, 1)
            sw = _put(sw, ib, 0, 3)
            sw = _put(sw, _rel(row[b + C_IBGEN], base), REL_OFF, 4)
        else:
            sw = (sw << 8) | REL_OFF  # 0, 0, 0 + offset
        sw = _put(sw, _rel(row[b + C_GHGEN], base) if gh else -2, REL_OFF, 4)
        if rset:
            sw = _put(sw, 1, 0, 1)
            sw = _put(sw, row[b + R_STATIC], 0, 1)
            sw = _put(sw, row[b + R_JOINED], 0, 1)
            sw = _put(sw, row[b + R_AWAIT], 0, 1)
            sw = _put(sw, row[b + R_SYNCED], 0, 1)
            sw = _put(sw, row[b + R_TOPICS], 0, t)
            sw = _put(sw, _rel(row[b + R_GEN], base), REL_OFF, 4)
        else:
            sw = (sw << (5 + t + 4)) | REL_OFF
        sw = (sw << 1) | (1 if row[G_LEADER] == i else 0)
        sw = (sw << 1) | (1 if row[G_HELDFOR] == i else 0)
        r[0] = row[b + C_OWNED]
        r[1] = row[b + C_IBASG] if ib else 0
        r[2] = row[b + C_GHOWN] if gh else 0
        r[3] = row[b + R_OWNED] if rset else 0
        r[4] = row[b + R_ASG] if rset else 0
        r[5] = row[b + T_ASG] if row[G_TSET] else 0
        for k in range(NMASK):
            m = r[k]
            if m < 0 or m > full:
                raise ValueError("key field out of range")
            sw = (sw << pcw) | popcount(m)
        r[X_SW] = sw
    # 1. slots ordered by shape and mask sizes (stable insertion sort, as kernel.key_vector)
    for j in range(n):
        q = j
        sj = rows[j, X_SW]
        while q > 0 and sj < rows[order[q - 1], X_SW]:
            order[q] = order[q - 1]
            q -= 1
        order[q] = j
    # 2. each partition's column (kernel.key_vector)
    for p in range(K):
        cols[p] = 0
    for j in range(n):
        i = order[j]
        shift = (n - 1 - j) * NMASK
        for k in range(NMASK):
            m = rows[i, k]
            bit = 1 << (shift + NMASK - 1 - k)
            p = 0
            while m:
                if m & 1:
                    cols[p] |= bit
                m >>= 1
                p += 1
    top = n * NMASK
    parts = row[G_PARTS]
    held = row[G_HELD]
    for p in range(K):
        cols[p] |= (((parts >> p) & 1) << (top + 1)) | (((held >> p) & 1) << top)
    for tb in range(blocks.shape[0] - 1):
        lo = blocks[tb]
        hi = blocks[tb + 1]
        for p in range(lo, hi):
            c = cols[p]
            rank = 0
            for q in range(lo, hi):
                if cols[q] < c or (cols[q] == c and q < p):
                    rank += 1
            perm[p] = lo + rank
    # 3. masks renamed, packed into the mask word; slots sorted by (shape word, mask word)
    for i in range(n):
        mw = 0
        for k in range(NMASK):
            m = rows[i, k]
            out = 0
            p = 0
            while m:
                if m & 1:
                    out |= 1 << perm[p]
                m >>= 1
                p += 1
            mw = (mw << K) | out
        rows[i, X_MW] = mw
    for j in range(n):
        q = j
        sj = rows[j, X_SW]
        mj = rows[j, X_MW]
        while q > 0:
            o = order[q - 1]
            so = rows[o, X_SW]
            if sj < so or (sj == so and mj < rows[o, X_MW]):
                order[q] = o
                q -= 1
            else:
                break
        order[q] = j
    h = 0
    h = _put(h, row[G_STATUS], 0, 3)
    h = _put(h, _remap(parts, perm), 0, K)
    h = _put(h, _remap(held, perm), 0, K)
    h = _put(h, 1 - row[G_TSET], 0, 1)
    h = _put(h, row[G_BUDGET], 0, 4)
    words[0] = h
    for j in range(n):
        i = order[j]
        words[1 + 2 * j] = rows[i, X_SW]
        words[2 + 2 * j] = rows[i, X_MW]


@njit(cache=True, inline="always")
def _remap(mask, perm):
    out = 0
    p = 0
    while mask:
        if mask & 1:
            out |= 1 << perm[p]
        mask >>= 1
        p += 1
    return out
