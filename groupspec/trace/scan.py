"""Reading one trace line from raw bytes, for the checker's compiled inner loop (``groupspec.trace.kernel``).

A restricted JSON reader, compiled with numba: objects of strings without escapes or non-ASCII
bytes, integers, literals and nested values (validated and skipped when not needed). Whatever it does
not read it refuses (the line is then read by ``orjson`` in the checker's Python code), so it never
accepts a line differently from ``orjson``. Strings are interned to small ints in an open-addressing
table keyed by their FNV-1a hash and compared byte by byte; partitions ``(topic id, number)`` to
partition ids. The state vector's slots (``S_*``) are defined here because interning counts in it.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# -- event kinds -------------------------------------------------------------------------------------
K_OTHER = 0
K_COMMIT = 1
K_ASSIGNED = 2
K_REVOKED = 3
K_JOINED = 4
K_LEFT = 5
K_END = 6
K_BAIL = 7  # topic, fenced, lost, removed, subscribed: always the Python code's

# -- scalar slots of the state vector S --------------------------------------------------------------
S_ALIVE = 0
S_NONE = 1
S_NUNIV = 2
S_TICK = 3
S_TICK_HAS = 4
S_LAST_TS = 5
S_FIRST_HAS = 6
S_FIRST_TS = 7
S_ALL_DIRTY = 8
S_CHANGED = 9
S_CUT = 10
S_CUTBY_NONE = 11
S_PFROM_HAS = 12
S_PFROM = 13
S_PNMEM = 14
S_PSNAP = 15
S_CONV_HAS = 16
S_CONV = 17
S_BROKEN_HAS = 18
S_BROKEN_TS = 19
S_NWIN = 20
S_NPER = 21
S_EVENTS = 22
S_WITHIN = 23
S_MAXLIST = 24
S_WLISTED = 25
S_PLISTED = 26
S_NKNOWN = 27
S_NDIRTY = 28
S_GROUP = 29  # the group's string id, -1 for lines without a group
S_NWROWS = 30  # rows written to the window output in this run
S_NPROWS = 31
S_NSNAP = 32  # snapshots written
S_SNAPFILL = 33  # ints used in the snapshot pool
S_RINGN = 34  # lines handled in this run (the last 8 are in the ring)
S_NNAMES = 35  # strings interned
S_NPARTS = 36  # partitions interned
S_LINE = 37  # line number of the last line read
S_STODEF = 38  # the session timeout of a member whose joined line gives none (``starved``)
S_NWALONE = 39  # members waiting for an assignment that have seen no one else assigned yet
S_NRR = 40  # entries in the retire/revive log (members retired at a tick's end, retired names joining again)
S_HOLD = 41  # ms an assignment must stay complete, balanced and unchanged for its next change to cut a period
S_SIZE = 42

RING = 8
MAXPARTS = 4096  # partitions on one line beyond which the line is the Python code's

_FNV = np.uint64(1469598103934665603)
_PRIME = np.uint64(1099511628211)


@njit(cache=True, nogil=True)
def _hash(buf, a, b):
    h = _FNV
    for i in range(a, b):
        h = (h ^ np.uint64(buf[i])) * _PRIME
    return h


@njit(cache=True, nogil=True)
def intern(buf, a, b, S, htab, pool, pool_off):
    """The id of the string ``buf[a:b]`` (added if new); -1 when a table is full."""
    h = _hash(buf, a, b)
    mask = htab.shape[0] - 1
    i = np.int64(h & np.uint64(mask))
    n = b - a
    while True:
        sid = htab[i]
        if sid < 0:
            break
        s0 = pool_off[sid]
        if pool_off[sid + 1] - s0 == n:
            same = True
            for k in range(n):
                if pool[s0 + k] != buf[a + k]:
                    same = False
                    break
            if same:
                return sid
        i = (i + 1) & mask
    nn = S[S_NNAMES]
    if nn + 2 >= pool_off.shape[0] or nn * 2 >= htab.shape[0] or pool_off[nn] + n > pool.shape[0]:
        return -1
    s0 = pool_off[nn]
    for k in range(n):
        pool[s0 + k] = buf[a + k]
    pool_off[nn + 1] = s0 + n
    htab[i] = nn
    S[S_NNAMES] = nn + 1
    return nn


@njit(cache=True, nogil=True)
def rehash_names(htab, pool, pool_off, n):
    """Fill the (new, larger, all -1) ``htab`` with the ``n`` strings interned so far."""
    mask = htab.shape[0] - 1
    for sid in range(n):
        i = np.int64(_hash(pool, pool_off[sid], pool_off[sid + 1]) & np.uint64(mask))
        while htab[i] >= 0:
            i = (i + 1) & mask
        htab[i] = sid


@njit(cache=True, nogil=True)
def rehash_parts(ptab, pkey, n):
    """Fill the (new, larger, all -1) ``ptab`` with the ``n`` partitions interned so far."""
    mask = ptab.shape[0] - 1
    for pid in range(n):
        i = np.int64((np.uint64(pkey[pid]) * np.uint64(11400714819323198485)) >> np.uint64(20)) & mask
        while ptab[i] >= 0:
            i = (i + 1) & mask
        ptab[i] = pid


@njit(cache=True, nogil=True)
def part_id(topic, p, S, ptab, pkey):
    """The id of partition ``(topic id, p)`` (added if new); -1 when the table is full."""
    key = topic * 2147483648 + p
    mask = ptab.shape[0] - 1
    i = np.int64((np.uint64(key) * np.uint64(11400714819323198485)) >> np.uint64(20)) & mask
    while True:
        pid = ptab[i]
        if pid < 0:
            break
        if pkey[pid] == key:
            return pid
        i = (i + 1) & mask
    n = S[S_NPARTS]
    if n + 1 >= pkey.shape[0] or n * 2 >= ptab.shape[0]:
        return -1
    pkey[n] = key
    ptab[i] = n
    S[S_NPARTS] = n + 1
    return n


# ---------------------------------------------------------------------------------------------- parsing
@njit(cache=True, nogil=True)
def skip_ws(buf, i, e):
    while i < e and (buf[i] == 32 or buf[i] == 9 or buf[i] == 13 or buf[i] == 10):
        i += 1
    return i


@njit(cache=True, nogil=True)
def read_string(buf, i, e):
    """``buf[i]`` is a quote: the end of the string's contents, or -1 for one this parser leaves alone."""
    i += 1
    while i < e:
        c = buf[i]
        if c == 34:
            return i
        if c == 92 or c < 32 or c >= 128:
            return -1
        i += 1
    return -1


