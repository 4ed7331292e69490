"""The migration between the protocols (``groupspec.model.migration``), compiled with numba.

A second encoding of ``ClassicToConsumer`` written function by function after it, on the consumer
encoding's rows (``consumer_kernel``) plus a tail: the group's type, the classic group, and per slot the
classic fields (``X*`` there). The consumer-group side is ``consumer_kernel``'s own (heartbeat,
reconciliation, removal with the migration's rule). The classic leader's cooperative assignment is, like
the server-side target, the model's own answer looked up in the target table (``TAG_COOPERATIVE``).
Checked against the model by ``tests/test_compiled_consumer.py``.
"""
from __future__ import annotations

from numba import njit

from . import consumer_kernel as CK
from .consumer_kernel import (
    C_ASSIGNED, C_EPOCH, C_OWNED, C_PROC, C_TOPICS, H_BUDGET, H_EPOCH, H_PARTS, H_TEPOCH, HEADER, M_ASSIGNED,
    M_EPOCH, M_PRESENT, M_PREV, M_REVOKING, M_STATE, M_STATIC, M_TOPICS, MISS, P_ACKED, P_FAULTS, P_K, P_N,
    P_REJOIN, P_SYNC_TARGET, SLOT, T_TARGET, X_CGEN, X_CJOINED, X_CLEADER, X_CMEMBERS, X_CSTATUS, X_CUNSYNCED,
    X_KIND, XC_CLASSIC, XC_PHASE, XM_CLASSIC, XR_ASSIGN, XR_PENDING, XR_REPORTED,
)

CLASSIC, CONSUMER = 0, 1  # groupspec.model.migration_state.Kind
EMPTY, PREP, COMPLETING, STABLE_G = 0, 1, 2, 3  # groupspec.model.core.GroupStatus
P_STABLE, P_JOIN, P_WAIT, P_SYNC = 0, 1, 2, 3  # groupspec.model.migration_state.Phase
DOWN, UP, PAUSED = CK.DOWN, CK.UP, CK.PAUSED
NOT_MEMBER = -1


@njit(cache=True, inline="always")
def extras_base(P):
    return HEADER + P[P_N] * SLOT


@njit(cache=True, inline="always")
def slot_base(i):
    return HEADER + i * SLOT


# -- the classic group -------------------------------------------------------------------------------
@njit(cache=True)
def empty_classic(P, t):
    x = extras_base(P)
    t[x + X_CSTATUS] = EMPTY
    t[x + X_CGEN] = 0
    t[x + X_CMEMBERS] = 0
    t[x + X_CJOINED] = 0
    t[x + X_CLEADER] = -1
    t[x + X_CUNSYNCED] = 0
    for i in range(P[P_N]):
        y = CK.xslot(P, i)
        t[y + XR_REPORTED] = 0
        t[y + XR_ASSIGN] = 0
        t[y + XR_PENDING] = 0


@njit(cache=True)
def empty_consumer(P, t):
    t[H_EPOCH] = 0
    t[H_TEPOCH] = 0
    t[H_PARTS] = (1 << P[P_K]) - 1
    for i in range(P[P_N]):
        CK.clear_member(P, t, i)
        t[slot_base(i) + T_TARGET] = 0


@njit(cache=True)
def prepare(P, t):
    """``_prepare``: a new join phase (COMPLETING_REBALANCE first empties the stored assignments)."""
    x = extras_base(P)
    if t[x + X_CSTATUS] == COMPLETING:
        for i in range(P[P_N]):
            t[CK.xslot(P, i) + XR_ASSIGN] = 0
        t[x + X_CUNSYNCED] = t[x + X_CMEMBERS]
    t[x + X_CSTATUS] = PREP
    t[x + X_CJOINED] = 0
    for i in range(P[P_N]):
        t[CK.xslot(P, i) + XR_PENDING] = 0


@njit(cache=True)
def cooperative(P, t, members, field, tk, tq):
    """``cooperative_assignment(members, <field> per slot)``: its table row, or MISS."""
    n = P[P_N]
    tq[0] = CK.TAG_COOPERATIVE
    tq[1] = members
    for i in range(n):
        tq[2 + i] = t[CK.xslot(P, i) + field]
        tq[2 + n + i] = 0
    s = CK.target_slot(tk, tq)
    if tk[s, 0] < 0:
        return MISS
    return s


