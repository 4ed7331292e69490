"""The compiled engine's lean state store: fingerprints, parent pointers and compact edge arrays.

Theory of operation
-------------------
The search (``search.py``, one for every family) is the reference explorer's breadth-first search (same successor order, same keys, same
first-found representative per key), but nothing is kept per state that can be recomputed:

* **Seen set.** A state's symmetry-reduced key (``kernel.key_vector`` packed into 64-bit words) is
  reduced to a 96-bit fingerprint (two independent 64/32-bit hashes of the packed words), stored
  densely by state id (``fpq``: three 32-bit words per state, one record). An open-addressing index of 32-bit state ids (``table``,
  linear probing, sized by multiply-shift so it can grow by any factor) finds a fingerprint's id. As in
  TLC, two different keys with the same fingerprint would be merged; the probability of that happening
  anywhere in a search of ``n`` states is about ``n**2 / 2**97`` and is reported
  (:func:`collision_probability`).
* **Parent pointers.** Per state: its parent's id (int32) and the action taken (uint8), and one byte
  of flags (converged). A state's row is *not* stored: ``search.reconstruct`` rebuilds it by re-running
  the compiled steps from the initial state along the parent chain (the stored representative of a key
  is the one the search expanded, so the chain reproduces it exactly), and every counterexample is then
  replayed again with the model's own ``step`` by the explorer.
* **Frontier.** The rows waiting to be expanded live in fixed-size segments, in state-id order; the
  search reads the oldest and appends to the newest. Segments beyond a memory budget are written to a
  temporary directory and read back when their turn comes (``Frontier``).
* **Graph.** Per expanded state: the number of its protocol-step (fair) edges (uint8); per fair edge:
  the target id (int32) and the action (uint8), in expansion order, so the edges of state ``v`` are
  ``offs[v]:offs[v+1]`` of the cumulative out-degrees. The first deadlock and the first step out of
  convergence are found during the search; the livelock and bound analysis runs on these arrays
  (Kahn's order in compiled code first; only when non-converged cycles exist, scipy's strongly
  connected components on the part of the graph Kahn's order could not remove).

Once the store outgrows the processor's caches, a lookup's two reads (the index slot, then that id's record)
are cache misses. The searches compute a state's successors' fingerprints first and issue the reads ahead
(:func:`prefetch_slot`, :func:`prefetch_record`; ``search.merge``, which knows its whole job, 16 and 8 lookups
ahead), so the misses overlap instead of queueing; the lookups themselves then run in the same order as before.

Every growing array is enlarged in place (``ndarray.resize``: the C library remaps large blocks
without copying them), by a quarter at a time, so the memory held stays close to what is used; the
fingerprint index is rebuilt from the dense fingerprints instead of copied, so the old and new index
never coexist.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections import deque

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from . import kernel as K

# ctl: the search's counters (the first CT_LEN are kernel.CT_*, with the same meanings)
L_IPOS = K.CT_LEN  # next row to expand in the input segment
L_ILEN = K.CT_LEN + 1  # rows in the input segment
L_OLEN = K.CT_LEN + 2  # rows written to the output segment
L_DEAD = K.CT_LEN + 3  # first non-converged state with no protocol step, or -1
L_LEAVE = K.CT_LEN + 4  # first converged state with a protocol step to a non-converged one, or -1
L_LEN = K.CT_LEN + 5

CONV = np.uint8(1)
GRAPH_AHEAD = 8  # longest_to_convergence: states visited ahead whose reads are prefetched (in three steps)

DONE, GROW, CHUNK_DONE, LIMIT, OUT_FULL, IN_EMPTY = 0, 1, 2, 3, 4, 5


def new_ctl() -> np.ndarray:
    ctl = np.zeros(L_LEN, np.int64)
    for f in (K.CT_EXCL, K.CT_FENCE, K.CT_GEN, K.CT_SOMETIMES, L_DEAD, L_LEAVE):
        ctl[f] = -1
    return ctl


def collision_probability(states: int) -> float:
    """Probability that two of ``states`` distinct keys share a 96-bit fingerprint (birthday bound)."""
    return min(1.0, states * (states - 1) / 2.0 / 2.0**96)


@intrinsic
def borrow(typingctx, arr):
    """``arr`` itself, without its reference count: a view whose meminfo is null, so that numba's ``NRT_incref``
    and ``NRT_decref`` on it (one atomic add each time it is passed to a function or sliced) return at once.

    NOTE(numba-refcount): numba counts references to every array it passes, slices or returns, with an atomic add on
    the array's meminfo; in the search's inner loop that was about a fifth of all cycles (perf, docs/scale.md), and
    with two threads the adds to the shared arrays' counts bounce one cache line between the cores. The caller must
    keep ``arr`` alive while the borrowed view is used: borrow only arguments (the Python caller holds them) or
    arrays the function keeps using after the borrowed view's last use."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        out = context.make_array(sig.return_type)(context, builder)
        cgutils.copy_struct(out, ary)
        out.meminfo = cgutils.get_null_value(out.meminfo.type)
        out.parent = cgutils.get_null_value(out.parent.type)
        return out._getvalue()

    return arr(arr), codegen


