"""Camera-like training crops from clean card renders.

A scanner-clean render teaches a network little about a card seen from a metre away under a
kitchen lamp, so each sample is made the way the table pipeline will see it: the card is warped
(rotated, in perspective) onto a small patch of table texture at 55-130 px tall, dressed with a
finger, a hand's shadow, glare, uneven light and vignetting, given a colour cast and a wrong white
balance, blurred (defocus or motion), noised and JPEG-compressed, and only then cut back out with
a perspective warp whose corners are a few pixels off, as a real card finder's would be, in either
of the two portrait orientations (a card lies on the table either way up).

Everything is driven by one ``numpy.random.Generator`` so that a seed reproduces a data set.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.classifier import CANONICAL_SIZE

CANON_W, CANON_H = CANONICAL_SIZE


def _noise(rng: np.random.Generator, shape: tuple[int, ...], sigma: float) -> np.ndarray:
    """Gaussian noise via OpenCV's generator (numpy's is ~10x slower), seeded from ``rng``."""
    out = np.empty(shape, np.float32)
    cv2.setRNGSeed(int(rng.integers(0, 2**31 - 1)))
    cv2.randn(out, 0.0, float(sigma))  # type: ignore[call-overload]  # (OpenCV's stubs want Mat, an ndarray is one)
    return out


# --------------------------------------------------------------------------------------------
# table textures and procedural backs
# --------------------------------------------------------------------------------------------
def _random_colour(rng: np.random.Generator, light: bool | None = None) -> np.ndarray:
    hsv = np.array(
        [rng.uniform(0, 180), rng.uniform(0, 200), rng.uniform(20, 250) if light is None else
         (rng.uniform(150, 245) if light else rng.uniform(15, 110))],
        dtype=np.float32,
    )
    bgr = cv2.cvtColor(hsv.reshape(1, 1, 3).astype(np.uint8), cv2.COLOR_HSV2BGR)
    return bgr.reshape(3).astype(np.float32)


def table_texture(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A table surface: felt, wood grain, a plain light desk or a patterned cloth (float32 BGR)."""
    kind = rng.choice(["felt", "wood", "plain", "cloth", "white"], p=[0.25, 0.25, 0.2, 0.15, 0.15])
    if kind == "white":
        base = np.array([rng.uniform(190, 250)] * 3, np.float32) + rng.normal(0, 8, 3).astype(np.float32)
    elif kind == "felt":
        base = _random_colour(rng, light=False) if rng.random() < 0.7 else _random_colour(rng)
    else:
        base = _random_colour(rng)
    img = np.empty((h, w, 3), np.float32)
    img[:] = base
    if kind == "wood":
        y = np.arange(h, dtype=np.float32)[:, None]
        x = np.arange(w, dtype=np.float32)[None, :]
        ang = rng.uniform(0, math.pi)
        t = x * math.cos(ang) + y * math.sin(ang)
        freq = rng.uniform(0.05, 0.4)
        grain = np.sin(t * freq + 3 * np.sin(t * freq * 0.13 + rng.uniform(0, 6)))
        img *= (1 + 0.12 * grain)[:, :, None]
    elif kind == "cloth":
        period = rng.integers(3, 14)
        yy, xx = np.mgrid[0:h, 0:w]
        check = (((yy // period) + (xx // period)) % 2).astype(np.float32)
        other = _random_colour(rng)
        a = rng.uniform(0.1, 0.5)
        img = img * (1 - a * check[:, :, None]) + other * (a * check[:, :, None])
    noise_sigma = rng.uniform(2, 14)
    img += _noise(rng, (h, w, 1), noise_sigma)
    return img


def procedural_back(rng: np.random.Generator, h: int = 240, w: int = 172) -> np.ndarray:
    """A varied face-down design (BGRA uint8): border, lattice, stripes, dots or a plain field."""
    img = np.empty((h, w, 3), np.float32)
    c1, c2 = _random_colour(rng), _random_colour(rng)
    img[:] = c1
    kind = rng.integers(0, 5)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    p = rng.uniform(5, 22)
    if kind == 0:  # diagonal lattice
        m = ((np.floor((xx + yy) / p) + np.floor((xx - yy) / p)) % 2)[:, :, None]
    elif kind == 1:  # stripes
        ang = rng.uniform(0, math.pi)
        m = ((np.floor((xx * math.cos(ang) + yy * math.sin(ang)) / p)) % 2)[:, :, None]
    elif kind == 2:  # dots
        m = (((xx % p - p / 2) ** 2 + (yy % p - p / 2) ** 2) < (p / 3.5) ** 2)[:, :, None].astype(np.float32)
    elif kind == 3:  # concentric
        r = np.sqrt((xx - w / 2) ** 2 + (yy - h / 2) ** 2)
        m = (np.floor(r / p) % 2)[:, :, None]
    else:  # plain field with a fine noise texture
        m = (rng.random((h, w, 1)) < 0.3).astype(np.float32) * 0.3
    img = img * (1 - m) + c2 * m
    if rng.random() < 0.75:  # white margin like most commercial backs
        b = int(rng.uniform(0.03, 0.09) * w)
        margin = np.ones((h, w, 1), np.float32)
        margin[b:-b, b:-b] = 0
        img = img * (1 - margin) + np.float32(rng.uniform(215, 255)) * margin
    out = np.dstack([np.clip(img, 0, 255).astype(np.uint8), _rounded_alpha(h, w, int(0.06 * w))])
    return out


def _rounded_alpha(h: int, w: int, r: int) -> np.ndarray:
    a = np.full((h, w), 255, np.uint8)
    if r > 0:
        a[:r, :r] = a[:r, -r:] = a[-r:, :r] = a[-r:, -r:] = 0
        for cy, cx in ((r, r), (r, w - r - 1), (h - r - 1, r), (h - r - 1, w - r - 1)):
            cv2.circle(a, (cx, cy), r, 255, -1, lineType=cv2.LINE_AA)
    return a


# --------------------------------------------------------------------------------------------
# the sample
# --------------------------------------------------------------------------------------------
def _card_corners(w: int, h: int) -> np.ndarray:
    return np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)


def _target_quad(rng: np.random.Generator, w: int, h: int, height_px: float) -> np.ndarray:
    """Where the card's corners land in the scene: rotated, scaled, a little in perspective."""
    scale = height_px / h
    cw, ch = w * scale, h * scale
    pts = np.array([[-cw / 2, -ch / 2], [cw / 2, -ch / 2], [cw / 2, ch / 2], [-cw / 2, ch / 2]], np.float32)
    pts += rng.normal(0, 0.04 * ch, pts.shape).astype(np.float32)  # perspective / tilt
    ang = rng.uniform(0, 2 * math.pi)
    rot = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]], np.float32)
    return pts @ rot.T


