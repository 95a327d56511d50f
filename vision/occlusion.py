"""Which found card lies on which, and so what of each card shows.

Why: the detector answers each card's whole outline, also where another card covers it (so a
covered card is warped whole and read from whichever index shows). But where a card *is* in a
photo, for a person pointing at it and for a label drawn around it, is the part that shows: a
strip beside the card on top, or the part inside the frame. So ``identify`` reports, beside the
outline, the box around what shows and which cards lie on it.

The evidence for which of two overlapping cards lies on top, first to last:

- the reader, where the caller has read the whole outlines: a card wholly in view reads surely,
  while the crop of a card with another lying on part of it holds some of that card's face too;
  so where one of the two reads surely (:data:`SURE_ON_TOP`) and the other clearly less so
  (:data:`LESS_SURE`), the sure one lies on top;
- the edges: the upper card's edge runs across the lower card's face as a sharp line, while the
  lower card's edge is hidden under the upper card. So of two overlapping outlines, the one whose
  edges inside the other show the stronger gradient across them lies on top. This alone is
  fooled where the lower card's hidden edge runs along a court card's printed frame;
- the spread, last: cards fanned or spread in a row lie in one order along it, so where most of
  a spread's pairs say one order, its other pairs take it too (:mod:`vision.spread`).

(Written here: no library orders cards by their edges.)

A covered card is read from what shows of it, completed by its own half turn
(:func:`completed_crop`): a card's face is the same turned 180° (the index in the top-left
corner is the one in the bottom-right, turned), so where the crop is covered but its turned copy
is not, the turned copy is what lies there. The covering card's face, which would otherwise fill
most of the crop, is gone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.finder import CARD_ASPECT, order_corners, warp_card
from vision.spread import Tops, in_spread_order

#: The photo is weighed with its long side at most this many pixels: edges show at any size,
#: and a 4000 px phone photo's gradients would cost a tenth of a second.
WORK_SIDE = 1024
#: Points sampled along each side of an outline, at most.
EDGE_SAMPLES = 200
#: How far (a share of the card's short side) an edge may lie from where the outline says: the
#: detector's rectangle is often a few pixels off.
EDGE_BAND = 0.05
#: One card lies on another only where its edges show this many times as sharply as the other's:
#: two court cards' prints can tie, and a guess would give one card's place to the other.
CLEARLY_ON_TOP = 1.25
#: A card read at least this surely, where the other of two overlapping cards reads at least
#: :data:`LESS_SURE` less surely, lies on top of it. On the overlapping pairs of the labelled
#: ``train/`` photos whose labels say which lies on top, the reader then the edges are right on 40
#: of 41 and wrong on none, the edges alone right on 36 and wrong on 1; on 427 pairs of
#: synthesised scenes, 400 right and 15 wrong against 395 and 18 (``python bench/on_top.py``).
SURE_ON_TOP = 0.9
LESS_SURE = 0.2
#: Slivers of an outline thinner than this share of its short side are not what shows: two
#: outlines of cards lying edge to edge miss each other by a pixel or two, and a covered card's
#: outline often runs a tenth of a card past the upper card's along a side. (On the labelled
#: train/ photos, 0.12 and 0.16 box one more card as its label does than 0.08.)
SLIVER = 0.12
#: A card of which less than this share of its outline shows is reported by its whole outline.
MIN_SHOWN = 0.05

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class Shown:
    """What shows of one card: ``box`` (x0, y0, x1, y1 in photo pixels) around its visible part,
    inside the frame, and ``under`` the indices of the cards lying on it."""

    box: Box
    under: tuple[int, ...] = ()


def what_shows(image_bgr: np.ndarray, outlines: Sequence[np.ndarray], *,
               sureness: Sequence[float] | None = None) -> list[Shown]:
    """For each outline (4×2, photo pixels) of the cards found in ``image_bgr``, what shows of it.
    ``sureness``, one per outline: how surely a reader named the card from its whole outline
    (the probability of its best guess), the first evidence of which card lies on top."""
    scale, quads = _weighed(image_bgr, outlines, sureness)
    H, W = image_bgr.shape[:2]
    under: list[list[int]] = [[] for _ in quads]
    for (i, j), top in in_spread_order(quads, _pairs(image_bgr, quads, scale, sureness)).items():
        if top == 0:
            under[j].append(i)
        elif top == 1:
            under[i].append(j)
    size = (int(round(W * scale)), int(round(H * scale)))
    out = []
    for i, q in enumerate(quads):
        x0, y0, x1, y1 = shown_box(q, [quads[k] for k in under[i]], size)
        out.append(Shown((x0 / scale, y0 / scale, x1 / scale, y1 / scale), tuple(sorted(under[i]))))
    return out


def on_top_pairs(image_bgr: np.ndarray, outlines: Sequence[np.ndarray], *,
                 sureness: Sequence[float] | None = None) -> Tops:
    """Every overlapping pair (i, j), i < j, of ``outlines`` (photo pixels) and which of the two
    lies on top, pair by pair: the surer read (:func:`surer_of`), else the sharper edges
    (:func:`upper_of`); 0 for i, 1 for j, None where neither says."""
    scale, quads = _weighed(image_bgr, outlines, sureness)
    return _pairs(image_bgr, quads, scale, sureness)


def _weighed(image_bgr: np.ndarray, outlines: Sequence[np.ndarray],
             sureness: Sequence[float] | None) -> tuple[float, list[np.ndarray]]:
    """The scale the photo is weighed at (:data:`WORK_SIDE`) and the outlines at that scale."""
    if sureness is not None and len(sureness) != len(outlines):
        raise ValueError(f"{len(sureness)} sureness values for {len(outlines)} outlines")
    H, W = image_bgr.shape[:2]
    scale = min(1.0, WORK_SIDE / max(H, W))
    return scale, [np.asarray(q, np.float32) * scale for q in outlines]


def _pairs(image_bgr: np.ndarray, quads: Sequence[np.ndarray], scale: float,
           sureness: Sequence[float] | None) -> Tops:
    """:func:`on_top_pairs` of ``quads``, the outlines at ``scale``."""
    gradients: tuple[np.ndarray, np.ndarray] | None = None
    tops: Tops = {}
    for i in range(len(quads)):
        for j in range(i + 1, len(quads)):
            if cv2.intersectConvexConvex(quads[i], quads[j])[0] <= 0:
                continue
            top = None if sureness is None else surer_of(sureness[i], sureness[j])
            if top is None:
                if gradients is None:  # only a photo with overlapping cards pays for them
                    gradients = _gradients(image_bgr, scale)
                top = upper_of(gradients, quads[i], quads[j])
            tops[i, j] = top
    return tops


def _gradients(image_bgr: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    small = image_bgr if scale >= 1 else cv2.resize(image_bgr, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    gray = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY).astype(np.float32), (0, 0), 1.0)
    return cv2.Sobel(gray, cv2.CV_32F, 1, 0), cv2.Sobel(gray, cv2.CV_32F, 0, 1)


def short_side(quad: np.ndarray) -> float:
    """The length of an outline's shortest side (a card's width, whichever way it lies)."""
    return float(min(np.linalg.norm(quad[(i + 1) % 4] - quad[i]) for i in range(4)))


def surer_of(a: float, b: float) -> int | None:
    """Which of two overlapping cards the reader says lies on top: 0 for the one read ``a``
    surely, 1 for ``b``, None when neither reads surely or they read about as surely."""
    if a >= SURE_ON_TOP and a - b >= LESS_SURE:
        return 0
    if b >= SURE_ON_TOP and b - a >= LESS_SURE:
        return 1
    return None


def upper_of(gradients: tuple[np.ndarray, np.ndarray], a: np.ndarray, b: np.ndarray) -> int | None:
    """Which of two overlapping outlines lies on top: 0 for ``a``, 1 for ``b``, None when the
    photo does not say clearly (no edge of either lies inside the other, or their edges show
    about as sharply)."""
    band = max(2, int(round(EDGE_BAND * min(short_side(a), short_side(b)))))
    ea, eb = edge_contrast(gradients, a, b, band), edge_contrast(gradients, b, a, band)
    if ea is None and eb is None:
        return None
    if eb is None:  # a lies wholly inside b: a card on a card
        return 0
    if ea is None:
        return 1
    if ea > CLEARLY_ON_TOP * eb:
        return 0
    if eb > CLEARLY_ON_TOP * ea:
        return 1
    return None


def edge_contrast(gradients: tuple[np.ndarray, np.ndarray], quad: np.ndarray, other: np.ndarray,
                  band: int) -> float | None:
    """How sharply ``quad``'s sides show where they run inside ``other`` (at least ``band`` px
    in): for each side, the mean gradient across it along the straight line, within ``band`` px
    of where the outline puts it, that shows it best; averaged over the sides by their length
    inside. (A line, not point by point: a real edge shows all along, the print of a card's face
    here and there.) The gradient counts signed, brighter towards ``quad``'s inside: a card's
    edge lying on another card is its white margin against the print or the shadow beneath, all
    along, while the other card's side running under it crosses print that turns lighter and
    darker by turns, which cancels. (On the overlapping pairs of the labelled ``train/`` photos
    the edges alone then say 36 of 41 right and 1 wrong, against 30 and 2 counting the gradient's
    size either way; ``python bench/on_top.py``.) None where no side of ``quad`` runs inside
    ``other``."""
    gx, gy = gradients
    h, w = gx.shape
    inside = other.astype(np.float32)
    offsets = np.arange(-band, band + 1, dtype=np.float32)
    centre = quad.mean(axis=0)
    total, count = 0.0, 0
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        length = float(np.linalg.norm(b - a))
        if length < 2:
            continue
        t = (b - a) / length
        n = np.array([-t[1], t[0]], np.float32)
        if float(np.dot(centre - (a + b) / 2, n)) < 0:  # n points into the card
            n = -n
        p = a + np.linspace(0.0, length, int(min(length, EDGE_SAMPLES)))[:, None] * t
        depth = np.array([cv2.pointPolygonTest(inside, (float(x), float(y)), True) for x, y in p])
        p = p[depth >= band]
        if len(p) < 3:
            continue
        q = p[:, None, :] + offsets[None, :, None] * n
        xi = np.clip(np.round(q[..., 0]).astype(int), 0, w - 1)
        yi = np.clip(np.round(q[..., 1]).astype(int), 0, h - 1)
        into = gx[yi, xi] * n[0] + gy[yi, xi] * n[1]
        total += max(0.0, float(into.mean(axis=0).max())) * len(p)
        count += len(p)
    return total / count if count else None


def shown_box(quad: np.ndarray, above: Sequence[np.ndarray], size: tuple[int, int]) -> Box:
    """The box around the part of ``quad`` inside the frame (``size`` = width, height) and not
    under any of ``above``; the whole outline's box, inside the frame, where too little shows."""
    W, H = size
    x0f, y0f = min(max(0.0, float(quad[:, 0].min())), float(W)), min(max(0.0, float(quad[:, 1].min())), float(H))
    whole = (x0f, y0f, max(x0f, min(float(W), float(quad[:, 0].max()))), max(y0f, min(float(H), float(quad[:, 1].max()))))
    x0, y0 = int(np.floor(whole[0])), int(np.floor(whole[1]))
    x1, y1 = int(np.ceil(whole[2])), int(np.ceil(whole[3]))
    if not above or x1 <= x0 or y1 <= y0:
        return whole
    shift = np.array([x0, y0], np.float32)
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(mask, np.round(quad - shift).astype(np.int32), 1)
    for q in above:
        cv2.fillConvexPoly(mask, np.round(q - shift).astype(np.int32), 0)
    k = max(3, int(SLIVER * short_side(quad)))
    # outside the box counts as not shown (OpenCV's default border would keep a sliver along it)
    opened = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((k, k), np.uint8), borderType=cv2.BORDER_CONSTANT, borderValue=0)
    ys, xs = np.nonzero(opened)
    if len(xs) < MIN_SHOWN * mask.size:
        return whole
    return float(x0 + xs.min()), float(y0 + ys.min()), float(x0 + xs.max() + 1), float(y0 + ys.max() + 1)


