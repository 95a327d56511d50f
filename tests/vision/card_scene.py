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


def card_scene(card: str, truth: np.ndarray, seed: int = 3, size: tuple[int, int] = (640, 480)) -> np.ndarray:
    """The demo deck's ``card`` laid at ``truth`` on a grained, uneven brown table with sensor noise."""
    rng = np.random.default_rng(seed)
    w, h = size
    grain = cv2.resize(rng.normal(0, 1, (h // 8, w // 2)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
    table = np.stack([60 + 12 * grain, 85 + 14 * grain, 120 + 16 * grain], axis=2)
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
