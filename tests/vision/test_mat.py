"""The printable table mat: drawn at its real size, its markers calibrate the camera to the
same table frame the zones are drawn in (rasterised from the SVG's own rectangles, then found by
the calibration's ArUco detector), and every zone lies where the layout puts it."""

from __future__ import annotations

import re

import numpy as np
import pytest

from vision.calibration import from_markers
from vision.geometry import TableLayout
from vision.mat import MAT_MARGIN_MM, mat_svg

PX_PER_MM = 2.0


def rasterise_markers(svg: str) -> np.ndarray:
    """The SVG's markers as a grey image at PX_PER_MM (each marker a group of black squares)."""
    w_mm, h_mm = (float(v) for v in re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg).groups())
    img = np.full((round(h_mm * PX_PER_MM), round(w_mm * PX_PER_MM)), 255, np.uint8)
    ox, oy = (float(v) for v in re.search(r'<g transform="translate\(([\d.]+),([\d.]+)\)" font', svg).groups())
    for group in re.finditer(r'<g class="marker" data-id="\d" transform="translate\(([-\d.]+),([-\d.]+)\)"[^>]*>(.*?)</g>',
                             svg, re.S):
        gx, gy = float(group.group(1)) + ox, float(group.group(2)) + oy
        for x, y, w, h in re.findall(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"', group.group(3)):
            x0, y0 = round((gx + float(x)) * PX_PER_MM), round((gy + float(y)) * PX_PER_MM)
            img[y0:y0 + round(float(h) * PX_PER_MM), x0:x0 + round(float(w) * PX_PER_MM)] = 0
    return img


@pytest.mark.parametrize("size", [(800.0, 800.0), (1000.0, 700.0)])
def test_the_mats_markers_calibrate_the_table_it_draws(size):
    layout = TableLayout.default(5, width_mm=size[0], height_mm=size[1])
    svg = mat_svg(layout, {"seat:0": "Ann", "turn_up": "turn-up"})
    assert re.search(rf'width="{size[0] + 2 * MAT_MARGIN_MM:g}mm" height="{size[1] + 2 * MAT_MARGIN_MM:g}mm"', svg)
    cal = from_markers(rasterise_markers(svg), size)
    assert cal.residual_px < 0.5
    m = MAT_MARGIN_MM * PX_PER_MM
    for corner, want in [((0, 0), (m, m)), (size, (m + size[0] * PX_PER_MM, m + size[1] * PX_PER_MM))]:
        assert np.allclose(cal.to_image([corner])[0], want, atol=1.0)
    drawn = {name: tuple(float(v) for v in rect) for name, *rect in re.findall(
        r'<g class="zone" data-zone="([^"]+)">\s*<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"', svg)}
    assert drawn == {z.name: (z.x, z.y, z.width, z.height) for z in layout.zones}
    assert ">Ann</text>" in svg and ">turn-up</text>" in svg and ">seat:1</text>" in svg


def test_names_are_escaped():
    svg = mat_svg(TableLayout.default(3), {"seat:0": "<Bea & Co>"})
    assert "&lt;Bea &amp; Co&gt;" in svg and "<Bea" not in svg