#: A covered card of which less than this share of the crop shows is read as it is: too little
#: of it is left to complete.
MIN_SHOWN_TO_COMPLETE = 0.15


def shown_in_crop(image_shape: tuple[int, ...], outline: np.ndarray, above: Sequence[np.ndarray]) -> np.ndarray:
    """Which pixels of the card's canonical crop (:func:`vision.finder.warp_card` of ``outline``)
    show: inside the outline, not under any of the outlines ``above`` (photo pixels)."""
    mask = np.zeros(image_shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, np.round(outline).astype(np.int32), 255)
    for q in above:
        cv2.fillConvexPoly(mask, np.round(np.asarray(q)).astype(np.int32), 0)
    return mask_in_crop(mask, outline)


def card_pixels_in_crop(card_map: np.ndarray, outline: np.ndarray, photo_size: tuple[int, int]) -> np.ndarray:
    """Which pixels of the card's canonical crop (:func:`vision.finder.warp_card` of ``outline``,
    photo pixels) the detector's map of card pixels says are card: not a book, a cloth or a hand
    lying on it, not past the frame. ``card_map`` is that map over the whole photo (of
    ``photo_size``, width and height) at the map's own size, as uint8 (probability × 255: a
    caller reading many cards converts it once)."""
    to_map = np.array([card_map.shape[1] / photo_size[0], card_map.shape[0] / photo_size[1]], np.float32)
    return mask_in_crop(card_map, np.asarray(outline, np.float32) * to_map)


