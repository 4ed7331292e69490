"""The classic protocol's transition relation, keys and properties, compiled with numba.

This is a *second encoding* of ``groupspec.model.classic`` (as ``groupspec.proofs`` is one for Z3),
written line by line after it so that the two can be read side by side: every function below names
the model function it encodes. It exists for speed only. It is never the specification: the drift
tests (``tests/test_compiled.py``) require that, from every state they reach, this encoding yields the
same actions in the same order leading to the same states as the model, the same keys, the same
property verdicts, and the same whole explorations.

States are rows of integers (``groupspec.checker.compiled.layout``); a protocol variant and its finite
instance are a parameter vector ``P`` plus the topic masks ``TM``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .layout import (
    C_GEN, C_GH, C_GHGEN, C_GHOWN, C_IB, C_IBASG, C_IBGEN, C_ID, C_OWNED, C_PROC, C_REJOIN, C_STATUS,
    C_TOPICS, G_BUDGET, G_GEN, G_HELD, G_HELDFOR, G_LEADER, G_PARTS, G_STATUS, G_TSET, HEADER, R_ASG,
    R_AWAIT, R_GEN, R_JOINED, R_OWNED, R_SET, R_STATIC, R_SYNCED, R_TOPICS, SLOT, T_ASG,
)

# -- parameters (the index of each in P) ------------------------------------------------------------
P_N = 0
P_K = 1
P_T = 2
P_COOP = 3  # rebalance == "cooperative"
P_STATIC = 4
P_COORD = 5  # coordinator_assigns
P_DELAYED = 6
P_REVOKE = 7  # revoke_before_join
P_WITHHOLD = 8  # withhold_transfers
P_FENCE = 9  # fence_commits
P_ASSIGNOR = 10  # 0 sticky, 1 roundrobin, 2 range, 3 flappy
P_FAULTS = 11  # bit mask over FAULT_BITS
P_ALLTOPICS = 12
P_SYM = 13  # keys up to member/partition symmetry
P_INITIAL = 14  # members started in the initial state (for sometimes_all_stable)
P_DEAD = 15  # keys forget dead fields (groupspec.model.symmetry.forget_dead)
P_LEN = 16

F_JOIN = 1
F_LEAVE = 2
F_CRASH = 4
F_TIMEOUT = 8
F_ZOMBIE = 16
F_SUBSCRIPTION = 32
F_PARTITIONS = 64
FAULT_BITS = {"join": F_JOIN, "leave": F_LEAVE, "crash": F_CRASH, "timeout": F_TIMEOUT, "zombie": F_ZOMBIE,
              "subscription": F_SUBSCRIPTION, "partitions": F_PARTITIONS}
ASSIGNOR_IDS = {"sticky": 0, "roundrobin": 1, "range": 2, "flappy": 3}

# statuses and enums (groupspec.model.core)
EMPTY, PREP, COMPLETING, STABLE, DEAD = 0, 1, 2, 3, 4
UNJOINED, M_PREP, M_COMPLETING, M_STABLE = 0, 1, 2, 3
DOWN, UP, PAUSED = 0, 1, 2
ID_NONE, ID_CURRENT, ID_STALE = 0, 1, 2
JOIN, SYNC, RIP, UMI, FENCED = 1, 2, 3, 4, 5
NO_GEN = -1
OLDEST = 4  # groupspec.model.symmetry.OLDEST

# action classes (groupspec.checker.compiled.layout.ACTION_CLASSES)
A_JOIN, A_RJOIN, A_RSYNC, A_RERR, A_HB, A_RESUME, A_GHOST, A_NOTICE, A_EXPIRE, A_RTIMEOUT, A_DELAY = range(11)
A_START, A_LEAVE, A_CRASH, A_EXPIRE_LIVE, A_PAUSE, A_SUBSCRIPTION, A_ADD_PARTITION, A_OVERTAKE = range(11, 19)
FAIR_LIMIT = 11 * 8  # codes below this are protocol steps (weakly fair)


@njit(cache=True, inline="always")
def _code(cls, member):
    return cls * 8 + member + 1


@njit(cache=True)
def popcount(x):
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


@njit(cache=True)
def highest_bit(x):
    p = -1
    while x:
        x >>= 1
        p += 1
    return p


@njit(cache=True)
def subscribed(TM, topics, existing):
    """Config.subscribed_partitions."""
    m = 0
    for t in range(TM.shape[0]):
        if (topics >> t) & 1:
            m |= TM[t]
    return m & existing


# ---------------------------------------------------------------------------------------------------
# Slot helpers (a client is "fresh" as the model's Client(...) constructor makes it)
# ---------------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _b(i):
    return HEADER + i * SLOT


@njit(cache=True)
def fresh_client(row, i, proc, topics):
    """Client(proc=proc, topics=topics, ghost=<kept>): everything else back to its default."""
    b = _b(i)
    row[b + C_PROC] = proc
    row[b + C_STATUS] = UNJOINED
    row[b + C_ID] = ID_NONE
    row[b + C_GEN] = NO_GEN
    row[b + C_OWNED] = 0
    row[b + C_TOPICS] = topics
    row[b + C_REJOIN] = 0
    clear_inbox(row, i)


@njit(cache=True)
def clear_inbox(row, i):
    b = _b(i)
    row[b + C_IB] = 0
    row[b + C_IBGEN] = NO_GEN
    row[b + C_IBASG] = 0


@njit(cache=True)
def set_inbox(row, i, reply, gen, asg):
    b = _b(i)
    row[b + C_IB] = reply
    row[b + C_IBGEN] = gen
    row[b + C_IBASG] = asg


@njit(cache=True)
def clear_record(row, i):
    b = _b(i)
    for f in range(R_SET, R_ASG + 1):
        row[b + f] = 0


@njit(cache=True)
def fresh_record(row, i, static):
    """Record(static=static)."""
    b = _b(i)
    clear_record(row, i)
    row[b + R_SET] = 1
    row[b + R_STATIC] = static
    row[b + R_GEN] = NO_GEN


@njit(cache=True)
def clear_target(row, n):
    row[G_TSET] = 0
    for i in range(n):
        row[_b(i) + T_ASG] = 0


@njit(cache=True)
def goto(row, status):
    """ClassicProtocol._goto / core.check_transition (GROUP_TRANSITIONS)."""
    old = row[G_STATUS]
    if old != status:
        ok = False
        if status == EMPTY:
            ok = old == PREP
        elif status == PREP:
            ok = old == EMPTY or old == STABLE or old == COMPLETING
        elif status == COMPLETING:
            ok = old == PREP
        elif status == STABLE:
            ok = old == COMPLETING
        elif status == DEAD:
            ok = True
        if not ok:
            raise ValueError("illegal group transition")
    row[G_STATUS] = status


@njit(cache=True)
def alive(row, i):
    b = _b(i)
    return row[b + C_PROC] == UP and row[b + C_ID] == ID_CURRENT and row[b + R_SET] == 1


@njit(cache=True)
def live_member(row, i):
    b = _b(i)
    if row[b + C_PROC] == DOWN or row[b + C_ID] != ID_CURRENT or row[b + R_SET] == 0:
        return False
    gen = row[b + C_GEN]
    if NO_GEN < gen and gen < row[G_GEN]:
        return row[b + C_IB] == JOIN and row[b + C_IBGEN] == row[G_GEN]
    return True


# ---------------------------------------------------------------------------------------------------
# Assignors (groupspec.model.assignors). Members: `slots[:m]` in slot order; per-slot metadata arrays.
# ---------------------------------------------------------------------------------------------------
@njit(cache=True)
def assign_sticky(K, TM, slots, m, topics, owned, gens, existing, out):
    n = out.shape[0]
    elig = np.zeros(n, np.int64)
    for j in range(m):
        s = slots[j]
        elig[s] = subscribed(TM, topics[s], existing)
        out[s] = 0
    if m == 0:
        return
    claim_slot = np.full(K, -1, np.int64)
    claim_gen = np.zeros(K, np.int64)
    dropped = 0
    # resolve_claims + kept_claims: on Kafka's constrained path (every member on the same topics) a multiply-claimed
    # partition stays dropped when a higher generation takes it over later; on the general path that one keeps it
    constrained = True
    for j in range(1, m):
        if topics[slots[j]] != topics[slots[0]]:
            constrained = False
    for j in range(m):
        s = slots[j]
        o = owned[s] & existing
        for p in range(K):
            if not (o >> p) & 1:
                continue
            if claim_slot[p] < 0:
                claim_slot[p] = s
                claim_gen[p] = gens[s]
            elif gens[s] > claim_gen[p]:
                claim_slot[p] = s
                claim_gen[p] = gens[s]
                if not constrained:
                    dropped &= ~(1 << p)
            elif gens[s] == claim_gen[p]:
                dropped |= 1 << p
    for p in range(K):
        s = claim_slot[p]
        if s >= 0 and not (dropped >> p) & 1 and (elig[s] >> p) & 1:
            out[s] |= 1 << p
    everything = 0
    taken = 0
    for j in range(m):
        everything |= elig[slots[j]]
        taken |= out[slots[j]]
    # free partitions, fewest candidates first, then by number
    free = np.zeros(K, np.int64)
    cands = np.zeros(K, np.int64)
    nf = 0
    rest = everything & ~taken
    for p in range(K):
        if (rest >> p) & 1:
            c = 0
            for j in range(m):
                if (elig[slots[j]] >> p) & 1:
                    c += 1
            # insertion sort by (c, p)
            q = nf
            while q > 0 and cands[q - 1] > c:
                free[q] = free[q - 1]
                cands[q] = cands[q - 1]
                q -= 1
            free[q] = p
            cands[q] = c
            nf += 1
    for f in range(nf):
        p = free[f]
        best = -1
        for j in range(m):
            s = slots[j]
            if (elig[s] >> p) & 1:
                if best < 0:
                    best = s
                else:
                    cs = popcount(out[s])
                    cb = popcount(out[best])
                    if cs < cb or (cs == cb and s < best):
                        best = s
        out[best] |= 1 << p
    # balance
    desc = np.zeros(m, np.int64)
    asc = np.zeros(m, np.int64)
    cnt = np.zeros(n, np.int64)
    while True:
        for j in range(m):
            cnt[slots[j]] = popcount(out[slots[j]])
        # desc: by (-count, slot); asc: by (count, slot) (insertion sorts; slots are in increasing order)
        for j in range(m):
            s = slots[j]
            q = j
            while q > 0 and cnt[desc[q - 1]] < cnt[s]:
                desc[q] = desc[q - 1]
                q -= 1
            desc[q] = s
            q = j
            while q > 0 and cnt[asc[q - 1]] > cnt[s]:
                asc[q] = asc[q - 1]
                q -= 1
            asc[q] = s
        moved = False
        for x in range(m):
            a = desc[x]
            for y in range(m):
                bb = asc[y]
                if cnt[a] <= cnt[bb] + 1:
                    break
                movable = out[a] & elig[bb]
                if movable:
                    p = highest_bit(movable)
                    out[a] &= ~(1 << p)
                    out[bb] |= 1 << p
                    moved = True
                    break
            if moved:
                break
        if not moved:
            return


@njit(cache=True)
def assign_roundrobin(K, TM, slots, m, topics, existing, out, start):
    n = out.shape[0]
    elig = np.zeros(n, np.int64)
    everything = 0
    for j in range(m):
        s = slots[j]
        elig[s] = subscribed(TM, topics[s], existing)
        everything |= elig[s]
        out[s] = 0
    if m == 0:
        return
    i = start % m
    for p in range(K):
        if not (everything >> p) & 1:
            continue
        while not (elig[slots[i]] >> p) & 1:
            i = (i + 1) % m
        out[slots[i]] |= 1 << p
        i = (i + 1) % m


@njit(cache=True)
def assign_range(K, TM, slots, m, topics, existing, out):
    for j in range(m):
        out[slots[j]] = 0
    subs = np.zeros(m, np.int64)
    parts = np.zeros(K, np.int64)
    for t in range(TM.shape[0]):
        ns = 0
        for j in range(m):
            if (topics[slots[j]] >> t) & 1:
                subs[ns] = slots[j]
                ns += 1
        npt = 0
        avail = TM[t] & existing
        for p in range(K):
            if (avail >> p) & 1:
                parts[npt] = p
                npt += 1
        if ns == 0 or npt == 0:
            continue
        q = npt // ns
        r = npt % ns
        i = 0
        for k in range(ns):
            cnt = q + (1 if k < r else 0)
            for x in range(i, i + cnt):
                out[subs[k]] |= 1 << parts[x]
            i += cnt


@njit(cache=True)
def run_assignor(P, TM, slots, m, topics, owned, gens, existing, out):
    a = P[P_ASSIGNOR]
    K = P[P_K]
    if a == 0:
        assign_sticky(K, TM, slots, m, topics, owned, gens, existing, out)
    elif a == 1:
        assign_roundrobin(K, TM, slots, m, topics, existing, out, 0)
    elif a == 2:
        assign_range(K, TM, slots, m, topics, existing, out)
    else:
        owner0 = -1
        for j in range(m):
            if owned[slots[j]] & 1:
                owner0 = j
                break
        assign_roundrobin(K, TM, slots, m, topics, existing, out, owner0 + 1)


# ---------------------------------------------------------------------------------------------------
# The coordinator's side (ClassicProtocol._prepare_rebalance, _remove, _maybe_complete_join, ...)
# ---------------------------------------------------------------------------------------------------
@njit(cache=True)
def prepare_rebalance(row, n):
    stable = row[G_STATUS] == STABLE
    for i in range(n):
        b = _b(i)
        if row[b + R_SET] == 0:
            continue
        if row[b + R_AWAIT] and row[b + C_ID] == ID_CURRENT and row[b + C_PROC] != DOWN:
            set_inbox(row, i, RIP, NO_GEN, 0)
        keep = row[b + R_ASG] if stable else 0
        row[b + R_JOINED] = 0
        row[b + R_AWAIT] = 0
        row[b + R_SYNCED] = 0
        row[b + R_ASG] = keep
    goto(row, PREP)
    clear_target(row, n)


@njit(cache=True)
def hold(row, i, work):
    """ClassicProtocol._hold: add ``work`` of departed member ``i`` to the held work."""
    if row[G_HELD] == 0:
        row[G_HELDFOR] = i
    row[G_HELD] |= work


@njit(cache=True)
def remove(P, TM, row, i):
    n = P[P_N]
    b = _b(i)
    st = row[G_STATUS]
    if P[P_DELAYED] and row[b + R_ASG] and (st == STABLE or st == PREP):
        hold(row, i, row[b + R_ASG])
    if row[b + C_ID] == ID_CURRENT:
        parked = (row[b + R_JOINED] == 1 and st == PREP) or row[b + R_AWAIT] == 1
        if parked and row[b + C_PROC] != DOWN:
            row[b + C_ID] = ID_STALE
            set_inbox(row, i, UMI, NO_GEN, 0)
        else:
            row[b + C_ID] = ID_STALE
    clear_record(row, i)
    if row[G_LEADER] == i:
        leader = -1
        for k in range(n):
            if row[_b(k) + R_SET]:
                leader = k
                break
        row[G_LEADER] = leader
    if st == STABLE or st == COMPLETING:
        prepare_rebalance(row, n)
    maybe_complete_join(P, TM, row)


@njit(cache=True)
def maybe_complete_join(P, TM, row):
    if row[G_STATUS] != PREP:
        return
    for i in range(P[P_N]):
        b = _b(i)
        if row[b + R_SET] and not row[b + R_JOINED]:
            return
    complete_join(P, TM, row)


@njit(cache=True)
def complete_join(P, TM, row):
    n = P[P_N]
    coord = P[P_COORD]
    for i in range(n):
        b = _b(i)
        if row[b + R_SET] and not row[b + R_JOINED] and not row[b + R_STATIC]:
            work = row[b + R_ASG]
            clear_record(row, i)
            if row[b + C_ID] == ID_CURRENT:
                row[b + C_ID] = ID_STALE
            if P[P_DELAYED] and work:
                hold(row, i, work)
    gen = row[G_GEN] + 1
    present = np.zeros(n, np.int64)
    m = 0
    for i in range(n):
        if row[_b(i) + R_SET]:
            present[m] = i
            m += 1
    if m == 0:
        goto(row, EMPTY)
        row[G_GEN] = gen
        row[G_LEADER] = -1
        clear_target(row, n)
        row[G_HELD] = 0
        row[G_HELDFOR] = -1
        return
    leader = row[G_LEADER]
    if leader < 0 or not row[_b(leader) + R_SET] or not row[_b(leader) + R_JOINED]:
        for j in range(m):
            if row[_b(present[j]) + R_JOINED]:
                leader = present[j]
                break
    row[G_LEADER] = leader
    row[G_GEN] = gen
    target = np.zeros(n, np.int64)
    compute_target(P, TM, row, present, m, target)
    for j in range(m):
        i = present[j]
        b = _b(i)
        if row[b + R_JOINED] and row[b + C_ID] == ID_CURRENT and row[b + C_PROC] != DOWN:
            set_inbox(row, i, JOIN, gen, target[i] if coord else 0)
        row[b + R_JOINED] = 0
        row[b + R_AWAIT] = 0
        row[b + R_SYNCED] = 0
        row[b + R_ASG] = target[i] if coord else 0
    goto(row, COMPLETING)
    row[G_TSET] = 1
    for i in range(n):
        row[_b(i) + T_ASG] = target[i]
    if coord:
        goto(row, STABLE)


@njit(cache=True)
def compute_target(P, TM, row, present, m, target):
    n = P[P_N]
    existing = row[G_PARTS]
    held_back = row[G_HELD] if P[P_DELAYED] else 0
    topics = np.zeros(n, np.int64)
    owned = np.zeros(n, np.int64)
    gens = np.zeros(n, np.int64)
    for j in range(m):
        i = present[j]
        b = _b(i)
        topics[i] = row[b + R_TOPICS]
        o = row[b + R_OWNED]
        if held_back:
            o &= ~held_back
        owned[i] = o
        gens[i] = row[b + R_GEN]
    result = np.zeros(n, np.int64)
    run_assignor(P, TM, present, m, topics, owned, gens, existing & ~held_back, result)
    if P[P_COOP] and P[P_WITHHOLD]:
        gaining = 0
        losing = 0
        for j in range(m):
            i = present[j]
            ro = row[_b(i) + R_OWNED]
            gaining |= result[i] & ~ro
            losing |= ro & ~result[i]
        moving = gaining & losing
        if moving:
            for j in range(m):
                i = present[j]
                result[i] &= ~(moving & ~row[_b(i) + R_OWNED])
    for i in range(n):
        target[i] = 0
    for j in range(m):
        target[present[j]] = result[present[j]]


# ---------------------------------------------------------------------------------------------------
# Requests (ClassicProtocol._join, _static_replace, _sync) and client handlers
# ---------------------------------------------------------------------------------------------------
@njit(cache=True)
def join(P, TM, row, i):
    b = _b(i)
    sub = subscribed(TM, row[b + C_TOPICS], row[G_PARTS])
    cgen = row[b + C_GEN]
    cid = row[b + C_ID]
    previous = row[b + C_OWNED]
    if cgen == NO_GEN or cid == ID_NONE:
        owned = 0
        previous = 0
    elif not P[P_COOP]:
        owned = 0 if P[P_REVOKE] else row[b + C_OWNED]
    else:
        owned = row[b + C_OWNED] & sub
    row[b + C_OWNED] = owned
    row[b + C_STATUS] = M_PREP
    row[b + C_REJOIN] = 0
    rep_owned = owned if P[P_COOP] else previous
    rep_gen = cgen
    rep_topics = row[b + C_TOPICS]
    if cid == ID_STALE:
        if P[P_STATIC] and row[b + R_SET]:
            fresh_client(row, i, DOWN, row[b + C_TOPICS])
        else:
            row[b + C_ID] = ID_NONE
            row[b + C_GEN] = NO_GEN
            row[b + C_OWNED] = 0
            row[b + C_STATUS] = UNJOINED
        return
    if cid == ID_NONE and row[b + R_SET] and P[P_STATIC]:
        static_replace(P, TM, row, i, rep_topics, rep_owned, rep_gen)
        return
    new = cid == ID_NONE
    if new:
        fresh_record(row, i, P[P_STATIC])
        row[b + C_ID] = ID_CURRENT
    same = (not new) and row[b + R_TOPICS] == rep_topics and row[b + R_OWNED] == rep_owned and row[b + R_GEN] == rep_gen
    row[b + R_TOPICS] = rep_topics
    row[b + R_OWNED] = rep_owned
    row[b + R_GEN] = rep_gen
    st = row[G_STATUS]
    if st == EMPTY:
        goto(row, PREP)
    elif st == STABLE or st == COMPLETING:
        if same and (st == COMPLETING or row[G_LEADER] != i):
            set_inbox(row, i, JOIN, row[G_GEN], 0)
            return
        prepare_rebalance(row, P[P_N])
    if row[G_LEADER] < 0:
        row[G_LEADER] = i
    row[b + R_JOINED] = 1
    maybe_complete_join(P, TM, row)


@njit(cache=True)
def static_replace(P, TM, row, i, topics, owned, gen):
    b = _b(i)
    row[b + C_ID] = ID_CURRENT
    row[b + R_TOPICS] = topics
    row[b + R_OWNED] = owned
    row[b + R_GEN] = gen
    if row[G_STATUS] == STABLE:
        a = row[b + R_ASG]
        row[b + C_GEN] = row[G_GEN]
        row[b + C_STATUS] = M_STABLE
        if a & ~subscribed(TM, row[b + C_TOPICS], row[G_PARTS] | a):
            row[b + C_OWNED] = 0
            row[b + C_REJOIN] = 1
        else:
            row[b + C_OWNED] = a
        row[b + R_SYNCED] = 1
        return
    row[b + R_AWAIT] = 0
    if row[G_STATUS] == COMPLETING:
        prepare_rebalance(row, P[P_N])
    row[b + R_JOINED] = 1
    maybe_complete_join(P, TM, row)


@njit(cache=True)
def sync(P, row, i):
    n = P[P_N]
    b = _b(i)
    if row[b + R_SET] == 0 or row[b + C_ID] != ID_CURRENT:
        row[b + C_ID] = ID_NONE
        row[b + C_GEN] = NO_GEN
        row[b + C_OWNED] = 0
        row[b + C_STATUS] = UNJOINED
        return
    if row[b + C_GEN] != row[G_GEN]:
        row[b + C_GEN] = NO_GEN
        row[b + C_OWNED] = 0
        row[b + C_STATUS] = UNJOINED
        return
    st = row[G_STATUS]
    if st == PREP:
        row[b + C_REJOIN] = 1
        return
    if st == STABLE:
        set_inbox(row, i, SYNC, row[G_GEN], row[b + R_ASG])
        row[b + R_SYNCED] = 1
        return
    if st != COMPLETING:
        raise ValueError("SyncGroup in an unexpected group state")
    if i != row[G_LEADER]:
        row[b + R_AWAIT] = 1
        row[b + R_SYNCED] = 1
        return
    for k in range(n):
        bk = _b(k)
        if row[bk + R_SET] == 0:
            continue
        tk = row[bk + T_ASG]
        if row[bk + R_AWAIT] or k == i:
            if row[bk + C_ID] == ID_CURRENT and row[bk + C_PROC] != DOWN:
                set_inbox(row, k, SYNC, row[G_GEN], tk)
        row[bk + R_ASG] = tk
        row[bk + R_AWAIT] = 0
        if k == i:
            row[bk + R_SYNCED] = 1
    goto(row, STABLE)


@njit(cache=True)
def receive_join(P, row, i):
    b = _b(i)
    gen = row[b + C_IBGEN]
    asg = row[b + C_IBASG]
    clear_inbox(row, i)
    row[b + C_GEN] = gen
    if P[P_COORD]:
        row[b + C_STATUS] = M_STABLE
        row[b + C_OWNED] = asg
        return
    row[b + C_STATUS] = M_COMPLETING
    sync(P, row, i)


@njit(cache=True)
def receive_sync(P, TM, row, i):
    b = _b(i)
    a = row[b + C_IBASG]
    sub = subscribed(TM, row[b + C_TOPICS], row[G_PARTS] | a)
    clear_inbox(row, i)
    row[b + C_STATUS] = M_STABLE
    if a & ~sub:
        row[b + C_REJOIN] = 1
    elif P[P_COOP]:
        revoked = row[b + C_OWNED] & ~a
        row[b + C_OWNED] = a
        if revoked:
            row[b + C_REJOIN] = 1
    else:
        row[b + C_OWNED] = a


@njit(cache=True)
def receive_error(row, i):
    b = _b(i)
    reply = row[b + C_IB]
    if reply == RIP:
        clear_inbox(row, i)
        row[b + C_REJOIN] = 1
    elif reply == UMI:
        clear_inbox(row, i)
        row[b + C_ID] = ID_NONE
        row[b + C_GEN] = NO_GEN
        row[b + C_OWNED] = 0
        row[b + C_STATUS] = UNJOINED
    else:
        fresh_client(row, i, DOWN, row[b + C_TOPICS])


@njit(cache=True)
def heartbeat(P, row, i):
    """Returns False when the answer is NONE and nothing changes (a stutter, not a step)."""
    b = _b(i)
    if row[b + C_ID] == ID_STALE or row[b + R_SET] == 0:
        if P[P_STATIC] and row[b + R_SET]:
            fresh_client(row, i, DOWN, row[b + C_TOPICS])
        else:
            row[b + C_ID] = ID_NONE
            row[b + C_GEN] = NO_GEN
            row[b + C_OWNED] = 0
            row[b + C_STATUS] = UNJOINED
            row[b + C_REJOIN] = 0
        return True
    if row[b + C_GEN] != row[G_GEN]:
        row[b + C_GEN] = NO_GEN
        row[b + C_OWNED] = 0
        row[b + C_STATUS] = UNJOINED
        row[b + C_REJOIN] = 0
        return True
    if row[G_STATUS] == PREP and row[b + C_STATUS] == M_STABLE and not row[b + C_REJOIN]:
        row[b + C_REJOIN] = 1
        return True
    return False


@njit(cache=True)
def unassigned_new(P, TM, row):
    assigned = 0
    wanted = 0
    parts = row[G_PARTS]
    for k in range(P[P_N]):
        b = _b(k)
        if row[b + R_SET]:
            assigned |= row[b + R_ASG] | row[b + R_OWNED]
            wanted |= subscribed(TM, row[b + R_TOPICS], parts)
    return (wanted & ~assigned & ~row[G_HELD]) != 0


@njit(cache=True)
def start(P, row, i):
    b = _b(i)
    if row[b + C_PROC] == PAUSED:
        row[b + C_GH] = 1
        row[b + C_GHGEN] = row[b + C_GEN]
        row[b + C_GHOWN] = row[b + C_OWNED]
    topics = row[b + C_TOPICS]
    if topics == 0:
        topics = P[P_ALLTOPICS]
    fresh_client(row, i, UP, topics)
    row[G_BUDGET] -= 1


@njit(cache=True)
def leave(P, TM, row, i):
    b = _b(i)
    was_current = row[b + C_ID] == ID_CURRENT
    fresh_client(row, i, DOWN, row[b + C_TOPICS])
    if was_current and row[b + R_SET] and not P[P_STATIC]:
        remove(P, TM, row, i)
    fresh_client(row, i, DOWN, row[b + C_TOPICS])
    row[G_BUDGET] -= 1


# ---------------------------------------------------------------------------------------------------
# The transition relation (ClassicProtocol.successors and _perturbations), in the model's order
# ---------------------------------------------------------------------------------------------------
@njit(cache=True)
def successors(P, TM, row, out, acts):
    """Write every enabled action's code and next state into ``acts`` / ``out``; return how many."""
    n = P[P_N]
    faults = P[P_FAULTS]
    perturb = row[G_BUDGET] > 0
    st = row[G_STATUS]
    ns = 0
    for i in range(n):
        b = _b(i)
        proc = row[b + C_PROC]
        rset = row[b + R_SET] == 1
        if proc == UP:
            reply = row[b + C_IB]
            if reply != 0:
                t = out[ns]
                t[:] = row
                if reply == JOIN:
                    receive_join(P, t, i)
                    acts[ns] = _code(A_RJOIN, i)
                elif reply == SYNC:
                    receive_sync(P, TM, t, i)
                    acts[ns] = _code(A_RSYNC, i)
                else:
                    receive_error(t, i)
                    acts[ns] = _code(A_RERR, i)
                ns += 1
            else:
                cst = row[b + C_STATUS]
                if cst != M_PREP and (cst == UNJOINED or row[b + C_REJOIN]):
                    t = out[ns]
                    t[:] = row
                    join(P, TM, t, i)
                    acts[ns] = _code(A_JOIN, i)
                    ns += 1
                if (cst == M_STABLE or cst == M_COMPLETING) and row[b + C_ID] != ID_NONE:
                    t = out[ns]
                    t[:] = row
                    if heartbeat(P, t, i):
                        acts[ns] = _code(A_HB, i)
                        ns += 1
                if (
                    ((faults & F_PARTITIONS) or P[P_DELAYED]) and (row[G_LEADER] == i or P[P_DELAYED]) and cst == M_STABLE
                    and not row[b + C_REJOIN] and st == STABLE and alive(row, i) and unassigned_new(P, TM, row)
                ):
                    t = out[ns]
                    t[:] = row
                    t[b + C_REJOIN] = 1
                    acts[ns] = _code(A_NOTICE, i)
                    ns += 1
        elif proc == PAUSED:
            t = out[ns]
            t[:] = row
            t[b + C_PROC] = UP
            acts[ns] = _code(A_RESUME, i)
            ns += 1
        if row[b + C_GH]:
            t = out[ns]
            t[:] = row
            t[b + C_GH] = 0
            t[b + C_GHGEN] = 0
            t[b + C_GHOWN] = 0
            acts[ns] = _code(A_GHOST, i)
            ns += 1
        if rset and not alive(row, i) and not (st == PREP and row[b + R_JOINED]):
            t = out[ns]
            t[:] = row
            remove(P, TM, t, i)
            acts[ns] = _code(A_EXPIRE, i)
            ns += 1
        if perturb:
            ns = perturbations(P, TM, row, i, out, acts, ns)
    if st == PREP:
        # the rebalance timer: free when nobody who has not rejoined can (ClassicProtocol.successors); it
        # overtakes a running member only as the budgeted RebalanceTimeoutOvertakes (the timeout fault)
        any_joined = False
        any_missing = False
        live_missing = False
        for k in range(n):
            bk = _b(k)
            if row[bk + R_SET]:
                if row[bk + R_JOINED]:
                    any_joined = True
                elif alive(row, k):
                    live_missing = True
                else:
                    any_missing = True
        if any_joined and any_missing and not live_missing:
            t = out[ns]
            t[:] = row
            complete_join(P, TM, t)
            acts[ns] = _code(A_RTIMEOUT, -1)
            ns += 1
        elif any_joined and live_missing and perturb and (faults & F_TIMEOUT):
            t = out[ns]
            t[:] = row
            complete_join(P, TM, t)
            t[G_BUDGET] -= 1
            acts[ns] = _code(A_OVERTAKE, -1)
            ns += 1
    if P[P_DELAYED] and row[G_HELD]:
        t = out[ns]
        t[:] = row
        t[G_HELD] = 0
        t[G_HELDFOR] = -1
        acts[ns] = _code(A_DELAY, -1)
        ns += 1
    full = (1 << P[P_K]) - 1
    if perturb and (faults & F_PARTITIONS) and row[G_PARTS] != full:
        missing = ~row[G_PARTS] & full
        t = out[ns]
        t[:] = row
        t[G_PARTS] = row[G_PARTS] | (missing & -missing)
        t[G_BUDGET] -= 1
        acts[ns] = _code(A_ADD_PARTITION, -1)
        ns += 1
    return ns


