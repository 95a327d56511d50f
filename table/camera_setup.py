"""Calibrating the camera from the phone while the table runs (`table.contract.camera_setup`).

The same steps as `loo-table calibrate` (`vision.calibration`: the markers or four corners, the
checks, the file), on the camera view's latest frame, with no service stopped: the new
calibration is saved where the config names it and handed to the camera thread at once
(``apply``: the controller builds a new watcher, as it does when the host moves the zones).
The camera's exposure, white balance and focus locks stored in the file are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from table.camera_view import CameraView, zone_labels
from table.contract.camera_setup import CalibrateRequest, CalibrationReport

if TYPE_CHECKING:  # OpenCV loads only when the host calibrates
    from vision.geometry import Calibration, TableLayout

__all__ = ["CameraCalibrator"]


class CameraCalibrator:
    """``path``: the calibration file; ``seats()``: players now (the default layout's seats);
    ``apply(layout, calibration)``: the camera reads with them from its next frame; ``lock()``
    fixes the running camera's exposure, white balance and focus where they are and returns the
    controls it set (None: this camera cannot, a synthetic one or a recording)."""

    def __init__(self, view: CameraView, *, path: Path, seats: Callable[[], int],
                 apply: Callable[[TableLayout, Calibration], None], names: Callable[[], Sequence[str]] = lambda: (),
                 lock: Callable[[], dict[str, object]] | None = None) -> None:
        self.lock = lock  # fixes the running camera's exposure, white balance, focus (None: cannot)
        self.view = view
        self.path = Path(path)
        self.seats = seats
        self.apply = apply
        self.names = names

    def calibrate(self, request: CalibrateRequest) -> CalibrationReport:
        from vision import calibration as cal
        from vision.geometry import Calibration, GeometryError, TableLayout

        frame, _ = self.view.latest()
        if frame is None:
            raise ValueError("There is no picture from the camera yet: check that it is plugged in, then try again.")
        h, w = frame.shape[:2]
        seats = min(8, max(2, self.seats()))
        try:
            layout = TableLayout.default(seats, width_mm=request.table_mm[0], height_mm=request.table_mm[1])
            if request.corners:
                px = [(x * w, y * h) for x, y in request.corners]
                calibration = Calibration.from_corners(px, request.table_mm, (w, h))
                found: list[int] = []
            else:
                calibration = cal.from_markers(frame, request.table_mm, marker_mm=request.marker_mm)
                found = sorted(cal.detect_markers(frame))
        except cal.CalibrationError as exc:
            raise ValueError(_plain(str(exc))) from None
        except GeometryError as exc:
            raise ValueError(f"Those corners make no table ({exc}): tap the four corners again, "
                             "top left first, then clockwise.") from None
        result = cal.check(calibration, layout, markers_found=found)
        controls = cal.load_camera_controls(self.path) if self.path.is_file() else {}
        self.apply(layout, calibration)  # ValueError (zones the host drew that no longer fit): nothing saved
        locked, camera = self._locked(request.lock)
        controls = locked or controls
        try:
            cal.save(self.path, calibration, layout, camera_controls=controls)
        except OSError as exc:
            raise ValueError(f"The camera uses the new calibration, but it could not be saved to {self.path} "
                             f"({exc.strerror or exc}): the next start uses the old one.") from None
        names = zone_labels(None, [z.name for z in layout.zones], list(self.names()))
        warnings = [_plain(_named(w, {k: v[0] for k, v in names.items()})) for w in result.warnings]
        turned = "" if request.corners else _turned(calibration, (w, h), list(self.names()))
        if turned:
            warnings.append(turned)
        how = "the four markers" if not request.corners else "the four corners you tapped"
        return {"ok": result.ok, "method": calibration.method, "residual_px": round(result.residual_px, 2),
                "markers_found": found,
                "card_px": {names[k][0]: round(v, 1) for k, v in result.card_px.items()},
                "warnings": warnings, "saved": str(self.path), "locked": sorted(locked), "camera": camera,
                "message": (f"Calibrated from {how}; the camera uses it now"
                            + (" (see the warnings below)." if warnings else ". All checks passed."))}


    def _locked(self, wanted: bool) -> tuple[dict[str, object], str]:
        """(the controls fixed now, the sentence on the camera's picture)."""
        if not wanted:
            return {}, "Exposure, white balance and focus were left as they were."
        if self.lock is None:
            return {}, "This camera has no exposure, white balance or focus to lock."
        try:
            locked = self.lock()
        except Exception as exc:  # noqa: BLE001 - the calibration stands; the picture stays automatic
            return {}, f"Exposure, white balance and focus could not be locked ({exc}); they stay automatic."
        if not locked:
            return {}, "This camera reports no exposure, white balance or focus to lock; they stay as they were."
        return locked, ("Exposure, white balance and focus are locked where they are now (kept for the next "
                        "start): calibrate again if the room's light changes.")


#: the picture's corners, in the order of the table's (marker 0, 1, 2, 3)
CORNERS = ("top left", "top right", "bottom right", "bottom left")


def _turned(calibration: Calibration, size: tuple[int, int], players: Sequence[str]) -> str:
    """A sentence when marker 0 is not at the top left of the picture (the mat turned round, or
    the camera): the calibration holds, but the places are drawn where the mat has them."""
    import numpy as np

    w, h = size
    seen = np.asarray(calibration.to_image([[0.0, 0.0]]), dtype=float)[0]
    picture = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=float)
    where = int(np.argmin(np.linalg.norm(picture - seen, axis=1)))
    if where == 0:
        return ""
    first = f"{players[0]}'s place" if players else "the first seat's place"
    return (f"Marker 0 is at the {CORNERS[where]} of the picture, not the top left: the mat (or the camera) "
            f"is turned round, so {first} is where the mat has it, not where the picture's top left is. "
            "If the players sit at the mat's places this is fine; otherwise turn the mat so that marker 0 is "
            "at the top left of the picture and calibrate again.")


def _named(text: str, names: dict[str, str]) -> str:
    """Zone names in a message as the host reads them (``seat:0`` -> ``Ann``)."""
    for zone in sorted(names, key=len, reverse=True):
        text = text.replace(f"zone {zone}", names[zone]).replace(zone, names[zone])
    return text


def _plain(text: str) -> str:
    """A calibration message as a sentence: capital first, full stop last."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."
