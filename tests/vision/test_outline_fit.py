"""The outline fit: a rough detector rectangle moved onto the card's edges (vision/outline_fit.py)."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import cv2
import numpy as np
import pytest

import vision.finder as finder
from vision.classifier import CardClassifier
from vision.detector import CardDetector
from vision.identify import identify
from vision.outline_fit import fit_outline
from vision.synthetic import load_deck

ROOT = Path(__file__).resolve().parents[2]
PHOTOS = ROOT / "tests" / "data" / "photos" / "bicycle-9a"


def _rect(cx: float, cy: float, long_: float, short: float, deg: float) -> np.ndarray:
    t = np.deg2rad(deg)
    u = np.array([np.cos(t), np.sin(t)])
    v = np.array([-u[1], u[0]])
    c = np.array([cx, cy])
    return np.stack([c - u * long_ / 2 - v * short / 2, c - u * long_ / 2 + v * short / 2,
                     c + u * long_ / 2 + v * short / 2, c + u * long_ / 2 - v * short / 2]).astype(np.float32)


def _scene(card: str, truth: np.ndarray, seed: int = 3) -> np.ndarray:
    """A rendered card laid at ``truth`` on a grained, uneven brown table with sensor noise."""
    rng = np.random.default_rng(seed)
    h, w = 480, 640
    grain = cv2.resize(rng.normal(0, 1, (h // 8, w // 2)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
    table = np.stack([60 + 12 * grain, 85 + 14 * grain, 120 + 16 * grain], axis=2)
    art = load_deck()[card]
    rgb, alpha = art[..., :3].astype(np.float32), art[..., 3:].astype(np.float32) / 255.0
    ah, aw = art.shape[:2]
    # the art is portrait; truth's first side is a short side, so map its corners in that order
    src = np.array([[0, 0], [0, ah - 1], [aw - 1, ah - 1], [aw - 1, 0]], np.float32)
    dst = np.array([truth[1], truth[2], truth[3], truth[0]], np.float32)
    M = cv2.getPerspectiveTransform(src, dst)
    warped = cv2.warpPerspective(rgb, M, (w, h))
    a = cv2.warpPerspective(alpha, M, (w, h))[..., None]
    scene = table * (1 - a) + warped * a + rng.normal(0, 3, (h, w, 3))
    return np.clip(scene, 0, 255).astype(np.uint8)


def _worst_corner_error(found: np.ndarray, truth: np.ndarray) -> float:
    """The largest corner distance, over the rectangle's four-fold ambiguity of order."""
    f = finder.order_corners(found)
    t = finder.order_corners(truth)
    return min(float(np.linalg.norm(np.roll(f, k, axis=0) - t, axis=1).max()) for k in range(4))


@pytest.mark.parametrize("card", ["7H", "KH", "QS"])
def test_a_rectangle_turned_and_too_large_is_fitted_to_the_card(card: str) -> None:
    """Court cards included: their picture frame is a strong rectangle inside the card, and the
    fit must not shrink onto it (it turns lighter going out, a card's edge darker)."""
    truth = _rect(320, 240, 210, 150, 20)
    rough = _rect(329, 233, 235, 165, 28)  # 8 degrees off, an eighth too large, shifted
    image = _scene(card, truth)
    assert _worst_corner_error(rough, truth) > 20
    fitted = fit_outline(image, rough)
    assert _worst_corner_error(fitted, truth) < 0.03 * 210


def test_a_rectangle_with_no_edges_near_it_is_left_as_it_is() -> None:
    """Nothing to fit to (a blank table): the rough rectangle stands, not a guess."""
    image = np.full((480, 640, 3), 120, np.uint8)
    rough = _rect(320, 240, 200, 140, 10)
    assert np.array_equal(fit_outline(image, rough), rough)


def test_a_degenerate_rectangle_is_returned_unchanged() -> None:
    tiny = _rect(50, 50, 6, 4, 0)
    assert np.array_equal(fit_outline(np.zeros((100, 100, 3), np.uint8), tiny), tiny)


def test_a_real_overlapping_pair_is_read_only_with_the_fit() -> None:
    """IMG_2597 (a training photo): the detector's rectangle for the queen lying under the jack is
    turned and too large; read from it the queen is unsure, fitted she is named."""
    image = cv2.imread(str(PHOTOS / "IMG_2597.JPG"))
    reader = CardClassifier(ROOT / "models" / "card_classifier.onnx")
    detector = CardDetector(ROOT / "models" / "card_detector.onnx")
    fitted = sorted(c.reading.card or "?" for c in identify(image, reader, detector))
    with mock.patch.object(finder, "fit_outline", lambda image, quad: quad):
        rough = sorted(c.reading.card or "?" for c in identify(image, reader, detector))
    assert fitted == ["JS", "QD"]
    assert rough == ["?", "JS"]
