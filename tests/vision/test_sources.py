"""Frame sources against their failure modes: never opens, stops delivering, driver errors,
truncated and unreadable recordings, a missing picamera2; reopening with backoff (no real sleeps)."""
# ruff: noqa: F811 (the fake_picamera2 fixture imported from picamera2_fake is a test argument of the same name)

from __future__ import annotations

import json
import os
import sys
import threading
import types

import cv2
import numpy as np
import pytest

from vision.sources import (
    Backoff,
    SourceCorrupt,
    SourceStalled,
    SourceUnavailable,
    open_source,
)
from vision.sources.opencv import OpenCVSource
from vision.sources.picamera2 import Picamera2Source
from vision.sources.replay import ReplaySource, write_recording


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []
        self.now = 0.0

    def sleep(self, s: float) -> None:
        self.calls.append(s)
        self.now += s

    def clock(self) -> float:
        return self.now


class FakeCapture:
    """A cv2.VideoCapture stand-in following a script of read results."""

    def __init__(self, opened: bool = True, frames: int = 10 ** 6, raise_on_read: bool = False) -> None:
        self.opened = opened
        self.frames = frames
        self.raise_on_read = raise_on_read
        self.released = False
        self.props: dict[int, float] = {}
        self.set_calls: list[int] = []  # property ids in the order they were set

    def isOpened(self) -> bool:  # noqa: N802 - OpenCV's name
        return self.opened

    def set(self, prop: int, value: float) -> bool:  # cv2.VideoCapture.set(propId, value) -> retval
        self.props[prop] = value
        self.set_calls.append(prop)
        return True

    def read(self) -> tuple[bool, np.ndarray | None]:
        if self.raise_on_read:
            raise cv2.error("VIDIOC_DQBUF: No such device")
        if self.frames <= 0:
            return False, None
        self.frames -= 1
        return True, np.zeros((8, 12, 3), np.uint8)

    def release(self) -> None:
        self.released = True


def factory(*captures: FakeCapture):
    made: list[FakeCapture] = []
    queue = list(captures)

    def make(device):  # noqa: ANN001, ANN202
        cap = queue.pop(0) if queue else FakeCapture(opened=False)
        made.append(cap)
        return cap

    make.made = made  # type: ignore[attr-defined]
    return make


# -- opencv ------------------------------------------------------------------------------------
def test_opencv_camera_missing_gives_up_with_backoff() -> None:
    s = Sleeps()
    src = OpenCVSource(0, capture_factory=factory(), backoff=Backoff(attempts=4, initial=0.5, maximum=2.0),
                       sleep=s.sleep, clock=s.clock)
    with pytest.raises(SourceUnavailable, match="opencv camera 0.*gave up after 4"):
        src.open()
    assert s.calls == [0.5, 1.0, 2.0, 2.0]


def test_opencv_unplugged_then_back_reopens_and_continues() -> None:
    s = Sleeps()
    first = FakeCapture(frames=2)
    make = factory(first, FakeCapture(opened=False), FakeCapture(frames=5))
    src = OpenCVSource(0, capture_factory=make, backoff=Backoff(attempts=3, initial=0.25), sleep=s.sleep,
                       clock=s.clock)
    with src:
        frames = [src.read() for _ in range(4)]
    assert [f.index for f in frames] == [0, 1, 2, 3]
    assert src.reopens == 1
    assert first.released
    assert s.calls == [0.25]  # reopen: the immediate try failed, the one after 0.25 s worked


def test_opencv_driver_error_is_a_source_error_after_retries() -> None:
    s = Sleeps()
    make = factory(*[FakeCapture(raise_on_read=True) for _ in range(5)])
    src = OpenCVSource("/dev/video9", capture_factory=make, backoff=Backoff(attempts=2, initial=0.1),
                       sleep=s.sleep, clock=s.clock)
    with pytest.raises(SourceUnavailable, match="/dev/video9"):
        with src:
            src.read()


def test_opencv_sets_size_and_fps_on_a_camera_index() -> None:
    cap = FakeCapture()
    src = OpenCVSource(1, size=(640, 480), fps=10, capture_factory=factory(cap))
    with src:
        assert src.read().image.shape == (8, 12, 3)
    assert cap.props[cv2.CAP_PROP_FRAME_WIDTH] == 640 and cap.props[cv2.CAP_PROP_FPS] == 10
    assert cap.released


