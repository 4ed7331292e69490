"""The migration's properties and key (``ClassicToConsumer``'s), compiled with numba, on ``migration_kernel``'s rows.

Each function names the model function it encodes; checked against the model by
``tests/test_compiled_consumer.py``.
"""
from __future__ import annotations

from numba import njit

from . import consumer_kernel as CK
from . import consumer_keys as CKEY
from .consumer_kernel import (
    C_ASSIGNED, C_EPOCH, C_OWNED, C_PROC, H_BUDGET, H_EPOCH, H_PARTS, H_TEPOCH, M_ASSIGNED, M_EPOCH, M_PRESENT,
    M_PREV, M_REVOKING, M_STATE, MISS, P_K, P_N, T_TARGET, X_CGEN, X_CJOINED, X_CLEADER, X_CMEMBERS, X_CSTATUS,
    X_CUNSYNCED, X_KIND, XC_CLASSIC, XC_PHASE, XM_CLASSIC, XR_ASSIGN, XR_PENDING, XR_REPORTED,
)
from .migration_kernel import (CLASSIC, COMPLETING, CONSUMER, DOWN, P_STABLE, PAUSED, STABLE_G, UP, cooperative,
                               extras_base, is_member, slot_base)


# -- what the properties ask -----------------------------------------------------------------------------
@njit(cache=True)
def epoch_of(P, s):
    x = extras_base(P)
    return s[x + X_CGEN] if s[x + X_KIND] == CLASSIC else s[H_EPOCH]


@njit(cache=True)
def live_member(P, s, i):
    if s[slot_base(i) + C_PROC] == DOWN or not is_member(P, s, i):
        return False
    return s[CK.xslot(P, i) + XC_CLASSIC] != 0 or s[slot_base(i) + C_EPOCH] > 0


@njit(cache=True)
def exclusive_ownership_ok(P, s):
    seen = 0
    for i in range(P[P_N]):
        owned = s[slot_base(i) + C_OWNED]
        if owned and live_member(P, s, i):
            if seen & owned:
                return False
            seen |= owned
    return True


@njit(cache=True)
def commit_accepted(P, s, i):
    x = extras_base(P)
    b = slot_base(i)
    if s[x + X_KIND] == CLASSIC:
        if not s[CK.xslot(P, i) + XC_CLASSIC] or not s[x + X_CMEMBERS] >> i & 1:
            return False
        return s[b + C_EPOCH] == s[x + X_CGEN] and s[x + X_CSTATUS] != COMPLETING
    if not s[b + M_PRESENT]:
        return False
    return s[b + C_EPOCH] == s[b + M_EPOCH]


@njit(cache=True)
def commit_fencing_ok(P, s):
    """``commit_violation`` is None."""
    n = P[P_N]
    for i in range(n):
        b = slot_base(i)
        owned = s[b + C_OWNED]
        if s[b + C_PROC] != UP or not owned or not commit_accepted(P, s, i):
            continue
        if not live_member(P, s, i):
            return False
        if s[extras_base(P) + X_KIND] == CONSUMER and owned & ~(s[b + M_ASSIGNED] | s[b + M_REVOKING]):
            return False
        for k in range(n):
            if k != i and s[slot_base(k) + C_OWNED] & owned and live_member(P, s, k):
                return False
    return True


@njit(cache=True)
def generation_ok(P, s, t):
    """``generation_violation`` is None."""
    x = extras_base(P)
    n = P[P_N]
    e0 = epoch_of(P, s)
    e1 = epoch_of(P, t)
    sk = s[x + X_KIND]
    tk_ = t[x + X_KIND]
    if sk == CLASSIC:
        emptied = s[x + X_CMEMBERS] == 0
    else:
        emptied = True
        for i in range(n):
            if s[slot_base(i) + M_PRESENT]:
                emptied = False
    if (e1 < e0 and not (emptied and sk != tk_)) or e1 > e0 + 1:
        return False
    if tk_ == CONSUMER:
        if t[H_TEPOCH] > t[H_EPOCH]:
            return False
        for i in range(n):
            b = slot_base(i)
            if sk == CONSUMER and s[b + M_PRESENT] and t[b + M_PRESENT] and t[b + M_EPOCH] < s[b + M_EPOCH]:
                return False
            if t[b + M_PRESENT] and t[b + M_EPOCH] > t[H_TEPOCH]:
                return False
    for i in range(n):
        b = slot_base(i)
        y = CK.xslot(P, i)
        if t[b + C_EPOCH] > 0 and t[b + C_EPOCH] < s[b + C_EPOCH] and s[y + XC_CLASSIC] == t[y + XC_CLASSIC]:
            return False
        if t[b + C_EPOCH] > e1 and is_member(P, t, i):
            return False
    return True


@njit(cache=True)
def members_in_group(P, s):
    x = extras_base(P)
    k = 0
    for i in range(P[P_N]):
        if s[x + X_KIND] == CLASSIC:
            k += s[x + X_CMEMBERS] >> i & 1
        elif s[slot_base(i) + M_PRESENT]:
            k += 1
    return k


