"""The group's status diagram, drawn from the model's reachable state graph.

Nodes are the coordinator's group statuses; an arrow is drawn for every pair of statuses that some
reachable step of the model moves between, labelled with the model's own names of those steps. Nothing
here is drawn by hand: a transition the model cannot take has no arrow.
"""
from __future__ import annotations

from typing import Any

from .svg import Svg

# Fixed positions (x, y) of the statuses in the picture.
# A diamond (EMPTY left, PREPARING top, COMPLETING right, STABLE bottom), so that no long arrow runs
# through another pair's labels.
POS = {"EMPTY": (120, 250), "PREPARING_REBALANCE": (450, 80), "COMPLETING_REBALANCE": (780, 250),
       "STABLE": (450, 420), "DEAD": (120, 420)}
W, H = 190, 40


def transitions(graph: dict[str, Any]) -> dict[tuple[str, str], set[str]]:
    """(from status, to status) -> the names of the model's steps that make that move."""
    out: dict[tuple[str, str], set[str]] = {}
    states = graph["states"]
    for i, edges in enumerate(graph["edges"]):
        a = states[i]["status"]
        for e in edges:
            b = states[e[0]]["status"]
            if a != b and a is not None and b is not None:
                out.setdefault((a, b), set()).add(e[2])
    return out


def draw(graph: dict[str, Any], title: str) -> str:
    moves = transitions(graph)
    used = {s for pair in moves for s in pair} | {graph["states"][i]["status"] for i in graph["initial"]}
    svg = Svg(900, 480, title)
    svg.text(20, 22, title, 13, bold=True)
    for (a, b), names in sorted(moves.items()):
        (x1, y1), (x2, y2) = POS[a], POS[b]
        back = (b, a) in moves
        off = 16 if back else 0  # two arrows between the same pair: draw them apart
        dx, dy = x2 - x1, y2 - y1
        n = max((dx * dx + dy * dy) ** 0.5, 1)
        ox, oy = -dy / n * off, dx / n * off
        # the (offset) line leaves its own box and ends where it enters the other one, so that the
        # arrowhead is never under a box
        t0 = _leave(ox, oy, dx, dy)
        t1 = 1 - _leave(ox, oy, -dx, -dy)
        sx, sy = x1 + ox + dx * t0, y1 + oy + dy * t0
        ex, ey = x1 + ox + dx * t1, y1 + oy + dy * t1
        svg.line(sx, sy, ex, ey, "#555", 1.2, arrow=True)
        # the label sits a third of the way along, on the arrow's left: two arrows between one pair
        # of boxes put their labels on opposite sides
        n2 = max(((ex - sx) ** 2 + (ey - sy) ** 2) ** 0.5, 1)
        px, py = -(ey - sy) / n2, (ex - sx) / n2
        lx, ly = sx + (ex - sx) * 0.3 + px * 18, sy + (ey - sy) * 0.3 + py * 18
        anchor = "start" if px > 0.3 else "end" if px < -0.3 else "middle"
        for k, name in enumerate(sorted(names)):
            svg.text(lx, ly + k * 12 - (len(names) - 1) * 6, name, 10, anchor=anchor, fill="#333", halo=True)
    for status, (x, y) in POS.items():
        if status not in used:
            continue
        svg.rect(x - W / 2, y - H / 2, W, H, "#f3f4fb", status, stroke="#3f51b5")
        svg.text(x, y + 4, status, 12, anchor="middle", bold=True)
    cfg = graph["config"]
    svg.text(20, 470, f"From {len(graph['states'])} reachable states of `{graph['protocol']}` with {cfg['members']} members, "
             f"{cfg['partitions']} partitions, faults {', '.join(cfg['faults']) or 'none'} (budget {cfg['budget']}).",
             10, fill="#555")
    return svg.render()


def _leave(ox: float, oy: float, dx: float, dy: float) -> float:
    """The fraction t of (dx, dy) at which the point (ox, oy) + t (dx, dy), inside a box centred on the
    origin, leaves it."""
    ts = []
    for o, d, half in ((ox, dx, W / 2), (oy, dy, H / 2)):
        if d:
            ts.append(((half if d > 0 else -half) - o) / d)
    return min(ts) if ts else 0.0


def _border(x1: float, y1: float, x2: float, y2: float) -> tuple[float, float]:
    """Where the segment from box centre (x1, y1) towards (x2, y2) leaves the box."""
    dx, dy = x2 - x1, y2 - y1
    if dx == 0 and dy == 0:
        return x1, y1
    tx = (W / 2) / abs(dx) if dx else float("inf")
    ty = (H / 2) / abs(dy) if dy else float("inf")
    t = min(tx, ty)
    return x1 + dx * t, y1 + dy * t
