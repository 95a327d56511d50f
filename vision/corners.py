"""Card outlines from the card corners that show: the detector's corner head, put to use.

The detector's centre answer gives a card's size and direction read at one point, and where cards
overlap it is often a tenth of a card and some degrees off, or a part of the card only: the crop
then holds half the card, or half of two, and the reader rightly names nothing. A corner is a
small, sharp thing to find, and the corner head also says, from each corner, where its card's
centre lies. Two corners of one card that show, with that centre, give the whole card's
outline to a pixel or two, also where the rest of it lies under another card.

Written here, not taken from a library: it is the decoding of this project's own network.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

#: The least corner-heat peak that counts as a card corner.
CORNER_THRESHOLD = 0.3
#: A card's long side over its short: the range an outline built from corners must fall in.
ASPECT_RANGE = (1.25, 1.75)
#: The shapes cards come in (long side over short): poker 88×63 mm and bridge 88×57 mm.
CARD_ASPECTS = (88 / 63, 88 / 57)


@dataclass(frozen=True)
class Corner:
    """One card corner that shows: ``point`` and the ``centre`` of its card (photo pixels), and
    the heat map's peak there (``score``, 0..1)."""

    point: np.ndarray
    centre: np.ndarray
    score: float

    @property
    def reach(self) -> float:
        """Half the card's diagonal, as this corner sees it."""
        return float(np.linalg.norm(self.centre - self.point))


def corner_points(maps: np.ndarray, *, stride: int, to_photo: np.ndarray, reach: float,
                  threshold: float = CORNER_THRESHOLD) -> list[Corner]:
    """The corners in a detector answer ``maps`` (channels 8..12: heat, offset x/y, way to the
    centre x/y in cells / ``reach``), best first; ``to_photo`` scales input pixels to the photo's."""
    heat = maps[8]
    peaks = (heat == cv2.dilate(heat, np.ones((3, 3), np.uint8))) & (heat >= threshold)
    ys, xs = np.nonzero(peaks)
    out = []
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        px, py = x + 0.5 + maps[9, y, x], y + 0.5 + maps[10, y, x]
        cx, cy = x + 0.5 + maps[11, y, x] * reach, y + 0.5 + maps[12, y, x] * reach
        point = np.array([px, py], np.float32) * stride * to_photo
        centre = np.array([cx, cy], np.float32) * stride * to_photo
        if np.isfinite(point).all() and np.isfinite(centre).all():
            out.append(Corner(point, centre, float(heat[y, x])))
    out.sort(key=lambda c: -c.score)
    return out


def group_corners(corners: list[Corner]) -> list[list[Corner]]:
    """The corners gathered by card: those that point to one centre (within a fifth of the half
    diagonal) at one size, each at a different corner of it; at most four a card."""
    groups: list[list[Corner]] = []
    for corner in corners:
        best, best_d = None, np.inf
        for g in groups:
            centre = np.mean([c.centre for c in g], axis=0)
            reach = float(np.mean([c.reach for c in g]))
            d = float(np.linalg.norm(centre - corner.centre))
            if len(g) < 4 and d <= 0.2 * reach and abs(corner.reach - reach) <= 0.25 * reach \
                    and all(np.linalg.norm(c.point - corner.point) > 0.5 * reach for c in g) and d < best_d:
                best, best_d = g, d
        if best is None:
            groups.append([corner])
        else:
            best.append(corner)
    return groups


def outline_from_corners(group: list[Corner]) -> np.ndarray | None:
    """The card outline (4×2 float32, a rectangle) that a group's corners and centre give, or
    ``None`` where they give none: one corner, two at opposite ends of a diagonal (the direction
    is then unknown), or a shape no card has."""
    if len(group) < 2:
        return None
    centre = np.mean([c.centre for c in group], axis=0)
    reach = float(np.mean([c.reach for c in group]))
    if len(group) == 2:
        p1, p2 = group[0].point, group[1].point
        side = p2 - p1
        length = float(np.linalg.norm(side))
        if length < 1 or length > 0.9 * 2 * reach:  # opposite corners: no side between them
            return None
        normal = np.array([-side[1], side[0]], np.float32) / length
        depth = float(np.dot(centre - (p1 + p2) / 2, normal))
        if abs(depth) < 1:
            return None
        # the centre says on which side the card lies and roughly how far; the card's shape says
        # exactly how far (two corners are sharper evidence than a centre read off the middle)
        other = _other_side(length, 2 * abs(depth))
        if other is None:
            return None
        step = math.copysign(other, depth) * normal
        quad = np.array([p1, p2, p2 + step, p1 + step], np.float32)
    else:
        points = np.array([c.point for c in group] + [2 * centre - c.point for c in group], np.float32)
        quad = cv2.boxPoints(cv2.minAreaRect(points)).astype(np.float32)
    sides = sorted(float(np.linalg.norm(quad[i] - quad[(i + 1) % 4])) for i in range(2))
    if sides[0] < 1 or not ASPECT_RANGE[0] <= sides[1] / sides[0] <= ASPECT_RANGE[1]:
        return None
    for c in group:  # every corner the card was built from is one of its corners
        if float(np.min(np.linalg.norm(quad - c.point, axis=1))) > 0.15 * sides[0]:
            return None
    return quad


def _other_side(side: float, estimate: float) -> float | None:
    """The length of a card's other side, given one side and a rough ``estimate`` of the other:
    the side is a short or a long one, of a poker card unless the estimate clearly says bridge
    (the two differ by a tenth; a centre read a few pixels off should not decide it)."""
    def off(aspect: float) -> tuple[float, float]:
        x = min((side * aspect, side / aspect), key=lambda x: abs(x - estimate))
        return x, abs(x - estimate)

    (poker, poker_off), (bridge, bridge_off) = off(CARD_ASPECTS[0]), off(CARD_ASPECTS[1])
    other, miss = (bridge, bridge_off) if bridge_off < 0.5 * poker_off else (poker, poker_off)
    return other if miss <= 0.25 * other else None


def corner_outlines(corners: list[Corner]) -> list[tuple[np.ndarray, int]]:
    """Every card outline the corners give, with how many corners back it."""
    out = []
    for group in group_corners(corners):
        quad = outline_from_corners(group)
        if quad is not None:
            out.append((quad, len(group)))
    return out
