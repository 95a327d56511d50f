"""The printable table mat: the calibration markers and the zones at their real size.

The zones are invisible on the cloth; the mat shows where each seat's cards go, where the turn-up
and the stock lie, and carries the four ArUco markers with their centres exactly on the table
frame's corners (``vision.calibration``: ids 0–3, top left as the camera sees it, clockwise), so a
mat laid under the camera is calibrated by `loo-table calibrate` with its markers.

One SVG in millimetres (``width="…mm"``): printed at 100 % on a large-format printer it is the
table itself (a print shop prints it on one sheet; a home printer prints it as a poster over
several sheets: "poster" or "tile" in the print dialog).
Labels are given by the caller (whose place a zone is): vision knows no players.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

import cv2

from vision.calibration import ARUCO_DICT, MARKER_IDS
from vision.geometry import CARD_MM, TableLayout

__all__ = ["MAT_MARGIN_MM", "mat_svg"]

#: white border round the table frame: room for half a marker and the labels
MAT_MARGIN_MM = 40.0


def _marker(mid: int, cx: float, cy: float, marker_mm: float) -> list[str]:
    dictionary = cv2.aruco.getPredefinedDictionary(ARUCO_DICT)
    cells = 6  # 4×4 bits plus the black border
    img = cv2.aruco.generateImageMarker(dictionary, mid, cells)
    cell = marker_mm / cells
    x0, y0 = cx - marker_mm / 2, cy - marker_mm / 2
    out = [f'<g class="marker" data-id="{mid}" transform="translate({x0:.3f},{y0:.3f})" shape-rendering="crispEdges">']
    out += [f'<rect x="{c * cell:.4f}" y="{r * cell:.4f}" width="{cell:.4f}" height="{cell:.4f}" fill="black"/>'
            for r in range(cells) for c in range(cells) if img[r, c] < 128]
    out.append("</g>")
    return out


def mat_svg(layout: TableLayout, labels: Mapping[str, str] | None = None, *, marker_mm: float = 50.0,
            title: str = "loo-table mat") -> str:
    """The mat for ``layout`` (table millimetres); ``labels[zone]`` names a zone (default: the
    zone's name). Each zone is a dashed rectangle with a card's outline in its middle."""
    labels = labels or {}
    m = MAT_MARGIN_MM
    w, h = layout.width_mm + 2 * m, layout.height_mm + 2 * m
    parts = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:g}mm" height="{h:g}mm" viewBox="0 0 {w:g} {h:g}">',
             f'<title>{escape(title)}</title>',
             f'<rect width="{w:g}" height="{h:g}" fill="white"/>',
             f'<g transform="translate({m:g},{m:g})" font-family="sans-serif">',
             f'<rect x="0" y="0" width="{layout.width_mm:g}" height="{layout.height_mm:g}" fill="none" '
             'stroke="#bbb" stroke-width="0.5"/>']
    cw, ch = CARD_MM
    for zone in layout.zones:
        name = labels.get(zone.name, zone.name)
        cx, cy = zone.center
        parts.append(f'<g class="zone" data-zone="{escape(zone.name)}">')
        parts.append(f'<rect x="{zone.x:g}" y="{zone.y:g}" width="{zone.width:g}" height="{zone.height:g}" '
                     'fill="#f3f7f3" stroke="#2a7a3a" stroke-width="1" stroke-dasharray="6 3"/>')
        parts.append(f'<rect x="{cx - cw / 2:g}" y="{cy - ch / 2:g}" width="{cw:g}" height="{ch:g}" rx="3" '
                     'fill="none" stroke="#9bbf9f" stroke-width="0.6"/>')
        parts.append(f'<text x="{cx:g}" y="{zone.y + 13:g}" font-size="11" text-anchor="middle" fill="#1d4f27">'
                     f'{escape(name)}</text>')
        parts.append("</g>")
    corners = [(0.0, 0.0), (layout.width_mm, 0.0), (layout.width_mm, layout.height_mm), (0.0, layout.height_mm)]
    for mid, (x, y) in zip(MARKER_IDS, corners, strict=True):
        parts += _marker(mid, x, y, marker_mm)
    ruler_y = layout.height_mm + m * 0.55
    parts.append(f'<line x1="{layout.width_mm / 2 - 50:g}" y1="{ruler_y:g}" x2="{layout.width_mm / 2 + 50:g}" '
                 f'y2="{ruler_y:g}" stroke="black" stroke-width="0.5"/>')
    parts.append(f'<text x="{layout.width_mm / 2:g}" y="{ruler_y + 6:g}" font-size="5" text-anchor="middle">'
                 f'{escape(title)}: print at 100 %; this line is 100 mm; marker centres '
                 f'{layout.width_mm:g} × {layout.height_mm:g} mm apart</text>')
    parts.append("</g></svg>")
    return "\n".join(parts) + "\n"
