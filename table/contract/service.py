"""The `TableService` protocol: everything the dashboard needs from the controller.

`web` imports nothing of `table` but this contract; the controller builds an object with these methods and hands it to
`web.create_app(service)`. Keeping the contract a `typing.Protocol` lets the route tests use a small
in-memory double and lets the controller own threads, locks and the ledger.

Threading: waitress calls these methods from many threads at once (one per request, one per open
Server-Sent-Events stream), so an implementation must be thread-safe. `changes_since` is the only
method allowed to block.

Errors: `command` raises `Refused` (a `ValueError`) with a sentence a host can read when the
request is refused, and then it has changed nothing; its ``rule`` names the kind of refusal (the
engine's error class, such as ``OutOfTurnError``, or ``StateError`` for the table's own rules), so
the phone can say which rule refused. The dashboard turns it into a JSON 400 with both.
The dashboard validates every payload's shape once, into a `web.commands` dataclass, before calling
`command`, so the service receives well-typed values; it still owns the game rules (e.g. "cannot change the variant
in the middle of a deal").
"""

from __future__ import annotations

from typing import NotRequired, Protocol, TypedDict, runtime_checkable

from table.contract.commands import COMMANDS, DashboardCommand
from table.contract.json_value import Json, JsonObject
from table.contract.snapshot import Snapshot

__all__ = ["TableService", "COMMANDS", "Refused", "CommandReply", "StreamItem", "LedgerHead", "Settings",
           "DealSummary", "Json", "JsonObject", "LedgerRow", "NightSummary"]

LedgerRow = dict[str, str | int | float | None]
"""One ledger event flattened to scalar columns (the CSV export)."""


class Refused(ValueError):
    """A command the table refused, having changed nothing. ``rule`` is the kind of refusal: the
    engine's error class (``IllegalActionError``, ``OutOfTurnError``, ``InvalidInputError``,
    ``ChipConservationError``), ``StateError`` for the table's own rules (paused, not between
    deals), ``payload`` for a malformed payload, ``ledger`` when the ledger could not be written."""

    def __init__(self, message: str, rule: str = "StateError") -> None:
        super().__init__(message)
        self.rule = rule


class StreamItem(TypedDict):
    """One Server-Sent-Events message: ``id`` the snapshot's version, ``event`` always ``state``."""

    id: int
    event: str
    data: Snapshot


class LedgerHead(TypedDict):
    seq: int
    hash: str
    seal: NotRequired[str]  # the seal's code the host keeps (table/seal.py), when events are sealed


class Settings(TypedDict):
    players: list[str]
    variant: str
    options: JsonObject
    starting_chips: int
    chip_value: str
    zones: JsonObject
    game_started: bool
    currency: NotRequired[str]  # shown before money ("£"); "" for none
    seats: NotRequired[int]  # the most players who can sit down at the start: the seats the table wires


class NightSummary(TypedDict):
    """One night the ledger kept (`TableService.nights`): epoch seconds, each player's result."""

    started: float
    ended: float
    players: list[str]
    net: dict[str, int]
    chip_value: str
    currency: str
    deals: int
    tonight: NotRequired[bool]
    over: NotRequired[bool]


class CommandReply(TypedDict):
    """What an accepted command answers: the snapshot version that shows it and one sentence of
    what it did (``message``); ``alert_id`` names the alert a command raised, if any."""

    ok: bool
    version: int
    message: NotRequired[str]
    alert_id: NotRequired[int]
    queued: NotRequired[int]  # the change waits for the next deal: the seq that asked for it


class DealSummary(TypedDict, total=False):
    """A deal of the night for the History page (missing keys are shown as blanks)."""

    number: int
    dealer: str
    turn_up: str | None
    trump: str | None
    declarations: list[list[str]]
    tricks: list[JsonObject]
    revokes: list[JsonObject]
    photos: list[JsonObject]  # {"photo", "why", "player", "card"}: the deal's photos that prove
    paid: dict[str, int]
    looed: dict[str, int]
    pool_after: int
    balances_after: dict[str, int]
    flush_winner: str | list[str] | None  # a list when a flush tie splits the pool
    kind: str  # the settlement's kind (the engine's `Settlement.kind`)
    finished: bool


