"""The detector reads a photo at two sizes: cards that fill the frame are found too."""

from __future__ import annotations

from pathlib import Path

import pytest
from card_scene import card_scene, rect

from vision.detector import CardDetector, quad_iou
from vision.finder import find_cards

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def detector() -> CardDetector:
    return CardDetector(ROOT / "models" / "card_detector.onnx")


@pytest.mark.parametrize(("card", "long_px"), [("7H", 300), ("KH", 380)])
def test_a_card_filling_the_frame_is_found_at_half_size(detector: CardDetector, card: str, long_px: int) -> None:
    """At the default 512 px the card is larger than any the network learnt from and it sees
    nothing there; the second reading at 256 px finds it."""
    truth = rect(320, 240, long_px, long_px / 1.4, 80)
    image = card_scene(card, truth)
    assert not [d for d in detector.detect_at(image, 512) if quad_iou(d.corners, truth) >= 0.5]
    assert [d for d in detector.detect(image) if quad_iou(d.corners, truth) >= 0.5]


def test_a_card_seen_at_both_sizes_is_reported_once(detector: CardDetector) -> None:
    truth = rect(320, 240, 200, 200 / 1.4, 80)
    image = card_scene("7H", truth)
    assert len(detector.detect_at(image, 512)) == 1
    assert len(detector.detect_at(image, 256)) == 1
    assert len(detector.detect(image)) == 1


def test_a_given_size_reads_once(detector: CardDetector) -> None:
    """A caller that knows the cards' size (a table zone) gets the one reading it asks for."""
    image = card_scene("KH", rect(320, 240, 380, 380 / 1.4, 80))
    assert detector.detect(image, work_side=512) == detector.detect_at(image, 512) == []


def test_quad_iou() -> None:
    a = rect(50, 50, 40, 20, 0)
    assert quad_iou(a, a) == pytest.approx(1.0)
    assert quad_iou(a, rect(50 + 20, 50, 40, 20, 0)) == pytest.approx(1 / 3, abs=1e-3)
    assert quad_iou(a, rect(500, 500, 40, 20, 0)) == 0.0


def test_sides_are_read_in_turn(detector: CardDetector) -> None:
    """A zone of the live table names its own sizes: the second finds what the first missed."""
    truth = rect(320, 240, 300, 300 / 1.4, 80)
    image = card_scene("7H", truth)
    assert not [d for d in detector.detect(image, work_side=512) if quad_iou(d.corners, truth) >= 0.5]
    assert [d for d in detector.detect(image, work_side=[512, 256]) if quad_iou(d.corners, truth) >= 0.5]


@pytest.mark.parametrize(("card", "long_px", "deg"), [("AD", 340, 80), ("KH", 380, 60)])
def test_a_card_seen_in_part_at_512_is_outlined_whole(detector: CardDetector, card: str, long_px: int, deg: int) -> None:
    """At 512 px the network sees a part of this large card; the finder asks the photo's edges
    which reading saw the whole card and keeps that one."""
    truth = rect(320, 240, long_px, long_px / 1.4, deg)
    image = card_scene(card, truth)
    assert max(quad_iou(d.corners, truth) for d in detector.detect(image)) < 0.5  # no judge: the part stays
    assert max(quad_iou(d.corners, truth) for d in detector.detect(image, better=lambda a, b: True)) > 0.9
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
    monkeypatch.setattr(CardDetector, "detect_at", lambda self, image, side: list(readings[side]))
    image = card_scene("7H", rect(320, 240, 230, 165, 0))
    both = detector.detect(image, work_side=[512, 256], better=lambda a, b: True)
    assert [d.score for d in both] == [0.55, 0.45]
    kept = detector.detect(image, work_side=[512, 256], better=lambda a, b: a is not halves[1])
    assert [d.score for d in kept] == [0.6, 0.5, 0.45]


def test_another_threshold_shares_the_session_and_finds_more(detector: CardDetector) -> None:
    image = card_scene("QH", rect(300, 200, 160, 160 / 1.4, 11.0))
    low = detector.with_threshold(0.03)
    assert low.session is detector.session and (low.threshold, detector.threshold) == (0.03, 0.4)
    assert len(low.detect_at(image, 512)) > len(detector.detect_at(image, 512)) >= 1  # weaker peaks count too