@njit(cache=True)
def perturbations(P, TM, row, i, out, acts, ns):
    faults = P[P_FAULTS]
    static = P[P_STATIC]
    b = _b(i)
    proc = row[b + C_PROC]
    rset = row[b + R_SET] == 1
    if (faults & F_JOIN) and (
        (proc == DOWN and ((not rset) or static))
        or (proc == PAUSED and static and (faults & F_ZOMBIE) and not row[b + C_GH])
    ):
        t = out[ns]
        t[:] = row
        start(P, t, i)
        acts[ns] = _code(A_START, i)
        ns += 1
    if proc == UP:
        if faults & F_LEAVE:
            t = out[ns]
            t[:] = row
            leave(P, TM, t, i)
            acts[ns] = _code(A_LEAVE, i)
            ns += 1
        if (faults & F_ZOMBIE) and row[b + C_ID] == ID_CURRENT:
            t = out[ns]
            t[:] = row
            t[b + C_PROC] = PAUSED
            t[G_BUDGET] -= 1
            acts[ns] = _code(A_PAUSE, i)
            ns += 1
        if (faults & F_SUBSCRIPTION) and row[b + C_STATUS] == M_STABLE and row[b + C_ID] == ID_CURRENT and P[P_T] > 1:
            t = out[ns]
            t[:] = row
            t[b + C_TOPICS] = row[b + C_TOPICS] ^ (1 << (P[P_T] - 1))
            t[b + C_REJOIN] = 1
            t[G_BUDGET] -= 1
            acts[ns] = _code(A_SUBSCRIPTION, i)
            ns += 1
    if proc != DOWN and (faults & F_CRASH):
        t = out[ns]
        t[:] = row
        fresh_client(t, i, DOWN, row[b + C_TOPICS])
        t[G_BUDGET] -= 1
        acts[ns] = _code(A_CRASH, i)
        ns += 1
    if (faults & F_TIMEOUT) and rset and alive(row, i):
        t = out[ns]
        t[:] = row
        remove(P, TM, t, i)
        t[G_BUDGET] -= 1
        acts[ns] = _code(A_EXPIRE_LIVE, i)
        ns += 1
    return ns


