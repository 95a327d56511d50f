"""From frames to a trustworthy stream of card events, zone by zone.

How a frame is handled (and why it is cheap):

1. **Motion, on a small greyscale image** (picamera2's lores stream, or ``image`` shrunk 4×).
   Each zone compares its pixels with an *anchor* taken when the zone last went still; a change
   restarts the zone's still run. Comparing with the anchor rather than with the previous frame
   also catches a card slid slowly, a few pixels per frame.
2. **Analysis only when a zone has been still**, at half of ``stable_s`` and again at
   ``stable_s``, and only when its pixels differ from what was last committed. The zone (plus a
   margin) is rectified to the table plane at 1 px/mm, so a card is always about 63 × 88 px.
   The cards in it are found and read by :func:`vision.identify.identify`, the pipeline that
   ``loo-table identify`` runs on photos and ``bench/realphotos.py`` scores on real ones (with
   the learned detector when the watcher is given one: cards that touch or overlap, a card
   under another read from what shows of it), its reader holding the zone's exclusions. Knowing
   the scale adds two checks a photo cannot have: a find that is not card-sized is dropped, and
   a blob of the zone's foreground that no card explains and that was not there at the zone's
   last commit (a hand, a sleeve, a shadow) makes the zone *obstructed*, which changes nothing.
   Clutter that lay there all along (a book, a glass, a patterned cloth) obstructs nothing.
3. **Blobs the finder missed**: a card-shaped blob of a zone's foreground that no found card
   explains is read too, all such blobs of the frame in one call, each crop warped from the
   full-resolution image straight to the canonical size.
4. **Commit** when the two analyses of one still run agree; the difference between the old and
   the new content of the zone becomes events. The same face in two zones is a ``conflict``;
   once the other copy goes, it becomes an ordinary ``card_placed``.

The watcher knows no game rules; it reports what lies where.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import cv2
import numpy as np

from vision.detector import CardDetector
from vision.event_types import EVENT_KINDS, VisionEvent, ZoneContent, ZoneId
from vision.finder import order_corners, warp_card
from vision.geometry import CARD_MM, Calibration, TableLayout, Zone, order_card_corners
from vision.identify import CardInPhoto, identify

__all__ = ["EVENT_KINDS", "VisionEvent", "Reader", "Content", "TableWatcher", "crop_card"]

class Reader(Protocol):
    """What the watcher needs of a classifier (``vision.classifier.CardClassifier`` fits)."""

    def classify(self, crops: Sequence[np.ndarray]) -> list[Any]: ...


@dataclass
class Content:
    """What lies in a zone: faces (with their best confidence), face-down cards, unsure cards.

    ``views`` keeps, per face, the embedding of its best reading (None when the finder was unsure
    of the outline); ``unsure_info`` keeps, per unsure card, (view, card seen again or None)."""

    faces: Counter[str] = field(default_factory=Counter)
    backs: int = 0
    unsure: list[tuple[tuple[str, float], ...]] = field(default_factory=list)
    confidence: dict[str, float] = field(default_factory=dict)
    views: dict[str, Any] = field(default_factory=dict)
    unsure_info: list[tuple[Any, str | None]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.faces.values()) + self.backs + len(self.unsure)

    def same_as(self, other: Content) -> bool:
        return self.faces == other.faces and self.backs == other.backs and len(self.unsure) == len(other.unsure)


@dataclass
class _ZoneState:
    zone: Zone
    box: tuple[int, int, int, int] = (0, 0, 0, 0)  # small-image ROI x0, y0, x1, y1
    mask: np.ndarray | None = None
    anchor: np.ndarray | None = None
    still_since: float = 0.0
    checks_done: int = 0  # analyses made in this still run (0, 1 or 2)
    first: Content | None = None
    committed: Content = field(default_factory=Content)
    committed_roi: np.ndarray | None = None  # small ROI when the content was last confirmed
    committed_rect: np.ndarray | None = None  # the rectified zone (grey) when it was last confirmed
    obstructed: bool = False
    pending_conflict: set[str] = field(default_factory=set)

    @property
    def id(self) -> ZoneId:
        """The zone as the events name it."""
        return ZoneId.of_zone(self.zone.name)


@dataclass
class _Observation:
    content: Content | None  # None: obstructed (a hand, a shadow, overlapping cards)
    readings: list[Any] = field(default_factory=list)  # per card: identify's reading, None for a blob it missed
    crops: list[np.ndarray] = field(default_factory=list)  # per blob the finder missed: its crop, read with the frame's batch
    grey: np.ndarray | None = None  # the rectified zone, grey and blurred: the next look's reference
    sure: list[bool] = field(default_factory=list)  # per card: the finder traced its outline clearly


class TableWatcher:
    """Turns frames into :class:`VisionEvent` lists. Not thread-safe: one watcher per camera.

    Keyword-only tuning: ``stable_s`` (seconds a zone must lie still before its content counts),
    ``motion_threshold`` (grey levels on the small image), ``motion_fraction`` (share of a zone's
    small pixels that must change to count as motion), ``px_per_mm`` (rectification scale),
    ``crop_scale`` (a missed blob's crop is the blob shrunk by this factor about its centre),
    ``detector`` (the learned card detector the finder merges with its contour cues, as
    ``identify`` does), ``exclusions`` (zone name -> cards that cannot lie there now; the caller
    knows why, e.g. the referee passes the cards already seen in the deal: the classifier drops
    them before its open-set rule and reads the crops of each batch jointly, see
    ``vision.classifier.decide``).
    """

    def __init__(self, layout: TableLayout, calibration: Calibration, classifier: Reader, *,
                 stable_s: float = 0.3, motion_threshold: int = 18, motion_fraction: float = 0.004,
                 px_per_mm: float = 1.0, margin_mm: float = 50.0, small_scale: float = 0.25,
                 crop_scale: float = 0.95, detector: CardDetector | None = None,
                 exclusions: Callable[[str], Collection[str]] | None = None) -> None:
        if stable_s < 0:
            raise ValueError("stable_s must not be negative")
        self.layout = layout
        self.calibration = calibration
        self.classifier = classifier
        self.stable_s = float(stable_s)
        self.motion_threshold = int(motion_threshold)
        self.motion_fraction = float(motion_fraction)
        self.px_per_mm = float(px_per_mm)
        self.margin_mm = float(margin_mm)
        self.small_scale = float(small_scale)
        self.crop_scale = float(crop_scale)
        self.detector = detector
        self.exclusions = exclusions
        self._zones = [_ZoneState(z) for z in layout.zones]
        self._small_shape: tuple[int, int] | None = None
        self._maps: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.stats: Counter[str] = Counter()  # frames, analyses, crops classified, ...
        from vision.classifier import CANONICAL_SIZE  # the crop size the model wants

        self.canonical_size = CANONICAL_SIZE

    # -- public --------------------------------------------------------------------------------
    def process(self, frame: Any) -> list[VisionEvent]:
        """Feed one frame (anything with ``image``, ``timestamp`` and optionally ``lores``)."""
        image = frame.image
        ts = float(frame.timestamp)
        small = self._small(image, getattr(frame, "lores", None))
        self.stats["frames"] += 1
        due: list[_ZoneState] = []
        for zs in self._zones:
            roi = small[zs.box[1]:zs.box[3], zs.box[0]:zs.box[2]]
            if zs.anchor is None or self._changed(roi, zs.anchor, zs.mask):
                zs.anchor = roi.copy()
                zs.still_since = ts
                zs.checks_done = 0
                zs.first = None
                continue
            still = ts - zs.still_since
            want = 1 if still + 1e-9 >= self.stable_s / 2 else 0
            if still + 1e-9 >= self.stable_s:
                want = 2
            if want > zs.checks_done:
                if zs.committed_roi is not None and not self._changed(roi, zs.committed_roi, zs.mask):
                    zs.checks_done = 2  # same pixels as the content we already hold: nothing to do
                    continue
                due.append(zs)
        if not due:
            return []
        observations = [self._observe(image, zs) for zs in due]
        # the blobs the finder missed, of every zone, read in one batch
        crops = [c for ob in observations for c in ob.crops]
        blob_reads = iter(self._classify(crops, [zs.zone.name for zs, ob in zip(due, observations, strict=True)
                                                 for _ in ob.crops]))
        readings = [next(blob_reads) if r is None else r for ob in observations for r in ob.readings]
        sure = [s for ob in observations for s in ob.sure]
        self.stats["analyses"] += len(due)
        self.stats["crops"] += len(readings)
        i = 0
        updates: list[tuple[_ZoneState, Content]] = []
        for zs, ob in zip(due, observations, strict=True):
            if ob.content is None:
                zs.obstructed = True
                self.stats["obstructed"] += 1
                zs.still_since = ts  # look again after another stable period
                zs.checks_done = 0
                zs.first = None
                continue
            zs.obstructed = False
            content = ob.content
            n = len(ob.readings)
            for reading, outline_sure in zip(readings[i:i + n], sure[i:i + n], strict=True):
                self._add_reading(content, reading, outline_sure)
            i += n
            if zs.checks_done == 0 and self.stable_s > 0:
                zs.first = content  # the second look, at stable_s, must agree with this one
                zs.checks_done = 1
                continue
            if zs.first is not None and not zs.first.same_as(content):
                # the reading changed while the zone looked still: trust neither, look again
                zs.first = content
                zs.checks_done = 1
                self.stats["disagreements"] += 1
                continue
            zs.checks_done = 2
            roi = small[zs.box[1]:zs.box[3], zs.box[0]:zs.box[2]]
            zs.committed_roi = roi.copy()
            zs.committed_rect = ob.grey
            updates.append((zs, content))
        return self._commit(updates, ts)

    def _zone_reader(self, zone: str) -> _ExcludingReader:
        """The reader as ``identify`` asks it in ``zone``: with the zone's exclusions."""
        return _ExcludingReader(self.classifier, None if self.exclusions is None else frozenset(self.exclusions(zone)))

    def _classify(self, crops: list[np.ndarray], zones: list[str]) -> list[Any]:
        if not crops:
            return []
        if self.exclusions is None:
            return self.classifier.classify(crops)
        exclude = [frozenset(self.exclusions(z)) for z in zones]
        return self.classifier.classify(crops, exclude=exclude)  # type: ignore[call-arg]

    def reset(self) -> None:
        """Forget what every zone holds (a new deal, a moved camera); keeps the cached warps."""
        self._zones = [_ZoneState(z) for z in self.layout.zones]
        self._small_shape = None

    def contents(self) -> dict[str, ZoneContent]:
        """Committed content per zone (faces, face-down count, unsure count): for the dashboard."""
        return {zs.zone.name: {"faces": sorted(zs.committed.faces.elements()), "face_down": zs.committed.backs,
                               "unsure": len(zs.committed.unsure), "obstructed": zs.obstructed}
                for zs in self._zones}

    def face_down_counts(self) -> dict[str, int]:
        """Face-down cards per seat zone, e.g. to catch a misdeal after the deal."""
        return {zs.zone.name: zs.committed.backs for zs in self._zones if zs.zone.name.startswith("seat:")}

    # -- motion --------------------------------------------------------------------------------
    def _small(self, image: np.ndarray, lores: np.ndarray | None) -> np.ndarray:
        if lores is not None and lores.ndim == 2:
            small = lores
        else:
            small = image
            h, w = image.shape[:2]
            target = (max(1, round(w * self.small_scale)), max(1, round(h * self.small_scale)))
            # halving with bilinear interpolation is an exact 2×2 box average and 3–5× faster than
            # INTER_AREA here; two halvings give the 4×4 average motion checks want (noise ÷ 4)
            while small.shape[1] >= 2 * target[0] and small.shape[0] >= 2 * target[1]:
                small = cv2.resize(small, (small.shape[1] // 2, small.shape[0] // 2), interpolation=cv2.INTER_LINEAR)
            if (small.shape[1], small.shape[0]) != target:
                small = cv2.resize(small, target, interpolation=cv2.INTER_AREA)
            small = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
        if self._small_shape != small.shape[:2]:
            self._prepare_boxes(small.shape[:2], image.shape[:2])
        return small

    def _prepare_boxes(self, small_shape: tuple[int, int], image_shape: tuple[int, int]) -> None:
        sh, sw = small_shape
        ih, iw = image_shape
        sx, sy = sw / iw, sh / ih
        for zs in self._zones:
            quad = self.calibration.to_image(zs.zone.corners(margin=self.margin_mm * 0.5)) * [sx, sy]
            x0, y0 = np.floor(quad.min(axis=0)).astype(int)
            x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 1
            x0, y0, x1, y1 = max(0, x0), max(0, y0), min(sw, x1), min(sh, y1)
            if x1 <= x0 or y1 <= y0:
                raise ValueError(f"zone {zs.zone.name} lies outside the camera image")
            zs.box = (int(x0), int(y0), int(x1), int(y1))
            mask = np.zeros((y1 - y0, x1 - x0), dtype=np.uint8)
            cv2.fillConvexPoly(mask, np.round(quad - [x0, y0]).astype(np.int32), 1)
            zs.mask = mask.astype(bool)
            zs.anchor = None
            zs.committed_roi = None
        self._small_shape = (sh, sw)

    def _changed(self, roi: np.ndarray, ref: np.ndarray, mask: np.ndarray | None) -> bool:
        if roi.shape != ref.shape:
            return True
        diff = cv2.absdiff(roi, ref) > self.motion_threshold
        if mask is not None:
            diff &= mask
            area = int(mask.sum())
        else:
            area = diff.size
        return int(diff.sum()) > max(2, self.motion_fraction * area)

    # -- finding cards in a zone -------------------------------------------------------------
    def _observe(self, image: np.ndarray, zs: _ZoneState) -> _Observation:
        zone = zs.zone
        r = self.px_per_mm
        m = self.margin_mm
        x0, y0 = zone.x - m, zone.y - m
        maps = self._maps.get(zone.name)
        if maps is None:
            # zone pixels (u, v) -> table mm -> image px, as fixed-point maps: cv2.remap with them
            # costs a fifth of a warpPerspective that divides per pixel every time
            w = int(round((zone.width + 2 * m) * r))
            h = int(round((zone.height + 2 * m) * r))
            to_mm = np.array([[1 / r, 0, x0], [0, 1 / r, y0], [0, 0, 1]], dtype=np.float64)
            to_img = self.calibration.table_to_image @ to_mm
            uu, vv = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
            pts = cv2.perspectiveTransform(np.dstack([uu, vv]).reshape(-1, 1, 2), to_img).reshape(h, w, 2)
            maps = cv2.convertMaps(pts[:, :, 0].astype(np.float32), pts[:, :, 1].astype(np.float32), cv2.CV_16SC2)
            self._maps[zone.name] = maps
        # cubic, not linear: identify warps its crops from this image, a second resampling after
        # the camera's, and the blur of two linear ones cost the reader (a stained jack of spades
        # read as the jack of clubs while the host showed the deck, `bench/deck_learning.py
        # --show-deck`); cubic keeps the camera's sharpness for a few ms more a frame
        rect = cv2.remap(image, maps[0], maps[1], cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE)
        grey = cv2.GaussianBlur(cv2.cvtColor(rect, cv2.COLOR_BGR2GRAY), (5, 5), 0)
        found = self._cards_in(rect, grey, zs.committed_rect, zone.name)
        if found is None:
            return _Observation(None)
        content = Content()
        crops: list[np.ndarray] = []
        sure: list[bool] = []
        readings: list[Any] = []
        for quad, clear, reading in zip(*found, strict=True):
            centre_mm = quad.mean(axis=0) / r + [x0, y0]
            if not zone.contains((float(centre_mm[0]), float(centre_mm[1]))):
                continue
            if reading is None:  # a blob the finder missed: cropped from the full-resolution image
                quad = quad.mean(axis=0) + (quad - quad.mean(axis=0)) * self.crop_scale
                corners = order_corners(self.calibration.to_image(quad / r + [x0, y0]).astype(np.float32))
                crops.append(warp_card(image, corners, self.canonical_size))
            sure.append(clear)
            readings.append(reading)
        return _Observation(content, readings, crops, grey, sure)

    def _cards_in(self, rect: np.ndarray, grey: np.ndarray, reference: np.ndarray | None, zone: str
                  ) -> tuple[list[np.ndarray], list[bool], list[Any]] | None:
        """The cards of a rectified zone image (corners in its pixels) and, per card, whether the
        finder traced its outline clearly (`FoundCard.clear`: only such crops may teach the deck)
        and ``identify``'s reading of it (None for a blob the finder missed, read with the frame's
        batch), or None when something that is not a card came into it. ``identify`` finds and
        reads the cards, as it does a photo's, with the zone's exclusions (``zone``); the zone's own
        foreground blobs (:func:`zone_blobs`) add any card-shaped blob the finder missed, and a
        blob no card explains obstructs the zone when it is new: when the zone looked different
        there at its last commit (``reference``). A book, a glass or the pattern of a real table
        lie there from the start and obstruct nothing; a hand that reaches in does."""
        r = self.px_per_mm
        blobs, others = zone_blobs(rect, r, margin_mm=self.margin_mm)
        cw, ch = CARD_MM[0] * r, CARD_MM[1] * r
        # cards are about 63 x 88 px here: the detector reads the zone scaled so a card is 120 px
        # long (inside the 30-250 px it was trained on; of 88, 120 and 170 px this named the most
        # cards of the train/ photos, bench/vision.py --real), at a third of its default's cost;
        # where that finds no card it reads again at 84 px too (409 -> 414 of the 527 train/
        # cards named; reading every zone twice named 2 more for 40 % more time a frame)
        sides = [int(np.ceil(max(rect.shape[:2]) * px / ch / 16) * 16) for px in ZONE_CARD_PX]
        cards: list[CardInPhoto] = []
        reader = self._zone_reader(zone)
        for read in (sides[:1], sides):
            # identify asks its reader for classify (and classify_with_index) only, as this one answers them
            cards = [c for c in identify(rect, reader, self.detector, look_again=False,  # type: ignore[arg-type]
                                         detector_side=read, min_card_px=int(0.6 * cw), past_the_view=False)
                     if _card_sized(c.found.corners, cw, ch)]
            if cards or self.detector is None:
                break
        found = [c.found.corners.astype(np.float64) for c in cards]
        extra = [b for b in blobs if all(_centre_inside(b.mean(axis=0), f) is False for f in found)]
        quads = found + extra
        clear = [c.found.clear for c in cards] + [False] * len(extra)  # a blob the finder missed: not clear
        read_as: list[Any] = [c.reading for c in cards] + [None] * len(extra)
        others = [o for o in others if not any(_centre_inside(np.array(o[4]), q) for q in quads)]
        if reference is None or reference.shape != grey.shape:
            return quads, clear, read_as
        changed = cv2.absdiff(grey, reference) > 2 * self.motion_threshold
        for x0, y0, x1, y1, _centre in others:
            if changed[y0:y1, x0:x1].mean() > 0.25:
                return None
        return quads, clear, read_as

    @staticmethod
    def _add_reading(content: Content, reading: Any, outline_sure: bool = True) -> None:
        view = getattr(reading, "embedding", None) if outline_sure else None
        if getattr(reading, "face_down", False):
            content.backs += 1
        elif reading.card is not None:
            content.faces[reading.card] += 1
            if float(reading.confidence) >= content.confidence.get(reading.card, -1.0):
                content.confidence[reading.card] = float(reading.confidence)
                content.views[reading.card] = view
        else:
            content.unsure.append(tuple(reading.top3))
            content.unsure_info.append((view, getattr(reading, "excluded", None)))

    # -- events --------------------------------------------------------------------------------
    def _commit(self, updates: list[tuple[_ZoneState, Content]], ts: float) -> list[VisionEvent]:
        events: list[VisionEvent] = []
        placed: list[tuple[_ZoneState, str, float]] = []
        for zs, new in updates:  # removals first, so a card moved between zones is not a conflict
            old = zs.committed
            name = zs.id
            lost_faces = list((old.faces - new.faces).elements())
            for card in lost_faces:
                if card in zs.pending_conflict:
                    zs.pending_conflict.discard(card)
                else:
                    events.append(VisionEvent("card_removed", name, ts, card=card))
            other_lost = (old.total - new.total) - len(lost_faces)
            for _ in range(max(0, other_lost)):
                events.append(VisionEvent("card_removed", name, ts))
            if new.total == 0 and old.total > 0:
                events.append(VisionEvent("zone_cleared", name, ts))
            zs.committed = new
            for card in (new.faces - old.faces).elements():
                placed.append((zs, card, new.confidence.get(card, 0.0)))
            if new.backs > old.backs:
                events.append(VisionEvent("card_face_down", name, ts, count=new.backs))
            info = new.unsure_info + [(None, None)] * (len(new.unsure) - len(new.unsure_info))
            for top3, (view, again) in zip(new.unsure[len(old.unsure):], info[len(old.unsure):], strict=True):
                events.append(VisionEvent("card_unsure", name, ts, top3=top3, seen_again=again, view=view))
        for zs, card, conf in placed:
            elsewhere = [o.id for o in self._zones
                         if o is not zs and card in o.committed.faces]
            if elsewhere:
                zs.pending_conflict.add(card)
                events.append(VisionEvent("conflict", zs.id, ts, card=card, confidence=conf,
                                          zones=(*elsewhere, zs.id)))
            else:
                events.append(VisionEvent("card_placed", zs.id, ts, card=card, confidence=conf,
                                          view=zs.committed.views.get(card)))
        # a conflict resolves when only one copy is left: that one counts as placed
        for zs in self._zones:
            for card in list(zs.pending_conflict):
                if card not in zs.committed.faces:
                    zs.pending_conflict.discard(card)
                    continue
                if not any(o is not zs and card in o.committed.faces for o in self._zones):
                    zs.pending_conflict.discard(card)
                    events.append(VisionEvent("card_placed", zs.id, ts, card=card,
                                              confidence=zs.committed.confidence.get(card),
                                              view=zs.committed.views.get(card)))
        self.stats["events"] += len(events)
        return events


#: The long side of a card, in pixels, at which a zone is read for cards: first, and again where that finds none.
ZONE_CARD_PX = (120.0, 84.0)


#: How far a found card's sides may be from a card's at the zone's scale and still count as one
#: card (a share of each side). A card held a little above the table or tilted towards the camera
#: looks larger. 0.3 is the most that still drops half a card cut across its long side (its short
#: side is 0.30 of a card's short side off) and two cards side by side (0.40 off). Fed the
#: labelled train/ photos as settled frames (the scale estimated from the labels, so sizes spread
#: more than on a calibrated table), 0.25 named 441 of 527 cards right and 0.3 named 452, wrong 1
#: either way.
ZONE_SIZE_TOLERANCE = 0.3


class _ExcludingReader:
    """The watcher's reader as ``identify`` asks it in one zone: every batch with the zone's
    exclusions, one set per crop (an empty set alone would read as no sets at all)."""

    def __init__(self, classifier: Any, exclude: frozenset[str] | None) -> None:
        self.classifier, self.exclude = classifier, exclude

    def _sets(self, crops: Sequence[np.ndarray]) -> list[frozenset[str]]:
        return [self.exclude or frozenset()] * len(crops)

    def classify(self, crops: Sequence[np.ndarray]) -> list[Any]:
        if len(crops) == 0:  # a zone with no card in it: nothing to ask
            return []
        if self.exclude is None:
            return self.classifier.classify(crops)  # type: ignore[no-any-return]
        return self.classifier.classify(crops, exclude=self._sets(crops))  # type: ignore[no-any-return]

    def classify_with_index(self, crops: Sequence[np.ndarray], **how: Any) -> tuple[list[Any], list[Any] | None]:
        """``how``: the reader's other options (``outlined``), passed on to a CardClassifier."""
        with_index = getattr(self.classifier, "classify_with_index", None)
        if with_index is None:  # not a CardClassifier: a reader of its own rules
            return self.classify(crops), None
        if self.exclude is None:
            return with_index(crops, **how)  # type: ignore[no-any-return]
        return with_index(crops, exclude=self._sets(crops), **how)  # type: ignore[no-any-return]


def _card_sized(corners: np.ndarray, cw: float, ch: float, tolerance: float = ZONE_SIZE_TOLERANCE) -> bool:
    sides = [float(np.linalg.norm(corners[i] - corners[(i + 1) % 4])) for i in range(4)]
    short, long_ = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
    short, long_ = min(short, long_), max(short, long_)
    return abs(short - cw) <= tolerance * cw and abs(long_ - ch) <= tolerance * ch


def _centre_inside(point: np.ndarray, quad: np.ndarray) -> bool:
    return bool(cv2.pointPolygonTest(quad.astype(np.float32).reshape(-1, 1, 2), (float(point[0]), float(point[1])), False) >= 0)


def find_card_quads(rect: np.ndarray, px_per_mm: float = 1.0, *, margin_mm: float = 50.0,
                    size_tolerance: float = 0.14, min_fill: float = 0.80) -> list[np.ndarray] | None:
    """Card-shaped blobs in a zone image rectified to the table plane, or ``None`` when
    something that is not a card covers a noticeable part of it (see :func:`zone_blobs`)."""
    quads, others = zone_blobs(rect, px_per_mm, margin_mm=margin_mm, size_tolerance=size_tolerance, min_fill=min_fill)
    return None if others else quads


def zone_blobs(rect: np.ndarray, px_per_mm: float = 1.0, *, margin_mm: float = 50.0,
               size_tolerance: float = 0.14, min_fill: float = 0.80,
               ) -> tuple[list[np.ndarray], list[tuple[int, int, int, int, tuple[float, float]]]]:
    """Card-shaped blobs in a zone image rectified to the table plane, and the other blobs.

    Returns each card-shaped blob's four corners (zone pixels) and, for every other sizeable
    blob inside the zone (a hand, a shadow, cards overlapping), its bounding box and centre. The table
    colour is the median of the image border (so light and dark cloths and wood all work); a
    pixel is foreground when it differs from it by more than the border's own spread allows.
    Why not the generic finder: here the scale is known, so a size-and-shape test in millimetres
    rejects far more non-cards than any test a finder without geometry can make.
    """
    h, w = rect.shape[:2]
    blur = cv2.GaussianBlur(rect, (5, 5), 0)
    b = max(3, int(4 * px_per_mm))
    ring = np.concatenate([blur[:b:2, ::2].reshape(-1, 3), blur[-b::2, ::2].reshape(-1, 3),
                           blur[::2, :b:2].reshape(-1, 3), blur[::2, -b::2].reshape(-1, 3)]).astype(np.int16)
    bg = np.median(ring, axis=0)
    spread = np.median(np.abs(ring - bg), axis=0).max()
    high = float(max(26.0, 5.0 * spread))
    low = float(max(10.0, 3.0 * spread))
    d0, d1, d2 = cv2.split(cv2.absdiff(blur, (*(float(v) for v in bg), 0.0)))  # type: ignore[call-overload]
    diff = cv2.max(cv2.max(d0, d1), d2)  # per-pixel largest channel difference (numpy's max(axis=2) is 10× slower)
    core = cv2.morphologyEx((diff > high).astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    blobs, _ = cv2.findContours(core, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    fg = np.zeros_like(core)
    pad = 6
    for blob in blobs:
        x, y, bw, bh = cv2.boundingRect(blob)
        if bw * bh < 20:
            continue
        # a blurred step edge sits at half the step: threshold each blob at half its own contrast
        inside = diff[y:y + bh, x:x + bw][core[y:y + bh, x:x + bw] > 0]
        t = max(low, 0.5 * float(np.median(inside)))
        x0, y0, x1, y1 = max(0, x - pad), max(0, y - pad), min(w, x + bw + pad), min(h, y + bh + pad)
        fg[y0:y1, x0:x1] |= (diff[y0:y1, x0:x1] > t).astype(np.uint8)  # type: ignore[misc]
    fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
    fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    cw, ch = CARD_MM[0] * px_per_mm, CARD_MM[1] * px_per_mm
    quads, others = _card_blobs(fg, cw, ch, size_tolerance, min_fill)
    inner = (margin_mm * px_per_mm, margin_mm * px_per_mm, w - margin_mm * px_per_mm, h - margin_mm * px_per_mm)
    others = [b for b in others if _overlaps(b, inner)]
    if others or not quads:
        # a white card on a pale cloth differs from it only at its outline: look for closed
        # edges too, and let a card found that way explain the blobs (its pips) inside it
        for q in _edge_quads(blur, cw, ch, size_tolerance, min_fill):
            if all(np.linalg.norm(q.mean(axis=0) - k.mean(axis=0)) > 0.3 * cw for k in quads):
                quads.append(q)
        others = [b for b in others
                  if not any(cv2.pointPolygonTest(q.astype(np.float32), b[4], False) >= 0 for q in quads)]
    return quads, others


def _card_blobs(fg: np.ndarray, cw: float, ch: float, size_tolerance: float, min_fill: float,
                grow: float = 0.0) -> tuple[list[np.ndarray], list[tuple[int, int, int, int, tuple[float, float]]]]:
    """Card-shaped blobs (as corner arrays) and the other sizeable blobs (bounding box, centre)."""
    contours, _ = cv2.findContours(fg, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    card_area = cw * ch
    quads: list[np.ndarray] = []
    others: list[tuple[int, int, int, int, tuple[float, float]]] = []
    for cnt in contours:
        area = cv2.contourArea(cnt)
        if area < 0.06 * card_area:
            continue  # specks, a crumb, a marker corner: too small to hide a card
        (cx, cy), (rw, rh), ang = cv2.minAreaRect(cnt)
        short, long_ = sorted((rw, rh))
        fill = area / max(rw * rh, 1e-6)
        if (abs(short - grow - cw) <= size_tolerance * cw and abs(long_ - grow - ch) <= size_tolerance * ch
                and fill >= min_fill):
            # the size is known: keep the blob's centre and angle, impose the card's true size
            # (a blob grows or shrinks with the threshold; its centre hardly moves)
            size = (cw, ch) if rw < rh else (ch, cw)
            quads.append(cv2.boxPoints(((cx, cy), size, ang)).astype(np.float64))
        else:
            x, y, bw, bh = cv2.boundingRect(cnt)
            others.append((x, y, x + bw, y + bh, (float(cx), float(cy))))
    return quads, others


def _overlaps(blob: tuple[int, int, int, int, tuple[float, float]], box: tuple[float, float, float, float]) -> bool:
    x0, y0, x1, y1, _ = blob
    return x0 < box[2] and box[0] < x1 and y0 < box[3] and box[1] < y1


def _edge_quads(blur: np.ndarray, cw: float, ch: float, size_tolerance: float, min_fill: float) -> list[np.ndarray]:
    """Cards as regions enclosed by edges (for low-contrast tables)."""
    gray = cv2.cvtColor(blur, cv2.COLOR_BGR2GRAY)
    edges = cv2.dilate(cv2.Canny(gray, 45, 110), np.ones((3, 3), np.uint8))
    h, w = edges.shape
    flood = edges.copy()
    ffmask = np.zeros((h + 2, w + 2), np.uint8)
    for seed in ((0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1)):
        if flood[seed[1], seed[0]] == 0:
            cv2.floodFill(flood, ffmask, seed, 128)
    filled = (flood != 128).astype(np.uint8)  # edges and everything they enclose
    # cut off noise edges hanging on to the outline (the card is solid, they are thin)
    filled = cv2.morphologyEx(filled, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (9, 9)))
    # the filled outline is a few pixels larger than the card (blur, edge width, dilation)
    quads, _ = _card_blobs(filled, cw, ch, size_tolerance, min_fill, grow=7.0)
    return quads


def crop_card(image: np.ndarray, corners_px: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Warp a card (image corners, any order) to a portrait crop of ``size`` (width, height)."""
    cw, ch = size
    dst = np.array([[0, 0], [cw - 1, 0], [cw - 1, ch - 1], [0, ch - 1]], dtype=np.float32)
    mtx = cv2.getPerspectiveTransform(order_card_corners(corners_px).astype(np.float32), dst)
    return cv2.warpPerspective(image, mtx, (cw, ch), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)

