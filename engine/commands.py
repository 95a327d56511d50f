"""Which of the host's table commands the rules allow at this moment of a deal.

The dashboard offers a button only when its command applies, and the engine is the one place that
knows when that is (docs/rules.md §7.2 flush window, §8.6 "Pam be civil", §10.1 replay, §10.2
misdeal), so it says so here instead of each screen re-deriving it. The engine still judges every
command when it is pushed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["TableCommands"]


@dataclass(frozen=True, slots=True)
class TableCommands:
    """The host's commands open now (``Deal.table_commands()``); the default is none."""

    misdeal: bool = False
    """§10.2: before the first card is played (and before a flush has won)."""
    call_civil: bool = False
    """§8.6 ``on_call``: right after the ace of trumps is led, once per trick."""
    replay: bool = False
    """§10.1 ``replay_from_offence``: the deal is over with a proven revoke."""
    claim_flush: tuple[str, ...] = ()
    """§7.2: the standers who may still show a flush (in the window, or after one has won)."""
    show_pam: tuple[str, ...] = ()
    """§7.2, §8.5: the standers who may still show Pam to escape a flush loo."""

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON (the dashboard snapshot's ``commands``)."""
        return {"misdeal": self.misdeal, "call_civil": self.call_civil, "replay": self.replay,
                "claim_flush": list(self.claim_flush), "show_pam": list(self.show_pam)}
