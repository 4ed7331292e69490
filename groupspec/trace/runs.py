"""A trace's run through the checker: lines routed to one :class:`GroupChecker` per group, and the results.

This module owns the entry points that read whole traces (:func:`check_events` on a stream of events,
:func:`iter_results` / :func:`check_paths` on files, directories or ``-``), the rule that a file whose
time goes back is read again sorted by time, and the result types (:class:`TraceResult` per trace,
:class:`Report` for all of them, with the JSON of docs/trace-check.md). What a group's events mean is
:mod:`.checker`'s; reading bytes is :mod:`.reader`'s; the compiled inner loop is :mod:`.fastpath`'s.
It imports only those modules of its room and the standard library.
"""
from __future__ import annotations

import heapq
import io
import struct
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from .checker import GroupChecker, Unsorted
from .fastpath import feed_stream
from .reader import BadTime, TraceReadError, load_json, expand_paths, iter_file, open_trace, parse_line, spool_stdin

__all__ = ["TraceResult", "Report", "check_events", "check_paths", "iter_results", "sorted_by_time", "TraceReadError"]


@dataclass
class TraceResult:
    """The verdicts of one trace (a file, or a stream of events)."""

    trace: str
    events: int
    groups: list[GroupChecker]
    defects: list[dict[str, Any]] = field(default_factory=list)  # lines that name no group
    sorted_by_checker: bool = False
    fast_events: int = 0  # events handled by the compiled inner loop (not reported; for tests and the bench)

    @property
    def ok(self) -> bool:
        return not self.defects and all(g.ok for g in self.groups)

    @property
    def members_seen(self) -> int:
        """How many members (distinct names, every group) the trace's events showed taking part; 0: the invariants
        held vacuously (only ``topic``, ``end`` and other lines that name no member: nothing was checked)."""
        return len(set().union(*(g.retired.union(g.members) for g in self.groups)))

    def to_dict(self) -> dict[str, Any]:
        groups = [g.to_dict() for g in self.groups]
        seen = self.members_seen
        out: dict[str, Any] = {"trace": self.trace, "events": self.events, "ok": self.ok, "members_seen": seen,
                               "nothing_checked": seen == 0, "groups": groups}
        if self.defects:
            out["defects"] = list(self.defects)
        if self.sorted_by_checker:
            out["sorted"] = True
        return out


@dataclass
class Report:
    """The verdicts of every trace given to ``groupspec trace check``."""

    traces: list[TraceResult]

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.traces)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "traces": [t.to_dict() for t in self.traces]}


class Run:
    """Routes events to their group's checker; lines that name no group go to the only group if there is one."""

    def __init__(self, source: str, converge_within_s: float, strict: bool, against_model: bool = False) -> None:
        self.source = source
        self.against_model = against_model
        self.within = converge_within_s
        self.strict = strict
        self.groups: dict[Any, GroupChecker] = {}
        self.loose: list[dict[str, Any]] = []
        self.events = 0
        self._last: GroupChecker | None = None
        self.refuse = False  # files: a ts_ms that is no time refuses the file (check_events: a trace defect)

    def group(self, gid: Any) -> GroupChecker:
        g = self._last
        if g is not None and g.group == gid:
            return g
        g = self.groups.get(gid)
        if g is None:
            if gid is not None and not isinstance(gid, str):
                gid = str(gid)
            g = self.groups[gid] = GroupChecker(gid, self.within, self.strict, self.against_model)
            g.refuse_bad_time = self.refuse
        self._last = g
        return g

    def feed(self, ev: dict[str, Any], line: int) -> None:
        self.events += 1
        g = self.group(ev.get("group"))
        try:
            g.feed(ev, line)
        except BadTime as e:  # a file: refused in one line naming it and the line
            raise TraceReadError(f"{self.source}: line {line}: {e}") from None

    def bad_line(self, line: int, message: str) -> None:
        self.events += 1
        self.loose.append({"line": line, "ts_ms": None, "member": None, "message": message})

    def result(self, sorted_: bool = False) -> TraceResult:
        for g in self.groups.values():
            g.finish()
        groups = list(self.groups.values())
        loose = list(self.loose)
        if len(groups) == 1 and loose:
            groups[0].defects = sorted(loose + groups[0].defects, key=lambda d: d["line"] or 0)
            loose = []
        return TraceResult(self.source, self.events, groups, loose, sorted_)


def check_events(events: Iterable[dict[str, Any]], *, source: str = "<events>",
                 converge_within_s: float = 20.0, against_model: bool = False) -> TraceResult:
    """Check a stream of trace events (dicts, in time order; a list is sorted first if it is not).

    Events out of time order in a stream that cannot be read twice are trace defects (read at the
    current time). The ``n``-th event is reported as line ``n``.
    """
    if isinstance(events, list):
        last = None
        unsorted = False
        for e in events:
            ts = e.get("ts_ms") if isinstance(e, dict) else None
            if type(ts) is int:
                if last is not None and ts < last:
                    unsorted = True
                    break
                last = ts
        if unsorted:
            return _check_sorted(list(enumerate(events, 1)), source, converge_within_s, against_model)
    run = Run(source, converge_within_s, strict=False, against_model=against_model)
    for n, ev in enumerate(events, 1):
        if isinstance(ev, dict):
            run.feed(ev, n)
        else:
            run.bad_line(n, f"not a JSON object but {type(ev).__name__}")
    return run.result()


