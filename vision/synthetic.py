"""A seeded virtual card table: cloth or wood, ArUco markers, real deck artwork, hands and shadows.

The same renderer drives the demo, the tests and the benchmark, so it is built to be *unkind*:
perspective from a tilted camera, uneven lighting, sensor noise that changes every frame, cards
60–100 px tall in 1280×720, light and dark tables, hands (with shadows) that reach over zones and
slide cards into place. Everything is deterministic for a seed: the scene is drawn from
``numpy.random.default_rng(seed)`` and each frame's noise from ``(seed, frame_index)``.

:class:`SyntheticTable` renders one frame from a list of :class:`PlacedCard` and an optional
:class:`HandPose`; :func:`night` scripts whole deals (turn-up, stock, tricks, gathering) and yields
frames with the ground truth the benchmark checks events against.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np

from vision.event_types import STOCK, ZoneId
from vision.geometry import CARD_MM, Calibration, TableLayout
from vision.labels import BACK, FACES

#: The deck committed with the project (CC0 art; see its NOTICE).
DEFAULT_DECK = Path(__file__).resolve().parent / "assets" / "decks" / "heruka-2color"
ARUCO_DICT = cv2.aruco.DICT_4X4_50
MARKER_MM = 50.0  # printed marker side (black square), centred on the table-frame corners


_DECKS: dict[tuple[str, int], dict[str, np.ndarray]] = {}


def load_deck(path: str | Path = DEFAULT_DECK) -> dict[str, np.ndarray]:
    """``{"AS": BGRA image, ..., "back": ...}`` from a folder of ``<card>.png`` (53 files).

    Any rendered deck works if it uses the project's notation for file names; a missing face is
    an error (a deck with holes would silently bias the benchmark). Decks are cached per folder
    until a file in it changes (a night builds a table per deal).
    """
    folder = Path(path)
    try:
        stamp = max(p.stat().st_mtime_ns for p in folder.glob("*.png")) + len(list(folder.glob("*.png")))
    except ValueError:
        stamp = -1
    key = (str(folder.resolve()), stamp)
    if key in _DECKS:
        return _DECKS[key]
    deck: dict[str, np.ndarray] = {}
    for name in (*FACES, BACK):
        img = cv2.imread(str(folder / f"{name}.png"), cv2.IMREAD_UNCHANGED)
        if img is None:
            raise FileNotFoundError(f"{folder}: missing or unreadable {name}.png")
        if img.ndim == 2:
            img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGRA)
        elif img.shape[2] == 3:
            img = cv2.cvtColor(img, cv2.COLOR_BGR2BGRA)
        deck[name] = img
    _DECKS.clear()
    _DECKS[key] = deck
    return deck


@dataclass(frozen=True)
class PlacedCard:
    """A card lying on (or held just above) the table, centre and angle in table millimetres."""

    card: str  # a face ("QH") or "back"
    x: float
    y: float
    angle: float = 0.0  # degrees, 0 = upright portrait


@dataclass(frozen=True)
class HandPose:
    """A hand over the table: palm centre (mm), the direction the arm comes from (degrees, the
    direction *towards* the player), and how high it is (mm; sets the shadow offset)."""

    x: float
    y: float
    arm_angle: float
    height: float = 80.0
    spread: float = 1.0  # 1 = open hand, smaller = fist-like


@dataclass(frozen=True)
class Style:
    """What a scene looks like; drawn once per seed."""

    texture: str  # "cloth" or "wood"
    base_bgr: tuple[int, int, int]
    dark: bool
    light_gain: float
    light_dir: float
    vignette: float
    noise_sigma: float
    skin_bgr: tuple[int, int, int]
    sleeve_bgr: tuple[int, int, int]
    blur: float


DARK_CLOTHS = [(40, 95, 30), (90, 55, 25), (35, 35, 110), (45, 45, 45), (70, 60, 20)]
LIGHT_CLOTHS = [(185, 200, 210), (200, 205, 200), (150, 180, 195), (205, 215, 225)]
DARK_WOODS = [(30, 55, 95), (25, 45, 75)]
LIGHT_WOODS = [(110, 160, 205), (95, 145, 190)]
SKINS = [(150, 180, 225), (120, 150, 200), (80, 110, 160), (60, 80, 120), (170, 190, 230)]


def _style(rng: np.random.Generator, texture: str | None, dark: bool | None) -> Style:
    tex = texture or ("wood" if rng.random() < 0.35 else "cloth")
    is_dark = bool(rng.random() < 0.6) if dark is None else dark
    palette = {("cloth", True): DARK_CLOTHS, ("cloth", False): LIGHT_CLOTHS,
               ("wood", True): DARK_WOODS, ("wood", False): LIGHT_WOODS}[(tex, is_dark)]
    base = palette[int(rng.integers(len(palette)))]
    jitter = rng.integers(-12, 13, size=3)
    base_bgr = tuple(int(np.clip(c + j, 0, 255)) for c, j in zip(base, jitter, strict=True))
    skin = SKINS[int(rng.integers(len(SKINS)))]
    sleeve = tuple(int(v) for v in rng.integers(20, 200, size=3))
    return Style(
        texture=tex, base_bgr=base_bgr, dark=is_dark,  # type: ignore[arg-type]
        light_gain=float(rng.uniform(0.8, 1.1)), light_dir=float(rng.uniform(0, 2 * math.pi)),
        vignette=float(rng.uniform(0.1, 0.3)), noise_sigma=float(rng.uniform(2.0, 5.0)),
        skin_bgr=skin, sleeve_bgr=sleeve, blur=float(rng.uniform(0.4, 0.9)),  # type: ignore[arg-type]
    )


def _noise_field(rng: np.random.Generator, shape: tuple[int, int], cells: int) -> np.ndarray:
    """Smooth noise in -1..1: random cells upscaled (cheap stand-in for Perlin noise)."""
    h, w = shape
    small = rng.uniform(-1, 1, size=(max(2, h // cells), max(2, w // cells))).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def _camera_homography(rng: np.random.Generator, table_mm: tuple[float, float],
                       size: tuple[int, int], tilt_deg: float | None) -> np.ndarray:
    """Table mm → image px for a pinhole camera above the table, tilted and turned a little,
    then scaled so the marker frame (plus a margin) fills most of the frame height."""
    tw, th = table_mm
    tilt = math.radians(rng.uniform(0, 18) if tilt_deg is None else tilt_deg)
    yaw = math.radians(rng.uniform(-6, 6))
    roll = math.radians(rng.uniform(-4, 4))
    cx, cy = tw / 2, th / 2
    ca, sa = math.cos(yaw), math.sin(yaw)
    rz = np.array([[ca, -sa, 0], [sa, ca, 0], [0, 0, 1]])
    ct, st = math.cos(tilt), math.sin(tilt)
    rx = np.array([[1, 0, 0], [0, ct, -st], [0, st, ct]])
    cr, sr = math.cos(roll), math.sin(roll)
    ry = np.array([[cr, 0, sr], [0, 1, 0], [-sr, 0, cr]])
    r = rx @ ry @ rz
    dist = 1400.0
    # world point (x-cx, y-cy, 0) -> camera r @ p + t, with the table centre on the optical axis
    t = np.array([0.0, 0.0, dist])
    m = np.column_stack([r[:, 0], r[:, 1], t]) @ np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1]])
    m = m / m[2, 2]
    margin = 55.0
    frame = np.array([[-margin, -margin], [tw + margin, -margin], [tw + margin, th + margin],
                      [-margin, th + margin]], dtype=np.float64)
    pts = cv2.perspectiveTransform(frame.reshape(-1, 1, 2), m).reshape(-1, 2)
    w, h = size
    span = pts.max(axis=0) - pts.min(axis=0)
    scale = min(w * 0.96 / span[0], h * 0.98 / span[1])
    centre = (pts.max(axis=0) + pts.min(axis=0)) / 2
    fit = np.array([[scale, 0, w / 2 - scale * centre[0]], [0, scale, h / 2 - scale * centre[1]], [0, 0, 1]])
    hom = fit @ m
    normalised: np.ndarray = hom / hom[2, 2]
    return normalised


class SyntheticTable:
    """One camera's view of one table, deterministic for ``seed``.

    ``layout`` defaults to :meth:`TableLayout.default` for ``seats``; ``calibration`` is the true
    table→image homography (what a perfect ``loo-table calibrate`` would find).
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        seats: int = 4,
        size: tuple[int, int] = (1280, 720),
        texture: str | None = None,
        dark: bool | None = None,
        deck: str | Path | None = None,
        layout: TableLayout | None = None,
        tilt_deg: float | None = None,
        noise: bool = True,
    ) -> None:
        self.seed = int(seed)
        self.size = (int(size[0]), int(size[1]))
        rng = np.random.default_rng(self.seed)
        self.layout = layout or TableLayout.default(seats)
        self.style = _style(rng, texture, dark)
        self.deck = load_deck(str(deck) if deck is not None else str(DEFAULT_DECK))
        table_mm = (self.layout.width_mm, self.layout.height_mm)
        hom = _camera_homography(rng, table_mm, self.size, tilt_deg)
        self.calibration = Calibration(hom, self.size, table_mm, method="synthetic")
        self.noise = noise
        self._rng_seed = rng.integers(0, 2**31)
        self._background = self._render_background(rng)
        self._light = self._render_light()
        self._light_q = cv2.resize(self._light, (self.size[0] // 4, self.size[1] // 4), interpolation=cv2.INTER_AREA)
        self._background = self._apply_light(self._background, (0, 0, self.size[0], self.size[1]))
        self._noise_fields = self._make_noise(rng) if noise else []
        # pre-scale the artwork to about 1.5× its on-screen height: warpPerspective has no area filter
        target = 1.5 * self.calibration.card_height_px((table_mm[0] / 2, table_mm[1] / 2))
        self._art = {k: cv2.resize(v, (max(8, round(v.shape[1] * target / v.shape[0])), round(target)),
                                   interpolation=cv2.INTER_AREA) for k, v in self.deck.items()}

    # -- scene set-up ------------------------------------------------------------------------
    def _render_background(self, rng: np.random.Generator) -> np.ndarray:
        """Texture drawn in the table plane (1 px/mm, just covering the camera's view) and warped once."""
        tw, th = self.layout.width_mm, self.layout.height_mm
        w, h = self.size
        seen = self.calibration.to_table([[0, 0], [w, 0], [w, h], [0, h]])
        pad = int(math.ceil(max(10.0, -seen[:, 0].min(), -seen[:, 1].min(),
                                seen[:, 0].max() - tw, seen[:, 1].max() - th))) + 10
        W, H = int(tw + 2 * pad), int(th + 2 * pad)
        base = np.array(self.style.base_bgr, dtype=np.float32)
        if self.style.texture == "wood":
            warp = _noise_field(rng, (H, W), 90) * 25
            yy = np.arange(H, dtype=np.float32)[:, None] + warp
            period = float(rng.uniform(9, 16))
            grain = 0.5 + 0.5 * np.sin(2 * math.pi * yy / period) ** 3
            plank = (np.floor(np.arange(W) / rng.uniform(110, 160)) % 3)[None, :] * 0.04
            shade = 0.85 + 0.18 * grain + plank + _noise_field(rng, (H, W), 6) * 0.05
        else:
            shade = (1.0 + _noise_field(rng, (H, W), 40) * 0.06 + _noise_field(rng, (H, W), 3) * 0.05
                     + rng.normal(0, 0.035, size=(H, W)).astype(np.float32))
        tex = np.clip(shade[:, :, None] * base[None, None, :], 0, 255).astype(np.uint8)
        # printed ArUco markers (white paper square with the black marker), ids 0..3 clockwise
        dictionary = cv2.aruco.getPredefinedDictionary(ARUCO_DICT)
        side = int(MARKER_MM)
        for marker_id, (mx, my) in enumerate([(0, 0), (tw, 0), (tw, th), (0, th)]):
            marker = cv2.aruco.generateImageMarker(dictionary, marker_id, side)
            paper = int(MARKER_MM * 1.6)
            x0, y0 = int(round(mx + pad - paper / 2)), int(round(my + pad - paper / 2))
            tex[y0:y0 + paper, x0:x0 + paper] = (235, 238, 240)
            mx0, my0 = int(round(mx + pad - side / 2)), int(round(my + pad - side / 2))
            tex[my0:my0 + side, mx0:mx0 + side] = cv2.cvtColor(marker, cv2.COLOR_GRAY2BGR)
        shift = np.array([[1, 0, pad], [0, 1, pad], [0, 0, 1]], dtype=np.float64)
        hom = self.calibration.table_to_image @ np.linalg.inv(shift)
        texture: np.ndarray = cv2.warpPerspective(tex, hom, self.size, flags=cv2.INTER_LINEAR,
                                                  borderMode=cv2.BORDER_REFLECT)
        return texture

    def _render_light(self) -> np.ndarray:
        w, h = self.size
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        nx, ny = (xx - w / 2) / (w / 2), (yy - h / 2) / (h / 2)
        d = self.style.light_dir
        ramp = 1 + 0.18 * (nx * math.cos(d) + ny * math.sin(d))
        vig = 1 - self.style.vignette * (nx**2 + ny**2) / 2
        light: np.ndarray = (self.style.light_gain * ramp * vig).astype(np.float32)
        return light

    def _apply_light(self, img: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
        x0, y0, x1, y1 = box
        lit: np.ndarray = np.clip(img.astype(np.float32) * self._light[y0:y1, x0:x1, None], 0, 255)
        return lit.astype(np.uint8)

    def _make_noise(self, rng: np.random.Generator) -> list[np.ndarray]:
        """One int16 noise field 64 px larger than the frame; each frame adds a window of it at
        an offset drawn from its index (temporal noise without 2.7 M random numbers a frame)."""
        w, h = self.size
        f = np.zeros((h + 64, w + 64, 3), dtype=np.int16)
        cv2.setRNGSeed(int(rng.integers(0, 2**31 - 1)))  # cv2.randn draws from OpenCV's own generator
        cv2.randn(f, 0, self.style.noise_sigma)  # type: ignore[call-overload]  # stubs: float arrays only
        return [f]

    # -- drawing -----------------------------------------------------------------------------
    def card_quad(self, card: PlacedCard, lift_mm: float = 0.0) -> np.ndarray:
        """Image corners (clockwise from the card's top left) of a placed card."""
        w, h = CARD_MM
        a = math.radians(card.angle)
        ca, sa = math.cos(a), math.sin(a)
        local = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
        pts = local @ np.array([[ca, sa], [-sa, ca]]) + [card.x, card.y]
        quad = self.calibration.to_image(pts)
        if lift_mm:
            c = quad.mean(axis=0)
            quad = c + (quad - c) * (1 + lift_mm / 1400.0)
        return quad

    def _draw_card(self, frame: np.ndarray, card: PlacedCard, lift_mm: float = 0.0) -> None:
        art = self._art[card.card]
        quad = self.card_quad(card, lift_mm).astype(np.float32)
        x0, y0 = np.floor(quad.min(axis=0)).astype(int) - 2
        x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 2
        W, H = self.size
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, W), min(y1, H)
        if x1 <= x0 or y1 <= y0:
            return
        ah, aw = art.shape[:2]
        src = np.array([[0, 0], [aw - 1, 0], [aw - 1, ah - 1], [0, ah - 1]], dtype=np.float32)
        m = cv2.getPerspectiveTransform(src, quad - np.array([x0, y0], dtype=np.float32))
        patch = cv2.warpPerspective(art, m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                    borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
        if self.style.blur > 0:
            patch = cv2.GaussianBlur(patch, (0, 0), self.style.blur)
        alpha = patch[:, :, 3:4].astype(np.float32) / 255.0
        lit = patch[:, :, :3].astype(np.float32) * self._light[y0:y1, x0:x1, None]
        roi = frame[y0:y1, x0:x1].astype(np.float32)
        # a thin contact shadow: the cloth just outside the card edge is a touch darker
        frame[y0:y1, x0:x1] = np.clip(lit * alpha + roi * (1 - alpha), 0, 255).astype(np.uint8)

    def _hand_masks(self, hand: HandPose, held: PlacedCard | None) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
        """Masks (hand, shadow) at quarter resolution, and the shadow offset in full pixels."""
        W, H = self.size
        q = 4
        palm = self.calibration.to_image([[hand.x, hand.y]])[0]
        a = math.radians(hand.arm_angle)
        ux, uy = math.cos(a), math.sin(a)
        # arm direction in image space
        tip = self.calibration.to_image([[hand.x + ux * 100, hand.y + uy * 100]])[0]
        d = tip - palm
        d = d / max(float(np.linalg.norm(d)), 1e-6)
        n = np.array([-d[1], d[0]])
        s = self.calibration.card_height_px((hand.x, hand.y)) / 88.0  # px per mm here
        mask = np.zeros((H // q, W // q), dtype=np.uint8)
        p = palm / q
        pw, ph = 45 * s / q, 55 * s / q
        ang = math.degrees(math.atan2(d[1], d[0]))
        cv2.ellipse(mask, (int(p[0]), int(p[1])), (int(ph), int(pw)), ang, 0, 360, 255, -1)
        # fingers, pointing away from the arm
        for k in (-1.5, -0.5, 0.5, 1.5):
            base = p - d * ph * 0.7 + n * k * pw * 0.45 * hand.spread
            tipf = base - d * 55 * s / q * hand.spread + n * k * 6 * s / q * hand.spread
            cv2.line(mask, (int(base[0]), int(base[1])), (int(tipf[0]), int(tipf[1])), 255,
                     max(1, int(14 * s / q)))
        thumb0 = p + n * pw * 0.8
        thumb1 = thumb0 + n * 35 * s / q - d * 25 * s / q
        cv2.line(mask, (int(thumb0[0]), int(thumb0[1])), (int(thumb1[0]), int(thumb1[1])), 255,
                 max(1, int(15 * s / q)))
        arm_end = p + d * 2000 / q
        cv2.line(mask, (int(p[0]), int(p[1])), (int(arm_end[0]), int(arm_end[1])), 255, max(1, int(70 * s / q)))
        off = (int(hand.height * 0.35 * s), int(hand.height * 0.5 * s))
        shadow = cv2.GaussianBlur(mask, (0, 0), max(1.0, hand.height * s / q / 10))
        return mask, shadow, off

    def _draw_hand(self, frame: np.ndarray, hand: HandPose, held: PlacedCard | None) -> None:
        """Shadow, then the held card, then the hand; everything is shaped at quarter resolution
        and only the hand's bounding box is brought up to full size (an arm crosses half the
        frame, so full-frame float work would cost more than the whole pipeline)."""
        W, H = self.size
        q = 4
        mask_q, shadow_q, (ox, oy) = self._hand_masks(hand, held)
        hq, wq = mask_q.shape
        shift = np.array([[1, 0, ox / q], [0, 1, oy / q]], dtype=np.float32)
        shadow_q = cv2.warpAffine(shadow_q, shift, (wq, hq))
        box = _bbox(shadow_q)
        if box is not None:
            x0, y0, x1, y1 = box
            up = cv2.resize(shadow_q[y0:y1, x0:x1], ((x1 - x0) * q, (y1 - y0) * q), interpolation=cv2.INTER_LINEAR)
            fx0, fy0 = x0 * q, y0 * q
            fx1, fy1 = min(W, fx0 + up.shape[1]), min(H, fy0 + up.shape[0])
            keep = 255 - (up[: fy1 - fy0, : fx1 - fx0].astype(np.uint16) * 115 // 255).astype(np.uint8)
            roi = frame[fy0:fy1, fx0:fx1]
            frame[fy0:fy1, fx0:fx1] = cv2.multiply(roi, cv2.merge([keep, keep, keep]), scale=1 / 255)
        if held is not None:
            self._draw_card(frame, held, lift_mm=hand.height * 0.5)
        alpha_q = cv2.GaussianBlur(mask_q, (3, 3), 0.8)
        box = _bbox(alpha_q)
        if box is None:
            return
        x0, y0, x1, y1 = box
        palm = self.calibration.to_image([[hand.x, hand.y]])[0] / q
        yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
        dist = np.hypot(xx - palm[0], yy - palm[1]) * q
        sleeve = (dist > 110)[:, :, None]
        colour = np.where(sleeve, np.array(self.style.sleeve_bgr, np.float32), np.array(self.style.skin_bgr, np.float32))
        light_q = self._light_q[y0:y1, x0:x1, None]
        skin_q = np.clip(colour * (0.85 + 0.15 * np.cos(dist / 25.0))[:, :, None] * light_q, 0, 255).astype(np.uint8)
        size = ((x1 - x0) * q, (y1 - y0) * q)
        skin = cv2.resize(skin_q, size, interpolation=cv2.INTER_LINEAR)
        alpha = cv2.resize(alpha_q[y0:y1, x0:x1], size, interpolation=cv2.INTER_LINEAR).astype(np.float32) / 255.0
        fx0, fy0 = x0 * q, y0 * q
        fx1, fy1 = min(W, fx0 + size[0]), min(H, fy0 + size[1])
        a = alpha[: fy1 - fy0, : fx1 - fx0]
        roi = frame[fy0:fy1, fx0:fx1]
        frame[fy0:fy1, fx0:fx1] = cv2.blendLinear(skin[: fy1 - fy0, : fx1 - fx0], roi, a, 1.0 - a)

    def render(self, cards: Sequence[PlacedCard] = (), *, hand: HandPose | None = None,
               held: PlacedCard | None = None, frame_index: int = 0,
               shadow: tuple[float, float, float] | None = None) -> np.ndarray:
        """One BGR frame: the table, ``cards`` in order (later ones on top), then the hand (and a
        card it holds, drawn above the table), then sensor noise for ``frame_index``.

        ``shadow`` = ``(x_mm, y_mm, radius_mm)`` adds a soft shadow (a head or a lamp arm)."""
        frame = self._background.copy()
        for card in cards:
            self._draw_card(frame, card)
        if shadow is not None:
            sx, sy, sr = shadow
            c = self.calibration.to_image([[sx, sy]])[0]
            r = sr * self.calibration.card_height_px((sx, sy)) / 88.0
            W, H = self.size
            x0, y0 = max(0, int(c[0] - 2 * r)), max(0, int(c[1] - 2 * r))
            x1, y1 = min(W, int(c[0] + 2 * r)), min(H, int(c[1] + 2 * r))
            if x1 > x0 and y1 > y0:
                yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
                dd = np.hypot(xx - c[0], yy - c[1]) / r
                k = (0.4 * np.clip(1.5 - dd, 0, 1))[:, :, None]
                frame[y0:y1, x0:x1] = (frame[y0:y1, x0:x1].astype(np.float32) * (1 - k)).astype(np.uint8)
        if hand is not None:
            self._draw_hand(frame, hand, held)
        elif held is not None:
            self._draw_card(frame, held, lift_mm=40)
        if self.noise:
            rng = np.random.default_rng((self.seed, frame_index))
            dx, dy = (int(v) for v in rng.integers(0, 64, size=2))
            h, w = frame.shape[:2]
            frame = cv2.add(frame, self._noise_fields[0][dy:dy + h, dx:dx + w], dtype=cv2.CV_8U)
        return frame


def _bbox(mask: np.ndarray) -> tuple[int, int, int, int] | None:
    """Bounding box (x0, y0, x1, y1) of the non-zero pixels, or None."""
    pts = cv2.findNonZero(mask)
    if pts is None:
        return None
    x, y, w, h = cv2.boundingRect(pts)
    return x, y, x + w, y + h


# -- scripted nights ------------------------------------------------------------------------
@dataclass
class Truth:
    """Ground truth for one frame: ``placed`` lists (zone, card) that came to rest in this frame."""

    deal: int
    frame_index: int
    timestamp: float
    resting: dict[str, list[str]] = field(default_factory=dict)  # zone -> cards lying there
    came_to_rest: list[tuple[str, str]] = field(default_factory=list)
    new_deal: bool = False


@dataclass
class NightFrame:
    image: np.ndarray
    truth: Truth
    table: SyntheticTable


def _seat_dir(table: SyntheticTable, zone_name: str) -> float:
    """Angle (degrees) from the table centre towards a zone: where that player sits."""
    z = table.layout.zone(zone_name)
    cx, cy = table.layout.width_mm / 2, table.layout.height_mm / 2
    zx, zy = z.center
    return math.degrees(math.atan2(zy - cy, zx - cx))


def night(*, seed: int = 0, deals: int = 200, seats: int = 5, fps: float = 15.0,
          tricks: int = 3, deck: str | Path | None = None, size: tuple[int, int] = (1280, 720),
          start_deal: int = 0) -> Iterator[NightFrame]:
    """A seeded game night: every deal on a freshly drawn table (cloth or wood, light or dark,
    new camera pose), the turn-up and the stock placed, ``tricks`` tricks of ``seats`` plays,
    each trick gathered by a sweeping hand. Hands reach over other zones and shadows pass.

    ``deals`` and ``start_deal`` let the benchmark split a night into chunks that still add up
    to the same seeded night.
    """
    frame_no = 0
    for deal in range(start_deal, start_deal + deals):
        rng = np.random.default_rng((seed, deal))
        table = SyntheticTable(seed=int(rng.integers(2**31)), seats=seats, size=size, deck=deck)
        yield from _deal_frames(table, rng, deal, fps, tricks, frame_no)
        frame_no += 100_000


def _deal_frames(table: SyntheticTable, rng: np.random.Generator, deal: int, fps: float,
                 tricks: int, frame_base: int) -> Iterator[NightFrame]:
    seats = len(table.layout.seats)
    order = list(FACES)
    rng.shuffle(order)
    resting: list[tuple[str, PlacedCard]] = []
    state = {"i": 0}
    first = [True]

    def emit(hand: HandPose | None = None, held: PlacedCard | None = None,
             rest: list[tuple[str, str]] | None = None, shadow: tuple[float, float, float] | None = None
             ) -> NightFrame:
        i = state["i"]
        state["i"] += 1
        by_zone: dict[str, list[str]] = {}
        for zname, c in resting:
            by_zone.setdefault(zname, []).append(c.card)
        img = table.render([c for _, c in resting], hand=hand, held=held, frame_index=frame_base + i,
                           shadow=shadow)
        truth = Truth(deal, i, i / fps, by_zone, list(rest or []), new_deal=first[0])
        first[0] = False
        return NightFrame(img, truth, table)

    def jitter_in(zname: str, spread: float = 14.0) -> tuple[float, float, float]:
        z = table.layout.zone(zname)
        cx, cy = z.center
        return (cx + float(rng.uniform(-spread, spread)), cy + float(rng.uniform(-spread, spread)),
                float(rng.uniform(-25, 25)))

    def place(zname: str, card: str, rest_frames: int) -> Iterator[NightFrame]:
        """A hand comes from the player's side holding the card, slides it into place, leaves."""
        tx, ty, ta = jitter_in(zname)
        ang = _seat_dir(table, zname)
        ux, uy = math.cos(math.radians(ang)), math.sin(math.radians(ang))
        steps_in = int(rng.integers(4, 8))
        for k in range(steps_in):  # carried above the table
            f = (k + 1) / steps_in
            d = (1 - f) * 260 + 40
            held = PlacedCard(card, tx + ux * d, ty + uy * d, ta + (1 - f) * 30)
            yield emit(HandPose(held.x + ux * 45, held.y + uy * 45, ang, height=60 + 40 * (1 - f)), held)
        slide = int(rng.integers(1, 4))
        for k in range(slide):  # the card touches down and slides the last few millimetres
            d = 40 * (1 - (k + 1) / (slide + 1))
            held = PlacedCard(card, tx + ux * d, ty + uy * d, ta)
            yield emit(HandPose(held.x + ux * 45, held.y + uy * 45, ang, height=20), held)
        resting.append((zname, PlacedCard(card, tx, ty, ta)))
        out = int(rng.integers(3, 6))
        for k in range(out):
            d = 60 + 80 * (k + 1)
            rest = [(zname, card)] if k == 0 else None
            yield emit(HandPose(tx + ux * d, ty + uy * d, ang, height=50 + 10 * k), rest=rest)
        for _ in range(rest_frames):
            yield emit()

    def reach_over(zname: str, frames: int) -> Iterator[NightFrame]:
        """Someone reaches over a zone (to point, to pick up a glass) and withdraws."""
        other = str(ZoneId.of_seat(int(rng.integers(seats))))
        ang = _seat_dir(table, other)
        z = table.layout.zone(zname)
        cx, cy = z.center
        for k in range(frames):
            f = 1 - abs(2 * (k + 0.5) / frames - 1)
            d = 320 * (1 - f)
            yield emit(HandPose(cx + math.cos(math.radians(ang)) * d, cy + math.sin(math.radians(ang)) * d,
                                ang, height=float(rng.uniform(40, 120))))

    def gather(winner: int) -> Iterator[NightFrame]:
        ang = _seat_dir(table, str(ZoneId.of_seat(winner)))
        zones = [str(ZoneId.of_seat(s)) for s in range(seats)]
        for zname in zones:
            z = table.layout.zone(zname)
            cx, cy = z.center
            for k in range(2):
                if k == 1:
                    resting[:] = [(zn, c) for zn, c in resting if zn != zname]
                yield emit(HandPose(cx + 20 * k, cy, ang, height=15))
        for k in range(4):
            yield emit(HandPose(table.layout.width_mm / 2 + 100 * k, table.layout.height_mm / 2, ang, height=60))

    rest = int(math.ceil(0.45 * fps))
    # empty table first, so the watcher learns the quiet scene
    for _ in range(int(fps * 0.4)):
        yield emit()
    yield from place(str(STOCK), BACK, 2)
    yield from place("turn_up", order.pop(), rest)
    leader = int(rng.integers(seats))
    for _trick in range(tricks):
        for j in range(seats):
            seat = (leader + j) % seats
            if rng.random() < 0.15:
                yield from reach_over(str(ZoneId.of_seat(int(rng.integers(seats)))), int(rng.integers(4, 9)))
            if rng.random() < 0.1:
                zn = table.layout.zone(str(ZoneId.of_seat(int(rng.integers(seats)))))
                for k in range(int(rng.integers(6, 12))):
                    yield emit(shadow=(zn.center[0] + 8 * k, zn.center[1], 70.0))
            yield from place(str(ZoneId.of_seat(seat)), order.pop(), int(rng.integers(1, 4)))
        for _ in range(rest):
            yield emit()
        leader = int(rng.integers(seats))
        yield from gather(leader)
        for _ in range(rest):
            yield emit()
    resting.clear()
    for _ in range(rest):
        yield emit()


__all__ = ["SyntheticTable", "PlacedCard", "HandPose", "night", "load_deck", "DEFAULT_DECK", "FACES",
           "NightFrame", "Truth", "replace"]


def seat_crops(seed: int, *, deck: str | Path | None = None, crop_scale: float = 0.95) -> tuple[list[np.ndarray], list[str]]:
    """All 52 faces on one seeded table, five at a time in the seat zones, cropped the way the
    table watcher crops them (``crop_scale`` inside the true outline): what a reader sees in play.

    Shared by the enrolled-deck test and the recognition benchmark's stained-deck figure.
    """
    from vision.classifier import CANONICAL_SIZE
    from vision.events import crop_card

    table = SyntheticTable(seed=seed, seats=5, deck=deck)
    rng = np.random.default_rng(seed)
    zones = list(table.layout.seats)
    crops, labels = [], []
    for k in range(0, 52, 5):
        cards = [PlacedCard(FACES[(k + j) % 52], *zones[j].center, float(rng.uniform(-25, 25))) for j in range(5)]
        frame = table.render(cards, frame_index=k)
        for card in cards:
            quad = table.card_quad(card)
            quad = quad.mean(axis=0) + (quad - quad.mean(axis=0)) * crop_scale
            crops.append(crop_card(frame, quad, CANONICAL_SIZE))
            labels.append(card.card)
    return crops, labels
