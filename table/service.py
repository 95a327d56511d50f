"""`TableService`: what the dashboard (`web.create_app(service)`) is given by the controller.

It implements the protocol in `table/contract/service.py`. Reads take the referee's lock for a moment;
commands go through the referee's one queue (`Referee.call`) so a dashboard correction is ordered
with the presses and cards around it. Bad input raises ValueError and changes nothing (the referee
tries every event on a clone of the state before it writes it).
"""

from __future__ import annotations

from collections.abc import Mapping

from table.contract.commands import COMMANDS, DashboardCommand
from table.contract.service import (
    CommandReply,
    DealSummary,
    Json,
    JsonObject,
    LedgerHead,
    LedgerRow,
    NightSummary,
    Settings,
    StreamItem,
)
from table.contract.snapshot import Snapshot
from table.describe import describe_events
from table.ledger import Event
from table.referee import Referee

__all__ = ["TableService", "COMMANDS"]


class TableService:
    """The dashboard's view of the table; thread-safe (waitress calls it from many threads)."""

    def __init__(self, referee: Referee, *, timeout: float = 10.0) -> None:
        self.referee = referee
        self.timeout = timeout

    # -- live state --------------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        return self.referee.snapshot()

    def changes_since(self, version: int, timeout: float) -> list[StreamItem]:
        snap = self.referee.wait_for_change(int(version), max(0.0, float(timeout)))
        if snap is None:
            return []
        return [{"id": snap["version"], "event": "state", "data": snap}]

    # -- history -----------------------------------------------------------------------------------
    def deals(self) -> list[DealSummary]:
        with self.referee.lock:
            st = self.referee.state
            out = [f["summary"].copy() for f in st.finished]
            if st.deal is not None:
                out.append(st.deal_summary())
            return out

    def hand_records(self) -> list[JsonObject]:
        with self.referee.lock:
            return [_json_object(f["record"]) for f in self.referee.state.finished]

    def ledger_rows(self) -> list[LedgerRow]:
        return [e.row() for e in self.referee.ledger.iter_events()]

    def ledger_head(self) -> LedgerHead:
        from table.seal import code

        seq, digest = self.referee.ledger.head()
        seal = self.referee.ledger.seal(seq) if seq else None
        head: LedgerHead = {"seq": seq, "hash": digest}
        if seal:  # what the host keeps at the end of the night (table/seal.py), when events are sealed
            head["seal"] = code(seal)
        return head

    def chip_history(self) -> dict[str, list[int]]:
        with self.referee.lock:
            return {p: list(v) for p, v in self.referee.state.chip_history.items()}

    def nights(self) -> list[NightSummary]:
        """Every night this ledger kept, then tonight's (``tonight``: true; ``over``: ended)."""
        import time

        from table.nights import night_summary

        with self.referee.lock:
            st = self.referee.state
            out: list[NightSummary] = [{**n, "tonight": False, "over": True} for n in st.nights]
            if st.started:
                out.append({**night_summary(st, time.time()), "tonight": True, "over": st.game_over})
            return out

    def bought_history(self) -> dict[str, list[int]]:
        with self.referee.lock:
            return {p: list(v) for p, v in self.referee.state.bought_history.items()}

    def chips_in(self) -> dict[str, int]:
        with self.referee.lock:
            return self.referee.state.chips_in()

    def settings(self) -> Settings:
        from engine import Options

        with self.referee.lock:
            st = self.referee.state
            try:
                options = Options.from_dict(st.variant, st.options).to_dict()
            except ValueError:
                options = dict(st.options)
            return {
                "players": list(st.players),
                "variant": st.variant,
                "options": _json_object(options),
                "starting_chips": st.starting_chips,
                "chip_value": st.chip_value,
                "currency": st.currency,
                "zones": _json_object(st.zones),
                "game_started": st.deal_number > 0,
                "seats": self.referee.seats(),  # the most players who can sit down at the start
            }

    # -- admin -------------------------------------------------------------------------------------
    def command(self, command: DashboardCommand | str,
                payload: Mapping[str, object] | None = None) -> CommandReply:
        """Apply a checked command (or a command name and its JSON payload, checked the same way
        by `web.commands.parse_command`); ValueError when it is malformed or refused."""
        if isinstance(command, str) and payload is not None and not isinstance(payload, Mapping):
            raise ValueError("the payload must be a JSON object")
        handled = self.referee.call(command, payload, timeout=self.timeout)
        reply: CommandReply = {"ok": True, "version": self.referee.version}
        if "queued" in handled:
            reply["queued"] = handled["queued"]
        if "message" in handled:
            reply["message"] = handled["message"]
        else:
            ledger = self.referee.ledger

            def lookup(seq: int) -> Event | None:  # only an undo or a correction looks back
                return next(iter(ledger.events(seq - 1, until=seq)), None)

            reply["message"] = describe_events(handled["events"], lookup) or "Nothing changed."
        return reply


def _json_safe(value: object) -> Json:
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def _json_object(value: Mapping[str, object]) -> JsonObject:
    return {str(k): _json_safe(v) for k, v in value.items()}