@pytest.mark.parametrize("device", [0, "/dev/video2"])
def test_opencv_camera_asks_for_mjpg_before_the_size(device) -> None:
    """V4L2 would deliver YUYV, about 5 fps at 1080p over USB 2."""
    cap = FakeCapture()
    with OpenCVSource(device, size=(1920, 1080), fps=15, capture_factory=factory(cap)) as src:
        src.read()
    assert cap.props[cv2.CAP_PROP_FOURCC] == cv2.VideoWriter_fourcc(*"MJPG")
    assert cap.set_calls[0] == cv2.CAP_PROP_FOURCC  # the sizes a driver offers depend on the format
    assert cap.set_calls.index(cv2.CAP_PROP_FRAME_WIDTH) > 0


def test_opencv_video_file_is_left_as_recorded(tmp_path) -> None:
    cap = FakeCapture()
    with OpenCVSource(str(tmp_path / "night.avi"), capture_factory=factory(cap)) as src:
        src.read()
    assert cap.set_calls == []


class V4L2Capture(FakeCapture):
    """A USB camera behind OpenCV's V4L2 backend: automatic exposure, white balance and focus
    that move the values they own, manual values only taken in manual mode, and (``legacy``)
    OpenCV's older 0.25/0.75 numbering for auto exposure. ``focus=False``: no focus motor."""

    def __init__(self, *, legacy: bool = False, focus: bool = True, image=None, **kw) -> None:  # noqa: ANN001
        super().__init__(**kw)
        self.manual_value, self.auto_value = (0.25, 0.75) if legacy else (1.0, 3.0)
        self.focus = focus
        self.image = image
        self.props.update({cv2.CAP_PROP_AUTO_EXPOSURE: self.auto_value, cv2.CAP_PROP_EXPOSURE: 100.0,
                           cv2.CAP_PROP_AUTO_WB: 1.0, cv2.CAP_PROP_WB_TEMPERATURE: 4000.0})
        if focus:
            self.props.update({cv2.CAP_PROP_AUTOFOCUS: 1.0, cv2.CAP_PROP_FOCUS: 0.0})

    def set(self, prop: int, value: float) -> bool:
        if prop == cv2.CAP_PROP_AUTO_EXPOSURE and value not in (self.manual_value, self.auto_value):
            return False
        if prop in (cv2.CAP_PROP_AUTOFOCUS, cv2.CAP_PROP_FOCUS) and not self.focus:
            return False
        manual = {cv2.CAP_PROP_EXPOSURE: self.props[cv2.CAP_PROP_AUTO_EXPOSURE] == self.manual_value,
                  cv2.CAP_PROP_WB_TEMPERATURE: self.props[cv2.CAP_PROP_AUTO_WB] == 0,
                  cv2.CAP_PROP_FOCUS: self.props.get(cv2.CAP_PROP_AUTOFOCUS) == 0}
        if not manual.get(prop, True):
            return False  # the automatic loop owns it
        return super().set(prop, value)

    def get(self, prop: int) -> float:
        return float(self.props.get(prop, 0.0))

    def read(self):  # noqa: ANN201
        ok, image = super().read()
        if ok:  # the automatic loops move what they own, frame by frame
            for switch, auto, value, step in (
                    (cv2.CAP_PROP_AUTO_EXPOSURE, self.auto_value, cv2.CAP_PROP_EXPOSURE, 7.0),
                    (cv2.CAP_PROP_AUTO_WB, 1.0, cv2.CAP_PROP_WB_TEMPERATURE, 50.0),
                    (cv2.CAP_PROP_AUTOFOCUS, 1.0, cv2.CAP_PROP_FOCUS, 5.0)):
                if self.props.get(switch) == auto and value in self.props:
                    self.props[value] += step
        return ok, (self.image if ok and self.image is not None else image)