@njit(cache=True)
def converged(P, TM, s, tk, tv, tq):
    """``ClassicToConsumer.converged``: 1 or 0, or MISS."""
    x = extras_base(P)
    n = P[P_N]
    assigned = 0
    if s[x + X_KIND] == CONSUMER:
        if s[H_TEPOCH] != s[H_EPOCH]:
            return 0
        anyone = False
        for i in range(n):
            b = slot_base(i)
            y = CK.xslot(P, i)
            proc = s[b + C_PROC]
            present = s[b + M_PRESENT] != 0
            anyone = anyone or present
            if proc == PAUSED or (proc == DOWN and present):
                return 0
            if proc == DOWN:
                continue
            if (not present or s[b + M_STATE] != CK.STABLE or s[b + M_REVOKING] or s[b + M_EPOCH] != s[H_EPOCH]
                    or s[b + C_EPOCH] != s[b + M_EPOCH]):
                return 0
            ra = s[b + M_ASSIGNED]
            if ra != s[b + T_TARGET] or s[b + C_OWNED] != ra or ra & assigned:
                return 0
            if s[y + XC_CLASSIC] and s[y + XC_PHASE] != P_STABLE:
                return 0
            if not s[y + XC_CLASSIC] and s[b + C_ASSIGNED] != ra:
                return 0
            assigned |= ra
        if anyone and assigned != s[H_PARTS]:
            return 0
        r = CK.lookup_target(P, s, tk, tv, tq)
        if r < 0:
            return MISS
        for i in range(n):
            if tv[r, i] != s[slot_base(i) + T_TARGET]:
                return 0
        return 1
    members = s[x + X_CMEMBERS]
    if s[x + X_CSTATUS] != STABLE_G and members:
        return 0
    for i in range(n):
        b = slot_base(i)
        y = CK.xslot(P, i)
        proc = s[b + C_PROC]
        member = members >> i & 1
        if proc == PAUSED or (proc == DOWN and member):
            return 0
        if proc == DOWN:
            continue
        if not s[y + XC_CLASSIC] or not member or s[y + XC_PHASE] != P_STABLE or s[b + C_EPOCH] != s[x + X_CGEN]:
            return 0
        if s[b + C_OWNED] != s[y + XR_ASSIGN] or s[b + C_OWNED] & assigned:
            return 0
        assigned |= s[b + C_OWNED]
    if not members:
        return 1
    if assigned != (1 << P[P_K]) - 1:
        return 0
    r = cooperative(P, s, members, XR_ASSIGN, tk, tq)
    if r < 0:
        return MISS
    for i in range(n):
        if tv[r, i] != s[CK.xslot(P, i) + XR_ASSIGN]:
            return 0
    return 1


# -- the key (``exact_key``) -------------------------------------------------------------------------------
def key_len(n: int) -> int:
    return 2 + max(5 + 3 * n, 1 + 8 * n) + 6 * n


@njit(cache=True)
def key_vector(P, s, kv):
    """``ClassicToConsumer.exact_key`` as a vector of integers (the group part zero-padded to one length)."""
    x = extras_base(P)
    n = P[P_N]
    base = epoch_of(P, s)
    kv[0] = s[x + X_KIND]
    kv[1] = s[H_BUDGET]
    glen = max(5 + 3 * n, 1 + 8 * n)
    for f in range(glen):
        kv[2 + f] = 0
    o = 2
    if s[x + X_KIND] == CLASSIC:
        kv[o] = s[x + X_CSTATUS]
        kv[o + 1] = s[x + X_CMEMBERS]
        kv[o + 2] = s[x + X_CJOINED]
        kv[o + 3] = s[x + X_CLEADER]
        kv[o + 4] = s[x + X_CUNSYNCED]
        for i in range(n):
            y = CK.xslot(P, i)
            kv[o + 5 + 3 * i] = s[y + XR_REPORTED]
            kv[o + 6 + 3 * i] = s[y + XR_ASSIGN]
            kv[o + 7 + 3 * i] = s[y + XR_PENDING]
    else:
        kv[o] = s[H_EPOCH] - s[H_TEPOCH]
        for i in range(n):
            b = slot_base(i)
            q = o + 1 + 8 * i
            kv[q] = s[b + T_TARGET]
            if s[b + M_PRESENT]:
                kv[q + 1] = 1
                kv[q + 2] = s[b + M_STATE]
                kv[q + 3] = CKEY.rel(s[b + M_EPOCH], base)
                kv[q + 4] = CKEY.rel(s[b + M_PREV], base)
                kv[q + 5] = s[b + M_ASSIGNED]
                kv[q + 6] = s[b + M_REVOKING]
                kv[q + 7] = s[CK.xslot(P, i) + XM_CLASSIC]
    o = 2 + glen
    for i in range(n):
        b = slot_base(i)
        y = CK.xslot(P, i)
        q = o + 6 * i
        kv[q] = s[b + C_PROC]
        kv[q + 1] = s[y + XC_CLASSIC]
        kv[q + 2] = s[y + XC_PHASE]
        kv[q + 3] = CKEY.rel(s[b + C_EPOCH], base)
        kv[q + 4] = s[b + C_OWNED]
        kv[q + 5] = s[b + C_ASSIGNED]


