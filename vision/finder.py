"""Find every card lying on a table in a still photo and perspective-correct it.

A global Otsu threshold assumes a dark cloth under white cards and finds nothing on a beige desk.
So candidates come from two independent cues and are merged:

1. *background-relative colour*: the table's colour is estimated from the image border (the
   border is table far more often than card), and pixels far from it in CIE Lab are foreground;
   the cut-off comes from how far the border's own pixels stray from that colour (wood grain,
   weave, noise), floored so a uniform table gives nothing;
2. *edges*: Canny edges, closed and filled, for a white card on a white desk where colour alone
   fails (its outline, the shadow under it and the printed border still make edges).

Each blob becomes a quadrilateral (convex hull, reduced to four corners) that must look like a
whole card: aspect ratio near 2.5:3.5, the blob must fill its quadrilateral, and it must not touch
the image edge (a card cut off by the frame would give a partial warp). Its corners are then
snapped to the card's outline in the full-size photo (:func:`_snap_to_edges`), so that a small
card's warp is as close as the training crops assume. The warp is portrait, of
:data:`vision.classifier.CANONICAL_SIZE`; which short edge is "top" is left to the classifier (it
reads cards either way up).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.classifier import CANONICAL_SIZE
from vision.detector import CardDetector, Detection, quad_iou
from vision.outline_fit import edge_support, fit_outline, try_fit

_WEIGHTS = np.array([[0.6, 1.5, 1.5]], np.float32)
CARD_ASPECT = 3.5 / 2.5  # long side / short side of a standard card
# the cues run on an image at most this wide/high; warps use the original. At 640 the table camera's
# 55-100 px cards shrank to 28-50 px and a tenth of them were missed (bench/photos.py); at 960 they
# stay 40-75 px, and an 800x600 still is worked on at full size
_WORK_SIDE = 960
# how much better the photo's edges must back the detector's fitted outline of a card before it
# replaces a contour cue's (at 1.0 the rendered stills of bench/photos.py lost a point)
_CLEARLY_BETTER = 1.3
# a detector rectangle and a cue's outline that overlap this much (IoU) are one outline: the cue's
# stands without fitting the other (no change on the train/ photos, a third off a full frame's time)
_AGREE = 0.8
#: two detections whose centres lie closer than this share of the shorter card's short side, and
#: whose outlines overlap by at least SAME_CARD_IOU, are one card seen twice. (The overlap test
#: keeps a card lying under another in a row: its centre is under the upper card, a third of a
#: card away, its outline half the upper one's. On train/ photos, scored on the box around what
#: shows, 497 -> 508 of 527 cards found; the reader leaves most of those strips unsure.)
SAME_CARD_CENTRES = 0.5
SAME_CARD_IOU = 0.5


@dataclass(frozen=True)
class FoundCard:
    """One card in the photo: ``corners`` (4×2 float32, image pixels, clockwise from the card's
    top-left, portrait) and ``crop`` (canonical-size BGR warp). ``score`` (0..1) says how card-like
    the outline was; ``cue`` names whose outline it is ("colour" or "edges": a contour cue's;
    "network": the detector's rectangle fitted to the photo's edges). ``detected`` is the other
    guess at the card, for a reader left unsure by the first: the detector's fitted rectangle
    where a cue's outline of the same card was kept over it though the two disagree (a cue's blob
    can take in a neighbour in a pile); for a card only the detector outlined, the cues' trace of
    it where it lies alone and the fit was kept over the trace, else the detector's own rectangle
    where fitting it to the photo's edges moved it far (onto a court card's picture frame, onto a
    neighbour's edge in a fan)."""

    corners: np.ndarray
    crop: np.ndarray
    score: float
    cue: str
    detected: np.ndarray | None = None

    @property
    def clear(self) -> bool:
        """Whether the outline was traced by a contour cue (and, with the detector, one it agreed
        with): not a bare detector rectangle (``cue == "network"``), not a cue's find that no
        detection explains (its score is capped at 0.5). Only such crops may teach the deck."""
        return self.cue in ("colour", "edges") and self.score > 0.5

    @property
    def centre(self) -> tuple[float, float]:
        c = self.corners.mean(axis=0)
        return float(c[0]), float(c[1])


