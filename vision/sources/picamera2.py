"""Raspberry Pi camera through picamera2 (Pi-only: it comes from apt, never from PyPI).

Two streams from one request: ``main`` (BGR, the size from the config) for reading cards and
``lores`` (YUV420, scaled by the ISP at no CPU cost) whose Y plane is the greyscale image the
watcher uses for motion checks. On a Pi 4 and older the lores stream must be YUV, so we always
ask for YUV420 and keep only the luma rows.

Four things picamera2 does not do by itself, each learnt from its source:

- It picks the sensor mode from the output size, and on a Camera Module 3 a 1280×720 output gets
  the 1536×864 mode, which is cropped to two thirds of the view. We ask for the smallest mode
  that sees the whole sensor (:mod:`vision.sources.sensor_modes`; 2304×1296 there) and let the
  ISP scale it.
- ``capture_request()`` waits for ever by default: a stalled camera would hang the camera thread.
  We pass ``wait=`` so a stall raises and the source reopens.
- ``Picamera2(n)`` opens a pipe before it finds there is no camera and never closes it: retrying
  every two seconds would run out of descriptors in half an hour. ``global_camera_info()`` is
  asked first.
- Exposure, white balance and focus are automatic unless told otherwise; ``controls`` (what
  ``loo-table calibrate`` measured, see :func:`locked_controls`) holds the picture still.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import numpy as np

from vision.sources.base import FrameSource, SourceError, SourceUnavailable
from vision.sources.sensor_modes import full_view_mode

# libcamera's AfMode values: the calibration lets continuous autofocus find the table, then fixes it.
AF_MANUAL, AF_CONTINUOUS = 0, 2
CAPTURE_TIMEOUT_S = 2.0


def sensor_request(modes: list[Mapping[str, Any]], size: tuple[int, int], fps: float) -> dict[str, Any]:
    """The ``sensor=`` argument for the full-view mode (:func:`full_view_mode`) among ``modes``
    (``Picamera2.sensor_modes``); {} leaves the choice to picamera2."""
    pick = full_view_mode(modes, size, fps)
    if pick is None:
        return {}
    sensor: dict[str, Any] = {"output_size": (int(pick["size"][0]), int(pick["size"][1]))}
    if "bit_depth" in pick:
        sensor["bit_depth"] = int(pick["bit_depth"])
    return sensor


def locked_controls(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The controls that keep the picture as it is in ``metadata`` (a frame's, once automatic
    exposure, white balance and focus have settled): exposure and gain fixed, colour gains fixed,
    the lens where autofocus put it. A camera without a focus motor reports no LensPosition."""
    out: dict[str, Any] = {}
    if "ExposureTime" in metadata and "AnalogueGain" in metadata:
        out.update(AeEnable=False, ExposureTime=int(metadata["ExposureTime"]),
                   AnalogueGain=round(float(metadata["AnalogueGain"]), 4))
    if "ColourGains" in metadata:
        red, blue = metadata["ColourGains"]
        out.update(AwbEnable=False, ColourGains=(round(float(red), 4), round(float(blue), 4)))
    if "LensPosition" in metadata:
        out.update(AfMode=AF_MANUAL, LensPosition=round(float(metadata["LensPosition"]), 4))
    return out


class Picamera2Source(FrameSource):
    """``controls`` are libcamera controls applied at start (lists become tuples, as JSON gives
    them); the ones this camera does not have (a focus lens on a Camera Module 2) are left out.
    ``capture_timeout`` is how long one frame may take before the camera counts as stalled.
    ``metadata`` holds the last frame's metadata (exposure, gains, lens position)."""

    kind = "picamera2"

    def __init__(self, *, camera: int = 0, size: tuple[int, int] = (1280, 720),
                 lores: tuple[int, int] = (320, 180), fps: float = 15.0,
                 controls: Mapping[str, Any] | None = None, capture_timeout: float = CAPTURE_TIMEOUT_S,
                 module: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.camera = int(camera)
        self.size = (int(size[0]), int(size[1]))
        # the ISP wants even lores dimensions no larger than main
        self.lores = (int(lores[0]) // 2 * 2, int(lores[1]) // 2 * 2)
        self.fps = float(fps)
        self.controls = {k: tuple(v) if isinstance(v, list) else v for k, v in (controls or {}).items()}
        self.capture_timeout = float(capture_timeout)
        self.metadata: dict[str, Any] = {}
        self.sensor: dict[str, Any] | None = None  # the mode asked for, once opened
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
            cameras = mod.Picamera2.global_camera_info()
        except Exception as exc:  # noqa: BLE001 - libcamera's camera manager failing to start
            raise SourceUnavailable(f"{self.describe()}: libcamera lists no cameras ({type(exc).__name__}: {exc})") from None
        if self.camera >= len(cameras):
            raise SourceUnavailable(f"{self.describe()}: no camera (libcamera lists {len(cameras)}; "
                                    "check the ribbon cable)")
        try:
            cam = mod.Picamera2(self.camera)
        except (IndexError, RuntimeError, OSError) as exc:
            raise SourceUnavailable(f"{self.describe()}: no camera ({type(exc).__name__}: {exc})") from None
        try:
            if self.sensor is None:
                self.sensor = sensor_request(self._modes(cam), self.size, self.fps)
            config = cam.create_video_configuration(
                main={"size": self.size, "format": "RGB888"},
                lores={"size": self.lores, "format": "YUV420"},
                sensor=dict(self.sensor),
                controls={"FrameRate": self.fps, **self._supported(cam)},
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

    def _modes(self, cam: Any) -> list[Mapping[str, Any]]:
        """``cam.sensor_modes`` (it reconfigures the camera once per mode, so it is asked once per
        source); [] when the camera cannot list them, which leaves the choice to picamera2."""
        try:
            return list(cam.sensor_modes)
        except Exception:  # noqa: BLE001 - a camera without raw modes; picamera2 still works
            return []

    def _supported(self, cam: Any) -> dict[str, Any]:
        """The requested controls this camera advertises (picamera2 refuses the others)."""
        have = getattr(cam, "camera_controls", None)
        wanted = dict(self.controls)
        if have is not None and "AeEnable" in wanted and "AeEnable" not in have:
            # libcamera 0.5 replaced AeEnable with a mode per control (0 = automatic, 1 = manual)
            mode = 0 if wanted["AeEnable"] else 1
            wanted.update(ExposureTimeMode=mode, AnalogueGainMode=mode)
        return {k: v for k, v in wanted.items() if have is None or k in have}

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
            request = self._cam.capture_request(wait=self.capture_timeout)
        except TimeoutError:
            raise SourceError(f"{self.describe()}: camera stalled: no frame within "
                              f"{self.capture_timeout:g} s") from None
        except Exception as exc:  # noqa: BLE001 - pipeline errors
            raise SourceError(f"{self.describe()}: capture failed ({type(exc).__name__}: {exc})") from None
        try:
            main = np.asarray(request.make_array("main"))
            yuv = np.asarray(request.make_array("lores"))
            meta = request.get_metadata() or {}
        finally:
            request.release()
        if main.ndim != 3 or main.shape[2] < 3:
            raise SourceError(f"{self.describe()}: unexpected main frame shape {main.shape}")
        self.metadata = dict(meta)
        main = np.ascontiguousarray(main[:, :, :3])  # RGB888 is B, G, R in memory: OpenCV order
        luma = np.ascontiguousarray(yuv[: self.lores[1], : self.lores[0]]) if yuv.ndim == 2 else None
        ts = meta.get("SensorTimestamp")
        return main, (ts / 1e9 if isinstance(ts, (int, float)) else None), luma
