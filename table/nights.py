"""The nights a ledger has kept: when a night is over and the host starts the next one (a new
``game_started`` in the same ledger), the night just ended is summed up here, so the Nights page
can list past nights and each player's running total across them without a second store (the
ledger stays the one record; a replay rebuilds the list).
"""

from __future__ import annotations

from typing import Any

__all__ = ["night_summary", "running_totals"]


def night_summary(state: Any, ended: float) -> dict[str, Any]:
    """One night: when it started and ended (epoch seconds, from the ledger), its players, each
    player's result in chips (chips now minus chips brought), the money per chip and currency."""
    brought = state.chips_in()
    balances = state.balances
    return {
        "started": state.night_started, "ended": ended, "players": list(state.players),
        "net": {p: balances[p] - brought[p] for p in state.players},
        "chip_value": state.chip_value, "currency": state.currency, "deals": len(state.finished),
    }


def running_totals(nights: list[dict[str, Any]]) -> dict[str, int]:
    """Each player's chips won or lost over every night listed, by name, best first."""
    total: dict[str, int] = {}
    for night in nights:
        for player, chips in night["net"].items():
            total[player] = total.get(player, 0) + int(chips)
    return dict(sorted(total.items(), key=lambda pc: (-pc[1], pc[0])))
