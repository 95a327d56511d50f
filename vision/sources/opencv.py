"""USB cameras, video files and network streams through ``cv2.VideoCapture``.

A USB camera left to itself hunts: automatic exposure and white balance follow every arm over the
table, and continuous autofocus refocuses on it. ``loo-table calibrate`` lets them settle on the
table, then locks them where they settled (:meth:`OpenCVSource.lock_controls`, through OpenCV's
V4L2 properties) and stores the values in the calibration file; ``loo-table run`` opens the camera
with them (``controls``), as it does for a Pi camera's libcamera controls.

The value that means "manual exposure" differs between OpenCV's V4L2 backends (V4L2's own 1, or
0.25 in an older mapping), so every control is set, read back, and tried the other way when it did
not take; a camera without a control (no focus motor) simply has none stored.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from vision.sources.base import FrameSource, SourceError, SourceUnavailable

log = logging.getLogger("loo-table.camera")

# CAP_PROP_AUTO_EXPOSURE values: V4L2's numbering first, then OpenCV's older 0.25/0.75 mapping.
MANUAL_EXPOSURE = (1.0, 0.25)
AUTO_EXPOSURE = (3.0, 0.75)
#: What `loo-table calibrate` asks for while the picture settles: everything automatic.
AUTOMATIC: dict[str, float] = {"CAP_PROP_AUTO_EXPOSURE": AUTO_EXPOSURE[0], "CAP_PROP_AUTO_WB": 1.0,
                               "CAP_PROP_AUTOFOCUS": 1.0}
# Each value control after the switch that makes it manual (the order they must be set in).
LOCKS = (("CAP_PROP_AUTO_EXPOSURE", "CAP_PROP_EXPOSURE"), ("CAP_PROP_AUTO_WB", "CAP_PROP_WB_TEMPERATURE"),
         ("CAP_PROP_AUTOFOCUS", "CAP_PROP_FOCUS"))


def _prop(name: str) -> int | None:
    import cv2

    value = getattr(cv2, name, None)
    return int(value) if isinstance(value, int) else None


def _set_checked(cap: Any, name: str, candidates: tuple[float, ...]) -> float | None:
    """Set a property to the first of ``candidates`` that the driver keeps (read back); None if none."""
    prop = _prop(name)
    if prop is None:
        return None
    for value in candidates:
        try:
            if cap.set(prop, value) and abs(float(cap.get(prop)) - value) <= max(1e-3, 0.01 * abs(value)):
                return value
        except Exception:  # noqa: BLE001 - drivers raise anything
            continue
    return None


def _alternatives(name: str, value: float) -> tuple[float, ...]:
    """``value`` first, then what means the same on another OpenCV (auto exposure only)."""
    if name == "CAP_PROP_AUTO_EXPOSURE":
        for family in (MANUAL_EXPOSURE, AUTO_EXPOSURE):
            if any(abs(value - v) < 1e-3 for v in family):
                return (value, *[v for v in family if abs(v - value) >= 1e-3])
    return (value,)


def apply_controls(cap: Any, controls: Mapping[str, Any]) -> list[str]:
    """Set OpenCV ``CAP_PROP_*`` controls (switches before values); the names that did not take."""
    switches = {a for a, _ in LOCKS}
    ordered = sorted((k for k in controls if k.startswith("CAP_PROP_")), key=lambda k: k not in switches)
    missed = []
    for name in ordered:
        try:
            value = float(controls[name])
        except (TypeError, ValueError):
            missed.append(name)
            continue
        if _set_checked(cap, name, _alternatives(name, value)) is None:
            missed.append(name)
    return missed


class OpenCVSource(FrameSource):
    """``device`` is a camera index (``0``), a file path or a stream URL.

    ``capture_factory`` (default ``cv2.VideoCapture``) is injectable so the failure modes
    (never opens, stops delivering, driver exception) can be tested without a camera.
    """

    kind = "opencv"

    def __init__(self, device: int | str = 0, *, size: tuple[int, int] | None = (1920, 1080),
                 fps: float | None = None, controls: Mapping[str, Any] | None = None,
                 capture_factory: Callable[..., Any] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.device = device
        self.size = size
        self.fps = fps
        # OpenCV CAP_PROP_* names -> values (other names, a Pi camera's, are not for this source)
        self.controls = {k: v for k, v in (controls or {}).items() if k.startswith("CAP_PROP_")}
        self.missed: list[str] = []  # controls the camera did not take at the last open
        self._factory = capture_factory
        self._cap: Any = None

    def describe(self) -> str:
        return f"opencv camera {self.device!r}"

    def _open(self) -> None:
        if self._factory is None:
            import cv2

            self._factory = cv2.VideoCapture
        try:
            cap = self._factory(self.device)
        except Exception as exc:  # noqa: BLE001 - drivers raise anything
            raise SourceUnavailable(f"{self.describe()}: {type(exc).__name__}: {exc}") from None
        if cap is None or not cap.isOpened():
            raise SourceUnavailable(f"{self.describe()}: could not be opened (unplugged or busy?)")
        if self._is_camera():
            import cv2

            # V4L2 offers YUYV before MJPG, and uncompressed 1080p over USB 2 runs at about 5 fps:
            # ask for MJPG, and before the size (the driver lists sizes per format).
            cap.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter_fourcc(*"MJPG"))  # type: ignore[attr-defined]
            if self.size:
                cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
                cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
            if self.fps:
                cap.set(cv2.CAP_PROP_FPS, self.fps)
            if self.controls:  # exposure, white balance and focus as `loo-table calibrate` locked them
                self.missed = apply_controls(cap, self.controls)
                if self.missed:
                    log.warning("%s: the camera did not take %s; the picture may drift",
                                self.describe(), ", ".join(self.missed))
        self._cap = cap

    def _is_camera(self) -> bool:
        """A camera index or a V4L2 device node: ``/dev/video2``, or a stable name such as
        ``/dev/v4l/by-id/usb-046d_C920-video-index0`` (not a video file or a stream URL)."""
        return isinstance(self.device, int) or str(self.device).startswith(("/dev/video", "/dev/v4l/"))

    def lock_controls(self) -> dict[str, float]:
        """Fix exposure, white balance and focus where the automatic ones are now (call it once the
        picture has settled): each switched to manual and set to the value it had, as far as the
        camera has the control. Returns what took, for the calibration file ({}: nothing did)."""
        cap = self._cap
        if cap is None or not self._is_camera():
            return {}
        locked: dict[str, float] = {}
        for switch, value_name in LOCKS:
            prop = _prop(value_name)
            if prop is None:
                continue
            try:
                settled = float(cap.get(prop))
            except Exception:  # noqa: BLE001
                continue
            manual = _set_checked(cap, switch, MANUAL_EXPOSURE if switch == "CAP_PROP_AUTO_EXPOSURE" else (0.0,))
            if manual is None:
                continue
            if _set_checked(cap, value_name, (settled,)) is None:
                continue
            locked[switch] = manual
            locked[value_name] = round(float(cap.get(prop)), 4)
        return locked

    def _close(self) -> None:
        if self._cap is not None:
            try:
                self._cap.release()
            finally:
                self._cap = None

    def _grab(self) -> tuple[np.ndarray, float | None, np.ndarray | None]:
        if self._cap is None:
            raise SourceError(f"{self.describe()}: not open")
        try:
            ok, image = self._cap.read()
        except Exception as exc:  # noqa: BLE001
            raise SourceError(f"{self.describe()}: driver error: {type(exc).__name__}: {exc}") from None
        if not ok or image is None:
            raise SourceError(f"{self.describe()}: no frame (camera stopped delivering)")
        return _as_bgr(image), None, None


def _as_bgr(image: np.ndarray) -> np.ndarray:
    if image.ndim == 2:
        return np.repeat(image[:, :, None], 3, axis=2)
    if image.shape[2] == 4:
        return np.ascontiguousarray(image[:, :, :3])
    return image
