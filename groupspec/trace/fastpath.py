"""Reading a trace file in blocks through the checker's compiled inner loop (``groupspec.trace.kernel``).

A file is read in blocks of whole lines. While the group of the next lines is *quiet* (see
:meth:`GroupChecker.fast_ready`), its state is moved into the kernel's arrays (:meth:`Tables.load`),
the kernel handles lines until one is not its to handle, and the state is moved back
(:meth:`Tables.store`); that line then goes through :meth:`GroupChecker.feed` as every line did
before. So there is one checker: the kernel is its inner loop for the lines that decide nothing
alone, the Python code the rest, on one state.
"""
from __future__ import annotations

import os
import zlib
from pathlib import Path
from typing import IO, Any

import numpy as np

from .reader import BadTime, TraceReadError, parse_line
from .starved import DEFAULT_SESSION_TIMEOUT_MS

__all__ = ["Tables", "feed_stream", "BLOCK"]

BLOCK = 1 << 22
MIN_FAST = 1 << 20  # a trace shorter than this is read by GroupChecker.feed alone (loading numba costs more)
K: Any = None  # ``groupspec.trace.kernel``, imported on first use: numba is loaded only for traces worth it
_NAMES = 1 << 14  # first sizes of the tables; they double when full, up to the limits
_PARTS = 1 << 16
_MAX_NAMES = 1 << 24
_MAX_PARTS = 1 << 22
_TWO31 = 2147483648


def _drop_stale_cache() -> None:
    """NOTE(numba-cache): numba keys a cached function on its own file only (see
    ``groupspec.checker.compiled.cache``), and ``kernel.run`` inlines ``scan.py``'s reader: when
    ``scan.py`` is newer than the kernel's cache files, remove them (numba then compiles again)."""
    here = Path(__file__).resolve().parent
    try:
        scan = (here / "scan.py").stat().st_mtime
        for f in list((here / "__pycache__").glob("kernel.*.nbi")) + list((here / "__pycache__").glob("kernel.*.nbc")):
            if f.stat().st_mtime < scan:
                f.unlink(missing_ok=True)
    except OSError:
        pass


def _kernel() -> Any:
    global K
    if K is None:
        _drop_stale_cache()
        from . import kernel

        K = kernel
    return K


def enabled() -> bool:
    """The inner loop is on unless ``GROUPSPEC_TRACE_PURE=1`` (the drift test compares both)."""
    return os.environ.get("GROUPSPEC_TRACE_PURE", "") != "1"


