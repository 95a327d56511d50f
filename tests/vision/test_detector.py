"""The detector reads a photo at two sizes: cards that fill the frame are found too."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from card_scene import card_scene, rect

from vision.detector import CardDetector, quad_iou
from vision.finder import find_cards

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def detector() -> CardDetector:
    return CardDetector(ROOT / "models" / "card_detector.onnx")


@pytest.mark.parametrize(("card", "long_px"), [("7H", 300), ("KH", 380)])
def test_a_card_filling_the_frame_is_found(detector: CardDetector, card: str, long_px: int) -> None:
    """The finder outlines it whole. (The king at 512 px comes out as parts, two of which the
    edge fit grows to the whole card: the whole card read at 256 takes their place.)"""
    truth = rect(320, 240, long_px, long_px / 1.4, 80)
    image = card_scene(card, truth)
    assert max(quad_iou(f.corners, truth) for f in find_cards(image, detector=detector)) > 0.9


def _scripted(monkeypatch: pytest.MonkeyPatch, readings: dict[int, list]) -> list[int]:
    """The network's readings at each size, scripted; returns the sizes it was asked for, in turn."""
    asked: list[int] = []

    def detect_at(self: CardDetector, image: object, side: int, **_kw: object) -> list:
        asked.append(side)
        return list(readings.get(side, []))

    monkeypatch.setattr(CardDetector, "detect_at", detect_at)
    return asked


def test_what_512_misses_256_finds(detector: CardDetector, monkeypatch: pytest.MonkeyPatch) -> None:
    """A card larger than any the network learnt from can be missed at the default 512 px; the
    second reading at 256 px adds it."""
    from vision.detector import Detection

    card = Detection(rect(320, 240, 300, 214, 80), 0.8)
    asked = _scripted(monkeypatch, {256: [card]})
    image = card_scene("7H", rect(320, 240, 300, 214, 80))
    assert [d.score for d in detector.detect(image)] == [0.8]
    assert asked == [512, 256]


def test_a_card_seen_at_both_sizes_is_reported_once(detector: CardDetector) -> None:
    truth = rect(320, 240, 200, 200 / 1.4, 80)
    image = card_scene("7H", truth)
    assert len(detector.detect_at(image, 512)) == 1
    assert len(detector.detect_at(image, 256)) == 1
    assert len(detector.detect(image)) == 1


def test_a_given_size_reads_once(detector: CardDetector, monkeypatch: pytest.MonkeyPatch) -> None:
    """A caller that knows the cards' size (a table zone) gets the one reading it asks for."""
    from vision.detector import Detection

    asked = _scripted(monkeypatch, {256: [Detection(rect(320, 240, 300, 214, 80), 0.8)]})
    image = card_scene("KH", rect(320, 240, 380, 380 / 1.4, 80))
    assert detector.detect(image, work_side=512) == []
    assert asked == [512]


def test_quad_iou() -> None:
    a = rect(50, 50, 40, 20, 0)
    assert quad_iou(a, a) == pytest.approx(1.0)
    assert quad_iou(a, rect(50 + 20, 50, 40, 20, 0)) == pytest.approx(1 / 3, abs=1e-3)
    assert quad_iou(a, rect(500, 500, 40, 20, 0)) == 0.0


def test_sides_are_read_in_turn(detector: CardDetector, monkeypatch: pytest.MonkeyPatch) -> None:
    """A zone of the live table names its own sizes: the second finds what the first missed."""
    from vision.detector import Detection

    card = Detection(rect(320, 240, 300, 214, 80), 0.7)
    asked = _scripted(monkeypatch, {256: [card]})
    image = card_scene("7H", rect(320, 240, 300, 214, 80))
    assert detector.detect(image, work_side=[512, 256]) == [card]
    assert asked == [512, 256]


@pytest.mark.parametrize(("card", "long_px", "deg"), [("AD", 340, 80), ("KH", 380, 60)])
def test_a_large_card_is_outlined_whole(detector: CardDetector, card: str, long_px: int, deg: int) -> None:
    """A card that nearly fills the photo: the finder outlines all of it, not a part (the judge
    between the two sizes is tested below with scripted readings)."""
    truth = rect(320, 240, long_px, long_px / 1.4, deg)
    image = card_scene(card, truth)
    assert max(quad_iou(f.corners, truth) for f in find_cards(image, detector=detector)) > 0.9