def _border_colour(lab: np.ndarray) -> np.ndarray:
    h, w = lab.shape[:2]
    b = max(2, min(h, w) // 40)
    border = np.concatenate(
        [lab[:b].reshape(-1, 3), lab[-b:].reshape(-1, 3), lab[:, :b].reshape(-1, 3), lab[:, -b:].reshape(-1, 3)]
    )
    return np.median(border, axis=0)  # type: ignore[no-any-return]


def _border_percentile(img: np.ndarray, q: float) -> float:
    h, w = img.shape[:2]
    b = max(2, min(h, w) // 40)
    border = np.concatenate([img[:b].ravel(), img[-b:].ravel(), img[:, :b].ravel(), img[:, -b:].ravel()])
    return float(np.percentile(border, q))


def _colour_mask(img: np.ndarray) -> tuple[np.ndarray, bool]:
    """Foreground = far from the border's colour in Lab (L1 distance, lightness weighted down).

    Also says whether the table is light: there a white card's margin looks like the table, the
    colour cue sees only the print, and the edge cue must look for the outline.
    """
    lab = cv2.cvtColor(cv2.GaussianBlur(img, (3, 3), 0), cv2.COLOR_BGR2LAB)
    bg = _border_colour(lab)
    light = bool(bg[0] > 150)
    # OpenCV's stubs have no overload for a scalar second operand, which absdiff takes
    diff = cv2.absdiff(lab, (float(bg[0]), float(bg[1]), float(bg[2]), 0.0))  # type: ignore[call-overload]
    # lightness counts less than colour: uneven light shifts L across a table far more than a, b
    d8 = cv2.transform(diff, _WEIGHTS)  # uint8, saturating
    # the cut-off comes from the table itself: how far its own border pixels stray from its colour
    # (wood grain, cloth weave, noise), not from Otsu, which splits a card's print from its white
    t = max(14.0, 1.3 * _border_percentile(d8, 98) + 8.0)
    mask: np.ndarray = ((d8 >= t) * 255).astype(np.uint8)
    k = cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3))
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, k, iterations=2)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, k)
    return _fill_holes(mask), light


def _edge_mask(img: np.ndarray) -> np.ndarray:
    gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    gray = cv2.GaussianBlur(gray, (5, 5), 0)
    # gradient thresholds from the table's own texture: a white card on a white desk shows only a
    # faint outline (its thickness, a soft shadow), so the bar must sit just above the table's noise
    gx = cv2.Sobel(gray, cv2.CV_16S, 1, 0)
    gy = cv2.Sobel(gray, cv2.CV_16S, 0, 1)
    mag = cv2.convertScaleAbs(cv2.addWeighted(cv2.convertScaleAbs(gx), 0.5, cv2.convertScaleAbs(gy), 0.5, 0))
    noise = _border_percentile(mag, 90)
    low = float(np.clip(3.0 * noise, 10, 60))
    edges = cv2.Canny(gray, low, 2.5 * low)
    k = cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3))
    filled = _fill_holes(cv2.dilate(edges, k, iterations=1))
    return cv2.erode(filled, k, iterations=1)  # undo the dilation's outward pixel


def _fill_holes(mask: np.ndarray) -> np.ndarray:
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out = np.zeros_like(mask)
    cv2.drawContours(out, contours, -1, 255, thickness=cv2.FILLED)
    return out


def _quad_from_contour(contour: np.ndarray) -> np.ndarray | None:
    hull = cv2.convexHull(contour)
    peri = cv2.arcLength(hull, True)
    for eps in (0.02, 0.03, 0.04, 0.06, 0.08):
        approx = cv2.approxPolyDP(hull, eps * peri, True)
        if len(approx) == 4:
            return approx.reshape(4, 2).astype(np.float32)
        if len(approx) < 4:
            break
    # rounded corners or a finger on an edge: fall back to the minimum-area rectangle
    return cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float32)


