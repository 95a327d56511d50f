"""The changes asked for during a deal that wait for the next deal boundary: a part of
`table.state.TableState`. `table.next_deal` asks, cancels and applies them through the ledger;
this queue is what the ledger's ``change_queued`` and ``change_cancelled`` events leave waiting.
"""

from __future__ import annotations

from typing import TypedDict

from table.contract.json_value import JsonObject
from table.state_error import StateError

__all__ = ["QUEUEABLE", "ChangeQueue", "QueuedChange"]


#: the events a change asked for during a deal becomes at the next deal boundary (their data then
#: carries ``queued``: the seq of the ``change_queued`` event that asked for it)
QUEUEABLE = frozenset({"player_joined", "player_left", "settings"})


class QueuedChange(TypedDict):
    """One change waiting for the next deal."""

    seq: int  # the ``change_queued`` event that asked for it
    kind: str  # one of `QUEUEABLE`: the event it becomes
    #: the data of the event it becomes, as asked (``player``, ``chips``, ``variant``...); read by
    #: `table.next_deal` as that event's data
    data: JsonObject
    deal: int  # the deal being played when it was asked


class ChangeQueue:
    """The waiting changes by the seq of the event that asked for each, oldest first."""

    def __init__(self) -> None:
        #: replaced, never changed in place: a clone shares it
        self.waiting: dict[int, QueuedChange] = {}

    def clone(self) -> ChangeQueue:
        other = ChangeQueue()
        other.waiting = self.waiting
        return other

    def ask(self, seq: int, kind: str, data: JsonObject, deal: int) -> None:
        """A join, a leave or a house-rule change asked for during a deal: it waits for the next."""
        if kind not in QUEUEABLE:
            raise StateError(f"a {kind!r} cannot wait for the next deal")
        self.waiting = {**self.waiting, seq: {"seq": seq, "kind": kind, "data": data, "deal": deal}}

    def cancel(self, target: int) -> None:
        """A waiting change the host called off (or one that no longer fits at the boundary)."""
        self.require(target, "that change is not waiting for the next deal")
        self.done(target)

    def require(self, target: int, refusal: str) -> None:
        """Refuse with ``refusal`` unless ``target`` is waiting."""
        if target not in self.waiting:
            raise StateError(refusal)

    def done(self, target: int) -> None:
        """``target`` has been applied (or cancelled): it waits no longer."""
        self.waiting = {k: v for k, v in self.waiting.items() if k != target}
