"""The card detector: a small fully convolutional network that finds every card in a photo.

``python -m models.detector`` renders decks, synthesises table scenes (``models/scenes.py``: real
surfaces, overlapping cards, clutter, camera nuisances), trains the network on the CPU, and
exports ``models/card_detector.onnx`` with its sidecar. ``vision/detector.py`` runs it.

The network reads a BGR photo at any size (a multiple of 16) and answers, on a grid of stride 4,
CenterNet-style: a heat map that peaks at each card's centre; the centre's sub-cell offset; the
card's long and short side (log, in grid cells); the long side's direction as (cos 2θ, sin 2θ),
so a card and its 180° turn give the same answer; and a mask of card pixels (an auxiliary
target that teaches the network what card paper looks like). A card's whole outline is
predicted also where another card covers it, so a covered card is still warped whole and read
from whichever index shows.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

STRIDE = 4
#: The training target's channels: 10 for the cards (see :func:`targets`), 6 for their corners.
TARGET_CHANNELS = 16
#: The card maps the network answers, in order (see :func:`targets`).
CARD_CHANNELS = ("heat", "off_x", "off_y", "log_long", "log_short", "cos2t", "sin2t", "mask")
#: The corner head's answer: heat, offset x/y, way to the card's centre x/y.
CORNER_CHANNELS = ("corner", "corner_off_x", "corner_off_y", "to_centre_x", "to_centre_y")
#: The way from a corner to its card's centre is answered in grid cells divided by this.
CORNER_REACH = 16.0
OUT = Path(__file__).resolve().parent
WORK = OUT / "work" / "detector"
# decks the detector learns from: the classifier's training decks (held-out designs stay unseen)
DETECTOR_DECKS = ("gnome-anglo", "gnome-anglo_poker", "gnome-paris", "gnome-dondorf", "gnome-tigullio",
                  "gnome-atlasnye", "gnome-gnomangelo", "gnome-neoclassical", "gnome-plastic", "gnome-simplistic",
                  "kde-gm-paris", "kde-oxygen-white", "kde-nicu-white", "kde-dondorf")


def targets(cards: list[Any], mask: np.ndarray, size: tuple[int, int], *, min_visible: float = 0.25,
            weight: np.ndarray | None = None) -> np.ndarray:
    """The training target of one scene: (16, H/4, W/4) float32 — heat map, offset x/y, log long,
    log short, cos 2θ, sin 2θ, mask, the weight of the regression at each cell (0/1) and the
    weight of the mask; the heat map is -1 where a card is too covered or cut off to be asked for,
    or where ``weight`` (H×W, 0..1) is 0: the loss ignores it there (a real photo's possibly
    covered card, whose outline no label gives). Then the corners (:data:`CORNER_CHANNELS`): a
    heat map peaking at each corner that shows, its sub-cell offset, the way from it to its
    card's centre (grid cells / :data:`CORNER_REACH`), and the weight of those regressions; the
    corner heat map is -1 throughout where the corners that show are not known (a real photo,
    given ``weight``, or a card without ``corners_shown``)."""
    W, H = size
    gh, gw = H // STRIDE, W // STRIDE
    t = np.zeros((TARGET_CHANNELS, gh, gw), np.float32)
    yy, xx = np.mgrid[0:gh, 0:gw].astype(np.float32)
    ignore = np.zeros((gh, gw), bool)
    for c in cards:
        q = c.quad
        cx, cy = (q.mean(axis=0) / STRIDE) - 0.5
        long_ = float(np.linalg.norm(q[3] - q[0]) + np.linalg.norm(q[2] - q[1])) / 2 / STRIDE
        short = float(np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])) / 2 / STRIDE
        d = ((q[3] - q[0]) + (q[2] - q[1])) / 2
        theta = math.atan2(float(d[1]), float(d[0]))
        sigma = max(0.7, 0.12 * short)
        ix, iy = int(round(cx)), int(round(cy))
        # the peak sits exactly on the centre's cell (1.0 there: the loss's positive), the
        # offset channels carry the fraction
        g = np.exp(-((xx - ix) ** 2 + (yy - iy) ** 2) / (2 * sigma**2))
        inside = 0 <= ix < gw and 0 <= iy < gh
        if c.visible < min_visible or not inside:
            ignore |= g > 0.3
            continue
        t[0] = np.maximum(t[0], g)
        for x, y in _peak_cells(t, 0, 8, g, ix, iy):
            t[1, y, x], t[2, y, x] = cx - x, cy - y
            t[3, y, x], t[4, y, x] = math.log(max(long_, 1.0)), math.log(max(short, 1.0))
            t[5, y, x], t[6, y, x] = math.cos(2 * theta), math.sin(2 * theta)
            t[8, y, x] = 1.0
    t[9] = 1.0
    if weight is not None:
        w_small = cv2.resize(weight.astype(np.float32), (gw, gh), interpolation=cv2.INTER_AREA)
        t[9] = (w_small > 0.99).astype(np.float32)
        ignore |= t[9] == 0
    t[0][ignore & (t[0] < 0.3)] = -1.0
    t[7] = cv2.resize(mask, (gw, gh), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
    if weight is None and all(getattr(c, "corners_shown", None) is not None for c in cards):
        _corner_targets(t, cards, xx, yy)
    else:
        t[10] = -1.0  # a real photo: its labels do not say which corners show
    return t


def _peak_cells(t: np.ndarray, heat: int, claimed: int, g: np.ndarray, ix: int, iy: int) -> Iterator[tuple[int, int]]:
    """The cells around a peak at (``ix``, ``iy``) whose regression targets are this peak's: in
    the grid, and not yet ``claimed`` by another peak unless this one's Gaussian ``g`` is the
    stronger there. Lazy: the caller marks each cell claimed before the next is weighed."""
    gh, gw = t.shape[1:]
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            x, y = ix + dx, iy + dy
            if 0 <= x < gw and 0 <= y < gh and (t[claimed, y, x] == 0 or g[y, x] >= t[heat, y, x] - 1e-6):
                yield x, y


def _corner_targets(t: np.ndarray, cards: list[Any], xx: np.ndarray, yy: np.ndarray) -> None:
    """Fill the corner channels of ``t`` (see :func:`targets`) for ``cards``."""
    gh, gw = t.shape[1:]
    for c in cards:
        q = c.quad / STRIDE - 0.5
        short = (np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[2] - q[3])) / 2
        sigma = max(0.7, 0.05 * float(short))
        centre = q.mean(axis=0)
        for (px, py), shown in zip(q, c.corners_shown, strict=True):
            ix, iy = int(round(px)), int(round(py))
            if not shown or not (0 <= ix < gw and 0 <= iy < gh):
                continue
            g = np.exp(-((xx - ix) ** 2 + (yy - iy) ** 2) / (2 * sigma**2))
            t[10] = np.maximum(t[10], g)
            for x, y in _peak_cells(t, 10, 15, g, ix, iy):
                t[11, y, x], t[12, y, x] = px - x, py - y
                t[13, y, x] = (centre[0] - x) / CORNER_REACH
                t[14, y, x] = (centre[1] - y) / CORNER_REACH
                t[15, y, x] = 1.0


# ------------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------------
_FACES: list[np.ndarray] = []
_SURFACES: Any = None


def _init_worker(faces: list[np.ndarray], surfaces: Any) -> None:
    global _FACES, _SURFACES
    _FACES, _SURFACES = faces, surfaces
    cv2.setNumThreads(1)


def _make(args: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``n`` scenes of ``side`` px from ``seed``, and their targets; a fourth element, where
    given, is the least share of a card that must show for it to be asked for (in hundredths)."""
    from models.scenes import scene

    seed, n, side = args[:3]
    min_visible = args[3] / 100 if len(args) > 3 else 0.25
    rng = np.random.default_rng(seed)
    xs = np.empty((n, side, side, 3), np.uint8)
    ts = np.empty((n, TARGET_CHANNELS, side // STRIDE, side // STRIDE), np.float32)
    for i in range(n):
        im, cards, mask = scene(rng, _FACES, _SURFACES, size=(side, side))
        xs[i] = im
        ts[i] = targets(cards, mask, (side, side), min_visible=min_visible)
    return xs, ts


def load_faces(names: tuple[str, ...] = DETECTOR_DECKS, height: int = 240) -> list[np.ndarray]:
    from models.decks import decks, load_deck

    faces: list[np.ndarray] = []
    for deck in decks(names=names):
        if deck.available():
            faces.extend(img for label, img in sorted(load_deck(deck, height=height).items()))
    if not faces:
        raise SystemExit("error: no deck artwork found (apt-get install gnome-cards-data kdegames-card-data-kf5 librsvg2-bin)")
    return faces


def synthesise(n: int, seed: int, side: int, faces: list[np.ndarray], surfaces: Any, workers: int,
               log: Any = print) -> tuple[np.ndarray, np.ndarray]:
    chunk = 250
    jobs = [(seed * 100_003 + k, min(chunk, n - k * chunk), side) for k in range(math.ceil(n / chunk))]
    xs, ts = [], []
    t0 = time.time()
    import multiprocessing

    # spawn, not fork: a forked child can inherit a lock held by one of OpenCV's threads and hang
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(faces, surfaces)) as pool:
        for k, (x, t) in enumerate(pool.map(_make, jobs)):
            xs.append(x)
            ts.append(t)
            log(f"scenes {min((k + 1) * chunk, n)}/{n} ({time.time() - t0:.0f} s)")
    return np.concatenate(xs), np.concatenate(ts)


# ------------------------------------------------------------------------------------------------
# network
# ------------------------------------------------------------------------------------------------
def build_net(width: int = 16, *, corners: bool = False) -> Any:
    """The detector network; with ``corners``, also the corner head (:data:`CORNER_CHANNELS`,
    answered after the card maps' eight channels)."""
    import torch
    from torch import nn

    def cbr(cin: int, cout: int, stride: int = 1, dil: int = 1) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, padding=dil, dilation=dil, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    w = width

    class CardDetector(nn.Module):
        """Encoder to stride 16 (with dilated context), decoder back to stride 4 with skips."""

        def __init__(self) -> None:
            super().__init__()
            self.s2 = cbr(3, w, 2)
            self.s4 = nn.Sequential(cbr(w, w * 3 // 2, 2), cbr(w * 3 // 2, w * 3 // 2))
            self.s8 = nn.Sequential(cbr(w * 3 // 2, w * 3, 2), cbr(w * 3, w * 3))
            self.s16 = nn.Sequential(cbr(w * 3, w * 4, 2), cbr(w * 4, w * 4, dil=2), cbr(w * 4, w * 4, dil=4))
            self.u8 = cbr(w * 4 + w * 3, w * 3)
            self.u4 = cbr(w * 3 + w * 3 // 2, w * 2)
            self.head = nn.Sequential(cbr(w * 2, w * 2), nn.Conv2d(w * 2, 8, 1))
            with torch.no_grad():
                self.head[-1].bias.zero_()  # type: ignore[operator]  # (torch's stubs type a Sequential's item as a Module)
                self.head[-1].bias[0] = -2.2  # type: ignore[operator]  # start the heat map near a low prior
            self.corner_head = None
            if corners:
                self.corner_head = nn.Sequential(cbr(w * 2, w * 2), cbr(w * 2, w * 2),
                                                 nn.Conv2d(w * 2, len(CORNER_CHANNELS), 1))
                with torch.no_grad():
                    self.corner_head[-1].bias.zero_()  # type: ignore[operator]  # (torch's stubs type a Sequential's item as a Module)
                    self.corner_head[-1].bias[0] = -2.2  # type: ignore[operator]  # (torch's stubs type a Sequential's item as a Module)

        def features(self, x: Any) -> tuple[Any, Any, Any]:
            """The decoder's features at strides 4, 8 and 16 (the heads read the first)."""
            up = nn.functional.interpolate
            a = self.s4(self.s2(x))
            b = self.s8(a)
            c = self.s16(b)
            d = self.u8(torch.cat([up(c, size=b.shape[2:], mode="nearest"), b], 1))
            return self.u4(torch.cat([up(d, size=a.shape[2:], mode="nearest"), a], 1)), d, c

        def forward(self, x: Any) -> Any:
            f = self.features(x)
            return self.answer(f[0], self.corners(f) if self.corner_head is not None else None)

        def corners(self, f: tuple[Any, Any, Any]) -> Any:
            assert self.corner_head is not None  # forward asks only a network built with corners
            k = self.corner_head(f[0])
            return torch.cat([torch.sigmoid(k[:, 0:1]), k[:, 1:]], 1)

        def answer(self, e: Any, corner_maps: Any = None) -> Any:
            out = self.head(e)
            heat = torch.sigmoid(out[:, 0:1])
            mask = torch.sigmoid(out[:, 7:8])
            maps = [heat, out[:, 1:7], mask] + ([corner_maps] if corner_maps is not None else [])
            return torch.cat(maps, 1)

    return CardDetector()


def load_onnx_weights(net: Any, path: Path) -> None:
    """Give a :func:`build_net` network the weights of an exported detector, to add the corner head to it.

    The export folds each batch norm into the convolution before it, so each convolution takes
    its folded weight and its batch norm becomes the identity plus the folded bias. The
    exported convolutions are the network's first ones (the corner head comes last)."""
    import onnx
    import torch
    from onnx import numpy_helper
    from torch import nn

    model = onnx.load(str(path))
    weights = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    convs = [(weights[n.input[1]], weights[n.input[2]] if len(n.input) > 2 else None)
             for n in model.graph.node if n.op_type == "Conv"]
    mods = [m for m in net.modules() if isinstance(m, (nn.Conv2d, nn.BatchNorm2d))]
    pairs: list[tuple[Any, Any]] = []
    for k, m in enumerate(mods):
        if isinstance(m, nn.Conv2d):
            bn = mods[k + 1] if k + 1 < len(mods) and isinstance(mods[k + 1], nn.BatchNorm2d) else None
            pairs.append((m, bn))
    if len(pairs) < len(convs):
        raise ValueError(f"{path}: {len(convs)} convolutions, the network has {len(pairs)}")
    with torch.no_grad():
        for (conv, bn), (wt, b) in zip(pairs, convs, strict=False):
            if tuple(conv.weight.shape) != wt.shape:
                raise ValueError(f"{path}: a convolution of shape {wt.shape}, the network's is {tuple(conv.weight.shape)}")
            conv.weight.copy_(torch.from_numpy(wt))
            bias = torch.from_numpy(b) if b is not None else torch.zeros(wt.shape[0])
            if bn is None:
                conv.bias.copy_(bias)
            else:
                bn.weight.fill_(1.0)
                bn.bias.copy_(bias)
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)


def focal_loss(heat: Any, target: Any) -> Any:
    """CenterNet's focal loss of a heat map against its target (1 at a peak, a Gaussian around
    it, -1 where the loss is to ignore the map), per peak."""
    import torch

    eps = 1e-5
    hm, th = heat.clamp(eps, 1 - eps), target
    valid = (th >= 0).float()
    pos = (th > 0.99).float()
    neg = (1 - pos) * valid
    pos_loss = -(torch.log(hm) * (1 - hm) ** 2 * pos).sum()
    neg_loss = -(torch.log(1 - hm) * hm**2 * (1 - th.clamp(min=0)) ** 4 * neg).sum()
    return (pos_loss + neg_loss) / pos.sum().clamp(min=1)


def loss_fn(out: Any, t: Any) -> Any:
    import torch

    eps = 1e-5
    focal = focal_loss(out[:, 0], t[:, 0])
    w = t[:, 8:9]
    reg = ((out[:, 1:7] - t[:, 1:7]).abs() * w).sum() / w.sum().clamp(min=1) / 6
    mw = t[:, 9]
    m = (torch.nn.functional.binary_cross_entropy(out[:, 7].clamp(eps, 1 - eps), t[:, 7], reduction="none") * mw).sum() \
        / mw.sum().clamp(min=1)
    return focal + 2.0 * reg + 0.5 * m, (focal.item(), reg.item(), m.item())


def _real_batch(rng: np.random.Generator, real: list[Any], n: int, side: int) -> tuple[np.ndarray, np.ndarray]:
    from models.real_scenes import real_scene

    xs = np.empty((n, side, side, 3), np.uint8)
    ts = np.empty((n, TARGET_CHANNELS, side // STRIDE, side // STRIDE), np.float32)
    for i in range(n):
        im, cards, mask, weight = real_scene(rng, real[int(rng.integers(len(real)))], side)
        xs[i] = im
        ts[i] = targets(cards, mask, (side, side), weight=weight)
    return xs, ts


def train(x: np.ndarray, t: np.ndarray, *, epochs: int, batch: int, lr: float, seed: int, threads: int,
          log: Any = print, deadline: float | None = None, checkpoint: Any = None,
          real: list[Any] | None = None, real_per_batch: int = 0) -> Any:
    """Train from scratch on the synthesised scenes ``x``/``t``; with ``real`` labelled photos
    (:mod:`models.real_scenes`), ``real_per_batch`` of each batch's samples are cut from them afresh."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    net = build_net()
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    steps = epochs * (len(x) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    rng = np.random.default_rng(seed)
    step = 0
    t0 = time.time()
    for ep in range(epochs):
        order = rng.permutation(len(x))
        net.train()
        for k in range(len(x) // batch):
            idx = np.sort(order[k * batch : (k + 1) * batch])
            xn, tn = x[idx], t[idx]
            if real and real_per_batch > 0:
                xr, tr = _real_batch(rng, real, real_per_batch, x.shape[1])
                xn = np.concatenate([xn[: batch - real_per_batch], xr])
                tn = np.concatenate([tn[: batch - real_per_batch], tr])
            xb = torch.from_numpy(xn).permute(0, 3, 1, 2).float().div_(255)
            tb = torch.from_numpy(tn)
            out = net(xb)
            loss, parts = loss_fn(out, tb)
            step += 1
            detail = f"loss {loss.item():.3f} (heat {parts[0]:.3f} box {parts[1]:.3f} mask {parts[2]:.3f})"
            if _optimise(opt, sched, loss, net, _Progress(ep, epochs, step, steps, t0, detail), log=log,
                         checkpoint=checkpoint, deadline=deadline, resume=net.train):
                return net.eval()
    return net.eval()


@dataclass(frozen=True)
class _Progress:
    """Where a training run stands, for its progress line."""

    epoch: int
    epochs: int
    step: int
    steps: int
    started: float
    detail: str

    def line(self) -> str:
        el = time.time() - self.started
        return (f"epoch {self.epoch + 1}/{self.epochs} step {self.step}/{self.steps} {self.detail} {el / 60:.1f} min, "
                f"~{el / self.step * (self.steps - self.step) / 60:.1f} min left")


def _optimise(opt: Any, sched: Any, loss: Any, net: Any, progress: _Progress, *, log: Any, checkpoint: Any,
              deadline: float | None, resume: Any) -> bool:
    """One optimiser step, then the progress line every 25 steps and a checkpoint every 150
    (``resume`` puts the network back to training after it); True when the deadline has passed."""
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if progress.step % 25 == 0 or progress.step == progress.steps:
        log(progress.line())
    if checkpoint is not None and progress.step % 150 == 0:
        checkpoint(net.eval())
        resume()
    if deadline is not None and time.time() > deadline:
        log("deadline reached: stopping early")
        return True
    return False


def corner_loss(k: Any, t: Any) -> tuple[Any, tuple[float, float]]:
    """The corner head's loss: focal loss on its heat map, L1 on offset and way to the centre."""
    focal = focal_loss(k[:, 0], t[:, 10])
    w = t[:, 15:16]
    reg = ((k[:, 1:5] - t[:, 11:15]).abs() * w).sum() / w.sum().clamp(min=1) / 4
    return focal + 2.0 * reg, (focal.item(), reg.item())


def train_corners(x: np.ndarray, t: np.ndarray, base: Path, *, epochs: int, batch: int, lr: float, seed: int,
                  threads: int, log: Any = print, deadline: float | None = None, checkpoint: Any = None,
                  tune_features: bool = False) -> Any:
    """Add the corner head to the exported detector ``base`` and train it.

    Alone (the default), the card maps stay exactly as ``base`` answers them. With
    ``tune_features`` the shared layers learn too, for corners need more than the card maps'
    features hold, and the card maps are held to ``base``'s own answer (distillation: each
    step's card maps against a frozen copy's), so that what the product measured and chose its
    threshold on moves as little as it can."""
    import copy as copy_module

    import torch
    from torch import nn

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    net = build_net(corners=True)
    load_onnx_weights(net, base)
    net.eval()
    teacher = copy_module.deepcopy(net).eval() if tune_features else None
    for p in net.parameters():
        p.requires_grad_(tune_features)
    for p in net.corner_head.parameters():
        p.requires_grad_(True)
    params = [p for p in net.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=1e-4)
    steps = epochs * (len(x) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    rng = np.random.default_rng(seed)
    step, t0 = 0, time.time()

    def train_mode() -> None:
        net.corner_head.train()
        for m in net.corner_head.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.train()

    for ep in range(epochs):
        order = rng.permutation(len(x))
        train_mode()
        for k in range(len(x) // batch):
            idx = np.sort(order[k * batch : (k + 1) * batch])
            xb = torch.from_numpy(x[idx]).permute(0, 3, 1, 2).float().div_(255)
            tb = torch.from_numpy(t[idx])
            keep = torch.zeros(())
            if teacher is not None:
                f = net.features(xb)
                with torch.no_grad():
                    want = teacher.answer(teacher.features(xb)[0])
                got = net.answer(f[0])
                # the heat map matters most (peaks decide what is a card), then sizes, then mask
                keep = 20.0 * ((got[:, 0] - want[:, 0]) ** 2).mean() + (got[:, 1:8] - want[:, 1:8]).abs().mean()
            else:
                with torch.no_grad():
                    f = net.features(xb)
            loss, parts = corner_loss(net.corners(f), tb)
            loss = loss + 10.0 * keep
            step += 1
            detail = f"corner loss {loss.item():.3f} (heat {parts[0]:.3f} way {parts[1]:.3f} card maps kept {float(keep):.4f})"
            if _optimise(opt, sched, loss, net, _Progress(ep, epochs, step, steps, t0, detail), log=log,
                         checkpoint=checkpoint, deadline=deadline, resume=train_mode):
                return net.eval()
    return net.eval()


def choose_threshold(model: Path, photos: list[Path], candidates: tuple[float, ...] = (0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55),
                     log: Any = print) -> float:
    """The detector threshold at which the product's finder (detector and contour cues merged)
    finds the most labelled cards of ``photos`` (held back from training) against half a point
    per extra find: an extra find costs the reader a look, and sometimes a wrong card."""
    from vision.detector import CardDetector
    from vision.finder import find_cards
    from vision.voc import quad_box, read_labels, score_photo

    images = [(cv2.imread(str(p)), p) for p in photos]
    best, best_score = candidates[0], -math.inf
    for th in candidates:
        det = CardDetector(model, threshold=th)
        found = extra = cards = 0
        for im, p in images:
            if im is None:
                continue
            labels = read_labels(p.with_suffix(".xml"), (im.shape[1], im.shape[0]))
            tally = score_photo(labels, [(quad_box(f.corners), "AS") for f in find_cards(im, detector=det)])
            found, extra, cards = found + tally.found, extra + tally.extra, cards + tally.cards
        score = found - 0.5 * extra
        log(f"threshold {th:.2f}: found {found}/{cards}, extra {extra}")
        if score > best_score:
            best, best_score = th, score
    return best


def export(net: Any, path: Path) -> None:
    import torch

    dummy = torch.zeros(1, 3, 256, 256)
    torch.onnx.export(net, (dummy,), str(path), input_names=["image"], output_names=["maps"], opset_version=17,
                      dynamic_axes={"image": {0: "n", 2: "h", 3: "w"}, "maps": {0: "n", 2: "gh", 3: "gw"}},
                      dynamo=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.detector", description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", type=int, default=12000, help="synthesised training scenes (default 12000)")
    ap.add_argument("--side", type=int, default=256, help="scene size in pixels (default 256)")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    ap.add_argument("--workers", type=int, default=2, help="scene synthesis processes (default 2)")
    ap.add_argument("--photos", type=Path, action="append", default=[],
                    help="a folder of VOC-labelled photos (repeatable): their card-free borders serve as real "
                         "surfaces, their cards as real samples, every 5th photo is held back to choose the threshold")
    ap.add_argument("--real-per-batch", type=int, default=0,
                    help="samples of each batch cut from the labelled photos (default 0: synthesised scenes only)")
    ap.add_argument("--wallpapers", type=Path, default=Path("/usr/share/backgrounds"),
                    help="a folder of photographs used as surfaces (default: the installed desktop backgrounds)")
    ap.add_argument("--corners-on", type=Path, default=None, metavar="ONNX",
                    help="add the corner head to this exported detector and train the head alone "
                         "(the card maps and the threshold stay the detector's own)")
    ap.add_argument("--tune-features", action="store_true",
                    help="with --corners-on: the shared layers learn too, the card maps held to the detector's own")
    ap.add_argument("--minutes", type=float, default=None, help="stop training after this many minutes")
    ap.add_argument("--out", type=Path, default=OUT / "card_detector.onnx")
    args = ap.parse_args(argv)
    from models.scenes import Surfaces

    t_start = time.time()
    faces = load_faces()
    walls = sorted(p for p in args.wallpapers.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png", ".webp")) \
        if args.wallpapers.is_dir() else []
    surfaces = Surfaces.from_folders(args.photos, walls)
    print(f"{len(faces)} card faces, {len(surfaces.images)} real surfaces", flush=True)
    WORK.mkdir(parents=True, exist_ok=True)
    x, t = synthesise(args.scenes, args.seed, args.side, faces, surfaces, args.workers,
                      log=lambda s: print(s, flush=True))
    from models.real_scenes import load_real_photos

    real, held = load_real_photos(args.photos)
    print(f"{len(real)} labelled photos as real samples, {len(held)} held back", flush=True)
    deadline = time.time() + 60 * args.minutes if args.minutes else None
    del faces
    log = lambda s: print(s, flush=True)  # noqa: E731
    if args.corners_on is not None:
        base_meta = json.loads(args.corners_on.with_suffix(".json").read_text(encoding="utf-8"))
        if "corner" in base_meta.get("channels", []):
            raise SystemExit(f"error: {args.corners_on} has a corner head already: give the detector without one")
        net = train_corners(x, t, args.corners_on, epochs=args.epochs, batch=args.batch, lr=args.lr, seed=args.seed,
                            threads=args.threads, log=log, deadline=deadline, tune_features=args.tune_features,
                            checkpoint=lambda n: export(n, WORK / "checkpoint.onnx"))
    else:
        net = train(x, t, epochs=args.epochs, batch=args.batch, lr=args.lr, seed=args.seed, threads=args.threads,
                    log=log, deadline=deadline, checkpoint=lambda n: export(n, WORK / "checkpoint.onnx"), real=real,
                    real_per_batch=args.real_per_batch)
    import torch

    torch.save(net.state_dict(), WORK / "detector.pt")
    export(net, args.out)
    meta = {"kind": "card-detector", "stride": STRIDE, "input": "BGR 0..1 NCHW, sides a multiple of 16",
            "channels": list(CARD_CHANNELS) + (list(CORNER_CHANNELS) if args.corners_on is not None else []),
            "corner_reach": CORNER_REACH,
            "recipe": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k not in ("out",)}
            | {"photos": [p.name for p in args.photos], "wallpapers": len(walls)},
            "decks": list(DETECTOR_DECKS), "minutes": round((time.time() - t_start) / 60, 1),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"}
    if args.corners_on is not None:
        meta["card_maps"] = base_meta
        for key in ("threshold", "threshold_chosen_on"):
            if key in base_meta:
                meta[key] = base_meta[key]
    elif held:
        meta["threshold"] = choose_threshold(args.out, held, log=log)
        meta["threshold_chosen_on"] = f"{len(held)} labelled photos held back from training (found against extra finds)"
    args.out.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB) in {meta['minutes']} min", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
