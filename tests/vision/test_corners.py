"""Card outlines from the corners that show (vision/corners.py), and the corner targets the
detector's corner head learns from (models/detector.py, models/scenes.py)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from models.detector import CORNER_REACH, STRIDE, TARGET_CHANNELS, targets
from models.scenes import SceneCard, _corners_shown
from vision.corners import Corner, corner_outlines, corner_points, group_corners, outline_from_corners


def _card(centre: tuple[float, float], long_: float, degrees: float, aspect: float = 88 / 63) -> np.ndarray:
    """A card's corners (top-left, top-right, bottom-right, bottom-left as rendered)."""
    t = math.radians(degrees)
    u = np.array([math.cos(t), math.sin(t)])  # along the long side
    v = np.array([-u[1], u[0]])
    c, h, w = np.array(centre), long_ / 2, long_ / aspect / 2
    return np.array([c - u * h - v * w, c - u * h + v * w, c + u * h + v * w, c + u * h - v * w], np.float32)


def _corners(quad: np.ndarray, which: list[int], *, centre_error: float = 0.0) -> list[Corner]:
    centre = quad.mean(axis=0) + centre_error
    return [Corner(quad[i].astype(np.float32), centre.astype(np.float32), 0.9 - 0.1 * k) for k, i in enumerate(which)]


def _same_outline(got: np.ndarray, want: np.ndarray, tol: float) -> bool:
    return all(float(np.min(np.linalg.norm(got - corner, axis=1))) < tol for corner in want)


@pytest.mark.parametrize("degrees", [0, 17, 45, 90, 133])
@pytest.mark.parametrize("which", [[0, 1], [1, 2], [2, 3], [3, 0]])
def test_two_corners_of_one_side_and_the_centre_give_the_whole_card(degrees: int, which: list[int]) -> None:
    quad = _card((200, 150), 120, degrees)
    got = outline_from_corners(_corners(quad, which))
    assert got is not None
    assert _same_outline(got, quad, 1.0)


def test_a_centre_a_little_off_still_gives_the_card_to_a_few_pixels() -> None:
    quad = _card((200, 150), 120, 30)
    got = outline_from_corners(_corners(quad, [0, 3], centre_error=np.array([2.0, -1.5])))
    assert got is not None and _same_outline(got, quad, 1.0)


def test_three_and_four_corners_give_the_card() -> None:
    quad = _card((300, 200), 160, 62)
    for which in ([0, 1, 2], [0, 1, 2, 3], [3, 1, 0]):
        got = outline_from_corners(_corners(quad, which))
        assert got is not None and _same_outline(got, quad, 1.5)


def test_no_card_from_one_corner_or_from_opposite_corners() -> None:
    quad = _card((200, 150), 120, 20)
    assert outline_from_corners(_corners(quad, [0])) is None
    assert outline_from_corners(_corners(quad, [0, 2])) is None  # the direction is unknown


def test_no_card_from_corners_that_make_no_card_shape() -> None:
    quad = _card((200, 150), 120, 0)
    # a side of the card and a centre far off its middle: a shape three times as long as wide
    corners = [Corner(quad[0], quad.mean(axis=0) + np.array([120.0, 0.0], np.float32), 0.9),
               Corner(quad[1], quad.mean(axis=0) + np.array([120.0, 0.0], np.float32), 0.8)]
    assert outline_from_corners(corners) is None


def test_corners_are_gathered_by_the_card_they_point_to() -> None:
    a, b = _card((150, 150), 120, 10), _card((205, 160), 120, 25)  # overlapping, as in a fan
    corners = sorted(_corners(a, [0, 1, 3]) + _corners(b, [1, 2]), key=lambda c: -c.score)
    groups = group_corners(corners)
    assert sorted(len(g) for g in groups) == [2, 3]
    outlines = corner_outlines(corners)
    assert len(outlines) == 2
    for quad, n in outlines:
        want = a if n == 3 else b
        assert _same_outline(quad, want, 1.5)


def test_two_cards_corners_at_one_point_stay_apart() -> None:
    # a corner of one card where a corner of another lies: a second corner of one card at the
    # same point is no corner of it
    a = _card((150, 150), 120, 0)
    first = _corners(a, [0, 1])
    again = [Corner(first[0].point + 1, first[0].centre, 0.5)]
    groups = group_corners(first + again)
    assert sorted(len(g) for g in groups) == [1, 2]


def test_corner_points_decodes_the_networks_answer() -> None:
    maps = np.zeros((13, 20, 30), np.float32)
    maps[8, 5, 7] = 0.8   # a corner at cell (7, 5)...
    maps[9, 5, 7], maps[10, 5, 7] = 0.25, -0.5
    maps[11, 5, 7], maps[12, 5, 7] = 10 / CORNER_REACH, 4 / CORNER_REACH  # ...its card's centre 10 and 4 cells on
    maps[8, 15, 20] = 0.2  # under the threshold
    got = corner_points(maps, stride=STRIDE, to_photo=np.array([2.0, 2.0], np.float32), reach=CORNER_REACH)
    assert len(got) == 1
    np.testing.assert_allclose(got[0].point, [(7 + 0.5 + 0.25) * 4 * 2, (5 + 0.5 - 0.5) * 4 * 2])
    np.testing.assert_allclose(got[0].centre, [(7 + 0.5 + 10) * 4 * 2, (5 + 0.5 + 4) * 4 * 2])
    assert got[0].score == pytest.approx(0.8)


