"""Cards lying under another of which only a strip shows, found from what the detector says is
card but no outline explains.

Why: the detector learnt to answer a card of which a quarter or more shows. In a row of cards or a
spread hand, a card under its neighbour often shows less: a strip with its index along one side
of the card on top. The detector's map of card pixels still covers that strip (it learnt to mark
every visible card pixel), so a strip of card pixels lying beside a found card, running along one
of its sides and explained by no outline, is taken for a card of the same size and turn under it,
shifted out until its far side meets the strip's. (Written here: it is a rule about cards, not a
general vision routine any library offers.)

The same map finds a card lying across the photo's edge that the detector did not outline (it
answers a card a quarter of which shows, but a card's corner cut off by the frame often peaks below
its threshold): a blob of card pixels that no outline explains, running along the frame's edge,
is taken for a card of the photo's cards' size whose longest straight edge inside the frame is
one of its sides, lying across the edge (:func:`cut_by_the_frame`).

And it finds a card the detector saw none of, lying partly under something else (a book, a
newspaper: its centre, where the detector looks for a card, is hidden): a blob of card pixels
that no outline explains, outlined along its longest straight edges (:func:`mapped_not_outlined`),
is the part of a card that shows.

``identify`` reads such a card from its completed crop (:func:`vision.occlusion.completed_crop`:
the strip and its half turn) and reports it only where the reader names it surely: a strip that is
no card (a sheet of paper beside the card, the table's light patch) reads as nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from vision.detector import long_side, quad_iou
from vision.finder import CARD_ASPECT
from vision.occlusion import reaches_past, short_side

#: A found card's outline grown by this share of its short side before its pixels are taken out
#: of the map: outlines are a few pixels off, and the rim left over is no strip.
GROW = 0.04
#: A strip is at least this share of the neighbour card's area ...
MIN_AREA = 0.06
#: ... reaches out from the neighbour's side by this share of the card's depth, at least and at most
#: (a card shifted further would mostly show, and the detector would have found it) ...
MIN_DEPTH, MAX_DEPTH = 0.08, 0.8
#: ... and runs along at least this share of the side (a blob at a corner is no strip of a card in
#: a row).
MIN_RUN = 0.6
#: Card-pixel probability above which the map says "card".
CARD = 0.5


def hidden_beside(card_map: np.ndarray, outlines: Sequence[np.ndarray],
                  photo_size: tuple[int, int]) -> list[tuple[np.ndarray, int]]:
    """The outlines (4×2 float32, photo pixels) of cards lying under found cards, one for each strip
    of card pixels that no outline explains and that runs along a side of one of the ``outlines``
    (photo pixels); each with the index of the card it lies under. ``card_map`` is the detector's
    probability of card pixels over the whole photo (of ``photo_size``, width and height) at any
    size: the work is done at the map's, a few hundred pixels whatever the photo's. A strip a new
    outline would put on top of another found card (IoU 0.5) gives none."""
    if not outlines:
        return []
    h, w = card_map.shape[:2]
    to_map = np.array([w / photo_size[0], h / photo_size[1]], np.float32)
    found = [np.asarray(q, np.float32) * to_map for q in outlines]
    return [(quad / to_map, i) for quad, i in _hidden(card_map, found)]


def _unexplained(card_map: np.ndarray, outlines: list[np.ndarray]) -> np.ndarray:
    """Where the map says card but no outline (grown by :data:`GROW`) lies, opened so that the
    rims and specks left over go (uint8, 1: card pixels unexplained)."""
    h, w = card_map.shape[:2]
    explained = np.zeros((h, w), np.uint8)
    for q in outlines:
        centre = q.mean(axis=0)
        reach = np.linalg.norm(q - centre, axis=1).mean()
        grown = centre + (q - centre) * (1 + GROW * short_side(q) / max(reach, 1.0))
        cv2.fillConvexPoly(explained, np.round(grown).astype(np.int32), 1)
    rest = ((card_map > CARD) & (explained == 0)).astype(np.uint8)
    k = max(3, int(0.05 * float(np.median([short_side(q) for q in outlines]))))
    return cv2.morphologyEx(rest, cv2.MORPH_OPEN, np.ones((k, k), np.uint8))


def _hidden(card_map: np.ndarray, outlines: list[np.ndarray]) -> list[tuple[np.ndarray, int]]:
    n, labels = cv2.connectedComponents(_unexplained(card_map, outlines))
    out: list[tuple[np.ndarray, int]] = []
    for c in range(1, n):
        ys, xs = np.nonzero(labels == c)
        pixels = np.stack([xs, ys], axis=1).astype(np.float32)
        best: tuple[int, int, np.ndarray] | None = None
        for i, q in enumerate(outlines):
            if len(pixels) < MIN_AREA * cv2.contourArea(q):
                continue
            for side in range(4):
                shifted = _shifted_over(q, side, pixels, short_side(q))
                if shifted is not None and (best is None or shifted[0] > best[0]):
                    best = (shifted[0], i, shifted[1])
        if best is None:
            continue
        _n, i, quad = best
        if any(quad_iou(quad, o) >= 0.5 for j, o in enumerate(outlines) if j != i):
            continue
        if any(quad_iou(quad, o) >= 0.5 for o, _i in out):
            continue
        out.append((quad, i))
    return out


#: How far a strip card's outline is turned (degrees) and moved (share of its short side) either
#: way, coarse then fine, to lie over the strip as it shows: a card under another in a spread hand
#: is seldom turned and placed just as the card on top.
ALIGN_TURNS = ((-8.0, -4.0, 0.0, 4.0, 8.0), (-2.0, 0.0, 2.0))
ALIGN_SHIFTS = ((-0.16, -0.08, 0.0, 0.08, 0.16), (-0.04, 0.0, 0.04))


def aligned_to_map(card_map: np.ndarray, quad: np.ndarray, over: Sequence[np.ndarray],
                   photo_size: tuple[int, int]) -> np.ndarray:
    """A covered card's outline (``quad``, photo pixels: :func:`hidden_beside`'s, or the
    detector's) turned and moved to lie over what the detector's map (``card_map``, any size) says
    is card beside the cards ``over`` it (outlines, photo pixels): a second guess at where the card
    under lies, for a card under another that is not turned and placed just as the card on top
    (:func:`_aligned`). The first guess is often the better: ``identify`` reads both."""
    h, w = card_map.shape[:2]
    to_map = np.array([w / photo_size[0], h / photo_size[1]], np.float32)
    aligned = _aligned(np.asarray(quad, np.float32) * to_map, [np.asarray(o, np.float32) * to_map for o in over],
                       card_map > CARD)
    return aligned / to_map


def sized_as(quad: np.ndarray, others: Sequence[np.ndarray]) -> np.ndarray:
    """``quad`` (4×2, corners in order round the card) with its sides made the median long and
    short side of ``others``, about its centre and along its own sides: the cards of one deck are
    one size, and the detector's outline of a card mostly hidden under others is often too short
    or too narrow (it saw only the strip)."""
    q = np.asarray(quad, np.float32)
    a, b = q[1] - q[0], q[2] - q[1]
    len_a, len_b = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if not others or min(len_a, len_b) < 1:
        return q.copy()
    long = float(np.median([long_side(np.asarray(o, np.float32)) for o in others]))
    short = float(np.median([short_side(np.asarray(o, np.float32)) for o in others]))
    new_a, new_b = (long, short) if len_a >= len_b else (short, long)
    half_a, half_b = a / len_a * new_a / 2, b / len_b * new_b / 2
    centre = q.mean(axis=0)
    return np.array([centre - half_a - half_b, centre + half_a - half_b, centre + half_a + half_b,
                     centre - half_a + half_b], np.float32)


def _aligned(quad: np.ndarray, over: Sequence[np.ndarray], card: np.ndarray) -> np.ndarray:
    """``quad`` turned about its centre and moved (:data:`ALIGN_TURNS`, :data:`ALIGN_SHIFTS`, coarse
    then fine) so that what of it shows beside the cards ``over`` it best matches what the map says
    is card inside it (``card``: a boolean mask, map size): intersection over union."""
    h, w = card.shape
    under = np.zeros((h, w), np.uint8)
    for o in over:
        cv2.fillConvexPoly(under, np.round(o).astype(np.int32), 1)
    free = under == 0
    short = short_side(quad)
    # Every outline tried lies within this reach of the first one's centre (turned about its own
    # centre, moved at most (0.16 + 0.04) * sqrt(2) short sides): the work is done in that window.
    centre0 = quad.mean(axis=0)
    reach = float(np.linalg.norm(quad - centre0, axis=1).max()) + 0.3 * short + 2
    x0, y0 = max(0, int(centre0[0] - reach)), max(0, int(centre0[1] - reach))
    x1, y1 = min(w, int(centre0[0] + reach) + 2), min(h, int(centre0[1] + reach) + 2)
    if x1 <= x0 or y1 <= y0:
        return quad
    both = (free & card)[y0:y1, x0:x1]  # card pixels that show: the intersection's
    either = (free | card)[y0:y1, x0:x1]  # what shows of the outline or is card: the union's
    origin = np.array([x0, y0], np.float32)

    def agreement(q: np.ndarray) -> float:
        inside = np.zeros(both.shape, np.uint8)
        cv2.fillConvexPoly(inside, np.round(q - origin).astype(np.int32), 1)
        inside_b = inside > 0
        union = int(np.count_nonzero(inside_b & either))
        return int(np.count_nonzero(inside_b & both)) / union if union else 0.0

    best, best_score = quad, agreement(quad)
    for turns, shifts in zip(ALIGN_TURNS, ALIGN_SHIFTS, strict=True):
        start = best
        centre = start.mean(axis=0)
        for turn in turns:
            t = np.deg2rad(turn)
            rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]], np.float32)
            turned = (start - centre) @ rot.T + centre
            for dx in shifts:
                for dy in shifts:
                    q = (turned + np.array([dx, dy], np.float32) * short).astype(np.float32)
                    if (score := agreement(q)) > best_score:
                        best, best_score = q, score
    return best


def _shifted_over(quad: np.ndarray, side: int, pixels: np.ndarray, short: float) -> tuple[int, np.ndarray] | None:
    """``quad`` shifted out across its ``side`` until its far side meets the strip of ``pixels``
    beyond that side, with how many of them lie beyond it; None where the strip does not lie along
    that side as a card under this one would."""
    a, b = quad[side], quad[(side + 1) % 4]
    length = float(np.linalg.norm(b - a))
    if length < 2:
        return None
    along_unit = (b - a) / length
    out_unit = np.array([-along_unit[1], along_unit[0]], np.float32)
    if np.dot(quad.mean(axis=0) - a, out_unit) > 0:
        out_unit = -out_unit
    out = (pixels - a) @ out_unit
    along = (pixels - a) @ along_unit
    beyond = (out > -2) & (along > -0.1 * length) & (along < 1.1 * length)
    if beyond.mean() < 0.8:
        return None
    depth = float(np.linalg.norm(quad[(side + 2) % 4] - quad[(side + 1) % 4]))
    reach = float(np.percentile(out[beyond], 98))
    run = float(np.percentile(along[beyond], 98) - np.percentile(along[beyond], 2))
    starts = float(np.percentile(out[beyond], 5))
    if not MIN_DEPTH * depth <= reach <= MAX_DEPTH * depth or run < MIN_RUN * length:
        return None
    if starts > 0.1 * depth + 3 * GROW * short:  # the strip begins at the side, not somewhere beyond
        return None
    return int(beyond.sum()), (quad + out_unit * reach).astype(np.float32)


#: A card cut by the frame shows at least this share of a card's area ...
CUT_MIN_SHOWN = 0.2
#: ... along at least this share of a card's short side of the frame's edge ...
CUT_MIN_RUN = 0.2
#: ... with a straight edge inside the frame at least this share of the short side long (a side
#: of the card: its turn) ...
CUT_MIN_EDGE = 0.25
#: ... and lies past the frame by at least this share of the short side (else it is a whole card,
#: the detector's business).
CUT_MIN_PAST = 0.05
#: Blob outlines are simplified to straight edges within this share of a card's short side.
CUT_STRAIGHT = 0.03
#: Along a side that the frame does not cut, what shows spans a card's side within this share.
CUT_SPAN = 0.15


def cut_by_the_frame(card_map: np.ndarray, outlines: Sequence[np.ndarray],
                     photo_size: tuple[int, int]) -> list[np.ndarray]:
    """The outlines (4×2 float32, photo pixels, partly past the frame) of cards lying across the
    photo's edge that no outline explains, each sized as the ``outlines`` (photo pixels) are (their
    median sides; none without them): for each blob of unexplained card pixels along the frame's
    edge, a card turned as the blob's longest straight edge inside the frame, laid over the blob
    where a side of the card shows and across the edge where the frame cuts it, once with that
    edge as a short side and once as a long one (the reader tells which reads as a card)."""
    if not outlines:
        return []
    h, w = card_map.shape[:2]
    to_map = np.array([w / photo_size[0], h / photo_size[1]], np.float32)
    found = [np.asarray(q, np.float32) * to_map for q in outlines]
    short = float(np.median([short_side(q) for q in found]))
    long = float(np.median([long_side(q) for q in found]))
    n, labels = cv2.connectedComponents(_unexplained(card_map, found))
    out: list[np.ndarray] = []
    for c in range(1, n):
        blob = (labels == c).astype(np.uint8)
        out.extend(quad / to_map for quad in _across_the_edge(blob, short, long))
    return out


#: Without a card named in the photo to size a card by, a blob of card pixels must cover at least
#: this share of the photo to be taken for the part of a card that shows.
MAPPED_MIN_OF_PHOTO = 0.01
#: A rectangle round a blob within this share of a card's proportions is a card wholly in view.
CARD_SHAPED = 0.15


def mapped_not_outlined(card_map: np.ndarray, outlines: Sequence[np.ndarray], photo_size: tuple[int, int],
                        card_area: float | None) -> list[tuple[np.ndarray, list[np.ndarray]]]:
    """The blobs of card pixels in ``card_map`` (as :func:`hidden_beside` takes it) that none of
    the ``outlines`` (photo pixels) explains, of at least :data:`CUT_MIN_SHOWN` of ``card_area``
    (a card's area in photo pixels; None: :data:`MAPPED_MIN_OF_PHOTO` of the photo): for each, its
    mask (uint8, 255: the blob, at the map's size) and the rectangles (photo pixels) that bound it
    along each of its two longest straight edges, as the detector would outline the part of a
    card that shows (a card's visible edges are straight; the one a cover cuts it along may be
    the longest, so both are tried)."""
    h, w = card_map.shape[:2]
    to_map = np.array([w / photo_size[0], h / photo_size[1]], np.float32)
    found = [np.asarray(q, np.float32) * to_map for q in outlines]
    rest = _unexplained(card_map, found) if found else (card_map > CARD).astype(np.uint8)
    least = CUT_MIN_SHOWN * card_area * float(to_map[0] * to_map[1]) if card_area else MAPPED_MIN_OF_PHOTO * h * w
    n, labels = cv2.connectedComponents(rest)
    out: list[tuple[np.ndarray, list[np.ndarray]]] = []
    for c in range(1, n):
        blob = (labels == c).astype(np.uint8)
        if int(blob.sum()) >= least:
            out.append((blob * 255, [rect / to_map for rect in _bounds_along_edges(blob)]))
    return out


def mapped_parts(card_map: np.ndarray, outlines: Sequence[np.ndarray],
                 photo_size: tuple[int, int]) -> list[tuple[np.ndarray, list[np.ndarray]] | None]:
    """For each of ``outlines`` (photo pixels), the blob of card pixels in ``card_map`` (as
    :func:`hidden_beside` takes it) that most of it lies on, as :func:`mapped_not_outlined` gives
    each blob: its mask and the rectangles bounding it along its straight edges; None where the
    outline lies on none. Why: where the detector's rectangle lies askew over a card, the map's
    blob still follows the edges of what shows of it."""
    h, w = card_map.shape[:2]
    to_map = np.array([w / photo_size[0], h / photo_size[1]], np.float32)
    n, labels = cv2.connectedComponents((card_map > CARD).astype(np.uint8))
    out: list[tuple[np.ndarray, list[np.ndarray]] | None] = []
    for outline in outlines:
        inside = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(inside, np.round(np.asarray(outline, np.float32) * to_map).astype(np.int32), 1)
        counts = np.bincount(labels[inside > 0].ravel(), minlength=n)
        counts[0] = 0
        if counts.max() == 0:
            out.append(None)
            continue
        blob = (labels == int(np.argmax(counts))).astype(np.uint8)
        out.append((blob * 255, [rect / to_map for rect in _bounds_along_edges(blob)]))
    return out


def _bounds_along_edges(blob: np.ndarray) -> list[np.ndarray]:
    """The rectangles bounding ``blob``'s pixels (1st to 99th percentile) along each of its two
    longest straight edges that run different ways."""
    ys, xs = np.nonzero(blob)
    pixels = np.stack([xs, ys], axis=1).astype(np.float32)
    contours, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    poly = cv2.approxPolyDP(max(contours, key=cv2.contourArea), CUT_STRAIGHT * np.sqrt(len(xs)), True)
    poly = poly.reshape(-1, 2).astype(np.float32)
    edges = sorted((poly[(k + 1) % len(poly)] - poly[k] for k in range(len(poly))), key=lambda e: -float(np.linalg.norm(e)))
    ways: list[np.ndarray] = []
    for edge in edges:
        way = edge / max(float(np.linalg.norm(edge)), 1e-6)
        if all(abs(float(way @ other)) < 0.97 for other in ways):  # not the same way, within 14°
            ways.append(way)
        if len(ways) == 2:
            break
    rects: list[np.ndarray] = []
    for u in ways:
        v = np.array([-u[1], u[0]], np.float32)
        (u0, u1), (v0, v1) = np.percentile(pixels @ u, [1, 99]), np.percentile(pixels @ v, [1, 99])
        rects.append(np.array([u * u0 + v * v0, u * u1 + v * v0, u * u1 + v * v1, u * u0 + v * v1], np.float32))
    return rects


def card_shaped(quad: np.ndarray) -> bool:
    """Whether ``quad``'s sides are a card's proportions (within :data:`CARD_SHAPED`)."""
    return abs(long_side(quad) / max(short_side(quad), 1e-6) / CARD_ASPECT - 1) <= CARD_SHAPED


def _across_the_edge(blob: np.ndarray, short: float, long: float) -> list[np.ndarray]:
    """The cards of ``short`` × ``long`` (map pixels) that a blob (uint8 mask) along the frame's
    edge may be the visible part of (:func:`cut_by_the_frame`)."""
    h, w = blob.shape
    ys, xs = np.nonzero(blob)
    if len(xs) < CUT_MIN_SHOWN * short * long:
        return []
    at_edge = (xs <= 1) | (ys <= 1) | (xs >= w - 2) | (ys >= h - 2)
    if at_edge.sum() < CUT_MIN_RUN * short:
        return []
    contours, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    poly = cv2.approxPolyDP(max(contours, key=cv2.contourArea), CUT_STRAIGHT * short, True).reshape(-1, 2)
    side, along = 0.0, None
    for i in range(len(poly)):
        a, b = poly[i].astype(np.float32), poly[(i + 1) % len(poly)].astype(np.float32)
        mx, my = (a + b) / 2
        if min(mx, my, w - 1 - mx, h - 1 - my) <= 2:  # the frame's edge, not the card's
            continue
        if (d := float(np.linalg.norm(b - a))) > side:
            side, along = d, (b - a) / d
    if along is None or side < CUT_MIN_EDGE * short:
        return []
    axes = (along, np.array([-along[1], along[0]], np.float32))
    pixels = np.stack([xs, ys], axis=1).astype(np.float32)
    cards: list[np.ndarray] = []
    for sides in ((short, long), (long, short)):
        centre = np.zeros(2, np.float32)
        for axis, length in zip(axes, sides, strict=True):
            p = pixels @ axis
            lo, hi = float(np.percentile(p, 1)), float(np.percentile(p, 99))
            if hi - lo > (1 + CUT_SPAN) * length:
                break
            if hi - lo >= (1 - CUT_SPAN) * length:  # this side shows whole
                middle = (lo + hi) / 2
            else:  # the frame cuts the card this way: it lies across the edge from the side that shows
                middle = hi - length / 2 if float((pixels[at_edge] @ axis).mean()) < (lo + hi) / 2 else lo + length / 2
            centre += axis * middle
        else:
            u, v = axes[0] * sides[0] / 2, axes[1] * sides[1] / 2
            quad = np.array([centre - u - v, centre + u - v, centre + u + v, centre - u + v], np.float32)
            if reaches_past(quad, (w, h), CUT_MIN_PAST * short):
                cards.append(quad)
    return cards
