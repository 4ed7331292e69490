"""Plots of the sweep pipeline's numbers, where a number makes the Learn chapters' point.

The rows come from :func:`groupspec.pipeline.runs.run_point` (the same measurement ``groupspec sweep`` runs
on Spark, here one seed per point and no Spark), over the grid :data:`GRID`; the charts are drawn with
our own SVG writer (:mod:`.svg`), so the same rows give the same bytes. Each plot is written with a
small Markdown table of its numbers and the grid block that produced them (``docs/figures/plot-*.md``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from groupspec.pipeline import parse_grid
from groupspec.pipeline import run_point

from .svg import MEMBER_COLOURS, Svg

# One block per plot (the pipeline's grid format; seed 0 only: the docs show one deterministic run per point).
GRID: dict[str, dict[str, Any]] = {
    "stop-the-world": {"protocol": ["eager", "cooperative"], "assignor": ["range", "cooperative-sticky"],
                       "churn": "rolling-restart", "members": [3, 6, 12], "partitions": 24,
                       "poll_interval_ms": [200, 2000]},
    "static-bounce": {"protocol": ["eager", "static"], "churn": "bounce", "members": 3, "partitions": 12,
                      "bounce_ms": [2000, 6000, 9000, 12000, 16000], "session_timeout_ms": 10000},
    "connect-delay": {"protocol": "connect", "churn": "bounce", "members": 3, "partitions": 6,
                      "connect_delay_ms": [0, 2000, 6000, 10000, 30000], "bounce_ms": 4000},
    "sticky-vs-range": {"protocol": ["eager", "cooperative"], "assignor": ["range", "roundrobin", "sticky", "cooperative-sticky"],
                        "churn": ["join", "leave"], "members": 6, "partitions": 24},
    "herd": {"protocol": ["zookeeper", "eager"], "churn": "join", "members": [2, 4, 8, 16, 32], "partitions": 32},
}


def rows(tag: str) -> list[dict[str, Any]]:
    """The sweep rows of one plot's grid block, in the grid's order."""
    grid = parse_grid({"name": "docs", "blocks": [{"tag": tag, **GRID[tag]}]}, f"docs plot {tag}")
    return [run_point(p, "docs") for p in grid.points]


@dataclass(frozen=True)
class Panel:
    title: str
    ylabel: str
    categories: tuple[str, ...]  # the x axis
    series: tuple[tuple[str, tuple[float, ...]], ...]  # (name, one value per category)
    kind: str = "bars"  # bars | lines


def draw(title: str, panels: list[Panel], note: str = "") -> str:
    pw, ph, gap, top, left = 330, 230, 30, 44, 56  # two panels fit a 720-px page
    width = left + len(panels) * (pw + gap)
    height = top + ph + 112
    svg = Svg(width, height, title)
    svg.text(10, 18, title, 13, bold=True)
    names: list[str] = []
    for k, pan in enumerate(panels):
        x0 = left + k * (pw + gap)
        y0, y1 = top + 16, top + ph
        hi = max([v for _n, vs in pan.series for v in vs] + [1e-9])
        tick = _nice(hi / 4)
        top_v = tick * max(1, -(-hi // tick))

        def y(v: float) -> float:
            return y1 - (y1 - y0) * v / top_v

        svg.text(x0, top + 4, pan.title, 11, bold=True)
        for i in range(int(round(top_v / tick)) + 1):
            v = i * tick
            svg.line(x0, y(v), x0 + pw, y(v), "#eee")
            svg.text(x0 - 4, y(v) + 3, _num(v), 10, anchor="end", fill="#666")
        svg.line(x0, y1, x0 + pw, y1, "#999")
        n, m = len(pan.categories), len(pan.series)
        slot = pw / n
        for j, cat in enumerate(pan.categories):
            svg.text(x0 + slot * (j + 0.5), y1 + 14, cat, 10, anchor="middle", fill="#333")
        for s, (name, vals) in enumerate(pan.series):
            if name not in names:
                names.append(name)
            colour = MEMBER_COLOURS[names.index(name) % len(MEMBER_COLOURS)]
            if pan.kind == "bars":
                bw = slot * 0.8 / m
                for j, v in enumerate(vals):
                    bx = x0 + slot * j + slot * 0.1 + bw * s
                    svg.rect(bx, y(v), bw - 1, y1 - y(v), colour, f"{name}, {pan.categories[j]}: {_num(v)}")
                    svg.text(bx + bw / 2, y(v) - 2, _num(v), 10, anchor="middle", fill="#333")
            else:
                pts = [(x0 + slot * (j + 0.5), y(v)) for j, v in enumerate(vals)]
                for (ax, ay), (bx, by) in zip(pts, pts[1:]):
                    svg.line(ax, ay, bx, by, colour, 1.6)
                for j, (px, py) in enumerate(pts):
                    svg.circle(px, py, 3, colour, f"{name}, {pan.categories[j]}: {_num(vals[j])}")
                    svg.text(px, py - 6, _num(vals[j]), 10, anchor="middle", fill="#333")
    lx: float
    lx, ly = left, top + ph + 36
    for i, name in enumerate(names):
        lw = 22 + 6.8 * len(name)
        if lx + lw > width - 10 and lx > left:
            lx, ly = left, ly + 16
        svg.rect(lx, ly - 9, 12, 10, MEMBER_COLOURS[i % len(MEMBER_COLOURS)])
        svg.text(lx + 16, ly, name, 11)
        lx += lw
    if note:
        svg.text(left, ly + 22, note, 11, fill="#444")
    return svg.render()


def _nice(x: float) -> float:
    for step in (0.5, 1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
        if x <= step:
            return float(step)
    return float(10 ** len(str(int(x))))


def _num(v: float) -> str:
    return f"{v:.0f}" if abs(v - round(v)) < 1e-9 or abs(v) >= 100 else f"{v:.1f}"


def _table(head: list[str], body: list[list[Any]], tag: str) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_num(c) if isinstance(c, float) else str(c) for c in r) + " |" for r in body]
    block = ", ".join(f"{k}: {v}" for k, v in GRID[tag].items())
    out += ["", f"Rows: `groupspec.pipeline.runs.run_point`, seed 0, grid block `{block}`."]
    return "\n".join(out) + "\n"


def _get(rs: list[dict[str, Any]], **key: Any) -> dict[str, Any]:
    return next(r for r in rs if all(r[k] == v for k, v in key.items()))


def all_plots() -> dict[str, tuple[str, str]]:
    """slug -> (SVG, Markdown table) for every plot."""
    out: dict[str, tuple[str, str]] = {}

    rs = rows("stop-the-world")
    sizes = tuple(GRID["stop-the-world"]["members"])
    panels = []
    for poll in GRID["stop-the-world"]["poll_interval_ms"]:
        series = tuple((proto, tuple(float(_get(rs, protocol=proto, members=m, poll_interval_ms=poll)["partition_seconds_unowned"])
                                     for m in sizes)) for proto in ("eager", "cooperative"))
        panels.append(Panel(f"each poll's records take {poll / 1000:g} s to process", "partition-s unowned",
                            tuple(f"{m} members" for m in sizes), series))
    out["plot-stop-the-world"] = (
        draw("Rolling restart: partition-seconds without an owner, eager vs cooperative", panels,
             "24 partitions; every member in turn stops and restarts 3 s later, 15 s apart"),
        _table(["protocol", "members", "processing per poll (s)", "rebalances", "partition-s without an owner"],
               [[r["protocol"], r["members"], r["poll_interval_ms"] / 1000, r["rebalances"],
                 float(r["partition_seconds_unowned"])] for r in rs], "stop-the-world"))

    rs = rows("static-bounce")
    bounces = tuple(GRID["static-bounce"]["bounce_ms"])
    cats = tuple(f"back after {b / 1000:g} s" for b in bounces)
    out["plot-static-bounce"] = (
        draw("A member bounces: dynamic (eager) vs static membership, session timeout 10 s", [
            Panel("rebalances", "rebalances", cats, tuple(
                (proto, tuple(float(_get(rs, protocol=proto, bounce_ms=b)["rebalances"]) for b in bounces))
                for proto in ("eager", "static"))),
            Panel("partition-seconds without an owner", "partition-s", cats, tuple(
                (proto, tuple(float(_get(rs, protocol=proto, bounce_ms=b)["partition_seconds_unowned"]) for b in bounces))
                for proto in ("eager", "static")))],
            "3 members, 12 partitions; 'static' is eager with group.instance.id (KIP-345)"),
        _table(["protocol", "away (s)", "rebalances", "partitions moved", "partition-s without an owner"],
               [[r["protocol"], r["bounce_ms"] / 1000, r["rebalances"], r["partitions_moved"],
                 float(r["partition_seconds_unowned"])] for r in rs], "static-bounce"))

    rs = rows("connect-delay")
    delays = tuple(GRID["connect-delay"]["connect_delay_ms"])
    cats = tuple(f"delay {d / 1000:g} s" for d in delays)
    out["plot-connect-delay"] = (
        draw("A Connect worker bounces for 4 s: what scheduled.rebalance.max.delay.ms buys and costs", [
            Panel("tasks moved", "tasks moved", cats,
                  (("tasks moved", tuple(float(_get(rs, connect_delay_ms=d)["partitions_moved"]) for d in delays)),)),
            Panel("task-seconds without a worker", "task-s", cats,
                  (("task-seconds without a worker", tuple(float(_get(rs, connect_delay_ms=d)["partition_seconds_unowned"])
                                                          for d in delays)),))],
            "3 workers, 6 tasks (drawn as partitions)"),
        _table(["delay (s)", "rebalances", "tasks moved", "task-s without a worker"],
               [[r["connect_delay_ms"] / 1000, r["rebalances"], r["partitions_moved"],
                 float(r["partition_seconds_unowned"])] for r in rs], "connect-delay"))

    rs = rows("sticky-vs-range")
    keys = [(r["protocol"], r["assignor"], r["churn"]) for r in rs]
    cats = tuple(f"{a} / {c}" for _p, a, c in keys)
    out["plot-sticky-vs-range"] = (
        draw("Partitions moved by one join or leave, per assignor (6 members, 24 partitions)", [
            Panel("moved vs the fewest possible", "partitions", cats,
                  (("partitions moved", tuple(float(r["partitions_moved"]) for r in rs)),
                   ("fewest possible", tuple(float(r["moves_optimum"]) for r in rs))))],
            "range, roundrobin and sticky run eager; cooperative-sticky runs cooperative"),
        _table(["protocol", "assignor", "churn", "partitions moved", "fewest possible"],
               [[p, a, c, r["partitions_moved"], r["moves_optimum"]] for (p, a, c), r in zip(keys, rs)], "sticky-vs-range"))

    rs = rows("herd")
    sizes = tuple(GRID["herd"]["members"])
    cats = tuple(str(m) for m in sizes)
    zk = [_get(rs, protocol="zookeeper", members=m) for m in sizes]
    ea = [_get(rs, protocol="eager", members=m) for m in sizes]
    out["plot-herd"] = (
        draw("One consumer joins a group of N: ZooKeeper watchers vs a coordinator (eager)", [
            Panel("work per join", "per join", cats, (
                ("ZooKeeper: notifications", tuple(float(r["notifications"]) for r in zk)),
                ("ZooKeeper: rebalance attempts", tuple(float(r["rebalance_attempts"]) for r in zk)),
                ("ZooKeeper: failed claims", tuple(float(r["failed_claims"]) for r in zk)),
                ("eager: JoinGroups", tuple(float(r["rebalance_attempts"]) for r in ea))), "lines"),
            Panel("partition-seconds without an owner", "partition-s", cats, (
                ("ZooKeeper", tuple(float(r["partition_seconds_unowned"]) for r in zk)),
                ("eager", tuple(float(r["partition_seconds_unowned"]) for r in ea))), "lines")],
            "x axis: consumers before the join; 32 partitions. Each ZooKeeper attempt is a full recomputation; "
            "eager's leader computes once"),
        _table(["N", "ZooKeeper notifications", "ZooKeeper rebalance attempts", "ZooKeeper failed claims",
                "eager JoinGroups", "partition-s unowned (ZooKeeper)", "partition-s unowned (eager)"],
               [[m, z["notifications"], z["rebalance_attempts"], z["failed_claims"], e["rebalance_attempts"],
                 float(z["partition_seconds_unowned"]), float(e["partition_seconds_unowned"])]
                for m, z, e in zip(sizes, zk, ea)], "herd"))
    return out
