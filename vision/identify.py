"""Find and read every card in one photo: the pipeline behind ``loo-table identify``.

One function, so that the command, ``bench/realphotos.py`` (which scores it on labelled real
photographs) and the live table's settled-frame read all run the same code: a figure measured on
photos is then a figure of the product, not of a copy of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np

from vision.classifier import BACK, CardClassifier, Reading
from vision.detector import CardDetector, quad_iou
from vision.finder import (
    FoundCard,
    contour_cues,
    find_cards,
    narrower_outlines,
    order_corners,
    overlap,
    reading_order,
    warp_card,
    wider_outline,
)
from vision.occlusion import (
    Box,
    card_pixels_in_crop,
    completed_crop,
    grown_across,
    mask_in_crop,
    paper_like,
    past_the_frame,
    reaches_past,
    short_side,
    shown_box,
    shown_in_crop,
    surer_of,
    what_shows,
)
from vision.strips import (
    aligned_to_map,
    card_shaped,
    cut_by_the_frame,
    hidden_beside,
    mapped_not_outlined,
    mapped_parts,
    sized_as,
)
from vision.voc import quad_box

#: How covered cards' completed crops are read: the readings and, from the same pass, the reader's
#: corner-index members' (None for a model without them), as
#: :meth:`vision.classifier.CardClassifier.classify_with_index` reads them.
CompletedReader = Callable[[list[np.ndarray]], "tuple[list[Reading], list[Reading] | None]"]


@dataclass(frozen=True)
class CardInPhoto:
    """One card found in a photo and what the reader made of it: ``found.corners`` is its whole
    outline (also where it is covered), ``box`` the box around the part that shows (inside the
    frame, not under another card: :mod:`vision.occlusion`), ``under`` the indices (in
    ``identify``'s list) of the cards lying on it."""

    found: FoundCard
    reading: Reading
    box: Box | None = None
    under: tuple[int, ...] = ()

    @property
    def shown_box(self) -> Box:
        """``box``, or the whole outline's box where nobody worked out what shows."""
        return self.box if self.box is not None else quad_box(self.found.corners)

    def to_dict(self) -> dict[str, Any]:
        """The JSON line entry of ``loo-table identify``: the reading, the card's corners, the box
        around what shows of it and, where cards lie on it, their indices."""
        entry = self.reading.to_dict()
        entry["corners"] = [[round(float(x), 1), round(float(y), 1)] for x, y in self.found.corners]
        entry["box"] = [round(float(v), 1) for v in self.shown_box]
        if self.under:
            entry["under"] = list(self.under)
        return entry


#: The second look at a photo in which the first named no card: the detector at a lower
#: threshold, the photo scaled to each of these long sides in turn.
SECOND_LOOK_SIDES = (768, 512, 384, 256, 192)
SECOND_LOOK_THRESHOLD = 0.2
#: A card of the second look counts only where this many of its sizes read it the same.
SECOND_LOOK_AGREE = 2


def identify(image_bgr: np.ndarray, classifier: CardClassifier, detector: CardDetector | None = None, *,
             look_again: bool = True, detector_side: int | Sequence[int] | None = None,
             min_card_px: int = 24, past_the_view: bool = True) -> list[CardInPhoto]:
    """Every card in ``image_bgr`` with its reading and what shows of it (:mod:`vision.occlusion`),
    in the finder's order (top to bottom), then the strips of cards under others that only the
    detector's map of card pixels shows (:mod:`vision.strips`).

    Where the first look names no card (a photo's card may be of any size, and the detector's
    answer on a real photo is weaker than on the scenes it learnt from: a lone card half under a
    book peaks below its threshold), a second look (``look_again``, with a detector) reads the
    photo at five sizes with a lower threshold. Each size is a separate look, and a card counts
    only where two of them read the same card in the same place: more guesses would otherwise
    mean more wrong cards (on the labelled train/ photos it named 7 more cards, 0 wrong; the live
    table needs none of it: a zone's scale is known and every card is looked at twice anyway).

    ``detector_side`` and ``min_card_px`` are :func:`vision.finder.find_cards`'s: a caller that
    knows the cards' size in pixels (a live table's rectified zone) reads at that size only.

    ``past_the_view``: also read a part in view as the whole card it may belong to, where the rest
    lies past the photo's edge or under something that is not a card (a book). The live table
    wants none of it: a card lies whole in its zone, and guessing the whole card an unsure one is
    the part of named a stained four of clubs a nine (``bench/deck_learning.py --detector``).
    """
    card_maps: dict[int, np.ndarray] = {}
    found = find_cards(image_bgr, detector=detector, card_masks=card_maps, detector_side=detector_side,
                       min_card_px=min_card_px)
    readings = _read_found(classifier, found)
    cards = [CardInPhoto(f, r) for f, r in zip(found, readings, strict=True)]
    if detector is not None and look_again and all(r.card is None for r in readings):
        again, cards = _second_look(image_bgr, classifier, detector, cards)
        if again:
            kept = [c for c in cards if all(quad_iou(c.found.corners, a.found.corners) < 0.5 for a in again)]
            order = reading_order(image_bgr.shape[0])
            cards = sorted(kept + again, key=lambda c: order(c.found))
    shows = what_shows(image_bgr, [c.found.corners for c in cards], sureness=[c.reading.confidence for c in cards])
    cards = [replace(c, box=s.box, under=s.under) for c, s in zip(cards, shows, strict=True)]
    card_map = card_maps[max(card_maps)] if card_maps else None  # the detector's finest map of card pixels
    map_u8 = None if card_map is None else (np.clip(card_map, 0.0, 1.0) * 255).astype(np.uint8)  # as warps want it
    cards = _read_covered(image_bgr, classifier, cards, map_u8)
    if past_the_view:
        cards = _read_past_the_frame(image_bgr, classifier, cards)
    cards = _read_wider(image_bgr, classifier, cards)
    cards = _read_detected(image_bgr, classifier, cards)
    if card_map is not None and map_u8 is not None:
        cards = _read_realigned(image_bgr, classifier, cards, card_map)
        if past_the_view:
            cards = _read_past_a_cover(image_bgr, classifier, cards, card_map, map_u8)
        cards = _read_narrower(image_bgr, classifier, cards)
        cards = _read_resettled(image_bgr, classifier, cards)
        cards += _read_strips(image_bgr, classifier, cards, card_map)
        if past_the_view:
            cards += _read_cut_by_the_frame(image_bgr, classifier, cards, card_map, map_u8)
            cards += _read_mapped(image_bgr, classifier, cards, card_map, map_u8)
    return _no_crumbs(_one_outline_per_card(cards))


def _read_found(classifier: CardClassifier, found: Sequence[FoundCard]) -> list[Reading]:
    """The finder's crops read, the reader's agreement rule (``CardClassifier.agreement``) asked
    for where a crop is a whole card's outline: one the contour cues traced (``FoundCard.clear``)
    or the detector's rectangle (``cue == "network"``), which it draws round the whole card, the
    part of it under a book or another card too. Not for a cue's find that no detection explains,
    which may be the part of a card in view (a king of spades half under a book, outlined by its
    top, showed its index to the corner-index members and the whole-card member alike, and both
    read the king of diamonds), nor for any later read (completed by its half turn, grown,
    narrowed). The detector's rectangles were first left out too; with the steadiness rule
    (``CardClassifier.steady``) asking them reads `felt-52`'s two unsure eights of clubs (267 ->
    269 of 273), one more card of `bench/overlaps.py` (446 of 612), none wrongly on any set."""
    crops = [f.crop for f in found]
    if getattr(classifier, "agreement", None) is None:
        return classifier.classify(crops)
    return classifier.classify(crops, whole=[f.clear or f.cue == "network" for f in found])


#: Two outlines overlapping by this much (IoU) and read as the same card are one card found twice.
SAME_CARD_TWICE = 0.3


def _one_outline_per_card(cards: list[CardInPhoto]) -> list[CardInPhoto]:
    """The cards with each card found twice kept once: of two outlines that overlap
    (:data:`SAME_CARD_TWICE`) and are read as the same card, the one read less surely goes (a
    deck holds each card once, and reported twice it would be a card too many for the referee).
    ``under`` indices are renumbered to the list returned."""
    named = sorted((i for i, c in enumerate(cards) if c.reading.card is not None),
                   key=lambda i: -cards[i].reading.confidence)
    gone: set[int] = set()
    for k, i in enumerate(named):
        for j in named[:k]:
            if j not in gone and cards[j].reading.card == cards[i].reading.card \
                    and quad_iou(cards[i].found.corners, cards[j].found.corners) >= SAME_CARD_TWICE:
                gone.add(i)
                break
    return _without(_named_once(cards, [i for i in named if i not in gone]), gone)


def _without(cards: list[CardInPhoto], gone: set[int]) -> list[CardInPhoto]:
    """The cards but those at the indices ``gone``, ``under`` renumbered to the list returned."""
    if not gone:
        return cards
    new_index = {old: new for new, old in enumerate(i for i in range(len(cards)) if i not in gone)}
    return [replace(c, under=tuple(new_index[u] for u in c.under if u in new_index))
            for i, c in enumerate(cards) if i not in gone]


#: An unnamed find whose outline is smaller than this share of the photo's named cards' (the
#: median of their areas) is no card lying on that table: a coin, a pip, a patch of a rug.
CRUMB = 0.2


def _no_crumbs(cards: list[CardInPhoto]) -> list[CardInPhoto]:
    """The cards without the unnamed finds far smaller than the cards named in the photo
    (:data:`CRUMB`). Why: the cards on one table are of one size give or take the photo's
    perspective, and a find a fifth of their size that names nothing would only ask the host
    about a coin. Where nothing is named there is no size to go by, and nothing goes."""
    areas = [abs(cv2.contourArea(c.found.corners.astype(np.float32))) for c in cards]
    named = [a for a, c in zip(areas, cards, strict=True) if c.reading.card is not None]
    if not named:
        return cards
    least = CRUMB * float(np.median(named))
    return _without(cards, {i for i, (a, c) in enumerate(zip(areas, cards, strict=True))
                            if a < least and c.reading.card is None and not c.reading.face_down})


def _named_once(cards: list[CardInPhoto], named: list[int]) -> list[CardInPhoto]:
    """The cards with a card named at two places apart named at the surer one only; the other
    is unsure, its reading naming the card in ``excluded`` (a contradiction the caller may
    show). Why: a deck holds each card once, so one of the two reads is wrong, most likely the
    less sure (in a 12 MP photo of a card table, of the kind ``bench/poker_table.py`` makes, a
    card under a pair read from its strip as the nine of hearts lying in the row). ``named``:
    the indices of the named cards, surest first."""
    seen: set[str] = set()
    out = list(cards)
    for i in named:
        card = cards[i].reading.card
        if card in seen:
            r = cards[i].reading
            out[i] = replace(cards[i], reading=replace(r, card=None, excluded=card))
        elif card is not None:
            seen.add(card)
    return out


#: A card lying under no found card, of whose crop less than this share is card pixels in the
#: detector's map, is read again from the part that is: something else lies on it (a book, a cloth,
#: a hand) or it runs past the frame. (On the labelled train/ photos 4 more cards named right, 2 of
#: them held back, none wrongly; on rendered photos and synthesised scenes no read lost or wrong.)
MAP_SHOWS = 0.8


def _read_covered(image_bgr: np.ndarray, classifier: CardClassifier, cards: list[CardInPhoto],
                  map_u8: np.ndarray | None = None) -> list[CardInPhoto]:
    """Each covered card read again from what shows of it (:func:`reread_from_what_shows`). A card
    under another found card shows where no outline lies on it; with the detector's map of card
    pixels (``map_u8``: probability × 255, over the whole photo), a card under none of whose crop
    the map says too little is card (:data:`MAP_SHOWS`) shows where the map says card, and is
    named so only where that read is sure (:data:`COMPLETED_SURE`, or the corner indices' rule):
    the rules for two views agreeing (:data:`BOTH_AGREE`, the split between two cards of a suit)
    want a whole crop with another card's face in it. (On ``bench/photos.py --seed 11`` a five
    of hearts cut by the frame was named an ace that way; with the rule, none wrongly, and one
    card fewer named on the default seed's frame-cut shots; train/ unchanged.)"""
    size = (image_bgr.shape[1], image_bgr.shape[0])
    shown: dict[int, np.ndarray] = {}
    for i, c in enumerate(cards):
        if c.under:
            shown[i] = shown_in_crop(image_bgr.shape, c.found.corners, [cards[j].found.corners for j in c.under])
        elif map_u8 is not None and (card := card_pixels_in_crop(map_u8, c.found.corners, size)).mean() < MAP_SHOWS:
            grown = card | (paper_like(c.found.crop, card) & shown_in_crop(image_bgr.shape, c.found.corners, []))
            shown[i] = grown if grown.mean() < MAP_SHOWS else card  # all paper-coloured: colour cannot tell
    readings = reread_from_what_shows([c.found.crop for c in cards], [c.reading for c in cards], shown,
                                      _completed_reader(classifier), {i: c.under for i, c in enumerate(cards)})
    # a card that no card lies on is named from the map's part only where that read is sure: its
    # whole crop and its completed crop show the same part of it (the rest is past the frame or
    # under a book), so their agreeing is no second view, as it is for a card under another
    readings = [r if c.under or r is c.reading or r.confidence >= COMPLETED_SURE else c.reading
                for c, r in zip(cards, readings, strict=True)]
    readings = [r if c.under else _whole_disagrees(c.reading, r) for c, r in zip(cards, readings, strict=True)]
    return [c if r is c.reading else replace(c, reading=r) for c, r in zip(cards, readings, strict=True)]


def _completed_reader(classifier: CardClassifier) -> CompletedReader:
    """How ``identify`` reads completed crops: with the reader's corner-index members where it
    has them, and as crops no finder outlined (``CardClassifier.classify``'s ``outlined``)."""
    with_index = getattr(classifier, "classify_with_index", None)
    if with_index is None:  # not a CardClassifier (which always has it): a reader of its own rules
        return lambda crops: (classifier.classify(crops), None)
    return lambda crops: with_index(crops, outlined=False)


def _read_past_the_frame(image_bgr: np.ndarray, classifier: CardClassifier,
                         cards: list[CardInPhoto]) -> list[CardInPhoto]:
    """Each card left unsure whose outline is only the part of a card inside the frame
    (:func:`vision.occlusion.past_the_frame`: a square outline along the photo's edge) read again
    as the whole card it is part of, completed by its half turn and weighed as a covered card
    (:func:`_either`); where that names it, its outline becomes the whole card's. (On the labelled
    train/ photos: 2 more cards named right, cards lying across the frame's edge that read unsure
    squeezed into a card's shape; none wrongly.)"""
    size = (image_bgr.shape[1], image_bgr.shape[0])
    todo: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
    for i, c in enumerate(cards):
        if c.reading.card is not None or c.reading.face_down:
            continue
        for whole in past_the_frame(c.found.corners, size):
            crop = warp_card(image_bgr, whole)
            done = completed_crop(crop, shown_in_crop(image_bgr.shape, whole, [cards[j].found.corners for j in c.under]))
            if done is not None:
                todo.append((i, whole, crop, done))
    if not todo:
        return cards
    again, by_index = _completed_reader(classifier)([t[3] for t in todo])
    out = list(cards)
    for k, (i, whole, crop, _done) in enumerate(todo):
        read = _either(cards[i].reading, again[k], None if by_index is None else by_index[k])
        if read.card is not None and (out[i].reading.card is None or read.confidence > out[i].reading.confidence):
            out[i] = replace(cards[i], found=replace(cards[i].found, corners=whole, crop=crop), reading=read)
    return out


def _read_detected(image_bgr: np.ndarray, classifier: CardClassifier, cards: list[CardInPhoto]) -> list[CardInPhoto]:
    """Each card left unsure read again from the finder's other guess at it
    (:attr:`vision.finder.FoundCard.detected`: the detector's rectangle where a contour cue's
    outline was kept over it, or where fitting it to the photo's edges moved it far); where that
    names a card no other find is named as, the rectangle becomes its outline. Why: where cards
    lie in a pile, the colour cue's blob takes in the cards under the one on top, and a fit can
    land on a court card's picture frame or a neighbour's edge; the detector's rectangle, though
    its edges are weaker, is the card's.

    Which card lies on which was settled from the first outlines and reads, so it is settled again
    for each card given a new outline (:func:`_relayered`), and each card it now lies on that is
    still unsure is read again from what shows of it (:func:`reread_from_what_shows`). (On
    ``bench/overlaps.py``: 14 more of 580 cards named, none wrongly; on the labelled train/
    photos a ten and the jack under it in a row, a jack fitted to its picture frame and a jack in a
    fan; on ``bench/photos.py`` nothing changed.)"""
    todo = [(i, c.found.detected) for i, c in enumerate(cards)
            if c.reading.card is None and not c.reading.face_down and c.found.detected is not None]
    if not todo:
        return cards
    crops = [warp_card(image_bgr, quad) for _i, quad in todo]
    named = {c.reading.card for c in cards}
    out = list(cards)
    moved: list[int] = []
    for (i, quad), crop, reading in zip(todo, crops, classifier.classify(crops), strict=True):
        if reading.card is None or reading.card in named:
            continue
        named.add(reading.card)
        moved.append(i)
        out[i] = replace(cards[i], found=replace(cards[i].found, corners=quad, crop=crop, cue="network"), reading=reading)
    if not moved:
        return cards
    out, lower = _relayered(image_bgr, out, moved)
    return _read_from_what_shows(image_bgr, classifier, out, [j for j in lower if out[j].reading.card is None])


def _relayered(image_bgr: np.ndarray, cards: list[CardInPhoto], moved: Sequence[int]) -> tuple[list[CardInPhoto], list[int]]:
    """The cards with which lies on which settled again for each of ``moved`` (cards given a new
    outline and reading), as :func:`vision.occlusion.what_shows` settles it for the whole photo
    (the surer read on top, else the sharper edges); the other cards keep the order between them.
    Also the cards that a moved card now lies on and did not before."""
    shows = what_shows(image_bgr, [c.found.corners for c in cards], sureness=[c.reading.confidence for c in cards])
    size = (image_bgr.shape[1], image_bgr.shape[0])
    unders = [set(c.under) for c in cards]
    for i in moved:
        unders[i] = set(shows[i].under)
        for j in range(len(cards)):
            if j != i:
                unders[j].discard(i)
                if i in shows[j].under:
                    unders[j].add(i)
    out = [c if unders[k] == set(c.under) and k not in moved else
           replace(c, under=tuple(sorted(unders[k])),
                   box=shown_box(c.found.corners, [cards[u].found.corners for u in sorted(unders[k])], size))
           for k, c in enumerate(cards)]
    lower = [j for j in range(len(cards)) if j not in moved and unders[j] - set(cards[j].under)]
    return out, lower


def _read_from_what_shows(image_bgr: np.ndarray, classifier: CardClassifier, cards: list[CardInPhoto],
                          which: Sequence[int]) -> list[CardInPhoto]:
    """The cards with each of ``which`` read again from what shows of it, not under the cards
    lying on it (:func:`reread_from_what_shows`)."""
    shown = {j: shown_in_crop(image_bgr.shape, cards[j].found.corners, [cards[k].found.corners for k in cards[j].under])
             for j in which}
    readings = reread_from_what_shows([c.found.crop for c in cards], [c.reading for c in cards], shown,
                                      _completed_reader(classifier), {j: cards[j].under for j in shown})
    return [c if r is c.reading else replace(c, reading=r) for c, r in zip(cards, readings, strict=True)]


def _read_resettled(image_bgr: np.ndarray, classifier: CardClassifier, cards: list[CardInPhoto]) -> list[CardInPhoto]:
    """Each card left unsure put under every card named since that overlaps it and is surer
    (:func:`vision.occlusion.surer_of`), and read again from what shows of it
    (:func:`reread_from_what_shows`). Why: which card lies on top was settled from the first
    reads, and a card on top named only by a later step (a narrower outline, the detector's
    rectangle) had not been sure enough then to lie on the card under it, whose whole crop,
    mostly the card on top, reads unsure. (``bench/overlaps.py``: 4 more of 580 cards named, 2
    more of 613 with ``--seed 777``, none wrongly; the labelled train/ photos unchanged.)"""
    size = (image_bgr.shape[1], image_bgr.shape[0])
    out = list(cards)
    for i, c in enumerate(cards):
        if c.reading.card is not None or c.reading.face_down:
            continue
        on = [j for j, o in enumerate(cards) if j != i and o.reading.card is not None and j not in c.under
              and i not in o.under and surer_of(o.reading.confidence, c.reading.confidence) == 0
              and overlap(o.found.corners, c.found.corners) > 0]
        if on:
            under = tuple(sorted({*c.under, *on}))
            out[i] = replace(c, under=under, box=shown_box(c.found.corners, [cards[k].found.corners for k in under], size))
    moved = [i for i in range(len(out)) if out[i].under != cards[i].under]
    return _read_from_what_shows(image_bgr, classifier, out, moved) if moved else cards


def _read_narrower(image_bgr: np.ndarray, classifier: CardClassifier, cards: list[CardInPhoto]) -> list[CardInPhoto]:
    """Each card left unsure, with no card found on it, read again from narrower outlines fitted to
    the photo's edges (:func:`vision.finder.narrower_outlines`: its outline took in more than the
    card); where those that name a card surely (:data:`COMPLETED_SURE`, as a completed crop must)
    all name the same one, and no other find is named as it, the surest becomes the card's outline.
    Why: in a pile the colour cue's blob, or the detector's rectangle, takes in the cards under the
    one on top, whose own edges lie inside it. It runs after the steps that keep a card's outline,
    so that a card they name keeps its own. (On ``bench/overlaps.py``: 4 more of 580 cards named,
    none wrongly; on the labelled train/ photos and ``bench/photos.py`` nothing changed. Why
    surely: a narrower outline can also lie inside one card, round the middle of its face, where
    the middle pip of a five of spades read 0.63 as the ace; ``bench/photos.py --photos 100``:
    misnamed 1 -> 0, 2 fewer of 709 table-camera cards named, ``bench/overlaps.py`` 1 fewer.)"""
    todo = [(i, quad) for i, c in enumerate(cards) if c.reading.card is None and not c.reading.face_down
            and not c.under for quad in narrower_outlines(image_bgr, c.found.corners)]
    if not todo:
        return cards
    crops = [warp_card(image_bgr, quad) for _i, quad in todo]
    named_by: dict[int, list[tuple[Reading, np.ndarray, np.ndarray]]] = {}
    for (i, quad), crop, reading in zip(todo, crops, classifier.classify(crops), strict=True):
        if reading.card is not None and reading.confidence >= COMPLETED_SURE:
            named_by.setdefault(i, []).append((reading, quad, crop))
    size = (image_bgr.shape[1], image_bgr.shape[0])
    named = {c.reading.card for c in cards}
    out = list(cards)
    for i, reads in named_by.items():
        if len({r.card for r, _q, _c in reads}) > 1 or reads[0][0].card in named:
            continue
        reading, quad, crop = max(reads, key=lambda t: t[0].confidence)
        named.add(reading.card)
        out[i] = replace(cards[i], found=replace(cards[i].found, corners=quad, crop=crop), reading=reading,
                         box=shown_box(quad, [], size))
    return out


def _read_wider(image_bgr: np.ndarray, classifier: CardClassifier, cards: list[CardInPhoto]) -> list[CardInPhoto]:
    """Each card left unsure, with no card lying on it, read again from a wider outline where the
    photo's edges back one (:func:`vision.finder.wider_outline`: its outline took in part of the
    card only); where that names it, the wider outline becomes the card's."""
    todo = [(i, wider) for i, c in enumerate(cards) if c.reading.card is None and not c.reading.face_down
            and not c.under and (wider := wider_outline(image_bgr, c.found.corners)) is not None]
    if not todo:
        return cards
    crops = [warp_card(image_bgr, wider) for _i, wider in todo]
    size = (image_bgr.shape[1], image_bgr.shape[0])
    out = list(cards)
    for (i, wider), crop, reading in zip(todo, crops, classifier.classify(crops), strict=True):
        if reading.card is not None:  # nothing lies on it: what shows is the wider outline in the frame
            out[i] = replace(cards[i], found=replace(cards[i].found, corners=wider, crop=crop), reading=reading,
                             box=shown_box(wider, [], size))
    return out


#: A guess at the whole card that a part in view belongs to may run past that part over at most
#: this share of card pixels (the detector's map): what lies past it is then something other than
#: a card (a book, a newspaper, the table), which may cover the rest of it. Where it is card, the
#: part is more likely a card's strip or a card under that one, which the steps before read. (On
#: ``bench/overlaps.py``'s 300 scenes, no limit named one card wrongly; 0.5 to 0.8 named the same
#: cards, none wrongly. Past a king half under a book's white page in train/ it is 0.49.)
PAST_THE_PART_CARD = 0.6


def _read_past_a_cover(image_bgr: np.ndarray, classifier: CardClassifier, cards: list[CardInPhoto],
                       card_map: np.ndarray, map_u8: np.ndarray) -> list[CardInPhoto]:
    """Each card left unsure, with no card found on it, read again as the whole card its outline
    may be the part in view of, something other than a card covering the rest
    (:func:`_whole_from_part`).

    Why: the detector outlines a card half under a book or a newspaper by the part that shows,
    often a card-shaped piece lying across the card, or askew, and the reader cannot name that
    crop. The part in view is taken as the outline found and as the detector's map of card pixels
    under it bounds it along its straight edges (:func:`vision.strips.mapped_parts`). Only the
    reading changes; the outline and the box stay as found (a card wholly in view may read so too,
    its crop completed as if cut along a side, and would otherwise be given an outline too large).
    (On the labelled train/ photos: 2 more cards named, a king half under a book and a ten cut by
    the frame, none wrongly; on ``bench/photos.py``'s rendered photos 5 more, none wrongly.)"""
    size = (image_bgr.shape[1], image_bgr.shape[0])
    todo: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
    unsure = [i for i, c in enumerate(cards) if c.reading.card is None and not c.reading.face_down and not c.under]
    for i, mapped in zip(unsure, mapped_parts(card_map, [cards[i].found.corners for i in unsure], size), strict=True):
        part = np.zeros(image_bgr.shape[:2], np.uint8)
        cv2.fillConvexPoly(part, np.round(cards[i].found.corners).astype(np.int32), 255)
        others = [o.found.corners for j, o in enumerate(cards) if j != i]
        parts: list[tuple[np.ndarray, np.ndarray]] = [(cards[i].found.corners, part)]
        if mapped is not None:
            blob, rects = mapped
            blob_in_photo = cv2.resize(blob, size, interpolation=cv2.INTER_NEAREST)  # once for all its rectangles
            parts += [(rect, blob_in_photo) for rect in rects]
        for quad, shows in parts:
            todo.extend((i, *guess) for guess in _whole_from_part(image_bgr, quad, shows, others, map_u8))
    named = {c.reading.card for c in cards}
    out = list(cards)
    for i, (read, _quad, _crop) in _agreed(classifier, todo, named, agree=1).items():
        named.add(read.card)
        out[i] = replace(cards[i], reading=read)
    return out


def _read_mapped(image_bgr: np.ndarray, classifier: CardClassifier, cards: list[CardInPhoto],
                 card_map: np.ndarray, map_u8: np.ndarray) -> list[CardInPhoto]:
    """The cards the detector mapped as card pixels but did not outline
    (:func:`vision.strips.mapped_not_outlined`: a card half under a book, whose centre, where the
    detector looks for a card, is hidden), each read as the whole card its blob may be the part in
    view of (:func:`_whole_from_part`) and reported only where :data:`REALIGNED_AGREE` different
    guesses name it alike, surely, and none names another card: the detector found no card there
    at all. Its box is the blob's. (On the labelled train/ photos: a ten half under a book found
    and named, none wrongly; one guess alone would also have named a flower painted on a place
    mat.)"""
    size = (image_bgr.shape[1], image_bgr.shape[0])
    named_areas = [cv2.contourArea(c.found.corners) for c in cards if c.reading.card is not None]
    card_area = float(np.median(named_areas)) if named_areas else None
    outlines = [c.found.corners for c in cards]
    to_map = np.array([card_map.shape[1] / size[0], card_map.shape[0] / size[1]], np.float32)
    todo: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
    boxes: list[Box] = []
    for n, (blob, parts) in enumerate(mapped_not_outlined(card_map, outlines, size, card_area)):
        part = cv2.resize(blob, size, interpolation=cv2.INTER_NEAREST)
        ys, xs = np.nonzero(blob)
        boxes.append((float(xs.min() / to_map[0]), float(ys.min() / to_map[1]),
                      float((xs.max() + 1) / to_map[0]), float((ys.max() + 1) / to_map[1])))
        for quad in parts:
            todo.extend((n, *guess) for guess in _whole_from_part(image_bgr, quad, part, outlines, map_u8, as_is=True))
    named = {c.reading.card for c in cards}
    out: list[CardInPhoto] = []
    for n, (read, quad, crop) in _agreed(classifier, todo, named, agree=REALIGNED_AGREE).items():
        named.add(read.card)
        out.append(CardInPhoto(FoundCard(corners=quad, crop=crop, score=0.0, cue="map"), read, boxes[n]))
    return out


def _whole_from_part(image_bgr: np.ndarray, quad: np.ndarray, part: np.ndarray, others: Sequence[np.ndarray],
                     map_u8: np.ndarray, *, as_is: bool = False) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The whole cards of which ``quad`` (photo pixels) may outline the part in view, cut along one
    of its sides (:func:`vision.occlusion.grown_across`; with ``as_is``, ``quad`` itself too where
    it has a card's shape), each running past that side over little card (:data:`PAST_THE_PART_CARD`): the outline,
    its crop, and the crop completed by its half turn (:func:`vision.occlusion.completed_crop`)
    from what shows of it, ``part`` (uint8 mask over the photo) outside the ``others`` outlines
    (the crop as it is where all of it shows)."""
    size = (image_bgr.shape[1], image_bgr.shape[0])
    guesses = grown_across(quad, range(4)) + ([order_corners(quad)] if as_is and card_shaped(quad) else [])
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for whole in guesses:
        shows = mask_in_crop(part, whole)
        past = shown_in_crop(image_bgr.shape, whole, []) & ~shows
        if float((card_pixels_in_crop(map_u8, whole, size) & past).sum()) > PAST_THE_PART_CARD * float(past.sum()):
            continue
        crop = warp_card(image_bgr, whole)
        shown = shows & shown_in_crop(image_bgr.shape, whole, [o for o in others if overlap(whole, o) > 0])
        done = crop if shown.all() else completed_crop(crop, shown)
        if done is not None:
            out.append((whole, crop, done))
    return out


def _agreed(classifier: CardClassifier, todo: Sequence[tuple[int, np.ndarray, np.ndarray, np.ndarray]],
            named: set[str | None], *, agree: int) -> dict[int, tuple[Reading, np.ndarray, np.ndarray]]:
    """Of guesses ``(key, outline, crop, completed crop)``, for each key the reading of its surest
    guess (:func:`_either` of the whole crop's and the completed crop's reads), with that guess's
    outline and crop, where at least ``agree`` different outlines (:func:`_distinct_outlines`) name
    one card at least :data:`COMPLETED_SURE` surely, no guess names another that surely, and the
    card is none of ``named`` (a deck holds each card once)."""
    if not todo:
        return {}
    wholes = classifier.classify([t[2] for t in todo])
    completed, by_index = _completed_reader(classifier)([t[3] for t in todo])
    sure: dict[int, list[tuple[Reading, np.ndarray, np.ndarray]]] = {}
    for k, (key, quad, crop, _done) in enumerate(todo):
        read = _either(wholes[k], completed[k], None if by_index is None else by_index[k])
        if read.card is not None and read.confidence >= COMPLETED_SURE:
            sure.setdefault(key, []).append((read, quad, crop))
    return {key: max(reads, key=lambda g: g[0].confidence) for key, reads in sure.items()
            if len({read.card for read, *_rest in reads}) == 1 and reads[0][0].card not in named
            and _distinct_outlines([quad for _read, quad, _crop in reads]) >= agree}


#: A covered card left unsure is named from its outlines guessed again only where at least this
#: many different guesses name it, each at least :data:`COMPLETED_SURE` surely, and none names
#: another card: one guess alone, the surest of several, adds confidently wrong cards (on
#: ``bench/overlaps.py``'s 300 scenes of the held-out designs, 16 more named and 4 of them wrong;
#: with two, 2 more and none wrong).
REALIGNED_AGREE = 2


def _read_realigned(image_bgr: np.ndarray, classifier: CardClassifier, cards: list[CardInPhoto],
                    card_map: np.ndarray) -> list[CardInPhoto]:
    """Each card left unsure with cards lying on it read again from outlines guessed anew.

    Why: in a spread hand or a row the detector outlines a card mostly hidden from the strip it
    sees, often turned or sized wrong, and its crop then cuts the index off; and which of two
    overlapping cards lies on top is settled first by the reader's sureness, so a card read unsure
    only because of its outline is put under a neighbour it lies on, and what shows of it is
    masked away. The guesses: the outline aligned to the detector's map of card pixels
    (:func:`vision.strips.aligned_to_map`), and made the size of the cards on it first
    (:func:`vision.strips.sized_as`), each with all the cards on it and with each one in turn taken
    to lie under it instead (the outline as found too, in those). Each guess is read as a covered
    card (:func:`_either`); the card is named where :data:`REALIGNED_AGREE` different outlines name
    it alike, one of them with the cards on it as found (which lies on top is otherwise only a
    guess), none otherwise, surely, as none of the cards on it and no card named elsewhere in the
    photo; the surest guess gives its outline and which cards lie on it. (On the labelled train/
    photos: 1 more card found and named, none wrongly; on ``bench/overlaps.py``, 2 more of 1,013,
    none wrongly.)"""
    size = (image_bgr.shape[1], image_bgr.shape[0])
    todo: list[tuple[int, np.ndarray, tuple[int, ...], np.ndarray, np.ndarray]] = []  # card, outline, on it, crop, completed
    for i, c in enumerate(cards):
        if c.reading.card is not None or c.reading.face_down or not c.under:
            continue
        everyone_on_it = [cards[j].found.corners for j in c.under]
        resized = sized_as(c.found.corners, everyone_on_it)
        for on_it in [c.under, *(tuple(k for k in c.under if k != j) for j in c.under)]:
            over = [cards[j].found.corners for j in on_it]
            guesses = [aligned_to_map(card_map, c.found.corners, over, size), aligned_to_map(card_map, resized, over, size)]
            if on_it != c.under:
                guesses.append(c.found.corners)
            for guess in guesses:
                quad = order_corners(guess)
                crop = warp_card(image_bgr, quad)
                done = completed_crop(crop, shown_in_crop(image_bgr.shape, quad, over)) if over else crop
                if done is not None:
                    todo.append((i, quad, on_it, crop, done))
    if not todo:
        return cards
    wholes = classifier.classify([t[3] for t in todo])
    completed, by_index = _completed_reader(classifier)([t[4] for t in todo])
    named = {c.reading.card for c in cards}
    sure: dict[int, list[tuple[Reading, np.ndarray, tuple[int, ...], np.ndarray]]] = {}  # card -> its sure reads
    for k, (i, quad, on_it, crop, _done) in enumerate(todo):
        read = _either(wholes[k], completed[k], None if by_index is None else by_index[k])
        on_top = {cards[j].reading.card for j in cards[i].under}
        if read.card is not None and read.confidence >= COMPLETED_SURE and read.card not in on_top | named:
            sure.setdefault(i, []).append((read, quad, on_it, crop))
    out = list(cards)
    for i, sure_reads in sure.items():
        if len({read.card for read, *_rest in sure_reads}) > 1 or sure_reads[0][0].card in named \
                or _distinct_outlines([quad for _read, quad, *_rest in sure_reads]) < REALIGNED_AGREE:
            continue
        if not any(on_it == cards[i].under for _read, _quad, on_it, _crop in sure_reads):
            continue  # the cards on it as found must back it: a guess at which lies on top alone is no reason
        read, quad, on_it, crop = max(sure_reads, key=lambda g: g[0].confidence)
        named.add(read.card)
        out[i] = replace(cards[i], found=replace(cards[i].found, corners=quad, crop=crop), reading=read,
                         box=shown_box(quad, [cards[j].found.corners for j in on_it], size), under=on_it)
        for j in set(cards[i].under) - set(on_it):  # it lies on these now
            under_j = tuple(sorted({*out[j].under, i}))
            out[j] = replace(out[j], under=under_j, box=shown_box(out[j].found.corners,
                                                                   [out[k].found.corners for k in under_j], size))
    return out


#: Two guessed outlines whose corners all lie within this share of the card's short side of each
#: other are one guess (aligned to the map from two starts, they often end in the same place).
SAME_OUTLINE = 0.03


def _distinct_outlines(quads: Sequence[np.ndarray]) -> int:
    """How many of ``quads`` (corners in one order) differ (:data:`SAME_OUTLINE`)."""
    kept: list[np.ndarray] = []
    for q in quads:
        if all(np.abs(q - k).max() > SAME_OUTLINE * short_side(k) for k in kept):
            kept.append(q)
    return len(kept)


def reread_from_what_shows(crops: Sequence[np.ndarray], readings: Sequence[Reading], shown: dict[int, np.ndarray],
                           read: CompletedReader, lying_on: dict[int, Sequence[int]] | None = None) -> list[Reading]:
    """Each crop ``i`` of ``shown`` (its mask of what shows) completed by its half turn
    (:func:`vision.occlusion.completed_crop`), the completed crops read in one batch (``read``:
    also by the reader's corner-index members, where it has them), and each card's reads weighed
    by :func:`_either`; the other readings as they were. A card is never named as one that
    ``lying_on[i]`` (the indices of the cards lying on card ``i``) were read as: a deck holds each
    card once, and the whole crop of a covered card is mostly the card on top."""
    todo = [(i, done) for i, mask in sorted(shown.items()) if (done := completed_crop(crops[i], mask)) is not None]
    out = list(readings)
    if todo:
        again, by_index = read([done for _i, done in todo])
        for k, (i, _done) in enumerate(todo):
            out[i] = _either(readings[i], again[k], None if by_index is None else by_index[k])
            on_top = {readings[j].card for j in (lying_on or {}).get(i, ())}
            if out[i].card is not None and out[i].card in on_top:
                out[i] = replace(out[i], card=None)
    return out


def _read_strips(image_bgr: np.ndarray, classifier: CardClassifier, cards: list[CardInPhoto],
                 card_map: np.ndarray) -> list[CardInPhoto]:
    """The cards under found cards of which only a strip shows (:func:`vision.strips.hidden_beside`),
    each read from its completed crop alone and reported only where that names a card surely
    (:data:`COMPLETED_SURE`) and not the card it lies under: its whole crop is mostly the card on
    top, and a strip that is no card reads as nothing. Each strip card is read twice, turned and
    placed as the card on top and as it lies best over the map's card pixels
    (:func:`vision.strips.aligned_to_map`); the surer read names it, unless the two name different
    cards. (On the labelled train/ photos: 3 more cards found and named, none wrongly, no extra
    find; the second guess named one of them, and alone would have lost another.)"""
    size = (image_bgr.shape[1], image_bgr.shape[0])
    todo: list[tuple[int, int, np.ndarray, np.ndarray, np.ndarray]] = []  # strip, card on top, outline, crop, completed
    for n, (quad, k) in enumerate(hidden_beside(card_map, [c.found.corners for c in cards], size)):
        over = cards[k].found.corners
        for guess in (order_corners(quad), order_corners(aligned_to_map(card_map, quad, [over], size))):
            crop = warp_card(image_bgr, guess)
            if (done := completed_crop(crop, shown_in_crop(image_bgr.shape, guess, [over]))) is not None:
                todo.append((n, k, guess, crop, done))
    if not todo:
        return []
    by_strip: dict[int, list[tuple[Reading, int, np.ndarray, np.ndarray]]] = {}
    for (n, k, quad, crop, _done), reading in zip(todo, classifier.classify([t[4] for t in todo]), strict=True):
        if reading.card is not None and reading.confidence >= COMPLETED_SURE and reading.card != cards[k].reading.card:
            by_strip.setdefault(n, []).append((reading, k, quad, crop))
    out: list[CardInPhoto] = []
    for named in by_strip.values():
        if len({reading.card for reading, *_rest in named}) > 1:
            continue  # the two guesses name different cards: neither is sure
        reading, k, quad, crop = max(named, key=lambda t: t[0].confidence)
        found = FoundCard(corners=quad, crop=crop, score=0.0, cue="strip")
        out.append(CardInPhoto(found, reading, shown_box(quad, [cards[k].found.corners], size), (k,)))
    return out


def _read_cut_by_the_frame(image_bgr: np.ndarray, classifier: CardClassifier, cards: list[CardInPhoto],
                           card_map: np.ndarray, map_u8: np.ndarray) -> list[CardInPhoto]:
    """The cards lying across the photo's edge that no outline explains
    (:func:`vision.strips.cut_by_the_frame`), each read from its crop completed from what the
    detector's map says is card of it (inside the frame, under no found card) and reported only
    where that names a card surely (:data:`COMPLETED_SURE`) that no other find in the photo is
    named: a blob that is no card's part reads as nothing, and a deck holds each card once. (On
    the labelled train/ photos: 3 more cards found and named, none wrongly, no extra find, of 31
    guesses.)"""
    size = (image_bgr.shape[1], image_bgr.shape[0])
    outlines = [c.found.corners for c in cards]
    todo: list[tuple[np.ndarray, np.ndarray, tuple[int, ...], np.ndarray]] = []
    for quad in cut_by_the_frame(card_map, outlines, size):
        quad = order_corners(quad)
        above = tuple(i for i, o in enumerate(outlines) if overlap(quad, o) > 0)
        shown = card_pixels_in_crop(map_u8, quad, size) & shown_in_crop(image_bgr.shape, quad, [outlines[i] for i in above])
        crop = warp_card(image_bgr, quad)
        if (done := completed_crop(crop, shown)) is not None:
            todo.append((quad, crop, above, done))
    if not todo:
        return []
    named = {c.reading.card for c in cards}
    out: list[CardInPhoto] = []
    for (quad, crop, above, _done), reading in zip(todo, classifier.classify([t[3] for t in todo]), strict=True):
        if reading.card is None or reading.confidence < COMPLETED_SURE or reading.card in named:
            continue
        named.add(reading.card)
        found = FoundCard(corners=quad, crop=crop, score=0.0, cue="frame edge")
        out.append(CardInPhoto(found, reading, shown_box(quad, [outlines[i] for i in above], size), above))
    return out


#: How sure the reader must be of a covered card's completed crop to name it. The completed crop
#: loses the middle of the card (covered either way round), so 8, 9 and 10 of a suit can look
#: alike: the least threshold at which its reads add no confidently wrong card to the whole
#: crop's, on rendered held-out decks' covered cards (``python -m models.heldout --covered``'s
#: calibration stream).
COMPLETED_SURE = 0.75


#: Where neither read of a covered card is sure, both best guesses naming the same card at least
#: this surely name it: two views, one with the covering card's face and one without, agreeing.
#: The least such share that adds no confidently wrong card on either stream of covered renders of
#: the held-out decks (``python -m models.heldout --covered 10 [--calibration]``: 3 of 1,560 wrong
#: each way, as with :data:`COMPLETED_SURE` alone), where it names 15 and 8 more cards right.
BOTH_AGREE = 0.55


#: A completed crop loses the middle of the card, where an 8, a 9 and a 10 differ; its index may
#: still say the suit. Where its two best guesses are cards of one suit that together hold at
#: least this share, and the whole crop, which sees some of the middle, is at least
#: :data:`SPLIT_WHOLE_SURE` sure of one of them and :data:`SPLIT_ODDS` times surer of it than of the
#: other, that one is named: each read settles what the other cannot. The least share, and the
#: least sureness of the whole crop, that add no confidently wrong card on either stream of covered
#: renders of the held-out decks (``python -m models.heldout --covered 10 [--calibration]``).
SPLIT_SHARE = 0.9
SPLIT_WHOLE_SURE = 0.4
SPLIT_ODDS = 3.0


def _split_between_two(whole: Reading, completed: Reading) -> str | None:
    """The card the whole crop picks out of the two its completed crop is split between, or None
    (:data:`SPLIT_SHARE`). The whole crop's probability of a card missing from its top three is
    at most its third's."""
    if len(completed.top3) < 2 or not whole.top3:
        return None
    (one, p_one), (two, p_two) = completed.top3[0], completed.top3[1]
    if BACK in (one, two) or one[-1] != two[-1] or p_one + p_two < SPLIT_SHARE:
        return None
    pick, p_pick = whole.top3[0]
    if pick not in (one, two) or p_pick < SPLIT_WHOLE_SURE:
        return None
    other = two if pick == one else one
    p_other = dict(whole.top3).get(other, whole.top3[-1][1])
    return pick if p_pick >= SPLIT_ODDS * p_other else None


#: Where no rule above names a covered card, the reader's corner-index members alone name it
#: from its completed crop (the whole-card member reads a crop without its middle as a card it never
#: saw) when they are at least this sure, the whole reader reads the completed crop as that card
#: first and at least :data:`INDEX_COMPLETED_SURE` surely, and that card is among the whole crop's
#: three best guesses. The pair that names the most with no confidently wrong card added on either
#: stream of covered renders of the held-out decks (``python -m models.heldout --covered 10
#: [--calibration]``: 42.3 -> 46.9 % and 42.5 -> 48.5 % named right, 3 wrong each as before).
INDEX_SURE = 0.9
INDEX_COMPLETED_SURE = 0.55
#: Where the completed crop is less sure than :data:`INDEX_COMPLETED_SURE`, the corner indices'
#: card is still named where it is the best guess of the completed crop and of the whole crop, the
#: whole crop at least this sure of it, and it is not the card lying on top (:func:`reread_from_what_shows`):
#: three reads agreeing. The least share that adds no confidently wrong card on either stream of
#: covered renders (46.9 -> 52.9 % and 48.5 -> 55.3 % named right, 3 wrong each as before; without
#: the card on top left out, one more wrong: a three of hearts under the jack of hearts read as
#: the jack all three ways).
INDEX_WHOLE_FIRST = 0.2


def _by_index(whole: Reading, completed: Reading, index: Reading) -> str | None:
    """The card the corner indices name surely that both other reads back (:data:`INDEX_SURE`):
    the completed crop at least :data:`INDEX_COMPLETED_SURE` surely with the card among the whole
    crop's three best guesses, or both reads' best guess with the whole crop at least
    :data:`INDEX_WHOLE_FIRST` sure of it."""
    card = index.card
    if card is None or card == BACK or index.confidence < INDEX_SURE or not completed.top3 or whole.card not in (None, card):
        return None
    first, p_first = completed.top3[0]
    if first != card:
        return None
    if p_first >= INDEX_COMPLETED_SURE and card in (c for c, _p in whole.top3):
        return card
    if whole.top3 and whole.top3[0][0] == card and whole.top3[0][1] >= INDEX_WHOLE_FIRST:
        return card
    return None


#: Where no card lies on a card, its whole crop's best guess at least this sure, of another card,
#: leaves the card its completed crop names unsure.
WHOLE_SAYS = 0.3


def _whole_disagrees(whole: Reading, read: Reading) -> Reading:
    """``read`` (a card's reading from its completed crop) unsure where the card's whole crop,
    with no card lying on it, guesses another card (:data:`WHOLE_SAYS`). Why: what completes the
    crop of a card cut by the frame or half under a book is its own half turn, and where that
    runs across the middle pips an 8, 9 or 10 gains or loses some (a nine of spades cut across
    its middle read as the ten at 0.88, its whole crop's guess the nine); with no other card's
    face in it, the whole crop's guess is evidence, not noise."""
    if read is whole or read.card is None or not whole.top3:
        return read
    guess, sure = whole.top3[0]
    if guess != read.card and guess != BACK and sure >= WHOLE_SAYS:
        return Reading(None, read.confidence, read.top3)
    return read


#: An outline reaching this many pixels past the photo's edge lies across it.
PAST_THE_EDGE_PX = 2.0


def _past_the_edge_completed(image_bgr: np.ndarray, classifier: CardClassifier, found: Sequence[FoundCard],
                             readings: list[Reading]) -> list[Reading]:
    """``readings`` with each card left unsure whose outline reaches past the photo's edge read
    again from what of it lies inside the frame (:func:`reread_from_what_shows`, as a covered card
    is), unless its whole crop guesses another card (:func:`_whole_disagrees`). Why: where a photo
    cuts a card, the detector often answers the whole card, past the edge, but the crop of that
    outline is partly the warp's border, and the card reads unsure although its index shows."""
    size = (image_bgr.shape[1], image_bgr.shape[0])
    shown = {i: shown_in_crop(image_bgr.shape, f.corners, []) for i, (f, r) in enumerate(zip(found, readings, strict=True))
             if r.card is None and not r.face_down and reaches_past(f.corners, size, PAST_THE_EDGE_PX)}
    if not shown:
        return readings
    again = reread_from_what_shows([f.crop for f in found], readings, shown, _completed_reader(classifier))
    return [_whole_disagrees(r, a) for r, a in zip(readings, again, strict=True)]


def _either(whole: Reading, completed: Reading, index: Reading | None = None) -> Reading:
    """A covered card's reading from its whole crop, from its completed crop and, where the reader
    has them, from its corner-index members' read of the completed crop (``index``): what
    :func:`_whole_or_completed` makes of the first two, else the card :func:`_by_index` names."""
    read = _whole_or_completed(whole, completed)
    if read.card is None and not whole.face_down and index is not None \
            and (card := _by_index(whole, completed, index)) is not None:
        return Reading(card, index.confidence, index.top3)
    if read.card is None and not whole.face_down and index is not None \
            and (weighed := _by_all_three(whole, completed, index)) is not None:
        return weighed
    return read


#: Where no rule above names a covered card, its three reads (whole crop, completed crop, the
#: corner indices of the completed crop) weighed together as if each were evidence of its own: the
#: product of the indices' and the completed crop's probabilities of a card and the whole crop's
#: to the power :data:`ALL_THREE_WHOLE_WEIGHT` (half of its crop is the card on top, so it counts
#: for less), normalised over the cards. The card is named where that reaches
#: :data:`ALL_THREE_SURE` and the whole crop names no other card. The weight is the one that names
#: the most with no confidently wrong card added on the calibration stream of covered renders of
#: the held-out decks (``python -m models.heldout --covered 10 --calibration``); there 0.998 would
#: do, but on ``bench/overlaps.py --seed 3`` it named 12 more cards and one wrongly (a five of
#: clubs a tenth of which shows under a pile, its index taken for a jack's by all three reads at
#: 0.998), and 0.999 names none wrongly on either seed. On the reported stream it names 52.9 ->
#: 54.7 % right, 3 wrong as before.
ALL_THREE_WHOLE_WEIGHT = 0.25
ALL_THREE_SURE = 0.999


def _by_all_three(whole: Reading, completed: Reading, index: Reading) -> Reading | None:
    """The card the three reads of a covered card name together (:data:`ALL_THREE_SURE`), or None
    where they do not, or a reader gave no probabilities. Why: each read alone is often unsure of
    a card whose index plainly shows (the completed crop has no middle, the indices' member reads
    an unfamiliar deck's font at 0.7), while the three agreeing is rare by chance."""
    w, c, i = whole.probabilities, completed.probabilities, index.probabilities
    if w is None or c is None or i is None:
        return None
    score = np.log(np.asarray(i.values, np.float64) + 1e-6) + np.log(np.asarray(c.values, np.float64) + 1e-6) \
        + ALL_THREE_WHOLE_WEIGHT * np.log(np.asarray(w.values, np.float64) + 1e-6)
    weighed = np.exp(score - score.max())
    weighed /= weighed.sum()
    best = int(np.argmax(weighed))
    card = c.labels[best]
    if card == BACK or weighed[best] < ALL_THREE_SURE or whole.card not in (None, card):
        return None
    return Reading(card, float(weighed[best]), completed.top3)


def _whole_or_completed(whole: Reading, completed: Reading) -> Reading:
    """A covered card's reading from its whole crop (half of it may be the card on top) and from
    its completed crop. The completed one where it is sure (:data:`COMPLETED_SURE`) and the whole
    one names no other card; the whole one where the completed crop's best guess is that card too;
    the card both best guesses name where each is at least :data:`BOTH_AGREE` sure of it; the one
    of two cards of a suit that the completed crop cannot tell apart that the whole crop picks
    (:func:`_split_between_two`); otherwise unsure. (On labelled train/ photos the first two named
    11 more cards right, none wrongly, two of them of a suit that the whole crop's best guess had
    wrong; the third 2 more; the fourth 5 more, 2 of them held back.)"""
    if whole.face_down:
        return whole
    if completed.card is not None and completed.confidence >= COMPLETED_SURE and whole.card in (None, completed.card):
        return completed
    guess = completed.card or (completed.top3[0][0] if completed.top3 else None)
    if whole.card is None and whole.top3 and completed.top3 and guess not in (None, BACK) \
            and whole.top3[0][0] == guess and min(whole.top3[0][1], completed.top3[0][1]) >= BOTH_AGREE:
        return Reading(guess, min(whole.top3[0][1], completed.top3[0][1]), completed.top3)
    if whole.card is None and (pick := _split_between_two(whole, completed)) is not None:
        return Reading(pick, dict(whole.top3)[pick], whole.top3)
    if whole.card is None or guess == whole.card:
        return whole
    return Reading(None, completed.confidence, completed.top3)


def _second_look(image_bgr: np.ndarray, classifier: CardClassifier, detector: CardDetector,
                 first: list[CardInPhoto]) -> tuple[list[CardInPhoto], list[CardInPhoto]]:
    """The cards that at least :data:`SECOND_LOOK_AGREE` sizes read the same in the same place
    (outlines overlapping by IoU 0.5), each with its most confident look, and the ``first`` look's
    cards. The looks that name a card from its whole crop count first; then, for the cards those
    leave out, all looks, those that name a card from what of it lies inside the frame
    (:func:`_past_the_edge_completed`) too. A card named only so where the first look has an
    outline gives that outline its reading and keeps it (why: an outline past the edge is a guess
    at where the rest of the card lies, and the first look's there is the detector's surer
    answer)."""
    low = detector.with_threshold(SECOND_LOOK_THRESHOLD)
    cues = contour_cues(image_bgr)  # the same at every size: worked out once
    looks: list[tuple[int, CardInPhoto, bool]] = []
    for side in SECOND_LOOK_SIDES:
        found = find_cards(image_bgr, detector=low, detector_side=side, cues=cues)
        plain = classifier.classify([f.crop for f in found])
        readings = _past_the_edge_completed(image_bgr, classifier, found, plain)
        for f, p, r in zip(found, plain, readings, strict=True):
            if r.card is not None:
                looks.append((side, CardInPhoto(f, r), r is p))  # True: named from its whole crop
    looks.sort(key=lambda look: -look[1].reading.confidence)
    out: list[CardInPhoto] = []
    firsts = list(first)
    for completed in (False, True):
        pool = [(s, c) for s, c, whole in looks if whole or completed]
        named = {c.reading.card for c in out}  # the whole crops' cards stand: a deck holds each once
        for _side, look in pool:
            same = {s for s, other in pool if other.reading.card == look.reading.card
                    and quad_iou(other.found.corners, look.found.corners) >= 0.5}
            if len(same) < SECOND_LOOK_AGREE or (completed and look.reading.card in named) \
                    or any(quad_iou(look.found.corners, c.found.corners) >= 0.5 for c in out):
                continue
            named.add(look.reading.card)
            at = [k for k, c in enumerate(firsts) if quad_iou(look.found.corners, c.found.corners) >= 0.5] if completed else []
            if at:
                firsts[at[0]] = replace(firsts[at[0]], reading=look.reading)
            else:
                out.append(look)
    return out, firsts