# ---------------------------------------------------------------------------------------------------
# Properties (groupspec.model.properties and ClassicProtocol.converged / commit_accepted)
# ---------------------------------------------------------------------------------------------------
@njit(cache=True)
def converged(P, TM, row):
    n = P[P_N]
    st = row[G_STATUS]
    if st == EMPTY:
        everyone_gone = True
        for i in range(n):
            b = _b(i)
            if row[b + C_PROC] != DOWN or row[b + C_GH]:
                everyone_gone = False
        if everyone_gone:
            if row[G_HELD]:
                return False
            for i in range(n):
                if row[_b(i) + R_SET]:
                    return False
            return True
    if st != STABLE or row[G_HELD]:
        return False
    assigned = 0
    wanted = 0
    present = np.zeros(n, np.int64)
    m = 0
    parts = row[G_PARTS]
    for i in range(n):
        b = _b(i)
        proc = row[b + C_PROC]
        if proc == PAUSED or row[b + C_GH]:
            return False
        rset = row[b + R_SET] == 1
        if proc == UP and (row[b + C_ID] != ID_CURRENT or not rset):
            return False
        if not rset:
            continue
        if not alive(row, i):
            return False
        if row[b + C_STATUS] != M_STABLE or row[b + C_IB] != 0 or row[b + C_REJOIN] or row[b + C_GEN] != row[G_GEN]:
            return False
        asg = row[b + R_ASG]
        if row[b + C_OWNED] != asg:
            return False
        sub = subscribed(TM, row[b + C_TOPICS], parts)
        if asg & ~sub or asg & assigned:
            return False
        assigned |= asg
        wanted |= sub
        present[m] = i
        m += 1
    if assigned != wanted:
        return False
    topics = np.zeros(n, np.int64)
    owned = np.zeros(n, np.int64)
    gens = np.zeros(n, np.int64)
    for j in range(m):
        i = present[j]
        b = _b(i)
        topics[i] = row[b + C_TOPICS]
        owned[i] = row[b + R_ASG]
        gens[i] = row[G_GEN]
    again = np.zeros(n, np.int64)
    run_assignor(P, TM, present, m, topics, owned, gens, parts, again)
    for j in range(m):
        i = present[j]
        if again[i] != row[_b(i) + R_ASG]:
            return False
    return True


