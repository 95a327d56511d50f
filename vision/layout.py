"""A deck laid out for the camera: every card found in the photos, each assigned one of the cards
the host says lie there.

Why an assignment rather than a guess per card: the host names the set (the thirteen clubs, or the
whole deck), and each of those cards lies in a layout once. Thirteen separate guesses can name the
nine twice and the four never (a four of an unfamiliar deck read 0.4 as the nine); read together,
the nine goes to the crop that looks most like it and the four to the crop left, which looks more
like the four than like any other card still free. The cost of giving card c to crop k is
``-log p_k(c)``, the reader's own probability, and the assignment with the least total cost is
found by the Hungarian method (:func:`least_cost_assignment`). Written here rather than taken
from SciPy's ``linear_sum_assignment``: SciPy would add 143 MB to the Pi's install for one
function on a matrix of at most 52 × 104. A find that is no card (a chip, the cloth, a second
outline of one card) may be given no card, at the cost of a card the reader gives it less than
:data:`NO_CARD` of.

Several photos of one layout may be given: each photo is assigned on its own, and a card gets a
view from each photo it was found in. The module knows nothing of enrolment files or of the
table: :func:`read_layout` returns what it assigned, with each crop, for the caller to show the
host and to enrol (``vision.enroll.Prototypes``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vision.classifier import CardClassifier
from vision.detector import CardDetector
from vision.identify import identify
from vision.labels import FACES

#: A find is left without a card where the reader gives every free card less than this
#: probability: it is not one of the named cards (a poker chip, the mat, a card of another suit).
NO_CARD = 1e-3
#: An assigned card the reader itself gives less than this share of the named cards'
#: probability is worth the host's look: the set decided it, not the card's own read.
CHECK_BELOW = 0.5


class LayoutError(ValueError):
    """The named cards cannot be assigned (unknown or repeated names, no photo)."""


@dataclass(frozen=True)
class LaidCard:
    """One find given a card: ``photo`` is its photo's index, ``corners`` its outline (4×2,
    photo pixels), ``crop`` the reader's crop of it, ``share`` the reader's probability of the
    card among the named cards, ``guess`` the reader's own best guess among all cards."""

    card: str
    photo: int
    corners: np.ndarray
    crop: np.ndarray
    share: float
    guess: str

    @property
    def to_check(self) -> bool:
        """Whether the host should look: the reader gave the card under :data:`CHECK_BELOW`."""
        return self.share < CHECK_BELOW


@dataclass(frozen=True)
class Layout:
    """What :func:`read_layout` made of the photos: ``cards`` assigned (several views of a card
    where it lies in several photos), ``missing`` the named cards no photo showed, ``left`` the
    finds given no card."""

    cards: tuple[LaidCard, ...]
    missing: tuple[str, ...]
    left: int

    @property
    def trusted(self) -> tuple[LaidCard, ...]:
        """The cards to enrol without asking: those the reader itself gives at least
        :data:`CHECK_BELOW` of the named cards' probability. A view the set alone decided may be
        no card of the set at all (a card of another suit at the photo's edge, given the one named
        card left), and one wrong view lowers the enrolment's own match floor for every card."""
        return tuple(c for c in self.cards if not c.to_check)

    @property
    def shown(self) -> list[str]:
        """The named cards found, in the order they were named."""
        seen = {c.card for c in self.cards}
        return [c for c in FACES if c in seen]


def parse_cards(text: str) -> list[str]:
    """``"2C,3C,...,AC"`` (or ``"all"``: the whole deck) as the project's card names; a name that
    is no card, or a card named twice, raises :class:`LayoutError`."""
    if text.strip().lower() in ("all", "deck"):
        return list(FACES)
    names = [t.strip().upper() for t in text.split(",") if t.strip()]
    unknown = [n for n in names if n not in FACES]
    if unknown:
        raise LayoutError(f"unknown card {unknown[0]!r} (cards are named like 2C, 10H, QS, AD)")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise LayoutError(f"{twice[0]} is named twice: each card of a layout lies there once")
    if not names:
        raise LayoutError("no cards named")
    return names


