"""The plug-in point of the one compiled search: what the search asks of a family's kernel, per family.

The search (``search.py``: the serial loop, the parallel expansion and merge, the replay of a stored path)
is written once; what differs between the protocol families is behind the functions of this module, each
a switch on the family id ``fam`` to that family's kernel:

========================= =========================================================================
``CLASSIC``               ``kernel.py`` (the classic protocol; keys packed by ``lean.pack_plan``)
``CONSUMER``              ``consumer_kernel.py`` + ``consumer_keys.py`` (KIP-848; target table)
``MIGRATION``             ``migration_kernel.py`` + ``migration_properties.py`` (the migration; target table)
========================= =========================================================================

Every function here is inlined into its caller (numba's ``inline="always"``): the search sees the family's
kernel calls behind one branch each, with no call and no reference counting of its own.

A family with a *target table* (the model's assignor answers, filled by the driver: ``needs_targets``)
may answer MISS (``-1``) from ``successors`` and ``converged``; the search then returns NEED_TARGET before
it has written anything for the state it was expanding.

NOTE(numba-plugins): the switch is static code, not a function passed in, because numba's on-disk cache
cannot key a compiled function on a function argument or a closure over one (measured with numba 0.61:
a cache miss in every new process, and the index grows without bound), and the compiled engine must start
warm. A new family adds its id, one branch per function here, and its kernel to ``cache.SOURCES``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import classic_words as CW
from . import consumer_kernel as CK
from . import consumer_keys as CKEY
from . import kernel as K
from . import lean as L
from . import migration_kernel as MK
from . import migration_properties as MP

CLASSIC, CONSUMER, MIGRATION = 0, 1, 2
MISS = -1  # a target the table does not hold yet (consumer_kernel.MISS)
assert CK.MISS == MISS


@njit(cache=True, inline="always")
def needs_targets(fam):
    """Whether the family's steps and convergence may ask the target table (and answer MISS)."""
    return fam != CLASSIC


@njit(cache=True, inline="always")
def max_successors(fam, n):
    """An upper bound on one state's successors (the search's buffers)."""
    if fam == CLASSIC:
        return n * K.MAX_SUCC_PER_SLOT + 3
    return n * CK.MAX_SUCC_PER_SLOT + 1


@njit(cache=True, inline="always")
def fair_limit(fam):
    """Action codes below this are protocol steps (weakly fair: the edges convergence is decided on)."""
    return K.FAIR_LIMIT if fam == CLASSIC else CK.FAIR_LIMIT


@njit(cache=True, inline="always")
def initial_members(fam, P):
    return P[K.P_INITIAL] if fam == CLASSIC else P[CK.P_INITIAL]


@njit(cache=True, inline="always")
def successors(fam, P, TM, s, out, acts, tk, tv, tq, u):
    """The enabled actions of row ``s`` and their rows, in the model's order; MISS (target families)."""
    if fam == CLASSIC:
        return K.successors(P, TM, s, out, acts)
    if fam == MIGRATION:
        return MK.successors(P, TM, s, out, acts, tk, tv, tq, u)
    return CK.successors(P, TM, s, out, acts, tk, tv, tq)


@njit(cache=True, inline="always")
def converged(fam, P, TM, s, tk, tv, tq):
    """1 or 0; MISS where a target family's answer is not in the table yet."""
    if fam == CLASSIC:
        return 1 if K.converged(P, TM, s) else 0
    if fam == MIGRATION:
        return MP.converged(P, TM, s, tk, tv, tq)
    return CK.converged(P, TM, s, tk, tv, tq)


@njit(cache=True, inline="always")
def exclusive_ownership_ok(fam, P, s):
    if fam == CLASSIC:
        return K.exclusive_ownership_ok(P, s)
    return MP.exclusive_ownership_ok(P, s) if fam == MIGRATION else CK.exclusive_ownership_ok(P, s)


@njit(cache=True, inline="always")
def commit_fencing_ok(fam, P, s):
    if fam == CLASSIC:
        return K.commit_fencing_ok(P, s)
    return MP.commit_fencing_ok(P, s) if fam == MIGRATION else CK.commit_fencing_ok(P, s)


