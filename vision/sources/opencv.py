"""USB cameras, video files and network streams through ``cv2.VideoCapture``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from vision.sources.base import FrameSource, SourceError, SourceUnavailable


class OpenCVSource(FrameSource):
    """``device`` is a camera index (``0``), a file path or a stream URL.

    ``capture_factory`` (default ``cv2.VideoCapture``) is injectable so the failure modes
    (never opens, stops delivering, driver exception) can be tested without a camera.
    """

    kind = "opencv"

    def __init__(self, device: int | str = 0, *, size: tuple[int, int] | None = (1280, 720),
                 fps: float | None = None, capture_factory: Callable[..., Any] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.device = device
        self.size = size
        self.fps = fps
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
        self._cap = cap

    def _is_camera(self) -> bool:
        """A camera index or a V4L2 device node (not a video file or a stream URL)."""
        return isinstance(self.device, int) or str(self.device).startswith("/dev/video")

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
