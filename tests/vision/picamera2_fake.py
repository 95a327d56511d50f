"""A stand-in for the Pi-only picamera2 that works the way picamera2 0.3 works inside.

Written from picamera2's own sources (``picamera2/picamera2.py``, ``job.py``,
``previews/null_preview.py``; its ``tests/wait_cancel_test.py`` shows the intended use), because the
failures that matter on a Pi live in its machinery, not in its signatures:

- All camera work is a queue of **jobs** (``_job_list``) that an event-loop thread (the "null
  preview") runs in order whenever a frame arrives or it is prodded through the notification pipe.
  A job is done when its function returns ``(True, result)``; until then it stays at the head of
  the queue and the jobs behind it wait.
- ``capture_request(wait=T)`` queues a job and waits up to ``T`` s for it; on a timeout the caller
  gets ``TimeoutError`` but **the job stays queued**.
- ``stop()`` while the event loop runs is itself a job, queued behind whatever is pending, and waits
  for it **without a limit**: after a capture that timed out on a stalled camera (no frames come),
  ``stop()`` never returns. ``cancel_all_and_flush()`` cancels and drops every queued job, so a
  ``stop()`` after it runs at once.
- ``close()`` ends the event loop first, then stops the camera directly, then closes its pipe.
- ``Picamera2(n)`` opens its notification pipe and registers itself with the class-wide camera
  manager *before* it acquires the camera. When the camera is missing (``IndexError``) or held by
  another process (``RuntimeError`` from ``acquire()``), the half-built object is left behind:
  the manager keeps the latest one, and a dropped one closes the pipe's read end (a file object)
  but never its write end (a bare descriptor). One descriptor per failed attempt.

Knobs (class attributes, reset by the ``fake_picamera2`` fixture): ``cameras`` listed,
``busy`` (listed but held elsewhere), ``stalls`` (per new instance: frames it delivers before its
sensor stops, None for never), ``modes``, ``controls_known``, ``metadata``, ``image``.
"""

from __future__ import annotations

import os
import selectors
import sys
import threading
import types
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError, Future
from typing import Any

import numpy as np
import pytest

from vision.sources.sensor_modes import IMX708_MODES

IMX708_CONTROLS = {name: (None, None, None) for name in (
    "AeEnable", "ExposureTime", "AnalogueGain", "AwbEnable", "ColourGains", "AfMode", "LensPosition",
    "FrameDurationLimits")}


class Job:
    """picamera2's Job: a list of functions, each returning (done, result), and a Future."""

    def __init__(self, functions: list[Callable[[], tuple[bool, Any]]],
                 signal_function: Callable[[Job], None] | None = None) -> None:
        self._functions = list(functions)
        self._future: Future[Any] = Future()
        self._future.set_running_or_notify_cancel()
        self._signal_function = signal_function
        self._result: Any = None

    def execute(self) -> bool:
        """Run the functions in turn while they finish; True once all have."""
        try:
            result = None
            while self._functions:
                done, result = self._functions[0]()
                if not done:
                    break
                self._functions.pop(0)
            if not self._functions:
                self._result = result
        except Exception as exc:  # noqa: BLE001 - as picamera2: the caller gets it from get_result()
            self._future.set_exception(exc)
            self._functions = []
        return not self._functions

    def signal(self) -> None:
        if not self._future.done():
            self._future.set_result(self._result)
        if self._signal_function is not None:
            self._signal_function(self)

    def get_result(self, timeout: float | None = None) -> Any:
        return self._future.result(timeout=timeout)  # concurrent.futures' TimeoutError is TimeoutError

    def cancel(self) -> None:
        self._future.set_exception(CancelledError())


class FakeCameraManager:
    """picamera2's class-wide CameraManager, as far as the objects' lifetimes go."""

    def __init__(self) -> None:
        self.cameras: dict[int, FakePicamera2] = {}
        self._lock = threading.Lock()

    def add(self, index: int, camera: FakePicamera2) -> None:
        with self._lock:
            self.cameras[index] = camera

    def cleanup(self, index: int) -> None:
        with self._lock:
            self.cameras.pop(index, None)


