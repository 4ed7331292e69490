"""The KIP-848 consumer protocol's transition relation, keys and properties, compiled with numba.

A *second encoding* of ``groupspec.model.consumer`` (as ``kernel.py`` is one of
``groupspec.model.classic``), written function by function after it: every function below names the
model function it encodes. It exists for speed only and is never the specification: the drift tests
(``tests/test_compiled_consumer.py``) require the same actions in the same order leading to the same
states, the same keys, the same property verdicts and the same whole explorations as the model.

States are rows of integers: a header (group epoch, assignment epoch, existing partitions, budget),
then one block of :data:`SLOT` fields per member slot (the client, the coordinator's member record,
the slot's target). A variant and its finite instance are a parameter vector ``P`` and the topic masks
``TM``.

The server-side assignor is *not* encoded a second time: the target of a group is looked up in a
table (``tk``/``tv``) filled with the model's own ``Consumer.compute_target``. A step that needs a
target the table does not hold writes the assignor's input (the query) to ``tq`` and the function
returns :data:`MISS`; the driver computes the target with the model, stores it and runs the step
again (nothing has been written by then). So the targets are the model's by construction.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# -- the row ---------------------------------------------------------------------------------------
H_EPOCH, H_TEPOCH, H_PARTS, H_BUDGET = 0, 1, 2, 3
HEADER = 4
(C_PROC, C_EPOCH, C_OWNED, C_ASSIGNED, C_TOPICS, M_PRESENT, M_STATE, M_EPOCH, M_PREV, M_ASSIGNED, M_REVOKING,
 M_TOPICS, M_STATIC, M_LEFT, T_TARGET) = range(15)
SLOT = 15

# -- parameters (the index of each in P) -----------------------------------------------------------
P_N, P_K, P_T, P_STATIC, P_WAIT, P_FENCE, P_BUMP, P_SYM, P_FAULTS, P_ALLTOPICS, P_INITIAL = range(11)
# the migration (``migration_kernel``): rows carry a tail (below); its variants' switches
P_MIG, P_ACKED, P_SYNC_TARGET, P_REJOIN = range(11, 15)
# the requests and answers in flight (``model/consumer_flight.py``) and the switches of their rules
(P_FLIGHT, P_EPOCH_FENCE, P_PREV_SUBSET, P_LOSE_ON_FENCE, P_KIP1251, P_K19233, P_KEEPS_RECORD) = range(15, 22)
P_LEN = 22

F_JOIN, F_LEAVE, F_CRASH, F_TIMEOUT, F_ZOMBIE, F_SUBSCRIPTION, F_PARTITIONS = 1, 2, 4, 8, 16, 32, 64
F_LOSE_ANSWER, F_LATE_ANSWER, F_LATE_COMMIT, F_EARLY_RESTART = 128, 256, 512, 1024
FAULT_BITS = {"join": F_JOIN, "leave": F_LEAVE, "crash": F_CRASH, "timeout": F_TIMEOUT, "zombie": F_ZOMBIE,
              "subscription": F_SUBSCRIPTION, "partitions": F_PARTITIONS, "lose-answer": F_LOSE_ANSWER,
              "late-answer": F_LATE_ANSWER, "late-commit": F_LATE_COMMIT, "early-restart": F_EARLY_RESTART}

DOWN, UP, PAUSED = 0, 1, 2  # groupspec.model.core.Proc
STABLE, UNREVOKED, UNRELEASED = 0, 1, 2  # groupspec.model.consumer.MemberState
OLDEST = 4  # groupspec.model.consumer.OLDEST

# Action codes: class * 8 + member. The first ten classes are protocol steps (weakly fair).
(HB, REVOKE, RESUME, EXPIRED, RTFENCE, JOIN, SYNC, CLASSIC_HB, RECEIVE_ANSWER, DELIVER_COMMIT, START, LEAVE, CRASH,
 EXPIRE_LIVE, PAUSE, CHANGE_SUB, ADD_PART, UPGRADE, DOWNGRADE, LOSE_ANSWER, DELAY_ANSWER, SEND_COMMIT,
 EARLY_RESTART) = range(23)
FAIR_LIMIT = 10 * 8
MAX_SUCC_PER_SLOT = 17

# The coordinator's answer to a heartbeat (``handle``): OK, FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, UNRELEASED_INSTANCE_ID
ANS_OK, ANS_FENCED, ANS_UNKNOWN, ANS_UNRELEASED = 0, 1, 2, 3

# The in-flight tail (``P[P_FLIGHT]``), after the consumer row: per slot the client's answer on its way
# (present, epoch, assignment), its OffsetCommit on its way (present, epoch, partitions), and the member's
# assignment epoch of each partition (``Member.since``, ``P[P_K]`` fields; 0 where not held or no member).
F_ANS, F_ANS_EPOCH, F_ANS_ASSIGNED, F_COM, F_COM_EPOCH, F_COM_PARTS, F_SINCE = range(7)
FS = 6  # + the partitions


def flight_width(n: int, k: int) -> int:
    return HEADER + n * SLOT + n * (FS + k)
MISS = -1  # a target the table does not hold yet (its query is in tq)


# The migration's tail, after the consumer row (``HEADER + n * SLOT`` on): the group's type and the classic
# group, then per slot the classic fields of the client and the member and the classic group's per-member ones.
X_KIND, X_CSTATUS, X_CGEN, X_CMEMBERS, X_CJOINED, X_CLEADER, X_CUNSYNCED = range(7)
XH = 7
XC_CLASSIC, XC_PHASE, XM_CLASSIC, XR_REPORTED, XR_ASSIGN, XR_PENDING = range(6)
XS = 6


def width(n: int, migration: bool = False) -> int:
    return HEADER + n * SLOT + ((XH + n * XS) if migration else 0)


@njit(cache=True, inline="always")
def fslot(P, i):
    """Where slot ``i``'s in-flight fields start."""
    return HEADER + P[P_N] * SLOT + i * (FS + P[P_K])


