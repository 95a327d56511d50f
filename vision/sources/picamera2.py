"""Raspberry Pi camera through picamera2 (Pi-only: it comes from apt, never from PyPI).

Two streams from one request: ``main`` (BGR, the size from the config) for reading cards and
``lores`` (YUV420, scaled by the ISP at no CPU cost) whose Y plane is the greyscale image the
watcher uses for motion checks. On a Pi 4 and older the lores stream must be YUV, so we always
ask for YUV420 and keep only the luma rows.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from vision.sources.base import FrameSource, SourceError, SourceUnavailable


class Picamera2Source(FrameSource):
    kind = "picamera2"

    def __init__(self, *, camera: int = 0, size: tuple[int, int] = (1280, 720),
                 lores: tuple[int, int] = (320, 180), fps: float = 15.0,
                 module: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.camera = int(camera)
        self.size = (int(size[0]), int(size[1]))
        # the ISP wants even lores dimensions no larger than main
        self.lores = (int(lores[0]) // 2 * 2, int(lores[1]) // 2 * 2)
        self.fps = float(fps)
        self._module = module
        self._cam: Any = None

    def describe(self) -> str:
        return f"picamera2 camera {self.camera}"

    def _load(self) -> Any:
        if self._module is None:
            try:
                self._module = importlib.import_module("picamera2")
            except ImportError as exc:
                raise SourceUnavailable(
                    f"{self.describe()}: picamera2 is not installed ({exc}); on Raspberry Pi OS run "
                    "`apt install python3-picamera2` and use a venv with --system-site-packages") from None
        return self._module

    def _open(self) -> None:
        mod = self._load()
        try:
            cam = mod.Picamera2(self.camera)
        except (IndexError, RuntimeError, OSError) as exc:
            # picamera2 raises IndexError when no camera is attached
            raise SourceUnavailable(f"{self.describe()}: no camera ({type(exc).__name__}: {exc})") from None
        try:
            config = cam.create_video_configuration(
                main={"size": self.size, "format": "RGB888"},
                lores={"size": self.lores, "format": "YUV420"},
                controls={"FrameRate": self.fps},
            )
            cam.configure(config)
            cam.start()
        except Exception as exc:  # noqa: BLE001 - libcamera raises RuntimeError and friends
            try:
                cam.close()
            except Exception:  # noqa: BLE001
                pass
            raise SourceUnavailable(f"{self.describe()}: could not start ({type(exc).__name__}: {exc})") from None
        self._cam = cam

    def _close(self) -> None:
        cam, self._cam = self._cam, None
        if cam is not None:
            try:
                cam.stop()
            finally:
                cam.close()

    def _grab(self) -> tuple[np.ndarray, float | None, np.ndarray | None]:
        if self._cam is None:
            raise SourceError(f"{self.describe()}: not open")
        try:
            request = self._cam.capture_request()
        except Exception as exc:  # noqa: BLE001 - timeouts and pipeline errors
            raise SourceError(f"{self.describe()}: capture failed ({type(exc).__name__}: {exc})") from None
        try:
            main = np.asarray(request.make_array("main"))
            yuv = np.asarray(request.make_array("lores"))
            meta = request.get_metadata() or {}
        finally:
            request.release()
        if main.ndim != 3 or main.shape[2] < 3:
            raise SourceError(f"{self.describe()}: unexpected main frame shape {main.shape}")
        main = np.ascontiguousarray(main[:, :, :3])  # RGB888 is B, G, R in memory: OpenCV order
        luma = np.ascontiguousarray(yuv[: self.lores[1], : self.lores[0]]) if yuv.ndim == 2 else None
        ts = meta.get("SensorTimestamp")
        return main, (ts / 1e9 if isinstance(ts, (int, float)) else None), luma
