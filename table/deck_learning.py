"""The night teaches the deck: every card the referee accepts adds its crop to an enrolment.

Players bring their own deck, worn and stained, a design the network never saw. A human referee
gets to know such a deck during the night; so does the camera. Each card the referee accepts, a
card the host confirmed or corrected on the dashboard, or a read well above the open-set rule,
adds the crop's embedding (``VisionEvent.view``) to the night's enrolment, and the classifier
reads through it from the next frame on (`vision.enroll.Prototypes`, the same re-weighing that
`loo-table enroll` sets up, on top of that enrolment when there is one).

Guards, because a wrong view makes a confident wrong read later:

- only host-answered crops, and camera reads at or above `LEARN_SURE_READS` (far above the rule);
- no view from a crop whose outline the finder was unsure of (the watcher sends none);
- at most `MAX_VIEWS_PER_CARD` views per card (host answers are kept before sure reads);
- a view follows its ledger event: each is keyed by the ``action`` event it became, and
  `NightDeck.reconcile` (after every referee step) drops the view of an undone card and moves the
  view of a corrected card to the card the host gave. A wrong host correction, later put right or
  undone, leaves nothing behind;
- a crop counts as near a learned view only above `NIGHT_MATCH_FLOOR` (else the network's own
  probabilities and rule judge it).

The store is ``<ledger>.deck.npz`` beside the ledger (written atomically after every change, so a
restart in the middle of the night keeps what was learned); it records the model's SHA-256 and
the night's first ledger event, so it is ignored for another model or another night. `reset()`
(the Admin page, `loo-table deck --reset`) forgets it.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from table.ledger import Ledger

if TYPE_CHECKING:  # the classifier needs onnxruntime; tests give a stand-in with its methods
    from vision.classifier import CardClassifier
    from vision.enroll import Prototypes

__all__ = ["NightDeck", "View", "deck_path", "stored_summary", "LEARN_SURE_READS", "MAX_VIEWS_PER_CARD", "NIGHT_MATCH_FLOOR"]

#: A camera read is learned only at this confidence or above: the network's own rule accepts from
#: 0.62 and enrolment's from 0.9885, so a read this sure is far from either edge.
LEARN_SURE_READS = 0.999
#: Views kept per card: enough for a card seen in a few lights and angles, few enough that one
#: bad view cannot outvote the others.
MAX_VIEWS_PER_CARD = 4
#: How close (cosine) a crop must come to a learned view before the learned views have a say. On
#: the demo's table camera (nights of seeds 11 and 12, not the nights measured), a crop of a stained
#: card lies at 0.92 or closer to an earlier crop of the same card in 95 % of cases (0.89 at worst),
#: and at 0.86 at most from any other card's (`python bench/deck_learning.py --similarities 11,12`).
NIGHT_MATCH_FLOOR = 0.90
DEFAULT_RULE = (0.9885, 0.0)  # for a classifier that does not say what its network's rule is

FORMAT = "loo-table-night-deck/1"


def deck_path(ledger_path: str | os.PathLike[str]) -> Path:
    """``night.db`` -> ``night.db.deck.npz`` (beside the ledger; `loo-table backup` copies the ledger only)."""
    p = Path(ledger_path)
    return p.with_name(p.name + ".deck.npz")


def stored_summary(path: str | os.PathLike[str]) -> dict[str, int | dict[str, int]]:
    """What a stored night deck holds, without a model (for `loo-table deck show`): views per
    card and by source. Raises ValueError (one line) for a file that is not one."""
    p = Path(path)
    try:
        with np.load(p, allow_pickle=False) as z:
            if str(z["format"]) != FORMAT:
                raise ValueError("format")
            labels = [str(x) for x in z["label"]]
            sources = [str(x) for x in z["source"]]
    except FileNotFoundError:
        raise
    except Exception as exc:
        raise ValueError(f"{p}: not a night-deck file ({type(exc).__name__})") from None
    per: dict[str, int] = {}
    for lab in labels:
        per[lab] = per.get(lab, 0) + 1
    return {"views": len(labels), "cards": len(per), "from_host": sources.count("host"),
            "from_sure_reads": sources.count("sure"), "from_deck_shown": sources.count("tour"),
            "per_card": dict(sorted(per.items()))}


@dataclass(frozen=True)
class View:
    """One learned crop: the ``action`` event it became (``key``), its card, and how it was
    accepted (``host``: the host confirmed or corrected it; ``sure``: read far above the rule)."""

    key: int
    label: str
    vector: NDArray[np.float32]
    source: str
    deal: int


class NightDeck:
    """The night's learned views; feeds `classifier.set_prototypes` after every change.

    ``classifier`` is the `vision.classifier.CardClassifier` the camera reads with (its enrolment
    at construction, if any, is kept underneath the learned views). Methods are called on the
    referee's thread; the classifier swaps its enrolment atomically for the camera thread.
    """

    def __init__(self, path: str | os.PathLike[str], classifier: CardClassifier, *, night: str = "",
                 cap: int = MAX_VIEWS_PER_CARD, learn_above: float = LEARN_SURE_READS,
                 floor: float = NIGHT_MATCH_FLOOR) -> None:
        from vision.enroll import model_digest

        self.path = Path(path)
        self.classifier = classifier
        self.base: Prototypes | None = getattr(classifier, "prototypes", None)
        self.labels: tuple[str, ...] = tuple(classifier.labels)
        self.model_sha256 = model_digest(classifier.model_path) if getattr(classifier, "model_path", None) else ""
        self.night = night
        self.cap = int(cap)
        self.learn_above = float(learn_above)
        self.floor = float(floor)
        self.views: list[View] = []
        self.note = ""  # why a stored file was not used, for the log
        self.lock = threading.Lock()
        self._load()
        self._apply()

    @classmethod
    def for_ledger(cls, ledger: Ledger, classifier: CardClassifier, *, cap: int = MAX_VIEWS_PER_CARD,
                   learn_above: float = LEARN_SURE_READS, floor: float = NIGHT_MATCH_FLOOR) -> NightDeck:
        """The store beside ``ledger`` (a `table.ledger.Ledger`), for this night: the night is
        named by the hash of the ledger's first event, so a new ledger at the same path starts
        with nothing learned."""
        first = next(iter(ledger.iter_events()), None)
        night = (first.hash or f"{first.seq}:{first.at!r}") if first is not None else ""
        return cls(deck_path(ledger.path), classifier, night=night, cap=cap, learn_above=learn_above, floor=floor)

    # -- what the referee calls ------------------------------------------------------------------
    def learn(self, key: int, label: str, vector: NDArray[np.float32] | None, *, source: str, deal: int,
              confidence: float | None = None) -> bool:
        """Add the view of a card the referee accepted (``source`` ``host``, ``sure``, or ``tour``:
        shown by the host in "show me the deck", `table.deck_tour`, with ``deal`` 0); a sure
        read below `learn_above`, a crop without a view or a label the model lacks adds nothing."""
        if vector is None or label not in self.labels or label == "back":
            return False
        if source == "sure" and (confidence is None or confidence < self.learn_above):
            return False
        if source not in ("host", "sure", "tour"):
            raise ValueError(f"unknown view source {source!r}")
        v = np.asarray(vector, np.float32).reshape(-1)
        n = float(np.linalg.norm(v))
        if not np.isfinite(n) or n <= 0:
            return False
        with self.lock:
            self.views = [w for w in self.views if w.key != key]
            self.views.append(View(int(key), label, v / n, source, int(deal)))
            self._cap(label)
            self._changed()
        return True

    def reconcile(self, deal_number: int, entries: dict[int, str] | None) -> None:
        """Keep the views in step with the ledger: ``entries`` maps the current deal's action
        events (seq) to the card they stand for now (None: no deal in progress). A view of this
        deal whose event was undone goes; one whose card the host corrected moves to that card;
        views of a deal that was abandoned (its number not reached) go."""
        with self.lock:
            kept: list[View] = []
            changed = False
            for v in self.views:
                if v.deal > deal_number or (entries is not None and v.deal == deal_number and v.key not in entries):
                    changed = True
                    continue
                if entries is not None and v.deal == deal_number and entries[v.key] != v.label:
                    v = View(v.key, entries[v.key], v.vector, "host", v.deal)  # the host's word now
                    changed = True
                kept.append(v)
            if changed:
                self.views = kept
                for label in {v.label for v in kept}:
                    self._cap(label)
                self._changed()

    def reset(self) -> int:
        """Forget every learned view (the file goes too); returns how many there were."""
        with self.lock:
            n = len(self.views)
            self.views = []
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
            self._apply()
        return n

    def summary(self) -> dict[str, int]:
        """For the dashboard and the CLI: views and cards learned, by source."""
        with self.lock:
            return {"views": len(self.views), "cards": len({v.label for v in self.views}),
                    "from_host": sum(v.source == "host" for v in self.views),
                    "from_sure_reads": sum(v.source == "sure" for v in self.views),
                    "from_deck_shown": sum(v.source == "tour" for v in self.views)}

    def learned_cards(self) -> set[str]:
        with self.lock:
            return {v.label for v in self.views}

    # -- internals ----------------------------------------------------------------------------------
    def _cap(self, label: str) -> None:
        mine = [v for v in self.views if v.label == label]
        while len(mine) > self.cap:
            sure = [v for v in mine if v.source == "sure"]
            drop = (sure or mine)[0]  # the oldest sure read first, then the oldest host answer
            mine.remove(drop)
            self.views.remove(drop)

    def _changed(self) -> None:
        self._save()
        self._apply()

    def prototypes(self) -> Prototypes | None:
        """The enrolment to read with: the classifier's own (if any) plus the learned views."""
        from vision.enroll import Prototypes

        if not self.views:
            return self.base
        index = {lab: i for i, lab in enumerate(self.labels)}
        vectors = np.stack([v.vector for v in self.views]).astype(np.float32)
        owners = np.array([index[v.label] for v in self.views], np.int32)
        if self.base is not None:
            return Prototypes(self.labels, np.concatenate([self.base.vectors.astype(np.float32), vectors]),
                              np.concatenate([self.base.owners, owners]), self.base.model_sha256,
                              self.base.weight, self.base.threshold, self.base.margin,
                              min_floor=self.base.min_floor)
        # learned views only: past the floor gate, the network's own rule judges the re-weighed
        # probabilities (enrolment's stricter rule was set for a whole deck enrolled at once)
        return Prototypes(self.labels, vectors, owners, self.model_sha256,
                          threshold=float(getattr(self.classifier, "network_threshold", DEFAULT_RULE[0])),
                          margin=float(getattr(self.classifier, "network_margin", DEFAULT_RULE[1])),
                          min_floor=self.floor)

    def _apply(self) -> None:
        setter = getattr(self.classifier, "set_prototypes", None)
        if setter is not None:
            setter(self.prototypes())

    def _save(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        n = len(self.views)
        dim = len(self.views[0].vector) if n else 0
        with open(tmp, "wb") as fh:
            np.savez(fh, format=np.array(FORMAT), model_sha256=np.array(self.model_sha256),
                     night=np.array(self.night), labels=np.array(self.labels),
                     vectors=np.stack([v.vector for v in self.views]).astype(np.float16) if n
                     else np.zeros((0, dim), np.float16),
                     label=np.array([v.label for v in self.views], dtype=str),
                     key=np.array([v.key for v in self.views], np.int64),
                     source=np.array([v.source for v in self.views], dtype=str),
                     deal=np.array([v.deal for v in self.views], np.int64))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)  # a power cut leaves the old file or the new one

    def _load(self) -> None:
        if not self.path.is_file():
            return
        try:
            with np.load(self.path, allow_pickle=False) as z:
                if str(z["format"]) != FORMAT:
                    raise ValueError("format")
                sha, night = str(z["model_sha256"]), str(z["night"])
                labels = tuple(str(x) for x in z["labels"])
                views = [View(int(k), str(lab), np.asarray(vec, np.float32), str(src), int(d))
                         for k, lab, vec, src, d in zip(z["key"], z["label"], z["vectors"], z["source"], z["deal"],
                                                        strict=True)]
        except Exception as exc:  # zip, key or shape errors all mean: not a file we can use
            self.note = f"{self.path}: not a night-deck file ({type(exc).__name__}); starting afresh"
            return
        if sha != self.model_sha256 or labels != self.labels:
            self.note = f"{self.path}: learned with another card model; starting afresh"
        elif night != self.night:
            self.note = f"{self.path}: learned on another night; starting afresh"
        else:
            self.views = [v for v in views if v.label in self.labels]
