"""Swim-lane (sequence) diagrams: the coordinator and each member as lanes over time, with the group
protocol's requests between them and what each member owned in the meantime.

A member's lane is coloured while it owns partitions (it consumes) and grey while it owns nothing; a
hatched bar marks a JoinGroup or SyncGroup the coordinator has parked (the member waits: under the eager
protocol, this is the stop-the-world). Heartbeats and offset commits are left out, except heartbeats
answered with an error (they are how a member learns of a rebalance).
"""
from __future__ import annotations

from typing import Callable

from .runs import Run
from .svg import tick_step, IDLE, Svg, member_colour

LEFT, RIGHT, LANE, TOP = 90, 20, 34, 40
SHOWN = {"JoinGroup", "SyncGroup", "LeaveGroup"}


def draw(run: Run, start_ms: int | None = None, width: int = 860) -> str:
    t0 = run.start_ms if start_ms is None else start_ms
    t1 = run.end_ms
    hub = run.hub  # the ZooKeeper era has no coordinator: its consumers talk to ZooKeeper
    lanes = [hub, *run.members]
    height = TOP + LANE * len(lanes) + 52
    svg = Svg(width, height, f"Swim lanes: {run.story.title}")
    scale = (width - LEFT - RIGHT) / max(t1 - t0, 1)

    def x(t: float) -> float:
        return LEFT + (max(t, t0) - t0) * scale

    y = {name: TOP + i * LANE + LANE / 2 for i, name in enumerate(lanes)}
    svg.text(8, 16, f"{run.story.title} — requests, and who consumed", 13, bold=True)
    svg.text(width - RIGHT, 16, f"{run.story.protocol}, {run.assignor}", 10, anchor="end", fill="#555")
    for name in lanes:
        svg.text(LEFT - 8, y[name] + 4, name, 12, anchor="end", bold=name == hub)
        svg.line(LEFT, y[name], width - RIGHT, y[name], "#ccc")
    # consuming (owns something) vs owning nothing, per member, from the ownership intervals
    for i, m in enumerate(run.members):
        for a, b in run.alive.get(m, []):
            if b > t0:
                svg.rect(x(a), y[m] - 5, x(b) - x(a), 10, IDLE, f"{m} running")
        spans: list[tuple[int, int]] = []
        for p, ivs in run.intervals.items():
            spans += [(a, b) for a, b, who in ivs if who == m]
        for a, b in _union(spans):
            if b > t0:
                svg.rect(x(a), y[m] - 5, x(b) - x(a), 10, member_colour(i), f"{m} owns partitions (consuming)")
    # requests and answers
    open_req: dict[tuple[str, str], int] = {}
    for rec in run.transcript:
        api, t = rec["request"], rec["at"]
        if "from" in rec:
            m = rec["from"]
            if api in SHOWN and m in y:
                open_req[(m, api)] = t
                if t >= t0:
                    svg.line(x(t), y[m] - 6, x(t), y[hub] + 6, "#555", 0.8, arrow=True)
        elif "to" in rec:
            m = rec["to"]
            if m not in y:
                continue
            err = rec.get("error", "NONE")
            if api in SHOWN:
                sent = open_req.pop((m, api), t)
                if t >= t0:
                    if t - sent > 200:  # parked by the coordinator: the member waits
                        svg.rect(x(sent), y[m] - 9, x(t) - x(sent), 3, "#555", f"{m}: {api} parked {(t - sent) / 1000:.1f}s")
                    svg.line(x(t), y[hub] + 6, x(t), y[m] - 6, "#1a7f37" if err == "NONE" else "#c62828", 0.8,
                             arrow=True, dash=True)
            elif api == "Heartbeat" and err != "NONE" and t >= t0:
                svg.circle(x(t), y[m] - 12, 3, "#c62828", f"{m}: Heartbeat answered {err}")
    _notes(svg, run, x, y, hub, t0)
    axis_y = TOP + LANE * len(lanes) + 4
    step = tick_step(t1 - t0)
    for t in range((t0 // step + 1) * step, t1 + 1, step):
        svg.line(x(t), axis_y, x(t), axis_y + 4, "#999")
        svg.text(x(t), axis_y + 15, f"{t / 1000:g}s", 10, anchor="middle", fill="#666")
    if not run.transcript:  # no coordinator, no requests: who consumed, and the ZooKeeper era's own events
        svg.text(LEFT, axis_y + 30, "coloured lane: consuming, grey: running, owns nothing" + (
                 " (every consumer rebalances itself when ZooKeeper notifies it)" if hub == "zookeeper" else
                 " (no rounds: each member reconciles on its own, one heartbeat at a time)"), 10, fill="#444")
        if run.notes and hub == "zookeeper":
            svg.text(LEFT, axis_y + 43, "dashed arrow: a watch notification · green dot: claims created · red dot: a "
                     "claim failed (node held) · \u25b2 acts on a stale view", 10, fill="#444")
        elif run.notes:
            svg.text(LEFT, axis_y + 43, "green dot: a ConsumerGroupHeartbeat answer that changed the member's epoch or "
                     "what it owns (every member heartbeats each second)", 10, fill="#444")
        return svg.render()
    svg.text(LEFT, axis_y + 30, "solid arrow: JoinGroup/SyncGroup/LeaveGroup sent · dashed arrow: its answer (red = an error)", 10, fill="#444")
    svg.text(LEFT, axis_y + 43, "dark bar: request parked by the coordinator · red dot: heartbeat answered with an error · "
             "coloured lane: consuming, grey: running, owns nothing", 10, fill="#444")
    return svg.render()


def _notes(svg: Svg, run: Run, x: Callable[[float], float], y: dict[str, float], hub: str, t0: int) -> None:
    """The ZooKeeper era's own events on each consumer's lane (see :class:`~.runs.Run`'s ``notes``)."""
    for t, who, kind, title in run.notes:
        if t < t0 or who not in y:
            continue
        if kind == "notified":
            svg.line(x(t), y[hub] + 6, x(t), y[who] - 6, "#555", 0.8, arrow=True, dash=True)
        elif kind == "claimed":
            svg.circle(x(t), y[who] + 11, 3, "#1a7f37", title)
        elif kind == "claim-failed":
            svg.circle(x(t), y[who] + 11, 3, "#c62828", title)
        elif kind == "stale":
            svg.text(x(t), y[who] - 8, "\u25b2", 10, anchor="middle", fill="#000")
            svg.rect(x(t) - 4, y[who] - 16, 8, 9, "none", title)


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out
