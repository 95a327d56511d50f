"""Labelled photos as detector samples (models/real_scenes.py): a card's whole outline recovered
from the axis-aligned box a VOC label gives, and the loss told to ignore what a label cannot say."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from models.detector import STRIDE, TARGET_CHANNELS, targets
from models.real_scenes import ASPECT, RealPhoto, _rectangle, outline_in_box, real_scene


def _photo_with_card(centre: tuple[float, float], long_: float, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """A dark grained table with one white card: the image and the card's true corners."""
    rng = np.random.default_rng(3)
    img = np.clip(rng.normal(60, 12, (400, 500, 3)), 0, 255).astype(np.uint8)
    quad = _rectangle(np.array(centre, np.float32), long_, theta, ASPECT)
    cv2.fillConvexPoly(img, np.round(quad).astype(np.int32), (235, 235, 235))
    return img, quad


def _box(quad: np.ndarray) -> tuple[float, float, float, float]:
    return float(quad[:, 0].min()), float(quad[:, 1].min()), float(quad[:, 0].max()), float(quad[:, 1].max())


@pytest.mark.parametrize("degrees", [0.0, 20.0, 35.0, 60.0, 90.0, 110.0, 150.0])
def test_a_clear_cards_outline_follows_from_its_box(degrees: float) -> None:
    img, quad = _photo_with_card((250, 200), 160, math.radians(degrees))
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2LAB)
    got = outline_in_box(_box(quad), lab)
    # the same rectangle: every true corner has a recovered corner within 3 px
    for corner in quad:
        assert float(np.min(np.linalg.norm(got - corner, axis=1))) < 3.0, (degrees, got, quad)


def test_a_sample_keeps_its_cards_where_the_photo_shows_them() -> None:
    img, quad = _photo_with_card((250, 200), 160, math.radians(25))
    photo = RealPhoto(img, [quad], [])
    for seed in range(6):
        rng = np.random.default_rng(seed)
        sample, cards, mask, weight = real_scene(rng, photo, 224)
        assert sample.shape == (224, 224, 3) and sample.dtype == np.uint8
        assert len(cards) == 1 and weight.min() == 1.0
        # the moved outline and the mask still lie on the card: its pixels far brighter than the
        # table's, whatever light and colour the sample was given
        if cards[0].visible > 0.5:
            c = cards[0].quad.mean(axis=0)
            assert mask[int(round(c[1])), int(round(c[0]))] == 255
            assert sample[mask == 255].mean() > sample[mask == 0].mean() + 40


def test_an_unclear_cards_box_is_ignored_by_the_loss() -> None:
    img, quad = _photo_with_card((250, 200), 160, 0.0)
    photo = RealPhoto(img, [], [_box(quad)])
    sample, cards, mask, weight = real_scene(np.random.default_rng(0), photo, 224)
    t = targets(cards, mask, (224, 224), weight=weight)
    ignored = t[9] == 0
    assert ignored.any()
    assert (t[0][ignored] == -1).all()  # no heat asked for where the card may or may not be
    assert (t[0] <= 0).all() and t[8].sum() == 0
    assert t.shape == (TARGET_CHANNELS, 224 // STRIDE, 224 // STRIDE)
    assert (t[10] == -1).all() and t[15].sum() == 0  # a label says nothing of which corners show