def test_a_later_reading_takes_the_place_of_every_part_it_explains(detector: CardDetector,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A card seen at 512 as two halves and whole at 256: where the judge prefers the whole card
    to each half, the whole card replaces both; where it prefers either half, nothing changes."""
    from vision.detector import Detection

    halves = [Detection(rect(280, 240, 150, 110, 0), 0.6), Detection(rect(360, 240, 150, 110, 0), 0.5)]
    whole = Detection(rect(320, 240, 230, 165, 0), 0.55)
    apart = Detection(rect(40, 40, 60, 43, 0), 0.45)
    readings = {512: halves, 256: [whole, apart]}
    monkeypatch.setattr(CardDetector, "detect_at", lambda self, image, side, **_kw: list(readings[side]))
    image = card_scene("7H", rect(320, 240, 230, 165, 0))
    both = detector.detect(image, work_side=[512, 256], better=lambda a, b: True)
    assert [d.score for d in both] == [0.55, 0.45]
    kept = detector.detect(image, work_side=[512, 256], better=lambda a, b: a is not halves[1])
    assert [d.score for d in kept] == [0.6, 0.5, 0.45]


def test_another_threshold_shares_the_session_and_finds_more(detector: CardDetector) -> None:
    image = card_scene("QH", rect(300, 200, 160, 160 / 1.4, 11.0))
    low = detector.with_threshold(0.03)
    shipped = json.loads((ROOT / "models" / "card_detector.json").read_text())["threshold"]
    assert low.session is detector.session and (low.threshold, detector.threshold) == (0.03, shipped)
    assert len(low.detect_at(image, 512)) > len(detector.detect_at(image, 512)) >= 1  # weaker peaks count too


def test_small_cards_in_a_large_photo_are_read_again_closer(detector: CardDetector, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 3000 px photo whose cards read 21 px long at 512: the photo is read a third time at the
    long side that makes them 64 px (1536), and what that finds is added; a 1280×720 frame's
    cards of 35 px are read closer at the side that makes them 64 px (936), those of 20 px at the
    frame's own size (1280). Cards of 51 px are read closer in neither, and a photo without the
    pixels is not read again. A large photo where nothing, or fewer than three small cards, was
    found is read at 2048."""
    from vision.detector import Detection

    def asked_for(image: np.ndarray, long_px: float, cards: int = 3) -> list[int]:
        scale = max(image.shape[:2]) / 512
        found = [Detection(rect(image.shape[1] * (k + 1) / (cards + 1), image.shape[0] / 2, long_px * scale,
                                long_px * scale / 1.4, 0), 0.8) for k in range(cards)]
        asked = _scripted(monkeypatch, {512: found})
        detector.detect(image)
        return asked

    photo, frame = np.zeros((2000, 3000, 3), np.uint8), np.zeros((720, 1280, 3), np.uint8)
    small = [Detection(rect(500 * k, 1000, 125, 89, 0), 0.8) for k in (1, 2, 3)]  # 21.3 px long at 512
    more = Detection(rect(600, 1500, 125, 89, 30), 0.6)
    asked = _scripted(monkeypatch, {512: small, 1536: [*small, more]})
    assert [d.score for d in detector.detect(photo)] == [0.8, 0.8, 0.8, 0.6]
    assert asked == [512, 256, 1536]
    assert asked_for(frame, 20) == [512, 256, 1280]
    assert asked_for(photo, 35) == [512, 256, 936]
    assert asked_for(frame, 35) == [512, 256, 936]
    assert asked_for(frame, 51) == [512, 256]
    assert asked_for(photo, 51) == [512, 256]
    assert asked_for(photo, 51, cards=1) == [512, 256]  # one large card: no closer look
    assert asked_for(photo, 35, cards=2) == [512, 256, 2048]  # two small finds say little of the cards' size
    assert asked_for(np.zeros((480, 640, 3), np.uint8), 10) == [512, 256]  # small cards, but a 640 px photo
    asked = _scripted(monkeypatch, {})
    detector.detect(np.zeros((4000, 6000, 3), np.uint8))  # cards too small to be seen at 512 at all
    assert asked == [512, 256, 2048]
    asked = _scripted(monkeypatch, {})
    detector.detect(frame)  # an empty frame is read no closer: its cards would be found at 512
    assert asked == [512, 256]


def test_read_closer_two_cards_in_a_row_are_two_cards(detector: CardDetector, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two cards lying side by side in a 4000 px photo read at 512 as one card across both (each
    is 20 px long there, smaller than the network knows); read closer, each is its own card and
    takes the place of the card across both. A card only the farther reading saw stays."""
    from vision.detector import Detection

    across = Detection(rect(1560, 1500, 230, 160, 0), 0.7)  # the two below, as one landscape card
    left, right = Detection(rect(1500, 1500, 160, 110, 90), 0.9), Detection(rect(1620, 1500, 160, 110, 90), 0.85)
    alone = Detection(rect(800, 700, 160, 110, 20), 0.5)
    other = Detection(rect(3000, 700, 160, 110, 20), 0.4)
    asked = _scripted(monkeypatch, {512: [across, alone, other], 1600: [left, right, other]})  # their median: 20.5 px long
    found = detector.detect(np.zeros((3000, 4000, 3), np.uint8))
    assert asked == [512, 256, 1600]
    assert [d.score for d in found] == [0.9, 0.85, 0.5, 0.4]


def _pairs_photo(seed: int, long_px: float) -> tuple[np.ndarray, list[np.ndarray]]:
    """A 6000×4000 photo of a light table with eight pairs of the demo deck's cards ``long_px``
    long, each second card lying across the first with the first's index showing (a poker
    table's hands), and the sixteen true outlines."""
    import math

    import cv2

    from vision.synthetic import load_deck

    rng = np.random.default_rng(seed)
    deck = load_deck()
    names = sorted(deck)
    photo = np.zeros((4000, 6000, 3), np.float32) + [150, 175, 195] + rng.normal(0, 3, (4000, 6000, 3))
    truths = []
    for i in range(8):
        cx, cy, turn = 800 + (i % 4) * 1400, 1200 + (i // 4) * 1600, rng.uniform(-30, 30)
        shift = long_px / 1.4 * rng.uniform(0.35, 0.6)
        first = rect(cx, cy, long_px, long_px / 1.4, 90 + turn)
        second = rect(cx + shift * math.cos(math.radians(turn)), cy + shift * math.sin(math.radians(turn)),
                      long_px, long_px / 1.4, 90 + turn + rng.normal(0, 7))
        for truth in (first, second):
            art = cv2.resize(deck[names[int(rng.integers(len(names)))]], None, fx=0.3, fy=0.3, interpolation=cv2.INTER_AREA)
            x0, y0 = np.int32(truth.min(axis=0)) - 2
            x1, y1 = np.int32(truth.max(axis=0)) + 3
            ah, aw = art.shape[:2]
            src = np.array([[0, 0], [0, ah - 1], [aw - 1, ah - 1], [aw - 1, 0]], np.float32)
            dst = (np.array([truth[1], truth[2], truth[3], truth[0]]) - [x0, y0]).astype(np.float32)
            warped = cv2.warpPerspective(art.astype(np.float32), cv2.getPerspectiveTransform(src, dst), (x1 - x0, y1 - y0))
            alpha = warped[..., 3:] / 255.0
            photo[y0:y1, x0:x1] = photo[y0:y1, x0:x1] * (1 - alpha) + warped[..., :3] * alpha
            truths.append(truth)
    return np.clip(photo, 0, 255).astype(np.uint8), truths


@pytest.mark.slow  # two reads of a 6000×4000 photo: ~5 s
def test_pairs_a_capped_closer_read_sees_as_one_are_split_in_windows_read_closer(
        detector: CardDetector, monkeypatch: pytest.MonkeyPatch) -> None:
    """110 px cards in a 6000×4000 photo are 38 px at the 2048 the closer read is held to, where an
    overlapping pair can read as one card; windows round the cards found there, read at the
    scale that makes them 64 px, find both cards of each pair."""
    photo, truths = _pairs_photo(1, 110.0)

    def found(dets: list) -> int:
        return sum(any(quad_iou(d.corners, t) >= 0.5 for d in dets) for t in truths)

    assert found(detector.detect(photo)) == len(truths) == 16
    monkeypatch.setattr(CardDetector, "_in_windows", lambda *_a, **_k: [])
    assert found(detector.detect(photo)) < len(truths)


def test_windows_round_cards_merge_where_they_meet_and_stay_in_the_photo() -> None:
    from vision.detector import _windows

    near = [rect(100, 100, 40, 28, 0), rect(150, 100, 40, 28, 0)]  # their grown boxes meet
    far = rect(900, 500, 40, 28, 90)
    assert _windows([*near, far], 30.0, (1000, 600)) == [(50, 56, 200, 144), (856, 450, 944, 550)]
    assert _windows([rect(20, 580, 40, 28, 0)], 30.0, (1000, 600)) == [(0, 536, 70, 600)]


def test_a_card_read_closer_takes_the_place_of_one_read_farther_off_only_where_it_splits_it() -> None:
    """Two cards read closer that overlap one read farther off take its place (a pair read as one);
    a card read closer that overlaps one farther card alone leaves that card's outline be (the
    farther outline was already the card's), and one that overlaps none is added."""
    from vision.detector import Detection

    pair_as_one = Detection(rect(500, 500, 100, 110, 0), 0.8)
    lone = Detection(rect(900, 500, 100, 70, 90), 0.7)
    under, over = Detection(rect(480, 500, 100, 70, 90), 0.6), Detection(rect(520, 500, 100, 70, 90), 0.9)
    lone_again = Detection(rect(902, 501, 100, 70, 91), 0.95)
    new = Detection(rect(200, 200, 100, 70, 90), 0.5)
    kept = CardDetector._split([under, over, lone_again, new], [pair_as_one, lone])
    assert sorted(d.score for d in kept) == [0.5, 0.6, 0.7, 0.9]


def test_windows_stop_where_they_would_cost_more_than_the_closer_read(detector: CardDetector,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A 6000×4000 photo whose 2048 read finds 90 px cards all over it (a carpet read as cards)
    would be read whole at 64 px cards (3200 px): the windows stop within the closer read's pixels.
    A few cards' windows are all read, each at the scale that makes its cards 64 px."""
    from vision.detector import Detection

    sizes: list[tuple[int, int, int]] = []

    def detect_at(self: CardDetector, image: np.ndarray, side: int, **_kw: object) -> list:
        sizes.append((image.shape[1], image.shape[0], side))
        if image.shape[:2] != (4000, 6000):
            return []
        return [Detection(rect(x, y, 90, 64, 90), 0.8) for x in range(200, 6000, 400) for y in range(200, 4000, 400)] \
            if many else [Detection(rect(1000 + 800 * k, 2000, 90, 64, 90), 0.8) for k in range(3)]

    monkeypatch.setattr(CardDetector, "detect_at", detect_at)
    many = True
    photo = np.zeros((4000, 6000, 3), np.uint8)
    detector.detect(photo)
    windows = [(w, h, side) for w, h, side in sizes[3:]]
    assert sizes[2] == (6000, 4000, 2048) and windows
    read = sum(w * h * (64 / 90) ** 2 for w, h, _side in windows)
    assert read <= 2048 * 2048 * 4000 / 6000
    sizes.clear()
    many = False
    detector.detect(photo)
    assert len(sizes) == 3 + 3  # 512, 256, 2048, then one window round each card, 800 px apart
    assert all(side == round(max(w, h) * 64 / 90) for w, h, side in sizes[3:])


def test_a_rectangle_a_window_finds_between_two_surer_cards_is_left_out() -> None:
    """A pair read closer can come out as its two cards and a third rectangle between them, nearly
    all under the two: that one is left out; the card under the pair's top card (half under it) stays."""
    from vision.detector import Detection

    pair_as_one = Detection(rect(500, 500, 100, 110, 0), 0.8)
    under, over = Detection(rect(470, 500, 100, 70, 90), 0.9), Detection(rect(505, 500, 100, 70, 90), 0.85)
    between = Detection(rect(500, 500, 100, 70, 90), 0.5)
    kept = CardDetector._split([under, over, between], [pair_as_one])
    assert sorted(d.score for d in kept) == [0.85, 0.9]
    kept = CardDetector._split([under, over], [pair_as_one])
    assert sorted(d.score for d in kept) == [0.85, 0.9]
