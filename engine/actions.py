"""Actions: the small immutable events a deal is driven by (docs/rules.md §4 "Engine inputs").

Each action has a short text form (``str(action)``) that ``parse_action`` reads back; a deal's
notation (``engine.notation``) is a list of these. Player names in the text form may not contain
whitespace, ``:``, ``;`` or ``,`` or start with ``*``; operator events start with ``*``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from engine.cards import Card
from engine.errors import InvalidInputError

__all__ = [
    "MISS",
    "Action",
    "TurnUp",
    "TakeTurnUp",
    "Declare",
    "Exchange",
    "ClaimFlush",
    "ShowPam",
    "CallCivil",
    "Play",
    "Expose",
    "Penalise",
    "Misdeal",
    "Replay",
    "DECLARATIONS",
    "parse_action",
]

DECLARATIONS: Final = ("play", "pass", "take_miss", "defend_miss")
MISS: Final = "MISS"
"""The seat name of the miss when the dealer plays it for the pool (``defend_miss``)."""


def _cards(cards: tuple[Card, ...]) -> str:
    return ",".join(map(str, cards))


@dataclass(frozen=True, slots=True)
class TurnUp:
    """The card turned for trumps after the deal."""

    card: Card

    def __str__(self) -> str:
        return f"*up:{self.card}"


@dataclass(frozen=True, slots=True)
class TakeTurnUp:
    """With ``dealer_takes_turnup``: the dealer takes the turn-up and discards one card face down.

    With unknown hands the discard is never seen (``None``) and the engine applies this step by
    itself; with known hands the dealer pushes it naming his discard.
    """

    discard: Card | None = None

    def __str__(self) -> str:
        return "*take" if self.discard is None else f"*take:{self.discard}"


@dataclass(frozen=True, slots=True)
class Declare:
    """A declaration: ``play``, ``pass``, ``take_miss`` or ``defend_miss`` (§5.1, §7.1)."""

    player: str
    action: str

    def __post_init__(self) -> None:
        if self.action not in DECLARATIONS:
            raise InvalidInputError(
                f"unknown declaration {self.action!r}; use play, pass, take_miss or defend_miss"
            )

    def __str__(self) -> str:
        return f"{self.player}:{self.action}"


@dataclass(frozen=True, slots=True)
class Exchange:
    """A stander exchanges ``count`` cards (Irish, five-card).

    The camera never sees which: with unknown hands only ``count`` matters; with known hands
    ``discards`` names them (exactly ``count`` cards of the hand) and the draw comes off the stock.
    """

    player: str
    count: int
    discards: tuple[Card, ...] = ()

    def __str__(self) -> str:
        tail = f":{_cards(self.discards)}" if self.discards else ""
        return f"{self.player}:x{self.count}{tail}"


@dataclass(frozen=True, slots=True)
class ClaimFlush:
    """A stander shows five cards as a flush (§7.2); a false claim exposes them."""

    player: str
    cards: tuple[Card, ...]

    def __str__(self) -> str:
        return f"{self.player}:flush:{_cards(self.cards)}"


@dataclass(frozen=True, slots=True)
class ShowPam:
    """A stander shows Pam to escape a flush loo (§7.2)."""

    player: str

    def __str__(self) -> str:
        return f"{self.player}:pam"


@dataclass(frozen=True, slots=True)
class CallCivil:
    """The leader of the ace of trumps says "Pam be civil" (``pam_be_civil = on_call``)."""

    def __str__(self) -> str:
        return "*civil"


@dataclass(frozen=True, slots=True)
class Play:
    """A card played to the current trick by ``player`` (``"MISS"`` for a defended miss)."""

    player: str
    card: Card

    def __str__(self) -> str:
        return f"{self.player}:{self.card}"

    @staticmethod
    def of(player: str, card: Card) -> Play:
        """``Play(player, card)``, shared: a Play is immutable and compared by value, so the
        hot loops (bots, record replay) reuse one object per seat and card instead of building
        a frozen dataclass for every card played (about ten times dearer than the lookup)."""
        key = (player, card)
        play = _PLAYS.get(key)
        if play is None:
            play = Play(player, card)
            if len(_PLAYS) < 4096:
                _PLAYS[key] = play
        return play


_PLAYS: dict[tuple[str, Card], Play] = {}


@dataclass(frozen=True, slots=True)
class Expose:
    """Cards of ``player`` seen before their time (exposed, or played out of turn, §10.3–10.4).

    They become known holdings (evidence for §11); out of turn with ``out_of_turn = looed`` loos.
    """

    player: str
    cards: tuple[Card, ...]
    out_of_turn: bool = False

    def __str__(self) -> str:
        kind = "ooturn" if self.out_of_turn else "shows"
        return f"{self.player}:{kind}:{_cards(self.cards)}"


@dataclass(frozen=True, slots=True)
class Penalise:
    """An operator's penalty (§10.3): a loo, or with ``single`` half a loo (rounded down)."""

    player: str
    single: bool = False

    def __str__(self) -> str:
        return f"{self.player}:penalty" + (":single" if self.single else "")