#: A pixel of a crop within this distance (CIELAB, OpenCV's 8-bit scale) of the card's paper is
#: taken for paper. (12 to 32 named the same cards on the labelled train/ photos.)
PAPER_TOLERANCE = 18.0


def paper_like(crop: np.ndarray, card: np.ndarray) -> np.ndarray:
    """Which pixels of ``crop`` are the card's paper and its print: where the crop's colour is
    that of the lighter half of what ``card`` (a mask) already says is card, closed over the print
    lying on it. The detector's map of card pixels is coarse and, on a dark or blurred photo, marks
    a fraction of a card that plainly shows; its colour finds the rest. None of ``card`` (fewer than
    20 pixels) gives ``card`` back."""
    if int(card.sum()) < 20:
        return card
    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB).astype(np.float32)
    lightness = lab[..., 0]
    paper = np.median(lab[card & (lightness >= np.percentile(lightness[card], 50))], axis=0)
    near = (np.linalg.norm(lab - paper, axis=2) < PAPER_TOLERANCE).astype(np.uint8)
    near = cv2.morphologyEx(near, cv2.MORPH_CLOSE, np.ones((7, 7), np.uint8))
    near = cv2.morphologyEx(near, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    return near.astype(bool)


def mask_in_crop(mask: np.ndarray, outline: np.ndarray) -> np.ndarray:
    """A uint8 mask (255: yes; the photo's size, or the outline scaled to the mask's) warped as
    the card at ``outline`` is, nothing past its edge."""
    warped: np.ndarray = warp_card(mask, outline, border=cv2.BORDER_CONSTANT) > 127  # one channel: no copy of the photo
    return warped


def completed_crop(crop: np.ndarray, shown: np.ndarray) -> np.ndarray | None:
    """``crop`` with what is covered (``shown`` False) taken from its half turn where that shows,
    and card paper (the light end of what shows) where neither does; None where too little shows
    (:data:`MIN_SHOWN_TO_COMPLETE`) or nothing is covered."""
    if shown.all() or shown.mean() < MIN_SHOWN_TO_COMPLETE:
        return None
    turned, turned_shown = crop[::-1, ::-1], shown[::-1, ::-1]
    out = crop.copy()
    from_turn = ~shown & turned_shown
    out[from_turn] = turned[from_turn]
    paper = np.percentile(crop[shown].reshape(-1, 3), 90, axis=0)
    out[~shown & ~turned_shown] = paper.astype(np.uint8)
    return out


#: An outline that runs along the photo's edge (within :data:`AT_THE_FRAME` pixels) and whose
#: short side is at least this share of its long side may be the part of a card inside the frame,
#: which the detector outlines as if it were all of it (a poker card's share is 0.72). A card seen
#: at a slant can look as square (up to 0.84 on the labelled train/ photos, 35 of 507 outlines
#: clear of the edge at 0.78 or more), so this is a guess to read again, never a finding.
SQUARE_AT_THE_FRAME = 0.78
AT_THE_FRAME = 4.0


def reaches_past(quad: np.ndarray, size: tuple[int, int], margin: float = 0.0) -> bool:
    """Whether a corner of ``quad`` lies more than ``margin`` px past the edge of a photo of
    ``size`` (width, height): the outline is a guess at a card the frame cuts."""
    w, h = size
    return bool(((quad[:, 0] < -margin) | (quad[:, 1] < -margin) | (quad[:, 0] > w + margin) | (quad[:, 1] > h + margin)).any())


def past_the_frame(outline: np.ndarray, size: tuple[int, int]) -> list[np.ndarray]:
    """The whole card a frame-cut outline is part of (photo ``size``: width, height): for each side
    of ``outline`` lying along the photo's edge, the outline grown across that edge to a card's
    proportions, its side along the edge kept (the frame cuts only the sides that cross it) as
    the card's short side or its long one, whichever leaves the card longer than what shows. An
    outline shaped like a card, or lying clear of the edge, gives none.

    Its crop, completed by its half turn (:func:`completed_crop` with :func:`shown_in_crop`),
    holds the card as it would lie whole: the index past the edge is the turn of the index
    inside it."""
    quad = order_corners(np.asarray(outline, np.float32))
    sides = sorted(float(np.linalg.norm(quad[i] - quad[(i + 1) % 4])) for i in range(4))
    if sides[0] + sides[1] < SQUARE_AT_THE_FRAME * (sides[2] + sides[3]):
        return []
    w, h = size
    middles = (quad + np.roll(quad, -1, axis=0)) / 2  # of each side: corner i to corner i + 1
    to_the_frame = np.minimum.reduce([middles[:, 0], middles[:, 1], w - 1 - middles[:, 0], h - 1 - middles[:, 1]])
    return grown_across(quad, [i for i in range(4) if to_the_frame[i] <= AT_THE_FRAME])


def grown_across(outline: np.ndarray, sides: Sequence[int]) -> list[np.ndarray]:
    """``outline`` grown across each of its ``sides`` (side ``i`` runs from corner ``i`` to ``i + 1``
    of :func:`vision.finder.order_corners`) to a card's proportions, that side kept as the card's
    short side or its long one, whichever leaves the card longer than what shows: the whole card
    of which the outline is the part left in view, where the frame or something lying on the card
    cuts it along that side."""
    quad = order_corners(np.asarray(outline, np.float32))
    grown: list[np.ndarray] = []
    for i in sides:
        a, b = quad[i], quad[(i + 1) % 4]
        c, d = quad[(i + 2) % 4], quad[(i + 3) % 4]  # the opposite side: c lies beyond b, d beyond a
        along = (float(np.linalg.norm(a - b)) + float(np.linalg.norm(c - d))) / 2
        across = (float(np.linalg.norm(b - c)) + float(np.linalg.norm(a - d))) / 2
        if min(along, float(np.linalg.norm(b - c)), float(np.linalg.norm(a - d))) < 1.0:
            continue  # a line, not a part of a card: nothing to grow it along
        for length in (along * CARD_ASPECT, along / CARD_ASPECT):
            if length <= across * 1.1:  # not longer than what shows: no card past that side
                continue
            whole = quad.copy()
            whole[i] = d + (a - d) * (length / float(np.linalg.norm(a - d)))
            whole[(i + 1) % 4] = c + (b - c) * (length / float(np.linalg.norm(b - c)))
            grown.append(order_corners(whole))
    return grown