def _refine_quad(contour: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Corners as intersections of lines fitted to each side's contour points.

    The hull's vertices sit on a card's rounded corners, a few pixels inside the true corners;
    lines fitted to the straight middle of each side and intersected put the corners where a
    square-cornered card's would be, which is what the training crops assume.
    """
    pts = contour.reshape(-1, 2).astype(np.float32)
    lines = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        ab = b - a
        length = float(np.linalg.norm(ab))
        if length < 8:
            return quad
        u = ab / length
        rel = pts - a
        t = rel @ u
        d = np.abs(rel[:, 0] * u[1] - rel[:, 1] * u[0])
        sel = pts[(t > 0.15 * length) & (t < 0.85 * length) & (d < max(2.5, 0.03 * length))]
        if len(sel) < 5:
            return quad
        lines.append(_side_line(sel))
    out = _intersect_sides(lines)
    if out is None or np.abs(out - quad).max() > 0.1 * float(np.linalg.norm(quad[0] - quad[2])):
        return quad  # the fit went astray (a finger on a side): keep the hull's corners
    return out


def _snap_to_edges(image: np.ndarray, corners: np.ndarray, *, samples: int = 24) -> np.ndarray:
    """Corners moved onto the card's outline as the full-size photo shows it, to a fraction of a pixel.

    Why: the cues' outlines come from thresholded masks on the (possibly shrunk) working image, so
    a 55-100 px camera card's corners were 2-3 % of its height off, and a fifth of such cards were
    warped worse than the training crops allow (bench/photos.py). Here each side is sampled across
    its middle three quarters; along each sample's outward normal the photo's colour distance from
    the table just outside is read, and the edge is where it falls fastest (sub-pixel, by a
    parabola through the peak). A line fitted to each side's edge points (Huber: a finger on a side
    is outvoted) and the lines' intersections give the corners. Where a side shows too little
    contrast, or the result strays further than the search reached, the corners stay as they were.
    Written here rather than taken from OpenCV: ``cornerSubPix`` looks for saddle points, which a
    card's rounded corner does not have.
    """
    c = corners.astype(np.float32)
    card_h = float(np.linalg.norm(c[3] - c[0]) + np.linalg.norm(c[2] - c[1])) / 2
    reach = float(np.clip(0.05 * card_h, 2.5, 12.0))  # how far off the cues' outline can be
    offsets = np.arange(-reach, reach + 0.01, 0.5, dtype=np.float32)  # inside (-) to outside (+)
    along = np.linspace(0.12, 0.88, samples, dtype=np.float32)
    sides = np.roll(c, -1, axis=0) - c  # side i runs from corner i to corner i+1
    normals = np.stack([sides[:, 1], -sides[:, 0]], axis=1) / np.maximum(np.linalg.norm(sides, axis=1), 1e-6)[:, None]
    outward = np.sign(np.einsum("ij,ij->i", normals, c + sides / 2 - c.mean(axis=0)))
    normals *= np.where(outward == 0, 1.0, outward)[:, None].astype(np.float32)
    pts = c[:, None, :] + along[None, :, None] * sides[:, None, :]  # (4, samples, 2)
    grid = (pts[:, :, None, :] + offsets[None, None, :, None] * normals[:, None, None, :]).reshape(4 * samples, -1, 2)
    # all four sides in one remap and one colour conversion (per-side calls cost more than the work)
    vals = cv2.remap(image, grid[..., 0], grid[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    lab = cv2.cvtColor(vals, cv2.COLOR_BGR2LAB).astype(np.float32)
    dist = np.linalg.norm(lab - lab[:, -3:].mean(axis=1, keepdims=True), axis=2)  # from the table outside
    fall = dist[:, :-2] - dist[:, 2:]  # centred on offsets[1:-1]; > 0 where going out nears the table
    k = np.argmax(fall, axis=1)
    rows = np.arange(len(k))
    peak = fall[rows, k]
    inner = np.clip(k, 1, fall.shape[1] - 2)
    left, mid, right = fall[rows, inner - 1], fall[rows, inner], fall[rows, inner + 1]
    curve = left - 2 * mid + right
    sub = np.clip(np.where(curve < -1e-6, 0.5 * (left - right) / np.where(curve < -1e-6, curve, -1.0), 0.0), -0.5, 0.5)
    edge = pts.reshape(-1, 2) + (offsets[k + 1] + 0.5 * sub)[:, None] * np.repeat(normals, samples, axis=0)
    by_side = peak.reshape(4, samples)
    ok = ((k > 0) & (k < fall.shape[1] - 1)).reshape(4, samples) & (by_side > 4.0) \
        & (by_side > 0.5 * np.median(by_side, axis=1, keepdims=True))
    if int(ok.sum(axis=1).min()) < 6:
        return corners
    edge = edge.reshape(4, samples, 2)
    out = _intersect_sides([_side_line(edge[i][ok[i]]) for i in range(4)])
    if out is None or float(np.abs(out - c).max()) > 1.5 * reach:
        return corners
    return out


def _side_line(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A point on and the direction of the line through a side's points (Huber: a few stray points,
    a finger or a notch, are outvoted)."""
    vx, vy, x0, y0 = cv2.fitLine(points.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).reshape(4)
    return np.array([x0, y0], np.float32), np.array([vx, vy], np.float32)


