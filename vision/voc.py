"""Labelled photographs in Pascal VOC form, and scoring what the pipeline reported against them.

Each photo ``NAME.jpg`` has ``NAME.xml`` beside it; every ``<object>`` is one card: ``<name>`` is
its label (a face such as ``QH``, or only a rank: ``queen``, ``Q``) and ``<bndbox>`` an axis-aligned
box around the whole visible card. Written here with the standard library's XML parser rather than
taken from a detection toolkit: the format is a dozen tags, and the toolkits bring torch with them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

_RANK_WORDS = {
    "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "jack": "J", "queen": "Q", "king": "K", "ace": "A",
}
_RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
_SUITS = ("C", "D", "H", "S")


def labelled_photos(folder: Path) -> list[tuple[Path, Path]]:
    """(photo, label file) pairs of a folder, in name order: every photo with a ``.xml`` beside it."""
    from vision.image_file import IMAGE_EXTENSIONS

    return [(p, p.with_suffix(".xml")) for p in sorted(folder.iterdir())
            if p.suffix.lower() in IMAGE_EXTENSIONS and p.with_suffix(".xml").is_file()]


class LabelError(ValueError):
    """A label file that cannot be used; the message names the file and the reason."""


@dataclass(frozen=True)
class LabelledCard:
    """One labelled card: ``rank`` always, ``suit`` when the label names it; ``box`` is
    ``(xmin, ymin, xmax, ymax)`` in the photo's own pixels."""

    rank: str
    suit: str | None
    box: tuple[float, float, float, float]


def parse_label(name: str) -> tuple[str, str | None]:
    """``"queen"`` -> ``("Q", None)``; ``"10H"`` -> ``("10", "H")``; ``"Q"`` -> ``("Q", None)``."""
    word = name.strip()
    if word.lower() in _RANK_WORDS:
        return _RANK_WORDS[word.lower()], None
    up = word.upper()
    if up in _RANKS:
        return up, None
    if len(up) >= 2 and up[-1] in _SUITS and up[:-1] in _RANKS:
        return up[:-1], up[-1]
    raise ValueError(f"unknown card label {name!r}")


def rank_of(card: str) -> str:
    """The rank of a face in the project's notation (``"10H"`` -> ``"10"``)."""
    return card[:-1]


def read_labels(xml_path: Path, image_size: tuple[int, int] | None = None) -> list[LabelledCard]:
    """The labelled cards of one photo. ``image_size`` ``(width, height)`` of the photo as decoded:
    when the label file was made for another size of the same photo, its boxes are scaled."""
    try:
        root = ET.parse(xml_path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise LabelError(f"{xml_path}: not a readable VOC label file ({exc})") from None
    size = root.find("size")
    sx = sy = 1.0
    if size is not None and image_size is not None:
        try:
            lw, lh = float(size.findtext("width", "0")), float(size.findtext("height", "0"))
        except ValueError:
            lw = lh = 0.0
        if lw > 0 and lh > 0:
            sx, sy = image_size[0] / lw, image_size[1] / lh
    cards = []
    for obj in root.iter("object"):
        box = obj.find("bndbox")
        try:
            rank, suit = parse_label(obj.findtext("name", ""))
            if box is None:
                raise ValueError("no bndbox")
            x0, y0, x1, y1 = (float(box.findtext(k, "nan")) for k in ("xmin", "ymin", "xmax", "ymax"))
        except ValueError as exc:
            raise LabelError(f"{xml_path}: {exc}") from None
        cards.append(LabelledCard(rank, suit, (x0 * sx, y0 * sy, x1 * sx, y1 * sy)))
    return cards


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two ``(xmin, ymin, xmax, ymax)`` boxes."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def quad_box(corners: np.ndarray) -> tuple[float, float, float, float]:
    """The axis-aligned box around a reported card's four corners."""
    c = np.asarray(corners, np.float64)
    return float(c[:, 0].min()), float(c[:, 1].min()), float(c[:, 0].max()), float(c[:, 1].max())


@dataclass
class Tally:
    """Counts over photos: a labelled card is *found* when a reported card's box overlaps its box
    with IoU >= 0.5 (each report matched at most once, best overlap first), then *right* (the
    named card's rank, and suit when labelled, agree), *wrong* (a different card named) or
    *unsure* (found, nothing named); *missed* when nothing matches; *extra* counts reported cards
    that match no label. ``wrong_examples`` and ``lost_examples`` (each card missed or left
    unsure, with the report lying nearest it) say which cards, for a person to look at."""

    photos: int = 0
    cards: int = 0
    found: int = 0
    right: int = 0
    wrong: int = 0
    unsure: int = 0
    missed: int = 0
    extra: int = 0
    ms: list[float] = field(default_factory=list)
    wrong_examples: list[str] = field(default_factory=list)
    lost_examples: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in ("photos", "cards", "found", "right", "wrong", "unsure", "missed", "extra"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.ms.extend(other.ms)
        self.wrong_examples.extend(other.wrong_examples)
        self.lost_examples.extend(other.lost_examples)


def score_photo(labels: Sequence[LabelledCard], reported: Sequence[tuple[tuple[float, float, float, float], str | None]],
                *, iou: float = 0.5, name: str = "") -> Tally:
    """Score one photo. ``reported`` holds ``(box, card)`` pairs, ``card`` None when unsure."""
    t = Tally(photos=1, cards=len(labels))
    pairs = sorted(((box_iou(lab.box, rep[0]), i, j) for i, lab in enumerate(labels)
                    for j, rep in enumerate(reported)), reverse=True)
    used_l: set[int] = set()
    used_r: set[int] = set()
    for v, i, j in pairs:
        if v < iou:
            break
        if i in used_l or j in used_r:
            continue
        used_l.add(i)
        used_r.add(j)
        t.found += 1
        card = reported[j][1]
        lab = labels[i]
        if card is None:
            t.unsure += 1
            t.lost_examples.append(f"{name}: {_described(lab)} unsure, box IoU {v:.2f}")
        elif rank_of(card) == lab.rank and (lab.suit is None or card[-1] == lab.suit):
            t.right += 1
        else:
            t.wrong += 1
            t.wrong_examples.append(f"{name}: {lab.rank}{lab.suit or ''} read as {card}")
    t.missed = len(labels) - len(used_l)
    t.extra = len(reported) - len(used_r)
    for i, lab in enumerate(labels):
        if i not in used_l:
            near = max(range(len(reported)), key=lambda j: box_iou(lab.box, reported[j][0]), default=None)
            what = "nothing reported there" if near is None or box_iou(lab.box, reported[near][0]) == 0 else \
                f"nearest report {reported[near][1] or 'unsure'} at box IoU {box_iou(lab.box, reported[near][0]):.2f}"
            t.lost_examples.append(f"{name}: {_described(lab)} missed, {what}")
    return t


def _described(lab: LabelledCard) -> str:
    """A labelled card as a person finds it in the photo: its name and where its box lies."""
    return f"{lab.rank}{lab.suit or ''} at ({', '.join(f'{v:.0f}' for v in lab.box)})"
