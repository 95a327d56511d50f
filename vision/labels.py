"""The card notation vision reads and reports: the 52 faces as ``10H``, ``JC``, ``AS``, and ``back``.

Vision imports nothing outside itself (not even the engine), so the label set is defined here, once,
with no dependencies: the classifier's classes, the synthetic tables, enrolment and the events all
use it. It is exactly the engine's card text — ``FACES`` is ``[str(c) for c in engine.DECK]`` in
the same order (tests/vision/test_labels.py holds them together) — so the referee and the
dashboard turn a label into an ``engine.Card`` with ``Card.parse`` and back with ``str(card)``.
"""

from __future__ import annotations

from typing import Final

__all__ = ["RANKS", "SUITS", "BACK", "FACES", "LABELS", "canonical_label"]

RANKS: Final = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SUITS: Final = ("C", "D", "H", "S")
BACK: Final = "back"
FACES: Final[tuple[str, ...]] = tuple(r + s for s in SUITS for r in RANKS)
"""The 52 faces, suit by suit (clubs, diamonds, hearts, spades), 2 up to the ace."""
LABELS: Final[tuple[str, ...]] = (*FACES, BACK)
"""The classifier's classes: the 52 faces then the face-down class."""

_FACE_SET: Final = frozenset(FACES)


def canonical_label(text: str) -> str | None:
    """``"qh"`` → ``"QH"``, ``"th"`` / ``"10h"`` → ``"10H"``, ``"Back"`` → ``"back"``; None if
    ``text`` is no label."""
    t = text.strip().upper()
    if t == "BACK":
        return BACK
    if len(t) == 2 and t[0] == "T":
        t = "10" + t[1]
    return t if t in _FACE_SET else None