@njit(cache=True)
def maybe_complete(P, t, tk, tv, tq):
    """``_maybe_complete``: every member rejoined: the next generation, the parked JoinGroups answered."""
    x = extras_base(P)
    members = t[x + X_CMEMBERS]
    if t[x + X_CSTATUS] != PREP or t[x + X_CJOINED] != members:
        return True
    gen = t[x + X_CGEN] + 1
    if not members:
        t[x + X_CSTATUS] = EMPTY
        t[x + X_CGEN] = gen
        t[x + X_CLEADER] = -1
        return True
    s = cooperative(P, t, members, XR_REPORTED, tk, tq)
    if s < 0:
        return False
    leader = -1
    for i in range(P[P_N]):
        t[CK.xslot(P, i) + XR_PENDING] = tv[s, i]
        if members >> i & 1:
            t[CK.xslot(P, i) + XC_PHASE] = P_SYNC
            t[slot_base(i) + C_EPOCH] = gen
            if leader < 0:
                leader = i
    t[x + X_CSTATUS] = COMPLETING
    t[x + X_CGEN] = gen
    t[x + X_CLEADER] = leader
    return True


@njit(cache=True)
def lost(P, t, i):
    """``_lost``: onPartitionsLost, reset the generation, rejoin."""
    t[slot_base(i) + C_EPOCH] = NOT_MEMBER
    t[slot_base(i) + C_OWNED] = 0
    t[CK.xslot(P, i) + XC_PHASE] = P_JOIN


@njit(cache=True)
def classic_remove(P, t, i, tk, tv, tq):
    """``_classic_remove``."""
    x = extras_base(P)
    bit = 1 << i
    t[x + X_CMEMBERS] &= ~bit
    t[x + X_CJOINED] &= ~bit
    t[x + X_CUNSYNCED] &= ~bit
    y = CK.xslot(P, i)
    t[y + XR_REPORTED] = 0
    t[y + XR_ASSIGN] = 0
    st = t[x + X_CSTATUS]
    if st == STABLE_G or st == COMPLETING:
        prepare(P, t)
    if t[y + XC_CLASSIC] and t[y + XC_PHASE] == P_WAIT:
        lost(P, t, i)
    return maybe_complete(P, t, tk, tv, tq)


# -- the consumer group ----------------------------------------------------------------------------
@njit(cache=True)
def settle(P, t):
    """``_settle``: the online downgrade, once only classic members are left in the consumer group."""
    x = extras_base(P)
    if t[x + X_KIND] != CONSUMER:
        return
    rest = 0
    mask = 0
    first = -1
    for i in range(P[P_N]):
        if t[slot_base(i) + M_PRESENT]:
            rest += 1
            if not t[CK.xslot(P, i) + XM_CLASSIC]:
                return
            mask |= 1 << i
            if first < 0:
                first = i
    if rest == 0:
        return
    gen = t[H_EPOCH]
    empty_classic(P, t)
    for i in range(P[P_N]):
        if mask >> i & 1:
            t[CK.xslot(P, i) + XR_ASSIGN] = t[slot_base(i) + T_TARGET]
    t[x + X_CSTATUS] = STABLE_G
    t[x + X_CGEN] = gen
    t[x + X_CMEMBERS] = mask
    t[x + X_CLEADER] = first
    prepare(P, t)
    empty_consumer(P, t)
    t[x + X_KIND] = CLASSIC


@njit(cache=True)
def upgrade(P, t):
    """``_upgrade`` in place; False when refused (nothing written then)."""
    x = extras_base(P)
    members = t[x + X_CMEMBERS]
    if not members:
        empty_classic(P, t)
        empty_consumer(P, t)
        t[x + X_KIND] = CONSUMER
        return True
    if t[x + X_CUNSYNCED]:
        return False
    gen = t[x + X_CGEN]
    full = (1 << P[P_K]) - 1
    n = P[P_N]
    empty_consumer(P, t)
    for i in range(n):
        if not members >> i & 1:
            continue
        y = CK.xslot(P, i)
        b = slot_base(i)
        asg = t[y + XR_ASSIGN]
        rev = full & ~asg if P[P_ACKED] else 0
        t[b + M_PRESENT] = 1
        t[b + M_STATE] = CK.UNREVOKED if rev else CK.STABLE
        t[b + M_EPOCH] = gen
        t[b + M_PREV] = gen
        t[b + M_ASSIGNED] = asg
        t[b + M_REVOKING] = rev
        t[b + M_TOPICS] = P[CK.P_ALLTOPICS]
        t[b + M_STATIC] = 0
        t[b + CK.M_LEFT] = 0
        t[y + XM_CLASSIC] = 1
        t[b + T_TARGET] = asg
        if t[y + XC_PHASE] == P_WAIT or t[y + XC_PHASE] == P_SYNC:
            t[y + XC_PHASE] = P_JOIN
    t[H_EPOCH] = gen
    t[H_TEPOCH] = gen
    empty_classic(P, t)
    t[x + X_KIND] = CONSUMER
    return True


