"""Reading traces: files (``.jsonl``, ``.jsonl.gz``), directories of them, and ``-`` for standard input.

Lines are read one at a time (a gzip file is decompressed as a stream), so memory does not grow
with a trace's length; a UTF-8 byte order mark at the start of a file (or of its decompressed bytes) is
skipped. A line that is not a JSON object is not an error here: it is handed on as a *defect* with its
line number, and the checker reports it as a trace defect. Only a file that cannot
be read at all (missing, not gzip although named ``.gz``, a directory without traces) raises
:class:`TraceReadError`, whose message names the file (and the line, when reading broke off midway).
"""
from __future__ import annotations

import gzip
import os
import re
import shutil
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

load_json: Callable[[bytes | str], Any]

try:  # a faster JSON parser when installed (the project depends on it; plain json otherwise)
    import orjson as _orjson

    load_json = _orjson.loads
    _JSONError: tuple[type[Exception], ...] = (_orjson.JSONDecodeError, UnicodeDecodeError)
except ImportError:  # pragma: no cover - orjson is a dependency
    import json as _json

    load_json = _json.loads
    _JSONError = (ValueError, UnicodeDecodeError)

__all__ = ["TraceReadError", "BadTime", "MAX_TS", "MAX_TOPIC_PARTITIONS", "check_ts", "expand_paths", "iter_file", "open_trace", "parse_line", "spool_stdin", "TRACE_SUFFIXES"]

TRACE_SUFFIXES = (".jsonl", ".jsonl.gz")


class TraceReadError(Exception):
    """A trace that cannot be read at all; the message names the file (and line)."""


class BadTime(ValueError):
    """A ``ts_ms`` that is no time at all (negative, not finite, beyond ``MAX_TS``): the file is refused."""


# The largest ts_ms accepted: 2**53 - 1 ms (about 285,000 years after the epoch; the largest integer a
# JSON reader that uses doubles still holds exactly). Anything beyond, negative, NaN or infinite is no time.
MAX_TS = (1 << 53) - 1
# The most partitions a `topic` line may give a topic: the checker keeps every partition of every topic, so a
# count beyond this (a typo, 10^11) is a trace defect, not an allocation that runs out of memory.
MAX_TOPIC_PARTITIONS = 1_000_000
_NONFINITE = re.compile(rb'"ts_ms"\s*:\s*-?(NaN|Infinity)')
# The JSON parser's place in its text ("line 2 column 1 (char 26)"): of the one trace line it was given, so its
# "line" (a newline inside the text) only confuses the trace's own line number; the column is the char + 1.
_PARSER_PLACE = re.compile(r":? line \d+ column \d+ \(char (\d+)\)$")


def check_ts(ts: Any) -> int | None:
    """``ts`` as an integer time in ms; None when it is missing or not an integer (a trace defect);
    raises :class:`BadTime` when it is a number that is no time (negative, beyond ``MAX_TS``)."""
    if type(ts) is int:
        if 0 <= ts <= MAX_TS:
            return ts
        raise BadTime(f"ts_ms {ts} is not a time in ms (0 to {MAX_TS})")
    if isinstance(ts, float):
        if ts != ts or ts in (float("inf"), float("-inf")) or not 0 <= ts <= MAX_TS:
            raise BadTime(f"ts_ms {ts!r} is not a time in ms (0 to {MAX_TS})")
        if ts.is_integer():
            return int(ts)
    return None


def is_trace_name(name: str) -> bool:
    return name.endswith(TRACE_SUFFIXES)


def expand_paths(paths: list[str]) -> list[str]:
    """Files as given, directories expanded to their ``.jsonl``/``.jsonl.gz`` files (sorted, recursive)."""
    out: list[str] = []
    for p in paths:
        if p == "-":
            out.append(p)
            continue
        path = Path(p)
        if path.is_dir():
            found = sorted(str(f) for f in path.rglob("*") if f.is_file() and is_trace_name(f.name))
            if not found:
                raise TraceReadError(f"{p}: directory holds no .jsonl or .jsonl.gz trace")
            out.extend(found)
        elif path.is_file():
            out.append(p)
        elif path.exists():
            raise TraceReadError(f"{p}: not a regular file")
        else:
            raise TraceReadError(f"{p}: no such file or directory")
    return out