@njit(cache=True)
def commit_accepted(P, row, i, ghost):
    if row[G_STATUS] == DEAD:
        return False
    if not P[P_FENCE]:
        return True
    if ghost:
        return False
    b = _b(i)
    if row[b + C_ID] != ID_CURRENT or row[b + R_SET] == 0:
        return False
    if row[b + C_GEN] != row[G_GEN]:
        return False
    st = row[G_STATUS]
    return st == STABLE or st == PREP


@njit(cache=True)
def exclusive_ownership_ok(P, row):
    seen = 0
    for i in range(P[P_N]):
        owned = row[_b(i) + C_OWNED]
        if owned and live_member(row, i):
            if seen & owned:
                return False
            seen |= owned
    return True


@njit(cache=True)
def commit_fencing_ok(P, row):
    n = P[P_N]
    for i in range(n):
        b = _b(i)
        for which in range(2):
            if which == 0:
                if not (row[b + C_PROC] == UP and row[b + C_STATUS] == M_STABLE and row[b + C_OWNED]):
                    continue
                owned = row[b + C_OWNED]
                ghost = False
            else:
                if not (row[b + C_GH] and row[b + C_GHOWN]):
                    continue
                owned = row[b + C_GHOWN]
                ghost = True
            if not commit_accepted(P, row, i, ghost):
                continue
            if ghost or not live_member(row, i):
                return False
            if row[b + C_GEN] != row[G_GEN]:
                return False
            if owned & ~row[b + R_ASG]:
                return False
            for k in range(n):
                if k != i and row[_b(k) + C_OWNED] & owned and live_member(row, k):
                    return False
    return True