@njit(cache=True, nogil=True)
def read_number(buf, i, e):
    """A JSON number at ``i``: (end, value, is a plain integer); end -1 when it is not one."""
    j = i
    neg = False
    if j < e and buf[j] == 45:
        neg = True
        j += 1
    if j >= e or buf[j] < 48 or buf[j] > 57:
        return -1, 0, False
    d0 = j
    v = np.int64(0)
    if buf[j] == 48:
        j += 1
    else:
        while j < e and 48 <= buf[j] <= 57:
            if j - d0 < 18:
                v = v * 10 + (buf[j] - 48)
            j += 1
    integer = j - d0 <= 18
    if j < e and buf[j] == 46:
        integer = False
        j += 1
        k = j
        while j < e and 48 <= buf[j] <= 57:
            j += 1
        if j == k:
            return -1, 0, False
    if j < e and (buf[j] == 101 or buf[j] == 69):
        integer = False
        j += 1
        if j < e and (buf[j] == 43 or buf[j] == 45):
            j += 1
        k = j
        while j < e and 48 <= buf[j] <= 57:
            j += 1
        if j == k:
            return -1, 0, False
    return j, -v if neg else v, integer


@njit(cache=True, nogil=True)
def read_literal(buf, i, e):
    c = buf[i]
    if c == 116 and i + 4 <= e and buf[i + 1] == 114 and buf[i + 2] == 117 and buf[i + 3] == 101:
        return i + 4
    if c == 110 and i + 4 <= e and buf[i + 1] == 117 and buf[i + 2] == 108 and buf[i + 3] == 108:
        return i + 4
    if (c == 102 and i + 5 <= e and buf[i + 1] == 97 and buf[i + 2] == 108 and buf[i + 3] == 115
            and buf[i + 4] == 101):
        return i + 5
    return -1