@intrinsic
def prefetch(typingctx, arr, i):
    """Ask the processor to bring ``arr[i]`` (a 1-D array) or ``arr[i, 0]`` (2-D) into its caches; no effect otherwise.

    The seen set's two reads per lookup (``table`` at a hashed slot, then that id's row of ``fpq``) are cache misses
    once the store outgrows the caches; issued a few lookups ahead, they overlap instead of queueing. ``i`` must be
    in range (it is not checked: a prefetch of a bad address is harmless, but the index arithmetic is not)."""
    if not isinstance(arr, types.Array) or arr.ndim not in (1, 2) or not isinstance(i, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        aryty, ity = sig.args
        ary = context.make_array(aryty)(context, builder, args[0])
        idx = context.cast(builder, args[1], ity, types.intp)
        inds = [idx] if aryty.ndim == 1 else [idx, context.get_constant(types.intp, 0)]
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, inds, wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])  # read, keep in all levels, data
        return context.get_dummy_value()

    return types.none(arr, i), codegen


@njit(cache=True, inline="always")
def prefetch_slot(table, h):
    """Prefetch the slot of ``table`` where the lookup of fingerprint ``h`` starts."""
    prefetch(table, _slot(h, table.shape[0]))


@njit(cache=True, inline="always")
def prefetch_record(table, fpq, h):
    """Prefetch the fingerprint record of the id in the slot where the lookup of ``h`` starts (its second read)."""
    v = table[_slot(h, table.shape[0])]
    if v >= 0:
        prefetch(fpq, v)


@njit(cache=True)
def fingerprint(words):
    """Two independent hashes of the packed key: 64 bits (index position and first check) and 32 more."""
    h = np.uint64(0x9E3779B97F4A7C15)
    g = np.uint64(0xC2B2AE3D27D4EB4F)
    for w in range(words.shape[0]):
        x = words[w]
        h ^= x
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
        g += x * np.uint64(0x94D049BB133111EB)
        g ^= g >> np.uint64(29)
        g *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    g ^= g >> np.uint64(32)
    return h, np.uint32(g & np.uint64(0xFFFFFFFF))


@njit(cache=True, inline="always")
def _slot(fp, size):
    return np.int64(((fp >> np.uint64(32)) * np.uint64(size)) >> np.uint64(32))


@njit(cache=True)
def lookup_or_insert(table, fpq, h, q, nid):
    """The id stored under fingerprint (h, q); records ``nid`` under it and returns -1 if there is none.

    ``fpq[v]`` is state ``v``'s fingerprint as three 32-bit words (h's low and high halves, q), one
    12-byte record, so checking a candidate costs one memory access, not one per array."""
    size = table.shape[0]
    s = _slot(h, size)
    lo = np.uint32(h & np.uint64(0xFFFFFFFF))
    hi = np.uint32(h >> np.uint64(32))
    while True:
        v = table[s]
        if v < 0:
            table[s] = nid
            fpq[nid, 0] = lo
            fpq[nid, 1] = hi
            fpq[nid, 2] = q
            return -1
        if fpq[v, 0] == lo and fpq[v, 1] == hi and fpq[v, 2] == q:
            return v
        s += 1
        if s == size:
            s = 0


