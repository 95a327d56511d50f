""""Show me the deck": before the first deal the host lays the table's deck out, a few cards at a
time, in one zone; the camera enrols each card it sees, and the dashboard lists the cards still
missing. The same enrolment as `loo-table enroll` (the crop's embedding as a prototype of its
card, `vision.enroll.Prototypes`), kept with the night's deck learning (`table.deck_learning`),
so it survives a restart and the Admin page's reset forgets it too.

Each card exists once in a deck: a card already shown is excluded from the zone's reads (the
camera's exclusions), so a crop that reads surely as one of them is a contradiction and the host
is asked, as for a card the camera cannot read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from table.contract.snapshot import DeckTour as DeckTourView
from vision.labels import FACES

__all__ = ["DeckTour"]


@dataclass
class DeckTour:
    """The tour in progress: the zone the cards are laid in and the cards enrolled so far."""

    zone: str
    shown: list[str] = field(default_factory=list)
    on_table: set[str] = field(default_factory=set)  # shown and still lying in the zone
    #: the suit the host lays out (C, D, H, S), or None for the whole deck
    suit: str | None = None

    @property
    def named(self) -> list[str]:
        """The cards the host lays out: the suit's thirteen, or the whole deck."""
        return [c for c in FACES if self.suit is None or c.endswith(self.suit)]

    @property
    def missing(self) -> list[str]:
        done = set(self.shown)
        return [c for c in self.named if c not in done]

    @property
    def not_laid(self) -> list[str]:
        """The cards that cannot lie in the zone: not of the suit laid out. The camera reads the
        zone's cards as the named ones still missing, as ``loo-table enroll --cards`` assigns a
        layout: a four read 0.4 as the nine of another suit is the four of this one."""
        return [c for c in FACES if c not in self.named]

    def snapshot(self) -> DeckTourView:
        return {"zone": self.zone, "shown": list(self.shown), "missing": self.missing, "suit": self.suit}

    def next_key(self) -> int:
        """A key for a tour view that no ledger event has: tour views are not tied to a deal."""
        return -(len(self.shown) + 1)
