"""The learned card detector, run with onnxruntime: where every card lies in a photo.

The contour cues of :mod:`vision.finder` need a table that differs from card paper everywhere
and cards that lie apart. Real tables are carpet, wood grain and books, and real cards overlap,
so the finder also asks this network (trained by ``models/detector.py`` on synthesised scenes)
for each card's centre, size and direction. Each answer becomes a rotated rectangle, the card's
whole outline also where another card covers it; the finder then snaps its sides to the photo's
edges where they show.

A model that is missing or does not load raises :class:`vision.classifier.ModelError` with one
line naming the file, as the card reader does.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.classifier import ModelError
from vision.corners import corner_outlines, corner_points

#: The long side a photo is scaled to before detection (cards 30-250 px tall at this size are
#: what the network was trained on; a 12 MP photo's cards shrink into that range, a webcam's stay).
WORK_SIDE = 512
#: Where the cards read at :data:`WORK_SIDE` are smaller than this (their median long side, px at
#: that size: a 90-200 px card in a 4000 px photo is 12-26), the photo is read once more at a
#: long side that makes them :data:`ZOOM_TO` px long, at most :data:`ZOOM_MAX` and never past the
#: photo's own size: the network learnt cards of 30-250 px, and smaller ones it misses.
ZOOM_BELOW = 44.0
ZOOM_TO = 64.0
ZOOM_MAX = 2048
#: A photo at least this long (a phone's full-size photo, not a camera frame) is read closer
#: already where its cards are under :data:`LARGE_ZOOM_BELOW` px at :data:`WORK_SIDE`, at the side
#: that makes them :data:`LARGE_ZOOM_TO` px. Why: at 28-40 px two cards lying close still read as
#: one card across both, and an overlapping pair as one; a one-off photo affords the closer read
#: (``bench/poker_table.py``: the card under a pair 32 -> 55 of 80 right, wrongs 2 -> 0, for 449 ->
#: 613 ms a photo), while a 1280×720 frame read at its own size would take twice the 150 ms it has.
LARGE_PHOTO = 2000
LARGE_ZOOM_BELOW = 40.0
LARGE_ZOOM_TO = 64.0
#: ... and where nothing, or fewer small cards than this, were found in it at :data:`WORK_SIDE`, at
#: :data:`ZOOM_MAX`: a 90 px card in a 6000 px photo is 8 px at 512, too small to be seen at all,
#: and the one or two finds there may be two cards read as one, larger than the cards are
#: (``bench/poker_table.py --size 6000x4000 --heights 90-150``: right 4 -> 215 of 260, none wrong).
LARGE_FEW = 3
#: Where the closer read was held to :data:`ZOOM_MAX` and the cards it found are still smaller than
#: :data:`LARGE_ZOOM_TO` px there, the photo is read once more, at the side that makes them so, but
#: only in windows round those cards (each card's box grown by :data:`WINDOW_PAD` of its long side
#: every way; windows that meet are read as one). Why: a 90-150 px card in a 6000×4000 photo is
#: 31-51 px at 2048, where an overlapping pair still reads as one card. Two cards a window finds
#: take the place of the one card they both overlap; a card it finds that overlaps none is added;
#: the other cards keep the outline read at 2048 (``bench/poker_table.py --size 6000x4000 --heights
#: 90-150``, seeds 7-10: 865 -> 912 of 1,040 cards right, none wrong; the windows' cards taking the
#: place of every card they overlap, 907 right and 2 wrong). The whole photo read at 3200 instead
#: takes twice the time and memory (1.5 s, 815 MB) for less.
WINDOW_PAD = 0.75
#: ... provided the windows' side is at least this many times the closer read's.
WINDOW_GAIN = 1.2
#: A card a window finds that the window's surer cards lie over for at least this share of it is
#: left out: a pair read closer can come out as its two cards and a third rectangle between them,
#: nearly all under the two (``bench/poker_table.py --size 6000x4000 --heights 90-150``: 10 more
#: cards that match none than without windows, 6 with this rule, the same cards read right; a card
#: under another in a pair is 40-65 % under it).
WINDOW_COVERED = 0.85
#: The windows read, all together, at most this many times the pixels of the closer read: a photo
#: whose every part holds a card (or a carpet read as many) would otherwise be read whole at 3200,
#: with its time and memory.
WINDOW_BUDGET = 1.0


def long_side(quad: np.ndarray) -> float:
    """The longest side of a quad, in its own pixels (a card's length, whichever way it lies)."""
    return max(float(np.linalg.norm(quad[k] - quad[(k + 1) % 4])) for k in range(4))


def _windows(quads: Sequence[np.ndarray], pad: float, size: tuple[int, int]) -> list[tuple[int, int, int, int]]:
    """The boxes (x0, y0, x1, y1) round ``quads``, each grown by ``pad`` px every way and held
    to the photo (``size``: width, height), boxes that meet merged into one. (Written here: OpenCV's
    ``groupRectangles`` averages boxes of like size and place; these must grow to hold them all.)"""
    w, h = size
    out: list[tuple[float, float, float, float]] = []
    for q in quads:
        box = (max(0.0, float(q[:, 0].min()) - pad), max(0.0, float(q[:, 1].min()) - pad),
               min(float(w), float(q[:, 0].max()) + pad), min(float(h), float(q[:, 1].max()) + pad))
        while meets := [o for o in out if o[0] <= box[2] and box[0] <= o[2] and o[1] <= box[3] and box[1] <= o[3]]:
            out = [o for o in out if o not in meets]
            box = (min(box[0], *(o[0] for o in meets)), min(box[1], *(o[1] for o in meets)),
                   max(box[2], *(o[2] for o in meets)), max(box[3], *(o[3] for o in meets)))
        out.append(box)
    return [(int(b[0]), int(b[1]), int(np.ceil(b[2])), int(np.ceil(b[3]))) for b in out]


def _covered(quad: np.ndarray, others: Sequence[np.ndarray]) -> float:
    """The share of ``quad`` that ``others`` lie over."""
    if not others:
        return 0.0
    x0, y0 = np.floor(quad.min(axis=0)).astype(int)
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int)
    mask = np.zeros((y1 - y0 + 1, x1 - x0 + 1), np.uint8)
    shift = np.array([x0, y0], np.float32)
    cv2.fillConvexPoly(mask, np.round(quad - shift).astype(np.int32), 1)
    area = int(mask.sum())
    for q in others:
        cv2.fillConvexPoly(mask, np.round(q - shift).astype(np.int32), 0)
    return 1.0 - int(mask.sum()) / max(area, 1)


