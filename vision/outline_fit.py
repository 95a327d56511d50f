"""Fit a card's outline to the photo's edges, starting from a rough rotated rectangle.

Why: where cards overlap, the detector answers a card as a rectangle from the size and direction
it reads at the card's centre, and on real photographs that rectangle is often a few degrees and
a tenth of a card off. The reader is trained on crops whose corners are at most a few pixels off,
so such a card is read as "unsure" although its index is in plain view. :func:`fit_outline`
searches near the rough rectangle for the one whose four sides lie on straight edges of the photo.

How: for each candidate turn of the card (every 3 degrees within ``max_turn_deg`` of the rough
one, then a degree and two either side of the best), each side is searched on its own along its
normal (a one-dimensional profile of the colour gradient across the side, its median along the
side), so the search costs turns × sides × offsets rather than a five-dimensional grid. A side that a covering card hides shows no edge where the
rectangle says; it keeps the rough rectangle's position instead of jumping to the covering card's
edge. Written here rather than taken from OpenCV: ``HoughLines`` would find every straight edge
of the photo, with no notion of which four belong to one card of a card's proportions.
"""

from __future__ import annotations

import cv2
import numpy as np

_WORK_LONG = 120.0  # the card's long side in the image the fit works on (pixels)


def _rect(centre: np.ndarray, u: np.ndarray, half_long: float, half_short: float) -> np.ndarray:
    v = np.array([-u[1], u[0]], np.float32)
    return np.stack([centre - u * half_long - v * half_short, centre - u * half_long + v * half_short,
                     centre + u * half_long + v * half_short, centre + u * half_long - v * half_short]).astype(np.float32)


def fit_outline(image_bgr: np.ndarray, quad: np.ndarray, *, max_turn_deg: float = 12.0,
                reach: float = 0.18, min_gain: float = 1.15) -> np.ndarray:
    """The rectangle near ``quad`` (4×2, image pixels, any order) whose sides lie on the photo's
    edges, or ``quad`` itself where :func:`try_fit` finds none."""
    fitted = try_fit(image_bgr, quad, max_turn_deg=max_turn_deg, reach=reach, min_gain=min_gain)
    return np.asarray(quad, np.float32).reshape(4, 2) if fitted is None else fitted


