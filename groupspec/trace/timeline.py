"""Timelines around a finding, in the words of the model's timelines (``groupspec.checker.timeline``).

Each event becomes one numbered line — its time, its line in the trace file (so a person can find the
moment in their own logs), who did what — and after the events that led to the finding, what each
member then believed: ``c1: generation 3, owns {t-0, t-1}``, ``c3: not running``, as the model's
counterexamples print each party's beliefs.
"""
from __future__ import annotations

from typing import Any

__all__ = ["render_event", "beliefs", "fmt_parts"]


def fmt_parts(parts: Any) -> str:
    items = []
    if not isinstance(parts, (list, tuple)):
        return "{}" if parts is None else repr(parts)
    for p in parts:
        if isinstance(p, (list, tuple)) and len(p) >= 2:
            s = f"{p[0]}-{p[1]}"
            if len(p) > 2:
                s += f"@{p[2]}"
            items.append(s)
        else:
            items.append(repr(p))
    return "{" + ", ".join(items) + "}"


def _what(ev: dict[str, Any]) -> str:
    kind = ev.get("event")
    who = ev.get("member", "?")
    gen = ev.get("generation")
    g = f" (generation {gen})" if isinstance(gen, int) and gen >= 0 else ""
    parts = fmt_parts(ev.get("partitions"))
    if kind == "joined":
        extra = f" as static member {ev['instance_id']}" if ev.get("instance_id") else ""
        return f"{who} starts and subscribes{extra}"
    if kind == "assigned":
        if ev.get("protocol", "eager") == "eager":
            return f"{who} receives its SyncGroup answer: assigned {parts}, its whole assignment{g}"
        return f"{who} is assigned {parts} in addition to what it owns{g}"
    if kind == "revoked":
        return f"{who} revokes {parts}{g}"
    if kind == "lost":
        return f"{who} loses {parts}: it learned it had been fenced out{g}"
    if kind == "left":
        return f"{who} leaves (closes or crashes) and releases whatever it owned"
    if kind == "fenced":
        return f"{who} is rejected by the coordinator: {ev.get('error', 'fenced')}{g}"
    if kind == "commit":
        verdict = "accepted" if ev.get("accepted") is True else "rejected"
        return f"{who} commits offsets {parts}{g}: {verdict}"
    if kind == "topic":
        return f"topic {ev.get('topic')} has {ev.get('partitions')} partitions"
    if kind == "snapshot":
        return f"{who} polls assignment() = {parts}"
    return f"{who} {kind}"


def render_event(line: int | None, ev: dict[str, Any]) -> str:
    ts = ev.get("ts_ms")
    where = f"line {line}" if line is not None else ""
    return f"{ts!s:>9} ms  {where:>10}  {_what(ev)}"


def beliefs(members: dict[str, Any], ts: int) -> list[str]:
    """One line per member: what it believed at ``ts`` (members are the checker's records)."""
    out = []
    for name in sorted(members):
        m = members[name]
        if not m.alive:
            out.append(f"{name}: not running")
            continue
        bits = []
        if m.fenced:
            bits.append("fenced")
        bits.append(f"generation {m.last_gen if m.last_gen is not None else -1}")
        bits.append("owns " + fmt_parts(sorted(m.owned)))
        out.append(f"{name}: " + ", ".join(bits))
    return out