def quad_iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two convex quads (4×2)."""
    inter, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    union = cv2.contourArea(a.astype(np.float32)) + cv2.contourArea(b.astype(np.float32)) - inter
    return float(inter / union) if union > 0 else 0.0


@dataclass(frozen=True)
class Detection:
    """One card: ``corners`` (4×2 float32, photo pixels, a rotated rectangle) and ``score`` (the
    heat map's peak, 0..1: how sure the network is that a card's centre lies there)."""

    corners: np.ndarray
    score: float


class CardDetector:
    """Finds cards with one onnxruntime session. ``threshold`` is the least peak that counts as
    a card (default: the sidecar's, chosen on labelled photos); ``threads`` intra-op threads."""

    def __init__(self, model_path: str | os.PathLike[str], *, threshold: float | None = None, threads: int = 1,
                 work_side: int = WORK_SIDE, use_corners: bool = True) -> None:
        import onnxruntime as ort

        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise ModelError(f"{self.model_path}: detector model file missing")
        meta_path = self.model_path.with_suffix(".json")
        meta: dict[str, object] = {}
        if meta_path.is_file():
            try:
                meta = json.loads(meta_path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise ModelError(f"{meta_path}: detector sidecar unreadable: {exc}") from None
        self.stride = int(meta.get("stride", 4))  # type: ignore[call-overload]
        self.threshold = float(threshold if threshold is not None else meta.get("threshold", 0.3))  # type: ignore[arg-type]
        self.work_side = int(work_side)
        channels = meta.get("channels", [])
        #: whether the network also answers card corners (``models/detector.py --corners-on``)
        self.corners = bool(use_corners) and isinstance(channels, list) and "corner" in channels
        self.corner_reach = float(meta.get("corner_reach", 16.0))  # type: ignore[arg-type]
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = max(1, min(int(threads), os.cpu_count() or 1))
        opts.inter_op_num_threads = 1
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.log_severity_level = 3
        try:
            self.session = ort.InferenceSession(str(self.model_path), sess_options=opts, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own exception types
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ModelError(f"{self.model_path}: not a loadable ONNX model ({reason[:200]})") from None
        self.input_name = self.session.get_inputs()[0].name

    def with_threshold(self, threshold: float) -> CardDetector:
        """The same network (one session, shared) answering at another ``threshold``."""
        other = copy.copy(self)
        other.threshold = float(threshold)
        return other

    def maps(self, image_bgr: np.ndarray, work_side: int | None = None) -> tuple[np.ndarray, float]:
        """The network's maps (8, gh, gw) for a photo, and the scale photo -> network input.
        ``work_side`` overrides the long side the photo is scaled to."""
        h, w = image_bgr.shape[:2]
        scale = (work_side or self.work_side) / max(h, w)
        nw, nh = max(16, int(round(w * scale / 16)) * 16), max(16, int(round(h * scale / 16)) * 16)
        small = cv2.resize(image_bgr, (nw, nh), interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
        x = small.transpose(2, 0, 1)[None].astype(np.float32) * (1.0 / 255.0)
        (out,) = self.session.run(None, {self.input_name: x})
        return np.asarray(out[0], np.float32), nw / w

    def detect(self, image_bgr: np.ndarray, *, work_side: int | Sequence[int] | None = None,
               better: Callable[[Detection, Detection], bool] | None = None,
               card_masks: dict[int, np.ndarray] | None = None) -> list[Detection]:
        """Every card the network sees, best first. ``work_side``: the long side (or sides, read
        in turn) to scale the photo to; a caller that knows the cards' size in pixels, such as a
        rectified table zone, keeps them in the trained 30-250 px range at a fraction of the cost.

        By default the photo is read twice, at the default long side and at half of it. Why: the
        scenes the network learnt from are 224 px, so a card that fills a phone photo is 300 px
        tall at 512 and out of the range it knows; at 256 it is found (on the held-back
        ``train/`` photos, 89 of 108 cards found at one size, 98 at both), for a quarter more time.
        A card a later reading finds is added unless an earlier one has it already; where it
        overlaps earlier cards, ``better(earlier, later)`` (default: never), said of each of them,
        may say the later reading's outline should take their place (a card at 512 too large to be
        seen whole comes out as a part of itself, or as two). Where the cards found at the default
        side are small there, the photo is read once more closer (:data:`ZOOM_BELOW`,
        :data:`LARGE_ZOOM_BELOW`), and where that read is held to :data:`ZOOM_MAX`, windows round
        its cards closer still (:data:`WINDOW_PAD`).

        ``card_masks``, where given, is filled with the network's map of card pixels at each long
        side it read (side -> probability over the whole photo, at the network's input size), so a
        caller that wants them (the strips of cards under others, :mod:`vision.strips`) does not run
        the network again.
        """
        zoom = work_side is None
        if work_side is None:
            sides: list[int] = [self.work_side, self.work_side // 2]
        elif isinstance(work_side, int):
            sides = [work_side]
        else:
            sides = list(work_side)
        found: list[Detection] = []
        closer = None
        for i, side in enumerate(sides):
            for det in self.detect_at(image_bgr, side, card_masks=card_masks):
                clash = [k for k, other in enumerate(found) if quad_iou(det.corners, other.corners) >= 0.3]
                if i == 0 or not clash:
                    found.append(det)
                elif better is not None and all(better(found[k], det) for k in clash):
                    found = [d for k, d in enumerate(found) if k not in clash] + [det]
            if i == 0 and zoom:
                closer = self._zoom_side(image_bgr.shape, found)
        if closer is not None:
            nearer = self.detect_at(image_bgr, closer, card_masks=card_masks)
            if closer == ZOOM_MAX:
                nearer = self._split(self._in_windows(image_bgr, closer, nearer), nearer)
            found = self._closer(nearer, found)
        found.sort(key=lambda d: -d.score)
        return found

    @staticmethod
    def _closer(closer: list[Detection], farther: list[Detection]) -> list[Detection]:
        """The cards read at the zoomed side, with those read farther off that none of them
        overlaps. Why the zoomed reading wins: the cards were smaller than the network knows at
        the default sides, where two cards lying close (a row on a poker table) read as one card
        across both; at the zoomed side each is its own."""
        return closer + [d for d in farther if all(quad_iou(d.corners, c.corners) < 0.3 for c in closer)]

    @staticmethod
    def _split(closer: list[Detection], farther: list[Detection]) -> list[Detection]:
        """The cards read ``farther`` off, except each that two or more cards read ``closer``
        overlap, which those take the place of (two cards lying close, read farther off as one);
        and the cards read closer that overlap none read farther off. A card read closer that
        surer ones read closer lie over (:data:`WINDOW_COVERED`) is left out."""
        overlaps = [[k for k, d in enumerate(farther) if quad_iou(c.corners, d.corners) >= 0.3] for c in closer]
        split = {k for k in range(len(farther)) if sum(k in o for o in overlaps) >= 2}
        kept = [d for k, d in enumerate(farther) if k not in split]
        taken = [c for c, o in zip(closer, overlaps, strict=True) if not o or (set(o) & split)]
        taken = [c for c in taken if _covered(c.corners, [d.corners for d in taken if d.score > c.score]) < WINDOW_COVERED]
        return kept + taken

    def _zoom_side(self, shape: tuple[int, ...], found: list[Detection]) -> int | None:
        """The long side at which the cards ``found`` at :attr:`work_side` would be
        :data:`ZOOM_TO` px long, where they are smaller than :data:`ZOOM_BELOW` there and the photo
        has the pixels (:data:`ZOOM_MAX` at most); None otherwise. (A photo of
        :data:`LARGE_PHOTO` px or more: :data:`LARGE_ZOOM_TO` and :data:`LARGE_ZOOM_BELOW`; where
        nothing, or fewer than :data:`LARGE_FEW` small cards, were found in it, :data:`ZOOM_MAX`.)"""
        photo_side = max(shape[0], shape[1])
        large = photo_side >= LARGE_PHOTO
        if not found:
            return min(ZOOM_MAX, photo_side) if large else None
        below, to = (LARGE_ZOOM_BELOW, LARGE_ZOOM_TO) if large else (ZOOM_BELOW, ZOOM_TO)
        side = self._zoom_to(photo_side, found, below, to)
        return min(ZOOM_MAX, photo_side) if side is not None and large and len(found) < LARGE_FEW else side

    def _zoom_to(self, photo_side: int, found: list[Detection], below: float, to: float) -> int | None:
        """The long side that makes the median card ``found`` at :attr:`work_side` ``to`` px long,
        where it is under ``below`` px there; None otherwise."""
        scale = self.work_side / photo_side
        longs = [long_side(d.corners) * scale for d in found]
        small = float(np.median(longs))
        if small >= below:
            return None
        side = min(ZOOM_MAX, photo_side, int(round(self.work_side * to / max(small, 1.0))))
        return side if side > 1.4 * self.work_side else None

    def _in_windows(self, image_bgr: np.ndarray, side: int, found: list[Detection]) -> list[Detection]:
        """The cards in windows round the cards ``found`` at long side ``side``, read at the scale
        that makes them :data:`LARGE_ZOOM_TO` px long (at most the photo's own), where that is at
        least :data:`WINDOW_GAIN` times closer; [] otherwise. A card a window cuts is left out:
        the cards read at ``side`` have it whole. Windows past :data:`WINDOW_BUDGET` are not read."""
        if not found:
            return []
        h, w = image_bgr.shape[:2]
        longs = [long_side(d.corners) for d in found]
        card = float(np.median(longs))
        k = min(1.0, LARGE_ZOOM_TO / max(card, 1.0))  # photo px -> window px
        if k * max(h, w) < WINDOW_GAIN * side:
            return []
        out: list[Detection] = []
        budget = WINDOW_BUDGET * side * side * min(h, w) / max(h, w)
        for x0, y0, x1, y1 in _windows([d.corners for d in found], card * WINDOW_PAD, (w, h)):
            budget -= (x1 - x0) * (y1 - y0) * k * k
            if budget < 0:
                break
            crop = image_bgr[y0:y1, x0:x1]
            window_side = max(16, int(round(max(x1 - x0, y1 - y0) * k)))
            offset = np.array([x0, y0], np.float32)
            for det in self.detect_at(crop, window_side):
                lo, hi = det.corners.min(axis=0), det.corners.max(axis=0)
                cut = (lo[0] < 1 and x0 > 0) or (lo[1] < 1 and y0 > 0) \
                    or (hi[0] > x1 - x0 - 1 and x1 < w) or (hi[1] > y1 - y0 - 1 and y1 < h)
                if not cut:
                    out.append(Detection(det.corners + offset, det.score))
        return out

    def detect_at(self, image_bgr: np.ndarray, work_side: int, *,
                  card_masks: dict[int, np.ndarray] | None = None) -> list[Detection]:
        """Every card the network sees with the photo's long side scaled to ``work_side``, best first
        (``card_masks``: as :meth:`detect`'s).

        Two of the network's answers are combined. Its mask of card pixels outlines a card that
        lies clear of the others to a pixel or two, so a blob of the mask shaped like one card
        (a filled rectangle of a card's proportions, with at most one centre peak in it) gives
        that card's outline. Where cards overlap, their blob is no card's shape; there each
        centre peak that clears the threshold gives a card from the size and direction the
        network reads at that peak (its whole outline, also where it is covered).
        """
        if image_bgr is None or image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
            raise ValueError("detect expects an H×W×3 BGR image")
        m, _scale = self.maps(image_bgr, work_side)
        gh, gw = m.shape[1:]
        s = self.stride
        to_photo = np.array([image_bgr.shape[1] / (gw * s), image_bgr.shape[0] / (gh * s)], np.float32)
        heat = m[0]
        peaks = (heat == cv2.dilate(heat, np.ones((3, 3), np.uint8))) & (heat >= self.threshold)
        ys, xs = np.nonzero(peaks)
        order = np.argsort(-heat[ys, xs])
        peak_list = [(int(xs[k]), int(ys[k])) for k in order]
        out: list[Detection] = []
        claimed: set[tuple[int, int]] = set()
        mask = cv2.resize(m[7], (gw * s, gh * s), interpolation=cv2.INTER_LINEAR)
        if card_masks is not None:
            card_masks[work_side] = mask
        blobs, _ = cv2.findContours((mask > 0.5).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        for blob in blobs:
            area = cv2.contourArea(blob)
            if area < 16 * s * s:
                continue
            (cx, cy), (w, h), ang = cv2.minAreaRect(blob)
            short, long_ = sorted((w, h))
            if short < 1 or not 1.2 <= long_ / short <= 1.8 or area / (w * h) < 0.85:
                continue
            inside = [p for p in peak_list if cv2.pointPolygonTest(blob, ((p[0] + 0.5) * s, (p[1] + 0.5) * s), False) >= 0]
            if len(inside) > 1:
                # several centre peaks: one card the network is unsure where the middle of is,
                # or cards lying edge to edge; the size it reads at the best peak tells which
                bx, by = inside[0]
                one = float(np.exp(m[3, by, bx]) * np.exp(m[4, by, bx])) * s * s
                if area > 1.5 * one:
                    continue
            score = float(max((heat[p[1], p[0]] for p in inside), default=0.0))
            if not inside:
                # no peak clears the threshold: a card-shaped patch of "card paper" alone is not
                # enough (a sheet, a book), unless the heat map agrees somewhat
                y0, y1 = int(max(0, cy / s - 1)), int(min(gh, cy / s + 2))
                x0, x1 = int(max(0, cx / s - 1)), int(min(gw, cx / s + 2))
                score = float(heat[y0:y1, x0:x1].max()) if y1 > y0 and x1 > x0 else 0.0
                if score < 0.5 * self.threshold:
                    continue
            claimed.update(inside)
            quad = cv2.boxPoints(((cx, cy), (w, h), ang)).astype(np.float32)
            out.append(Detection((quad * to_photo).astype(np.float32), score))
        for x, y in peak_list:
            if (x, y) in claimed:
                continue
            cx = (x + 0.5 + m[1, y, x]) * s
            cy = (y + 0.5 + m[2, y, x]) * s
            long_ = float(np.exp(m[3, y, x])) * s
            short = float(np.exp(m[4, y, x])) * s
            theta = 0.5 * float(np.arctan2(m[6, y, x], m[5, y, x]))
            u = np.array([np.cos(theta), np.sin(theta)], np.float32)  # along the long side
            v = np.array([-u[1], u[0]], np.float32)
            c = np.array([cx, cy], np.float32)
            quad = np.stack([c - u * long_ / 2 - v * short / 2, c - u * long_ / 2 + v * short / 2,
                             c + u * long_ / 2 + v * short / 2, c + u * long_ / 2 - v * short / 2])
            if np.isfinite(quad).all():  # a size read off a wild activation overflows exp()
                out.append(Detection((quad * to_photo).astype(np.float32), float(heat[y, x])))
        if self.corners and m.shape[0] >= 13:
            out = self._with_corners(out, m, to_photo)
        out.sort(key=lambda d: -d.score)
        return out

    def _with_corners(self, detections: list[Detection], m: np.ndarray, to_photo: np.ndarray) -> list[Detection]:
        """Each detection whose card the corner head outlines (two corners or more that show,
        overlapping it by IoU 0.4) takes that outline (:mod:`vision.corners`)."""
        outlines = corner_outlines(corner_points(m, stride=self.stride, to_photo=to_photo, reach=self.corner_reach))
        if not outlines:
            return detections
        out = []
        for det in detections:
            area = cv2.contourArea(det.corners)
            best, best_iou = None, 0.4
            for quad, _n in outlines:
                iou = quad_iou(det.corners, quad)
                if iou >= best_iou and 0.6 <= cv2.contourArea(quad) / max(area, 1.0) <= 2.5:
                    best, best_iou = quad, iou
            out.append(det if best is None else Detection(best, det.score))
        return out