@pytest.mark.parametrize("legacy", [False, True])
def test_a_usb_camera_is_locked_where_it_settled_and_opened_locked(legacy) -> None:
    from vision.sources.opencv import AUTOMATIC

    cap = V4L2Capture(legacy=legacy)
    with OpenCVSource("/dev/video0", controls=AUTOMATIC, capture_factory=factory(cap)) as src:
        for _ in range(4):
            src.read()
        locked = src.lock_controls()
    manual = 0.25 if legacy else 1.0
    assert locked == {"CAP_PROP_AUTO_EXPOSURE": manual, "CAP_PROP_EXPOSURE": 128.0, "CAP_PROP_AUTO_WB": 0.0,
                      "CAP_PROP_WB_TEMPERATURE": 4200.0, "CAP_PROP_AUTOFOCUS": 0.0, "CAP_PROP_FOCUS": 20.0}
    # the next start (`loo-table run`): the same values, held still from the first frame on
    again = V4L2Capture(legacy=legacy)
    stored = json.loads(json.dumps({**locked, "CAP_PROP_AUTO_EXPOSURE": 1.0}))  # made with another OpenCV
    with OpenCVSource("/dev/video0", controls=stored, capture_factory=factory(again)) as src:
        for _ in range(3):
            src.read()
        assert src.missed == []
    assert again.props[cv2.CAP_PROP_EXPOSURE] == 128.0 and again.props[cv2.CAP_PROP_WB_TEMPERATURE] == 4200.0
    assert again.props[cv2.CAP_PROP_FOCUS] == 20.0 and again.props[cv2.CAP_PROP_AUTO_EXPOSURE] == manual
    assert again.set_calls.index(cv2.CAP_PROP_AUTO_EXPOSURE) < again.set_calls.index(cv2.CAP_PROP_EXPOSURE)


def test_a_usb_camera_without_a_focus_motor_locks_the_rest() -> None:
    cap = V4L2Capture(focus=False)
    with OpenCVSource(0, capture_factory=factory(cap)) as src:
        src.read()
        locked = src.lock_controls()
    assert "CAP_PROP_FOCUS" not in locked and locked["CAP_PROP_AUTO_WB"] == 0.0
    # a Pi camera's controls in the same file mean nothing to a USB camera
    assert OpenCVSource(0, controls={"AeEnable": False, "CAP_PROP_FOCUS": 3}).controls == {"CAP_PROP_FOCUS": 3}


@pytest.mark.parametrize("device", ["/dev/v4l/by-id/usb-046d_HD_Pro_Webcam_C920_1234-video-index0",
                                    "/dev/v4l/by-path/platform-xhci-hcd.0-usb-0:1:1.0-video-index0"])
def test_a_stable_v4l_name_is_a_camera_with_mjpg_and_the_size(device) -> None:
    cap = FakeCapture()
    with OpenCVSource(device, size=(1920, 1080), capture_factory=factory(cap)) as src:
        src.read()
    assert cap.props[cv2.CAP_PROP_FOURCC] == cv2.VideoWriter_fourcc(*"MJPG")
    assert cap.props[cv2.CAP_PROP_FRAME_WIDTH] == 1920 and cap.props[cv2.CAP_PROP_FRAME_HEIGHT] == 1080
    assert isinstance(open_source({"source": "opencv", "device": device}), OpenCVSource)


# -- replay ------------------------------------------------------------------------------------
def _frames(n: int) -> list[np.ndarray]:
    return [np.full((24, 32, 3), 10 * i, np.uint8) for i in range(n)]


def test_replay_folder_uses_recorded_timestamps_and_ends(tmp_path) -> None:
    write_recording(tmp_path, _frames(4), [0.0, 0.1, 0.25, 0.4])
    with ReplaySource(tmp_path) as src:
        got = list(src)
    assert [f.timestamp for f in got] == [0.0, 0.1, 0.25, 0.4]
    assert [int(f.image[0, 0, 0]) for f in got] == [0, 10, 20, 30]


def test_replay_realtime_sleeps_to_the_recorded_pace(tmp_path) -> None:
    write_recording(tmp_path, _frames(3), [0.0, 0.5, 1.5])
    s = Sleeps()
    with ReplaySource(tmp_path, realtime=True, sleep=s.sleep, clock=s.clock) as src:
        list(src)
    assert s.calls == [0.5, 1.0]


