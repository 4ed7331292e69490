"""Rebalance traces (the trace format, docs/formats.md): writing, reading, and the ownership timeline.

Theory of operation
-------------------
A trace is a list of JSON objects, one event each, in time order: ``joined``, ``assigned``,
``revoked``, ``lost``, ``left``, ``topic``, ``fenced``, ``commit``. :func:`dumps_jsonl` writes them
with a fixed key order and compact separators, so the same run gives the same bytes.

:func:`ownership` replays a trace into who-owned-what over time, following the contract's reading
rules: ``assigned`` adds its partitions (eager members own nothing right before, cooperative ones
keep what they had), ``revoked`` / ``lost`` remove, ``left`` releases everything. It yields the
figures the simulator narrates: per-partition time without an owner (counted only while at least
one member is alive), partitions revoked and moved, and every instant a partition had two owners.
It measures for the narration and judges nothing: whether a trace keeps the protocol's invariants
(zombies, fencing, convergence) is decided by the project's one trace checker, ``groupspec.trace``
(``groupspec trace check``), which the tests run on the simulator's traces.
"""
from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "dumps_jsonl", "write_trace", "read_trace", "Ownership", "ownership", "TraceError",
]

_KEY_ORDER = (
    "ts_ms", "group", "member", "event", "partitions", "generation", "protocol", "member_id",
    "instance_id", "topic", "error", "accepted",
)

TP = tuple[str, int]


class TraceError(ValueError):
    """A trace line is not valid JSON or lacks a required field."""


def _ordered(ev: dict[str, Any]) -> dict[str, Any]:
    out = {k: ev[k] for k in _KEY_ORDER if k in ev}
    for k in sorted(ev):
        if k not in out:
            out[k] = ev[k]
    return out


def dumps_jsonl(events: Iterable[dict[str, Any]]) -> str:
    """One compact JSON object per line, keys in a fixed order."""
    return "".join(json.dumps(_ordered(e), separators=(",", ":"), ensure_ascii=False) + "\n" for e in events)


def write_trace(path: str | Path, events: Iterable[dict[str, Any]]) -> None:
    """Write ``.jsonl`` (or gzip-compressed ``.jsonl.gz``)."""
    data = dumps_jsonl(events).encode("utf-8")
    p = Path(path)
    if p.name.endswith(".gz"):
        with gzip.GzipFile(p, "wb", mtime=0) as f:
            f.write(data)
    else:
        p.write_bytes(data)


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """Read a ``.jsonl`` / ``.jsonl.gz`` trace; malformed lines raise :class:`TraceError` with the line number."""
    p = Path(path)
    raw = gzip.decompress(p.read_bytes()) if p.name.endswith(".gz") else p.read_bytes()
    events: list[dict[str, Any]] = []
    for n, line in enumerate(raw.decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except json.JSONDecodeError as e:
            raise TraceError(f"{p}:{n}: not JSON ({e.msg})") from None
        if not isinstance(ev, dict) or "ts_ms" not in ev or "event" not in ev:
            raise TraceError(f"{p}:{n}: an event needs 'ts_ms' and 'event'")
        if ev["event"] != "topic" and "member" not in ev:
            raise TraceError(f"{p}:{n}: event {ev['event']!r} needs 'member'")
        events.append(ev)
    return events


@dataclass
class Ownership:
    """The ownership timeline of one trace, measured over ``[start_ms, end_ms]``."""

    start_ms: int
    end_ms: int
    unowned_ms: dict[TP, int] = field(default_factory=dict)
    revoked: int = 0  # partitions revoked or lost inside the window
    moved: int = 0  # partitions that got a different owner than their previous one inside the window
    rebalances: int = 0  # new generations (above any seen before the window) delivered inside it
    double_owned: list[dict[str, Any]] = field(default_factory=list)
    final_owners: dict[TP, list[str]] = field(default_factory=dict)

    @property
    def unowned_partition_seconds(self) -> float:
        return sum(self.unowned_ms.values()) / 1000.0


def _parts(ev: dict[str, Any]) -> list[TP]:
    return [(str(p[0]), int(p[1])) for p in ev.get("partitions", [])]


def ownership(events: list[dict[str, Any]], start_ms: int = 0, end_ms: int | None = None) -> Ownership:
    """Replay ``events`` (sorted by time) and measure the window ``[start_ms, end_ms]``."""
    if end_ms is None:
        end_ms = max((int(e["ts_ms"]) for e in events), default=start_ms)
    res = Ownership(start_ms, end_ms)
    partitions: set[TP] = set()
    owners: dict[TP, set[str]] = {}
    owned_by: dict[str, set[TP]] = {}
    alive: set[str] = set()
    last_owner: dict[TP, str] = {}
    gens: set[int] = set()
    gen_before = -1
    clock = start_ms

    def account(upto: int) -> None:
        nonlocal clock
        upto = min(upto, end_ms)
        if upto <= clock:
            return
        if alive:
            for tp in partitions:
                if not owners.get(tp):
                    res.unowned_ms[tp] = res.unowned_ms.get(tp, 0) + (upto - clock)
        clock = upto

    for ev in events:
        ts = int(ev["ts_ms"])
        if ts >= start_ms:
            account(ts)
        inside = start_ms <= ts <= end_ms
        kind = ev["event"]
        if kind == "topic":
            for p in range(int(ev["partitions"])):
                partitions.add((ev["topic"], p))
            continue
        m = ev["member"]
        if kind == "joined":
            alive.add(m)
        elif kind == "assigned":
            if ev.get("protocol", "eager") == "eager":
                for tp in owned_by.get(m, set()):
                    owners[tp].discard(m)
                owned_by[m] = set()
            for tp in _parts(ev):
                others = owners.setdefault(tp, set()) - {m}
                if others:
                    res.double_owned.append({"ts_ms": ts, "partition": list(tp), "owners": sorted(others | {m})})
                owners[tp].add(m)
                owned_by.setdefault(m, set()).add(tp)
                if inside and last_owner.get(tp) not in (None, m):
                    res.moved += 1
                last_owner[tp] = m
            if "generation" in ev:
                if ts < start_ms:
                    gen_before = max(gen_before, int(ev["generation"]))
                elif inside:
                    gens.add(int(ev["generation"]))
        elif kind in ("revoked", "lost"):
            for tp in _parts(ev):
                owners.get(tp, set()).discard(m)
                owned_by.get(m, set()).discard(tp)
                if inside:
                    res.revoked += 1
        elif kind == "left":
            for tp in owned_by.pop(m, set()):
                owners[tp].discard(m)
            alive.discard(m)
    account(end_ms)
    res.rebalances = len({g for g in gens if g > gen_before})
    for tp in partitions:
        res.unowned_ms.setdefault(tp, 0)
    res.final_owners = {tp: sorted(owners.get(tp, set())) for tp in sorted(partitions)}
    return res


def iter_member_events(events: list[dict[str, Any]], member: str) -> Iterator[dict[str, Any]]:
    return (e for e in events if e.get("member") == member)
