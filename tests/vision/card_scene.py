"""A rendered card laid on a grained table at a known outline: scenes for the finder's tests."""

from __future__ import annotations

import cv2
import numpy as np

from vision.synthetic import load_deck


def rect(cx: float, cy: float, long_: float, short: float, deg: float) -> np.ndarray:
    """A rotated rectangle (4×2 float32): ``deg`` turns its long side from the x axis; the first
    side is a short side."""
    t = np.deg2rad(deg)
    u = np.array([np.cos(t), np.sin(t)])
    v = np.array([-u[1], u[0]])
    c = np.array([cx, cy])
    return np.stack([c - u * long_ / 2 - v * short / 2, c - u * long_ / 2 + v * short / 2,
                     c + u * long_ / 2 + v * short / 2, c + u * long_ / 2 - v * short / 2]).astype(np.float32)


def card_scene(card: str, truth: np.ndarray, seed: int = 3, size: tuple[int, int] = (640, 480),
               table: np.ndarray | None = None) -> np.ndarray:
    """The demo deck's ``card`` laid at ``truth`` on a grained, uneven brown table with sensor noise
    (or on ``table``, an H×W×3 image of ``size``)."""
    rng = np.random.default_rng(seed)
    w, h = size
    if table is None:
        grain = cv2.resize(rng.normal(0, 1, (h // 8, w // 2)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
        table = np.stack([60 + 12 * grain, 85 + 14 * grain, 120 + 16 * grain], axis=2)
    else:
        table = table.astype(np.float32)
    art = load_deck()[card]
    rgb, alpha = art[..., :3].astype(np.float32), art[..., 3:].astype(np.float32) / 255.0
    ah, aw = art.shape[:2]
    # the art is portrait; truth's first side is a short side, so map its corners in that order
    src = np.array([[0, 0], [0, ah - 1], [aw - 1, ah - 1], [aw - 1, 0]], np.float32)
    dst = np.array([truth[1], truth[2], truth[3], truth[0]], np.float32)
    M = cv2.getPerspectiveTransform(src, dst)
    warped = cv2.warpPerspective(rgb, M, (w, h))
    a = cv2.warpPerspective(alpha, M, (w, h))[..., None]
    scene = table * (1 - a) + warped * a + rng.normal(0, 3, (h, w, 3))
    return np.clip(scene, 0, 255).astype(np.uint8)


def mat_on_a_desk(size: tuple[int, int] = (640, 480), seed: int = 5) -> np.ndarray:
    """A dark green cloth covering the middle of a white desk: the photo's border is the desk, so
    the cloth, not the desk, is what lies round the cards."""
    rng = np.random.default_rng(seed)
    w, h = size
    desk = np.full((h, w, 3), (225.0, 228.0, 230.0), np.float32)
    cloth = np.array([[0.12 * w, 0.15 * h], [0.9 * w, 0.12 * h], [0.95 * w, 0.92 * h], [0.06 * w, 0.9 * h]], np.int32)
    cv2.fillConvexPoly(desk, cloth, (40.0, 62.0, 28.0))
    return np.clip(desk + rng.normal(0, 4, (h, w, 3)), 0, 255).astype(np.float32)
