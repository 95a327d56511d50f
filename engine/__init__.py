"""The rules of Loo as pure, deterministic Python (no I/O, no clock, no unseeded randomness).

Public names are re-exported here; see docs/engine.md ("Engine API").
"""

from engine.actions import (
    MISS,
    Action,
    CallCivil,
    ClaimFlush,
    Declare,
    Exchange,
    Expose,
    Misdeal,
    Penalise,
    Play,
    Replay,
    ShowPam,
    TakeTurnUp,
    TurnUp,
    parse_action,
)
from engine.cards import DECK, Card, parse_cards
from engine.commands import TableCommands
from engine.deal import Deal, LegalMoves, Phase
from engine.errors import (
    ChipConservationError,
    IllegalActionError,
    InvalidInputError,
    LooError,
    OutOfTurnError,
    RecordError,
)
from engine.game import DealResult, Game
from engine.notation import deal_from_text, deal_to_text
from engine.options import Options, Variant
from engine.outcome import Revoke, Settlement

__all__ = [
    "MISS", "Action", "CallCivil", "ClaimFlush", "Declare", "Exchange", "Expose", "Misdeal",
    "Penalise", "Play", "Replay", "ShowPam", "TakeTurnUp", "TurnUp", "parse_action",
    "DECK", "Card", "parse_cards",
    "Deal", "Phase", "LegalMoves", "TableCommands",
    "DealResult", "Game",
    "ChipConservationError", "IllegalActionError", "InvalidInputError", "LooError", "OutOfTurnError", "RecordError",
    "deal_from_text", "deal_to_text",
    "Options", "Variant",
    "Revoke", "Settlement",
]