def _finger(rng: np.random.Generator, canvas: np.ndarray, quad: np.ndarray) -> None:
    """Draw a finger (a skin-toned capsule) reaching over one edge of the card, never over both indices."""
    skin = np.array([rng.uniform(60, 200), rng.uniform(90, 210), rng.uniform(140, 255)], np.float32)
    skin *= rng.uniform(0.5, 1.0)
    i = rng.integers(0, 4)
    a, b = quad[i], quad[(i + 1) % 4]
    t = rng.uniform(0.3, 0.7)
    edge = a + (b - a) * t
    centre = quad.mean(axis=0)
    inward = (centre - edge) / (np.linalg.norm(centre - edge) + 1e-6)
    length = np.linalg.norm(quad[0] - quad[3]) * rng.uniform(0.15, 0.35)
    start = edge - inward * length * 1.5
    end = edge + inward * length
    width = max(3, int(np.linalg.norm(quad[0] - quad[1]) * rng.uniform(0.12, 0.22)))
    cv2.line(canvas, tuple(int(v) for v in start), tuple(int(v) for v in end), skin.tolist(), width, cv2.LINE_AA)
    cv2.circle(canvas, tuple(int(v) for v in end), width // 2, skin.tolist(), -1, cv2.LINE_AA)


def _light(rng: np.random.Generator, img: np.ndarray) -> np.ndarray:
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    field = np.ones((h, w), np.float32)
    if rng.random() < 0.7:  # uneven light: a linear gradient
        ang = rng.uniform(0, 2 * math.pi)
        g = (xx - w / 2) * math.cos(ang) + (yy - h / 2) * math.sin(ang)
        field *= 1 + rng.uniform(0, 0.5) * g / max(h, w)
    if rng.random() < 0.5:  # vignetting
        r2 = ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
        field *= 1 - rng.uniform(0, 0.45) * r2
    if rng.random() < 0.25:  # a hand's shadow: a big soft dark blob
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        rx, ry = rng.uniform(0.3, 0.8) * w, rng.uniform(0.3, 0.8) * h
        blob = np.exp(-(((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2) * 2)
        field *= 1 - rng.uniform(0.25, 0.6) * blob
    img = img * field[:, :, None]
    if rng.random() < 0.2:  # glare on a glossy card: a soft white highlight
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        rx, ry = rng.uniform(0.05, 0.25) * w, rng.uniform(0.05, 0.25) * h
        blob = np.exp(-(((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2))
        img = img + rng.uniform(60, 200) * blob[:, :, None]
    return img


def _colour(rng: np.random.Generator, img: np.ndarray) -> np.ndarray:
    # warm / cool cast and wrong white balance: per-channel gains
    temp = rng.normal(0, 0.12)
    gains = np.array([1 - temp, 1 + rng.normal(0, 0.04), 1 + temp], np.float32)
    gains *= rng.uniform(0.55, 1.25)  # exposure
    img = img * gains
    if rng.random() < 0.3:  # low contrast (haze, cheap lens)
        a = rng.uniform(0.45, 0.85)
        img = img * a + img.mean() * (1 - a)
    return img


def _blur(rng: np.random.Generator, img: np.ndarray, card_h: float) -> np.ndarray:
    r = rng.random()
    if r < 0.45:
        sigma = rng.uniform(0.3, 1.4) * card_h / 80
        img = cv2.GaussianBlur(img, (0, 0), sigma)
    elif r < 0.65:
        img = motion_blur(rng, img, int(rng.integers(3, 8)))
    return img


def motion_blur(rng: np.random.Generator, img: np.ndarray, k: int) -> np.ndarray:
    """A ``k``-pixel streak at a random angle: the camera or the card moved while exposing."""
    kern = np.zeros((k, k), np.float32)
    kern[k // 2, :] = 1
    m = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1)
    kern = np.asarray(cv2.warpAffine(kern, m, (k, k)), np.float32)
    kern /= max(kern.sum(), 1e-6)
    return cv2.filter2D(img, -1, kern)


def _sensor(rng: np.random.Generator, img: np.ndarray) -> np.ndarray:
    sigma = rng.uniform(0, 9)
    img = img + _noise(rng, img.shape, sigma)
    if rng.random() < 0.3:  # chroma noise at lower resolution
        h, w = img.shape[:2]
        low = rng.normal(0, rng.uniform(2, 6), (max(h // 4, 1), max(w // 4, 1), 3)).astype(np.float32)
        img = img + cv2.resize(low, (w, h))
    img = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < 0.7:
        q = int(rng.integers(25, 90))
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
        decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
        if decoded is not None:
            img = np.asarray(decoded)
    return img


def camera_crop(
    rng: np.random.Generator,
    card: np.ndarray,
    *,
    height_range: tuple[float, float] = (55, 130),
    strength: float = 1.0,
    partial: bool = False,
    cover: np.ndarray | None = None,
    shown: list[np.ndarray] | None = None,
) -> np.ndarray:
    """One camera-like canonical crop (CANON_H x CANON_W BGR uint8) of a BGRA ``card`` render.

    ``strength`` scales the chance of each nuisance (0 = a clean warp); ``partial`` makes a bad
    warp that covers only part of the card (used as a "not a card" example). ``cover`` (another
    card's BGRA render) lies on the card as in a row or a column of a spread hand, leaving a
    strip of :data:`COVER_SHOWS` of it with one corner index in sight; the crop is still the
    whole card's outline, as the detector gives it for a covered card; ``shown``, a list, is
    given the crop's mask of what shows of the card (True) beside the cover.
    """
    h0, w0 = card.shape[:2]
    if rng.random() < 0.15:
        height_px = rng.uniform(130, 240)  # close-up photos (identify on a still)
    else:
        height_px = rng.uniform(*height_range)
    quad = _target_quad(rng, w0, h0, height_px)
    margin = 0.12 * height_px + 4
    x0, y0 = quad.min(axis=0) - margin
    x1, y1 = quad.max(axis=0) + margin
    W, H = int(x1 - x0), int(y1 - y0)
    quad = quad - np.array([x0, y0], np.float32)

    bg = table_texture(rng, H, W)
    src = _card_corners(w0, h0)
    M = cv2.getPerspectiveTransform(src, quad)
    # pre-shrink big renders so warping does not alias (a camera integrates over a pixel)
    shrink = height_px / h0
    img = card
    if shrink < 0.5:
        f = min(1.0, 2 * shrink)
        img = cv2.resize(card, (max(8, int(w0 * f)), max(8, int(h0 * f))), interpolation=cv2.INTER_AREA)
        M = cv2.getPerspectiveTransform(_card_corners(img.shape[1], img.shape[0]), quad)
    warped = cv2.warpPerspective(img, M, (W, H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    alpha = warped[:, :, 3:4].astype(np.float32) / 255.0
    canvas = bg * (1 - alpha) + warped[:, :, :3].astype(np.float32) * alpha
    covered = None
    if cover is not None:
        canvas, covered = _lay_cover(rng, canvas, cover, img.shape[1], img.shape[0], M)
    if rng.random() < 0.35:  # soft drop shadow under the card edge
        sh = cv2.GaussianBlur(alpha, (0, 0), 2.0)
        if sh.ndim == 2:
            sh = sh[:, :, None]
        canvas = canvas * (1 - 0.25 * np.clip(np.roll(sh, (2, 2), (0, 1)) - alpha, 0, 1))

    p = strength
    if rng.random() < 0.2 * p:
        _finger(rng, canvas, quad)
    if rng.random() < 0.9 * p:
        canvas = _light(rng, canvas)
    if rng.random() < 0.9 * p:
        canvas = _colour(rng, canvas)
    if rng.random() < 0.7 * p:
        canvas = _blur(rng, canvas, height_px)
    if rng.random() < 0.15 * p:  # a low-resolution camera: downscale and back
        f = rng.uniform(0.5, 0.8)
        small = cv2.resize(canvas, (max(8, int(W * f)), max(8, int(H * f))), interpolation=cv2.INTER_AREA)
        canvas = cv2.resize(small, (W, H), interpolation=cv2.INTER_LINEAR)
    out = _sensor(rng, canvas) if rng.random() < 0.95 * p else np.clip(canvas, 0, 255).astype(np.uint8)

    # the finder's view: corners a few pixels off, either way up
    found = quad.copy()
    jitter = rng.uniform(0.005, 0.03) * height_px if rng.random() < 0.9 else 0.0
    found += rng.normal(0, jitter, found.shape).astype(np.float32)
    if partial:
        k = rng.integers(0, 4)
        f = rng.uniform(0.3, 0.6)
        found = found[k] + (found - found[k]) * f  # a sub-quad at one corner: a partial warp
    if rng.random() < 0.5:
        found = np.roll(found, 2, axis=0)
    dst = _card_corners(CANON_W, CANON_H)
    Mb = cv2.getPerspectiveTransform(found.astype(np.float32), dst)
    flags = cv2.INTER_AREA if height_px > CANON_H * 1.5 else cv2.INTER_LINEAR
    if shown is not None and covered is not None:
        shown.append(cv2.warpPerspective(covered, Mb, (CANON_W, CANON_H), flags=flags, borderMode=cv2.BORDER_REPLICATE) < 0.5)
    return cv2.warpPerspective(out, Mb, (CANON_W, CANON_H), flags=flags, borderMode=cv2.BORDER_REPLICATE)


#: How much of a covered card shows beside the card lying on it (a share of its width or height).
COVER_SHOWS = (0.25, 0.6)


def covered_crop(rng: np.random.Generator, card: np.ndarray, cover: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A camera-like crop of ``card`` with ``cover`` lying on most of it (:func:`camera_crop`),
    and the crop's mask of what shows of the card (True): what ``identify`` completes."""
    shown: list[np.ndarray] = []
    crop = camera_crop(rng, card, cover=cover, shown=shown)
    return crop, shown[0]


def _lay_cover(rng: np.random.Generator, canvas: np.ndarray, cover: np.ndarray, w: int, h: int,
               M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``canvas`` with ``cover`` lying on the card that ``M`` put there (its ``w``×``h`` render
    coordinates): the same size, shifted along the card's width or height so that a strip of
    :data:`COVER_SHOWS` shows on one side, turned a few degrees (a fan), with an edge shadow; and
    the cover's alpha (H×W, 0..1)."""
    shows = rng.uniform(*COVER_SHOWS)
    side = int(rng.integers(4))  # the strip shows at the left, right, top or bottom
    shift = np.array([[shows * w, 0], [-shows * w, 0], [0, shows * h], [0, -shows * h]], np.float32)[side]
    corners = _card_corners(w, h) + shift
    ang = math.radians(rng.normal(0, 4))
    centre = corners.mean(axis=0)
    rot = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]], np.float32)
    corners = (corners - centre) @ rot.T + centre
    where = cv2.perspectiveTransform(corners[None], M)[0]
    img = cv2.resize(cover, (w, h), interpolation=cv2.INTER_AREA)
    H, W = canvas.shape[:2]
    warped = cv2.warpPerspective(img, cv2.getPerspectiveTransform(_card_corners(w, h), where), (W, H),
                                 flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    alpha = warped[:, :, 3:4].astype(np.float32) / 255.0
    shadow = np.roll(cv2.GaussianBlur(alpha[:, :, 0], (0, 0), 1.5), (1, 1), (0, 1))[:, :, None]
    canvas = canvas * (1 - rng.uniform(0.1, 0.35) * np.clip(shadow - alpha, 0, 1))
    return canvas * (1 - alpha) + warped[:, :, :3].astype(np.float32) * alpha, alpha[:, :, 0]


def not_a_card(rng: np.random.Generator) -> np.ndarray:
    """A canonical crop of bare table (optionally with a finger or shadow): the open-set negative."""
    H, W = CANON_H + 40, CANON_W + 40
    canvas = table_texture(rng, H, W)
    if rng.random() < 0.3:
        quad = _target_quad(rng, 60, 84, 80) + np.array([W / 2, H / 2], np.float32)
        _finger(rng, canvas, quad)
    canvas = _light(rng, canvas)
    canvas = _colour(rng, canvas)
    out = _sensor(rng, canvas)
    x, y = int(rng.integers(0, 40)), int(rng.integers(0, 40))
    return out[y : y + CANON_H, x : x + CANON_W].copy()


def _apart(a: np.ndarray, b: np.ndarray, gap: float = 6.0) -> bool:
    """True if convex quads ``a`` and ``b`` are at least ``gap`` px apart (separating axis test)."""
    for quad in (a, b):
        for i in range(4):
            e = quad[(i + 1) % 4] - quad[i]
            nrm = np.array([-e[1], e[0]], np.float32) / (np.linalg.norm(e) + 1e-6)
            pa, pb = a @ nrm, b @ nrm
            if pa.max() + gap < pb.min() or pb.max() + gap < pa.min():
                return True
    return False


def table_photo(
    rng: np.random.Generator,
    cards: list[np.ndarray],
    *,
    size: tuple[int, int] = (800, 600),
    card_height: tuple[float, float] = (140, 220),
    light_table: bool | None = None,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """A photo-like still of ``cards`` (BGRA renders) lying apart on a table, any rotation.

    Returns the BGR image and each card's corner quad (4×2, image pixels, in the render's
    top-left, top-right, bottom-right, bottom-left order). Used for the finder's tests, the
    committed fixtures and the benchmark.
    """
    W, H = size
    if light_table is None:
        bg = table_texture(rng, H, W)
    else:
        bg = np.empty((H, W, 3), np.float32)
        bg[:] = _random_colour(rng, light=light_table)
        bg += _noise(rng, (H, W, 1), 3)
    canvas = bg
    quads: list[np.ndarray] = []
    n = len(cards)
    for i, card in enumerate(cards):
        h0, w0 = card.shape[:2]
        for _attempt in range(50):  # cards lie apart (the finder does not split touching cards)
            ch = rng.uniform(*card_height)
            q = _target_quad(rng, w0, h0, ch)
            cx = (i + 0.5) * W / n + rng.uniform(-0.08, 0.08) * W / n
            cy = H / 2 + rng.uniform(-0.12, 0.12) * H
            q = q + np.array([cx, cy], np.float32)
            # keep the whole card in the frame with a margin (a cut-off card is not "on the table")
            lo, hi = q.min(axis=0), q.max(axis=0)
            q += np.maximum(0, 10 - lo) - np.maximum(0, hi - np.array([W - 11, H - 11], np.float32))
            if all(_apart(q, other) for other in quads):
                break
        M = cv2.getPerspectiveTransform(_card_corners(w0, h0), q)
        warped = cv2.warpPerspective(card, M, (W, H), flags=cv2.INTER_AREA)
        a = warped[:, :, 3:4].astype(np.float32) / 255.0
        canvas = canvas * (1 - a) + warped[:, :, :3].astype(np.float32) * a
        quads.append(q)
    canvas = _light(rng, canvas) if rng.random() < 0.8 else canvas
    canvas = _colour(rng, canvas) if rng.random() < 0.8 else canvas
    canvas = cv2.GaussianBlur(canvas, (0, 0), rng.uniform(0.3, 1.0))
    canvas = canvas + _noise(rng, canvas.shape, rng.uniform(1, 4))
    return np.clip(canvas, 0, 255).astype(np.uint8), quads