@njit(cache=True, nogil=True)
def stored_before(table, fpq, h, q, known):
    """The id of fingerprint (h, q) if it is one of the first ``known`` states, else -1; read while another thread
    may be inserting (the parallel search's workers, ``search.expand``). An id is exact: the rows of ``fpq``
    below ``known`` were written before the caller took ``known`` and never change, and an id read from
    ``table`` (one aligned 32-bit word) is either one inserted before or a newer one, which is skipped. A -1
    may be wrong (the state may have been inserted since, or be newer than ``known``): the caller then does
    what it does for a new state."""
    size = table.shape[0]
    s = _slot(h, size)
    lo = np.uint32(h & np.uint64(0xFFFFFFFF))
    hi = np.uint32(h >> np.uint64(32))
    while True:
        v = table[s]
        if v < 0:
            return -1
        if v < known and fpq[v, 0] == lo and fpq[v, 1] == hi and fpq[v, 2] == q:
            return v
        s += 1
        if s == size:
            s = 0


@njit(cache=True)
def rebuild(table, fpq, count):
    """Index the first ``count`` fingerprints in an empty ``table``."""
    table[:] = -1
    size = table.shape[0]
    for v in range(count):
        s = _slot(np.uint64(fpq[v, 1]) << np.uint64(32), size)
        while table[s] >= 0:
            s += 1
            if s == size:
                s = 0
        table[s] = v