def test_replay_truncated_image_is_corrupt(tmp_path) -> None:
    write_recording(tmp_path, _frames(3))
    victim = sorted(tmp_path.glob("*.png"))[1]
    victim.write_bytes(victim.read_bytes()[:20])
    with ReplaySource(tmp_path) as src:
        src.read()
        with pytest.raises(SourceCorrupt, match=victim.name):
            src.read()


def test_replay_bad_timestamps_and_empty_and_missing(tmp_path) -> None:
    write_recording(tmp_path / "a", _frames(2))
    (tmp_path / "a" / "timestamps.json").write_text(json.dumps([0.0]))
    with pytest.raises(SourceCorrupt, match="1 timestamps for 2 images"):
        ReplaySource(tmp_path / "a").open()
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceCorrupt, match="no images"):
        ReplaySource(tmp_path / "empty").open()
    with pytest.raises(SourceUnavailable, match="no such file"):
        ReplaySource(tmp_path / "nope").open()


def test_replay_video_and_truncated_video(tmp_path) -> None:
    path = tmp_path / "rec.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (32, 24))
    for img in _frames(6):
        writer.write(img)
    writer.release()
    with ReplaySource(path) as src:
        got = list(src)
    assert len(got) == 6 and got[3].timestamp == pytest.approx(0.3)
    cut = tmp_path / "cut.avi"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(SourceCorrupt, match="cut.avi"):
        ReplaySource(cut).open()


# -- picamera2 (a fake module stands in for the Pi-only library) ----------------------------------
# picamera2_fake.FakePicamera2 keeps picamera2 0.3's signatures (create_video_configuration,
# capture_request, the global_camera_info static method, the sensor_modes and camera_controls
# properties) so a call the real library would refuse fails here too, and it runs its job queue,
# event loop and notification pipe the way picamera2 does, so a stall or a busy camera behaves here
# as on a Pi.
from picamera2_fake import IMX708_CONTROLS, FakePicamera2, fake_picamera2, open_descriptors  # noqa: E402,F401


def test_picamera2_main_and_lores_streams(fake_picamera2) -> None:
    src = open_source({"source": "picamera2", "width": 64, "height": 48, "fps": 15, "lores": (33, 25)})
    with src:
        frame = src.read()
    cam = FakePicamera2.instances[0]
    assert cam.waits == [2.0]  # never capture_request() without a limit: a stall would hang
    assert cam.config["main"] == {"size": (64, 48), "format": "RGB888"}
    assert cam.config["lores"] == {"size": (32, 24), "format": "YUV420"}  # even sizes for the ISP
    assert cam.config["controls"] == {"FrameRate": 15.0}
    assert frame.image.shape == (48, 64, 3)
    assert frame.lores is not None and frame.lores.shape == (24, 32) and int(frame.lores.max()) == 99
    assert frame.timestamp == pytest.approx(1.566)
    assert cam.released == 1 and cam.closed and not cam.started


def test_picamera2_no_camera_is_unavailable(fake_picamera2) -> None:
    FakePicamera2.cameras = 0
    s = Sleeps()
    src = Picamera2Source(backoff=Backoff(attempts=2, initial=1.0), sleep=s.sleep, clock=s.clock)
    with pytest.raises(SourceUnavailable, match="no camera"):
        src.open()
    assert s.calls == [1.0, 2.0]


def test_picamera2_timeout_reopens(fake_picamera2) -> None:
    FakePicamera2.stalls = [1]  # the first camera object delivers one frame, then none
    s = Sleeps()
    src = Picamera2Source(size=(16, 12), lores=(8, 6), capture_timeout=0.2, backoff=Backoff(attempts=2, initial=0.5),
                          sleep=s.sleep, clock=s.clock)
    with src:
        src.read()
        frame = src.read()
    assert frame.index == 1 and src.reopens == 1
    assert FakePicamera2.instances[0].closed and len(FakePicamera2.instances) == 2


