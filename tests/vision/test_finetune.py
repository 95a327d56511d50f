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