def test_the_corners_that_show_are_the_targets() -> None:
    size = (224, 224)
    under, over = _card((100, 112), 100, 0), _card((150, 112), 100, 0)
    owner = np.full((224, 224), -1, np.int16)
    import cv2

    for i, q in enumerate((under, over)):
        cv2.fillConvexPoly(owner, np.round(q).astype(np.int32), i)
    shown_under = _corners_shown(owner, under, 0)
    shown_over = _corners_shown(owner, over, 1)
    assert shown_over == (True, True, True, True)
    assert sum(shown_under) == 2  # its right-hand corners lie under the other card
    cards = [SceneCard(under, 0.6, shown_under), SceneCard(over, 1.0, shown_over)]
    t = targets(cards, (owner >= 0).astype(np.uint8) * 255, size)
    assert t.shape == (TARGET_CHANNELS, 224 // STRIDE, 224 // STRIDE)
    peaks = np.argwhere(t[10] > 0.99)
    assert len(peaks) == 6
    for q, shown in ((under, shown_under), (over, shown_over)):
        for corner, s in zip(q, shown, strict=True):
            cell = np.round(corner / STRIDE - 0.5).astype(int)
            assert (t[10, cell[1], cell[0]] > 0.99) == s
            if s:  # its way to the centre, in cells / CORNER_REACH
                way = t[13:15, cell[1], cell[0]] * CORNER_REACH
                want = q.mean(axis=0) / STRIDE - 0.5 - cell
                np.testing.assert_allclose(way, want, atol=1e-4)


def _maps_with_corners(quad_px: np.ndarray, which: list[int], shape: tuple[int, int] = (40, 60)) -> np.ndarray:
    """A detector answer (13 channels, stride 4, input = photo) whose corner head shows
    ``which`` corners of ``quad_px``, each pointing to its centre."""
    m = np.zeros((13, *shape), np.float32)
    centre = quad_px.mean(axis=0) / STRIDE - 0.5
    for i in which:
        p = quad_px[i] / STRIDE - 0.5
        x, y = int(round(p[0])), int(round(p[1]))
        m[8, y, x] = 0.9
        m[9, y, x], m[10, y, x] = p[0] - x, p[1] - y
        m[11, y, x], m[12, y, x] = (centre[0] - x) / CORNER_REACH, (centre[1] - y) / CORNER_REACH
    return m


def test_a_detection_takes_the_outline_its_cards_corners_give() -> None:
    from pathlib import Path

    from vision.detector import CardDetector, Detection

    det = CardDetector(Path(__file__).resolve().parents[2] / "models" / "card_detector.onnx")
    card = _card((120, 80), 100, 12)
    half = card.copy()  # the detector saw half the card: its far side at the middle
    half[2], half[3] = (card[1] + card[2]) / 2, (card[0] + card[3]) / 2
    elsewhere = Detection(_card((60, 60), 50, 80), 0.5)
    m = _maps_with_corners(card, [0, 1])
    got = det._with_corners([Detection(half, 0.8), elsewhere], m, np.array([1.0, 1.0], np.float32))
    assert _same_outline(got[0].corners, card, 1.0) and got[0].score == 0.8
    assert got[1] is elsewhere  # no corners of its own: left as the centre answer gave it


def test_a_scene_says_which_card_each_pixel_shows() -> None:
    """``scene_with_owner`` is ``scene`` (same seed, same image and cards) with the owner map in
    place of the mask: the mask is where the map names a card, and a card's visible share is its
    share of the map (bench/on_top.py takes which of two cards lies on top from it)."""
    from models.scenes import Surfaces, scene, scene_with_owner

    faces = []
    for k in range(4):  # plain BGRA cards with a coloured band: no deck artwork needed
        face = np.full((240, 170, 4), 255, np.uint8)
        face[40:200, 30:140, :3] = (60 * k, 200 - 40 * k, 90)
        faces.append(face)
    for seed in range(6):
        image, cards, mask = scene(np.random.default_rng(seed), faces, Surfaces([]), size=(320, 240))
        image2, cards2, owner = scene_with_owner(np.random.default_rng(seed), faces, Surfaces([]), size=(320, 240))
        assert np.array_equal(image, image2) and [c.visible for c in cards] == [c.visible for c in cards2]
        assert np.array_equal(mask > 0, owner >= 0)
        assert owner.dtype == np.int16 and owner.max() < len(cards)
        for i, card in enumerate(cards):
            if card.visible > 0 and card.quad.min() >= 0 and (card.quad[:, 0] < 320).all() and (card.quad[:, 1] < 240).all():
                area = cv2.contourArea(card.quad.astype(np.float32))
                assert (owner == i).sum() / area == pytest.approx(card.visible, rel=0.1)
