"""What the camera reports, as plain values: event kinds, zone names and ``VisionEvent``.

Kept apart from ``vision.events`` (which needs OpenCV and numpy) so that the referee, the
simulators and the tests can recognise and build events by type without loading the vision stack;
``vision.events`` re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict, get_args

if TYPE_CHECKING:  # a view is a numpy vector; this module loads without numpy
    import numpy as np

__all__ = ["EVENT_KINDS", "EventKind", "VisionEvent", "ZoneContent", "ZoneId", "TURN_UP", "STOCK"]

EventKind = Literal["card_placed", "card_removed", "zone_cleared", "card_face_down", "card_unsure", "conflict"]
"""What happened in a zone; the referee's interpreter tells them apart by this value."""
EVENT_KINDS: Final[tuple[EventKind, ...]] = get_args(EventKind)

_PLACES: Final = ("turn_up", "stock")


@dataclass(frozen=True, slots=True)
class ZoneId:
    """A zone of the table as a value: a seat's place (``seat`` is its index, 0 = the first seat)
    or one of the middle places ``turn_up`` and ``stock``. Written ``seat:2`` / ``turn_up`` in
    calibration files, events and the dashboard's payloads."""

    place: str
    seat: int | None = None

    @classmethod
    def of_seat(cls, index: int) -> ZoneId:
        if index < 0:
            raise ValueError(f"a seat index is 0 or more, not {index}")
        return cls("seat", index)

    @classmethod
    def parse(cls, text: str) -> ZoneId:
        """``"seat:2"`` → seat 2; ``"turn_up"``, ``"stock"``; anything else is a ValueError."""
        name = text.strip()
        if name in _PLACES:
            return cls(name)
        kind, _, index = name.partition(":")
        if kind == "seat" and index.isdigit():
            return cls("seat", int(index))
        raise ValueError(f"unknown zone {text!r} (seat:0, seat:1, …, turn_up or stock)")

    @classmethod
    def of_zone(cls, name: str) -> ZoneId:
        """The id of a layout's zone by its name: :meth:`parse`'s, or, for a zone the table does
        not name (a benchmark's one zone over the whole table), a place of that name, which is
        neither a seat nor the turn-up, so the referee passes it by."""
        try:
            return cls.parse(name)
        except ValueError:
            return cls(name)

    @classmethod
    def seat_of(cls, text: str) -> int | None:
        """The seat index of a zone name, or None for a middle place or no zone at all."""
        try:
            return cls.parse(text).seat
        except ValueError:
            return None

    @property
    def is_seat(self) -> bool:
        return self.seat is not None

    def __str__(self) -> str:
        return f"seat:{self.seat}" if self.seat is not None else self.place


TURN_UP: Final = ZoneId("turn_up")
STOCK: Final = ZoneId("stock")


class ZoneContent(TypedDict):
    """What the watcher holds as lying in one zone (`vision.events.TableWatcher.contents`): the
    faces read, the face-down cards, the cards it is unsure of, and whether something unexplained
    (a hand) is in the way. The camera view labels each zone with it."""

    faces: list[str]
    face_down: int
    unsure: int
    obstructed: bool


@dataclass(frozen=True)
class VisionEvent:
    """One thing that happened on the table. ``zone`` is where (a `ZoneId`; given as a name such as
    ``"seat:2"`` it is parsed, `ZoneId.of_zone`, and ``to_dict`` writes the name); ``card``
    is a face label (``"QH"``, vision.labels) or ``None``; ``top3`` is set for ``card_unsure``;
    ``zones`` lists both places of a ``conflict``; ``count`` is the number of face-down cards now
    in the zone for ``card_face_down``. ``seen_again`` (``card_unsure``) names a card the crop
    read surely as though the watcher was told it cannot lie there (``exclusions``): a card seen
    twice. ``view`` is what the classifier made of the crop (its embedding, for learning the deck),
    or None when the finder was not sure of the card's outline; it is left out of ``to_dict``."""

    kind: EventKind
    zone: ZoneId
    timestamp: float
    card: str | None = None
    confidence: float | None = None
    top3: tuple[tuple[str, float], ...] = ()
    zones: tuple[ZoneId, ...] = ()
    count: int | None = None
    seen_again: str | None = None
    view: np.ndarray | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # a zone by its name (the recordings' expected events, a test's table): parsed once here
        zone: ZoneId | str = self.zone
        if isinstance(zone, str):
            object.__setattr__(self, "zone", ZoneId.of_zone(zone))
        if any(isinstance(z, str) for z in self.zones):
            object.__setattr__(self, "zones", tuple(ZoneId.of_zone(z) if isinstance(z, str) else z
                                                    for z in self.zones))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "zone": str(self.zone), "timestamp": round(self.timestamp, 4)}
        if self.card is not None:
            out["card"] = self.card
        if self.confidence is not None:
            out["confidence"] = round(float(self.confidence), 4)
        if self.top3:
            out["top3"] = [[label, round(float(p), 4)] for label, p in self.top3]
        if self.zones:
            out["zones"] = [str(z) for z in self.zones]
        if self.count is not None:
            out["count"] = self.count
        if self.seen_again is not None:
            out["seen_again"] = self.seen_again
        return out
