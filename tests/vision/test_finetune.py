"""The fine-tune's two rules: a rank's probability is its four suits' sum, and the open-set
threshold is the least one that keeps both the photos' and the renders' risk in bounds."""

from __future__ import annotations

import numpy as np

from models.finetune import choose_rule, rank_groups
from vision.classifier import LABELS


def test_each_rank_sums_its_four_suits_and_the_back_belongs_to_none() -> None:
    ranks, m = rank_groups(LABELS)
    assert ranks == ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
    assert m.shape == (13, 53) and (m.sum(axis=1) == 4).all()
    assert m[:, LABELS.index("back")].sum() == 0
    assert m[ranks.index("10"), LABELS.index("10H")] == 1 and m[ranks.index("Q"), LABELS.index("QS")] == 1


def _probs(label: str, p: float) -> np.ndarray:
    row = np.full(len(LABELS), (1 - p) / (len(LABELS) - 1), np.float32)
    row[LABELS.index(label)] = p
    return row


def test_the_threshold_rises_above_a_confident_wrong_rank_on_photos() -> None:
    # photos: a queen read as a king at 0.7, the rest right at 0.9; renders: all right at 0.95
    probs_real = np.stack([_probs("KH", 0.7)] + [_probs("QH", 0.9)] * 9)
    ranks_real = np.array(["Q"] * 10)
    probs_r = np.stack([_probs("2C", 0.95)] * 10)
    y_r = np.full(10, LABELS.index("2C"))
    t = choose_rule(probs_real, ranks_real, probs_r, y_r, LABELS, max_wrong=0.0)
    assert probs_real[0].max() < t <= 0.9  # the wrong read is refused, the right ones kept
    # a suit the photos do not label is not counted against the rule: QS for a queen is right
    t2 = choose_rule(np.stack([_probs("QS", 0.5)] * 10), ranks_real, probs_r, y_r, LABELS, max_wrong=0.0)
    assert t2 == 0.3


def test_a_not_a_card_render_that_would_be_accepted_raises_the_threshold() -> None:
    probs_real = np.stack([_probs("QH", 0.99)] * 4)
    probs_r = np.stack([_probs("2C", 0.95), _probs("3C", 0.6)])
    y_r = np.array([LABELS.index("2C"), -1])  # the second is not a card
    assert choose_rule(probs_real, np.array(["Q"] * 4), probs_r, y_r, LABELS, max_wrong=0.0) > 0.6


def test_a_covered_render_read_as_the_wrong_suit_raises_the_threshold() -> None:
    """The photos name ranks only: a covered card's suit is checked on covered renders, apart."""
    probs_real = np.stack([_probs("QH", 0.99)] * 4)
    probs_r = np.stack([_probs("2C", 0.95)] * 4)
    y_r = np.full(4, LABELS.index("2C"))
    covered = (np.stack([_probs("9S", 0.8), _probs("9C", 0.55)]), np.array([LABELS.index("9S"), LABELS.index("9H")]))
    without = choose_rule(probs_real, np.array(["Q"] * 4), probs_r, y_r, LABELS, max_wrong=0.0)
    with_covered = choose_rule(probs_real, np.array(["Q"] * 4), probs_r, y_r, LABELS, max_wrong=0.0, covered=covered)
    assert without == 0.3 and 0.55 < with_covered <= 0.8  # 9C for a 9H is refused, the right 9S kept


def test_a_covered_crop_shows_a_strip_of_its_card_beside_the_card_on_it() -> None:
    from models.synth import COVER_SHOWS, camera_crop

    red = np.zeros((350, 250, 4), np.uint8)
    red[..., 2], red[..., 3] = 255, 255
    blue = np.zeros_like(red)
    blue[..., 0], blue[..., 3] = 255, 255
    shares = []
    for seed in range(12):
        crop = camera_crop(np.random.default_rng(seed), red, strength=0.0, cover=blue)
        b, r = crop[..., 0].astype(int), crop[..., 2].astype(int)
        shares.append(float(((r > 150) & (b < 100)).mean()))  # the red card that still shows
        assert ((b > 150) & (r < 100)).mean() > 0.25  # the blue card lies on most of it
    assert COVER_SHOWS[0] - 0.12 < min(shares) and max(shares) < COVER_SHOWS[1] + 0.12


def test_covered_plans_ask_for_covered_cards_and_plain_plans_do_not() -> None:
    from models.train import Config, _plan

    decks = {"d": {lab: np.zeros((4, 4, 4), np.uint8) for lab in LABELS if lab != "back"}}
    plain = _plan(np.random.default_rng(0), 200, decks, Config(), negatives=0.0)
    assert {kind for _, _, kind in plain} <= {"card", "pback"}
    mixed = _plan(np.random.default_rng(0), 400, decks, Config(), negatives=0.0, covered=0.25)
    share = sum(kind == "covered" for _, _, kind in mixed) / sum(kind in ("card", "covered") for _, _, kind in mixed)
    assert 0.15 < share < 0.35
    every = _plan(np.random.default_rng(0), 0, decks, Config(), negatives=0.0, per_card=1, covered=1.0)
    assert {kind for _, _, kind in every} == {"covered", "pback"} and len(every) == len(LABELS)