@njit(cache=True, inline="always")
def xslot(P, i):
    """Where slot ``i``'s tail fields start."""
    return HEADER + P[P_N] * SLOT + XH + i * XS


TAG_TARGET, TAG_COOPERATIVE = 0, 1


def query_len(n: int) -> int:
    """An assignor's input, tagged: TAG_TARGET, existing partitions, one code per slot (member, topics,
    static), the target; or TAG_COOPERATIVE (the migration's classic leader), members, reported owned."""
    return 2 + 2 * n


# -- the target table (filled by the driver with the model's assignor) --------------------------------
@njit(cache=True, inline="always")
def _qhash(q):
    h = np.uint64(0x9E3779B97F4A7C15)
    for x in range(q.shape[0]):
        h ^= np.uint64(q[x] + 1)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(29)
    return h


@njit(cache=True)
def target_slot(tk, q):
    """The table row holding query ``q``, or the empty row where it would go (``tk[row, 0] < 0``)."""
    size = tk.shape[0]
    s = np.int64(_qhash(q) % np.uint64(size))
    while True:
        if tk[s, 0] < 0:
            return s
        same = True
        for x in range(q.shape[0]):
            if tk[s, x] != q[x]:
                same = False
                break
        if same:
            return s
        s += 1
        if s == size:
            s = 0


@njit(cache=True)
def store_target(tk, tv, q, target):
    s = target_slot(tk, q)
    tk[s, :] = q
    tv[s, :] = target


@njit(cache=True)
def lookup_target(P, t, tk, tv, tq):
    """``Consumer.compute_target`` of the group in row ``t``: its table row, or MISS (query left in ``tq``)."""
    n = P[P_N]
    tq[0] = TAG_TARGET
    tq[1] = t[H_PARTS]
    for i in range(n):
        b = HEADER + i * SLOT
        tq[2 + i] = 0 if t[b + M_PRESENT] == 0 else 1 + t[b + M_STATIC] + 2 * t[b + M_TOPICS]
        tq[2 + n + i] = t[b + T_TARGET]
    s = target_slot(tk, tq)
    if tk[s, 0] < 0:
        return MISS
    return s


