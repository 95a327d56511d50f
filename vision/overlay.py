"""Pictures of the table for people: the camera's frame with the zones drawn and labelled, and a
zone cut out of the frame, straightened to the table plane.

Why here: both need only the calibration (table millimetres to image pixels) and the layout; the
game's meaning of a zone (whose place it is, which card it holds) is given as plain label text by
the caller, so vision stays free of the rules. The dashboard's camera view draws with
:func:`draw_zones`; the unsure card's picture and the photo that proves a revoke use
:func:`zone_crop`. Both work on a copy: the frame the watcher reads is never touched.
"""

from __future__ import annotations

from collections.abc import Mapping

import cv2
import numpy as np

from vision.geometry import Calibration, TableLayout, Zone

__all__ = ["draw_zones", "encode_jpeg", "fit_width", "zone_crop"]

#: BGR: a zone with a card the camera is sure of, one it is unsure of, an empty one
SURE = (80, 200, 60)
UNSURE = (0, 170, 255)
EMPTY = (230, 230, 230)
COLOURS = {"sure": SURE, "unsure": UNSURE, "empty": EMPTY}


def fit_width(image: np.ndarray, max_width: int) -> tuple[np.ndarray, float]:
    """``image`` shrunk to at most ``max_width`` pixels wide (a copy either way) and the scale."""
    h, w = image.shape[:2]
    if w <= max_width:
        return image.copy(), 1.0
    scale = max_width / float(w)
    size = (max_width, max(1, round(h * scale)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA), scale


def _label(img: np.ndarray, text: str, origin: tuple[int, int], colour: tuple[int, int, int]) -> None:
    font, thick = cv2.FONT_HERSHEY_SIMPLEX, max(1, round(img.shape[1] / 640))
    size = max(0.5, img.shape[1] / 1100)  # readable when a phone shows the picture 360 px wide
    (tw, th), base = cv2.getTextSize(text, font, size, thick)
    x = int(min(max(origin[0], 0), max(0, img.shape[1] - tw - 6)))
    y = int(min(max(origin[1], th + 6), img.shape[0] - 2))
    cv2.rectangle(img, (x, y - th - base - 4), (x + tw + 6, y + 2), (20, 20, 20), -1)
    cv2.putText(img, text, (x + 3, y - base), font, size, colour, thick, cv2.LINE_AA)


def draw_zones(image: np.ndarray, layout: TableLayout, calibration: Calibration,
               labels: Mapping[str, tuple[str, str]], *, max_width: int = 960) -> np.ndarray:
    """The frame shrunk to ``max_width``, each zone's outline drawn where the calibration puts it
    and labelled ``labels[zone] = (text, how)``, ``how`` one of ``sure``, ``unsure``, ``empty``
    (the outline's colour; text in ASCII: OpenCV's fonts have no suit symbols). A zone without a
    label shows its name in the empty colour."""
    img, scale = fit_width(image, max_width)
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    for zone in layout.zones:
        text, how = labels.get(zone.name, (zone.name, "empty"))
        colour = COLOURS.get(how, EMPTY)
        quad = calibration.to_image(zone.corners()) * scale
        pts = np.round(quad).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(img, [pts], isClosed=True, color=colour, thickness=2, lineType=cv2.LINE_AA)
        top_left = quad[np.argmin(quad.sum(axis=1))]
        _label(img, text, (int(top_left[0]) + 2, int(top_left[1]) + 20), colour)
    return img


def zone_crop(image: np.ndarray, calibration: Calibration, zone: Zone, *, px_per_mm: float = 2.0,
              margin_mm: float = 8.0, max_side: int = 480) -> np.ndarray:
    """The zone (grown by ``margin_mm``) straightened to the table plane at ``px_per_mm``, at most
    ``max_side`` pixels on its longer side: a small picture of what lay there."""
    corners = zone.corners(margin_mm)
    w_mm = float(corners[1, 0] - corners[0, 0])
    h_mm = float(corners[2, 1] - corners[1, 1])
    scale = min(px_per_mm, max_side / max(w_mm, h_mm))
    out_w, out_h = max(1, round(w_mm * scale)), max(1, round(h_mm * scale))
    src = calibration.to_image(corners).astype(np.float32)
    dst = np.array([[0, 0], [out_w, 0], [out_w, out_h], [0, out_h]], dtype=np.float32)
    m = cv2.getPerspectiveTransform(src, dst)
    return cv2.warpPerspective(image, m, (out_w, out_h), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)


def encode_jpeg(image: np.ndarray, quality: int = 70) -> bytes:
    """JPEG bytes (ValueError when OpenCV cannot encode the array)."""
    ok, buf = cv2.imencode(".jpg", image, [int(cv2.IMWRITE_JPEG_QUALITY), int(quality)])
    if not ok:
        raise ValueError("the picture could not be encoded as JPEG")
    return bytes(buf.tobytes())
