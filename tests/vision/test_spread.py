"""Cards spread along a line lie in one order (vision/spread.py): the spread's pairs outvote the
one pair whose evidence misleads, fill in the pairs nothing decided, and leave piles, ties and
outlines of another size alone."""

from __future__ import annotations

import cv2
import numpy as np

from vision.occlusion import what_shows
from vision.spread import in_spread_order


def _rect(x0: float, y0: float, w: float = 100, h: float = 140) -> np.ndarray:
    return np.array([[x0, y0], [x0 + w, y0], [x0 + w, y0 + h], [x0, y0 + h]], np.float32)


ROW = [_rect(40, 60), _rect(80, 62), _rect(120, 64)]  # a spread: each card 40 px along the last, 0 and 2 overlap too


def test_the_spread_outvotes_the_pair_that_says_the_other_way() -> None:
    said = {(0, 1): 0, (1, 2): 1, (0, 2): 1}  # 1 and 2 say each card lies on the one before; (0, 1) says not
    assert in_spread_order(ROW, said) == {(0, 1): 1, (1, 2): 1, (0, 2): 1}
    said = {(0, 1): 0, (1, 2): 0, (0, 2): 1}  # spread the other way: each card on the one after it
    assert in_spread_order(ROW, said) == {(0, 1): 0, (1, 2): 0, (0, 2): 0}


def test_a_pair_nothing_decided_takes_the_spread_s_order() -> None:
    assert in_spread_order(ROW, {(0, 1): 1, (1, 2): 1, (0, 2): None})[0, 2] == 1


def test_the_order_goes_by_place_along_the_line_not_by_index() -> None:
    shuffled = [ROW[2], ROW[0], ROW[1]]  # the same spread, found in another order
    said = {(0, 1): 0, (0, 2): 0, (1, 2): 0}  # (1, 2) is the wrong pair now: card 1 lies before card 2
    assert in_spread_order(shuffled, said) == {(0, 1): 0, (0, 2): 0, (1, 2): 1}


def test_one_vote_or_an_even_split_changes_nothing() -> None:
    lone = {(0, 1): 1, (1, 2): None, (0, 2): None}
    assert in_spread_order(ROW, lone) == lone
    row4 = ROW + [_rect(160, 66)]
    split = {(0, 1): 1, (1, 2): 0, (2, 3): 1, (1, 3): 0, (0, 2): None}
    assert in_spread_order(row4, split) == split


def test_a_pile_is_no_spread() -> None:
    pile = [_rect(40, 60), _rect(100, 70), _rect(70, 120)]  # dropped round one spot: a triangle, not a line
    said = {(0, 1): 0, (1, 2): 1, (0, 2): 1}
    assert in_spread_order(pile, said) == said


def test_an_outline_across_two_cards_takes_no_part() -> None:
    across = [_rect(40, 60), _rect(60, 60, w=200, h=280), _rect(120, 64)]  # a rectangle twice a card's size
    said = {(0, 1): 0, (1, 2): 1, (0, 2): 1}
    assert in_spread_order(across, said) == said


def _fan_photo() -> np.ndarray:
    """ROW drawn in order (each card on the one before it) on a dark table, with a little print."""
    rng = np.random.default_rng(3)
    image = (rng.normal(60, 6, (300, 400, 1)) + np.zeros((1, 1, 3))).clip(0, 255).astype(np.uint8)
    for q in ROW:
        cv2.fillConvexPoly(image, np.round(q).astype(np.int32), (235, 235, 235))
        cv2.polylines(image, [np.round(q).astype(np.int32)], True, (170, 170, 170), 1)
        x0, y0 = q.min(axis=0)
        cv2.circle(image, (int(x0 + 15), int(y0 + 20)), 6, (40, 40, 200), -1)
    return cv2.GaussianBlur(image, (0, 0), 0.8)


def test_a_fan_s_middle_card_read_unsurely_still_lies_on_the_card_before_it() -> None:
    """The middle card of a fan reads unsurely (the card on it covers most of it) and the first
    card surely: pair by pair, the reader puts the first card on the middle one. The fan's other
    pairs say each card lies on the one before it, so the middle card lies on the first."""
    shows = what_shows(_fan_photo(), ROW, sureness=[0.93, 0.55, 0.99])
    assert shows[0].under == (1, 2)
    assert shows[1].under == (2,)
    assert shows[2].under == ()


def test_a_spread_whose_pairs_say_little_or_no_clear_order_is_left_alone() -> None:
    row5 = ROW + [_rect(160, 66), _rect(200, 68)]
    links = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 2), (1, 3), (2, 4)]
    two_of_seven = dict.fromkeys(links, None) | {(0, 1): 1, (1, 2): 1}  # two pairs cannot order seven
    assert in_spread_order(row5, two_of_seven) == two_of_seven
    three_to_two = dict.fromkeys(links, None) | {(0, 1): 1, (1, 2): 1, (2, 3): 1, (3, 4): 0, (0, 2): 0}
    assert in_spread_order(row5, three_to_two) == three_to_two  # 3 against 2: no clear order
    four_to_two = three_to_two | {(1, 3): 1}
    assert in_spread_order(row5, four_to_two) == dict.fromkeys(links, 1)
