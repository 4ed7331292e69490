"""Per-partition ownership strips: one row per partition, coloured by owner over time, unowned gaps in red."""
from __future__ import annotations

from .runs import Run
from .svg import tick_step, DOUBLE, IDLE, UNOWNED, Svg, member_colour

LEFT, RIGHT, ROW, TOP = 70, 20, 18, 34


def draw(run: Run, start_ms: int | None = None, width: int = 860) -> str:
    t0 = run.start_ms if start_ms is None else start_ms
    t1 = run.end_ms
    rows = run.partitions
    legend_y = TOP + ROW * len(rows) + 28
    claims = [c for c in run.claims if c[1] > t0]
    svg = Svg(width, legend_y + (46 if claims else 26), f"Who owned each partition: {run.story.title}")
    scale = (width - LEFT - RIGHT) / max(t1 - t0, 1)

    def x(t: float) -> float:
        return LEFT + (max(t, t0) - t0) * scale

    svg.text(8, 14, f"{run.story.title} — who owned each partition", 13, bold=True)
    svg.text(width - RIGHT, 14, f"{run.story.protocol}, {run.assignor}", 10, anchor="end", fill="#555")
    for i, p in enumerate(rows):
        y = TOP + i * ROW
        svg.text(LEFT - 6, y + ROW * 0.7, f"{p[0]}-{p[1]}", 11, anchor="end")
        for a, b, who in run.intervals.get(p, []):
            if b <= t0:
                continue
            if who is None:
                fill, title = UNOWNED, f"{p[0]}-{p[1]} unowned {a / 1000:.3f}s to {b / 1000:.3f}s"
            elif who == "nobody running":
                fill, title = IDLE, "no member running"
            elif who.startswith("two owners"):
                fill, title = DOUBLE, f"{p[0]}-{p[1]}: {who}"
            else:
                fill, title = member_colour(run.members.index(who)), f"{p[0]}-{p[1]} owned by {who}"
            svg.rect(x(a), y + 2, x(b) - x(a), ROW - 4, fill, title)
    for a, b, p, title in claims:  # split brain: two consumers picked this partition, each from its own view
        if p in rows:
            y = TOP + rows.index(p) * ROW
            svg.rect(x(a), y, max(x(b) - x(a), 3), 5, DOUBLE, title)
    # time axis with generations
    axis_y = TOP + ROW * len(rows) + 4
    svg.line(LEFT, axis_y, width - RIGHT, axis_y, "#999")
    step = tick_step(t1 - t0)
    for t in range((t0 // step + 1) * step, t1 + 1, step):
        svg.line(x(t), axis_y, x(t), axis_y + 4, "#999")
        svg.text(x(t), axis_y + 15, f"{t / 1000:g}s", 10, anchor="middle", fill="#666")
    for at, gen in run.generations:
        if at >= t0:
            svg.line(x(at), TOP - 4, x(at), axis_y, "#444", 0.8, dash=True)
            svg.text(x(at) + 2, TOP - 6, f"{run.gen_label} {gen}", 10, fill="#444")
    lx = LEFT
    for i, m in enumerate(run.members):
        svg.rect(lx, legend_y + 6, 12, 10, member_colour(i))
        svg.text(lx + 16, legend_y + 15, m, 11)
        lx += 60
    svg.rect(lx, legend_y + 6, 12, 10, UNOWNED)
    svg.text(lx + 16, legend_y + 15, "no owner", 11)
    svg.rect(lx + 90, legend_y + 6, 12, 10, IDLE)
    svg.text(lx + 106, legend_y + 15, "no member running", 11)
    if claims:
        svg.rect(LEFT, legend_y + 26, 12, 5, DOUBLE)
        svg.text(LEFT + 16, legend_y + 35, "black band: two consumers claim the partition at once, each from its own "
                 "view of the group (one owner node: the other's claim fails)", 11)
    return svg.render()
