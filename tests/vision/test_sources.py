"""Frame sources against their failure modes: never opens, stops delivering, driver errors,
truncated and unreadable recordings, a missing picamera2; reopening with backoff (no real sleeps)."""

from __future__ import annotations

import json
import sys
import types

import cv2
import numpy as np
import pytest

from vision.sources import (
    Backoff,
    SourceCorrupt,
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

    def isOpened(self) -> bool:  # noqa: N802 - OpenCV's name
        return self.opened

    def set(self, prop: int, value: float) -> bool:
        self.props[prop] = value
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
class FakeRequest:
    def __init__(self, cam: FakePicamera2) -> None:
        self.cam = cam

    def make_array(self, stream: str) -> np.ndarray:
        w, h = self.cam.config[stream]["size"]
        if stream == "main":
            return np.full((h, w, 3), 7, np.uint8)
        yuv = np.zeros((h * 3 // 2, w), np.uint8)
        yuv[:h] = 99  # luma
        return yuv

    def get_metadata(self) -> dict:
        return {"SensorTimestamp": 1_500_000_000 + 66_000_000 * self.cam.captures}

    def release(self) -> None:
        self.cam.released += 1


class FakePicamera2:
    instances: list[FakePicamera2] = []
    fail_captures = 0
    cameras = 1

    def __init__(self, camera_num: int = 0) -> None:
        if camera_num >= FakePicamera2.cameras:
            raise IndexError("list index out of range")
        self.config: dict = {}
        self.started = self.closed = False
        self.captures = self.released = 0
        FakePicamera2.instances.append(self)

    def create_video_configuration(self, main: dict, lores: dict, controls: dict) -> dict:
        return {"main": main, "lores": lores, "controls": controls}

    def configure(self, config: dict) -> None:
        self.config = config

    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.started = False

    def close(self) -> None:
        self.closed = True

    def capture_request(self) -> FakeRequest:
        if FakePicamera2.fail_captures > 0:
            FakePicamera2.fail_captures -= 1
            raise RuntimeError("Camera frontend has timed out!")
        self.captures += 1
        return FakeRequest(self)


@pytest.fixture
def fake_picamera2(monkeypatch):  # noqa: ANN201
    mod = types.ModuleType("picamera2")
    mod.Picamera2 = FakePicamera2  # type: ignore[attr-defined]
    FakePicamera2.instances = []
    FakePicamera2.fail_captures = 0
    FakePicamera2.cameras = 1
    monkeypatch.setitem(sys.modules, "picamera2", mod)
    return mod


def test_picamera2_main_and_lores_streams(fake_picamera2) -> None:
    src = open_source({"source": "picamera2", "width": 64, "height": 48, "fps": 15, "lores": (33, 25)})
    with src:
        frame = src.read()
    cam = FakePicamera2.instances[0]
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
    s = Sleeps()
    src = Picamera2Source(size=(16, 12), lores=(8, 6), backoff=Backoff(attempts=2, initial=0.5),
                          sleep=s.sleep, clock=s.clock)
    with src:
        src.read()
        FakePicamera2.fail_captures = 1
        frame = src.read()
    assert frame.index == 1 and src.reopens == 1
    assert FakePicamera2.instances[0].closed and len(FakePicamera2.instances) == 2


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