def spool_stdin() -> IO[bytes]:
    """Copy standard input to a temporary file (on disk, not in memory), so it can be read twice."""
    tmp = tempfile.TemporaryFile()
    shutil.copyfileobj(sys.stdin.buffer, tmp, 1 << 20)
    tmp.seek(0)
    return tmp


def open_trace(path: str, stdin_copy: IO[bytes] | None = None) -> IO[bytes]:
    """The trace's bytes (decompressed when gzip); raises :class:`TraceReadError`."""
    if path == "-":
        assert stdin_copy is not None
        stdin_copy.seek(0)
        raw: IO[bytes] = os.fdopen(os.dup(stdin_copy.fileno()), "rb")
        raw.seek(0)
    else:
        try:
            raw = open(path, "rb")
        except OSError as e:
            raise TraceReadError(f"{path}: cannot open ({e.strerror})") from None
    try:
        head = raw.read(4)
        raw.seek(0)
    except OSError as e:  # a file that opens but cannot be read (an I/O error, a special file)
        raw.close()
        raise TraceReadError(f"{path}: line 1: cannot read ({e.strerror or e})") from None
    if head == b"PAR1":
        raw.close()
        raise TraceReadError(f"{path}: line 1: a Parquet file, not JSON Lines (a sweep's traces/: check them with "
                             f"`groupspec audit {path}`)")
    if head[:2] == b"\x1f\x8b":
        return _past_bom(gzip.GzipFile(fileobj=raw, mode="rb"), path)  # type: ignore[arg-type]
    if path.endswith(".gz"):
        raw.close()
        raise TraceReadError(f"{path}: line 1: named .gz but not gzip-compressed")
    if head.startswith(BOM):
        raw.seek(len(BOM))
    return raw


#: the UTF-8 byte order mark some editors and Windows tools write first: not part of line 1's JSON, skipped
BOM = b"\xef\xbb\xbf"


def _past_bom(f: IO[bytes], path: str) -> IO[bytes]:
    """``f`` (decompressed) past a leading UTF-8 byte order mark, if it has one."""
    try:
        if f.read(len(BOM)) != BOM:
            f.seek(0)
    except (OSError, EOFError, zlib.error) as e:
        f.close()
        raise TraceReadError(f"{path}: line 1: cannot read further ({e})") from None
    return f


def iter_file(path: str, stdin_copy: IO[bytes] | None = None) -> Iterator[tuple[int, bytes]]:
    """``(line number, line bytes)`` for every non-blank line of one trace file."""
    f = open_trace(path, stdin_copy)
    n = 0
    try:
        with f:
            for n, line in enumerate(f, 1):  # noqa: B007 - n is read after the loop on errors
                if line.strip():
                    yield n, line
    except (OSError, EOFError, zlib.error) as e:
        raise TraceReadError(f"{path}: line {n + 1}: cannot read further ({e})") from None


def parse_line(line: bytes, strict_time: bool = False) -> tuple[dict[str, Any] | None, str | None]:
    """The event on one line, or ``(None, why not)``; with ``strict_time`` a ``ts_ms`` of NaN or Infinity
    (not JSON, but what a careless writer emits) raises :class:`BadTime`."""
    try:
        ev = load_json(line)
    except _JSONError as e:
        m = _NONFINITE.search(line) if strict_time and isinstance(line, bytes) else None
        if m is not None:
            raise BadTime(f"ts_ms {m.group(0).split(b':')[-1].strip().decode()} is not a time in ms") from None
        msg = _PARSER_PLACE.sub(lambda w: f" at column {int(w.group(1)) + 1}", str(e).split("\n")[0])
        return None, f"not JSON ({msg})"
    if not isinstance(ev, dict):
        return None, f"not a JSON object but {type(ev).__name__}"
    return ev, None