@njit(cache=True)
def generation_ok(P, s, t):
    """ClassicObservations.generation_violation, on values (see the module's tests for the argument)."""
    d = t[G_GEN] - s[G_GEN]
    if d != 0 and d != 1:
        return False
    hs = t[G_STATUS]
    gs = s[G_STATUS]
    if d == 1 and not (hs == COMPLETING or hs == EMPTY or (P[P_COORD] and hs == STABLE)):
        return False
    if d == 0 and hs != gs and (hs == COMPLETING or hs == EMPTY) and gs != DEAD:
        return False
    for i in range(P[P_N]):
        b = _b(i)
        a = s[b + C_GEN]
        bg = t[b + C_GEN]
        if bg != NO_GEN and bg < a:
            return False
        if bg > t[G_GEN]:
            return False
    return True


@njit(cache=True)
def members_in_group(P, row):
    c = 0
    for i in range(P[P_N]):
        if row[_b(i) + R_SET]:
            c += 1
    return c


# ---------------------------------------------------------------------------------------------------
# Keys (groupspec.model.symmetry.plain_key and Canonicalizer._sym_key)
# ---------------------------------------------------------------------------------------------------
SHAPE = 19  # label-free facts of a slot
NMASK = 6  # partition masks attached to a slot
ROWLEN = SHAPE + NMASK + NMASK  # shape, mask sizes (sort only), masks
KH = 7  # key header: status, partitions, held, target is None, budget, leader + 1, held_for + 1


