"""Labelled photographs, and scoring what the pipeline reported against them.

Two forms of label. Pascal VOC: each photo ``NAME.jpg`` has ``NAME.xml`` beside it; every
``<object>`` is one card: ``<name>`` is its label (a face such as ``QH``, or only a rank: ``queen``,
``Q``) and ``<bndbox>`` an axis-aligned box around the whole visible card. A card list: a folder's
``labels.tsv`` names, for each photo, the cards in it (``club1.png<TAB>AC,2C,...``) with no boxes;
such a photo is scored order-free (:func:`score_listed_photo`). Written here with the standard library's XML parser rather than
taken from a detection toolkit: the format is a dozen tags, and the toolkits bring torch with them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vision.labels import RANKS, SUITS

_RANK_WORDS = {
    "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "jack": "J", "queen": "Q", "king": "K", "ace": "A",
}
_RANKS = RANKS
_SUITS = SUITS


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
    #: each labelled card's outcome by its rank: ``ranks["4"]["wrong"]``; outcomes are
    #: "right", "wrong", "unsure" and "missed"
    ranks: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, other: Tally) -> None:
        for name in ("photos", "cards", "found", "right", "wrong", "unsure", "missed", "extra"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.ms.extend(other.ms)
        self.wrong_examples.extend(other.wrong_examples)
        self.lost_examples.extend(other.lost_examples)
        for rank, counts in other.ranks.items():
            self.ranks.setdefault(rank, Counter()).update(counts)

    def count(self, rank: str, outcome: str) -> None:
        """One labelled card of ``rank`` came out as ``outcome``."""
        self.ranks.setdefault(rank, Counter())[outcome] += 1

    def rank_rows(self) -> list[tuple[str, int, int, int, int, int]]:
        """``(rank, cards, right, wrong, unsure, missed)`` for each rank labelled, in rank order."""
        return [(r, sum(c.values()), c["right"], c["wrong"], c["unsure"], c["missed"])
                for r in _RANKS if (c := self.ranks.get(r)) is not None]

    def worst_rank(self) -> tuple[str, float] | None:
        """The rank read right least often, and its share right."""
        rows = self.rank_rows()
        if not rows:
            return None
        r = min(rows, key=lambda row: (row[2] / row[1], _RANKS.index(row[0])))
        return r[0], r[2] / r[1]


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
            t.count(lab.rank, "unsure")
            t.lost_examples.append(f"{name}: {_described(lab)} unsure, box IoU {v:.2f}")
        elif rank_of(card) == lab.rank and (lab.suit is None or card[-1] == lab.suit):
            t.right += 1
            t.count(lab.rank, "right")
        else:
            t.wrong += 1
            t.count(lab.rank, "wrong")
            t.wrong_examples.append(f"{name}: {lab.rank}{lab.suit or ''} read as {card}")
    t.missed = len(labels) - len(used_l)
    t.extra = len(reported) - len(used_r)
    for i, lab in enumerate(labels):
        if i not in used_l:
            t.count(lab.rank, "missed")
            near = max(range(len(reported)), key=lambda j: box_iou(lab.box, reported[j][0]), default=None)
            what = "nothing reported there" if near is None or box_iou(lab.box, reported[near][0]) == 0 else \
                f"nearest report {reported[near][1] or 'unsure'} at box IoU {box_iou(lab.box, reported[near][0]):.2f}"
            t.lost_examples.append(f"{name}: {_described(lab)} missed, {what}")
    return t


def _described(lab: LabelledCard) -> str:
    """A labelled card as a person finds it in the photo: its name and where its box lies."""
    return f"{lab.rank}{lab.suit or ''} at ({', '.join(f'{v:.0f}' for v in lab.box)})"


#: The name of a folder's card-list label file (see the module's docstring).
CARD_LISTS = "labels.tsv"


def read_card_lists(path: Path) -> dict[str, list[str]]:
    """``{photo file name: [cards in it]}`` from a ``labels.tsv`` (lines ``NAME<TAB>AS,10H,...``;
    ``#`` starts a comment). Cards are in the project's notation; a photo's cards are distinct."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelError(f"{path}: not a readable card list ({exc})") from None
    out: dict[str, list[str]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        photo, _, cards = line.partition("\t")
        names = [c.strip().upper() for c in cards.split(",") if c.strip()]
        try:
            parsed = [parse_label(c) for c in names]
        except ValueError as exc:
            raise LabelError(f"{path}:{n}: {exc}") from None
        if not names or any(suit is None for _rank, suit in parsed):
            raise LabelError(f"{path}:{n}: expected a photo name, a tab and its cards (AS,10H,...)")
        if len(set(names)) != len(names):
            raise LabelError(f"{path}:{n}: a card is listed twice in {photo.strip()}")
        out[photo.strip()] = names
    return out


def listed_photos(folder: Path) -> list[tuple[Path, list[str]]]:
    """(photo, its cards) for each photo its ``labels.tsv`` lists, in name order; a listed photo
    that is not in the folder is an error."""
    lists = read_card_lists(folder / CARD_LISTS)
    missing = [name for name in lists if not (folder / name).is_file()]
    if missing:
        raise LabelError(f"{folder / CARD_LISTS}: lists {missing[0]}, which is not in the folder")
    return [(folder / name, lists[name]) for name in sorted(lists)]


def score_listed_photo(expected: Sequence[str], named: Sequence[str], unsure: int, *, name: str = "") -> Tally:
    """Score one photo whose label lists its cards but not where they lie, order-free: with E the
    cards listed and N the cards named, right = |E ∩ N|, confidently wrong = min(|E − N|, |N − E|),
    extra = the rest of N − E, unsure = the ``unsure`` reports that account for cards not read,
    missed = the rest. By rank, a wrong name is charged to an unread card of the same suit where
    there is one (a misread keeps the suit more often than the rank), else to the unread card
    first in rank order; unsure and missed go to the remaining unread cards in rank order."""
    E, N = set(expected), set(named)
    t = Tally(photos=1, cards=len(E))
    unread = sorted(E - N, key=_card_order)
    misnamed = sorted(N - E, key=_card_order)
    t.right = len(E & N)
    t.wrong = min(len(unread), len(misnamed))
    t.extra = len(misnamed) - t.wrong + (len(named) - len(N))
    t.unsure = min(unsure, len(unread) - t.wrong)
    t.missed = len(unread) - t.wrong - t.unsure
    t.found = t.right + t.wrong + t.unsure
    for card in E & N:
        t.count(rank_of(card), "right")
    for card in misnamed[:t.wrong]:
        same_suit = [u for u in unread if u[-1] == card[-1]]
        truth = (same_suit or unread)[0]
        unread.remove(truth)
        t.count(rank_of(truth), "wrong")
        t.wrong_examples.append(f"{name}: {card} named, not in the photo (unread: {truth} or another)")
    for k, card in enumerate(unread):
        outcome = "unsure" if k < t.unsure else "missed"
        t.count(rank_of(card), outcome)
        t.lost_examples.append(f"{name}: {card} {outcome}")
    return t


def _card_order(card: str) -> tuple[int, str]:
    return _RANKS.index(rank_of(card)), card[-1]
