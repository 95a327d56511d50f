"""Claiming a new table: whoever sets it up proves they are at it by pressing seat 1's button.

A fresh install has no admin PIN. Instead of a PIN written to a log, the dashboard asks the
person at the phone to press the first seat's button: the table itself is the trust anchor. The
controller gives `web.create_app(service, claim=...)` an object with this protocol; the claimant
then chooses the PIN on the phone. ``who`` is an opaque id the dashboard keeps in that phone's
session, so a press counts for the one phone that asked.
"""

from __future__ import annotations

from typing import Protocol, TypedDict, runtime_checkable

__all__ = ["ClaimStatus", "TableClaim"]


class ClaimStatus(TypedDict):
    """``status``: ``idle`` (nobody asked), ``waiting`` (press seat 1's button now,
    ``seconds_left``), ``claimed`` (this phone may choose the PIN), ``busy`` (another phone is
    claiming), ``expired`` (nobody pressed in time); ``message`` is the sentence the page shows."""

    status: str
    seconds_left: int
    message: str


@runtime_checkable
class TableClaim(Protocol):
    def begin(self, who: str) -> ClaimStatus:
        """Open the window in which a press of seat 1's button claims the table for ``who``."""
        ...

    def status(self, who: str) -> ClaimStatus:
        ...

    def consume(self, who: str) -> bool:
        """True once, if ``who`` claimed the table (the PIN is being chosen): the claim is used up."""
        ...