@njit(cache=True, inline="always")
def rel(gen, base):
    if gen == NO_GEN:
        return -1
    d = base - gen
    return d if d < OLDEST else OLDEST


@njit(cache=True)
def slot_row(row, i, base, r):
    """One slot's shape (symmetry._shape, with presence flags for the empty tuples), its masks' sizes
    and its masks (symmetry._masks_of_slot), into ``r``."""
    b = _b(i)
    r[0] = row[b + C_PROC]
    r[1] = row[b + C_STATUS]
    r[2] = row[b + C_ID]
    r[3] = rel(row[b + C_GEN], base)
    r[4] = row[b + C_TOPICS]
    r[5] = row[b + C_REJOIN]
    if row[b + C_IB]:
        r[6] = 1
        r[7] = row[b + C_IB]
        r[8] = rel(row[b + C_IBGEN], base)
    else:
        r[6] = 0
        r[7] = 0
        r[8] = 0
    r[9] = rel(row[b + C_GHGEN], base) if row[b + C_GH] else -2
    if row[b + R_SET]:
        r[10] = 1
        r[11] = row[b + R_STATIC]
        r[12] = row[b + R_JOINED]
        r[13] = row[b + R_AWAIT]
        r[14] = row[b + R_SYNCED]
        r[15] = row[b + R_TOPICS]
        r[16] = rel(row[b + R_GEN], base)
    else:
        for f in range(10, 17):
            r[f] = 0
    r[17] = 1 if row[G_LEADER] == i else 0
    r[18] = 1 if row[G_HELDFOR] == i else 0
    m0 = row[b + C_OWNED]
    m1 = row[b + C_IBASG] if row[b + C_IB] else 0
    m2 = row[b + C_GHOWN] if row[b + C_GH] else 0
    m3 = row[b + R_OWNED] if row[b + R_SET] else 0
    m4 = row[b + R_ASG] if row[b + R_SET] else 0
    m5 = row[b + T_ASG] if row[G_TSET] else 0
    r[SHAPE + NMASK + 0] = m0
    r[SHAPE + NMASK + 1] = m1
    r[SHAPE + NMASK + 2] = m2
    r[SHAPE + NMASK + 3] = m3
    r[SHAPE + NMASK + 4] = m4
    r[SHAPE + NMASK + 5] = m5
    for k in range(NMASK):
        r[SHAPE + k] = popcount(r[SHAPE + NMASK + k])


