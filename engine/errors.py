"""The engine's exceptions: one precise ``ValueError`` hierarchy (in the spirit of python-chess).

Every message is written for the person at the table ("It is Bea's turn, not Cal's"), because the
controller shows it on the dashboard as it is.
"""

from __future__ import annotations

__all__ = [
    "LooError",
    "InvalidInputError",
    "RecordError",
    "IllegalActionError",
    "OutOfTurnError",
    "ChipConservationError",
]


class LooError(ValueError):
    """Base class of everything the engine raises on purpose."""


class InvalidInputError(LooError):
    """Input that cannot be understood at all: bad card text, unknown player, bad option."""


class RecordError(InvalidInputError):
    """A malformed ``loo-hand/1`` record (raised by ``engine.records``)."""


class IllegalActionError(LooError):
    """A well-formed action that is not allowed now, or not allowed by the rules."""


class OutOfTurnError(IllegalActionError):
    """An action by a seat that is not the one to act."""


class ChipConservationError(LooError):
    """Σ balances + pool changed (docs/rules.md §2): a bug or a corrupted ledger, never a move
    of play. The night must stop rather than go on with chips created or lost."""
