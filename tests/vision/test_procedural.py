"""Procedural deck designs for training (models/procedural.py): seeded, complete, colour-correct."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(shutil.which("rsvg-convert") is None,
                                reason="rsvg-convert (Debian librsvg2-bin) is not installed")

from models.procedural import Design, court_pictures, procedural_deck  # noqa: E402
from vision.labels import FACES  # noqa: E402


def _corner(img: np.ndarray) -> np.ndarray:
    """The top-left index corner (BGR, composited over white), inside any border line."""
    h, w = img.shape[:2]
    patch = img[4 : int(h * 0.3), 4 : int(w * 0.25)].astype(np.float32)
    alpha = patch[..., 3:4] / 255.0
    return patch[..., :3] * alpha + 255.0 * (1 - alpha)


def test_one_seed_one_design_and_seeds_differ() -> None:
    a, b, other = Design(7, 120), Design(7, 120), Design(8, 120)
    assert a.svg("QH") == b.svg("QH")
    assert np.array_equal(a.render("7S"), b.render("7S"))
    assert a.svg("QH") != other.svg("QH")


def test_deck_has_every_face_and_no_back() -> None:
    picture = np.full((60, 40, 3), (30, 160, 200), np.uint8)
    deck = procedural_deck(3, [picture], height=120, workers=1)
    assert sorted(deck) == sorted(FACES)
    for img in deck.values():
        assert img.shape[0] == 120 and img.ndim == 3 and img.shape[2] == 4
    # the court picture went in: the middle of a king carries the picture's colour, a pip card's does not
    h, w = deck["KH"].shape[:2]
    mid_king = deck["KH"][h // 2 - 5 : h // 2 + 5, w // 2 - 5 : w // 2 + 5, :3].reshape(-1, 3)
    assert (np.abs(mid_king.astype(int) - (30, 160, 200)).sum(axis=1) < 30).mean() > 0.8


def test_index_tells_rank_and_colour() -> None:
    design = Design(11, 160)
    faces = {label: design.render(label) for label in ("QH", "QS", "KS")}
    red_h = _corner(faces["QH"])
    red_s = _corner(faces["QS"])
    # hearts print in red ink, spades in black: the darkest pixels of the corner say so
    dark_h = red_h[red_h.sum(axis=2) < 400]
    dark_s = red_s[red_s.sum(axis=2) < 400]
    assert len(dark_h) and len(dark_s)
    assert (dark_h[:, 2] - dark_h[:, 0]).mean() > 80  # R well above B
    assert abs((dark_s[:, 2] - dark_s[:, 0]).mean()) < 40
    # same suit and colour, other rank: the corner differs
    assert np.abs(_corner(faces["QS"]) - _corner(faces["KS"])).mean() > 1.0


def test_court_pictures_come_from_court_cards_only() -> None:
    card = np.zeros((100, 70, 4), np.uint8)
    decks = {"d": {"QH": card, "7S": card, "back": card}}
    pictures = court_pictures(decks)
    assert len(pictures) == 1 and pictures[0].shape[2] == 3


def test_full_bleed_courts_fill_the_face_but_keep_the_index_corners() -> None:
    picture = np.full((60, 40, 3), (30, 160, 200), np.uint8)
    framed = procedural_deck(11, [picture], height=120, workers=1)
    bled = procedural_deck(11, [picture], height=120, workers=1, full_bleed=1.0)
    design = Design(11, 120)
    assert np.array_equal(framed["7H"], bled["7H"]), "pip cards are untouched"
    king, plain, bare = bled["KS"], framed["KS"], design.render("KS")
    mask = np.ones(king.shape[:2], bool)
    for x0, y0, x1, y1 in design.index_boxes():
        assert np.array_equal(king[y0:y1, x0:x1], bare[y0:y1, x0:x1]), "the index corners keep the paper"
        mask[y0:y1, x0:x1] = False
    opaque = mask & (king[..., 3] > 0)
    assert np.all(king[opaque][:, :3] == (30, 160, 200)), "everything else of the face is the picture"
    assert np.array_equal(king[..., 3], plain[..., 3]), "the rounded corners stay transparent"
    assert not np.all(plain[opaque][:, :3] == (30, 160, 200)), "a framed court has paper round its picture"