def pack_plan(widths: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``kernel.pack`` as a table, one line per packed field of the key vector: (field, word, shift,
    offset, 2**width). :func:`pack_words` with it gives the same words as ``kernel.pack``, without
    the per-field width, offset and word arithmetic."""
    plan = []
    w = used = 0
    for f, wd in enumerate(int(x) for x in widths):
        if wd == 0:
            continue
        off = int(offsets[f]) if f < K.KH else int(offsets[K.KH + (f - K.KH) % K.ROWLEN])
        if used + wd > 64:
            w += 1
            used = 0
        plan.append((f, w, used, off, 1 << wd))
        used += wd
    return np.array(plan, dtype=np.int64)


def plan_words(plan: np.ndarray) -> int:
    """Words of a key packed by ``plan``."""
    return int(plan[-1, 1]) + 1


@njit(cache=True)
def pack_words(kv, plan, words):
    """Pack the key vector into ``words`` by ``plan`` (the words ``kernel.pack`` gives), losslessly."""
    for w in range(words.shape[0]):
        words[w] = 0
    for x in range(plan.shape[0]):
        v = kv[plan[x, 0]] + plan[x, 3]
        if v < 0 or v >= plan[x, 4]:
            raise ValueError("key field out of range")
        words[plan[x, 1]] |= np.uint64(v) << np.uint64(plan[x, 2])


@njit(cache=True)
def longest_to_convergence(count, offs, edst, flags):
    """Kahn's order over the protocol steps among non-converged states, then the longest path of
    protocol steps to a converged state, backwards. Returns (bound, states ordered, non-converged
    states, ``removed``: 1 for each state Kahn's order took — the rest lie on or after a cycle)."""
    indeg = np.zeros(count, np.int32)
    nonconv = 0
    for v in range(count):
        if flags[v] & CONV:
            continue
        nonconv += 1
        for e in range(offs[v], offs[v + 1]):
            t = edst[e]
            if not (flags[t] & CONV):
                indeg[t] += 1
    topo = np.empty(nonconv, np.int32)
    nt = 0
    for v in range(count):
        if not (flags[v] & CONV) and indeg[v] == 0:
            topo[nt] = v
            nt += 1
    q = 0
    d = GRAPH_AHEAD  # both walks below visit states in an order the caches cannot guess: each state's
    while q < nt:  # out-edge range, its edges and their targets' counts are prefetched 3d, 2d and d states ahead
        if q + 3 * d < nt:
            prefetch(offs, topo[q + 3 * d])
        if q + 2 * d < nt:
            prefetch(edst, offs[topo[q + 2 * d]])
        if q + d < nt:
            w = topo[q + d]
            for e in range(offs[w], offs[w + 1]):
                prefetch(indeg, edst[e])
        v = topo[q]
        q += 1
        for e in range(offs[v], offs[v + 1]):
            t = edst[e]
            if not (flags[t] & CONV):
                indeg[t] -= 1
                if indeg[t] == 0:
                    topo[nt] = t
                    nt += 1
    removed = np.zeros(count, np.uint8)
    best_all = 0
    if nt < nonconv:  # cycles: no bound; report what was removed
        for x in range(nt):
            removed[topo[x]] = 1
        return -1, nt, nonconv, removed
    dist = np.zeros(count, np.int32)
    for x in range(nt - 1, -1, -1):
        if x >= 3 * d:
            prefetch(offs, topo[x - 3 * d])
        if x >= 2 * d:
            prefetch(edst, offs[topo[x - 2 * d]])
        if x >= d:
            w = topo[x - d]
            for e in range(offs[w], offs[w + 1]):
                prefetch(dist, edst[e])
        v = topo[x]
        best = 0
        for e in range(offs[v], offs[v + 1]):
            t = edst[e]
            dt = 0 if (flags[t] & CONV) else dist[t]  # (not ``d``: that is the prefetch distance)
            if dt + 1 > best:
                best = dt + 1
        dist[v] = best
        if best > best_all:
            best_all = best
    return best_all, nt, nonconv, removed


@njit(cache=True)
def cyclic_subgraph(count, offs, edst, flags, removed):
    """The protocol-step edges among the non-converged states Kahn's order left (every cycle is there)."""
    m = 0
    for v in range(count):
        if (flags[v] & CONV) or removed[v]:
            continue
        for e in range(offs[v], offs[v + 1]):
            t = edst[e]
            if not (flags[t] & CONV) and not removed[t]:
                m += 1
    src = np.empty(m, np.int64)
    dst = np.empty(m, np.int64)
    m = 0
    for v in range(count):
        if (flags[v] & CONV) or removed[v]:
            continue
        for e in range(offs[v], offs[v + 1]):
            t = edst[e]
            if not (flags[t] & CONV) and not removed[t]:
                src[m] = v
                dst[m] = t
                m += 1
    return src, dst


def grow(a: np.ndarray, size: int) -> np.ndarray:
    """Enlarge ``a`` in place to ``size`` entries (remapped, not copied, by the C library when large)."""
    try:
        a.resize((size,) + a.shape[1:], refcheck=False)
        return a
    except ValueError:  # not the owner of its memory: copy once
        b = np.zeros((size,) + a.shape[1:], a.dtype)
        b[: a.shape[0]] = a
        return b


class Frontier:
    """The rows still to expand, as a FIFO of segments; segments beyond ``budget`` bytes go to disk."""

    def __init__(self, width: int, rows: int, budget: int) -> None:
        self.width, self.rows, self.budget = width, rows, budget
        self.queue: deque[tuple[np.ndarray | None, str | None, int]] = deque()  # (rows, file, length)
        self.in_memory = 0
        self.spilled = 0  # segments written to disk in all
        self.peak_bytes = 0
        self._dir: str | None = None

    def new_segment(self) -> np.ndarray:
        return np.empty((self.rows, self.width), np.int16)

    def hand_over(self, seg: np.ndarray, ctl: np.ndarray) -> np.ndarray:
        """Queue the output segment ``seg`` (the ``ctl[L_OLEN]`` rows written to it) and return a fresh one
        for the search to write to, its row count reset."""
        self.push(seg, int(ctl[L_OLEN]))
        ctl[L_OLEN] = 0
        return self.new_segment()

    def push(self, seg: np.ndarray, length: int) -> None:
        """Queue a filled segment (its first ``length`` rows)."""
        if length == 0:
            return
        if length < seg.shape[0] // 2:
            seg = seg[:length].copy()
        nbytes = seg[:length].nbytes
        if self.queue and self.in_memory + nbytes > self.budget:
            if self._dir is None:
                self._dir = tempfile.mkdtemp(prefix="groupspec-frontier-")
            path = os.path.join(self._dir, f"{self.spilled}.rows")
            seg[:length].tofile(path)
            self.spilled += 1
            self.queue.append((None, path, length))
            return
        self.in_memory += nbytes
        self.peak_bytes = max(self.peak_bytes, self.in_memory)
        self.queue.append((seg, None, length))

    def pop(self) -> tuple[np.ndarray, int] | None:
        if not self.queue:
            return None
        seg, path, length = self.queue.popleft()
        if seg is None:
            assert path is not None
            seg = np.fromfile(path, np.int16).reshape(length, self.width)
            os.unlink(path)
        else:
            self.in_memory -= seg[:length].nbytes
        return seg, length

    def __len__(self) -> int:
        return sum(length for _s, _p, length in self.queue)

    def close(self) -> None:
        self.queue.clear()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