@njit(cache=True)
def _down_client(P, t, i, proc, epoch, classic, phase):
    """``Client(proc=..., epoch=..., topics=<kept>, classic=..., phase=...)``."""
    b = slot_base(i)
    t[b + C_PROC] = proc
    t[b + C_EPOCH] = epoch
    t[b + C_OWNED] = 0
    t[b + C_ASSIGNED] = 0
    y = CK.xslot(P, i)
    t[y + XC_CLASSIC] = classic
    t[y + XC_PHASE] = phase


@njit(cache=True)
def consumer_heartbeat(P, TM, s, i, t, u, tk, tv, tq):
    """``_consumer_heartbeat`` into ``t`` (``u``: scratch). False on MISS."""
    x = extras_base(P)
    u[:] = s
    if s[x + X_KIND] == CLASSIC:
        ok = upgrade(P, u) if s[slot_base(i) + C_EPOCH] == 0 else False
        if not ok:
            # GROUP_ID_NOT_FOUND: fatal for the client, it gives its partitions up and stops
            t[:] = s
            _down_client(P, t, i, DOWN, NOT_MEMBER, 0, P_STABLE)
            return True
    if not CK.heartbeat(P, TM, u, i, t, tk, tv, tq):
        return False
    t[x + X_KIND] = CONSUMER
    settle(P, t)
    return True


# -- classic clients -----------------------------------------------------------------------------------
@njit(cache=True)
def apply_sync(P, t, i, assignment):
    """``_apply_sync``: revoke what is not assigned, add what is; rejoin if it revoked."""
    b = slot_base(i)
    revoked = t[b + C_OWNED] & ~assignment
    t[b + C_OWNED] = assignment
    t[CK.xslot(P, i) + XC_PHASE] = P_JOIN if revoked else P_STABLE


@njit(cache=True)
def join_classic(P, t, i, tk, tv, tq):
    """The classic-group branch of ``_join``, in place. False on MISS."""
    x = extras_base(P)
    b = slot_base(i)
    known = t[x + X_CMEMBERS] >> i & 1
    if not known and t[b + C_EPOCH] != NOT_MEMBER:
        lost(P, t, i)  # UNKNOWN_MEMBER_ID
        return True
    if t[x + X_CSTATUS] != PREP:
        prepare(P, t)
    if not known:
        t[x + X_CUNSYNCED] |= 1 << i
    t[x + X_CMEMBERS] |= 1 << i
    t[x + X_CJOINED] |= 1 << i
    y = CK.xslot(P, i)
    t[y + XR_REPORTED] = t[b + C_OWNED]
    t[y + XC_PHASE] = P_WAIT
    return maybe_complete(P, t, tk, tv, tq)


@njit(cache=True)
def join(P, s, i, t, tk, tv, tq):
    """``_join``. False on MISS."""
    t[:] = s
    x = extras_base(P)
    b = slot_base(i)
    if s[x + X_KIND] == CLASSIC:
        return join_classic(P, t, i, tk, tv, tq)
    c_epoch = s[b + C_EPOCH]
    if not s[b + M_PRESENT]:
        if P[P_ACKED] and c_epoch != NOT_MEMBER:
            lost(P, t, i)  # the fix: UNKNOWN_MEMBER_ID
            return True
        anyone = False
        for k in range(P[P_N]):
            if s[slot_base(k) + M_PRESENT]:
                anyone = True
        if not anyone:  # an empty consumer group is deleted; the JoinGroup creates a classic group
            empty_classic(P, t)
            empty_consumer(P, t)
            t[x + X_KIND] = CLASSIC
            return join_classic(P, t, i, tk, tv, tq)
        t[b + M_PRESENT] = 1
        t[b + M_STATE] = CK.STABLE
        t[b + M_EPOCH] = 0
        t[b + M_PREV] = 0
        t[b + M_ASSIGNED] = 0
        t[b + M_REVOKING] = 0
        t[b + M_TOPICS] = s[b + C_TOPICS]
        t[b + M_STATIC] = 0
        t[b + CK.M_LEFT] = 0
        t[CK.xslot(P, i) + XM_CLASSIC] = 1
        if not CK.bump(P, t, tk, tv, tq):
            return False
    CK.reconcile(P, t, i, s[b + C_OWNED], 0)
    t[b + C_EPOCH] = t[b + M_EPOCH]
    t[CK.xslot(P, i) + XC_PHASE] = P_SYNC
    return True


