"""Each card exists once in a deal: the open-set rule after dropping cards that cannot be there.

Pure numpy on hand-made probability rows (no model): `vision.classifier.decide` and
`assign_jointly`, which the classifier applies when the table passes ``exclude``.
"""

from __future__ import annotations

import numpy as np
import pytest

from vision.classifier import MAX_EXCLUDED_MASS, assign_jointly, decide
from vision.labels import LABELS

T, M = 0.62, 0.0  # the shipped network's rule


def row(**probs: float) -> np.ndarray:
    """A probability row with the given cards (keys like c10H for 10H) and the rest spread evenly."""
    p = np.zeros(len(LABELS))
    named = {k.lstrip("c"): v for k, v in probs.items()}
    rest = 1.0 - sum(named.values())
    others = [i for i, lab in enumerate(LABELS) if lab not in named]
    p[others] = rest / len(others)
    for lab, v in named.items():
        p[LABELS.index(lab)] = v
    return p


def test_without_exclusions_the_rule_is_unchanged():
    r = decide(LABELS, row(c10H=0.55, c10D=0.40), T, M)
    assert r.unsure and r.top3[0][0] == "10H"
    assert decide(LABELS, row(c10H=0.9), T, M).card == "10H"


def test_a_card_already_seen_is_dropped_and_the_rest_decides():
    # the stained 10D looks a little more like 10H, which was played in trick 1
    r = decide(LABELS, row(c10H=0.45, c10D=0.50), T, M, exclude={"10H"})
    assert r.card == "10D" and r.confidence == pytest.approx(0.50 / 0.55, abs=1e-6)
    assert all(label != "10H" for label, _ in r.top3)


def test_never_below_the_rule_after_dropping():
    # 0.30 / 0.60 = 0.5 < 0.62: still unsure, and the proposal is a possible card
    r = decide(LABELS, row(c10H=0.40, c10D=0.30, c4D=0.25), T, M, exclude={"10H"})
    assert r.unsure and r.top3[0][0] == "10D"


def test_too_much_weight_on_impossible_cards_stays_unsure():
    # 10H and 9H (both seen) took 0.7 > MAX_EXCLUDED_MASS: what is left names nothing for sure
    p = row(c10H=0.40, c9H=0.30, c10D=0.28)
    assert 0.70 > MAX_EXCLUDED_MASS
    r = decide(LABELS, p, T, M, exclude={"10H", "9H"})
    assert r.unsure and r.excluded is None and r.top3[0][0] == "10D"


def test_a_sure_read_of_a_seen_card_is_a_contradiction_not_a_card():
    r = decide(LABELS, row(cJH=0.97), T, M, exclude={"JH"})
    assert r.unsure and r.card is None and r.excluded == "JH"
    assert r.to_dict()["excluded"] == "JH"


def test_backs_are_never_excluded():
    r = decide(LABELS, row(back=0.95), T, M, exclude={"back", "JH"})
    assert r.face_down and r.excluded is None


def test_exclusion_never_yields_an_excluded_card():
    rng = np.random.default_rng(3)
    for _ in range(300):
        p = rng.dirichlet(np.full(len(LABELS), 0.05))
        seen = set(rng.choice(LABELS[:52], size=8, replace=False).tolist())
        r = decide(LABELS, p, T, M, exclude=seen)
        assert r.card not in seen
        if r.card is not None:
            assert r.confidence >= T  # accepted only by the rule


def test_joint_reading_gives_each_card_once():
    rows = np.stack([row(c5C=0.95), row(c5C=0.50, c5S=0.45), row(c5S=0.30, c5H=0.55, c5C=0.10)])
    got = assign_jointly(LABELS, rows, [(T, M)] * 3, [frozenset()] * 3)
    # 5C is sure on its own; the second crop cannot be 5C too: 5S (0.45 / 0.50); the third can
    # be neither: 5H (0.55 / 0.60), which on its own (0.55 / 0.90) it was not sure of
    assert [r.card for r in got] == ["5C", "5S", "5H"]
    alone = assign_jointly(LABELS, rows[2:], [(T, M)], [frozenset({"5C"})])
    assert alone[0].unsure


def test_joint_reading_keeps_sure_reads_and_leaves_doubt_alone():
    rows = np.stack([row(c7D=0.99), row(c7D=0.99), row(c2S=0.3, c3S=0.3)])
    got = assign_jointly(LABELS, rows, [(T, M)] * 3, [frozenset()] * 3)
    # two sure 7Ds stay as they are (the watcher reports that as a conflict); the third is unsure
    assert [r.card for r in got] == ["7D", "7D", None]
