"""Raspberry Pi camera through picamera2 (Pi-only: it comes from apt, never from PyPI).

Two streams from one request: ``main`` (BGR, the size from the config) for reading cards and
``lores`` (YUV420, scaled by the ISP at no CPU cost) whose Y plane is the greyscale image the
watcher uses for motion checks. On a Pi 4 and older the lores stream must be YUV, so we always
ask for YUV420 and keep only the luma rows.

Five things picamera2 does not do by itself, each learnt from its source:

- It picks the sensor mode from the output size, and on a Camera Module 3 a 1280×720 output gets
  the 1536×864 mode, which is cropped to two thirds of the view. We ask for the smallest mode
  that sees the whole sensor (:mod:`vision.sources.sensor_modes`; 2304×1296 there) and let the
  ISP scale it.
- ``capture_request()`` waits for ever by default: a stalled camera would hang the camera thread.
  We pass ``wait=`` so a stall raises (picamera2 0.3.20 and later honour it; the installer
  refuses older ones) and the source reopens.
- A capture that timed out stays in picamera2's job queue, and ``stop()`` is a job queued behind
  it that waits without limit: stopping a stalled camera would hang for ever. We call
  ``cancel_all_and_flush()`` first (what picamera2's own ``tests/wait_cancel_test.py`` does), and
  give the stop a deadline all the same (:attr:`Picamera2Source.wedged` says when it ran out).
- ``Picamera2(n)`` opens a pipe before it finds there is no camera, or that another program holds
  it, and never closes it: retrying every two seconds would run out of descriptors in half an
  hour. ``global_camera_info()`` is asked first, and a camera that is listed but busy has its
  half-built object's pipe closed here (:func:`discard_unopened`).
- Exposure, white balance and focus are automatic unless told otherwise; ``controls`` (what
  ``loo-table calibrate`` measured, see :func:`locked_controls`) holds the picture still.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from vision.sources.base import FrameSource, SourceError, SourceStalled, SourceUnavailable
from vision.sources.sensor_modes import full_view_mode

# libcamera's AfMode values: the calibration lets continuous autofocus find the table, then fixes it.
AF_MANUAL, AF_CONTINUOUS = 0, 2
CAPTURE_TIMEOUT_S = 2.0
#: How long stopping and closing a stalled camera may take before it counts as wedged.
CLOSE_TIMEOUT_S = 8.0
#: The oldest picamera2 whose ``capture_request(wait=...)`` times out (deploy/install-pi.sh checks it).
MIN_PICAMERA2 = (0, 3, 20)

log = logging.getLogger("loo-table.camera")


def picamera2_version(module: Any) -> tuple[int, ...] | None:
    """picamera2's version as numbers (from its package metadata, else ``__version__``); None
    when neither says."""
    text: str | None = None
    try:
        from importlib.metadata import version

        text = version("picamera2")
    except Exception:  # noqa: BLE001 - not installed as a distribution (a test double, a checkout)
        text = getattr(module, "__version__", None)
    if not isinstance(text, str):
        return None
    import re

    numbers = []
    for part in text.split("."):
        digits = re.match(r"\d+", part)  # "27-1" (a Debian revision) is 27
        if digits is None:
            break
        numbers.append(int(digits.group()))
        if digits.end() < len(part):
            break
    return tuple(numbers) or None


def discard_unopened(cam: Any) -> None:
    """Free what a ``Picamera2`` whose ``__init__`` failed still holds: its notification pipe (both
    ends) and the camera manager's reference to it. picamera2's own ``close()`` returns early for a
    camera that never opened, so without this every failed attempt on a busy camera leaks a
    descriptor (the write end; the read end goes when the object is collected)."""
    reader = getattr(cam, "notifymeread", None)
    try:
        if reader is not None:
            reader.close()
        elif isinstance(getattr(cam, "notifyme_r", None), int):
            os.close(cam.notifyme_r)
    except OSError:
        pass
    writer = getattr(cam, "notifyme_w", None)
    if isinstance(writer, int):
        try:
            os.close(writer)
        except OSError:
            pass
        cam.notifyme_w = None  # never closed twice (the descriptor number may be reused)
    manager = getattr(type(cam), "_cm", None)
    cameras = getattr(manager, "cameras", None)
    index = getattr(cam, "camera_idx", None)
    if isinstance(cameras, dict) and index is not None and cameras.get(index) is cam:
        try:
            manager.cleanup(index)  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - picamera2's bookkeeping only; the pipe is closed
            pass


def shut_down(cam: Any) -> None:
    """Stop and close a Picamera2 that may be stalled: cancel its queued jobs first, or ``stop()``
    waits behind the capture that timed out (picamera2's advice for a camera that stopped answering)."""
    flush = getattr(cam, "cancel_all_and_flush", None)
    if callable(flush):
        try:
            flush()
        except Exception:  # noqa: BLE001 - still try to stop it
            pass
    try:
        cam.stop()
    finally:
        cam.close()


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
    ``capture_timeout`` is how long one frame may take before the camera counts as stalled;
    ``close_timeout`` how long stopping it may take before it counts as wedged (:attr:`wedged`).
    ``metadata`` holds the last frame's metadata (exposure, gains, lens position)."""

    kind = "picamera2"

    def __init__(self, *, camera: int = 0, size: tuple[int, int] = (1920, 1080),
                 lores: tuple[int, int] = (320, 180), fps: float = 15.0,
                 controls: Mapping[str, Any] | None = None, capture_timeout: float = CAPTURE_TIMEOUT_S,
                 close_timeout: float = CLOSE_TIMEOUT_S, module: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.camera = int(camera)
        self.size = (int(size[0]), int(size[1]))
        # the ISP wants even lores dimensions no larger than main
        self.lores = (int(lores[0]) // 2 * 2, int(lores[1]) // 2 * 2)
        self.fps = float(fps)
        # libcamera controls (a USB camera's OpenCV CAP_PROP_* values in the same file are not for it)
        self.controls = {k: tuple(v) if isinstance(v, list) else v for k, v in (controls or {}).items()
                         if not k.startswith("CAP_PROP_")}
        self.capture_timeout = float(capture_timeout)
        self.close_timeout = float(close_timeout)
        self.metadata: dict[str, Any] = {}
        self.version: tuple[int, ...] | None = None  # picamera2's, once loaded
        self._closing: threading.Thread | None = None  # a stop that ran past close_timeout
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
            self.version = picamera2_version(self._module)
            if self.version is not None and self.version < MIN_PICAMERA2:
                log.warning("picamera2 %s is older than %s: its capture timeout does not work, so a "
                            "stalled camera is only noticed by the watchdog (a restart); update it: "
                            "sudo apt update && sudo apt full-upgrade", ".".join(map(str, self.version)),
                            ".".join(map(str, MIN_PICAMERA2)))
        return self._module

    @property
    def wedged(self) -> str | None:
        """Why the camera cannot be reopened in this process (a stalled camera that did not stop
        within ``close_timeout``), or None. Only a restart of the service frees it then."""
        closing = self._closing
        if closing is None:
            return None
        if not closing.is_alive():
            self._closing = None
            return None
        return (f"{self.describe()}: the stalled camera did not stop within {self.close_timeout:g} s; "
                "restarting the service to free it")

    def _open(self) -> None:
        mod = self._load()
        wedged = self.wedged
        if wedged is not None:
            raise SourceUnavailable(wedged)
        try:
            cameras = mod.Picamera2.global_camera_info()
        except Exception as exc:  # noqa: BLE001 - libcamera's camera manager failing to start
            raise SourceUnavailable(f"{self.describe()}: libcamera lists no cameras ({type(exc).__name__}: {exc})") from None
        if self.camera >= len(cameras):
            raise SourceUnavailable(f"{self.describe()}: no camera (libcamera lists {len(cameras)}; "
                                    "check the ribbon cable)")
        cls = mod.Picamera2
        cam = cls.__new__(cls)  # held here, so that a failed __init__ can be tidied up
        try:
            cam.__init__(self.camera)
        except (IndexError, RuntimeError, OSError) as exc:
            discard_unopened(cam)
            if isinstance(exc, IndexError):
                raise SourceUnavailable(f"{self.describe()}: no camera ({type(exc).__name__}: {exc})") from None
            raise SourceUnavailable(
                f"{self.describe()}: the camera is there but could not be opened: another program may be "
                f"using it (rpicam-hello, rpicam-vid, a second loo-table) ({type(exc).__name__}: {exc})") from None
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

    def lock_controls(self) -> dict[str, Any]:
        """Fix exposure, white balance and focus where they are in the last frame's metadata
        (`locked_controls`), on the running camera, as far as it has the controls; returns what
        was set, for the calibration file ({}: not streaming, or no metadata yet). Call it on
        the thread that reads the frames."""
        cam = self._cam
        if cam is None or not self.metadata:
            return {}
        locked = locked_controls(self.metadata)
        before, self.controls = self.controls, {**self.controls, **locked}
        wanted = self._supported(cam)
        if not wanted:
            self.controls = before
            return {}
        cam.set_controls(wanted)
        return {k: v for k, v in locked.items() if k in wanted}

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
        """Stop and close the camera (:func:`shut_down`) on a helper thread, waiting at most
        ``close_timeout``: should libcamera itself hang in stopping a stalled camera, this thread
        goes on and :attr:`wedged` says why the camera cannot be reopened."""
        cam, self._cam = self._cam, None
        if cam is None:
            return
        failed: list[BaseException] = []

        def stop() -> None:
            try:
                shut_down(cam)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller below
                failed.append(exc)

        closing = threading.Thread(target=stop, name=f"picamera2-{self.camera}-stop", daemon=True)
        closing.start()
        closing.join(self.close_timeout)
        if closing.is_alive():
            self._closing = closing
            log.error("%s", self.wedged)
            return
        if failed and isinstance(failed[0], Exception):
            raise failed[0]

    def _grab(self) -> tuple[np.ndarray, float | None, np.ndarray | None]:
        if self._cam is None:
            raise SourceError(f"{self.describe()}: not open")
        try:
            request = self._cam.capture_request(wait=self.capture_timeout)
        except TimeoutError:
            raise SourceStalled(f"{self.describe()}: camera stalled: no frame within "
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