def test_completed_plans_turn_a_share_of_the_covered_cards_and_leave_plain_plans_drawn_as_before() -> None:
    from models.train import Config, _plan

    decks = {"d": {lab: np.zeros((4, 4, 4), np.uint8) for lab in LABELS if lab != "back"}}
    covered = _plan(np.random.default_rng(0), 400, decks, Config(), negatives=0.0, covered=0.5)
    assert _plan(np.random.default_rng(0), 400, decks, Config(), negatives=0.0, covered=0.5, completed=0.0) == covered
    mixed = _plan(np.random.default_rng(0), 400, decks, Config(), negatives=0.0, covered=0.5, completed=0.5)
    kinds = [kind for _, _, kind in mixed]
    share = kinds.count("completed") / (kinds.count("completed") + kinds.count("covered"))
    assert 0.35 < share < 0.65 and kinds.count("card") > 100
    assert _plan(np.random.default_rng(0), 400, decks, Config(), negatives=0.0, completed=1.0) == \
        _plan(np.random.default_rng(0), 400, decks, Config(), negatives=0.0)  # nothing covered, nothing completed


def test_a_completed_crop_has_the_covering_cards_face_replaced_by_its_own_half_turn() -> None:
    """A completed training crop is what identify reads a covered card from a second time: no
    pixel of the blue card lying on the red one is left."""
    from models import train

    red = np.zeros((350, 250, 4), np.uint8)
    red[..., 2], red[..., 3] = 255, 255
    blue = np.zeros_like(red)
    blue[..., 0], blue[..., 3] = 255, 255
    labels = train._labels()
    train._POOL["decks"] = {"d": {labels[0]: red, labels[1]: blue}}
    try:
        covered = train._make_chunk((3, [(0, "d", "covered")] * 6))
        completed = train._make_chunk((3, [(0, "d", "completed")] * 6))
    finally:
        train._POOL.pop("decks")

    def blue_share(x: np.ndarray) -> float:
        b, r = x[..., 0].astype(int), x[..., 2].astype(int)
        return float(((b > 150) & (r < 100)).mean())

    assert min(blue_share(x) for x in covered) > 0.15
    assert max(blue_share(x) for x in completed) < 0.03


def test_covered_cards_of_the_photos_are_also_taught_from_their_completed_crops() -> None:
    from pathlib import Path

    from models.finetune import real_crops

    root = Path(__file__).parents[2]
    photos, detector = root / "tests" / "data" / "photos" / "bicycle-9a", root / "models" / "card_detector.onnx"
    plain = real_crops([photos], detector, views=2, seed=1, hold_every=5, log=lambda _s: None)
    both = real_crops([photos], detector, views=2, seed=1, hold_every=5, completed=True, log=lambda _s: None)
    extra = len(both["x"]) - len(plain["x"])
    assert extra > 0  # the labelled photos here have cards lying on cards
    # every whole crop is still there, in order; each completed one follows its whole crop, of the
    # same rank and photo, and differs from it
    k, completed = 0, 0
    for i in range(len(both["x"])):
        if k < len(plain["x"]) and np.array_equal(both["x"][i], plain["x"][k]):
            k += 1
            continue
        completed += 1
        assert i > 0 and both["rank"][i] == both["rank"][i - 1] and both["photo"][i] == both["photo"][i - 1]
        assert not np.array_equal(both["x"][i], both["x"][i - 1])
    assert k == len(plain["x"]) and completed == extra


def test_the_conditional_photo_loss_teaches_no_prior_over_the_ranks_the_photos_lack() -> None:
    """Photos of nines to aces: moving probability from the fours to the nines lowers the summed
    loss, and leaves the conditional one as it was (its softmax is over the nines to aces alone)."""
    import torch

    from models.finetune import photo_loss, present_labels, rank_groups
    from vision.labels import LABELS

    ranks, matrix = rank_groups(LABELS)
    absent = torch.from_numpy(present_labels(LABELS, ["9", "10", "J", "Q", "K", "A"])) == 0
    assert not absent[LABELS.index("9C")] and absent[LABELS.index("4C")] and absent[LABELS.index("back")]
    rank_t, nine = torch.from_numpy(matrix), torch.tensor([ranks.index("9")])
    before = torch.zeros(1, len(LABELS))
    before[0, LABELS.index("9C")], before[0, LABELS.index("4C")] = 2.0, 3.0
    after = before.clone()
    after[0, LABELS.index("4C")] = -3.0  # the four's logit pushed down: the prior a 9-A photo set teaches
    assert photo_loss(after, nine, rank_t, None) < photo_loss(before, nine, rank_t, None)
    assert torch.isclose(photo_loss(after, nine, rank_t, absent), photo_loss(before, nine, rank_t, absent))