@dataclass(frozen=True, slots=True)
class Misdeal:
    """The operator declares a misdeal (§10.2); settled by the ``misdeal`` option."""

    def __str__(self) -> str:
        return "*misdeal"


@dataclass(frozen=True, slots=True)
class Replay:
    """With ``revoke_action = replay_from_offence``: after the last trick, the players take back
    their cards from the first offending trick on and play again (PEEL, §10.1). The proven revokes
    stand (looed, tricks forfeited) and the cards taken back become known holdings."""

    def __str__(self) -> str:
        return "*replay"


Action = (
    TurnUp | TakeTurnUp | Declare | Exchange | ClaimFlush | ShowPam | CallCivil | Play | Expose
    | Penalise | Misdeal | Replay
)


def _parse_card_list(text: str) -> tuple[Card, ...]:
    return tuple(Card.parse(t) for t in text.split(",") if t)


def parse_action(text: str) -> Action:
    """Read the text form of an action (``str(action)``) back; InvalidInputError if malformed."""
    t = text.strip()
    parts = t.split(":")
    try:
        if t.startswith("*"):
            head = parts[0]
            if head == "*up" and len(parts) == 2:
                return TurnUp(Card.parse(parts[1]))
            if head == "*take" and len(parts) <= 2:
                return TakeTurnUp(Card.parse(parts[1]) if len(parts) == 2 else None)
            if t == "*civil":
                return CallCivil()
            if t == "*misdeal":
                return Misdeal()
            if t == "*replay":
                return Replay()
        elif len(parts) >= 2 and parts[0]:
            player, verb = parts[0], parts[1]
            if len(parts) == 2:
                if verb in DECLARATIONS:
                    return Declare(player, verb)
                if verb == "pam":
                    return ShowPam(player)
                if verb == "penalty":
                    return Penalise(player)
            if verb == "penalty" and parts[2:] == ["single"]:
                return Penalise(player, single=True)
            if verb.startswith("x") and verb[1:].isdigit() and len(parts) <= 3:
                discards = _parse_card_list(parts[2]) if len(parts) == 3 else ()
                return Exchange(player, int(verb[1:]), discards)
            if verb == "flush" and len(parts) == 3:
                return ClaimFlush(player, _parse_card_list(parts[2]))
            if verb in ("shows", "ooturn") and len(parts) == 3:
                return Expose(player, _parse_card_list(parts[2]), verb == "ooturn")
            if len(parts) == 2:
                return Play(player, Card.parse(verb))
    except InvalidInputError as exc:
        raise InvalidInputError(f"cannot read action {text!r}: {exc}") from None
    raise InvalidInputError(f"cannot read action {text!r}")
