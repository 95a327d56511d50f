"""The synthetic table: deterministic for a seed, realistic enough (size, noise, light and dark
tables), the committed deck complete, and scripted nights carrying their ground truth."""

from __future__ import annotations

import shutil

import cv2
import numpy as np
import pytest

from vision.synthetic import (
    DEFAULT_DECK,
    FACES,
    HandPose,
    PlacedCard,
    SyntheticTable,
    _style,
    load_deck,
    night,
)


def test_committed_deck_is_complete_small_and_licensed() -> None:
    deck = load_deck(DEFAULT_DECK)
    assert set(deck) == set(FACES) | {"back"}
    assert all(img.shape[2] == 4 and 150 <= img.shape[0] <= 200 for img in deck.values())
    total = sum(p.stat().st_size for p in DEFAULT_DECK.glob("*.png"))
    assert total < 2_000_000
    notice = (DEFAULT_DECK / "NOTICE").read_text(encoding="utf-8")
    assert "CC0" in notice and "Adrian Kennard" in notice


def test_another_deck_folder_is_accepted_and_holes_are_refused(tmp_path) -> None:
    other = tmp_path / "deck"
    shutil.copytree(DEFAULT_DECK, other)
    for p in other.glob("*.png"):  # a "different" deck: inverted artwork
        img = cv2.imread(str(p), cv2.IMREAD_UNCHANGED)
        img[:, :, :3] = 255 - img[:, :, :3]
        cv2.imwrite(str(p), img)
    t = SyntheticTable(seed=1, seats=3, deck=other, size=(640, 360))
    assert t.deck["AS"][80, 60, :3].tolist() != load_deck(DEFAULT_DECK)["AS"][80, 60, :3].tolist()
    (other / "QH.png").unlink()
    with pytest.raises(FileNotFoundError, match="QH.png"):
        load_deck(str(other))


def test_same_seed_same_frames_other_seed_other_table() -> None:
    cards = [PlacedCard("QH", 400, 650, 10)]
    a = SyntheticTable(seed=5, seats=4).render(cards, frame_index=3)
    b = SyntheticTable(seed=5, seats=4).render(cards, frame_index=3)
    c = SyntheticTable(seed=6, seats=4).render(cards, frame_index=3)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_noise_changes_from_frame_to_frame_but_not_the_scene() -> None:
    t = SyntheticTable(seed=2, seats=4)
    f0, f1 = t.render([], frame_index=0).astype(int), t.render([], frame_index=1).astype(int)
    diff = np.abs(f0 - f1)
    assert 1.0 < diff.mean() < 8.0  # sensor noise, not a different picture
    quiet = SyntheticTable(seed=2, seats=4, noise=False)
    assert np.array_equal(quiet.render([], frame_index=0), quiet.render([], frame_index=1))


def test_cards_have_realistic_size_everywhere() -> None:
    for seed in range(3):
        t = SyntheticTable(seed=seed, seats=8, noise=False)
        heights = [t.calibration.card_height_px(z.center) for z in t.layout.zones]
        assert 52 <= min(heights) and max(heights) <= 100, (seed, heights)


def test_light_and_dark_tables_and_both_textures_occur() -> None:
    # a table's look is the first thing drawn from its seed
    styles = {(st.texture, st.dark) for st in (_style(np.random.default_rng(s), None, None) for s in range(30))}
    t = SyntheticTable(seed=0, seats=3, size=(320, 180), noise=False)
    assert t.style == _style(np.random.default_rng(0), None, None)
    assert {("cloth", True), ("cloth", False), ("wood", True), ("wood", False)} <= styles


def test_card_hand_and_shadow_change_the_right_pixels() -> None:
    t = SyntheticTable(seed=4, seats=4, noise=False)
    empty = t.render([])
    card = PlacedCard("AS", 400, 650, 0)
    with_card = t.render([card])
    quad = t.card_quad(card)
    cx, cy = quad.mean(axis=0).astype(int)
    assert np.abs(with_card[cy, cx].astype(int) - empty[cy, cx].astype(int)).max() > 20
    far = t.calibration.to_image([[700, 100]])[0].astype(int)
    assert np.array_equal(with_card[far[1], far[0]], empty[far[1], far[0]])
    shaded = t.render([], shadow=(400, 400, 80))
    p = t.calibration.to_image([[400, 400]])[0].astype(int)
    assert shaded[p[1], p[0]].sum() < 0.8 * empty[p[1], p[0]].sum()
    hand = t.render([], hand=HandPose(400, 400, 90))
    assert np.abs(hand.astype(int) - empty.astype(int)).max(axis=2).astype(bool).mean() > 0.02


def test_a_night_is_deterministic_and_carries_its_truth() -> None:
    a = list(night(seed=9, deals=1, seats=3, tricks=1, size=(640, 360)))
    b = list(night(seed=9, deals=1, seats=3, tricks=1, size=(640, 360)))
    assert len(a) == len(b) > 40
    assert all(np.array_equal(x.image, y.image) for x, y in zip(a[::10], b[::10], strict=True))
    rests = [zc for f in a for zc in f.truth.came_to_rest]
    zones = [z for z, _ in rests]
    assert zones[0] == "stock" and zones[1] == "turn_up"
    assert sorted(zones[2:]) == ["seat:0", "seat:1", "seat:2"]
    cards = [c for _, c in rests[1:]]
    assert len(set(cards)) == len(cards) and all(c in FACES for c in cards)
    assert a[0].truth.new_deal and not a[1].truth.new_deal
    assert a[-1].truth.resting == {}  # the table is cleared at the end of the deal