def _intersect_sides(lines: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray | None:
    """Corner i where side i-1 meets side i (each side a point and a direction); None if two are parallel."""
    out = np.empty((4, 2), np.float32)
    for i in range(4):
        (p1, d1), (p2, d2) = lines[i - 1], lines[i]
        det = float(d1[1] * d2[0] - d1[0] * d2[1])  # Cramer's rule: numpy's solve costs more than this work
        if abs(det) < 1e-3:
            return None
        dx, dy = float(p2[0] - p1[0]), float(p2[1] - p1[1])
        t1 = (dy * float(d2[0]) - dx * float(d2[1])) / det
        out[i] = p1 + t1 * d1
    return out


def order_corners(quad: np.ndarray) -> np.ndarray:
    """Clockwise (in image coordinates) from the card's top-left, with the first edge a short edge.

    Of the two orientations that make the card portrait, the one whose first corner is nearer the
    image's top-left is chosen, so the order is deterministic.
    """
    c = quad.mean(axis=0)
    ang = np.arctan2(quad[:, 1] - c[1], quad[:, 0] - c[0])
    q = quad[np.argsort(ang)]  # clockwise on screen (y down)
    e01 = np.linalg.norm(q[1] - q[0])
    e12 = np.linalg.norm(q[2] - q[1])
    if e01 > e12:  # make 0->1 a short edge
        q = np.roll(q, -1, axis=0)
    alt = np.roll(q, -2, axis=0)
    if alt[0].sum() < q[0].sum():
        q = alt
    return q.astype(np.float32)


def _plausible(contour: np.ndarray, quad: np.ndarray, shape: tuple[int, int], min_area: float, *,
               min_aspect: float = 1.15) -> float:
    """0 if the quadrilateral cannot be a whole card, else a score in (0, 1]. ``min_aspect``: the
    least long side over short side (1.0: any, as where the camera looks so obliquely that a
    card's long side is foreshortened to its short side's length)."""
    h, w = shape
    if not cv2.isContourConvex(quad.reshape(-1, 1, 2).astype(np.int32)):
        return 0.0
    q_area = cv2.contourArea(quad)
    if q_area < min_area or q_area > 0.9 * h * w:
        return 0.0
    x, y, bw, bh = cv2.boundingRect(contour.astype(np.float32))
    if x <= 1 or y <= 1 or x + bw >= w - 1 or y + bh >= h - 1:
        return 0.0  # cut off by the frame: a warp would cover only part of the card
    sides = [float(np.linalg.norm(quad[i] - quad[(i + 1) % 4])) for i in range(4)]
    short = (sides[0] + sides[2]) / 2
    long_ = (sides[1] + sides[3]) / 2
    if short > long_:
        short, long_ = long_, short
    if short < 8:
        return 0.0
    aspect = long_ / short
    if not min_aspect <= aspect <= 2.0:  # poker 1.4, bridge 1.56, narrow designs (orell) 1.67; perspective adds more
        return 0.0
    # opposite sides of similar length (a perspective view from above keeps them close)
    if min(sides[0], sides[2]) / max(sides[0], sides[2]) < 0.7 or min(sides[1], sides[3]) / max(sides[1], sides[3]) < 0.7:
        return 0.0
    fill = cv2.contourArea(contour) / max(q_area, 1.0)
    if fill < 0.82 or fill > 1.15:
        return 0.0
    aspect_score = 1.0 - min(abs(aspect - CARD_ASPECT) / 0.35, 1.0)
    return float(0.5 + 0.25 * aspect_score + 0.25 * min(fill, 1.0))


def warp_card(image: np.ndarray, corners: np.ndarray, size: tuple[int, int] = CANONICAL_SIZE, *,
              border: int = cv2.BORDER_REPLICATE) -> np.ndarray:
    """Perspective-correct the card at ``corners`` (ordered as :func:`order_corners`) to ``size``.
    Where the outline runs past the photo's edge, ``border`` (an OpenCV border mode) fills in: the
    edge's pixels repeated by default, zeros for a mask (``cv2.BORDER_CONSTANT``).

    Large cards are warped at a multiple of the size and then area-averaged down, as a camera
    integrates over a pixel; warping straight to 64×88 from a 400 px card would alias the index.
    """
    w, h = size
    card_h = float(np.linalg.norm(corners[3] - corners[0]) + np.linalg.norm(corners[2] - corners[1])) / 2
    k = int(np.clip(round(card_h / h), 1, 4))
    dst = np.array([[0, 0], [w * k - 1, 0], [w * k - 1, h * k - 1], [0, h * k - 1]], np.float32)
    M = cv2.getPerspectiveTransform(corners.astype(np.float32), dst)
    big = cv2.warpPerspective(image, M, (w * k, h * k), flags=cv2.INTER_LINEAR, borderMode=border)
    if k == 1:
        return big
    return cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA)


#: Two outlines whose long sides lie further apart than this (radians) are not one card's.
ACROSS = np.pi / 6


def long_side_direction(quad: np.ndarray) -> float:
    """The direction of a quad's longer pair of sides, in radians modulo π (a card and its half
    turn lie alike)."""
    q = np.asarray(quad, np.float64)
    a, b = q[1] - q[0], q[2] - q[1]
    c, d = q[2] - q[3], q[3] - q[0]
    along = (a + c) if np.linalg.norm(a) + np.linalg.norm(c) >= np.linalg.norm(b) + np.linalg.norm(d) else (b + d)
    return float(np.arctan2(along[1], along[0]) % np.pi)