# -- the coordinator ---------------------------------------------------------------------------------
@njit(cache=True)
def bump(P, t, tk, tv, tq):
    """``Consumer._bump``: a new target, stamped with a new group epoch (unless the variant skips it)."""
    s = lookup_target(P, t, tk, tv, tq)
    if s < 0:
        return False
    n = P[P_N]
    for i in range(n):
        t[HEADER + i * SLOT + T_TARGET] = tv[s, i]
    if P[P_BUMP] == 0 and t[H_EPOCH] > 0:
        return True
    t[H_EPOCH] += 1
    t[H_TEPOCH] = t[H_EPOCH]
    return True


@njit(cache=True)
def clear_member(P, t, i):
    b = HEADER + i * SLOT
    for f in range(M_PRESENT, M_LEFT + 1):
        t[b + f] = 0
    if P[P_MIG]:
        t[xslot(P, i) + XM_CLASSIC] = 0
    clear_since(P, t, i)


@njit(cache=True, inline="always")
def clear_since(P, t, i):
    """``Member.since`` all 0 (in-flight faults only)."""
    if P[P_FLIGHT]:
        y = fslot(P, i) + F_SINCE
        for p in range(P[P_K]):
            t[y + p] = 0


@njit(cache=True)
def remove(P, t, i, tk, tv, tq):
    """``Consumer._remove``: member ``i`` leaves the coordinator's records; the group epoch is bumped.
    In the migration (``ClassicToConsumer._remove``): not when a consumer-protocol member leaves only
    classic members behind (the group is then downgraded, keeping its epoch and target)."""
    removed_classic = False
    if P[P_MIG]:
        removed_classic = t[xslot(P, i) + XM_CLASSIC] != 0
    clear_member(P, t, i)
    if P[P_MIG] and not removed_classic:
        rest = 0
        classic = 0
        for k in range(P[P_N]):
            if t[HEADER + k * SLOT + M_PRESENT]:
                rest += 1
                if t[xslot(P, k) + XM_CLASSIC]:
                    classic += 1
        if rest > 0 and classic == rest:
            return True
    return bump(P, t, tk, tv, tq)


@njit(cache=True)
def held_by_others(P, t, i):
    m = 0
    for k in range(P[P_N]):
        b = HEADER + k * SLOT
        if k != i and t[b + M_PRESENT]:
            m |= t[b + M_ASSIGNED] | t[b + M_REVOKING]
    return m


@njit(cache=True)
def next_assignment(P, t, i):
    """``Consumer._next_assignment`` on member ``i`` of row ``t`` (in place)."""
    b = HEADER + i * SLOT
    target = t[b + T_TARGET]
    keep = t[b + M_ASSIGNED] & target
    revoke = (t[b + M_ASSIGNED] | t[b + M_REVOKING]) & ~target
    t[b + M_PREV] = t[b + M_EPOCH]  # updateMemberEpoch: every outcome, also when the epoch stays
    if revoke:
        t[b + M_STATE] = UNREVOKED
        t[b + M_ASSIGNED] = keep
        t[b + M_REVOKING] = revoke
        return
    want = target & ~keep
    free = want & ~held_by_others(P, t, i) if P[P_WAIT] else want
    t[b + M_STATE] = UNRELEASED if want & ~free else STABLE
    t[b + M_EPOCH] = t[H_TEPOCH]
    t[b + M_ASSIGNED] = keep | free
    t[b + M_REVOKING] = 0
    if P[P_FLIGHT]:  # each partition's assignment epoch: kept ones keep theirs, new ones the new epoch
        y = fslot(P, i) + F_SINCE
        for p in range(P[P_K]):
            if (keep | free) >> p & 1:
                if not keep >> p & 1:
                    t[y + p] = t[H_TEPOCH]
            else:
                t[y + p] = 0


