"""Calibrating the camera to the table: four ArUco markers (or four marked corners) → homography.

The table frame: marker 0 at the top left (as the camera sees it), 1 top right, 2 bottom right,
3 bottom left; their *centres* are the corners of a ``width × height`` mm rectangle that the user
measures once. Markers are ``cv2.aruco.DICT_4X4_50`` ids 0–3, printed ``marker_mm`` wide
(``vision/assets/aruco_markers.svg`` is a sheet ready to print at 100 %).

Every marker contributes its four corners, so the fit uses 16 points and the RMS reprojection
error says whether the markers were measured and printed right. The checks also report how tall a
card appears in pixels in every zone: below the card reader's crop height (88 px) the card is
upscaled and its corner index reads less reliably (docs/hardware.md, "Camera height").

The file written by ``loo-table calibrate`` (``loo-table-calibration/1``, JSON) holds the
calibration and the zone layout; the config's ``camera.calibration`` names it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.classifier import CANONICAL_SIZE
from vision.geometry import Calibration, GeometryError, TableLayout

ARUCO_DICT = cv2.aruco.DICT_4X4_50
MARKER_IDS = (0, 1, 2, 3)
FORMAT = "loo-table-calibration/1"
#: A card shorter than this (pixels) is smaller than the reader's 64×88 crop: it is upscaled and
#: reads less reliably. docs/hardware.md and deploy/camera_geometry.py use the same figure.
MIN_CARD_PX = float(CANONICAL_SIZE[1])
#: Above this RMS error (pixels) the table measurements or the print scale are probably wrong.
MAX_RESIDUAL_PX = 2.0


class CalibrationError(GeometryError):
    """Calibration failed (markers not found, bad file); the message says what to fix."""


@dataclass
class Check:
    """The result of checking a calibration: reprojection error, card size per zone, warnings."""

    residual_px: float
    card_px: dict[str, float]
    markers_found: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.warnings

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "residual_px": round(self.residual_px, 3), "markers_found": self.markers_found,
                "card_px": {k: round(v, 1) for k, v in self.card_px.items()}, "warnings": self.warnings}


def marker_object_points(table_size_mm: tuple[float, float], marker_mm: float) -> dict[int, np.ndarray]:
    """Table-mm corners (clockwise from top left, as ArUco reports them) of each marker."""
    tw, th = table_size_mm
    half = marker_mm / 2
    out = {}
    for mid, (cx, cy) in zip(MARKER_IDS, [(0, 0), (tw, 0), (tw, th), (0, th)], strict=True):
        out[mid] = np.array([[cx - half, cy - half], [cx + half, cy - half], [cx + half, cy + half],
                             [cx - half, cy + half]], dtype=np.float64)
    return out


def _detect_all(image: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Every marker of the dictionary in ``image``: (id, 4×2 image corners), as the detector found them."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(ARUCO_DICT), params)
    corners, ids, _ = detector.detectMarkers(gray)
    if ids is None:
        return []
    return [(int(i), c.reshape(4, 2).astype(np.float64)) for c, i in zip(corners, ids.ravel(), strict=True)]


def detect_markers(image: np.ndarray) -> dict[int, np.ndarray]:
    """ArUco ids 0–3 found in ``image`` → their 4×2 image corners."""
    found: dict[int, np.ndarray] = {}
    for i, c in _detect_all(image):
        if i in MARKER_IDS and i not in found:
            found[i] = c
    return found


def wrong_markers(image: np.ndarray) -> str:
    """The markers in view that are not the mat's, in words ("" when there are none): another
    id of the dictionary (a sheet of other markers), or one of 0–3 twice (a sheet printed twice)."""
    seen = [i for i, _ in _detect_all(image)]
    other = sorted({i for i in seen if i not in MARKER_IDS})
    twice = sorted({i for i in seen if i in MARKER_IDS and seen.count(i) > 1})
    parts = []
    if other:
        parts.append(f"marker{'s' if len(other) > 1 else ''} {', '.join(map(str, other))} "
                     f"{'are' if len(other) > 1 else 'is'} not one of the mat's (0 to 3)")
    if twice:
        parts.append(f"marker{'s' if len(twice) > 1 else ''} {', '.join(map(str, twice))} "
                     f"{'are' if len(twice) > 1 else 'is'} in view twice")
    return "; ".join(parts)


def from_markers(image: np.ndarray, table_size_mm: tuple[float, float], *, marker_mm: float = 50.0
                 ) -> Calibration:
    """Calibrate from one image showing all four markers (a marker missing names any in view that
    are not the mat's: the likely mix-up; with all four found, another marker is no matter)."""
    found = detect_markers(image)
    missing = [i for i in MARKER_IDS if i not in found]
    if missing:
        wrong = wrong_markers(image)
        raise CalibrationError(
            f"ArUco markers {missing} not found (found {sorted(found)})"
            + (f"; {wrong}: use the markers of the table mat (or of vision/assets/aruco_markers.svg)" if wrong else "")
            + ": check that all four corner markers are in view, flat and lit")
    obj = marker_object_points(table_size_mm, marker_mm)
    src = np.concatenate([obj[i] for i in MARKER_IDS])
    dst = np.concatenate([found[i] for i in MARKER_IDS])
    hom, _ = cv2.findHomography(src, dst, 0)
    if hom is None:
        raise CalibrationError("markers found but no homography fits them (are they in a line?)")
    proj = cv2.perspectiveTransform(src.reshape(-1, 1, 2), hom).reshape(-1, 2)
    residual = float(np.sqrt(np.mean(np.sum((proj - dst) ** 2, axis=1))))
    h, w = image.shape[:2]
    return Calibration(hom, (w, h), (float(table_size_mm[0]), float(table_size_mm[1])),
                       method="aruco", residual_px=residual)


def check(calibration: Calibration, layout: TableLayout, *, markers_found: list[int] | None = None) -> Check:
    """Reprojection error and the card height in pixels at each zone's centre, with warnings."""
    card_px = {z.name: calibration.card_height_px(z.center) for z in layout.zones}
    warnings = []
    if calibration.residual_px > MAX_RESIDUAL_PX:
        warnings.append(f"marker reprojection error {calibration.residual_px:.2f} px > {MAX_RESIDUAL_PX} px: "
                        "re-measure the table size and check the sheet was printed at 100 %")
    small = {k: v for k, v in card_px.items() if v < MIN_CARD_PX}
    if small:
        warnings.append("cards look too small to read in " + ", ".join(f"{k} ({v:.0f} px)" for k, v in small.items())
                        + f": move the camera closer or raise the resolution (want ≥ {MIN_CARD_PX:.0f} px)")
    w, h = calibration.image_size
    for z in layout.zones:
        pts = calibration.to_image(z.corners())
        if pts.min() < 0 or np.any(pts[:, 0] > w) or np.any(pts[:, 1] > h):
            warnings.append(f"zone {z.name} is partly outside the camera image")
    return Check(calibration.residual_px, card_px, markers_found or [], warnings)


def save(path: str | os.PathLike[str], calibration: Calibration, layout: TableLayout, *,
         camera_controls: dict[str, Any] | None = None) -> Path:
    """Write the calibration file atomically (a power cut leaves the old file or the new one).
    ``camera_controls`` are the libcamera controls that hold exposure, white balance and focus
    where they were when the picture was taken (the homography is only true for that focus)."""
    out = Path(path)
    data: dict[str, Any] = {"format": FORMAT, "calibration": calibration.to_dict(), "layout": layout.to_dict()}
    if camera_controls:
        data["camera_controls"] = camera_controls
    tmp = out.with_name(out.name + ".tmp")
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, out)
    return out


