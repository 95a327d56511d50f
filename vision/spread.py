"""Cards spread along a line lie in one order: each on the one before it, or each under it.

Why: which of two overlapping cards lies on top is settled pair by pair (the surer read, else
the sharper edges: :mod:`vision.occlusion`), and a pair's evidence can mislead. A card in the
middle of a fan has a card on each side lying on part of it, so it reads unsurely for reasons
that have nothing to do with its other neighbour; and the edges of a hand's middle card are
where a detector's outline is least sure. But a hand fanned or a row spread by a player lies
in one order along the spread (each card on the one before it: the way the indices show), so
the pairs of one spread can outvote the pair that is wrong.

So: cards that overlap one another in a chain of three or more, of about one size, whose centres
lie along a line, are put in the order that their decided pairs say (each card on top of the one
before it along the line, or each under it), where at least half of the spread's pairs said
anything and two thirds of those say the one order; every overlapping pair of them then takes
that order, also a pair neither the reader nor the edges decided. A trick pile dropped on one
spot is not a line, a rectangle the detector drew across two cards is not of the cards' size,
and the rectangles it may draw between cards lying apart in a row leave most pairs undecided or
split: none of them is ordered so. On 600 whole synthesised scenes read as ``identify`` reads them
(``python bench/on_top.py``: the detector's outlines) the pairs said right rise from 336 to 353
of 424, the wrong fall from 53 to 47. (The shares are set on other seeds of those scenes and on
``bench/poker_table.py``, whose rows of cards lying apart lost cards to spreads of 5 against 4.)

(Written here: it is a few lines of arithmetic on the pairs' answers, no library's job.)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from vision.detector import long_side

#: The centres of a spread lie along a line: their spread across it is at most this share of
#: their spread along it (the ratio of the centres' two singular values; a fan's arc is well
#: inside it, a pile dropped on one spot is not).
THIN = 0.35
#: The cards of a spread are of one size: each outline's long side within this factor of the
#: group's median (a rectangle drawn across two cards, or a pip outlined, is not one of them).
SAME_SIZE = 1.25

#: A spread is put in the order its pairs say only where at least this share of them said
#: anything (two decided pairs must not order six that nothing decided: the rectangles a detector
#: draws between cards lying apart are no spread) ...
DECIDED = 0.5
#: ... and at least this share of those say the one order (2 of 3: a fan of three whose one pair
#: misleads; 5 against 4 is no answer).
MAJORITY = 2 / 3

#: Which of a pair lies on top, keyed by the pair (i, j) with i < j: 0 for i, 1 for j, None
#: where nothing said.
Tops = dict[tuple[int, int], int | None]


def in_spread_order(outlines: Sequence[np.ndarray], tops: Tops) -> Tops:
    """``tops`` (every overlapping pair of ``outlines`` and which of the two lies on top) with
    each spread of cards put in the one order most of its pairs say, as the module says."""
    out = dict(tops)
    longs = [long_side(q) for q in outlines]
    for group in _linked(range(len(outlines)), tops):
        if len(group) < 3:
            continue
        typical = float(np.median([longs[k] for k in group]))
        alike = [k for k in group if 1 / SAME_SIZE <= longs[k] / typical <= SAME_SIZE]
        for spread in _linked(alike, tops):
            if len(spread) >= 3:
                out.update(_ordered(outlines, spread, tops))
    return out


def _ordered(outlines: Sequence[np.ndarray], spread: list[int], tops: Tops) -> Tops:
    """The pairs of ``spread`` in the order most of them say; none where its cards do not lie
    along a line, or its pairs say too little (:data:`DECIDED`, at least two of them the one
    order) or no clear order (:data:`MAJORITY`)."""
    centres = np.array([outlines[k].mean(axis=0) for k in spread], np.float64)
    centres -= centres.mean(axis=0)
    _u, spreads, axes = np.linalg.svd(centres, full_matrices=False)
    if spreads[0] <= 0 or spreads[1] > THIN * spreads[0]:
        return {}
    along = {k: float(centres[m] @ axes[0]) for m, k in enumerate(spread)}
    pairs = [(i, j) for (i, j) in tops if i in along and j in along]
    later_on_top = sum(1 for i, j in pairs if tops[i, j] is not None and _later_on_top(i, j, tops[i, j], along))
    earlier_on_top = sum(1 for i, j in pairs if tops[i, j] is not None) - later_on_top
    decided = later_on_top + earlier_on_top
    most = max(later_on_top, earlier_on_top)
    if decided < DECIDED * len(pairs) or most < 2 or most < MAJORITY * decided:
        return {}
    ordered: Tops = {}
    for i, j in pairs:
        i_later = along[i] > along[j]
        ordered[i, j] = 0 if i_later == (later_on_top > earlier_on_top) else 1
    return ordered


def _later_on_top(i: int, j: int, top: int | None, along: dict[int, float]) -> bool:
    """Whether the pair's answer puts the card farther along the line on top."""
    return (top == 0) == (along[i] > along[j])


def _linked(members: Iterable[int], tops: Tops) -> list[list[int]]:
    """The groups of ``members`` that overlap one another in a chain (union-find over the pairs)."""
    parent = {k: k for k in members}

    def root(k: int) -> int:
        while parent[k] != k:
            k = parent[k]
        return k

    for i, j in tops:
        if i in parent and j in parent:
            parent[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for k in parent:
        groups.setdefault(root(k), []).append(k)
    return list(groups.values())

