"""The ``starved_members`` notice: a live member kept out of the generations its group goes through.

A member *waits* from its ``joined`` line, or from a ``revoked``, ``lost`` or ``fenced`` line, until its
next ``assigned`` (an empty one counts: it took part in a generation) or its ``left``. When, while it
waits, another member is assigned (a generation completed without it), and it is still waiting more
than its session timeout after that, it is reported: alive (no ``left``) and, as far as the trace shows,
taking no part. In the protocol a member that is left out learns it at its next heartbeat or poll and
rejoins; one that stays out longer than its session timeout is not doing so. This is a notice, not a
violated property: the safety properties allow a member to stop taking part (it owns nothing), and
completeness or convergence report what that costs the group once it lasts longer than
``--converge-within``.

The session timeout is the ``session_timeout_ms`` field of the member's latest ``joined`` line (the
real-stack harness writes it), else Kafka's default, 45 s (``session.timeout.ms`` since Kafka 3.0,
KIP-735). The compiled inner loop (``kernel``) keeps the same per-member state and hands a line back to
``GroupChecker.feed`` whenever it would produce a notice.
"""
from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_SESSION_TIMEOUT_MS", "session_timeout", "start_waiting", "on_assigned", "stop_waiting", "finish"]

DEFAULT_SESSION_TIMEOUT_MS = 45_000


def session_timeout(ev: dict[str, Any]) -> int | None:
    """The ``session_timeout_ms`` of a ``joined`` line, when it is a positive integer."""
    sto = ev.get("session_timeout_ms")
    return sto if type(sto) is int and sto > 0 else None


def start_waiting(g: Any, m: Any, ts: int, restart: bool = False) -> None:
    """``m`` starts waiting for an assignment at ``ts`` (a restart starts afresh)."""
    if restart or m.wait_from is None:
        m.wait_from = ts
        m.others_at = None
        g.waiting_alone.add(m.name)


def _judge(g: Any, m: Any, ts: int, open_: bool) -> None:
    if m.wait_from is None or m.others_at is None:
        return
    sto = m.session_timeout_ms or DEFAULT_SESSION_TIMEOUT_MS
    if ts - m.others_at > sto:
        g.starved.append({
            "member": m.name, "waiting_from_ms": m.wait_from, "others_assigned_ms": m.others_at, "to_ms": ts,
            "seconds": round((ts - m.others_at) / 1000.0, 3), "session_timeout_ms": sto,
            **({"open": True} if open_ else {}), "_cap": g._capture()})


def stop_waiting(g: Any, m: Any, ts: int) -> None:
    """``m`` is assigned or leaves at ``ts``: judge the wait that ends."""
    _judge(g, m, ts, False)
    m.wait_from = None
    m.others_at = None
    g.waiting_alone.discard(m.name)


def on_assigned(g: Any, m: Any, ts: int) -> None:
    """``m`` is assigned at ``ts``: its wait ends, and every other member still waiting saw a generation go by."""
    if m.wait_from is not None:
        stop_waiting(g, m, ts)
    if g.waiting_alone:
        for name in g.waiting_alone:
            g.members[name].others_at = ts
        g.waiting_alone.clear()


def finish(g: Any, end: int) -> None:
    """The trace ends at ``end``: judge the members still waiting."""
    for m in g.members.values():
        if m.wait_from is not None:
            _judge(g, m, end, True)