@njit(cache=True)
def reconcile(P, t, i, owned, dropped):
    """``Consumer.reconcile`` with the partitions the heartbeat reports (always reported here); ``dropped``: the
    partitions outside the member's subscription when the heartbeat changed it (``changed``), else 0."""
    b = HEADER + i * SLOT
    if t[b + M_LEFT]:
        return
    if t[b + M_STATE] == UNREVOKED:
        if owned & t[b + M_REVOKING]:
            drop = t[b + M_ASSIGNED] & dropped  # dropped topics' partitions to pending revocation at once
            if drop:
                t[b + M_ASSIGNED] &= ~drop
                t[b + M_REVOKING] |= drop
                t[b + M_PREV] = t[b + M_EPOCH]
            return
        t[b + M_REVOKING] = 0
        next_assignment(P, t, i)
        return
    if t[b + M_EPOCH] != t[H_TEPOCH] or t[b + M_STATE] == UNRELEASED:
        next_assignment(P, t, i)


@njit(cache=True)
def handle(P, TM, s, i, t, tk, tv, tq):
    """``Consumer.handle``: the coordinator handles client ``i``'s heartbeat; row ``t`` becomes ``s`` with the
    group after it (no client field is written). Returns the answer (ANS_*; for ANS_OK its epoch and
    assignment are the member's in ``t``), or MISS."""
    t[:] = s
    b = HEADER + i * SLOT
    c_epoch = s[b + C_EPOCH]
    c_topics = s[b + C_TOPICS]
    present = s[b + M_PRESENT] != 0
    if c_epoch == 0 and (not present or s[b + M_LEFT]):
        if present:
            t[b + M_LEFT] = 0  # a static member comes back within its session timeout
        else:
            t[b + M_PRESENT] = 1
            t[b + M_STATE] = STABLE
            t[b + M_EPOCH] = 0
            t[b + M_PREV] = 0
            t[b + M_ASSIGNED] = 0
            t[b + M_REVOKING] = 0
            t[b + M_TOPICS] = c_topics
            t[b + M_STATIC] = P[P_STATIC]
            t[b + M_LEFT] = 0
            clear_since(P, t, i)
            if not bump(P, t, tk, tv, tq):
                return MISS
        if t[b + M_TOPICS] != c_topics:
            t[b + M_TOPICS] = c_topics
            if not bump(P, t, tk, tv, tq):
                return MISS
        reconcile(P, t, i, s[b + C_OWNED], 0)
    elif c_epoch == 0:
        if P[P_STATIC]:
            return ANS_UNRELEASED  # its instance id is held by a member that has not left: fatal
        if not P[P_K19233] and s[b + M_EPOCH] != 0 and s[b + M_PREV] != 0:
            return ANS_FENCED  # before KAFKA-19233 epoch 0 was validated as any other epoch
        # no epoch check; the subscription is taken from the request as in any other heartbeat
    else:
        if not present or s[b + M_LEFT]:
            return ANS_UNKNOWN
        if c_epoch != s[b + M_EPOCH] and not (c_epoch == s[b + M_PREV] and (
                not P[P_PREV_SUBSET] or s[b + C_OWNED] & ~s[b + M_ASSIGNED] == 0)):
            if not P[P_KEEPS_RECORD]:
                if not remove(P, t, i, tk, tv, tq):
                    return MISS
            return ANS_FENCED
    if c_epoch != 0 or (present and not s[b + M_LEFT]):  # ``Consumer._subscribe``
        dropped = 0
        if t[b + M_TOPICS] != c_topics:
            t[b + M_TOPICS] = c_topics
            if not bump(P, t, tk, tv, tq):
                return MISS
            dropped = ~subscribed(TM, c_topics, -1)
        reconcile(P, t, i, s[b + C_OWNED], dropped)
    return ANS_OK


@njit(cache=True, inline="always")
def _clear_flight_client(P, t, i):
    """The client's answer and OffsetCommit on their way: none."""
    if P[P_FLIGHT]:
        y = fslot(P, i)
        for f in range(F_SINCE):
            t[y + f] = 0


