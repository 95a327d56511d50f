"""The `TableService` protocol: everything the dashboard needs from the controller.

`web` never imports `table`; the controller builds an object with these methods and hands it to
`web.create_app(service)`. Keeping the contract a `typing.Protocol` lets the route tests use a small
in-memory double and lets the controller own threads, locks and the ledger.

Threading: waitress calls these methods from many threads at once (one per request, one per open
Server-Sent-Events stream), so an implementation must be thread-safe. `changes_since` is the only
method allowed to block.

Errors: `command` raises `ValueError` (or a subclass) with a sentence a host can read when the
request is refused, and then it has changed nothing. The dashboard turns that into a JSON 400.
The dashboard validates every payload's shape before calling `command` (see `COMMANDS`), so the
service receives well-typed values; it still owns the game rules (e.g. "cannot change the variant
in the middle of a deal").
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

#: Admin command names and the payload each takes (the dashboard checks these shapes before
#: calling `TableService.command`; docs/api.md documents them for API users).
#:
#: - ``confirm_card``    ``{"alert_id": int}``: accept the card an alert proposes (unsure reading,
#:   card out of turn); the game resumes.
#: - ``correct_card``    ``{"card": "10H", "alert_id": int}`` to answer an alert with another card,
#:   ``{"card": "10H", "zone": "seat:2" | "turn_up"}`` to enter a card the camera missed in a seat's
#:   zone (played as if seen there) or to give / correct the turn-up, or
#:   ``{"card": "10H", "trick": int, "player": str}`` to correct a card already accepted in the current
#:   deal (the engine re-runs the deal; chips follow).
#: - ``undo``            ``{}``: undo the last event of the current deal.
#: - ``adjust_chips``    ``{"player": str, "delta": int (non-zero), "reason": str}``.
#: - ``pause`` / ``resume`` / ``end_game``: ``{}``.
#: - ``update_settings`` any subset of ``{"players": [str, ...], "variant": str,
#:   "options": {name: value}, "starting_chips": int, "chip_value": str}`` (``options`` are overrides
#:   of the variant's defaults, names as ``engine.Options``; the ante is ``options["ante_amount"]``;
#:   ``chip_value`` is a decimal string such as ``"0.10"``, the money one chip is worth).
#: - ``set_zones``       ``{"zones": {name: {"x": mm, "y": mm, "width": mm, "height": mm}}}``, names
#:   ``seat:0`` … ``seat:N-1``, ``turn_up``, ``stock`` (rectangles on the table plane, millimetres).
#: - ``claim_flush``     ``{"player": str, "cards": [5 cards]}``: a stander shows a flush (five-card
#:   Loo, phase ``flush``); the engine judges it (a false claim is recorded as such).
#: - ``show_pam``        ``{"player": str}``: after a flush has won, a player shows Pam.
#: - ``call_civil``      ``{}``: "Pam be civil", right after the ace of trumps is led
#:   (option ``pam_be_civil = on_call``).
#: - ``misdeal``         ``{}``: before the first card is played; settled by the ``misdeal`` option.
COMMANDS: tuple[str, ...] = (
    "confirm_card",
    "correct_card",
    "undo",
    "adjust_chips",
    "pause",
    "resume",
    "end_game",
    "update_settings",
    "set_zones",
    "claim_flush",
    "show_pam",
    "call_civil",
    "misdeal",
)


@runtime_checkable
class TableService(Protocol):
    """What the controller gives the dashboard (implemented by ``table.service.TableService``)."""

    def snapshot(self) -> dict[str, Any]:
        """The whole visible table as JSON-safe data, with a monotonically increasing ``version``.

        Shape (docs/architecture.md): ``version``, ``status`` ``{"state", "message"}`` (state in
        ``ready``, ``paused``, ``attention``, ``fault``), ``variant``, ``deal_number``, ``phase``,
        ``pool``, ``turn_up``, ``trump``, ``seats`` (``index``, ``name``, ``chips``, ``dealer``,
        ``to_act``, ``declaration``, ``tricks_won``), ``trick`` ``{"number", "plays": [{"player",
        "card"}]}`` or null, ``alerts`` (``id``, ``kind`` in ``revoke``, ``unsure``, ``out_of_turn``,
        ``conflict``, ``camera``…, ``seat``, ``message``, ``needs_confirmation``, optional ``card``,
        ``top3`` ``[[card, confidence], ...]``, ``evidence``), ``last_settlement``, ``game_over``;
        optional (the controller adds them): ``paused``, ``chip_value``, ``camera`` ``{"ok",
        "message"}``, ``last_trick`` ``{"number", "plays", "winner"}``, ``flush_claims`` ``[{"player", "cards", "valid"}]``, ``pam_shown`` ``[player]``.
        """
        ...

    def changes_since(self, version: int, timeout: float) -> list[dict[str, Any]]:
        """Snapshots newer than ``version``, oldest first; blocks up to ``timeout`` s while there are none.

        Each item is ``{"id": version, "event": "state", "data": snapshot}``. Returning only the
        latest snapshot when several changes happened is allowed (every snapshot is complete). An
        empty list means the timeout passed; the stream then sends a keep-alive comment.
        """
        ...

    def deals(self) -> list[dict[str, Any]]:
        """Every finished (and the current) deal of the night, oldest first, for the History page.

        Each: ``number``, ``dealer``, ``turn_up``, ``trump``, ``declarations`` ``[[player, action]]``,
        ``tricks`` ``[{"plays": [[player, card]], "winner": player}]``, ``revokes`` ``[{"player",
        "trick", "rule", "witness", "message"}]``, ``paid`` ``{player: chips}``, ``looed``
        ``{player: chips}``, ``pool_after``, ``balances_after`` ``{player: chips}``,
        ``flush_winner``, ``finished`` (bool). Missing keys are shown as blanks.
        """
        ...

    def hand_records(self) -> list[dict[str, Any]]:
        """Every finished deal as a ``loo-hand/1`` record (hand-record.md), oldest first."""
        ...

    def ledger_rows(self) -> list[dict[str, Any]]:
        """The append-only ledger, one flat dict per event (scalar values), oldest first; CSV export."""
        ...

    def chip_history(self) -> dict[str, list[int]]:
        """Each player's chips at the start of the night and after every deal (equal-length lists)."""
        ...

    def chips_in(self) -> dict[str, int]:
        """Chips each player brought to the table: the starting chips plus every chip adjustment
        (buy-in, rebuy, cash-out as a negative one). A result is chips now minus these, so the
        night's results sum to zero once the pool is shared out."""
        ...

    def settings(self) -> dict[str, Any]:
        """The host's settings: ``players`` (seat order), ``variant``, ``options`` (the full effective
        option mapping, ``engine.Options.to_dict()``), ``starting_chips``, ``chip_value`` (decimal
        string), ``zones`` (as in ``set_zones``), ``game_started`` (bool)."""
        ...

    def command(self, name: str, payload: dict[str, Any]) -> dict[str, Any]:
        """Apply one admin command (see `COMMANDS`); returns ``{"ok": True, "version": int, ...}``.

        Raises ``ValueError`` with a reason and changes nothing when the command is refused.
        """
        ...
