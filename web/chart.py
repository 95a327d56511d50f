"""The chips-over-the-night chart, drawn by the server as SVG (no chart library on the phones).

A hand-written polyline chart: a charting library would be a vendored script far larger than these
sixty lines, and the chart needs nothing but lines, a few ticks and a legend.
"""

from __future__ import annotations

from markupsafe import Markup, escape

# Colour-blind-safe palette (Okabe & Ito), readable on light and dark backgrounds.
PALETTE = ("#E69F00", "#56B4E9", "#009E73", "#D55E00", "#CC79A7", "#0072B2", "#F0E442", "#999999")


def _nice_step(span: int, target: int = 5) -> int:
    raw = max(1, span // target)
    for base in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10000):
        if base >= raw:
            return base
    return raw


def chip_chart(history: dict[str, list[int]], *, width: int = 360, height: int = 220) -> Markup:
    """An SVG line per player: x = deals played, y = chips. Empty history gives a short note.

    The default 360 × 220 view box matches a phone's width, so 11-unit ticks stay readable.
    """
    series = {name: chips for name, chips in history.items() if chips}
    if not series:
        return Markup('<p class="muted">No deals yet.</p>')
    left, right, top, bottom = 36, 8, 10, 24
    n = max(len(c) for c in series.values())
    lo = min(min(c) for c in series.values())
    hi = max(max(c) for c in series.values())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    step = _nice_step(hi - lo)
    lo = (lo // step) * step
    hi = -(-hi // step) * step
    pw, ph = width - left - right, height - top - bottom

    def x(i: int) -> float:
        return left + (pw * i / (n - 1) if n > 1 else pw / 2)

    def y(v: int) -> float:
        return top + ph * (hi - v) / (hi - lo)

    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="Chips of each player after every deal" preserveAspectRatio="xMidYMid meet">'
    ]
    for v in range(lo, hi + 1, step):
        parts.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>')
        parts.append(f'<text class="tick" x="{left - 4}" y="{y(v) + 4:.1f}" text-anchor="end">{v}</text>')
    xstep = _nice_step(n - 1, 8) if n > 1 else 1
    for i in range(0, n, xstep):
        parts.append(f'<text class="tick" x="{x(i):.1f}" y="{height - 8}" text-anchor="middle">{i}</text>')
    for k, (name, chips) in enumerate(sorted(series.items())):
        colour = PALETTE[k % len(PALETTE)]
        pts = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(chips))
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="2.5" points="{pts}">'
            f"<title>{escape(name)}: {chips[-1]} chips</title></polyline>"
        )
        if n <= 40:  # dots show single deals (and a night of one point) without cluttering long ones
            parts.extend(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}"/>'
                         for i, v in enumerate(chips))
    parts.append("</svg>")
    legend = "".join(
        f'<li><span class="swatch" style="background:{PALETTE[k % len(PALETTE)]}"></span>'
        f"{escape(name)} <b>{chips[-1]}</b></li>"
        for k, (name, chips) in enumerate(sorted(series.items()))
    )
    return Markup("".join(parts) + f'<ul class="legend">{legend}</ul>')