@njit(cache=True)
def apply_answer(P, t, i, code, epoch, assigned):
    """``Consumer.apply_answer``: client ``i`` of row ``t`` applies an answer (in place)."""
    b = HEADER + i * SLOT
    if code == ANS_UNRELEASED:
        t[b + C_PROC] = DOWN  # fatal: the process stops (ConsumerClient(topics=...))
        t[b + C_EPOCH] = -1
        t[b + C_OWNED] = 0
        t[b + C_ASSIGNED] = 0
        _clear_flight_client(P, t, i)
        return
    if code != ANS_OK:
        if code == ANS_FENCED and not P[P_LOSE_ON_FENCE]:
            return  # BROKEN: it keeps its partitions and its epoch
        t[b + C_EPOCH] = 0  # onPartitionsLost, rejoin with epoch 0
        t[b + C_OWNED] = 0
        t[b + C_ASSIGNED] = 0
        return
    t[b + C_EPOCH] = epoch
    t[b + C_ASSIGNED] = assigned
    owned = t[b + C_OWNED]
    if not owned & ~assigned and assigned & ~owned:
        t[b + C_OWNED] = assigned  # nothing to revoke: onPartitionsAssigned on the answer


@njit(cache=True)
def heartbeat(P, TM, s, i, t, tk, tv, tq):
    """``Consumer.heartbeat``: row ``t`` becomes ``s`` after client ``i``'s heartbeat. False on MISS."""
    code = handle(P, TM, s, i, t, tk, tv, tq)
    if code == MISS:
        return False
    b = HEADER + i * SLOT
    apply_answer(P, t, i, code, t[b + M_EPOCH], t[b + M_ASSIGNED])
    return True


@njit(cache=True, inline="always")
def _fresh_client(P, t, i, b, proc, epoch):
    """``ConsumerClient(proc=..., epoch=..., topics=<kept>)``."""
    t[b + C_PROC] = proc
    t[b + C_EPOCH] = epoch
    t[b + C_OWNED] = 0
    t[b + C_ASSIGNED] = 0
    _clear_flight_client(P, t, i)


@njit(cache=True, inline="always")
def _differs(s, t):
    for f in range(s.shape[0]):
        if t[f] != s[f]:
            return True
    return False


@njit(cache=True)
def flight_successors(P, TM, s, i, out, acts, ns, spend, tk, tv, tq):
    """``ConsumerFlight.flight_successors``: the steps of client ``i`` that the in-flight faults add, written
    from ``out[ns]`` on; the new ``ns``, or MISS."""
    faults = P[P_FAULTS]
    b = HEADER + i * SLOT
    y = fslot(P, i)
    proc = s[b + C_PROC]
    c_epoch = s[b + C_EPOCH]
    if s[y + F_ANS] and proc == UP:
        t = out[ns]
        t[:] = s
        for f in range(F_COM):
            t[y + f] = 0
        apply_answer(P, t, i, ANS_OK, s[y + F_ANS_EPOCH], s[y + F_ANS_ASSIGNED])
        acts[ns] = RECEIVE_ANSWER * 8 + i
        ns += 1
    if s[y + F_COM]:
        t = out[ns]
        t[:] = s
        for f in range(F_COM, F_SINCE):
            t[y + f] = 0
        acts[ns] = DELIVER_COMMIT * 8 + i
        ns += 1
    if not spend:
        return ns
    lose = faults & F_LOSE_ANSWER
    late = faults & F_LATE_ANSWER
    if proc == UP and c_epoch >= 0 and not s[y + F_ANS] and (lose or late):
        t = out[ns]
        code = handle(P, TM, s, i, t, tk, tv, tq)
        if code == MISS:
            return MISS
        if code == ANS_OK and _differs(s, t):
            t[H_BUDGET] -= 1
            if lose:
                acts[ns] = LOSE_ANSWER * 8 + i
                if late:
                    out[ns + 1, :] = t
                ns += 1
            if late:
                t = out[ns]
                t[y + F_ANS] = 1
                t[y + F_ANS_EPOCH] = t[b + M_EPOCH]
                t[y + F_ANS_ASSIGNED] = t[b + M_ASSIGNED]
                acts[ns] = DELAY_ANSWER * 8 + i
                ns += 1
    if faults & F_LATE_COMMIT and proc == UP and c_epoch > 0 and s[b + C_OWNED] and not s[y + F_COM]:
        t = out[ns]
        t[:] = s
        t[y + F_COM] = 1
        t[y + F_COM_EPOCH] = c_epoch
        t[y + F_COM_PARTS] = s[b + C_OWNED]
        t[H_BUDGET] -= 1
        acts[ns] = SEND_COMMIT * 8 + i
        ns += 1
    if (faults & F_EARLY_RESTART and P[P_STATIC] and proc == DOWN and s[b + M_PRESENT]
            and not s[b + M_LEFT]):
        t = out[ns]
        t[:] = s
        t[b + C_PROC] = UP
        t[b + C_EPOCH] = 0
        t[b + C_OWNED] = 0
        t[b + C_ASSIGNED] = 0
        t[H_BUDGET] -= 1
        acts[ns] = EARLY_RESTART * 8 + i
        ns += 1
    return ns