def across(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two card outlines lie across each other: their long sides more than
    :data:`ACROSS` apart in direction. (A card is 1.4 times as long as wide, so its long side
    says how it lies; two outlines of one card agree on it.)"""
    turn = abs(long_side_direction(a) - long_side_direction(b))
    return min(turn, np.pi - turn) > ACROSS



def overlap(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection area over the smaller quad's area (1.0: one lies inside the other)."""
    inter, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    small = min(cv2.contourArea(a), cv2.contourArea(b))
    return float(inter / small) if small > 0 else 0.0


@dataclass(frozen=True)
class ContourCues:
    """What the contour cues found in one photo (quads in working-image pixels, ``scale`` the
    working image's size over the photo's): they do not depend on the detector, so a caller that
    finds cards in one photo several times (``identify``'s second look) works them out once."""

    kept: list[tuple[float, np.ndarray, str]]
    scale: float


def contour_cues(image_bgr: np.ndarray, *, min_card_px: int = 24, thorough: bool = False,
                 min_aspect: float = 1.15) -> ContourCues:
    """The table-colour and edge cues' card outlines in ``image_bgr`` (see :func:`find_cards`;
    ``min_aspect``: :func:`_plausible`'s)."""
    if image_bgr is None or image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
        raise ValueError("find_cards expects an H×W×3 BGR image")
    H, W = image_bgr.shape[:2]
    scale = min(1.0, _WORK_SIDE / max(H, W))
    small = cv2.resize(image_bgr, (int(W * scale), int(H * scale)), interpolation=cv2.INTER_AREA) if scale < 1 else image_bgr
    sh, sw = small.shape[:2]
    min_area = (min_card_px * scale) ** 2 * CARD_ASPECT

    candidates: list[tuple[float, np.ndarray, str]] = []
    cues = [("colour", small, 1.0), ("edges", small, 1.0)]
    unexplained = False  # a card-sized colour blob that is not a card: white cards on a light table
    light = False
    for cue, img, up in cues:
        if cue == "edges" and candidates and not (unexplained or light or thorough):
            break  # a dark table and every blob explained: the colour cue is enough
        if cue == "colour":
            mask, light = _colour_mask(img)
        else:
            mask = _edge_mask(img)
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        for raw in contours:
            cnt = raw.astype(np.float32) * up
            if cv2.contourArea(cnt) < min_area * 0.8:
                continue
            quad = _quad_from_contour(cnt)
            if quad is None:
                continue
            quad = order_corners(_refine_quad(cnt, order_corners(quad)))
            score = _plausible(cnt, quad, (sh, sw), min_area, min_aspect=min_aspect)
            if score == 0 and cue == "colour":
                unexplained = True
            if score > 0:
                candidates.append((score + (0.01 if cue == "colour" else 0.0), quad, cue))

    # merge the two cues. Cards lying apart do not overlap, so of two overlapping quads one is
    # wrong: the smaller is a card's print seen without its white margin (a partial warp).
    # Of two quads of one card, the colour cue's is the more exact (edges include the shadow).
    candidates.sort(key=lambda c: -cv2.contourArea(c[1]))
    kept: list[tuple[float, np.ndarray, str]] = []
    for cand in candidates:
        clash = [i for i, k in enumerate(kept) if overlap(cand[1], k[1]) >= 0.3]
        if not clash:
            kept.append(cand)
        elif len(clash) == 1 and cand[2] == "colour" and kept[clash[0]][2] == "edges" \
                and cv2.contourArea(cand[1]) >= 0.85 * cv2.contourArea(kept[clash[0]][1]):
            kept[clash[0]] = cand
    return ContourCues(kept, scale)


def find_cards(image_bgr: np.ndarray, *, min_card_px: int = 24, max_cards: int = 64,
               thorough: bool = False, detector: CardDetector | None = None,
               detector_side: int | Sequence[int] | None = None, cues: ContourCues | None = None,
               card_masks: dict[int, np.ndarray] | None = None) -> list[FoundCard]:
    """Every card in ``image_bgr`` (any rotation, any table), top-to-bottom, left-to-right.

    ``min_card_px`` is the shortest card side (in the original image) worth reading. The edge cue
    runs only when the colour cue finds nothing, unless ``thorough`` (both always; slower).
    With a ``detector`` (:class:`vision.detector.CardDetector`), the network's cards are the
    answer: a card the contour cues also found takes their more exact outline, and the cues'
    other finds are kept only where the network saw no card but they are sure of it.
    ``detector_side`` is the long side (or sides) the detector scales the image to (default: its own two).
    ``cues``: the photo's :func:`contour_cues`, when the caller has them already.
    ``card_masks``: filled with the detector's maps of card pixels (:meth:`CardDetector.detect`).
    """
    if cues is None:
        cues = contour_cues(image_bgr, min_card_px=min_card_px, thorough=thorough)
    kept, scale = cues.kept, cues.scale
    H = image_bgr.shape[0]
    merged: list[tuple[float, np.ndarray, str, np.ndarray | None]] = [(*k, None) for k in kept]
    if detector is not None:
        fits: dict[bytes, np.ndarray | None] = {}  # one fit per detection, however many parts it is weighed against
        dets = detector.detect(image_bgr, work_side=detector_side, card_masks=card_masks,
                               better=lambda a, b: _backed_better(image_bgr, a, b, fits))
        merged = _with_detections(dets, kept, scale, min_card_px)
    found: list[FoundCard] = []
    merged = merged[:max_cards]
    for i, (score, quad, cue, network) in enumerate(merged):
        detected = None
        if cue == "network":
            others = [m[1] / scale for j, m in enumerate(merged) if j != i]
            corners, cue, detected = _network_outline(image_bgr, quad / scale, others, min_card_px)
        else:
            corners = _snap_to_edges(image_bgr, quad / scale)
            if network is not None and quad_iou(network / scale, corners) < _AGREE:
                # the detector saw this card too, and its rectangle disagrees: fitted, it replaces
                # the cue's outline where the photo's edges clearly back it better (a cue's blob
                # can take in a shadow or a neighbour; on held-back train/ photos 83 -> 85 of 108
                # cards right)
                other = _fitted(image_bgr, network / scale)
                if edge_support(image_bgr, other) > _CLEARLY_BETTER * edge_support(image_bgr, corners):
                    corners, cue = other, "network"
                    detected = _moved_far(network / scale, other)
                else:
                    detected = other
        found.append(FoundCard(corners=corners.astype(np.float32), crop=warp_card(image_bgr, corners),
                               score=round(min(score, 1.0), 3), cue=cue, detected=detected))
    found.sort(key=reading_order(H))
    return found


def reading_order(height: int) -> Callable[[FoundCard], tuple[int, float]]:
    """Sort key for the cards of a photo ``height`` px tall: in rows an eighth of it high, top
    to bottom, each left to right (how a person reads them out)."""
    return lambda f: (round(f.centre[1] / max(height / 8, 1)), f.centre[0])


#: How far round a detector's rectangle the contour cues look again on their own (shares of the
#: card's long side on every side, tried in turn: a narrow window keeps out the mat's own edge and
#: the table beyond it, a wider one the card's neighbours' share of its border), and how much
#: their outline must overlap the rectangle (IoU) to be taken for the same card.
LOCAL_MARGINS = (0.35, 0.2, 0.5)
LOCAL_AGREE = 0.6
#: The traced outline replaces the detector's fitted rectangle only where the two differ (IoU
#: below this): where they agree the fit stands, as it did before there was a local trace.
LOCAL_DIFFERS = 0.9
#: Only a card no other outline of a card's size (under twice its area: not the mat under it,
#: which the detector may take for a card) overlaps by this share of the smaller is traced so:
#: in a pile or a spread the window's cues trace the pile, and the detector's outlines serve better.
LOCAL_ALONE = 0.2


def _network_outline(image_bgr: np.ndarray, rough: np.ndarray, others: Sequence[np.ndarray],
                     min_card_px: int) -> tuple[np.ndarray, str, np.ndarray | None]:
    """The outline of a card only the detector outlined (``rough``, photo pixels; ``others``: the
    other cards' outlines), its cue's name and :attr:`FoundCard.detected`: the rectangle fitted
    to the photo's edges, or where that went astray and the card lies alone, the cues' trace of it
    in a window round it (:func:`_traced_locally`). Where the two lie near each other the fit is
    kept and the trace is the other guess: a fit a few pixels off turns the card in its crop, and
    the reader, left unsure by it, reads the trace (felt-52's jack of hearts on the mat: 0.52 from
    the fit, 0.82 from the trace, and with the deck shown, unsure against sure)."""
    corners = _fitted(image_bgr, rough)
    area = cv2.contourArea(rough)
    alone = all(overlap(rough, o) < LOCAL_ALONE for o in others if cv2.contourArea(o) < 2 * area)
    traced = _traced_locally(image_bgr, rough, min_card_px, [o.mean(axis=0) for o in others]) if alone else None
    if traced is not None and quad_iou(traced[0], corners) < LOCAL_DIFFERS:
        return traced[0], traced[1], order_corners(rough)
    # near the fit, the trace is still the other guess where the fit reads unsure
    return corners, "network", traced[0] if traced is not None else _moved_far(rough, corners)


def _traced_locally(image_bgr: np.ndarray, rough: np.ndarray, min_card_px: int,
                    other_centres: Sequence[np.ndarray] = ()) -> tuple[np.ndarray, str] | None:
    """The card's outline as the contour cues trace it in a window round the detector's
    rectangle ``rough`` (photo pixels), snapped to the photo's edges, with the cue's name; None
    where they trace no card there that agrees with the rectangle.

    Why: the cues tell the table's colour from the photo's border, so a mat on a table (green felt
    on a white desk, a placemat, a card-table top seen with the floor round it) is all
    "foreground" to them and the cards on it go untraced; the detector's rectangle, fitted to the
    photo's edges, then lands on a card's printed inner frame as readily as on its edge (felt-52:
    the four and five of every suit cut off their corner index). In a window round one card the
    window's border is the mat, and the cues trace the card to a pixel.

    An outline that takes in the centre of another card found (``other_centres``, photo pixels)
    is a pile or a spread traced as one, not this card: none is taken from that window.
    """
    q = order_corners(np.asarray(rough, np.float32))
    long_side = max(float(np.linalg.norm(q[i] - q[(i + 1) % 4])) for i in range(4))
    H, W = image_bgr.shape[:2]
    for margin in LOCAL_MARGINS:
        pad = margin * long_side
        x0, y0 = (int(max(0.0, float(v) - pad)) for v in q.min(axis=0))
        x1, y1 = (int(min(float(lim), float(v) + pad)) for v, lim in zip(q.max(axis=0), (W, H), strict=True))
        if x1 - x0 < 16 or y1 - y0 < 16:
            return None
        cues = contour_cues(image_bgr[y0:y1, x0:x1], min_card_px=min_card_px, thorough=True, min_aspect=1.0)
        origin = np.array([x0, y0], np.float32)
        best: tuple[float, np.ndarray, str] | None = None
        for _score, cq, cue in cues.kept:
            quad = cq / cues.scale + origin
            iou = quad_iou(q, quad)
            takes_in = any(cv2.pointPolygonTest(quad, (float(c[0]), float(c[1])), False) >= 0 for c in other_centres)
            if iou >= LOCAL_AGREE and not takes_in and (best is None or iou > best[0]):
                best = (iou, quad, cue)
        if best is not None:
            return _like(_snap_to_edges(image_bgr, best[1]), q), best[2]
    return None


def _like(quad: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """``quad``'s corners in the order whose corners lie nearest ``reference``'s (both clockwise):
    where the camera looks obliquely a card's long side can look no longer than its short side, and
    which side is the long one is then the detector's to say, whose rectangle has a card's shape."""
    q = order_corners(np.asarray(quad, np.float32))
    shifts = [np.roll(q, -k, axis=0) for k in range(4)]
    return min(shifts, key=lambda c: float(np.linalg.norm(c - reference, axis=1).sum()))


def _moved_far(rough: np.ndarray, fitted: np.ndarray) -> np.ndarray | None:
    """The detector's own rectangle ``rough`` where fitting it to the photo's edges moved it far
    from where the network put it (IoU below :data:`_AGREE`), else None: the fit can land on a
    court card's picture frame or a neighbour's edge in a fan, and the rectangle is then the
    other guess at the card (:attr:`FoundCard.detected`)."""
    rough = order_corners(np.asarray(rough, np.float32))
    return rough if quad_iou(rough, fitted) < _AGREE else None


def _fitted(image_bgr: np.ndarray, rough: np.ndarray) -> np.ndarray:
    """A detector rectangle fitted to the photo's edges (it is often degrees and a tenth of a card
    off: vision/outline_fit.py), its corners then snapped as the cues' are."""
    return order_corners(_snap_to_edges(image_bgr, order_corners(fit_outline(image_bgr, rough))))


#: An outline read unsure may be too small for its card (a court card's picture frame, a card's
#: inner border): grown by this much about its centre and fitted to the photo's edges
#: (:func:`wider_outline`), it is taken for the card's where the fit is at least
#: :data:`WIDER_AREA` times its area. (On the labelled train/ photos growing by 1.2 to 1.35 named
#: the same one more card, none wrongly.)
WIDER_GROW = 1.3
WIDER_AREA = 1.15


def wider_outline(image_bgr: np.ndarray, corners: np.ndarray) -> np.ndarray | None:
    """The card's outline where ``corners`` (photo pixels) outline only part of it: the outline
    grown by :data:`WIDER_GROW`, fitted to the photo's edges (:func:`vision.outline_fit.try_fit`)
    and snapped, or None where no edges back a fit at least :data:`WIDER_AREA` times as large."""
    quad = np.asarray(corners, np.float32)
    centre = quad.mean(axis=0)
    fitted = try_fit(image_bgr, (quad - centre) * WIDER_GROW + centre)
    if fitted is None:
        return None
    wider = order_corners(_snap_to_edges(image_bgr, order_corners(fitted)))
    return wider if cv2.contourArea(wider) >= WIDER_AREA * cv2.contourArea(quad) else None


#: An outline read unsure may be too large for its card (a colour cue's blob over a pile takes in
#: the cards under the one on top): shrunk to this share about its centre, and about each corner in
#: turn, and fitted to the photo's edges (:func:`narrower_outlines`), each fit is another guess ...
NARROWER = 0.8
#: ... each side moving at most this share of the card's long side: the top card's own edges lie
#: near, and the pile's outer edges, which are stronger (paper on the table, not paper on paper),
#: must stay out of reach (at the fit's usual 0.18 a start on the top card's edges jumps back to
#: them; on 150 scenes of ``bench/overlaps.py`` 0.08 named one card more).
NARROWER_REACH = 0.08


def narrower_outlines(image_bgr: np.ndarray, corners: np.ndarray) -> list[np.ndarray]:
    """Outlines of a card inside ``corners`` (photo pixels), which took in more than the card: the
    outline shrunk by :data:`NARROWER` about its centre and about each of its corners, each fitted
    to the photo's edges (:func:`vision.outline_fit.try_fit`) and snapped; those no edges back
    give none."""
    quad = np.asarray(corners, np.float32)
    out: list[np.ndarray] = []
    for anchor in (quad.mean(axis=0), *quad):
        fitted = try_fit(image_bgr, (quad - anchor) * NARROWER + anchor, reach=NARROWER_REACH)
        if fitted is not None:
            out.append(order_corners(_snap_to_edges(image_bgr, order_corners(fitted))))
    return out


def _backed_better(image_bgr: np.ndarray, first: Detection, second: Detection,
                   fits: dict[bytes, np.ndarray | None]) -> bool:
    """Whether ``second`` is the whole of a card ``first`` saw a part of: a third larger, fitted
    to the photo's edges (a loose box over a pile of papers fits none), and that fit backed
    better than ``first``'s outline. (Two readings of one card at about the same size are left
    alone: fitting both costs more than it changes.) ``fits`` keeps each detection's fit, so a
    whole card weighed against several of its parts is fitted once."""
    if cv2.contourArea(second.corners) < 1.3 * cv2.contourArea(first.corners):
        return False

    def fit(det: Detection) -> np.ndarray | None:
        key = det.corners.tobytes()  # not id(): a dropped detection's id may be reused
        if key not in fits:
            fits[key] = try_fit(image_bgr, det.corners)
        return fits[key]

    whole = fit(second)
    if whole is None:
        return False
    part = fit(first)
    if part is not None and quad_iou(part, whole) >= 0.9:
        return True  # the part's own fit grew to the whole card: one card, and the later reading saw it whole
    return edge_support(image_bgr, whole) > edge_support(image_bgr, first.corners if part is None else part)


def _with_detections(detections: list[Detection], cues: list[tuple[float, np.ndarray, str]], scale: float,
                     min_card_px: int) -> list[tuple[float, np.ndarray, str, np.ndarray | None]]:
    """Merge the network's cards with the contour cues' (quads in working-image pixels).

    A detection the cues also outlined takes the cues' outline: where a card lies clear of the
    others they find its edges to a pixel, while the network answers a rectangle. (Also outlined:
    overlapping it mostly, of about its size, and lying the same way, not :func:`across` it.) A detection
    whose centre lies close to a better one's, and whose outline mostly overlaps it, is the same
    card seen twice. A cue's find that no detection explains is kept when it clashes with none:
    small cards far from the camera (a table camera's 55 px cards) are where the cues still see
    more than the network does.
    """
    out: list[tuple[float, np.ndarray, str, np.ndarray | None]] = []
    centres: list[tuple[np.ndarray, float, np.ndarray]] = []
    used: set[int] = set()
    for det in detections:
        quad = det.corners * scale
        sides = [float(np.linalg.norm(quad[i] - quad[(i + 1) % 4])) for i in range(4)]
        short = min(sides)
        if short < min_card_px * scale:
            continue
        c = quad.mean(axis=0)
        if any(float(np.linalg.norm(c - oc)) < SAME_CARD_CENTRES * min(short, os_) and quad_iou(quad, oq) >= SAME_CARD_IOU
               for oc, os_, oq in centres):
            continue
        centres.append((c, short, quad))
        match = None
        for i, (_score, cq, _cue) in enumerate(cues):
            if i not in used and overlap(quad, cq) >= 0.5 and \
                    0.6 <= cv2.contourArea(cq) / max(cv2.contourArea(quad), 1.0) <= 1.6 and not across(quad, cq):
                match = i
                break
        if match is not None:
            used.add(match)
            out.append((det.score, cues[match][1], cues[match][2], order_corners(quad)))
        else:
            out.append((det.score, order_corners(quad), "network", None))
    for i, (score, cq, cue) in enumerate(cues):
        if i not in used and all(overlap(cq, q) < 0.3 for _s, q, _c, _a in out):
            out.append((min(score, 0.5), cq, cue, None))
    return out
