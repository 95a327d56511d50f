"""`identify`'s second look: where the first look names no card, five sizes at a lower detector
threshold, and a card counts only where two of those looks read it the same in the same place.

The finder and the reader are scripted here (what each size finds, what each crop reads), so each
rule of the agreement is pinned down; `bench/realphotos.py` measures what it does on photos."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import vision.identify as ident
from vision.classifier import Reading
from vision.finder import FoundCard

IMAGE = np.zeros((400, 600, 3), np.uint8)


def _card(x: float, y: float, tag: int) -> FoundCard:
    corners = np.array([[x, y], [x + 63, y], [x + 63, y + 88], [x, y + 88]], np.float32)
    return FoundCard(corners=corners, crop=np.full((88, 64, 3), tag, np.uint8), score=0.5, cue="network")


class ScriptedReader:
    """Reads a crop by its fill value: ``script[value]`` is (card or None, confidence)."""

    def __init__(self, script: dict[int, tuple[str | None, float]]) -> None:
        self.script = script

    def classify(self, crops: list[np.ndarray], **_: Any) -> list[Reading]:
        out = []
        for crop in crops:
            card, conf = self.script[int(crop[0, 0, 0])]
            out.append(Reading(card, conf, [(card or "AS", conf), ("KD", 0.01), ("2C", 0.01)]))
        return out


class FakeDetector:
    threshold = 0.4

    def with_threshold(self, threshold: float) -> FakeDetector:
        other = FakeDetector()
        other.threshold = threshold
        return other


def _run(monkeypatch: pytest.MonkeyPatch, first: list[FoundCard], by_side: dict[int, list[FoundCard]],
         script: dict[int, tuple[str | None, float]]) -> tuple[list[ident.CardInPhoto], list[Any]]:
    calls: list[Any] = []
    cue_sets: list[Any] = []

    def find_cards(image: np.ndarray, *, detector: Any = None, detector_side: Any = None, cues: Any = None,
                   **_: Any) -> list[FoundCard]:
        calls.append((detector.threshold, detector_side))
        cue_sets.append(cues)
        return list(first) if detector_side is None else list(by_side.get(detector_side, []))

    monkeypatch.setattr(ident, "find_cards", find_cards)
    cards = ident.identify(IMAGE, ScriptedReader(script), FakeDetector())  # type: ignore[arg-type]
    # the first look works out the contour cues itself; the second works them out once for all sizes
    assert cue_sets[0] is None and all(c is cue_sets[1] and c is not None for c in cue_sets[1:])
    return cards, calls


def test_a_card_two_sizes_read_alike_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    script = {1: (None, 0.2), 2: ("QH", 0.9), 3: ("QH", 0.7)}
    cards, calls = _run(monkeypatch, [_card(100, 100, 1)], {512: [_card(102, 101, 2)], 256: [_card(99, 98, 3)]}, script)
    assert [(c.reading.card, c.reading.confidence) for c in cards] == [("QH", 0.9)]  # the surer look, once
    assert calls[0] == (0.4, None)
    assert calls[1:] == [(ident.SECOND_LOOK_THRESHOLD, s) for s in ident.SECOND_LOOK_SIDES]


def test_one_size_alone_or_two_sizes_that_disagree_name_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    script = {1: (None, 0.2), 2: ("QH", 0.95), 3: ("QD", 0.9), 4: ("7C", 0.99)}
    cards, _ = _run(monkeypatch, [_card(100, 100, 1)],
                    {768: [_card(100, 100, 2)], 384: [_card(101, 100, 3)], 192: [_card(400, 200, 4)]}, script)
    assert [c.reading.card for c in cards] == [None]  # the first look's unsure card stays as it was


def test_the_same_card_in_two_places_is_not_agreement(monkeypatch: pytest.MonkeyPatch) -> None:
    script = {1: (None, 0.2), 2: ("QH", 0.95)}
    cards, _ = _run(monkeypatch, [_card(100, 100, 1)], {512: [_card(100, 100, 2)], 256: [_card(400, 250, 2)]}, script)
    assert [c.reading.card for c in cards] == [None]


def test_the_first_look_s_unsure_cards_elsewhere_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    script = {1: (None, 0.2), 5: (None, 0.3), 2: ("QH", 0.9)}
    first = [_card(100, 100, 1), _card(400, 250, 5)]
    cards, _ = _run(monkeypatch, first, {512: [_card(100, 100, 2)], 384: [_card(100, 101, 2)]}, script)
    assert [(c.reading.card, tuple(c.found.corners[0])) for c in cards] == [("QH", (100.0, 100.0)), (None, (400.0, 250.0))]


def test_no_second_look_when_the_first_names_a_card(monkeypatch: pytest.MonkeyPatch) -> None:
    script = {1: ("AS", 0.9), 5: (None, 0.3), 2: ("QH", 0.9)}
    cards, calls = _run(monkeypatch, [_card(100, 100, 1), _card(400, 250, 5)], {512: [_card(400, 250, 2)]}, script)
    assert [c.reading.card for c in cards] == ["AS", None] and len(calls) == 1


def test_a_card_found_twice_is_reported_once() -> None:
    """Two outlines overlapping by IoU 0.3 or more, read as the same card, are one card found twice:
    the surer stays, and the cards lying on the other are renumbered to the list returned."""
    a = ident.CardInPhoto(_card(100, 100, 1), Reading("KD", 0.82))
    b = ident.CardInPhoto(_card(120, 95, 2), Reading("KD", 0.85))       # the same king, found again
    c = ident.CardInPhoto(_card(160, 100, 3), Reading("KS", 0.99), under=(3,))
    d = ident.CardInPhoto(_card(200, 100, 4), Reading("10S", 1.0))
    far = ident.CardInPhoto(_card(400, 250, 5), Reading("JD", 0.9))
    kept = ident._one_outline_per_card([a, b, c, d, far])
    assert [k.reading.card for k in kept] == ["KD", "KS", "10S", "JD"]
    assert kept[0] is b or kept[0].found is b.found
    assert kept[1].under == (2,)  # the ten, now third
    unsure = ident.CardInPhoto(_card(102, 100, 6), Reading(None, 0.3))
    assert len(ident._one_outline_per_card([a, unsure])) == 2  # an unsure outline names no card twice


def test_a_card_named_at_two_places_apart_is_named_at_the_surer_only() -> None:
    """A deck holds each card once: of two outlines apart read as the same card, the less sure is
    unsure and names the card it contradicts; both outlines stay (each is a card)."""
    row = ident.CardInPhoto(_card(100, 100, 1), Reading("9H", 0.93))
    pair = ident.CardInPhoto(_card(400, 250, 2), Reading("9H", 0.75))
    other = ident.CardInPhoto(_card(250, 100, 3), Reading("QS", 0.99))
    kept = ident._one_outline_per_card([pair, other, row])
    assert [(k.reading.card, k.reading.excluded) for k in kept] == [(None, "9H"), ("QS", None), ("9H", None)]
    assert kept[0].found is pair.found and kept[0].reading.confidence == 0.75


def _across_the_left_edge(tag: int, x: float = -30.0) -> FoundCard:
    """A card whose left part lies past the photo's left edge: its crop there is the warp's
    border (0), the rest the card (``tag``)."""
    corners = np.array([[x, 100], [x + 63, 100], [x + 63, 188], [x, 188]], np.float32)
    crop = np.full((88, 64, 3), tag, np.uint8)
    crop[:, : int(round(-x))] = 0
    return FoundCard(corners=corners, crop=crop, score=0.5, cue="network")


def test_a_card_across_the_edge_is_named_from_what_lies_inside_the_frame(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its whole crop, part border, reads unsure; completed by its half turn (the part inside the
    frame, turned, in place of the border) it reads as the card, and two sizes agree on it."""
    script = {0: (None, 0.2), 7: ("QH", 0.9)}
    cards, _ = _run(monkeypatch, [], {512: [_across_the_left_edge(7)], 384: [_across_the_left_edge(7, -28.0)]}, script)
    assert [c.reading.card for c in cards] == ["QH"]
    cards, _ = _run(monkeypatch, [], {512: [_across_the_left_edge(7)]}, script)
    assert cards == []  # one size alone is no agreement, completed or not