@njit(cache=True)
def sync(P, s, i, t):
    """``_sync``: 1 (a step into ``t``) or 0 (parked: no step)."""
    t[:] = s
    x = extras_base(P)
    b = slot_base(i)
    c_epoch = s[b + C_EPOCH]
    if s[x + X_KIND] == CLASSIC:
        if not s[x + X_CMEMBERS] >> i & 1 or c_epoch != s[x + X_CGEN]:
            lost(P, t, i)
            return 1
        st = s[x + X_CSTATUS]
        if st == PREP:
            t[CK.xslot(P, i) + XC_PHASE] = P_JOIN  # REBALANCE_IN_PROGRESS
            return 1
        if st == COMPLETING:
            if i != s[x + X_CLEADER]:
                return 0  # parked until the leader's SyncGroup
            t[x + X_CSTATUS] = STABLE_G
            for k in range(P[P_N]):
                y = CK.xslot(P, k)
                t[y + XR_ASSIGN] = t[y + XR_PENDING]
                t[y + XR_PENDING] = 0
            t[x + X_CUNSYNCED] = 0
        apply_sync(P, t, i, t[CK.xslot(P, i) + XR_ASSIGN])
        return 1
    if not s[b + M_PRESENT] or c_epoch != s[b + M_EPOCH]:
        lost(P, t, i)
        return 1
    if s[H_EPOCH] > s[b + M_EPOCH] and s[b + M_STATE] != CK.UNREVOKED:
        t[CK.xslot(P, i) + XC_PHASE] = P_JOIN  # REBALANCE_IN_PROGRESS
        return 1
    apply_sync(P, t, i, s[b + T_TARGET] if P[P_SYNC_TARGET] else s[b + M_ASSIGNED])
    return 1


@njit(cache=True)
def heartbeat_classic(P, s, i, t):
    """``_heartbeat_classic``: 1 (a step into ``t``) or 0 (the answer is NONE)."""
    t[:] = s
    x = extras_base(P)
    b = slot_base(i)
    c_epoch = s[b + C_EPOCH]
    if s[x + X_KIND] == CLASSIC:
        if not s[x + X_CMEMBERS] >> i & 1 or c_epoch != s[x + X_CGEN]:
            lost(P, t, i)
            return 1
        if s[x + X_CSTATUS] == PREP:
            t[CK.xslot(P, i) + XC_PHASE] = P_JOIN
            return 1
        return 0
    if not s[b + M_PRESENT] or c_epoch != s[b + M_EPOCH]:
        lost(P, t, i)
        return 1
    if not P[P_REJOIN]:
        return 0
    waiting = s[b + T_TARGET] & ~s[b + M_ASSIGNED]
    st = s[b + M_STATE]
    if (s[b + M_EPOCH] < s[H_EPOCH] or st == CK.UNREVOKED
            or (st == CK.UNRELEASED and not waiting & CK.held_by_others(P, s, i))):
        t[CK.xslot(P, i) + XC_PHASE] = P_JOIN
        return 1
    return 0


# -- removal, whatever the group's type ---------------------------------------------------------------
@njit(cache=True, inline="always")
def is_member(P, s, i):
    x = extras_base(P)
    if s[x + X_KIND] == CLASSIC:
        return (s[x + X_CMEMBERS] >> i & 1) != 0
    return s[slot_base(i) + M_PRESENT] != 0


@njit(cache=True)
def drop(P, t, i, tk, tv, tq):
    """``_drop`` in place. False on MISS."""
    if t[extras_base(P) + X_KIND] == CLASSIC:
        return classic_remove(P, t, i, tk, tv, tq)
    if not CK.remove(P, t, i, tk, tv, tq):
        return False
    settle(P, t)
    return True


@njit(cache=True)
def restart(P, t, i, classic):
    """``_restart``: the process comes back speaking the classic protocol or the consumer one."""
    if classic:
        _down_client(P, t, i, UP, NOT_MEMBER, 1, P_JOIN)
    else:
        _down_client(P, t, i, UP, 0, 0, P_STABLE)


