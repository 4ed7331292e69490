"""A tiny, deterministic SVG writer: the same drawing gives the same bytes on every machine."""
from __future__ import annotations

from html import escape

# One palette for every figure: members by index, and the colours that mean something.
MEMBER_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
UNOWNED = "#d62728"  # a partition nobody owns while members are alive
DOUBLE = "#000000"  # two owners at once
IDLE = "#e0e0e0"
FONT = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""
# Legible at page width: the docs' content column is about PAGE_WIDTH px wide (mkdocs-material with both
# sidebars on a laptop screen); a wider figure is scaled down to it, and no text may end up below MIN_TEXT_PX.
PAGE_WIDTH = 720
MIN_TEXT_PX = 8.0


def smallest_text_px(svg_text: str) -> float:
    """The smallest font size of an SVG once it is scaled to :data:`PAGE_WIDTH` (never scaled up)."""
    import re

    box = re.search(r'viewBox="0 0 ([0-9.]+) ', svg_text)
    assert box is not None, "an SVG without a viewBox"
    width = float(box.group(1))
    sizes = [float(x) for x in re.findall(r'font-size="([0-9.]+)"', svg_text)]
    return min(sizes, default=float("inf")) * min(1.0, PAGE_WIDTH / width)


def tick_step(span_ms: int) -> int:
    """The time axis' step: the smallest of 0.5, 1, 2, 5, 10, 20 s that gives at most 12 ticks."""
    for step in (500, 1000, 2000, 5000, 10000):
        if span_ms <= 12 * step:
            return step
    return 20000


def member_colour(index: int) -> str:
    return MEMBER_COLOURS[index % len(MEMBER_COLOURS)]


class Svg:
    def __init__(self, width: int, height: int, title: str) -> None:
        self.width, self.height = width, height
        self.parts: list[str] = [f"<title>{escape(title)}</title>"]

    def rect(self, x: float, y: float, w: float, h: float, fill: str, title: str | None = None, stroke: str | None = None,
             dash: bool = False) -> None:
        extra = f' stroke="{stroke}"' if stroke else ""
        extra += ' stroke-dasharray="3,2"' if dash else ""
        body = f"<title>{escape(title)}</title>" if title else ""
        self.parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0.5):.1f}" height="{h:.1f}" fill="{fill}"{extra}>{body}</rect>'
                          if body else f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0.5):.1f}" height="{h:.1f}" fill="{fill}"{extra}/>')

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str = "#555", width: float = 1.0,
             arrow: bool = False, dash: bool = False) -> None:
        extra = ' marker-end="url(#arrow)"' if arrow else ""
        extra += ' stroke-dasharray="4,3"' if dash else ""
        self.parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" stroke-width="{width}"{extra}/>')

    def text(self, x: float, y: float, s: str, size: int = 12, anchor: str = "start", fill: str = "#222",
             bold: bool = False, halo: bool = False) -> None:
        weight = ' font-weight="bold"' if bold else ""
        if halo:  # a white outline under the letters: a line drawn across the text does not hide it
            weight += ' stroke="#ffffff" stroke-width="3" paint-order="stroke"'
        self.parts.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{fill}" {FONT}{weight}>{escape(s)}</text>')

    def circle(self, x: float, y: float, r: float, fill: str, title: str | None = None) -> None:
        body = f"<title>{escape(title)}</title>" if title else ""
        self.parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{fill}">{body}</circle>')

    def render(self) -> str:
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.width} {self.height}" '
                f'width="{self.width}" height="{self.height}" role="img">'
                '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
                'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>'
                f'<rect width="{self.width}" height="{self.height}" fill="#ffffff"/>')
        return head + "\n" + "\n".join(self.parts) + "\n</svg>\n"
