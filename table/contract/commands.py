"""The dashboard's commands as values: one frozen dataclass per command, validated once.

`parse_command(name, payload)` checks a JSON payload's shape (`web.validate`) and returns the
command's dataclass; the web route, the controller's `TableService` and the referee all take these,
so the list of commands and their fields live here only (`web` never imports `table`; `table`
imports this). The game's own rules (is a misdeal allowed now?) are still the referee's to judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import ClassVar

from table.contract.json_value import Json
from table.contract.payloads import check_command
from table.contract.values import Gesture

__all__ = [
    "AddPlayer", "AdjustChips", "AmendChips", "CancelChange", "RemovePlayer", "CallCivil", "ClaimFlush", "ConfirmCard", "CorrectCard", "DashboardCommand",
    "EndGame", "Misdeal", "NewNight", "Pause", "ResetDeckLearning", "Resume", "SeatButton", "SetZones", "ShowDeck", "ShowPam",
    "Undo", "UpdateSettings",
    "COMMANDS", "COMMAND_TYPES", "parse_command", "to_payload",
]


@dataclass(frozen=True, slots=True)
class ConfirmCard:
    """Accept the card an alert proposes (an unsure reading, a card out of turn)."""

    NAME: ClassVar[str] = "confirm_card"
    alert_id: int


@dataclass(frozen=True, slots=True)
class CorrectCard:
    """The right card: for an alert (``alert_id``), for a zone the camera missed or misread
    (``zone``: ``seat:N`` or ``turn_up``), or for a card already played (``trick`` and ``player``)."""

    NAME: ClassVar[str] = "correct_card"
    card: str
    alert_id: int | None = None
    zone: str | None = None
    trick: int | None = None
    player: str | None = None


@dataclass(frozen=True, slots=True)
class Undo:
    NAME: ClassVar[str] = "undo"


@dataclass(frozen=True, slots=True)
class AdjustChips:
    """The host gives (``delta`` > 0) or takes chips, with a reason for the ledger."""

    NAME: ClassVar[str] = "adjust_chips"
    player: str
    delta: int
    reason: str


@dataclass(frozen=True, slots=True)
class AmendChips:
    """Undo (``delta`` 0) or change an earlier chip entry (``target``: the seq of its
    ``adjust_chips`` event) to ``delta``; the ledger keeps both."""

    NAME: ClassVar[str] = "amend_chips"
    target: int
    delta: int


@dataclass(frozen=True, slots=True)
class RemovePlayer:
    """``player`` leaves with their chips between deals (asked during a deal, at its end); the
    players after their seat move up one."""

    NAME: ClassVar[str] = "remove_player"
    player: str


@dataclass(frozen=True, slots=True)
class CancelChange:
    """Call off a change waiting for the next deal (``id``: the snapshot's ``queued[].id``)."""

    NAME: ClassVar[str] = "cancel_change"
    id: int


@dataclass(frozen=True, slots=True)
class AddPlayer:
    """A late joiner: ``player`` sits down in the next free seat between deals with ``chips``
    bought in (money paid in, like a rebuy) and is dealt in from the next deal."""

    NAME: ClassVar[str] = "add_player"
    player: str
    chips: int


@dataclass(frozen=True, slots=True)
class SeatButton:
    """A seat's button pressed on the dashboard, for a player whose seat has no wired button:
    ``gesture`` is ``press``, ``hold`` or ``double``, meaning what the real button's would."""

    NAME: ClassVar[str] = "seat_button"
    player: str
    gesture: Gesture


@dataclass(frozen=True, slots=True)
class Pause:
    NAME: ClassVar[str] = "pause"


@dataclass(frozen=True, slots=True)
class Resume:
    NAME: ClassVar[str] = "resume"


@dataclass(frozen=True, slots=True)
class EndGame:
    NAME: ClassVar[str] = "end_game"


@dataclass(frozen=True, slots=True)
class UpdateSettings:
    """Some or all of the table's settings; ``options`` are overrides of the variant's defaults."""

    NAME: ClassVar[str] = "update_settings"
    players: tuple[str, ...] | None = None
    variant: str | None = None
    options: Mapping[str, Json] | None = None
    starting_chips: int | None = None
    chip_value: str | None = None
    currency: str | None = None


@dataclass(frozen=True, slots=True)
class NewNight:
    """Once a night is over, start the next one in the same ledger; the night just ended goes
    to the Nights page. Each field left out stays as tonight's: the players (a new list seats its
    first player as the first dealer unless ``first_dealer`` says otherwise), the variant and its
    house rules (another variant starts with its own), the starting chips and the money."""

    NAME: ClassVar[str] = "new_night"
    players: tuple[str, ...] | None = None
    variant: str | None = None
    options: Mapping[str, Json] | None = None
    starting_chips: int | None = None
    chip_value: str | None = None
    first_dealer: int | None = None


@dataclass(frozen=True, slots=True)
class SetZones:
    """Zone rectangles on the table plane, in millimetres, by zone name (``seat:N``, …)."""

    NAME: ClassVar[str] = "set_zones"
    zones: Mapping[str, Mapping[str, float]]


@dataclass(frozen=True, slots=True)
class ClaimFlush:
    """A stander shows five cards as a flush (five-card Loo); the engine judges it."""

    NAME: ClassVar[str] = "claim_flush"
    player: str
    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ShowPam:
    """After a flush has won, a player shows Pam to escape the loo."""

    NAME: ClassVar[str] = "show_pam"
    player: str


@dataclass(frozen=True, slots=True)
class CallCivil:
    """"Pam be civil", right after the ace of trumps is led (``pam_be_civil = on_call``)."""

    NAME: ClassVar[str] = "call_civil"


@dataclass(frozen=True, slots=True)
class Misdeal:
    """A misdeal, before the first card is played; settled by the ``misdeal`` house rule."""

    NAME: ClassVar[str] = "misdeal"


@dataclass(frozen=True, slots=True)
class ResetDeckLearning:
    """Forget what the camera learned of the table's deck tonight (it reads with the network, and
    the enrolment file if any, again)."""

    NAME: ClassVar[str] = "reset_deck_learning"


@dataclass(frozen=True, slots=True)
class ShowDeck:
    """"Show me the deck": ``start`` before a deal, then lay the deck out a few cards at a time in
    ``zone`` (default the turn-up place); each card the camera sees is enrolled and the dashboard
    lists those still missing. ``suit`` (``C``, ``D``, ``H`` or ``S``; None: the whole deck) is
    the suit the host lays out: the camera then reads the cards as the thirteen of that suit.
    ``stop`` ends it (so does the next deal)."""

    NAME: ClassVar[str] = "show_deck"
    action: str
    zone: str | None = None
    suit: str | None = None


DashboardCommand = (ConfirmCard | CorrectCard | Undo | AdjustChips | AmendChips | Pause | Resume | EndGame
                    | UpdateSettings | SetZones | ClaimFlush | ShowPam | CallCivil | Misdeal
                    | AddPlayer | RemovePlayer | CancelChange | SeatButton | ResetDeckLearning | ShowDeck | NewNight)

COMMAND_TYPES: dict[str, type[DashboardCommand]] = {
    cls.NAME: cls for cls in (ConfirmCard, CorrectCard, Undo, AdjustChips, AmendChips, Pause, Resume, EndGame,
                              UpdateSettings, SetZones, ClaimFlush, ShowPam, CallCivil, Misdeal,
                              AddPlayer, RemovePlayer, CancelChange, SeatButton, ResetDeckLearning, ShowDeck, NewNight)
}
COMMANDS: tuple[str, ...] = tuple(COMMAND_TYPES)
"""The command names, in the order docs/api.md lists them."""

_TUPLES = frozenset({"players", "cards"})


def parse_command(name: str, payload: object,
                  current_settings: Mapping[str, object] | None = None) -> DashboardCommand:
    """The command ``name`` with ``payload`` checked (``ValueError`` with the host's reason when it
    is malformed or unknown). ``current_settings`` gives the variant an ``update_settings`` that
    changes only the options is checked against."""
    cls = COMMAND_TYPES.get(name)
    if cls is None:
        raise ValueError(f"unknown command {name!r} (one of {', '.join(COMMANDS)})")
    clean = check_command(name, payload, dict(current_settings or {}))
    args: dict[str, object] = {k: tuple(v) if k in _TUPLES and isinstance(v, list | tuple) else v
                               for k, v in clean.items()}
    build: Callable[..., DashboardCommand] = cls  # check_command gave each field its type
    return build(**args)


def to_payload(command: DashboardCommand) -> dict[str, object]:
    """The command's JSON payload (the fields that are set), as the API takes it."""
    out: dict[str, object] = {}
    for f in fields(command):
        value = getattr(command, f.name)
        if value is not None:
            out[f.name] = list(value) if isinstance(value, tuple) else value
    return out
