"""Assigning a laid-out suit or deck: each named card to one find, the set deciding what one
read alone cannot."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.labels import LABELS
from vision.layout import LayoutError, assign, parse_cards


def _rows(*reads: dict[str, float]) -> np.ndarray:
    """One probability row per find: the given cards' probabilities, the rest spread evenly."""
    out = np.zeros((len(reads), len(LABELS)))
    for i, read in enumerate(reads):
        rest = (1.0 - sum(read.values())) / (len(LABELS) - len(read))
        out[i] = rest
        for card, p in read.items():
            out[i, LABELS.index(card)] = p
    return out


def test_the_set_gives_an_unsure_card_the_one_left() -> None:
    # the four reads as the nine more than as the four, but the nine lies clearly elsewhere
    probs = _rows({"9C": 0.95}, {"9C": 0.6, "4C": 0.3}, {"5C": 0.9})
    assert assign(probs, LABELS, ["4C", "5C", "9C"]) == [2, 0, 1]


def test_each_card_is_given_once_and_a_find_that_is_no_card_gets_none() -> None:
    # a poker chip: nothing like any card; two finds both most like the ace
    probs = _rows({"AS": 0.9}, {"AS": 0.7, "KS": 0.25}, {"back": 0.1})
    probs[2] = 1e-6
    probs[2, LABELS.index("back")] = 1 - 1e-6 * (len(LABELS) - 1)
    given = assign(probs, LABELS, ["AS", "KS"])
    assert given == [0, 1, None]


def test_more_cards_named_than_found_leaves_some_unassigned() -> None:
    assert assign(_rows({"2H": 0.8}), LABELS, ["2H", "3H", "4H"]) == [0]
    assert assign(np.zeros((0, len(LABELS))), LABELS, ["2H"]) == []


def test_probabilities_must_match_the_labels() -> None:
    with pytest.raises(ValueError, match="labels"):
        assign(np.ones((2, 5)), LABELS, ["2H"])


def test_cards_are_parsed_checked_and_all_means_the_deck() -> None:
    assert parse_cards(" 2c, 10H ,qs") == ["2C", "10H", "QS"]
    assert len(parse_cards("all")) == 52
    for bad, why in [("2C,2C", "named twice"), ("1C", "unknown card"), (" , ", "no cards"), ("back", "unknown")]:
        with pytest.raises(LayoutError, match=why):
            parse_cards(bad)


def test_a_laid_out_suit_is_found_and_assigned_in_a_photo() -> None:
    """Three clubs of the demo deck lying apart on a cloth, named in another order than they lie."""
    from tests.vision.card_scene import card_scene, rect
    from vision.classifier import CardClassifier
    from vision.detector import CardDetector
    from vision.layout import read_layout

    models = Path(__file__).resolve().parents[2] / "models"
    clf = CardClassifier(models / "card_classifier.onnx", threads=1)
    detector = CardDetector(models / "card_detector.onnx")
    scene = None
    where = {"7C": (150.0, 240.0), "2C": (330.0, 250.0), "KC": (500.0, 230.0)}
    for card, (x, y) in where.items():
        scene = card_scene(card, rect(x, y, 150, 107, 90 + (x % 7)), table=scene)
    layout = read_layout([scene], ["KC", "2C", "7C", "AC"], clf, detector)
    got = {c.card: c.corners.mean(axis=0) for c in layout.cards}
    assert set(got) == {"7C", "2C", "KC"}
    for card, (x, y) in where.items():
        assert abs(got[card][0] - x) < 10 and abs(got[card][1] - y) < 10
    assert layout.missing == ("AC",)
    assert layout.shown == ["2C", "7C", "KC"]
    with pytest.raises(LayoutError, match="no photo"):
        read_layout([], ["KC"], clf, detector)


def test_only_cards_the_reader_itself_backs_are_trusted_for_enrolment() -> None:
    from vision.layout import CHECK_BELOW, LaidCard, Layout

    crop, corners = np.zeros((88, 64, 3), np.uint8), np.zeros((4, 2), np.float32)
    sure = LaidCard("AS", 0, corners, crop, 0.9, "AS")
    decided_by_the_set = LaidCard("AH", 0, corners, crop, CHECK_BELOW - 0.01, "KC")
    layout = Layout((sure, decided_by_the_set), ("2H",), 1)
    assert decided_by_the_set.to_check and not sure.to_check
    assert layout.trusted == (sure,)
    assert layout.shown == ["AH", "AS"]


def test_the_least_cost_assignment_is_the_least_of_all_assignments() -> None:
    """Against every assignment of small random matrices (ties included), and its refusals."""
    import itertools

    from vision.layout import least_cost_assignment

    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 6))
        m = int(rng.integers(n, 8))
        cost = rng.integers(0, 5, (n, m)).astype(float) if rng.random() < 0.5 else rng.random((n, m))
        got = least_cost_assignment(cost)
        assert len(set(got)) == n and all(0 <= j < m for j in got)
        best = min(sum(cost[i, j] for i, j in enumerate(cols)) for cols in itertools.permutations(range(m), n))
        assert abs(sum(cost[i, j] for i, j in enumerate(got)) - best) < 1e-9
    with pytest.raises(ValueError, match="column of its own"):
        least_cost_assignment(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="finite"):
        least_cost_assignment(np.array([[np.inf, 0.0]]))
