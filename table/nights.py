"""The nights a ledger has kept: when a night is over and the host starts the next one (a new
``game_started`` in the same ledger), the night just ended is summed up here, so the Nights page
can list past nights and each player's running total across them without a second store (the
ledger stays the one record; a replay rebuilds the list).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Sized
from typing import Protocol

from table.contract.service import NightSummary

__all__ = ["Night", "begin_next_night", "night_summary"]


class Night(Protocol):
    """A table state (`table.state.TableState`) as far as a night's summary reads it."""

    @property
    def players(self) -> Sequence[str]: ...

    @property
    def balances(self) -> Mapping[str, int]: ...

    @property
    def night_started(self) -> float: ...

    @property
    def chip_value(self) -> str: ...

    @property
    def currency(self) -> str: ...

    @property
    def finished(self) -> Sized: ...

    @property
    def nights(self) -> Sequence[NightSummary]: ...

    @property
    def _at(self) -> float: ...

    def chips_in(self) -> Mapping[str, int]: ...


def night_summary(state: Night, ended: float) -> NightSummary:
    """One night: when it started and ended (epoch seconds, from the ledger), its players, each
    player's result in chips (chips now minus chips brought), the money per chip and currency."""
    brought = state.chips_in()
    balances = state.balances
    return {
        "started": state.night_started, "ended": ended, "players": list(state.players),
        "net": {p: balances[p] - brought[p] for p in state.players},
        "chip_value": state.chip_value, "currency": state.currency, "deals": len(state.finished),
    }


def begin_next_night(state: Night, fresh: Night) -> None:
    """Turn ``state`` (a `TableState` whose night is over) into ``fresh``'s blank night, keeping
    the nights so far (this one summed up), the ledger position, the zones and the money."""
    nights = [*state.nights, night_summary(state, state._at)]
    kept = {k: getattr(state, k) for k in ("last_seq", "events_applied", "zones", "chip_value", "currency", "_at")}
    state.__dict__.clear()
    state.__dict__.update(fresh.__dict__, **kept, nights=nights)
