"""Labelled real photographs as training samples for the card detector, beside the synthesised scenes.

Why: a detector trained on rendered decks over real surfaces still missed plain single cards in
real photographs (a card's true paper, its worn edges, a phone's tone curve are not in any
render). The labelled ``train/`` photos show exactly that, but label each card only by an
axis-aligned box around its visible part, while the detector learns a card's whole outline: centre,
long and short side, direction. For a card that lies clear of the others the outline follows from
its box: a rectangle of a card's proportions turned by θ has a bounding box whose height/width ratio
rises monotonically with θ from 1/aspect to aspect, so the ratio gives θ up to a mirror (θ or -θ),
and the photo's edges pick the mirror (the outline that runs along stronger gradients). A card
whose box meets another card's box may be covered: its outline is unknown, so the loss ignores the
heat map around it and the mask inside its box, and asks nothing of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from models.scenes import SceneCard
from models.synth import _colour, _light, _sensor

#: long side / short side of a poker card (the labelled deck's)
ASPECT = 3.5 / 2.5


@dataclass(frozen=True)
class RealPhoto:
    """One labelled photo: ``clear`` the outlines of the cards lying clear of the others (render
    order: top-left, top-right, bottom-right, bottom-left, short side first), ``unclear`` the
    boxes of the others (possibly covered: not asked for)."""

    image: np.ndarray
    clear: list[np.ndarray]
    unclear: list[tuple[float, float, float, float]]


def _theta_for_ratio(ratio: float, aspect: float = ASPECT) -> float:
    """The turn θ in [0, π/2] of a card's long side from the x axis whose bounding box has
    height/width ``ratio`` (bisection: the ratio rises monotonically with θ)."""
    lo, hi = 0.0, math.pi / 2
    if ratio <= 1 / aspect:
        return lo
    if ratio >= aspect:
        return hi
    for _ in range(40):
        mid = (lo + hi) / 2
        c, s = math.cos(mid), math.sin(mid)
        if (s + c / aspect) / (c + s / aspect) < ratio:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _rectangle(centre: np.ndarray, long_: float, theta: float, aspect: float) -> np.ndarray:
    u = np.array([math.cos(theta), math.sin(theta)], np.float32)  # along the long side
    v = np.array([-u[1], u[0]], np.float32)
    short = long_ / aspect
    c = centre.astype(np.float32)
    return np.stack([c - u * long_ / 2 - v * short / 2, c - u * long_ / 2 + v * short / 2,
                     c + u * long_ / 2 + v * short / 2, c + u * long_ / 2 - v * short / 2]).astype(np.float32)


def _edge_support(lab: np.ndarray, quad: np.ndarray, step: float = 3.0) -> float:
    """How much the photo's colour changes across a quad's four sides: the mean Lab distance
    between points just inside and just outside the middle of each side (a side that runs along
    the card's outline crosses from paper to table; a wrong one crosses paper or table only).
    A gradient's magnitude alone is fooled by wood grain and the card's own print."""
    c = quad.mean(axis=0)
    inner, outer = [], []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        n = np.array([b[1] - a[1], a[0] - b[0]], np.float32)
        n /= max(float(np.linalg.norm(n)), 1e-6)
        if float(np.dot(n, (a + b) / 2 - c)) < 0:
            n = -n
        for t in np.linspace(0.15, 0.85, 12):
            p = a + t * (b - a)
            inner.append(p - step * n)
            outer.append(p + step * n)
    hi = np.array([lab.shape[1] - 1, lab.shape[0] - 1])
    pi = np.clip(np.round(np.array(inner)).astype(int), 0, hi)
    po = np.clip(np.round(np.array(outer)).astype(int), 0, hi)
    diff = lab[pi[:, 1], pi[:, 0]].astype(np.float32) - lab[po[:, 1], po[:, 0]].astype(np.float32)
    return float(np.linalg.norm(diff, axis=1).mean())


def outline_in_box(box: tuple[float, float, float, float], lab: np.ndarray, aspect: float = ASPECT) -> np.ndarray:
    """The rotated rectangle of a card whose bounding box is ``box``; ``lab`` (the photo in
    CIE Lab) chooses between the two mirror-image solutions."""
    x0, y0, x1, y1 = box
    w, h = max(x1 - x0, 1.0), max(y1 - y0, 1.0)
    theta = _theta_for_ratio(h / w, aspect)
    c, s = math.cos(theta), math.sin(theta)
    long_ = w / (c + s / aspect)  # the box's width: long side's shadow plus the short side's
    centre = np.array([(x0 + x1) / 2, (y0 + y1) / 2], np.float32)
    a = _rectangle(centre, long_, theta, aspect)
    b = _rectangle(centre, long_, -theta, aspect)
    return a if _edge_support(lab, a) >= _edge_support(lab, b) else b


def boxes_meet(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    """Whether two label boxes overlap by more than 2 % of the smaller: one card may cover the other."""
    ix = min(a[2], b[2]) - max(a[0], b[0])
    iy = min(a[3], b[3]) - max(a[1], b[1])
    return ix > 0 and iy > 0 and ix * iy > 0.02 * min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))


def load_real_photos(folders: list[Path], *, hold_every: int = 5) -> tuple[list[RealPhoto], list[Path]]:
    """The labelled photos of ``folders`` as training samples, and the photos held back (every
    ``hold_every``-th from the first, the same photos the reader's fine-tune holds back) to
    choose the threshold on."""
    from vision.voc import labelled_photos, read_labels

    train: list[RealPhoto] = []
    held: list[Path] = []
    k = 0
    for folder in folders:
        for photo, xml in labelled_photos(folder):
            k += 1
            if hold_every and (k - 1) % hold_every == 0:
                held.append(photo)
                continue
            im = cv2.imread(str(photo))
            if im is None:
                continue
            boxes = [c.box for c in read_labels(xml, (im.shape[1], im.shape[0]))]
            lab = cv2.cvtColor(cv2.GaussianBlur(im, (3, 3), 0), cv2.COLOR_BGR2LAB)
            clear, unclear = [], []
            for i, b in enumerate(boxes):
                if any(boxes_meet(b, o) for j, o in enumerate(boxes) if j != i):
                    unclear.append(b)
                else:
                    clear.append(outline_in_box(b, lab))
            train.append(RealPhoto(im, clear, unclear))
    return train, held


def real_scene(rng: np.random.Generator, photo: RealPhoto, side: int) -> tuple[np.ndarray, list[SceneCard], np.ndarray, np.ndarray]:
    """A ``side``-square training sample cut from a labelled photo: the image, its clear cards,
    the mask of card pixels and the weight of the loss (0 inside the unclear cards' boxes, where
    :func:`models.detector.targets` ignores both the heat map and the mask).

    The photo is scaled as ``vision.detector`` scales photos (long side near its work side of
    512, give or take), turned by a multiple of 90°, maybe mirrored, cut to ``side`` and given
    light, colour and sensor changes, so 240 photos make many samples."""
    im = photo.image
    s = 512 / max(im.shape[:2]) * rng.uniform(0.55, 1.25)
    M = np.array([[s, 0, 0], [0, s, 0]], np.float64)
    h, w = int(round(im.shape[0] * s)), int(round(im.shape[1] * s))
    ox = float(rng.integers(0, max(1, w - side + 1))) if w > side else -(side - w) / 2
    oy = float(rng.integers(0, max(1, h - side + 1))) if h > side else -(side - h) / 2
    M[:, 2] = [-ox, -oy]
    k = int(rng.integers(4))
    flip = bool(rng.random() < 0.5)
    # the turn and mirror as one affine map about the sample's centre
    R = np.eye(3)
    ang = k * math.pi / 2
    c0 = (side - 1) / 2
    T = np.array([[1, 0, -c0], [0, 1, -c0], [0, 0, 1]], np.float64)
    rot = np.array([[math.cos(ang), -math.sin(ang), 0], [math.sin(ang), math.cos(ang), 0], [0, 0, 1]])
    F = np.diag([-1.0, 1.0, 1.0]) if flip else np.eye(3)
    R = np.linalg.inv(T) @ rot @ F @ T
    A = (R @ np.vstack([M, [0, 0, 1]]))[:2]
    image = cv2.warpAffine(im, A, (side, side), flags=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_REFLECT101)

    def move(p: np.ndarray) -> np.ndarray:
        return (np.hstack([p, np.ones((len(p), 1))]) @ A.T).astype(np.float32)  # type: ignore[no-any-return]  # (OpenCV's stubs)

    mask = np.zeros((side, side), np.uint8)
    weight = np.ones((side, side), np.float32)
    cards: list[SceneCard] = []
    frame = np.array([[0, 0], [side, 0], [side, side], [0, side]], np.float32)
    for q in photo.clear:
        mq = move(q)
        if flip:  # a mirror reverses the corners' turn; keep the short side first
            mq = mq[[1, 0, 3, 2]]
        inter, _ = cv2.intersectConvexConvex(mq, frame)
        area = max(cv2.contourArea(mq), 1.0)
        cards.append(SceneCard(mq, float(inter) / area))
        cv2.fillConvexPoly(mask, np.round(mq).astype(np.int32), 255)
    for b in photo.unclear:
        corners = move(np.array([[b[0], b[1]], [b[2], b[1]], [b[2], b[3]], [b[0], b[3]]], np.float32))
        x0, y0 = np.floor(corners.min(axis=0)).astype(int)
        x1, y1 = np.ceil(corners.max(axis=0)).astype(int)
        weight[max(0, y0):max(0, y1), max(0, x0):max(0, x1)] = 0.0
    canvas = image.astype(np.float32)
    if rng.random() < 0.5:
        canvas = _light(rng, canvas)
    if rng.random() < 0.6:
        canvas = _colour(rng, canvas)
    if rng.random() < 0.3:
        canvas = np.asarray(cv2.GaussianBlur(canvas, (0, 0), rng.uniform(0.3, 1.2)), np.float32)
    out = _sensor(rng, canvas) if rng.random() < 0.5 else np.clip(canvas, 0, 255).astype(np.uint8)
    return out, cards, mask, weight