@njit(cache=True, nogil=True)
def skip_value(buf, i, e):
    """Skip one JSON value at ``i`` (after any whitespace, validating it); the position after it, or -1."""
    i = skip_ws(buf, i, e)
    c = buf[i] if i < e else 0
    if c == 34:  # the common case: a string
        j = read_string(buf, i, e)
        return j + 1 if j >= 0 else -1
    if c == 45 or 48 <= c <= 57:
        j, _v, _int = read_number(buf, i, e)
        return j
    if c != 123 and c != 91:
        return read_literal(buf, i, e) if i < e else -1
    return _skip_nested(buf, i, e)


@njit(cache=True, nogil=True)
def _member_key(buf, i, e):
    """At an object member's key: the index past the key string and its colon (whitespace skipped), or -1."""
    if i >= e or buf[i] != 34:
        return -1
    j = read_string(buf, i, e)
    if j < 0:
        return -1
    i = skip_ws(buf, j + 1, e)
    if i >= e or buf[i] != 58:
        return -1
    return i + 1


@njit(cache=True, nogil=True)
def _skip_nested(buf, i, e):
    depth = 0
    stack = np.empty(64, np.uint8)
    while True:
        i = skip_ws(buf, i, e)
        if i >= e:
            return -1
        c = buf[i]
        if c == 123 or c == 91:
            if depth == 64:
                return -1
            stack[depth] = c
            depth += 1
            i = skip_ws(buf, i + 1, e)
            if i < e and buf[i] == (125 if c == 123 else 93):
                depth -= 1
                i += 1
            elif c == 123:
                i = _member_key(buf, i, e)
                if i < 0:
                    return -1
                continue
            else:
                continue
        elif c == 34:
            j = read_string(buf, i, e)
            if j < 0:
                return -1
            i = j + 1
        elif c == 45 or 48 <= c <= 57:
            j, _v, _int = read_number(buf, i, e)
            if j < 0:
                return -1
            i = j
        else:
            i = read_literal(buf, i, e)
            if i < 0:
                return -1
        # after a value: close containers or take the next item
        while True:
            if depth == 0:
                return i
            i = skip_ws(buf, i, e)
            if i >= e:
                return -1
            top = stack[depth - 1]
            if buf[i] == 44:
                i = skip_ws(buf, i + 1, e)
                if top == 123:
                    i = _member_key(buf, i, e)
                    if i < 0:
                        return -1
                break
            if buf[i] == (125 if top == 123 else 93):
                depth -= 1
                i += 1
                continue
            return -1


@njit(cache=True, nogil=True)
def key_is(buf, a, b, word):
    if b - a != len(word):
        return False
    for k in range(b - a):
        if buf[a + k] != word[k]:
            return False
    return True