class Tables:
    """The kernel's arrays: the interned strings and partitions of one file, and the state of one group."""

    def __init__(self, max_listed: int) -> None:
        self.S = np.zeros(K.S_SIZE, np.int64)
        self.M = np.zeros((_NAMES, K.M_COLS), np.int64)
        self.known = np.zeros(_NAMES, np.int64)
        self.P = np.zeros((_PARTS, K.P_COLS), np.int64)
        self.P[:, K.P_OWNER] = -1
        self.univ = np.zeros(_PARTS, np.int64)
        self.dirty = np.zeros(_PARTS, np.int64)
        self.wrows = np.zeros((max_listed + 1, 3), np.int64)
        self.prows = np.zeros((max_listed + 1, 5), np.int64)
        self.snap_off = np.zeros(1 << 12, np.int64)
        self.snap_pool = np.zeros(1 << 16, np.int64)
        self.ring = np.zeros((K.RING, 3), np.int64)
        self.tmp = np.zeros(K.MAXPARTS, np.int64)
        self.htab = np.full(2 * _NAMES, -1, np.int64)
        self.pool = np.zeros(1 << 20, np.uint8)
        self.pool_off = np.zeros(_NAMES + 2, np.int64)
        self.ptab = np.full(2 * _PARTS, -1, np.int64)
        self.pkey = np.zeros(_PARTS, np.int64)
        # per string: the group (its string id + 3; 2 for lines without a group) in which the member of that
        # name is retired, 1 when retired in more than one group, 0 when in none
        self.RG = np.zeros(_NAMES, np.int64)
        self.rr = np.zeros(_NAMES, np.int64)  # the retire (+id+1) / revive (-(id+1)) log of one run
        self.names: list[str] = []
        self.tps: list[tuple[str, int]] = []
        self.full = False
        self._members_at_load: list[str] = []
        self._events_at_load = 0

    # ------------------------------------------------------------------------------------ interning
    def _sync_names(self) -> None:
        S, pool, off = self.S, self.pool, self.pool_off
        for i in range(len(self.names), int(S[K.S_NNAMES])):
            self.names.append(bytes(pool[off[i]:off[i + 1]]).decode("utf-8"))
        for i in range(len(self.tps), int(S[K.S_NPARTS])):
            key = int(self.pkey[i])
            self.tps.append((self.names[key // _TWO31], key % _TWO31))

    def sid(self, s: str) -> int:
        b = np.frombuffer(s.encode("utf-8"), np.uint8)
        i = K.intern(b, 0, len(b), self.S, self.htab, self.pool, self.pool_off)
        if i < 0:
            raise OverflowError
        self._sync_names()
        return int(i)

    def pid(self, tp: tuple[str, int]) -> int:
        if not 0 <= tp[1] < _TWO31:
            raise OverflowError
        i = K.part_id(self.sid(tp[0]), tp[1], self.S, self.ptab, self.pkey)
        if i < 0:
            raise OverflowError
        self._sync_names()
        return int(i)

    def grow(self) -> bool:
        """A table is full (``ST_FULL``): double the one that is (names or partitions), keeping every
        string, partition and retirement; False when it is already at its limit (the Python code reads on)."""
        S = self.S
        nn, npart = int(S[K.S_NNAMES]), int(S[K.S_NPARTS])
        names_full = (nn + 2 >= self.pool_off.shape[0] - 64 or nn * 2 >= self.htab.shape[0] - 128
                      or self.pool_off[nn] + (1 << 16) > self.pool.shape[0])
        parts_full = npart + 1 >= self.pkey.shape[0] - 64 or npart * 2 >= self.ptab.shape[0] - 128
        if not (names_full or parts_full):
            names_full = parts_full = True  # a table filled up on the line itself: grow both
        if names_full:
            cap = self.M.shape[0] * 2
            if cap > _MAX_NAMES:
                return False

            def more(a: np.ndarray, n: int, fill: int = 0) -> np.ndarray:
                b = np.full((n,) + a.shape[1:], fill, a.dtype)
                b[: a.shape[0]] = a
                return b

            self.M = more(self.M, cap)
            self.known = more(self.known, cap)
            self.RG = more(self.RG, cap)
            self.rr = more(self.rr, cap)
            self.pool_off = more(self.pool_off, cap + 2)
            self.pool = more(self.pool, self.pool.shape[0] * 2)
            self.htab = np.full(2 * cap, -1, np.int64)
            K.rehash_names(self.htab, self.pool, self.pool_off, nn)
        if parts_full:
            cap = self.P.shape[0] * 2
            if cap > _MAX_PARTS:
                return False
            P = np.zeros((cap, K.P_COLS), np.int64)
            P[:, K.P_OWNER] = -1
            P[: self.P.shape[0]] = self.P
            self.P = P
            for name in ("univ", "dirty", "pkey"):
                a = getattr(self, name)
                b = np.zeros(cap, a.dtype)
                b[: a.shape[0]] = a
                setattr(self, name, b)
            self.ptab = np.full(2 * cap, -1, np.int64)
            K.rehash_parts(self.ptab, self.pkey, npart)
        return True

    # ------------------------------------------------------------------------------------ state
    def load(self, g: Any, line: int) -> bool:
        """Move ``g``'s state into the arrays; False (nothing moved) when it does not fit them."""
        if self.full or not g.fast_ready() or not (g.group is None or isinstance(g.group, str)):
            return False
        for _attempt in range(8):
            try:
                return self._load(g, line)
            except OverflowError:
                self._clear()
                if not self.grow():
                    break
        self.full = True
        return False

    def _load(self, g: Any, line: int) -> bool:
        S, M, P = self.S, self.M, self.P
        keep = S[K.S_NNAMES], S[K.S_NPARTS]
        S[:] = 0
        S[K.S_NNAMES], S[K.S_NPARTS], S[K.S_LINE] = keep[0], keep[1], line
        S[K.S_GROUP] = -1 if g.group is None else self.sid(g.group)
        S[K.S_WITHIN], S[K.S_MAXLIST] = g.within_ms, g.max_listed
        S[K.S_HOLD] = g.hold_ms
        S[K.S_STODEF], S[K.S_NWALONE] = DEFAULT_SESSION_TIMEOUT_MS, len(g.waiting_alone)
        n = 0
        for name, m in g.members.items():
            i = self.sid(name)
            self.known[n] = i
            n += 1
            M[i, :] = 0
            M[i, K.M_KNOWN] = 1
            M[i, K.M_ALIVE], M[i, K.M_LEFT], M[i, K.M_FENCED], M[i, K.M_REMOVED] = m.alive, m.left, m.fenced, m.removed
            M[i, K.M_GEN] = m.generation
            if m.last_gen is not None:
                M[i, K.M_LASTGEN], M[i, K.M_LASTGEN_HAS] = m.last_gen, 1
            M[i, K.M_NOWNED] = len(m.owned)
            if m.wait_from is not None:
                M[i, K.M_WAIT], M[i, K.M_WFROM] = 1, m.wait_from
                if m.others_at is not None:
                    M[i, K.M_OHAS], M[i, K.M_OAT] = 1, m.others_at
            M[i, K.M_STO] = m.session_timeout_ms or 0
            M[i, K.M_CONSUMER] = m.consumer
            M[i, K.M_HN] = len(m.gen_hist)
            for k, (at, gen) in enumerate(m.gen_hist):
                M[i, K.M_HTS + k], M[i, K.M_HG + k] = at, gen
            m.waiting = []  # overlaps already reported (a quiet group has none open or pending)
        S[K.S_NKNOWN] = n
        g3 = int(S[K.S_GROUP]) + 3
        RG = self.RG
        if g.retire_log is None:  # the first load: every name retired so far
            log = [(True, name) for name in sorted(g.retired)]
        else:
            log = g.retire_log
        for retired, name in log:
            i = self.sid(name)
            if retired:
                RG[i] = g3 if RG[i] in (0, g3) else 1
            elif RG[i] == g3:
                RG[i] = 0
        g.retire_log = []
        u = 0
        for tp in g.universe:
            p = self.pid(tp)
            self.univ[u] = p
            u += 1
            P[p, K.P_UNIV] = 1
        S[K.S_NUNIV] = u
        for tp, own in g.owners.items():
            for name, gen in own.items():
                p = self.pid(tp)
                P[p, K.P_OWNER], P[p, K.P_GEN] = self.sid(name), gen
        for tp in g.dirty:
            K._dirty(self.pid(tp), S, P, self.dirty)
        for tp, start in g.window_start.items():
            p = self.pid(tp)
            P[p, K.P_WS_HAS], P[p, K.P_WS] = 1, start
        for who in g.cut_by:
            if who is None:
                S[K.S_CUTBY_NONE] = 1
            else:
                M[self.sid(who), K.M_CUTBY] = 1
        for who in g.changers:
            M[self.sid(who), K.M_CHANGER] = 1
        if g.broken is not None:
            S[K.S_BROKEN_HAS], S[K.S_BROKEN_TS] = 1, g.broken[0]
            for who in g.broken[1]:
                M[self.sid(who), K.M_BROKEN] = 1
        S[K.S_ALIVE], S[K.S_NONE] = g.alive, g.n_one
        if g.tick is not None:
            S[K.S_TICK_HAS], S[K.S_TICK] = 1, g.tick
        S[K.S_LAST_TS] = g.last_ts
        if g.first_ts is not None:
            S[K.S_FIRST_HAS], S[K.S_FIRST_TS] = 1, g.first_ts
        S[K.S_ALL_DIRTY], S[K.S_CHANGED], S[K.S_CUT] = g.all_dirty, g.changed, g.cut_pending
        if g.period_from is not None:
            S[K.S_PFROM_HAS], S[K.S_PFROM] = 1, g.period_from
        S[K.S_PNMEM], S[K.S_PSNAP] = len(g.period_members), -1
        if g.conv_at is not None:
            S[K.S_CONV_HAS], S[K.S_CONV] = 1, g.conv_at
        S[K.S_NWIN], S[K.S_NPER], S[K.S_EVENTS] = g.n_windows, g.n_periods, g.events
        S[K.S_WLISTED], S[K.S_PLISTED] = len(g.windows), len(g.periods)
        self.snap_off[0] = 0
        self._members_at_load = g.period_members
        self._events_at_load = g.events
        return True

    def store(self, g: Any, body: bytes) -> int:
        """Move the arrays back into ``g`` (``body``: the block the kernel read, for the timeline ring);
        the number of events the kernel handled."""
        S, M, P, names = self.S, self.M, self.P, self.names
        self._sync_names()
        tp_of = self.tps
        members = g.members
        for k in range(int(S[K.S_NRR])):
            x = int(self.rr[k])
            if x > 0:
                members.pop(names[x - 1], None)
                g.retired.add(names[x - 1])
            else:
                g.retired.discard(names[-x - 1])
        S[K.S_NRR] = 0
        for k in range(int(S[K.S_NKNOWN])):
            i = int(self.known[k])
            name = names[i]
            m = members.get(name)
            if m is None:
                m = g.new_member(name)
            row = M[i]
            m.alive, m.left = bool(row[K.M_ALIVE]), bool(row[K.M_LEFT])
            m.fenced, m.removed = bool(row[K.M_FENCED]), bool(row[K.M_REMOVED])
            m.generation = int(row[K.M_GEN])
            m.last_gen = int(row[K.M_LASTGEN]) if row[K.M_LASTGEN_HAS] else None
            m.owned = {}
            m.wait_from = int(row[K.M_WFROM]) if row[K.M_WAIT] else None
            m.others_at = int(row[K.M_OAT]) if row[K.M_WAIT] and row[K.M_OHAS] else None
            m.session_timeout_ms = int(row[K.M_STO]) or None
            m.consumer = bool(row[K.M_CONSUMER])
            m.gen_hist = tuple((int(row[K.M_HTS + k]), int(row[K.M_HG + k])) for k in range(int(row[K.M_HN])))
        owners: dict[tuple[str, int], dict[str, int]] = {}
        universe: dict[tuple[str, int], None] = {}  # in the kernel's order (GroupChecker.universe, .dirty)
        window_start = {}
        dirty = {tp_of[int(self.dirty[k])]: None for k in range(int(S[K.S_NDIRTY]))}
        for k in range(int(S[K.S_NUNIV])):
            p = int(self.univ[k])
            tp = tp_of[p]
            universe[tp] = None
            row = P[p]
            if row[K.P_OWNER] >= 0:
                name = names[int(row[K.P_OWNER])]
                owners[tp] = {name: int(row[K.P_GEN])}
                members[name].owned[tp] = int(row[K.P_GEN])
            if row[K.P_WS_HAS]:
                window_start[tp] = int(row[K.P_WS])
        g.owners, g.universe, g.window_start, g.dirty = owners, universe, window_start, dirty
        known = [int(self.known[k]) for k in range(int(S[K.S_NKNOWN]))]
        g.leavers = [names[i] for i in known if M[i, K.M_LEFT]]
        cut_by: set[str | None] = {names[i] for i in known if M[i, K.M_CUTBY]}
        if S[K.S_CUTBY_NONE]:
            cut_by.add(None)
        g.cut_by = cut_by
        g.changers = {names[i] for i in known if M[i, K.M_CHANGER]}
        g.waiting_alone = {names[i] for i in known if M[i, K.M_WAIT] and not M[i, K.M_OHAS]}
        g.broken = ((int(S[K.S_BROKEN_TS]), {names[i] for i in known if M[i, K.M_BROKEN]})
                    if S[K.S_BROKEN_HAS] else None)
        g.alive, g.n_one = int(S[K.S_ALIVE]), int(S[K.S_NONE])
        g.tick = int(S[K.S_TICK]) if S[K.S_TICK_HAS] else None
        g.last_ts = int(S[K.S_LAST_TS])
        g.first_ts = int(S[K.S_FIRST_TS]) if S[K.S_FIRST_HAS] else None
        g.all_dirty, g.changed, g.cut_pending = bool(S[K.S_ALL_DIRTY]), bool(S[K.S_CHANGED]), bool(S[K.S_CUT])
        snaps: dict[int, list[str]] = {-1: self._members_at_load}

        def snap(i: int) -> list[str]:
            got = snaps.get(i)
            if got is None:
                a, b = int(self.snap_off[i]), int(self.snap_off[i + 1])
                got = snaps[i] = sorted(names[int(x)] for x in self.snap_pool[a:b])
            return got

        for r in range(int(S[K.S_NWROWS])):
            p, a, b = (int(x) for x in self.wrows[r])
            g.windows.append((tp_of[p][0], tp_of[p][1], a, b, False))
        for r in range(int(S[K.S_NPROWS])):
            a, b, s, ch, cv = (int(x) for x in self.prows[r])
            g.periods.append((a, b, snap(s), cv if ch else None))
        g.n_windows, g.n_periods = int(S[K.S_NWIN]), int(S[K.S_NPER])
        g.period_from = int(S[K.S_PFROM]) if S[K.S_PFROM_HAS] else None
        g.period_members = snap(int(S[K.S_PSNAP]))
        g.conv_at = int(S[K.S_CONV]) if S[K.S_CONV_HAS] else None
        handled = int(S[K.S_EVENTS]) - self._events_at_load
        g.events = int(S[K.S_EVENTS])
        n = int(S[K.S_RINGN])
        for k in range(max(0, n - K.RING), n):
            line, a, b = (int(x) for x in self.ring[k % K.RING])
            ev, _why = parse_line(body[a:b])
            g.ring.append((line, ev))
        self._clear()
        return handled

    def _clear(self) -> None:
        S, M, P = self.S, self.M, self.P
        for k in range(int(S[K.S_NKNOWN])):
            M[int(self.known[k]), :] = 0
        for k in range(int(S[K.S_NUNIV])):
            p = int(self.univ[k])
            P[p, :] = 0
            P[p, K.P_OWNER] = -1
        for k in range(int(S[K.S_NDIRTY])):
            p = int(self.dirty[k])
            P[p, :] = 0
            P[p, K.P_OWNER] = -1
        S[K.S_NKNOWN] = S[K.S_NUNIV] = S[K.S_NDIRTY] = 0

    def run(self, buf: np.ndarray, pos: int) -> tuple[int, int]:
        st, pos = K.run(buf, pos, len(buf), self.S, self.M, self.known, self.P, self.univ, self.dirty, self.wrows,
                        self.prows, self.snap_off, self.snap_pool, self.ring, self.tmp, self.htab, self.pool,
                        self.pool_off, self.ptab, self.pkey, self.RG, self.rr)
        return int(st), int(pos)


def feed_stream(f: IO[bytes], run: Any, path: str) -> int:
    """Feed every line of the open trace ``f`` to ``run`` (a ``checker.Run``), through the kernel when it
    can; the number of events the kernel handled."""
    tables: Tables | None = None
    decided = False
    fast = 0
    skip = backoff = 0
    line = 0
    rem = b""
    want = None  # the group whose lines probably come next
    while True:
        try:
            chunk = f.read(BLOCK)
        except (OSError, EOFError, zlib.error) as e:
            raise TraceReadError(f"{path}: line {line + 1}: cannot read further ({e})") from None
        if not decided:
            decided = True
            if enabled() and len(chunk) >= MIN_FAST:
                _kernel()
                tables = Tables(10_000)
        if chunk:
            data = rem + chunk if rem else chunk
            k = data.rfind(b"\n")
            if k < 0:
                rem = data
                continue
            body, rem = data[: k + 1], data[k + 1:]
        else:
            body, rem = rem, b""
            if not body:
                return fast
        buf = np.frombuffer(body, np.uint8)
        n = len(body)
        pos = 0
        while pos < n:
            if skip:
                skip -= 1
            elif want is not None and tables is not None and tables.load(want, line):
                st, pos = tables.run(buf, pos)
                line = int(tables.S[K.S_LINE])
                got = tables.store(want, body)
                run.events += got
                fast += got
                # a loop that hands back at once costs two moves of the state for nothing: after that,
                # leave the next lines (1, 3, 7 .. 63 of them) to feed() before trying again
                backoff = 0 if got else min(2 * backoff + 1, 63)
                skip = backoff
                if st == K.ST_FULL and not tables.grow():
                    tables.full = True
                if st == K.ST_DONE:
                    break
            nl = body.find(b"\n", pos)
            end = n if nl < 0 else nl + 1
            raw = body[pos:end]
            pos = end
            line += 1
            if raw.strip():
                try:
                    ev, why = parse_line(raw, strict_time=True)
                except BadTime as e:
                    raise TraceReadError(f"{path}: line {line}: {e}") from None
                if ev is None:
                    run.bad_line(line, why)
                else:
                    run.feed(ev, line)
                    want = run._last
        if not chunk:
            return fast
