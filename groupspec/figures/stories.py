"""Each deliberately broken variant's counterexample, as a short illustrated story.

The checker finds the shortest run that breaks the property the variant was built to break; the story is
that run: one row per step (the model's own explanation of it), one column per partition, each cell naming
who owns the partition after the step — a live member in its colour, a zombie (a member the coordinator
no longer knows) hatched, two live owners in black. The text timeline beside it is the checker's own.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from groupspec.checker import check
from groupspec.checker import explain, render
from groupspec.model import bits

from .svg import DOUBLE, Svg, member_colour


@dataclass(frozen=True)
class Broken:
    protocol: str
    expect: str  # the property it must violate
    members: int
    partitions: int
    faults: str
    budget: int
    title: str

    def command(self) -> str:
        f = f" --faults {self.faults}" if self.faults else ""
        return (f"groupspec check --protocol {self.protocol} --members {self.members} --partitions {self.partitions}"
                f"{f} --budget {self.budget}")


def counterexample(b: Broken) -> tuple[Any, list[Any], int | None]:
    faults = frozenset(f for f in b.faults.split(",") if f)
    proto, res = check(b.protocol, members=b.members, partitions=b.partitions, faults=faults, budget=b.budget,
                       with_symmetry_factor=False)
    v = res.verdicts[b.expect]
    if v.held is not False or not v.trace:
        raise RuntimeError(f"{b.protocol}: the checker did not find the {b.expect} violation it was built to show")
    return proto, v.trace, v.loop_start


def timeline_text(b: Broken) -> str:
    proto, trace, loop = counterexample(b)
    return "\n".join(render(proto, trace, loop))


def draw(b: Broken) -> str:
    """The counterexample as a table: each step's whole explanation on the left (wrapped, never cut), the
    owners of each partition after it on the right."""
    import textwrap

    proto, trace, _loop = counterexample(b)
    n_parts = b.partitions
    title = textwrap.wrap(f"{b.title} — the shortest run that breaks {b.expect}", 84)
    row, line, left, col = 22, 13, 420, 64
    top = 46 + 17 * (len(title) - 1)
    texts, before = [], None
    for k, st in enumerate(trace):
        text = "initial state" if st.action is None else explain(proto, before, st.action, st.state)
        texts.append(textwrap.wrap(f"{k:2d}. {text}", 62, subsequent_indent="    ") or [f"{k:2d}."])
        before = st.state
    ys, y = [], top
    for lines in texts:
        ys.append(y)
        y += row + line * (len(lines) - 1)
    svg = Svg(max(left + col * n_parts + 20, 760), y + 30, f"Counterexample: {b.title}")
    for j, title_line in enumerate(title):
        svg.text(10, 18 + 17 * j, title_line, 13, bold=True)
    for p in range(n_parts):
        svg.text(left + col * p + col / 2, top - 8, proto.partition_name(p), 10, anchor="middle", bold=True)
    for k, st in enumerate(trace):
        y = ys[k]
        for j, text_line in enumerate(texts[k]):
            svg.text(10, y + 15 + j * line, text_line, 11)
        owners: dict[int, list[tuple[int, bool]]] = {}
        clients: Any = getattr(st.state, "clients", None) or getattr(st.state, "consumers", ())  # (zookeeper: consumers)
        for i, c in enumerate(clients):
            live = proto.live_member(st.state, i)
            for p in bits(c.owned):
                owners.setdefault(p, []).append((i, live))
        for p in range(n_parts):
            who = owners.get(p, [])
            x = left + col * p + 2
            live = [i for i, ok in who if ok]
            if len(live) > 1:
                svg.rect(x, y + 3, col - 4, row - 6, DOUBLE, "two live owners")
                svg.text(x + (col - 4) / 2, y + 15, "+".join(proto.member_name(i) for i in live), 10, anchor="middle", fill="#fff")
            elif who:
                i, ok = (live[0], True) if live else who[0]
                svg.rect(x, y + 3, col - 4, row - 6, member_colour(i) if ok else "#ffffff",
                         None, stroke=member_colour(i), dash=not ok)
                label = proto.member_name(i) + ("" if ok else " (zombie)")
                svg.text(x + (col - 4) / 2, y + 15, label, 10, anchor="middle", fill="#fff" if ok else member_colour(i))
    return svg.render()
