"""Cards: 52 interned immutable values, parsed from and printed as ``10H``, ``JC``, ``AS``.

Cards are interned (one object per card) so equality and hashing are identity-fast; the engine
compares and hashes cards in its innermost loops (legality, trick winners).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from engine.errors import InvalidInputError

__all__ = ["Card", "DECK", "RANKS", "SUITS", "SUIT_NAMES", "RANK_NAMES", "cards_by_player", "parse_cards"]

SUITS: Final = "CDHS"
SUIT_NAMES: Final = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
RANK_NAMES: Final = {
    2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9", 10: "10",
    11: "J", 12: "Q", 13: "K", 14: "A",
}
RANKS: Final[tuple[str, ...]] = tuple(RANK_NAMES.values())
"""The ranks as written in a card's code, 2 up to the ace: the one alphabet of the packages that
may import engine (table, web, models, bench). vision may not, and keeps its own in
``vision.labels``; tests/vision/test_alphabet.py checks that the two agree."""
_RANK_PARSE: Final = {
    "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "10": 10, "T": 10,
    "J": 11, "Q": 12, "K": 13, "A": 14,
}


class Card:
    """One playing card. Immutable and interned: ``Card.parse("10h") is Card(10, "H")``.

    ``rank`` is 2..14 (ace high), ``suit`` one of ``"CDHS"``, ``index`` 0..51 (suit-major).
    """

    __slots__ = ("rank", "suit", "index", "_text")
    _cache: dict[tuple[int, str], Card] = {}
    _by_text: dict[str, Card] = {}

    rank: int
    suit: str
    index: int
    _text: str

    def __new__(cls, rank: int, suit: str) -> Card:
        card = cls._cache.get((rank, suit))
        if card is not None:
            return card
        if rank not in RANK_NAMES or not isinstance(suit, str) or suit not in SUITS or len(suit) != 1:
            raise InvalidInputError(f"no such card: rank {rank!r} of suit {suit!r}")
        card = object.__new__(cls)
        object.__setattr__(card, "rank", rank)
        object.__setattr__(card, "suit", suit)
        object.__setattr__(card, "index", SUITS.index(suit) * 13 + rank - 2)
        object.__setattr__(card, "_text", RANK_NAMES[rank] + suit)
        cls._cache[(rank, suit)] = card
        return card

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Card is immutable")

    def __reduce__(self) -> tuple[type[Card], tuple[int, str]]:
        # Unpickling goes through __new__, so interning (and identity equality) survives.
        return (Card, (self.rank, self.suit))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse ``10H``, ``th``, `` Jc `` …; raise InvalidInputError naming the bad text."""
        card = cls._by_text.get(text) if isinstance(text, str) else None
        if card is not None:
            return card
        if not isinstance(text, str):
            raise InvalidInputError(f"a card must be text like '10H', not {text!r}")
        t = text.strip().upper()
        rank = _RANK_PARSE.get(t[:-1]) if len(t) >= 2 else None
        if rank is None or t[-1] not in SUITS:
            raise InvalidInputError(
                f"not a card: {text!r} (write rank then suit, e.g. 10H, JC, AS, QD)"
            )
        card = cls(rank, t[-1])
        cls._by_text[text] = card
        return card

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Card.parse({self._text!r})"

    def __lt__(self, other: Card) -> bool:
        return self.index < other.index


def parse_cards(texts: Iterable[str | Card]) -> list[Card]:
    """Parse several cards (Card values pass through)."""
    return [t if isinstance(t, Card) else Card.parse(t) for t in texts]


DECK: Final[tuple[Card, ...]] = tuple(Card(r, s) for s in SUITS for r in range(2, 15))
"""The 52-card pack in a fixed order (clubs, diamonds, hearts, spades; 2 up to ace)."""


def cards_by_player(tricks: Iterable[Iterable[tuple[str, Card]]]) -> dict[str, list[Card]]:
    """Each player's cards in the order played (one per trick), from tricks of (player, card):
    the hand a player held, as the §11.1 audit and a record's check of its hands both need it."""
    hands: dict[str, list[Card]] = {}
    for plays in tricks:
        for player, card in plays:
            mine = hands.get(player)
            if mine is None:
                hands[player] = [card]
            else:
                mine.append(card)
    return hands