@njit(cache=True)
def forget_dead(P, blocks, row, i, base, r):
    """symmetry.forget_dead on one slot's key row ``r`` (made by slot_row): a ghost's generation and
    owned set, and a stale-id client's owned set, generation (unless ahead), inbox generation, SYNC
    assignment (folded into the ``rejoin`` it leads to)."""
    b = _b(i)
    if row[b + C_GH]:
        r[9] = 0
        r[SHAPE + NMASK + 2] = 0
    if row[b + C_ID] == ID_STALE:
        gen = row[b + C_GEN]
        if gen == NO_GEN or gen <= base:
            r[3] = 0
        ib = row[b + C_IB]
        if ib:
            r[8] = 0
            if ib == SYNC:
                a = row[b + C_IBASG]
                topics = row[b + C_TOPICS]
                sub = 0
                for t in range(blocks.shape[0] - 1):
                    if (topics >> t) & 1:
                        sub |= ((1 << blocks[t + 1]) - 1) ^ ((1 << blocks[t]) - 1)
                sub &= row[G_PARTS] | a
                if (a & ~sub) or (P[P_COOP] and (row[b + C_OWNED] & ~a)):
                    r[5] = 1
                r[SHAPE + NMASK + 1] = 0
        r[SHAPE + NMASK + 0] = 0
    for k in range(3):
        r[SHAPE + k] = popcount(r[SHAPE + NMASK + k])