def try_fit(image_bgr: np.ndarray, quad: np.ndarray, *, max_turn_deg: float = 12.0,
            reach: float = 0.18, min_gain: float = 1.15) -> np.ndarray | None:
    """The rectangle near ``quad`` (4×2, image pixels, any order) whose sides lie on the photo's
    edges, or None.

    ``reach``: how far each side may move, as a fraction of the card's long side. The answer is
    None unless the fitted sides' edges are at least ``min_gain`` times as strong as
    the rough rectangle's, the fitted card keeps a card's proportions, and at least three of its
    sides were found on an edge.
    """
    q = np.asarray(quad, np.float32).reshape(4, 2)
    if not np.isfinite(q).all():
        return None
    centre = q.mean(axis=0)
    e01, e12 = q[1] - q[0], q[2] - q[1]
    long_vec = e01 if np.linalg.norm(e01) >= np.linalg.norm(e12) else e12
    long_len = float(np.linalg.norm(long_vec))
    short_len = float(min(np.linalg.norm(e01), np.linalg.norm(e12)))
    if long_len < 8 or short_len < 5:
        return None
    theta0 = float(np.arctan2(long_vec[1], long_vec[0]))

    # work on a patch around the card, scaled so the card's long side is _WORK_LONG pixels
    k = _WORK_LONG / long_len
    pad = long_len * (0.5 + reach)
    H, W = image_bgr.shape[:2]
    x0, y0 = int(max(0, centre[0] - pad)), int(max(0, centre[1] - pad))
    x1, y1 = int(min(W, centre[0] + pad + 1)), int(min(H, centre[1] + pad + 1))
    if x1 - x0 < 8 or y1 - y0 < 8:
        return None
    patch = image_bgr[y0:y1, x0:x1]
    size = (max(8, int(round((x1 - x0) * k))), max(8, int(round((y1 - y0) * k))))
    patch = cv2.resize(patch, size, interpolation=cv2.INTER_AREA if k < 1 else cv2.INTER_LINEAR)
    lab = cv2.cvtColor(cv2.GaussianBlur(patch, (3, 3), 0), cv2.COLOR_BGR2LAB).astype(np.float32)
    gx = np.stack([cv2.Sobel(lab[..., i], cv2.CV_32F, 1, 0, ksize=3) for i in range(3)])
    gy = np.stack([cv2.Sobel(lab[..., i], cv2.CV_32F, 0, 1, ksize=3) for i in range(3)])
    sx, sy = size[0] / (x1 - x0), size[1] / (y1 - y0)
    c = (centre - np.array([x0, y0], np.float32)) * np.array([sx, sy], np.float32)
    hl, hs = _WORK_LONG / 2, short_len * k / 2

    offsets = np.arange(-reach * _WORK_LONG, reach * _WORK_LONG + 0.01, 1.0, dtype=np.float32)
    along = np.linspace(-0.7, 0.7, 15, dtype=np.float32)
    dists = np.array([hl, hl, hs, hs], np.float32)
    halves = np.array([hs, hs, hl, hl], np.float32)

    def sides_at(turns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per turn: the score, each side's distance from the centre, how many sides lie on an
        edge, and the score of the sides where the rough rectangle put them."""
        u = np.stack([np.cos(turns), np.sin(turns)], axis=1).astype(np.float32)  # (T, 2) along the long side
        v = np.stack([-u[:, 1], u[:, 0]], axis=1)
        # the four sides of every turn at once: outward normal, rough distance, tangent, half length
        normals = np.stack([u, -u, v, -v], axis=1)  # (T, 4, 2)
        tangents = np.stack([v, v, u, u], axis=1)
        pts = (c + (dists[None, :, None, None] + offsets[None, None, :, None])[..., None] * normals[:, :, None, None, :]
               + (along[None, None, None, :] * halves[None, :, None, None])[..., None] * tangents[:, :, None, None, :])
        mx = np.ascontiguousarray(pts[..., 0].reshape(-1, len(along)))
        my = np.ascontiguousarray(pts[..., 1].reshape(-1, len(along)))
        nx = np.repeat(normals[..., 0].reshape(-1), len(offsets))[:, None]
        ny = np.repeat(normals[..., 1].reshape(-1), len(offsets))[:, None]
        outward = [cv2.remap(gx[i], mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0) * nx
                   + cv2.remap(gy[i], mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0) * ny
                   for i in range(3)]
        strength = np.sqrt(sum(d * d for d in outward))
        # a card's paper is lighter than what lies outside it; a court card's picture frame, a
        # strong rectangle inside the card, turns lighter going out: that is not the outline
        strength = np.where(outward[0] > 0.25 * strength, 0.0, strength)
        # an edge is straight: the median along the side, not the mean (a pip's edge is short)
        profile = np.median(strength, axis=1).reshape(len(turns), 4, len(offsets))
        peak_i = np.argmax(profile, axis=2)  # (T, 4)
        peak = np.take_along_axis(profile, peak_i[..., None], axis=2)[..., 0]
        prior = profile[:, :, len(offsets) // 2]
        on_edge = (peak >= 12.0) & (peak >= 1.5 * np.median(profile, axis=2))
        places = dists[None, :] + np.where(on_edge, offsets[peak_i], 0.0)
        return np.where(on_edge, peak, prior).sum(axis=1), places, on_edge.sum(axis=1), prior.sum(axis=1)

    # coarse to fine: every 3 degrees, then a degree and two either side of the best
    coarse = np.deg2rad(np.arange(-max_turn_deg, max_turn_deg + 0.01, 3.0)) + theta0
    scores, places, found_n, prior = sides_at(coarse)
    base_score = float(prior[int(np.argmin(np.abs(coarse - theta0)))])
    best = int(np.argmax(scores))
    fine = coarse[best] + np.deg2rad(np.array([-2.0, -1.0, 1.0, 2.0]))
    f_scores, f_places, f_found, _ = sides_at(fine)
    turns = np.concatenate([coarse, fine])
    scores, places, found_n = np.concatenate([scores, f_scores]), np.concatenate([places, f_places]), np.concatenate([found_n, f_found])
    t_best = int(np.argmax(scores))
    score, found = float(scores[t_best]), int(found_n[t_best])
    u_best = np.array([np.cos(turns[t_best]), np.sin(turns[t_best])], np.float32)
    v_best = np.array([-u_best[1], u_best[0]], np.float32)
    side_at = [float(p) for p in places[t_best]]  # distance of each side from the rough centre
    half_long, half_short = (side_at[0] + side_at[1]) / 2, (side_at[2] + side_at[3]) / 2
    if found < 3 or half_short <= 0 or not 1.2 <= half_long / half_short <= 1.75 or score < min_gain * base_score:
        return None
    mid = c + u_best * (side_at[0] - side_at[1]) / 2 + v_best * (side_at[2] - side_at[3]) / 2
    rect = _rect(mid, u_best, half_long, half_short)
    return (rect / np.array([sx, sy], np.float32) + np.array([x0, y0], np.float32)).astype(np.float32)


def edge_support(image_bgr: np.ndarray, quad: np.ndarray, *, samples: int = 24) -> float:
    """How well ``quad``'s four sides lie on the card's outline: the mean over its sides of the
    median colour step across the side (CIE Lab, just inside against just outside), where the
    inside must not be darker than the outside (card paper is lighter than what lies around it).

    Why: two outlines of one card (a contour cue's and the detector's fitted rectangle) are
    compared by what the photo shows along them, the only judge both answer to.
    """
    q = np.asarray(quad, np.float32).reshape(4, 2)
    if not np.isfinite(q).all():
        return 0.0
    sides = np.roll(q, -1, axis=0) - q
    lengths = np.linalg.norm(sides, axis=1)
    if float(lengths.min()) < 4:
        return 0.0
    step = max(1.0, 0.02 * float(lengths.max()))
    normals = np.stack([sides[:, 1], -sides[:, 0]], axis=1) / lengths[:, None]
    outward = np.sign(np.einsum("ij,ij->i", normals, q + sides / 2 - q.mean(axis=0)))
    normals *= np.where(outward == 0, 1.0, outward)[:, None].astype(np.float32)
    t = np.linspace(0.1, 0.9, samples, dtype=np.float32)
    pts = q[:, None, :] + t[None, :, None] * sides[:, None, :]  # (4, samples, 2)
    both = np.concatenate([pts - step * normals[:, None, :], pts + step * normals[:, None, :]], axis=0)
    vals = cv2.remap(image_bgr, both[..., 0].astype(np.float32), both[..., 1].astype(np.float32), cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REPLICATE)
    lab = cv2.cvtColor(vals, cv2.COLOR_BGR2LAB).astype(np.float32)
    inside, outside = lab[:4], lab[4:]
    diff = np.linalg.norm(inside - outside, axis=2)
    diff = np.where(inside[..., 0] + 5.0 < outside[..., 0], 0.0, diff)
    return float(np.median(diff, axis=1).mean())