def test_a_card_the_first_look_has_keeps_its_outline_and_takes_the_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the first look outlined the card (read unsure), a name read from inside the frame is
    given to that outline: the second look's guess at where the rest lies does not replace it.
    A name the whole crops give elsewhere is not given twice."""
    first = _across_the_left_edge(0, -20.0)  # its crop all 0: unsure
    script = {0: (None, 0.2), 7: ("QH", 0.9), 2: ("QH", 0.95)}
    cards, _ = _run(monkeypatch, [first], {512: [_across_the_left_edge(7)], 384: [_across_the_left_edge(7, -28.0)]}, script)
    assert [(c.reading.card, c.found.corners[0, 0]) for c in cards] == [("QH", -20.0)]
    elsewhere = {768: [_card(400, 250, 2)], 256: [_card(401, 250, 2)]}
    cards, _ = _run(monkeypatch, [first], {512: [_across_the_left_edge(7)], 384: [_across_the_left_edge(7, -28.0)],
                                           **elsewhere}, script)
    assert sorted((float(c.found.corners[0, 0]), c.reading.card) for c in cards) == [(-20.0, None), (400.0, "QH")]


def _box(x: float, y: float, w: float, h: float, tag: int) -> FoundCard:
    corners = np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float32)
    return FoundCard(corners=corners, crop=np.full((88, 64, 3), tag, np.uint8), score=0.5, cue="network")


def test_an_unnamed_find_far_smaller_than_the_named_cards_is_no_card() -> None:
    """A coin or a pip found as a card, a fifth of the size of the cards named in the photo and
    naming nothing, is left out (the rest renumbered); an unsure find of a card's size stays, as
    do a small card read face down and everything in a photo where nothing is named."""
    king = ident.CardInPhoto(_box(100, 100, 63, 88, 1), Reading("KD", 0.9))
    coin = ident.CardInPhoto(_box(300, 100, 20, 20, 2), Reading(None, 0.3))
    unsure = ident.CardInPhoto(_box(200, 100, 60, 84, 3), Reading(None, 0.4), under=(3,))
    queen = ident.CardInPhoto(_box(220, 120, 63, 88, 4), Reading("QS", 0.95))
    back = ident.CardInPhoto(_box(400, 100, 20, 28, 5), Reading(None, 0.9, face_down=True))
    kept = ident._no_crumbs([king, coin, unsure, queen, back])
    assert [k.found for k in kept] == [king.found, unsure.found, queen.found, back.found]
    assert kept[1].under == (2,)  # the queen, now third
    assert ident._no_crumbs([coin, unsure]) == [coin, unsure]