def test_picamera2_stall_is_named_and_reported_at_once_without_a_schedule(fake_picamera2) -> None:
    """`loo-table run` builds its source with no reopen schedule: the stall goes to the camera
    thread at once (which says so on the dashboard), with the stalled camera already closed."""
    FakePicamera2.stalls = [1]
    src = Picamera2Source(size=(16, 12), lores=(8, 6), capture_timeout=0.3, backoff=Backoff(attempts=0))
    with src:
        src.read()
        with pytest.raises(SourceStalled, match=r"camera stalled: no frame within 0\.3 s"):
            src.read()
        assert FakePicamera2.instances[0].closed and len(FakePicamera2.instances) == 1
        assert src.read().index == 1  # the next read opens it again
    assert [cam.waits for cam in FakePicamera2.instances] == [[0.3, 0.3], [0.3]]


def _started_fake(stall_after: int | None = None) -> FakePicamera2:
    FakePicamera2.stalls = [stall_after]
    cam = FakePicamera2(0)
    cam.configure(cam.create_video_configuration(main={"size": (16, 12)}, lores={"size": (8, 6)}))
    cam.start()
    return cam


def _returns_within(seconds: float, call) -> bool:  # noqa: ANN001
    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(seconds)
    return not t.is_alive()


def test_the_fake_picamera2_queues_stop_behind_a_timed_out_capture(fake_picamera2) -> None:
    """The model the stall tests rely on, as picamera2's job queue behaves (and as its own
    tests/wait_cancel_test.py shows): a capture that timed out stays queued, stop() waits behind it
    for ever, and cancel_all_and_flush() first lets stop() through at once."""
    cam = _started_fake(stall_after=2)
    cam.capture_request(wait=1.0).release()
    cam.capture_request(wait=1.0).release()
    with pytest.raises(TimeoutError):
        cam.capture_request(wait=0.2)  # the sensor stopped: no third frame
    assert not _returns_within(1.0, cam.stop)  # stop() is queued behind that capture
    cam.cable_fixed.set()  # (frames again: the capture and then the stop complete)
    assert _returns_within(5.0, lambda: None) and _wait_for(lambda: not cam.started)
    cam.close()

    cam = _started_fake(stall_after=0)
    with pytest.raises(TimeoutError):
        cam.capture_request(wait=0.2)
    cam.cancel_all_and_flush()
    assert _returns_within(1.0, cam.stop) and not cam.started and cam.cancelled == 1
    assert _returns_within(1.0, cam.close) and cam.closed


def _wait_for(predicate, timeout: float = 5.0) -> bool:  # noqa: ANN001
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_stalled_pi_camera_is_stopped_and_reopened_in_process(fake_picamera2) -> None:
    """A Camera Module whose frontend times out: the capture times out, the camera is stopped
    (its queued capture cancelled first, or stop() would wait behind it for ever) and closed,
    and a new one delivers frames: seconds, not a watchdog restart."""
    FakePicamera2.stalls = [3]
    src = Picamera2Source(size=(16, 12), lores=(8, 6), capture_timeout=0.5, backoff=Backoff(attempts=1, initial=0.1))
    src.open()
    frames = [src.read() for _ in range(3)]
    got: list = []
    assert _returns_within(10.0, lambda: got.append(src.read())), (
        "the read after a stall never came back: stop() waits behind the capture that timed out")
    assert [f.index for f in frames + got] == [0, 1, 2, 3]
    stalled, fresh = FakePicamera2.instances
    assert stalled.closed and stalled.cancelled == 1 and not stalled.started
    assert fresh.started and src.reopens == 1 and src.wedged is None
    src.close()
    assert fresh.closed


def test_a_camera_that_will_not_stop_is_wedged_not_a_hung_thread(fake_picamera2, monkeypatch) -> None:
    """Should libcamera itself hang in stopping a stalled camera, the camera thread still comes
    back (after close_timeout) and the source says why it cannot reopen: only a restart frees it."""
    release = threading.Event()
    FakePicamera2.stalls = [0]
    src = Picamera2Source(size=(16, 12), lores=(8, 6), capture_timeout=0.2, close_timeout=0.3,
                          backoff=Backoff(attempts=0))
    src.open()
    monkeypatch.setattr(src._cam, "stop_", lambda request=None: (release.wait(30), (True, None))[1])
    with pytest.raises(SourceStalled):
        src.read()
    assert src.wedged is not None and "did not stop within 0.3 s" in src.wedged
    with pytest.raises(SourceUnavailable, match="restarting the service"):
        src.open()
    release.set()  # it stopped after all
    assert _wait_for(lambda: src.wedged is None)
    assert src.read().index == 0
    src.close()