W_TS = np.frombuffer(b"ts_ms", np.uint8)
W_GROUP = np.frombuffer(b"group", np.uint8)
W_MEMBER = np.frombuffer(b"member", np.uint8)
W_EVENT = np.frombuffer(b"event", np.uint8)
W_PARTS = np.frombuffer(b"partitions", np.uint8)
W_GEN = np.frombuffer(b"generation", np.uint8)
W_PROTO = np.frombuffer(b"protocol", np.uint8)
W_EAGER = np.frombuffer(b"eager", np.uint8)
W_CONSUMER = np.frombuffer(b"consumer", np.uint8)
W_STO = np.frombuffer(b"session_timeout_ms", np.uint8)
W_SENT = np.frombuffer(b"sent_ms", np.uint8)
_KINDS = (
    (np.frombuffer(b"commit", np.uint8), K_COMMIT), (np.frombuffer(b"assigned", np.uint8), K_ASSIGNED),
    (np.frombuffer(b"revoked", np.uint8), K_REVOKED), (np.frombuffer(b"joined", np.uint8), K_JOINED),
    (np.frombuffer(b"left", np.uint8), K_LEFT), (np.frombuffer(b"end", np.uint8), K_END),
    (np.frombuffer(b"topic", np.uint8), K_BAIL), (np.frombuffer(b"fenced", np.uint8), K_BAIL),
    (np.frombuffer(b"lost", np.uint8), K_BAIL), (np.frombuffer(b"removed", np.uint8), K_BAIL),
    (np.frombuffer(b"subscribed", np.uint8), K_BAIL),
)
# a line naming a member's subscription (``topics``): the Python code's (a group with subscriptions stays there)
W_TOPICS = np.frombuffer(b"topics", np.uint8)


@njit(cache=True, nogil=True)
def kind_of(buf, a, b):
    n = b - a
    c = buf[a] if n > 0 else 0
    if c == 99 and key_is(buf, a, b, _KINDS[0][0]):
        return K_COMMIT
    if c == 97 and key_is(buf, a, b, _KINDS[1][0]):
        return K_ASSIGNED
    if c == 114 and key_is(buf, a, b, _KINDS[2][0]):
        return K_REVOKED
    if c == 106 and key_is(buf, a, b, _KINDS[3][0]):
        return K_JOINED
    if c == 108 and key_is(buf, a, b, _KINDS[4][0]):
        return K_LEFT
    if c == 101 and key_is(buf, a, b, _KINDS[5][0]):
        return K_END
    for k in range(6, 11):
        if key_is(buf, a, b, _KINDS[k][0]):
            return K_BAIL
    return K_OTHER


@njit(cache=True, nogil=True)
def read_parts(buf, i, e, S, htab, pool, pool_off, ptab, pkey, out):
    """``partitions`` at ``i`` as partition ids into ``out``: (end, count); end -1 when the value is not
    ``null`` or a list of ``[topic, number, ...]`` this loop reads, count -2 when a table is full."""
    c = buf[i]
    if c == 110:
        j = read_literal(buf, i, e)
        return j, 0 if j >= 0 else -1
    if c != 91:
        return -1, -1
    n = 0
    i = skip_ws(buf, i + 1, e)
    if i < e and buf[i] == 93:
        return i + 1, 0
    while True:
        if i >= e or buf[i] != 91:
            return -1, -1
        i = skip_ws(buf, i + 1, e)
        if i >= e or buf[i] != 34:
            return -1, -1
        j = read_string(buf, i, e)
        if j < 0:
            return -1, -1
        tid = intern(buf, i + 1, j, S, htab, pool, pool_off)
        if tid < 0:
            return -1, -2
        i = skip_ws(buf, j + 1, e)
        if i >= e or buf[i] != 44:
            return -1, -1
        i = skip_ws(buf, i + 1, e)
        j, v, integer = read_number(buf, i, e)
        if j < 0 or not integer or v < 0 or v >= 2147483648:
            return -1, -1
        if n >= out.shape[0]:
            return -1, -1
        pid = part_id(tid, v, S, ptab, pkey)
        if pid < 0:
            return -1, -2
        out[n] = pid
        n += 1
        i = skip_ws(buf, j, e)
        while i < e and buf[i] == 44:  # [topic, number, offset, ...]
            i = skip_value(buf, i + 1, e)
            if i < 0:
                return -1, -1
            i = skip_ws(buf, i, e)
        if i >= e or buf[i] != 93:
            return -1, -1
        i = skip_ws(buf, i + 1, e)
        if i < e and buf[i] == 44:
            i = skip_ws(buf, i + 1, e)
            continue
        if i < e and buf[i] == 93:
            return i + 1, n
        return -1, -1
