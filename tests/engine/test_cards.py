"""Card parsing and identity (architecture.md: card notation everywhere)."""

from __future__ import annotations

import copy
import pickle

import pytest

from engine import DECK, Card, InvalidInputError, parse_cards


@pytest.mark.parametrize("text,canon", [("10h", "10H"), ("TH", "10H"), ("th", "10H"), (" jc ", "JC"),
                                        ("As", "AS"), ("2d", "2D"), ("qS", "QS")])
def test_parse_is_case_insensitive_and_canonical(text: str, canon: str) -> None:
    card = Card.parse(text)
    assert str(card) == canon
    assert Card.parse(canon) is card


@pytest.mark.parametrize("bad", ["", "1H", "11H", "10", "H", "ZZ", "10X", "AH ", "A H", 5])
def test_bad_text_is_rejected_with_a_readable_message(bad: object) -> None:
    if bad == "AH ":
        assert str(Card.parse(bad)) == "AH"  # surrounding blanks are fine
        return
    with pytest.raises(InvalidInputError) as err:
        Card.parse(bad)  # type: ignore[arg-type]
    assert "card" in str(err.value)


def test_interned_values() -> None:
    c = Card(10, "H")
    assert c is Card.parse("10H") and c.rank == 10 and c.suit == "H"
    assert pickle.loads(pickle.dumps(c)) is c
    assert copy.deepcopy(c) is c
    with pytest.raises(AttributeError):
        c.rank = 3  # type: ignore[misc]
    with pytest.raises(InvalidInputError):
        Card(15, "H")
    with pytest.raises(InvalidInputError):
        Card(10, "X")


def test_deck() -> None:
    assert len(DECK) == 52 and len(set(DECK)) == 52
    assert [c.index for c in DECK] == list(range(52))
    assert {str(c) for c in DECK} >= {"10H", "JC", "AS", "2D"}
    assert parse_cards(["ah", Card.parse("2c")]) == [Card.parse("AH"), Card.parse("2C")]
    assert sorted([Card.parse("AS"), Card.parse("2C")]) == [Card.parse("2C"), Card.parse("AS")]
