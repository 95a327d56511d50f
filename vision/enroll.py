"""Deck enrolment: adapt the classifier to one physical deck with nearest prototypes.

A network trained on rendered artwork reads an unfamiliar deck well but not perfectly; a few
photos of the user's own cards fix most of the rest without retraining (no torch on the Pi). Each
enrolled crop is embedded by the model's ``embedding`` output and stored; at run time the cosine
similarity to the nearest stored crop of each card is added to the network's log-probabilities,
so an enrolled card that looks exactly like a stored one wins, and cards not enrolled still fall
back to the network alone.

The file is a small ``.npz`` (float16 vectors, tens of kB for a deck with three crops per card)
that records the model file's SHA-256, so a prototype file made for another model is refused.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vision.labels import LABELS, canonical_label

#: Weight of the prototype similarity against the network's log-probability, and the open-set rule
#: used with prototypes (enrolment makes readings more confident, so the rule is stricter). Chosen
#: by ``python -m models.evaluate`` on held-out deck designs, see models/README.md.
DEFAULT_WEIGHT = 20.0
DEFAULT_THRESHOLD = 0.9885
DEFAULT_MARGIN = 0.0
MATCH_SLACK = 0.06  # how far under the closest same-card pair of enrolled views a match may fall
MAX_PER_CARD = 8


class EnrollError(ValueError):
    """The enrolment input or file cannot be used (one line, naming the file)."""


def model_digest(model_path: str | os.PathLike[str]) -> str:
    return hashlib.sha256(Path(model_path).read_bytes()).hexdigest()


@dataclass
class Prototypes:
    """Stored embeddings: ``vectors`` (K, D) unit rows, ``owners`` (K,) label index per row."""

    labels: tuple[str, ...]
    vectors: np.ndarray
    owners: np.ndarray
    model_sha256: str = ""
    weight: float = DEFAULT_WEIGHT
    threshold: float = DEFAULT_THRESHOLD
    margin: float = DEFAULT_MARGIN
    #: the least ``match_floor`` may be (an enrolment learned a few views at a time has too few
    #: pairs of views of one card to measure its own floor; see ``table.deck_learning``)
    min_floor: float = 0.0
    _floor: float | None = field(default=None, repr=False, compare=False)

    @classmethod
    def build(cls, labels: Sequence[str], items: Iterable[tuple[str, np.ndarray]], *, model_sha256: str = "",
              weight: float = DEFAULT_WEIGHT, threshold: float = DEFAULT_THRESHOLD,
              margin: float = DEFAULT_MARGIN) -> Prototypes:
        """From ``(label, embedding)`` pairs; at most :data:`MAX_PER_CARD` kept per label."""
        index = {lab: i for i, lab in enumerate(labels)}
        vecs: list[np.ndarray] = []
        owners: list[int] = []
        count: dict[str, int] = {}
        for label, emb in items:
            if label not in index:
                raise EnrollError(f"unknown card {label!r} (expected one of {', '.join(labels[:3])}, ..., back)")
            if count.get(label, 0) >= MAX_PER_CARD:
                continue
            count[label] = count.get(label, 0) + 1
            v = np.asarray(emb, np.float32).reshape(-1)
            vecs.append(v / max(float(np.linalg.norm(v)), 1e-8))
            owners.append(index[label])
        if not vecs:
            raise EnrollError("no cards to enrol")
        return cls(tuple(labels), np.stack(vecs), np.array(owners, np.int32), model_sha256, weight, threshold, margin)

    @property
    def enrolled(self) -> set[str]:
        return {self.labels[int(i)] for i in set(self.owners.tolist())}

    def save(self, path: str | os.PathLike[str]) -> None:
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as fh:
            np.savez_compressed(fh, labels=np.array(self.labels), vectors=self.vectors.astype(np.float16),
                                owners=self.owners, model_sha256=np.array(self.model_sha256),
                                weight=np.array(self.weight), threshold=np.array(self.threshold),
                                margin=np.array(self.margin))
        os.replace(tmp, path)  # a power cut leaves the old file or the new one, never half of one

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, labels: Sequence[str] | None = None,
             model_path: str | os.PathLike[str] | None = None) -> Prototypes:
        path = Path(path)
        if not path.is_file():
            raise EnrollError(f"{path}: enrolment file missing")
        try:
            with np.load(path, allow_pickle=False) as z:
                protos = cls(tuple(str(x) for x in z["labels"]), z["vectors"].astype(np.float32),
                             z["owners"].astype(np.int32), str(z["model_sha256"]), float(z["weight"]),
                             float(z["threshold"]), float(z["margin"]))
        except Exception as exc:  # zipfile / KeyError / ValueError: all mean "not our file"
            raise EnrollError(f"{path}: not an enrolment file ({type(exc).__name__})") from None
        if labels is not None and tuple(labels) != protos.labels:
            raise EnrollError(f"{path}: made for a model with other labels")
        if model_path is not None and protos.model_sha256 and protos.model_sha256 != model_digest(model_path):
            raise EnrollError(f"{path}: made for another model file than {Path(model_path).name}; enrol again")
        return protos

    def similarities(self, emb: np.ndarray) -> np.ndarray:
        """(N, len(labels)) cosine similarity to the nearest stored crop of each label (NaN if none)."""
        e = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-8)
        sim = e @ self.vectors.T  # (N, K)
        out = np.full((len(e), len(self.labels)), np.nan, np.float32)
        for li in np.unique(self.owners):
            out[:, li] = sim[:, self.owners == li].max(axis=1)
        return out

    @property
    def match_floor(self) -> float:
        """How close a crop must come to some enrolled view before enrolment has a say.

        Why: a crop that resembles no enrolled view well (a coffee stain over both indices, a
        finger over the corner) still lies *nearer* to one card's views than to the others', and
        adding that small lead to the network's guess made such cards confidently wrong. The floor
        comes from the enrolment itself: the lowest similarity between two views of the same card
        (each view against the card's other views), less ``MATCH_SLACK``. With one view per card
        there is nothing to measure and no floor.
        """
        if self._floor is None:
            v = self.vectors.astype(np.float32)
            v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-8)
            sim = v @ v.T
            genuine = []
            for i in range(len(v)):
                same = (self.owners == self.owners[i]) & (np.arange(len(v)) != i)
                if same.any():
                    genuine.append(float(sim[i, same].max()))
            self._floor = max(self.min_floor, min(genuine) - MATCH_SLACK if genuine else 0.0)
        return self._floor

    def probabilities(self, emb: np.ndarray, net_probs: np.ndarray) -> np.ndarray:
        """Network probabilities re-weighted by prototype similarity (rows sum to 1); rows whose
        best match is under ``match_floor`` keep the network's own probabilities."""
        return self.reweigh(emb, net_probs)[0]

    def vouched(self, emb: np.ndarray, probs: np.ndarray, *, similarities: np.ndarray | None = None) -> np.ndarray:
        """For each row, whether an enrolled view of the row's best card (``probs``, as
        :meth:`reweigh` gave them) lies at least ``match_floor`` near the crop.

        Why: a crop near the views of one card (over the floor) has its probabilities re-weighed
        for every card, and a card whose own views lie far below the floor can come out first
        because the re-weighing pushed the others down. On the demo's table (seed 5, a stained queen
        of clubs on the turn-up), the network read the queen of hearts at 0.26; the night's views
        of the queen of clubs lay at 0.90, of the queen of diamonds at 0.87, of the queen of hearts
        far off, and the re-weighed queen of diamonds reached 0.62: accepted, and wrong."""
        if len(emb) == 0:
            return np.zeros(0, bool)
        sim = self.similarities(emb) if similarities is None else similarities
        best = np.asarray(probs).argmax(axis=1)
        own = sim[np.arange(len(sim)), best]
        return np.where(np.isnan(own), False, own >= self.match_floor)

    def reweigh(self, emb: np.ndarray, net_probs: np.ndarray, *,
                similarities: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`probabilities`, and which rows matched an enrolled view (the others are the
        network's own, to be judged by the network's open-set rule, not enrolment's stricter one).
        ``similarities``: :meth:`similarities` of ``emb``, where the caller has them already."""
        sim = self.similarities(emb) if similarities is None else similarities
        enrolled = ~np.isnan(sim[0]) if len(sim) else np.zeros(len(self.labels), bool)
        # labels with no prototype get the mean similarity of the row's enrolled ones: neutral
        fill = np.nanmean(sim, axis=1, keepdims=True) if enrolled.any() else np.zeros((len(sim), 1), np.float32)
        sim = np.where(np.isnan(sim), fill, sim)
        logit = np.log(np.maximum(net_probs, 1e-9)) + self.weight * sim
        logit -= logit.max(axis=1, keepdims=True)
        p = np.exp(logit)
        p = p / p.sum(axis=1, keepdims=True)
        matched = sim.max(axis=1) >= self.match_floor  # the fill never exceeds a row's enrolled best
        return np.where(matched[:, None], p, net_probs).astype(np.float32), matched


def guide_order() -> tuple[str, ...]:
    """The order in which `loo-table enroll` asks for the cards: suit by suit, 2..A, then a back."""
    return LABELS


def label_from_filename(path: Path) -> str | None:
    """``QH.jpg``, ``qh-2.png``, ``10h_front.jpeg`` -> ``"QH"`` / ``"10H"``; ``back.jpg`` -> ``"back"``."""
    return canonical_label(path.stem.replace("_", "-").split("-")[0])
