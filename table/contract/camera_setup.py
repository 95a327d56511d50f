"""Setting the camera up from the phone: calibrating while the table runs.

`web.create_app(service, camera_setup=...)` takes an object with this protocol; the Admin page's
camera section sends a `CalibrateRequest` and shows the `CalibrationReport` (the figures and the
warnings in plain words). None (no camera): the page says calibration needs the camera.
Nothing here imports Flask, OpenCV or numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypedDict, runtime_checkable

__all__ = ["CalibrateRequest", "CalibrationReport", "CameraSetup", "check_calibrate"]


@dataclass(frozen=True, slots=True)
class CalibrateRequest:
    """Calibrate from the camera's latest frame: from the four ArUco markers, or from the four
    corners of the table frame tapped on the picture (``corners``: top left, top right, bottom
    right, bottom left, each as a fraction 0..1 of the picture's width and height).
    ``table_mm``: marker centre to marker centre (or corner to corner), millimetres."""


    table_mm: tuple[float, float] = (800.0, 800.0)
    marker_mm: float = 50.0
    corners: tuple[tuple[float, float], ...] | None = None
    #: fix exposure, white balance and focus where they are now (kept in the calibration file)
    lock: bool = True


class CalibrationReport(TypedDict):
    """What a calibration found and did: ``card_px`` is how tall a card looks in each zone (by
    the name the host reads), ``warnings`` plain sentences, ``saved`` the file written."""

    ok: bool
    method: str
    residual_px: float
    markers_found: list[int]
    card_px: dict[str, float]
    warnings: list[str]
    saved: str
    message: str
    locked: list[str]  # the camera controls now fixed ([]: left as they were)
    camera: str  # one sentence on exposure, white balance and focus


@runtime_checkable
class CameraSetup(Protocol):
    def calibrate(self, request: CalibrateRequest) -> CalibrationReport:
        """Calibrate, save the calibration file and have the camera use it at once (no restart);
        ``ValueError`` with a sentence for the host when it cannot (no picture, markers not
        found, corners that make no table), and then nothing changed."""
        ...


def _number(value: object, name: str, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not lo <= float(value) <= hi:
        raise ValueError(f"{name} must be a number from {lo:g} to {hi:g}")
    return float(value)


def check_calibrate(payload: object) -> CalibrateRequest:
    """A JSON payload as a `CalibrateRequest` (``ValueError`` with the reason)."""
    if not isinstance(payload, dict):
        raise ValueError("the request body must be a JSON object")
    extra = sorted(set(payload) - {"table_mm", "marker_mm", "corners", "lock"})
    if extra:
        raise ValueError(f"unexpected field(s): {', '.join(extra)}")
    size = payload.get("table_mm", [800, 800])
    if not isinstance(size, list) or len(size) != 2:
        raise ValueError("table_mm must be [width, height] in millimetres")
    table_mm = (_number(size[0], "the table's width", 200, 3000), _number(size[1], "the table's height", 200, 3000))
    marker_mm = _number(payload.get("marker_mm", 50), "the marker size", 10, 200)
    lock = payload.get("lock", True)
    if not isinstance(lock, bool):
        raise ValueError("lock must be true or false")
    corners = payload.get("corners")
    if corners is None:
        return CalibrateRequest(table_mm, marker_mm, None, lock)
    if not isinstance(corners, list) or len(corners) != 4 or not all(isinstance(c, list) and len(c) == 2 for c in corners):
        raise ValueError("corners must be the four corners tapped: [[x, y], ...] as fractions of the picture")
    points = tuple((_number(c[0], "a corner's x", 0, 1), _number(c[1], "a corner's y", 0, 1)) for c in corners)
    return CalibrateRequest(table_mm, marker_mm, points, lock)
