"""One deal of Loo: the state machine of loo-rules.md §4–§11 (skeleton; being filled in)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Mapping, Sequence

from engine.actions import Action, Play
from engine.cards import Card
from engine.options import Options, Variant
from engine.outcome import Revoke, Settlement

__all__ = ["Deal", "LegalMoves"]

PHASES = ("turn_up", "take_turnup", "declare", "exchange", "flush", "play", "over")


class LegalMoves:
    """A lazy view of the legal actions now (like python-chess's ``board.legal_moves``)."""

    def __init__(self, deal: Deal) -> None:
        self._deal = deal

    def __iter__(self) -> Iterator[Action]:
        raise NotImplementedError

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, action: object) -> bool:
        raise NotImplementedError


class Deal:
    """One deal, driven by ``push(action)``.

    Known hands (``hands=`` given): simulation, bots, tests — ``legal_moves`` works and, with
    ``enforce=True``, an illegal play raises IllegalActionError. Unknown hands (the camera's
    table): every physical play is accepted and ``revokes`` grows the moment a witness appears.
    """

    def __init__(
        self,
        options: Options | Variant | str,
        players: Sequence[str],
        dealer: str,
        *,
        balances: Mapping[str, int] | None = None,
        pool_before: int = 0,
        antes: Mapping[str, int] | None = None,
        hands: Mapping[str, Iterable[Card | str]] | None = None,
        miss: Iterable[Card | str] | None = None,
        stock: Iterable[Card | str] | None = None,
        known_holdings: Mapping[str, Iterable[Card | str]] | None = None,
        enforce: bool = True,
    ) -> None:
        raise NotImplementedError

    @classmethod
    def shuffled(
        cls,
        options: Options | Variant | str,
        players: Sequence[str],
        dealer: str,
        rng: random.Random,
        **kwargs: object,
    ) -> Deal:
        """A known-hands deal dealt from a pack shuffled by ``rng``, turn-up already pushed."""
        raise NotImplementedError

    def push(self, action: Action) -> None:
        """Apply ``action``; raise IllegalActionError / OutOfTurnError (state unchanged) if not allowed."""
        raise NotImplementedError

    def pop(self) -> Action:
        """Undo the last action and return it."""
        raise NotImplementedError

    def copy(self) -> Deal:
        """An independent copy (same actions)."""
        raise NotImplementedError

    @property
    def legal_moves(self) -> LegalMoves:
        """Lazy view of the legal actions (known hands only)."""
        return LegalMoves(self)

    def settle(self) -> Settlement:
        """The settlement; only when the deal is over (after the last trick, or no play)."""
        raise NotImplementedError

    def play(self, player: str, card: Card | str) -> None:
        """Shorthand for ``push(Play(player, Card.parse(card)))``."""
        self.push(Play(player, card if isinstance(card, Card) else Card.parse(card)))

    revokes: list[Revoke]
