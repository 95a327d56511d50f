"""Whole-table scenes for training the card detector: many cards, overlapping, on real surfaces.

The contour finder failed on real photographs because real tables are not uniform (carpet, wood
grain, a floor around the table, books) and real cards overlap (a pair in the hand, a trick pile,
a fan). A detector learns those only from scenes that have them, so each scene here is: a
surface (a patch of a real photograph with no card in it, a wallpaper photograph, or a
procedural table), clutter (strips, blobs, paper-white rectangles that are not cards), 1-7 cards
from the rendered decks laid out as a scatter, a fan, a pile or a row with overlaps, and
sometimes cut off by the frame, with drop shadows and fingers, then the camera: uneven light,
glare, colour cast, defocus or motion blur, sensor noise and JPEG.

Each card's label is its whole outline (also where it is covered) as a rotated rectangle: centre,
long and short side, and the long side's direction; plus the share of it that is visible. A
mask of visible card pixels is the auxiliary target. One ``numpy.random.Generator`` drives it
all, so a seed reproduces a data set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from models.synth import (
    _colour,
    _finger,
    _light,
    _noise,
    _sensor,
    motion_blur,
    procedural_back,
    table_texture,
)


@dataclass(frozen=True)
class SceneCard:
    """One card of a scene: ``quad`` its four corners (render order: top-left, top-right,
    bottom-right, bottom-left), ``visible`` the share of the card not covered nor out of frame,
    ``corners_shown`` which of the four corners shows (in frame, no card on it); ``None`` where
    that is not known (a real photo's label), and the corner targets are then left out."""

    quad: np.ndarray
    visible: float
    corners_shown: tuple[bool, bool, bool, bool] | None = None

    @property
    def centre(self) -> np.ndarray:
        return self.quad.mean(axis=0)  # type: ignore[no-any-return]


class Surfaces:
    """Real surfaces to lay cards on: patches of labelled photographs away from every labelled
    card, and wallpaper photographs. Empty when none are given (procedural tables only)."""

    def __init__(self, images: list[np.ndarray]) -> None:
        self.images = [im for im in images if min(im.shape[:2]) >= 48]

    @classmethod
    def from_folders(cls, photo_dirs: list[Path], wallpapers: list[Path]) -> Surfaces:
        from vision.voc import labelled_photos, read_labels

        out: list[np.ndarray] = []
        for folder in photo_dirs:
            for photo, xml in labelled_photos(folder):
                im = cv2.imread(str(photo))
                if im is None:
                    continue
                boxes = read_labels(xml, (im.shape[1], im.shape[0]))
                out.extend(_free_patches(im, [c.box for c in boxes]))
        for path in wallpapers:
            im = cv2.imread(str(path))
            if im is not None:
                s = 720 / max(im.shape[:2])
                out.append(cv2.resize(im, None, fx=s, fy=s, interpolation=cv2.INTER_AREA) if s < 1 else im)
        return cls(out)

    def sample(self, rng: np.random.Generator, h: int, w: int) -> np.ndarray | None:
        if not self.images:
            return None
        im = self.images[int(rng.integers(len(self.images)))]
        ih, iw = im.shape[:2]
        # a random window, scaled to fill the scene (zooming in on a small patch blurs it: fine,
        # a defocused table is a table too)
        frac = rng.uniform(0.35, 1.0)
        ch, cw = max(24, int(ih * frac)), max(24, int(iw * frac))
        y, x = int(rng.integers(0, ih - ch + 1)), int(rng.integers(0, iw - cw + 1))
        patch = im[y : y + ch, x : x + cw]
        if rng.random() < 0.5:
            patch = patch[:, ::-1]
        return cv2.resize(patch, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.float32)


def _free_patches(im: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> list[np.ndarray]:
    """The four bands of a photo above, below, left and right of all its labelled cards (a
    band that would hold part of a card is left out), each kept when at least 48 px thick."""
    h, w = im.shape[:2]
    if not boxes:
        return [im]
    b = np.array(boxes)
    x0, y0 = int(max(0, b[:, 0].min() - 4)), int(max(0, b[:, 1].min() - 4))
    x1, y1 = int(min(w, b[:, 2].max() + 4)), int(min(h, b[:, 3].max() + 4))
    bands = [im[:y0], im[y1:], im[:, :x0], im[:, x1:]]
    return [p.copy() for p in bands if min(p.shape[:2]) >= 48]


def _clutter(rng: np.random.Generator, canvas: np.ndarray) -> None:
    """Things on a table that are not cards: cables, coins, a book's edge, a sheet of paper."""
    h, w = canvas.shape[:2]
    for _ in range(int(rng.integers(0, 4))):
        colour = rng.uniform(0, 255, 3).tolist()
        kind = rng.random()
        if kind < 0.35:
            p = rng.uniform(0, 1, (2, 2)) * [w, h]
            cv2.line(canvas, tuple(int(v) for v in p[0]), tuple(int(v) for v in p[1]), colour,
                     int(rng.integers(2, 9)), cv2.LINE_AA)
        elif kind < 0.6:
            c = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
            cv2.circle(canvas, c, int(rng.uniform(4, 0.08 * w)), colour, -1, cv2.LINE_AA)
        else:  # a rectangle: a book, or a white sheet with print (the hard negative)
            cx, cy = rng.uniform(0, w), rng.uniform(0, h)
            sw, sh = rng.uniform(0.1, 0.6) * w, rng.uniform(0.1, 0.6) * h
            if rng.random() < 0.5:
                colour = [float(rng.uniform(200, 250))] * 3
            box = cv2.boxPoints(((cx, cy), (sw, sh), rng.uniform(0, 180))).astype(np.int32)
            cv2.fillConvexPoly(canvas, box, colour, cv2.LINE_AA)
            if colour[0] > 190 and rng.random() < 0.7:  # lines of print on the sheet
                for k in range(int(rng.integers(3, 12))):
                    y = cy - sh / 2 + (k + 1) * sh / 14
                    cv2.line(canvas, (int(cx - sw / 3), int(y)), (int(cx + sw / 3), int(y)), (40, 40, 40), 1)


def _layout(rng: np.random.Generator, n: int, W: int, H: int, aspect: float) -> list[np.ndarray]:
    """Card outlines (4×2, render corner order) for ``n`` cards: a scatter, a fan, a pile or a row."""
    # card heights from a far camera's 28 px to a close-up filling the frame
    height = math.exp(rng.uniform(math.log(28), math.log(0.95 * min(W, H))))
    width = height / aspect
    mode = rng.choice(["scatter", "fan", "pile", "row"], p=[0.4, 0.2, 0.2, 0.2])
    base = np.array([[-width / 2, -height / 2], [width / 2, -height / 2], [width / 2, height / 2], [-width / 2, height / 2]], np.float32)
    quads = []
    cx0, cy0 = rng.uniform(0.2, 0.8) * W, rng.uniform(0.2, 0.8) * H
    ang0 = rng.uniform(0, 2 * math.pi)
    step = rng.uniform(0.12, 0.45)
    for i in range(n):
        if mode == "scatter":
            ang = rng.uniform(0, 2 * math.pi)
            c = np.array([rng.uniform(-0.1, 1.1) * W, rng.uniform(-0.1, 1.1) * H]) if n > 1 else \
                np.array([rng.uniform(0.15, 0.85) * W, rng.uniform(0.15, 0.85) * H])
            s = rng.uniform(0.85, 1.15)
        elif mode == "fan":  # rotated about a point near the cards' bottom
            ang = ang0 + (i - (n - 1) / 2) * rng.uniform(0.12, 0.3)
            pivot = np.array([cx0, cy0]) + np.array([-math.sin(ang0), math.cos(ang0)]) * height * 0.4
            c = pivot + np.array([math.sin(ang), -math.cos(ang)]) * height * 0.4
            s = 1.0
        elif mode == "pile":  # a trick: cards dropped roughly on one spot
            ang = rng.uniform(0, 2 * math.pi)
            c = np.array([cx0, cy0]) + rng.normal(0, 0.3 * height, 2)
            s = 1.0
        else:  # a row of cards overlapping sideways (a spread hand on the table)
            ang = ang0
            d = np.array([math.cos(ang0), math.sin(ang0)]) * width * (step + 0.1 * rng.random())
            c = np.array([cx0, cy0]) + (i - (n - 1) / 2) * d
            s = 1.0
        rot = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]], np.float32)
        q = (base * s) @ rot.T + c.astype(np.float32)
        q += rng.normal(0, 0.03 * height, q.shape).astype(np.float32)  # perspective, a tilted camera
        quads.append(q.astype(np.float32))
    return quads