def load(path: str | os.PathLike[str]) -> tuple[Calibration, TableLayout]:
    """Read a calibration file; any problem is a :class:`CalibrationError` naming the file."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CalibrationError(f"{p}: no such calibration file (run `loo-table calibrate`)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CalibrationError(f"{p}: unreadable calibration file ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CalibrationError(f"{p}: not a {FORMAT} file")
    try:
        return Calibration.from_dict(data["calibration"]), TableLayout.from_dict(data["layout"])
    except (KeyError, GeometryError) as exc:
        raise CalibrationError(f"{p}: {exc}") from None


def load_camera_controls(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The camera controls stored with a calibration ({} when it has none, or cannot be read:
    :func:`load` is the one that reports a bad file)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    controls = data.get("camera_controls") if isinstance(data, dict) else None
    return dict(controls) if isinstance(controls, dict) else {}


def marker_sheet_svg(*, marker_mm: float = 50.0) -> str:
    """An A4 SVG with the four markers (ids 0–3), each with its id and a 50 mm check ruler.

    Print at 100 % (no "fit to page"); cut out and tape each marker with its centre on a table
    corner: 0 top left as the camera sees it, then clockwise.
    """
    dictionary = cv2.aruco.getPredefinedDictionary(ARUCO_DICT)
    cells = 6  # 4×4 bits plus the black border
    cell = marker_mm / cells
    parts = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<svg xmlns="http://www.w3.org/2000/svg" width="210mm" height="297mm" viewBox="0 0 210 297">',
             '<rect width="210" height="297" fill="white"/>',
             '<text x="105" y="14" font-family="sans-serif" font-size="5" text-anchor="middle">'
             f'loo-table ArUco markers (DICT_4X4_50, ids 0-3), {marker_mm:g} mm: print at 100 %</text>']
    for k, mid in enumerate(MARKER_IDS):
        img = cv2.aruco.generateImageMarker(dictionary, mid, cells)
        ox = 25 + (k % 2) * 95
        oy = 30 + (k // 2) * 120
        parts.append(f'<g transform="translate({ox},{oy})" shape-rendering="crispEdges">')
        for r in range(cells):
            for c in range(cells):
                if img[r, c] < 128:
                    parts.append(f'<rect x="{c * cell:.4f}" y="{r * cell:.4f}" width="{cell:.4f}" '
                                 f'height="{cell:.4f}" fill="black"/>')
        corner = ["top left", "top right", "bottom right", "bottom left"][k]
        parts.append(f'<text x="{marker_mm / 2}" y="{marker_mm + 9}" font-family="sans-serif" font-size="5" '
                     f'text-anchor="middle">id {mid}: {corner}</text>')
        parts.append(f'<line x1="0" y1="{marker_mm + 14}" x2="{marker_mm}" y2="{marker_mm + 14}" '
                     'stroke="black" stroke-width="0.4"/>')
        parts.append(f'<text x="{marker_mm / 2}" y="{marker_mm + 20}" font-family="sans-serif" font-size="3.5" '
                     f'text-anchor="middle">this line is {marker_mm:g} mm</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