@njit(cache=True, inline="always")
def generation_ok(fam, P, s, t):
    if fam == CLASSIC:
        return K.generation_ok(P, s, t)
    return MP.generation_ok(P, s, t) if fam == MIGRATION else CK.generation_ok(P, s, t)


@njit(cache=True, inline="always")
def members_in_group(fam, P, s):
    if fam == CLASSIC:
        return K.members_in_group(P, s)
    return MP.members_in_group(P, s) if fam == MIGRATION else CK.members_in_group(P, s)


@njit(cache=True, inline="always")
def consumer_key_len(fam, P):
    """Length of a target family's key vector (``consumer_keys.key_len``, ``migration_properties.key_len``)."""
    n = P[CK.P_N]
    if fam == MIGRATION:
        return 2 + max(5 + 3 * n, 1 + 8 * n) + 6 * n
    if P[CK.P_FLIGHT]:
        return CKEY.KH + n * (CKEY.EXACT_ROW + CK.FS + P[CK.P_K])
    return CKEY.KH + n * (CKEY.SYM_ROW if P[CK.P_SYM] else CKEY.EXACT_ROW)


@njit(cache=True, inline="always")
def key_scratch(fam, P, plan, nwords):
    """The key's work buffers: rows, order, cols, perm, the key vector, the packed words."""
    n = P[K.P_N]  # P_N is 0 in every family
    if fam == CLASSIC:
        return (np.zeros((n, K.ROWLEN), np.int64), np.zeros(n, np.int64), np.zeros(P[K.P_K], np.int64),
                np.zeros(P[K.P_K], np.int64), np.zeros(K.KH + n * K.ROWLEN, np.int64),
                np.zeros(max(plan[plan.shape[0] - 1, 1] + 1, CW.nwords(P)), np.uint64))
    return (np.zeros((n, CKEY.SYM_ROW), np.int64), np.zeros(n, np.int64), np.zeros(P[CK.P_K], np.int64),
            np.zeros(P[CK.P_K], np.int64), np.zeros(consumer_key_len(fam, P), np.int64),
            np.zeros(nwords, np.uint64))


@njit(cache=True, inline="always")
def key_vector(fam, P, blocks, t, rows, order, cols, perm, kv):
    """Row ``t``'s symmetry-reduced key vector, in ``kv``."""
    if fam == CLASSIC:
        K.key_vector(P, blocks, t, rows, order, cols, perm, kv)
        return
    if (kv.shape[0] < consumer_key_len(fam, P) or rows.shape[1] < CKEY.SYM_ROW
            or cols.shape[0] < P[CK.P_K] or perm.shape[0] < P[CK.P_K]):
        raise ValueError("key buffers do not fit the parameters")  # compiled code does not check bounds
    if fam == MIGRATION:
        MP.key_vector(P, t, kv)
    else:
        CKEY.key_vector(P, blocks, t, rows, order, cols, perm, kv)


@njit(cache=True, inline="always")
def key_words(fam, P, blocks, plan, t, rows, order, cols, perm, kv, words):
    """Row ``t``'s packed key in ``words``; returns how many words it takes. The classic family takes the
    fast path of ``classic_words`` where it applies (the same keys, compared as whole words), else
    ``kernel.key_vector`` packed by ``lean.pack_words``."""
    if fam == CLASSIC:
        if CW.fits(P):
            CW.key_words(P, blocks, t, rows, order, cols, perm, words)
            return CW.nwords(P)
        key_vector(fam, P, blocks, t, rows, order, cols, perm, kv)
        L.pack_words(kv, plan, words)
        return plan[plan.shape[0] - 1, 1] + 1
    key_vector(fam, P, blocks, t, rows, order, cols, perm, kv)
    CKEY.pack(kv, words)
    return words.shape[0]


@njit(cache=True, inline="always")
def fingerprint(fam, P, blocks, plan, t, rows, order, cols, perm, kv, words):
    """Row ``t``'s 96-bit fingerprint (``lean.fingerprint`` of its packed key)."""
    nw = key_words(fam, P, blocks, plan, t, rows, order, cols, perm, kv, words)
    return L.fingerprint(words[:nw])
