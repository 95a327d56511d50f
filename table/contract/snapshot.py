"""The snapshot's shape: what the controller publishes and every page and API client reads.

`TypedDict`s rather than classes because the snapshot travels as JSON (the API, the
Server-Sent-Events stream, the templates' ``s.seats``): the referee's view builder
(`table.view.build_snapshot`) returns a `Snapshot`, and the dashboard tests' in-memory service
(`tests/web/web_fakes.py`) is typed with the same classes and checked against them.
Keys marked ``NotRequired`` are the ones docs/api.md tells clients to treat as optional (no
``from __future__ import annotations`` here: TypedDict must see ``NotRequired`` at run time).
"""

from typing import Literal, NotRequired, TypedDict

from table.contract.json_value import JsonObject

__all__ = ["Alert", "Camera", "ChipEntry", "Commands", "Queued", "FlushClaim", "Play", "Seat", "SeatCheck", "Snapshot", "Status",
           "Trick"]


class Status(TypedDict):
    state: str  # ready, paused, attention, fault
    message: str


class Seat(TypedDict):
    index: int
    name: str
    chips: int
    dealer: bool
    to_act: bool
    declaration: str | None
    tricks_won: int
    light: NotRequired[str]  # on, blink, flash, off
    button: NotRequired[bool]  # the seat has a wired button (false: a late joiner plays from the Admin page)


class Play(TypedDict):
    player: str
    card: str


class Trick(TypedDict):
    number: int
    plays: list[Play]
    winner: NotRequired[str]


AlertKind = Literal["revoke", "unsure", "out_of_turn", "conflict", "contradiction", "camera", "refused",
                    "game_over", "error", "waiting", "power", "files", "camera_stall", "camera_setup"]
"""What an alert is about: the game's (a revoke, a card the camera is unsure of or saw out of turn,
a contradiction, a refusal, the game's end, waiting for the host), the camera's, and the table's
health (`table.health`: the power supply, open files, a camera that stalled, one not calibrated)."""


class Alert(TypedDict):
    """Something the host should see; ``needs_confirmation`` alerts hold the game until answered."""

    id: int
    kind: AlertKind
    seat: str | None
    message: str
    needs_confirmation: bool
    card: NotRequired[str | None]
    top3: NotRequired[list[list[str | float]]]  # [[card, confidence], ...]
    zone: NotRequired[str]
    evidence: NotRequired[str]
    rule: NotRequired[str]
    trick: NotRequired[int]
    picture: NotRequired[bool]  # a picture of the zone is kept with it (GET /admin/alert/<id>.jpg)
    photo: NotRequired[str]  # the stored photo that proves it: its SHA-256 (GET /photo/<hash>.jpg)


class Camera(TypedDict):
    ok: bool
    message: str


class FlushClaim(TypedDict):
    player: str
    cards: list[str]
    valid: bool


class Commands(TypedDict):
    """The host's commands the rules allow now (the engine's ``Deal.table_commands()``)."""

    misdeal: bool
    call_civil: bool
    replay: bool
    claim_flush: list[str]
    show_pam: list[str]


class DeckTour(TypedDict):
    """"Show me the deck" in progress: where to lay the cards, which were enrolled, which not yet."""

    zone: str
    shown: list[str]
    missing: list[str]
    #: the suit being laid out (C, D, H, S), or None for the whole deck
    suit: NotRequired[str | None]


class DeckLearning(TypedDict):
    """What the camera learned of the table's deck tonight."""

    views: int
    cards: int


class SeatCheck(TypedDict):
    """The seat whose button was pressed last between deals (its light flashes): the host checks
    the wiring and the seat order with it. ``seat`` counts from 0; ``player`` sits there, if anyone."""

    seat: int
    player: str | None


class ChipEntry(TypedDict):
    """One of the host's chip entries: ``delta`` now (0: undone), ``first`` as entered."""

    seq: int
    player: str
    delta: int
    first: int
    reason: str
    changed: bool


class Queued(TypedDict):
    """A change asked for during a deal, waiting for the next one (cancel it with ``id``)."""

    id: int
    kind: str
    deal: int
    text: str
    changed: NotRequired[list[str]]


class Snapshot(TypedDict):
    version: int
    status: Status
    variant: str
    deal_number: int
    phase: str
    pool: int
    turn_up: str | None
    trump: str | None
    seats: list[Seat]
    trick: Trick | None
    last_trick: NotRequired[Trick | None]
    alerts: list[Alert]
    last_settlement: JsonObject | None
    game_over: bool
    paused: NotRequired[bool]
    chip_value: NotRequired[str]
    camera: NotRequired[Camera]
    flush_claims: NotRequired[list[FlushClaim]]
    pam_shown: NotRequired[list[str]]
    commands: NotRequired[Commands]
    deck_tour: NotRequired[DeckTour | None]
    deck_learning: NotRequired[DeckLearning | None]
    seat_check: NotRequired[SeatCheck | None]
    chip_log: NotRequired[list[ChipEntry]]
    queued: NotRequired[list[Queued]]
