"""The host's camera view: the real synthetic camera, the real watcher and classifier, the picture
made from the latest frame (zones drawn, cards labelled as read), at most one a second."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from table.camera_view import CameraView, zone_labels
from table.runtime import CameraLoop, load_classifier
from vision.events import TableWatcher
from vision.overlay import SURE, UNSURE, zone_crop
from vision.synthetic import PlacedCard, SyntheticTable

PLAYERS = ["Ann", "Bea", "Cal", "Dot"]


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


class Frames:
    """A frame source over a synthetic table: 10 frames a second of the cards laid on it."""

    def __init__(self, table: SyntheticTable) -> None:
        self.table = table
        self.cards: list[PlacedCard] = []
        self.n = 0

    def read(self):
        from vision.sources import Frame

        self.n += 1
        return Frame(self.table.render(self.cards, frame_index=self.n), self.n / 10.0, self.n)

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def classifier():
    return load_classifier(None, threads=1)


@pytest.fixture
def rig(classifier):
    table = SyntheticTable(seed=3, seats=4, size=(960, 540))
    watcher = TableWatcher(table.layout, table.calibration, classifier, stable_s=0.3)
    clock = Clock()
    view = CameraView(names=lambda: PLAYERS, clock=clock)
    frames = Frames(table)
    events: list = []
    loop = CameraLoop(frames, watcher, events.append, view=view)
    return table, frames, loop, view, clock, events


def _at(img: np.ndarray, point: np.ndarray, colour: tuple[int, int, int], tol: int = 60) -> bool:
    """Some pixel within 3 px of ``point`` is close to ``colour`` (JPEG blurs a 2 px line)."""
    x, y = (int(round(v)) for v in point)
    patch = img[max(0, y - 3):y + 4, max(0, x - 3):x + 4].astype(int)
    return bool((np.abs(patch - np.array(colour)).max(axis=2) < tol).any())


def test_the_view_draws_each_zone_and_labels_the_card_as_read(rig):
    table, frames, loop, view, clock, events = rig
    assert view.picture() is None  # nothing read yet: the route says "no picture yet"
    cx, cy = table.layout.zone("seat:1").center
    frames.cards = [PlacedCard("7H", cx, cy, 5.0)]
    for _ in range(8):
        loop.step()
    assert [e.card for e in events if e.kind == "card_placed"] == ["7H"]
    clock.t += 2.0
    loop.step()  # a host is watching now: the readings travel with the frame
    pic = view.picture()
    assert pic is not None and pic.jpeg[:2] == b"\xff\xd8"
    img = cv2.imdecode(np.frombuffer(pic.jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert img.shape[1] == 960
    corner = table.calibration.to_image(table.layout.zone("seat:1").corners())[0]
    assert _at(img, corner, SURE)  # Bea's zone holds a card read for sure: drawn green
    empty = table.calibration.to_image(table.layout.zone("seat:2").corners())[0]
    assert not _at(img, empty, SURE)
    labels = zone_labels(view._contents, [z.name for z in table.layout.zones], PLAYERS)
    assert labels["seat:1"] == ("Bea: 7H", "sure")
    assert labels["seat:2"] == ("Cal", "empty")


def test_unsure_cards_are_question_marks_and_orange():
    contents = {"seat:0": {"faces": [], "face_down": 0, "unsure": 1, "obstructed": False},
                "seat:1": {"faces": ["QS"], "face_down": 2, "unsure": 1, "obstructed": False},
                "turn_up": {"faces": ["10D"], "face_down": 0, "unsure": 0, "obstructed": False}}
    labels = zone_labels(contents, ["seat:0", "seat:1", "seat:5", "turn_up", "stock"], ["Ann", "Bea"])
    assert labels == {"seat:0": ("Ann: ?", "unsure"), "seat:1": ("Bea: QS ? 2 face down", "unsure"),
                      "seat:5": ("seat 6", "empty"), "turn_up": ("turn-up: 10D", "sure"),
                      "stock": ("stock", "empty")}
    assert UNSURE != SURE


def test_one_picture_a_second_however_many_ask(rig):
    table, frames, loop, view, clock, events = rig
    loop.step()
    first = view.picture()
    for _ in range(20):
        assert view.picture() is first
    assert view.rendered == 1
    clock.t += 1.01
    assert view.picture() is first and view.rendered == 1  # no new frame came: the same picture
    loop.step()
    clock.t += 1.01
    second = view.picture()
    assert view.rendered == 2 and second is not None and second is not first


def test_nobody_watching_costs_the_camera_thread_no_reading(rig):
    table, frames, loop, view, clock, events = rig
    calls = []
    real = loop.watcher.contents
    loop.watcher.contents = lambda: calls.append(1) or real()
    for _ in range(3):
        loop.step()
    assert calls == []  # no host has asked: only the frame's reference is kept
    view.picture()
    loop.step()
    assert calls == [1]
    clock.t += 10.0  # the host closed the page
    loop.step()
    assert calls == [1]


def test_a_zone_crop_is_the_zone_straightened_at_two_pixels_a_millimetre(rig):
    table, frames, loop, view, clock, events = rig
    assert view.zone_jpeg("seat:0") is None
    loop.step()
    zone = table.layout.zone("seat:0")
    crop = zone_crop(frames.table.render([], frame_index=1), table.calibration, zone)
    assert crop.shape[:2] == (round((zone.height + 16) * 2), round((zone.width + 16) * 2))
    jpeg = view.zone_jpeg("seat:0")
    assert jpeg is not None and jpeg[:2] == b"\xff\xd8"
    assert view.zone_jpeg("seat:9") is None


def test_a_call_runs_on_the_camera_thread_between_two_frames(rig):
    import threading
    import time

    table, frames, loop, view, clock, events = rig
    assert loop.call(lambda: threading.current_thread().name) == threading.current_thread().name  # not started
    loop.start()
    try:
        assert loop.call(lambda: threading.current_thread().name) == "camera"
        before = frames.n
        assert loop.call(lambda: frames.n) >= before  # between reads, never inside one
        with pytest.raises(ValueError, match="no"):
            loop.call(lambda: (_ for _ in ()).throw(ValueError("no")))
    finally:
        loop.stop()
        loop.join(5)
        time.sleep(0)