@njit(cache=True)
def successors(P, TM, s, out, acts, tk, tv, tq):
    """``Consumer.successors``: the enabled actions and their states, in the model's order; MISS if a
    step needs a target the table does not hold (nothing of ``out`` is then meaningful)."""
    n = P[P_N]
    faults = P[P_FAULTS]
    flight = P[P_FLIGHT] != 0
    spend = s[H_BUDGET] > 0
    ns = 0
    for i in range(n):
        b = HEADER + i * SLOT
        proc = s[b + C_PROC]
        present = s[b + M_PRESENT] != 0
        left = s[b + M_LEFT] != 0
        c_epoch = s[b + C_EPOCH]
        waiting = False  # an answer on its way (late-answer): no other heartbeat meanwhile
        if flight:
            ns = flight_successors(P, TM, s, i, out, acts, ns, spend, tk, tv, tq)
            if ns < 0:
                return MISS
            waiting = s[fslot(P, i) + F_ANS] != 0
        if proc == UP:
            if c_epoch >= 0 and not waiting:
                t = out[ns]
                if not heartbeat(P, TM, s, i, t, tk, tv, tq):
                    return MISS
                if _differs(s, t):
                    acts[ns] = HB * 8 + i
                    ns += 1
            if s[b + C_OWNED] & ~s[b + C_ASSIGNED]:
                t = out[ns]
                t[:] = s
                t[b + C_OWNED] = s[b + C_OWNED] & s[b + C_ASSIGNED]
                acts[ns] = REVOKE * 8 + i
                ns += 1
        elif proc == PAUSED:
            t = out[ns]
            t[:] = s
            t[b + C_PROC] = UP
            acts[ns] = RESUME * 8 + i
            ns += 1
        if present and proc != UP:
            t = out[ns]
            t[:] = s
            if not remove(P, t, i, tk, tv, tq):
                return MISS
            acts[ns] = EXPIRED * 8 + i
            ns += 1
        if present and proc == PAUSED and s[b + M_STATE] == UNREVOKED:
            t = out[ns]
            t[:] = s
            if not remove(P, t, i, tk, tv, tq):
                return MISS
            acts[ns] = RTFENCE * 8 + i
            ns += 1
        if not spend:
            continue
        if faults & F_JOIN and proc == DOWN and (not present or (P[P_STATIC] and left)):
            t = out[ns]
            t[:] = s
            _fresh_client(P, t, i, b, UP, 0)
            t[H_BUDGET] -= 1
            acts[ns] = START * 8 + i
            ns += 1
        if faults & F_LEAVE and proc == UP and c_epoch > 0 and present and not left:
            t = out[ns]
            t[:] = s
            if P[P_STATIC]:  # kept at epoch -2, nothing pending revocation, assignment epochs reset to 0
                t[b + M_LEFT] = 1
                t[b + M_REVOKING] = 0
                clear_since(P, t, i)
            elif not remove(P, t, i, tk, tv, tq):
                return MISS
            _fresh_client(P, t, i, b, DOWN, -1)
            t[H_BUDGET] -= 1
            acts[ns] = LEAVE * 8 + i
            ns += 1
        if faults & F_CRASH and proc != DOWN:
            t = out[ns]
            t[:] = s
            _fresh_client(P, t, i, b, DOWN, -1)
            t[H_BUDGET] -= 1
            acts[ns] = CRASH * 8 + i
            ns += 1
        if faults & F_TIMEOUT and proc == UP and present and not left:  # any epoch (model/consumer.py)
            t = out[ns]
            t[:] = s
            if not remove(P, t, i, tk, tv, tq):
                return MISS
            t[H_BUDGET] -= 1
            acts[ns] = EXPIRE_LIVE * 8 + i
            ns += 1
        if faults & F_ZOMBIE and proc == UP:  # any epoch, a joining process too
            t = out[ns]
            t[:] = s
            t[b + C_PROC] = PAUSED
            t[H_BUDGET] -= 1
            acts[ns] = PAUSE * 8 + i
            ns += 1
        if faults & F_SUBSCRIPTION and proc == UP and P[P_T] > 1:
            t = out[ns]
            t[:] = s
            t[b + C_TOPICS] = s[b + C_TOPICS] ^ (1 << (P[P_T] - 1))
            t[H_BUDGET] -= 1
            acts[ns] = CHANGE_SUB * 8 + i
            ns += 1
    if spend and faults & F_PARTITIONS:
        missing = ((1 << P[P_K]) - 1) & ~s[H_PARTS]
        if missing:
            t = out[ns]
            t[:] = s
            t[H_PARTS] = s[H_PARTS] | (missing & -missing)
            anyone = False
            for i in range(n):
                if s[HEADER + i * SLOT + M_PRESENT]:
                    anyone = True
            if anyone and not bump(P, t, tk, tv, tq):
                return MISS
            t[H_BUDGET] -= 1
            acts[ns] = ADD_PART * 8
            ns += 1
    return ns