def assign(probabilities: np.ndarray, labels: Sequence[str], cards: Sequence[str]) -> list[int | None]:
    """For each row of ``probabilities`` (finds × ``labels``), the index in ``cards`` it is
    given, or None: each card at most once, the total ``-log p`` least (see the module)."""
    probs = np.asarray(probabilities, np.float64)
    if probs.ndim != 2 or probs.shape[1] != len(labels):
        raise ValueError(f"probabilities of shape {probs.shape} for {len(labels)} labels")
    n = len(probs)
    if n == 0:
        return []
    column = [list(labels).index(c) for c in cards]
    cost = -np.log(np.maximum(probs[:, column], 1e-12))
    # one "no card" column per find, at the cost NO_CARD stands for
    cost = np.hstack([cost, np.full((n, n), -np.log(NO_CARD))])
    return [c if c < len(cards) else None for c in least_cost_assignment(cost)]


def least_cost_assignment(cost: np.ndarray) -> list[int]:
    """For each row of ``cost`` (n × m, n <= m, finite), its column: each column used at most once,
    the total cost least. The Hungarian method with potentials (Kuhn and Munkres, in Jonker and
    Volgenant's shortest-augmenting-path form), O(n² m)."""
    c = np.asarray(cost, np.float64)
    n, m = c.shape
    if n > m:
        raise ValueError(f"{n} rows for {m} columns: each row needs a column of its own")
    if not np.isfinite(c).all():
        raise ValueError("costs must be finite")
    u, v = np.zeros(n + 1), np.zeros(m + 1)
    owner = np.zeros(m + 1, np.int64)  # owner[j]: the row (1-based) holding column j; column 0 is the root
    for row in range(1, n + 1):
        owner[0] = row
        j0 = 0
        best = np.full(m + 1, np.inf)
        came = np.zeros(m + 1, np.int64)
        used = np.zeros(m + 1, bool)
        while owner[j0] != 0:
            used[j0] = True
            i0 = owner[j0]
            free = ~used[1:]
            cur = c[i0 - 1] - u[i0] - v[1:]
            better = free & (cur < best[1:])
            best[1:][better] = cur[better]
            came[1:][better] = j0
            j1 = int(np.argmin(np.where(free, best[1:], np.inf))) + 1
            delta = best[j1]
            u[owner[used]] += delta
            v[used] -= delta
            best[~used] -= delta
            j0 = j1
        while j0:  # flip the augmenting path back to the root
            j1 = int(came[j0])
            owner[j0] = owner[j1]
            j0 = j1
    out = [0] * n
    for j in range(1, m + 1):
        if owner[j]:
            out[int(owner[j]) - 1] = j - 1
    return out


def read_layout(photos: Sequence[np.ndarray], cards: Sequence[str], classifier: CardClassifier,
                detector: CardDetector | None = None) -> Layout:
    """Find the cards in each photo (as ``loo-table identify`` does) and assign them ``cards``."""
    if not photos:
        raise LayoutError("no photo of the layout")
    named = list(cards)
    laid: list[LaidCard] = []
    left = 0
    for k, image in enumerate(photos):
        found = identify(image, classifier, detector)
        if not found:
            continue
        crops = [f.found.crop for f in found]
        readings = classifier.classify(crops)
        probs = np.stack([_probabilities(r, classifier) for r in readings])
        given = assign(probs, classifier.labels, named)
        columns = [classifier.labels.index(c) for c in named]
        for f, row, g in zip(found, probs, given, strict=True):
            if g is None:
                left += 1
                continue
            among = row[columns]
            share = float(among[g] / max(float(among.sum()), 1e-12))
            laid.append(LaidCard(named[g], k, np.asarray(f.found.corners, np.float32), f.found.crop, share,
                                 classifier.labels[int(np.argmax(row))]))
    got = {c.card for c in laid}
    return Layout(tuple(laid), tuple(c for c in named if c not in got), left)


def _probabilities(reading: object, classifier: CardClassifier) -> np.ndarray:
    """A reading's probability of every label (the reader gives them with each reading)."""
    probs = getattr(reading, "probabilities", None)
    if probs is None:
        raise ValueError(f"{classifier.model_path}: the reader gave no probabilities")
    return np.asarray(probs.values, np.float64)