def test_a_busy_camera_retried_1000_times_leaks_no_descriptor(fake_picamera2) -> None:
    """Listed by libcamera but held by another program: picamera2 opens its pipe before acquire()
    fails, and its close() skips a camera it never opened. At one retry every 2 s the unit's 1,024
    descriptors would last about 35 minutes; the count must stay flat instead."""
    import gc

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd")
    FakePicamera2.busy = True
    src = Picamera2Source(backoff=Backoff(attempts=0))
    with pytest.raises(SourceUnavailable, match="another program may be using it"):
        src.open()
    gc.collect()
    before = open_descriptors()
    for _ in range(1000):
        with pytest.raises(SourceUnavailable):
            src.open()
    gc.collect()
    assert open_descriptors() - before <= 2
    assert FakePicamera2._cm.cameras == {}  # the manager holds no half-built camera either
    FakePicamera2.busy = False  # the other program let go
    with src:
        assert src.read().index == 0


def test_an_old_picamera2_is_named_in_the_log(fake_picamera2, caplog) -> None:
    fake_picamera2.__version__ = "0.3.19"
    with open_source({"source": "picamera2", "width": 64, "height": 48}) as src:
        src.read()
    assert src.version == (0, 3, 19)
    assert "picamera2 0.3.19 is older than 0.3.20" in caplog.text
    from vision.sources.picamera2 import picamera2_version

    assert picamera2_version(types.SimpleNamespace(__version__="0.3.27-1")) == (0, 3, 27)
    assert picamera2_version(types.SimpleNamespace()) is None


@pytest.mark.parametrize(("size", "fps", "mode"), [
    ((1280, 720), 15, (2304, 1296)),   # not the cropped 1536x864 picamera2 would pick
    ((1920, 1080), 15, (2304, 1296)),
    ((640, 360), 15, (2304, 1296)),
    ((4608, 2592), 10, (4608, 2592)),
    ((4608, 2592), 30, (2304, 1296)),  # the full-resolution mode is too slow: the largest fast one
])
def test_picamera2_asks_for_the_full_view_sensor_mode(fake_picamera2, size, fps, mode) -> None:
    src = open_source({"source": "picamera2", "width": size[0], "height": size[1], "fps": fps})
    with src:
        src.read()
    call = FakePicamera2.instances[0].configuration_calls[0]
    assert call["sensor"] == {"output_size": mode, "bit_depth": 10}
    assert call["main"]["size"] == size  # the ISP scales the whole view down to the asked size


def test_picamera2_without_sensor_modes_lets_picamera2_choose(fake_picamera2) -> None:
    FakePicamera2.modes = [{"format": "MJPEG"}]  # a USB camera through libcamera
    with open_source({"source": "picamera2", "width": 64, "height": 48}) as src:
        src.read()
    assert FakePicamera2.instances[0].configuration_calls[0]["sensor"] == {}


def test_picamera2_applies_locked_controls_the_camera_has(fake_picamera2) -> None:
    locked = {"AeEnable": False, "ExposureTime": 12000, "AnalogueGain": 2.0, "AwbEnable": False,
              "ColourGains": [1.9, 1.6], "AfMode": 0, "LensPosition": 1.25}  # as read back from JSON
    with open_source({"source": "picamera2", "width": 64, "height": 48, "fps": 15, "controls": locked}) as src:
        src.read()
    controls = FakePicamera2.instances[0].configuration_calls[0]["controls"]
    assert controls == {"FrameRate": 15.0, **locked, "ColourGains": (1.9, 1.6)}
    # A Camera Module 2 has no focus lens: the focus controls are left out, not refused.
    FakePicamera2.controls_known = {k: v for k, v in IMX708_CONTROLS.items() if not k.startswith(("Af", "Lens"))}
    with open_source({"source": "picamera2", "width": 64, "height": 48, "fps": 15, "controls": locked}) as src:
        src.read()
    assert "LensPosition" not in FakePicamera2.instances[1].configuration_calls[0]["controls"]
    # libcamera 0.5 and later: no AeEnable, a manual mode for exposure time and for gain instead
    FakePicamera2.controls_known = {k: v for k, v in IMX708_CONTROLS.items() if k != "AeEnable"} | {
        "ExposureTimeMode": (0, 1, 0), "AnalogueGainMode": (0, 1, 0)}
    with open_source({"source": "picamera2", "width": 64, "height": 48, "fps": 15, "controls": locked}) as src:
        src.read()
    controls = FakePicamera2.instances[2].configuration_calls[0]["controls"]
    assert "AeEnable" not in controls and controls["ExposureTimeMode"] == controls["AnalogueGainMode"] == 1
    assert controls["ExposureTime"] == 12000