def _corners_shown(owner: np.ndarray, quad: np.ndarray, index: int) -> tuple[bool, bool, bool, bool]:
    """Which corners of card ``index`` show: the card's own paper just inside each corner (a
    twentieth of the way to the centre, past the rounding) is in frame and on top."""
    h, w = owner.shape
    centre = quad.mean(axis=0)
    shown = []
    for corner in quad:
        x, y = corner + 0.05 * (centre - corner)
        inside = 0 <= x < w and 0 <= y < h
        shown.append(bool(inside and owner[int(y), int(x)] == index))
    return shown[0], shown[1], shown[2], shown[3]


def scene(rng: np.random.Generator, faces: list[np.ndarray], surfaces: Surfaces, *,
          size: tuple[int, int] = (256, 256)) -> tuple[np.ndarray, list[SceneCard], np.ndarray]:
    """One scene: the BGR uint8 image, its cards (visible share >= 0 each), and the uint8 mask
    of visible card pixels (255 on a card)."""
    image, cards, owner = scene_with_owner(rng, faces, surfaces, size=size)
    return image, cards, ((owner >= 0) * 255).astype(np.uint8)


def scene_with_owner(rng: np.random.Generator, faces: list[np.ndarray], surfaces: Surfaces, *,
                     size: tuple[int, int] = (256, 256)) -> tuple[np.ndarray, list[SceneCard], np.ndarray]:
    """:func:`scene` with, instead of the mask, which card each pixel shows (int16, the card's
    index, -1 where none): where two cards overlap, which lies on top (``bench/on_top.py``)."""
    W, H = size
    bg = surfaces.sample(rng, H, W) if rng.random() < 0.6 else None
    canvas = table_texture(rng, H, W) if bg is None else bg
    if rng.random() < 0.6:
        _clutter(rng, canvas)
    n = int(rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 6, 7]))
    aspect = rng.uniform(1.38, 1.58)
    quads = _layout(rng, n, W, H, aspect)
    owner = np.full((H, W), -1, np.int16)  # which card each pixel shows (the last drawn is on top)
    areas = []
    for i, q in enumerate(quads):
        face = faces[int(rng.integers(len(faces)))]
        if rng.random() < 0.08:
            face = procedural_back(rng)
        h0, w0 = face.shape[:2]
        src = np.array([[0, 0], [w0 - 1, 0], [w0 - 1, h0 - 1], [0, h0 - 1]], np.float32)
        shrink = np.linalg.norm(q[3] - q[0]) / h0
        img = face
        if shrink < 0.5:  # pre-shrink so the warp does not alias
            f = min(1.0, 2 * shrink)
            img = cv2.resize(face, (max(8, int(w0 * f)), max(8, int(h0 * f))), interpolation=cv2.INTER_AREA)
            src = np.array([[0, 0], [img.shape[1] - 1, 0], [img.shape[1] - 1, img.shape[0] - 1], [0, img.shape[0] - 1]], np.float32)
        M = cv2.getPerspectiveTransform(src, q)
        warped = cv2.warpPerspective(img, M, (W, H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                                     borderValue=(0, 0, 0, 0))
        a = warped[:, :, 3:4].astype(np.float32) / 255.0
        if rng.random() < 0.5:  # a drop shadow (a card lying on others, or a lamp)
            off = rng.normal(0, 2.0, 2)
            sh = cv2.GaussianBlur(a[:, :, 0], (0, 0), rng.uniform(1.0, 3.0))
            sh = np.roll(sh, (int(off[1]), int(off[0])), (0, 1))[:, :, None]
            canvas = canvas * (1 - rng.uniform(0.15, 0.45) * np.clip(sh - a, 0, 1))
        canvas = canvas * (1 - a) + warped[:, :, :3].astype(np.float32) * a
        owner[a[:, :, 0] > 0.5] = i
        full = np.zeros((H + 2 * W, W + 2 * W), np.uint8)  # the card's area, in frame or not
        cv2.fillConvexPoly(full, (q + W).astype(np.int32), 1)
        areas.append(max(1, int(full.sum())))
    if rng.random() < 0.25 and quads:
        _finger(rng, canvas, quads[int(rng.integers(len(quads)))])
    canvas = _light(rng, canvas) if rng.random() < 0.8 else canvas
    canvas = _colour(rng, canvas) if rng.random() < 0.8 else canvas
    r = rng.random()
    if r < 0.4:
        canvas = cv2.GaussianBlur(canvas, (0, 0), rng.uniform(0.3, 1.6))
    elif r < 0.55:
        canvas = motion_blur(rng, canvas, int(rng.integers(3, 7)))
    image = _sensor(rng, canvas) if rng.random() < 0.9 else np.clip(canvas + _noise(rng, canvas.shape, 2), 0, 255).astype(np.uint8)
    counts = np.bincount(owner[owner >= 0].ravel(), minlength=len(quads))
    cards = [SceneCard(q, float(counts[i]) / areas[i], _corners_shown(owner, q, i)) for i, q in enumerate(quads)]
    return image, cards, owner