@njit(cache=True, inline="always")
def lex_less(a, b, length):
    for f in range(length):
        if a[f] != b[f]:
            return a[f] < b[f]
    return False


@njit(cache=True)
def remap(mask, perm):
    out = 0
    p = 0
    while mask:
        if mask & 1:
            out |= 1 << perm[p]
        mask >>= 1
        p += 1
    return out


@njit(cache=True)
def key_vector(P, blocks, row, rows, order, cols, perm, kv):
    """The explorer's key of ``row`` as a vector of small integers ``kv`` (packed by ``pack``)."""
    n = P[P_N]
    K = P[P_K]
    base = row[G_GEN]
    for i in range(n):
        slot_row(row, i, base, rows[i])
        if P[P_DEAD]:
            forget_dead(P, blocks, row, i, base, rows[i])
    if not P[P_SYM]:
        kv[0] = row[G_STATUS]
        kv[1] = row[G_PARTS]
        kv[2] = row[G_HELD]
        kv[3] = 1 - row[G_TSET]
        kv[4] = row[G_BUDGET]
        kv[5] = row[G_LEADER] + 1
        kv[6] = row[G_HELDFOR] + 1
        for i in range(n):
            for f in range(ROWLEN):
                kv[KH + i * ROWLEN + f] = rows[i, f]
        return
    # 1. slots ordered by shape and mask sizes (a stable insertion sort, as Python's sorted)
    for j in range(n):
        q = j
        while q > 0 and lex_less(rows[j], rows[order[q - 1]], SHAPE + NMASK):
            order[q] = order[q - 1]
            q -= 1
        order[q] = j
    # 2. each partition's column
    for p in range(K):
        cols[p] = 0
    for j in range(n):
        i = order[j]
        shift = (n - 1 - j) * NMASK
        for k in range(NMASK):
            m = rows[i, SHAPE + NMASK + k]
            bit = 1 << (shift + NMASK - 1 - k)
            p = 0
            while m:
                if m & 1:
                    cols[p] |= bit
                m >>= 1
                p += 1
    top = n * NMASK
    for p in range(K):
        cols[p] |= (((row[G_PARTS] >> p) & 1) << (top + 1)) | (((row[G_HELD] >> p) & 1) << top)
    # partitions renamed within each topic block, by column (stable): a partition's new place is its rank, the
    # partitions of its block before it in (column, index) order (no scratch array allocated per key)
    for t in range(blocks.shape[0] - 1):
        lo = blocks[t]
        hi = blocks[t + 1]
        for p in range(lo, hi):
            c = cols[p]
            rank = 0
            for q in range(lo, hi):
                if cols[q] < c or (cols[q] == c and q < p):
                    rank += 1
            perm[p] = lo + rank
    # 3. rows with renamed masks, sorted
    for i in range(n):
        for k in range(NMASK):
            rows[i, SHAPE + NMASK + k] = remap(rows[i, SHAPE + NMASK + k], perm)
    for j in range(n):
        q = j
        while q > 0 and lex_less(rows[j], rows[order[q - 1]], ROWLEN):
            order[q] = order[q - 1]
            q -= 1
        order[q] = j
    kv[0] = row[G_STATUS]
    kv[1] = remap(row[G_PARTS], perm)
    kv[2] = remap(row[G_HELD], perm)
    kv[3] = 1 - row[G_TSET]
    kv[4] = row[G_BUDGET]
    kv[5] = 0
    kv[6] = 0
    for j in range(n):
        i = order[j]
        for f in range(ROWLEN):
            kv[KH + j * ROWLEN + f] = rows[i, f]


def key_widths(members: int, partitions: int, topics: int) -> np.ndarray:
    """Bits of each key field when packed; 0 for the fields that are only there to sort by."""
    k, t = partitions, topics
    head = [3, k, k, 1, 4, 3, 3]
    # proc status id rel topics rejoin ib? reply rel ghostrel r? static joined await synced topics rel leader held_for
    shape = [2, 2, 2, 4, t, 1, 1, 3, 4, 4, 1, 1, 1, 1, 1, t, 4, 1, 1]
    assert len(shape) == SHAPE
    row = shape + [0] * NMASK + [k] * NMASK
    return np.array(head + row * members, dtype=np.int64)


def key_offsets() -> np.ndarray:
    """What is added to a field before packing (generations relative to the group's can be -1, or -2
    for "no ghost"); every packed field must then fit its width."""
    head = [0] * KH
    shape = [0] * SHAPE
    for f in (3, 8, 9, 16):
        shape[f] = 8
    return np.array(head + shape + [0] * (2 * NMASK), dtype=np.int64)


@njit(cache=True)
def pack(kv, widths, offsets, words):
    """Pack the key vector into ``words`` (uint64), losslessly."""
    for w in range(words.shape[0]):
        words[w] = 0
    w = 0
    used = 0
    hl = KH
    for f in range(kv.shape[0]):
        wd = widths[f]
        if wd == 0:
            continue
        off = offsets[f] if f < hl else offsets[hl + (f - hl) % ROWLEN]
        v = kv[f] + off
        if v < 0 or v >= (1 << wd):
            raise ValueError("key field out of range")
        if used + wd > 64:
            w += 1
            used = 0
        words[w] |= np.uint64(v) << np.uint64(used)
        used += wd


def key_words(widths: np.ndarray) -> int:
    w, used = 1, 0
    for wd in widths:
        if wd == 0:
            continue
        if used + wd > 64:
            w += 1
            used = 0
        used += int(wd)
    return w


# ---------------------------------------------------------------------------------------------------
# The search's counters (the breadth-first search itself is groupspec.checker.compiled.lean)
# ---------------------------------------------------------------------------------------------------
# ctl: the search's counters, kept by the caller between calls
CT_COUNT = 0  # states stored
CT_HEAD = 1  # next state to expand
CT_EDGES = 2  # steps taken (every enabled action of every expanded state)
CT_FAIR = 3  # protocol-step edges stored
CT_EXCL = 4  # first state violating exclusive ownership, or -1
CT_FENCE = 5  # first state violating commit fencing, or -1
CT_GEN = 6  # source state of the first step violating generation monotonicity, or -1
CT_GENACT = 7  # that step's action
CT_SOMETIMES = 8  # first state where sometimes_all_stable holds, or -1
CT_LEN = 9

MAX_SUCC_PER_SLOT = 12