def sorted_by_time(items: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
    """``(line, event)`` pairs in the order the checker reads a trace whose time goes back: by time, then line;
    a line without a time keeps the time of the line before it."""
    keyed = []
    last = -(1 << 62)
    for n, ev in items:
        ts = ev.get("ts_ms") if isinstance(ev, dict) else None
        if type(ts) is int:
            last = ts
        keyed.append((last, n, ev))
    keyed.sort(key=lambda k: (k[0], k[1]))
    return [(n, ev) for _t, n, ev in keyed]


def _check_sorted(items: list[tuple[int, Any]], source: str, within: float, against_model: bool = False) -> TraceResult:
    run = Run(source, within, strict=False, against_model=against_model)
    for n, ev in sorted_by_time(items):
        if isinstance(ev, dict):
            run.feed(ev, n)
        elif isinstance(ev, str):
            run.bad_line(n, ev)
        else:
            run.bad_line(n, f"not a JSON object but {type(ev).__name__}")
    return run.result(sorted_=True)


def _check_file(path: str, within: float, stdin_copy: IO[bytes] | None, against_model: bool = False) -> TraceResult:
    name = path
    run = Run(name, within, strict=True, against_model=against_model)
    run.refuse = True
    try:
        with open_trace(path, stdin_copy) as f:
            fast = feed_stream(f, run, path)
        if run.events == 0:
            raise TraceReadError(f"{path}: empty trace: no events (nothing to check)")
        _refuse_a_file_that_is_no_trace(run, path)
        res = run.result()
        res.fast_events = fast
        return res
    except Unsorted:
        pass
    run = Run(name, within, strict=False, against_model=against_model)
    run.refuse = True
    for n, raw in spill_sorted(iter_file(path, stdin_copy)):
        try:
            ev, why = parse_line(raw, strict_time=True)
        except BadTime as e:
            raise TraceReadError(f"{path}: line {n}: {e}") from None
        if ev is None:
            run.bad_line(n, why or "")
        else:
            run.feed(ev, n)
    _refuse_a_file_that_is_no_trace(run, path)
    return run.result(sorted_=True)


def _refuse_a_file_that_is_no_trace(run: Run, path: str) -> None:
    """A file none of whose lines is an event (the wrong file given, a CSV, a log) is bad input, not a trace
    with defects: refused in one line naming it and its first line's fault."""
    if not run.groups and run.loose and len(run.loose) == run.events:
        first = min(run.loose, key=lambda d: d["line"] or 0)
        raise TraceReadError(f"{path}: not a trace: none of its {run.events:,} line(s) is a JSON event "
                             f"(line {first['line']}: {first['message']})")


# An unsorted file is sorted in runs of about this many bytes of memory (the lines and their keys),
# each spilled to a temporary file, then merged: memory stays bounded whatever the file's size.
SORT_MEMORY = 64 << 20
_PER_LINE = 160  # bytes of Python objects per line held in a run, besides the line itself
_REC = struct.Struct("<qqI")


def spill_sorted(lines: Iterable[tuple[int, bytes]], memory: int | None = None) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw line)`` in the order the checker reads a trace whose time goes back (by time,
    then line; a line without an integer ``ts_ms`` keeps the time of the line before it, as
    :func:`sorted_by_time`), sorted within bounded memory: runs of at most ``memory`` bytes are sorted
    and spilled to temporary files, which are then merged."""
    limit = SORT_MEMORY if memory is None else memory
    runs: list[IO[bytes]] = []
    buf: list[tuple[int, int, bytes]] = []
    size = 0
    last = -(1 << 62)
    try:
        for n, raw in lines:
            try:
                ev = load_json(raw)
                ts = ev.get("ts_ms") if isinstance(ev, dict) else None
            except ValueError:
                ts = None
            if type(ts) is int and -(1 << 62) < ts < (1 << 62):
                last = ts
            buf.append((last, n, raw))
            size += len(raw) + _PER_LINE
            if size >= limit:
                runs.append(_spill(buf))
                buf, size = [], 0
        buf.sort()
        if not runs:
            yield from ((n, raw) for _t, n, raw in buf)
            return
        if buf:
            runs.append(_spill(buf))
            buf = []
        for _t, n, raw in heapq.merge(*(_read_run(f) for f in runs)):
            yield n, raw
    finally:
        for f in runs:
            f.close()


def _spill(buf: list[tuple[int, int, bytes]]) -> IO[bytes]:
    buf.sort()
    f = tempfile.TemporaryFile()
    w = f.write
    for ts, n, raw in buf:
        w(_REC.pack(ts, n, len(raw)))
        w(raw)
    f.seek(0)
    return f


def _read_run(f: IO[bytes]) -> Iterator[tuple[int, int, bytes]]:
    r = io.BufferedReader(f, 1 << 20) if not isinstance(f, io.BufferedReader) else f  # type: ignore[type-var]
    size = _REC.size
    while True:
        head = r.read(size)
        if len(head) < size:
            return
        ts, n, k = _REC.unpack(head)
        yield ts, n, r.read(k)


def iter_results(paths: list[str], converge_within_s: float = 20.0, against_model: bool = False) -> Iterator[TraceResult]:
    """One :class:`TraceResult` per trace file (after expanding directories); raises :class:`TraceReadError`."""
    files = expand_paths(list(paths))
    stdin_copy = spool_stdin() if "-" in files else None
    try:
        for f in files:
            yield _check_file(f, converge_within_s, stdin_copy, against_model)
    finally:
        if stdin_copy is not None:
            stdin_copy.close()


def check_paths(paths: Iterable[str], *, converge_within_s: float = 20.0, against_model: bool = False) -> Report:
    """Check trace files / directories / ``-``; raises :class:`TraceReadError` if one cannot be read at all."""
    return Report(list(iter_results(list(paths), converge_within_s, against_model)))

