"""Find and read every card in one photo: the pipeline behind ``loo-table identify``.

One function, so that the command, ``bench/realphotos.py`` (which scores it on labelled real
photographs) and the live table's settled-frame read all run the same code: a figure measured on
photos is then a figure of the product, not of a copy of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from vision.classifier import CardClassifier, Reading
from vision.detector import CardDetector
from vision.finder import FoundCard, find_cards


@dataclass(frozen=True)
class CardInPhoto:
    """One card found in a photo and what the reader made of it."""

    found: FoundCard
    reading: Reading

    def to_dict(self) -> dict[str, Any]:
        """The JSON line entry of ``loo-table identify``: the reading plus the card's corners."""
        entry = self.reading.to_dict()
        entry["corners"] = [[round(float(x), 1), round(float(y), 1)] for x, y in self.found.corners]
        return entry


def identify(image_bgr: np.ndarray, classifier: CardClassifier, detector: CardDetector | None = None) -> list[CardInPhoto]:
    """Every card in ``image_bgr`` with its reading, in the finder's order (top to bottom)."""
    found = find_cards(image_bgr, detector=detector)
    readings = classifier.classify([f.crop for f in found])
    return [CardInPhoto(f, r) for f, r in zip(found, readings, strict=True)]