# -- what the properties ask ---------------------------------------------------------------------------
@njit(cache=True, inline="always")
def live_member(s, b):
    return s[b + C_PROC] != DOWN and s[b + C_EPOCH] > 0 and s[b + M_PRESENT] != 0 and s[b + M_LEFT] == 0


@njit(cache=True)
def exclusive_ownership_ok(P, s):
    seen = 0
    for i in range(P[P_N]):
        b = HEADER + i * SLOT
        owned = s[b + C_OWNED]
        if owned and live_member(s, b):
            if seen & owned:
                return False
            seen |= owned
    return True


@njit(cache=True)
def commit_accepted(P, s, i, epoch, parts):
    """``Consumer.commit_answer`` is OK: ``ConsumerGroup.validateOffsetCommit`` for an OffsetCommit of ``parts``
    from member ``i`` with ``epoch``."""
    if not P[P_FENCE]:
        return True
    b = HEADER + i * SLOT
    if s[b + M_PRESENT] == 0 or s[b + M_LEFT]:
        return False  # UNKNOWN_MEMBER_ID
    if not P[P_EPOCH_FENCE]:
        return True  # BROKEN: any epoch
    me = s[b + M_EPOCH]
    if epoch == me:
        return True
    if epoch > me or not P[P_KIP1251] or not P[P_FLIGHT]:  # (``Member.since`` is kept with the in-flight faults only)
        return False  # STALE_MEMBER_EPOCH
    if parts & ~(s[b + M_ASSIGNED] | s[b + M_REVOKING]):
        return False
    y = fslot(P, i) + F_SINCE
    for p in range(P[P_K]):
        if parts >> p & 1 and s[y + p] > epoch:
            return False
    return True