@njit(cache=True)
def successors(P, TM, s, out, acts, tk, tv, tq, u):
    """``ClassicToConsumer.successors``, in the model's order; MISS if a table answer is missing."""
    n = P[P_N]
    faults = P[P_FAULTS]
    spend = s[H_BUDGET] > 0
    ns = 0
    for i in range(n):
        b = slot_base(i)
        y = CK.xslot(P, i)
        proc = s[b + C_PROC]
        classic = s[y + XC_CLASSIC]
        phase = s[y + XC_PHASE]
        c_epoch = s[b + C_EPOCH]
        member = is_member(P, s, i)
        if proc == UP:
            if not classic:
                if c_epoch >= 0:
                    t = out[ns]
                    if not consumer_heartbeat(P, TM, s, i, t, u, tk, tv, tq):
                        return MISS
                    differs = False
                    for f in range(s.shape[0]):
                        if t[f] != s[f]:
                            differs = True
                            break
                    if differs:
                        acts[ns] = CK.HB * 8 + i
                        ns += 1
                if s[b + C_OWNED] & ~s[b + C_ASSIGNED]:
                    t = out[ns]
                    t[:] = s
                    t[b + C_OWNED] = s[b + C_OWNED] & s[b + C_ASSIGNED]
                    acts[ns] = CK.REVOKE * 8 + i
                    ns += 1
            elif phase == P_JOIN:
                if not join(P, s, i, out[ns], tk, tv, tq):
                    return MISS
                acts[ns] = CK.JOIN * 8 + i
                ns += 1
            elif phase == P_SYNC:
                if sync(P, s, i, out[ns]):
                    acts[ns] = CK.SYNC * 8 + i
                    ns += 1
            elif phase == P_STABLE:
                if heartbeat_classic(P, s, i, out[ns]):
                    acts[ns] = CK.CLASSIC_HB * 8 + i
                    ns += 1
        elif proc == PAUSED:
            t = out[ns]
            t[:] = s
            t[b + C_PROC] = UP
            acts[ns] = CK.RESUME * 8 + i
            ns += 1
        if member and proc != UP:
            t = out[ns]
            t[:] = s
            if not drop(P, t, i, tk, tv, tq):
                return MISS
            acts[ns] = CK.EXPIRED * 8 + i
            ns += 1
        if not spend:
            continue
        live = proc == UP and member and (classic or c_epoch > 0)
        if live and classic:
            t = out[ns]
            t[:] = s
            t[H_BUDGET] -= 1
            if not drop(P, t, i, tk, tv, tq):
                return MISS
            restart(P, t, i, False)
            acts[ns] = CK.UPGRADE * 8 + i
            ns += 1
        if live and not classic:
            t = out[ns]
            t[:] = s
            t[H_BUDGET] -= 1
            if not drop(P, t, i, tk, tv, tq):
                return MISS
            restart(P, t, i, True)
            acts[ns] = CK.DOWNGRADE * 8 + i
            ns += 1
        if faults & CK.F_JOIN and proc == DOWN and not member:
            t = out[ns]
            t[:] = s
            t[H_BUDGET] -= 1
            restart(P, t, i, classic)
            acts[ns] = CK.START * 8 + i
            ns += 1
        if faults & CK.F_LEAVE and live:
            t = out[ns]
            t[:] = s
            t[H_BUDGET] -= 1
            if not drop(P, t, i, tk, tv, tq):
                return MISS
            _down_client(P, t, i, DOWN, NOT_MEMBER, classic, P_STABLE)
            acts[ns] = CK.LEAVE * 8 + i
            ns += 1
        if faults & CK.F_CRASH and proc != DOWN:
            t = out[ns]
            t[:] = s
            t[H_BUDGET] -= 1
            _down_client(P, t, i, DOWN, NOT_MEMBER, classic, P_STABLE)
            acts[ns] = CK.CRASH * 8 + i
            ns += 1
        if faults & CK.F_TIMEOUT and live:
            t = out[ns]
            t[:] = s
            t[H_BUDGET] -= 1
            if not drop(P, t, i, tk, tv, tq):
                return MISS
            acts[ns] = CK.EXPIRE_LIVE * 8 + i
            ns += 1
        if faults & CK.F_ZOMBIE and live:
            t = out[ns]
            t[:] = s
            t[H_BUDGET] -= 1
            t[b + C_PROC] = PAUSED
            acts[ns] = CK.PAUSE * 8 + i
            ns += 1
    return ns