class FakeRequest:
    def __init__(self, cam: FakePicamera2, number: int) -> None:
        self.cam = cam
        self.number = number

    def make_array(self, stream: str) -> np.ndarray:
        w, h = self.cam.config[stream]["size"]
        if stream == "main":
            return np.full((h, w, 3), 7, np.uint8) if FakePicamera2.image is None else FakePicamera2.image
        yuv = np.zeros((h * 3 // 2, w), np.uint8)
        yuv[:h] = 99  # luma
        return yuv

    def get_metadata(self) -> dict[str, Any]:
        return {"SensorTimestamp": 1_500_000_000 + 66_000_000 * self.cam.captures, **FakePicamera2.metadata}

    def release(self) -> None:
        self.cam.released += 1


class FakePicamera2:
    # -- the knobs ---------------------------------------------------------------------------------
    instances: list[FakePicamera2] = []
    cameras = 1
    busy = False
    stalls: list[int | None] = []
    modes: list[dict[str, Any]] = IMX708_MODES
    controls_known: dict[str, Any] = IMX708_CONTROLS
    metadata: dict[str, Any] = {}
    image: np.ndarray | None = None  # what the camera sees (else a flat grey)
    frame_interval = 0.004  # seconds between frames while streaming (tests need no real 15 fps)

    _cm = FakeCameraManager()

    @staticmethod
    def global_camera_info() -> list[dict[str, Any]]:
        return [{"Model": "imx708", "Num": i, "Id": f"/base/i2c@{i}"} for i in range(FakePicamera2.cameras)]

    def __init__(self, camera_num: int = 0, verbose_console: Any = None, tuning: Any = None,
                 allocator: Any = None) -> None:
        # picamera2's order: the pipe first, then the camera number, the manager, and acquire()
        self.notifyme_r, self.notifyme_w = os.pipe2(os.O_NONBLOCK)
        self.notifymeread = os.fdopen(self.notifyme_r, "rb")
        self._preview: _NullPreview | None = None
        self.is_open = False
        camera_num = self.global_camera_info()[camera_num]["Num"]  # IndexError when not listed
        self._cm.add(camera_num, self)
        self.camera_idx = camera_num
        self._requestslock = threading.Lock()
        self._requests: list[FakeRequest] = []
        self.lock = threading.Lock()  # protects _job_list and completed_requests
        self._job_list: list[Job] = []
        self.completed_requests: list[FakeRequest] = []
        self._max_queue_len = 1
        self._event_loop_running = False
        self.started = False
        self.camera_config: dict[str, Any] | None = None
        if FakePicamera2.busy:  # camera.acquire(): another process holds it
            raise RuntimeError("Camera __init__ sequence did not complete.")
        self.is_open = True
        # what the tests look at
        self.config: dict[str, Any] = {}
        self.configuration_calls: list[dict[str, Any]] = []
        self.set_calls: list[dict[str, Any]] = []
        self.waits: list[Any] = []
        self.closed = False
        self.captures = self.released = self.frames = 0
        self.cancelled = 0  # jobs cancel_all_and_flush() dropped
        self.stall_after = FakePicamera2.stalls.pop(0) if FakePicamera2.stalls else None
        self.cable_fixed = threading.Event()  # a stall ends (teardown) when set
        self._sensor: threading.Thread | None = None
        FakePicamera2.instances.append(self)

    # -- configuration -----------------------------------------------------------------------------
    @property
    def sensor_modes(self) -> list[dict[str, Any]]:
        return [dict(m) for m in FakePicamera2.modes]

    @property
    def camera_controls(self) -> dict[str, Any]:
        return dict(FakePicamera2.controls_known)

    def create_video_configuration(self, main={}, lores=None, raw={}, transform=None, colour_space=None,  # noqa: B006
                                   buffer_count=6, controls={}, display="main", encode="main",  # noqa: B006
                                   queue=True, sensor={}, use_case="video") -> dict[str, Any]:  # noqa: B006
        unknown = sorted(k for k in controls if k not in self.camera_controls and k != "FrameRate")
        if unknown:  # what picamera2's Controls does with a control libcamera does not advertise
            raise RuntimeError(f"Control {unknown[0]} is not advertised by libcamera")
        call = {"main": main, "lores": lores, "controls": controls, "sensor": sensor}
        self.configuration_calls.append(call)
        return dict(call)

    def set_controls(self, controls: dict[str, Any]) -> None:
        """Controls changed while streaming (the source's lock_controls): recorded."""
        self.set_calls.append(dict(controls))

    def configure(self, config: dict[str, Any]) -> None:
        if self.started:
            raise RuntimeError("Camera must be stopped before configuring")
        self.config = config
        self.camera_config = config

    # -- the event loop and the sensor ---------------------------------------------------------------
    def start(self, config: Any = None, show_preview: Any = False) -> None:
        if config is not None:
            self.configure(config)
        if self.camera_config is None:
            raise RuntimeError("Camera has not been configured")
        if show_preview is not None and not self._event_loop_running:
            _NullPreview().start(self)
        if self.started:
            return
        self.started = True
        self._sensor = threading.Thread(target=self._stream, name="fake-sensor", daemon=True)
        self._sensor.start()

    def attach_preview(self, preview: _NullPreview) -> None:
        self._preview = preview
        self._event_loop_running = True

    def detach_preview(self) -> None:
        self._preview = None
        self._event_loop_running = False

    def stop_preview(self) -> None:
        if self._preview is None:
            raise RuntimeError("No preview specified.")
        self._preview.stop()

    def _stream(self) -> None:
        """The sensor: a completed request every frame_interval while started, none while stalled."""
        stop = threading.Event()
        while self.started and not self.closed:
            stop.wait(FakePicamera2.frame_interval)
            if self.stall_after is not None and self.frames >= self.stall_after and not self.cable_fixed.is_set():
                continue  # "Camera frontend has timed out!": no more frames
            self.frames += 1
            with self._requestslock:
                self._requests.append(FakeRequest(self, self.frames))
            self._run_process_requests()

    def _run_process_requests(self) -> None:
        try:
            os.write(self.notifyme_w, b"\x00")
        except (BlockingIOError, OSError):
            pass

    def process_requests(self) -> None:
        """What the event loop runs: new frames become completed requests, then the queued jobs
        run in order until one cannot finish yet."""
        with self._requestslock:
            requests, self._requests = self._requests, []
        with self.lock:
            self.completed_requests += requests
            finished = []
            while self._job_list:
                if self._job_list[0].execute():
                    finished.append(self._job_list.pop(0))
                else:
                    break
            while len(self.completed_requests) > self._max_queue_len:
                self.completed_requests.pop(0)  # recycled to libcamera
        for job in finished:
            job.signal()

    def dispatch_functions(self, functions: list[Callable[[], tuple[bool, Any]]], wait: Any,
                           signal_function: Callable[[Job], None] | None = None, immediate: bool = False) -> Any:
        if wait is None:
            wait = signal_function is None
        timeout = None if wait is True else wait
        with self.lock:
            only_job = not self._job_list
            job = Job(functions, signal_function)
            self._job_list.append(job)
            if only_job and (self.completed_requests or immediate):
                self._run_process_requests()
        return job.get_result(timeout=timeout) if wait else job

    # -- the calls the source makes ------------------------------------------------------------------
    def capture_request_(self) -> tuple[bool, Any]:
        if not self.completed_requests:
            return (False, None)
        self.captures += 1
        return (True, self.completed_requests.pop(0))

    def capture_request(self, wait: Any = None, signal_function: Any = None, flush: Any = None) -> Any:
        self.waits.append(wait)
        return self.dispatch_functions([self.capture_request_], wait, signal_function)

    def cancel_all_and_flush(self) -> None:
        with self.lock:
            for job in self._job_list:
                job.cancel()
            self.cancelled += len(self._job_list)
            self._job_list = []

    def stop_(self, request: Any = None) -> tuple[bool, None]:
        if self.started:
            self.started = False
            with self._requestslock:
                self._requests = []
            self.completed_requests = []
        return (True, None)

    def stop(self) -> None:
        if not self.started:
            return
        if self._preview is not None and self._event_loop_running:
            self.dispatch_functions([self.stop_], wait=True, immediate=True)  # behind any pending job
        else:
            self.stop_()

    def close(self) -> None:
        if self._preview is not None:
            self.stop_preview()
        if not self.is_open:
            return
        self.stop()
        self._cm.cleanup(self.camera_idx)
        self.is_open = False
        self.closed = True
        self.notifymeread.close()
        os.close(self.notifyme_w)


class _NullPreview:
    """picamera2's NullPreview: a thread that runs process_requests when the pipe is written to."""

    def start(self, cam: FakePicamera2) -> None:
        self.cam = cam
        self.running = True
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._loop, args=(cam,), name="fake-null-preview", daemon=True)
        cam.attach_preview(self)
        self.thread.start()
        self.ready.wait()

    def _loop(self, cam: FakePicamera2) -> None:
        sel = selectors.DefaultSelector()
        sel.register(cam.notifyme_r, selectors.EVENT_READ)
        self.ready.set()
        try:
            while self.running:
                for _key, _ in sel.select(0.05):
                    try:
                        cam.notifymeread.read()
                    except (BlockingIOError, ValueError, OSError):
                        pass
                    cam.process_requests()
        finally:
            sel.close()

    def stop(self) -> None:
        self.running = False
        if self.thread is not threading.current_thread():
            self.thread.join()
        self.cam.detach_preview()


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def fake_picamera2(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    mod = types.ModuleType("picamera2")
    mod.Picamera2 = FakePicamera2  # type: ignore[attr-defined]
    FakePicamera2.instances = []
    FakePicamera2.cameras = 1
    FakePicamera2.busy = False
    FakePicamera2.stalls = []
    FakePicamera2.modes = IMX708_MODES
    FakePicamera2.controls_known = IMX708_CONTROLS
    FakePicamera2.metadata = {}
    FakePicamera2.image = None
    FakePicamera2.frame_interval = 0.004
    FakePicamera2._cm = FakeCameraManager()
    monkeypatch.setitem(sys.modules, "picamera2", mod)
    yield mod
    for cam in FakePicamera2.instances:
        cam.cable_fixed.set()  # frames again: anything still waiting on this camera finishes
    for cam in FakePicamera2.instances:
        if not cam.closed:
            try:
                cam.close()
            except Exception:  # noqa: BLE001 - a test may have left it half-way
                pass