def test_picamera2_locks_a_running_camera_where_its_last_frame_settled(fake_picamera2) -> None:
    with open_source({"source": "picamera2", "width": 64, "height": 48, "fps": 15}) as src:
        assert src.lock_controls() == {}  # no frame yet: nothing to lock to
        FakePicamera2.metadata = {"ExposureTime": 16543, "AnalogueGain": 1.8312345, "ColourGains": (2.01, 1.72),
                                  "LensPosition": 0.7512}
        src.read()
        locked = src.lock_controls()
    assert locked == {"AeEnable": False, "ExposureTime": 16543, "AnalogueGain": 1.8312, "AwbEnable": False,
                      "ColourGains": (2.01, 1.72), "AfMode": 0, "LensPosition": 0.7512}
    assert FakePicamera2.instances[0].set_calls == [locked]
    assert src.controls["ExposureTime"] == 16543  # a reopen after a stall starts locked too


def test_locked_controls_come_from_a_settled_frames_metadata() -> None:
    from vision.sources.picamera2 import locked_controls

    meta = {"ExposureTime": 16543, "AnalogueGain": 1.8312345, "ColourGains": (2.01, 1.72),
            "LensPosition": 0.7512, "Lux": 310.0}
    assert locked_controls(meta) == {"AeEnable": False, "ExposureTime": 16543, "AnalogueGain": 1.8312,
                                     "AwbEnable": False, "ColourGains": (2.01, 1.72),
                                     "AfMode": 0, "LensPosition": 0.7512}
    assert "AfMode" not in locked_controls({"ExposureTime": 1, "AnalogueGain": 1.0})


def test_missing_camera_retries_leak_no_descriptors(fake_picamera2) -> None:
    """picamera2 leaks a pipe per failed Picamera2(n); the source asks global_camera_info() first."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd")
    FakePicamera2.cameras = 0
    src = Picamera2Source(backoff=Backoff(attempts=0))
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(100):
        with pytest.raises(SourceUnavailable, match="no camera"):
            src.open()
    assert len(os.listdir("/proc/self/fd")) == before


def test_picamera2_missing_module_says_how_to_install(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "picamera2", None)  # import raises ImportError
    src = Picamera2Source(backoff=Backoff(attempts=0))
    with pytest.raises(SourceUnavailable, match="apt install python3-picamera2"):
        src.open()


# -- synthetic and the factory -----------------------------------------------------------------
def test_synthetic_source_is_deterministic_and_ends() -> None:
    a = open_source({"source": "synthetic", "seed": 3, "seats": 3, "width": 320, "height": 180})
    b = open_source({"source": "synthetic", "seed": 3, "seats": 3, "width": 320, "height": 180})
    with a, b:
        fa = [a.read() for _ in range(3)]
        fb = [b.read() for _ in range(3)]
    assert all(np.array_equal(x.image, y.image) for x, y in zip(fa, fb, strict=True))
    assert [f.timestamp for f in fa] == pytest.approx([0, 1 / 15, 2 / 15])
    assert fa[0].image.shape == (180, 320, 3)


def test_factory_rejects_unknown_kind_and_missing_path() -> None:
    with pytest.raises(ValueError, match="unknown kind 'webcam'"):
        open_source({"source": "webcam"})
    with pytest.raises(ValueError, match="camera.path"):
        open_source({"kind": "replay"})
    assert isinstance(open_source({"source": "opencv", "device": "2"}), OpenCVSource)
    assert open_source({"source": "opencv", "device": "2"}).device == 2