#: Admin commands: one frozen dataclass each in `web.commands` (fields = the JSON payload, which
#: docs/api.md documents); `web.commands.parse_command` checks a payload once and the service
#: receives the dataclass. The game's rules stay the service's to judge.
@runtime_checkable
class TableService(Protocol):
    """What the controller gives the dashboard (implemented by ``table.service.TableService``)."""

    def snapshot(self) -> Snapshot:
        """The whole visible table as JSON-safe data, with a monotonically increasing ``version``.

        Shape: `web.snapshot.Snapshot` (docs/api.md); the optional keys are the controller's
        additions (``paused``, ``chip_value``, ``camera``, ``last_trick``, ``flush_claims``, ``pam_shown``,
        ``commands``), which a client must not rely on.
        """
        ...

    def changes_since(self, version: int, timeout: float) -> list[StreamItem]:
        """Snapshots newer than ``version``, oldest first; blocks up to ``timeout`` s while there are none.

        Each item is ``{"id": version, "event": "state", "data": snapshot}``. Returning only the
        latest snapshot when several changes happened is allowed (every snapshot is complete). An
        empty list means the timeout passed; the stream then sends a keep-alive comment.
        """
        ...

    def deals(self) -> list[DealSummary]:
        """Every finished (and the current) deal of the night, oldest first, for the History page.

        Each: ``number``, ``dealer``, ``turn_up``, ``trump``, ``declarations`` ``[[player, action]]``,
        ``tricks`` ``[{"plays": [[player, card]], "winner": player}]``, ``revokes`` ``[{"player",
        "trick", "rule", "witness", "message"}]``, ``paid`` ``{player: chips}``, ``looed``
        ``{player: chips}``, ``pool_after``, ``balances_after`` ``{player: chips}``,
        ``flush_winner``, ``finished`` (bool). Missing keys are shown as blanks.
        """
        ...

    def hand_records(self) -> list[JsonObject]:
        """Every finished deal as a ``loo-hand/1`` record (docs/hand-record.md), oldest first."""
        ...

    def ledger_rows(self) -> list[LedgerRow]:
        """The append-only ledger, one flat dict per event (scalar values), oldest first; CSV export."""
        ...

    def ledger_head(self) -> LedgerHead:
        """``{"seq": int, "hash": str}``: the ledger's last event and its chained hash (64 hex digits),
        and ``seal`` (16 hex digits) when the controller seals its events (table/seal.py).
        The History page shows the hash and the End of night page the seal, for the host to keep."""
        ...

    def chip_history(self) -> dict[str, list[int]]:
        """Each player's chips at the start of the night and after every deal (equal-length lists)."""
        ...

    def nights(self) -> list[NightSummary]:
        """The nights the table kept, oldest first, tonight's last: ``started``, ``ended`` (epoch
        seconds), ``players``, ``net`` {player: chips won (+) or lost}, ``chip_value``,
        ``currency``, ``deals``, ``tonight`` and ``over`` (bools)."""
        ...

    def bought_history(self) -> dict[str, list[int]]:
        """Chips each player bought (+) or cashed out (-) in each row of `chip_history` (same
        lengths), so the scoresheet shows money paid in apart from what the cards won."""
        ...

    def chips_in(self) -> dict[str, int]:
        """Chips each player brought to the table: the starting chips plus every chip adjustment
        (buy-in, rebuy, cash-out as a negative one). A result is chips now minus these, so the
        night's results sum to zero once the pool is shared out."""
        ...

    def settings(self) -> Settings:
        """The host's settings: ``players`` (seat order), ``variant``, ``options`` (the full effective
        option mapping, ``engine.Options.to_dict()``), ``starting_chips``, ``chip_value`` (decimal
        string), ``zones`` (as in ``set_zones``), ``game_started`` (bool)."""
        ...

    def command(self, command: DashboardCommand) -> CommandReply:
        """Apply one admin command (a `web.commands` dataclass, already shape-checked); returns
        ``{"ok": True, "version": int, ...}``.

        Raises `Refused` (a ``ValueError``) with a reason and the rule, and changes nothing, when
        the command is refused.
        """
        ...