@njit(cache=True)
def _commit_ok(P, s, i, epoch, parts, late):
    """One commit of ``Consumer.commit_violation``: rejected, or accepted and harmless."""
    if not commit_accepted(P, s, i, epoch, parts):
        return True
    b = HEADER + i * SLOT
    if s[b + M_PRESENT] == 0 or s[b + M_LEFT] or (not late and not live_member(s, b)):
        return False
    if epoch > s[b + M_EPOCH]:
        return False
    if parts & ~(s[b + M_ASSIGNED] | s[b + M_REVOKING]):
        return False
    for k in range(P[P_N]):
        bk = HEADER + k * SLOT
        if k != i and s[bk + C_OWNED] & parts and live_member(s, bk):
            return False
    return True


@njit(cache=True)
def commit_fencing_ok(P, s):
    """``Consumer.commit_violation`` is None: every running client's commit now, and every commit in flight."""
    for i in range(P[P_N]):
        b = HEADER + i * SLOT
        owned = s[b + C_OWNED]
        if s[b + C_PROC] == UP and owned and not _commit_ok(P, s, i, s[b + C_EPOCH], owned, False):
            return False
        if P[P_FLIGHT]:
            y = fslot(P, i)
            if s[y + F_COM] and not _commit_ok(P, s, i, s[y + F_COM_EPOCH], s[y + F_COM_PARTS], True):
                return False
    return True


@njit(cache=True)
def generation_ok(P, s, t):
    """``Consumer.generation_violation`` is None."""
    if t[H_EPOCH] < s[H_EPOCH] or t[H_EPOCH] > s[H_EPOCH] + 1:
        return False
    if t[H_TEPOCH] < s[H_TEPOCH] or t[H_TEPOCH] > t[H_EPOCH]:
        return False
    for i in range(P[P_N]):
        b = HEADER + i * SLOT
        if s[b + M_PRESENT] and t[b + M_PRESENT] and t[b + M_EPOCH] < s[b + M_EPOCH]:
            return False
        if t[b + M_PRESENT] and t[b + M_EPOCH] > t[H_TEPOCH]:
            return False
        if t[b + C_EPOCH] > 0 and t[b + C_EPOCH] < s[b + C_EPOCH]:
            return False
        if t[b + C_EPOCH] > t[H_EPOCH]:
            return False
    return True


@njit(cache=True)
def members_in_group(P, s):
    k = 0
    for i in range(P[P_N]):
        if s[HEADER + i * SLOT + M_PRESENT]:
            k += 1
    return k


@njit(cache=True)
def subscribed(TM, topics, existing):
    m = 0
    for x in range(TM.shape[0]):
        if topics >> x & 1:
            m |= TM[x]
    return m & existing


@njit(cache=True)
def converged(P, TM, s, tk, tv, tq):
    """``Consumer.converged``: 1 or 0, or MISS when the assignor's answer is not in the table yet."""
    wanted = 0
    assigned = 0
    for i in range(P[P_N]):
        b = HEADER + i * SLOT
        proc = s[b + C_PROC]
        if proc == PAUSED:
            return 0
        if proc == DOWN:
            if s[b + M_PRESENT]:
                return 0
            continue
        if not s[b + M_PRESENT] or s[b + M_LEFT] or s[b + M_STATE] != STABLE or s[b + M_REVOKING]:
            return 0
        if s[b + M_EPOCH] != s[H_TEPOCH] or s[b + C_EPOCH] != s[b + M_EPOCH] or s[H_TEPOCH] != s[H_EPOCH]:
            return 0
        ra = s[b + M_ASSIGNED]
        if ra != s[b + T_TARGET] or s[b + C_OWNED] != ra or s[b + C_ASSIGNED] != ra or s[b + C_TOPICS] != s[b + M_TOPICS]:
            return 0
        sub = subscribed(TM, s[b + M_TOPICS], s[H_PARTS])
        if ra & ~sub or ra & assigned:
            return 0
        assigned |= ra
        wanted |= sub
    if assigned != wanted:
        return 0
    x = lookup_target(P, s, tk, tv, tq)
    if x < 0:
        return MISS
    for i in range(P[P_N]):
        if tv[x, i] != s[HEADER + i * SLOT + T_TARGET]:
            return 0
    return 1
