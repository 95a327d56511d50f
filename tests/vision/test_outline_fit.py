"""The outline fit: a rough detector rectangle moved onto the card's edges (vision/outline_fit.py)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from card_scene import card_scene, rect

import vision.finder as finder
from vision.outline_fit import edge_support, fit_outline, try_fit

ROOT = Path(__file__).resolve().parents[2]
PHOTOS = ROOT / "tests" / "data" / "photos" / "bicycle-9a"


def _worst_corner_error(found: np.ndarray, truth: np.ndarray) -> float:
    """The largest corner distance, over the rectangle's four-fold ambiguity of order."""
    f = finder.order_corners(found)
    t = finder.order_corners(truth)
    return min(float(np.linalg.norm(np.roll(f, k, axis=0) - t, axis=1).max()) for k in range(4))


@pytest.mark.parametrize("card", ["7H", "KH", "QS"])
def test_a_rectangle_turned_and_too_large_is_fitted_to_the_card(card: str) -> None:
    """Court cards included: their picture frame is a strong rectangle inside the card, and the
    fit must not shrink onto it (it turns lighter going out, a card's edge darker)."""
    truth = rect(320, 240, 210, 150, 20)
    rough = rect(329, 233, 235, 165, 28)  # 8 degrees off, an eighth too large, shifted
    image = card_scene(card, truth)
    assert _worst_corner_error(rough, truth) > 20
    fitted = fit_outline(image, rough)
    assert _worst_corner_error(fitted, truth) < 0.03 * 210


def test_a_rectangle_with_no_edges_near_it_is_left_as_it_is() -> None:
    """Nothing to fit to (a blank table): the rough rectangle stands, not a guess."""
    image = np.full((480, 640, 3), 120, np.uint8)
    rough = rect(320, 240, 200, 140, 10)
    assert np.array_equal(fit_outline(image, rough), rough)


def test_a_degenerate_rectangle_is_returned_unchanged() -> None:
    tiny = rect(50, 50, 6, 4, 0)
    assert np.array_equal(fit_outline(np.zeros((100, 100, 3), np.uint8), tiny), tiny)


@pytest.mark.parametrize(("degrees", "scale"), [(8, 1.0), (5, 1.15), (6, 1.1)])
def test_a_rough_rectangle_of_a_covered_card_in_a_real_photo_is_fitted(degrees: float, scale: float) -> None:
    """IMG_2597 (a training photo): the queen lies under the jack. Her outline (as the finder
    fitted it once, recorded here: this is a test of the fit, not of the finder), turned and
    enlarged as a rough detector rectangle comes (so an earlier detector gave it), is fitted back
    onto her edges, the covered side included."""
    from vision.detector import quad_iou

    image = cv2.imread(str(PHOTOS / "IMG_2597.JPG"))
    queen = np.array([[80, 231], [204, 230], [207, 420], [82, 423]], np.float32)
    centre = queen.mean(axis=0)
    t = np.deg2rad(degrees)
    turn = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]], np.float32)
    rough = (queen - centre) @ turn.T * scale + centre
    assert quad_iou(rough, queen) < 0.88
    assert quad_iou(fit_outline(image, rough), queen) > 0.95


@pytest.mark.parametrize("card", ["7H", "KH"])
def test_edge_support_prefers_the_card_s_outline(card: str) -> None:
    """The card's own outline is backed by the photo better than one a tenth too small (a court
    card's picture frame lies there) or a tenth too large (the table around it)."""
    truth = rect(320, 240, 210, 150, 20)
    image = card_scene(card, truth)
    on = edge_support(image, truth)
    assert on > 1.5 * edge_support(image, rect(320, 240, 189, 135, 20))
    assert on > 1.5 * edge_support(image, rect(320, 240, 231, 165, 20))


def test_edge_support_asks_for_paper_lighter_than_the_table() -> None:
    """A dark shape of a card's size on a light table backs no card outline."""
    image = np.full((480, 640, 3), 200, np.uint8)
    truth = rect(320, 240, 210, 150, 0)
    cv2.fillConvexPoly(image, truth.astype(np.int32), (40, 40, 40))
    assert edge_support(image, truth) == 0.0
    light = np.full((480, 640, 3), 40, np.uint8)
    cv2.fillConvexPoly(light, truth.astype(np.int32), (220, 220, 220))
    assert edge_support(light, truth) > 100


def test_an_outline_off_the_photo_or_not_finite_is_no_fit() -> None:
    """A detector rectangle lying off the photo, or one with an overflowed corner, fits nothing
    and scores nothing: no exception reaches the referee."""
    image = card_scene("7H", rect(320, 240, 210, 150, 20))
    off = rect(2000, 2000, 210, 150, 0)
    assert try_fit(image, off) is None
    assert np.array_equal(fit_outline(image, off), off)
    broken = rect(320, 240, 210, 150, 20)
    broken[2] = np.inf
    assert try_fit(image, broken) is None
    assert edge_support(image, broken) == 0.0
    assert edge_support(image, off) == 0.0
