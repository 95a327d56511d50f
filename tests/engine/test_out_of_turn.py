"""§10.4: a card played out of turn "is then a known holding: it must be played when that seat's turn
comes". Enforced with known hands; with unknown hands it is evidence only (no rule name in §11.4)."""

from __future__ import annotations

import random

import pytest

from engine import Card, Deal, Declare, Expose, IllegalActionError, Play, TurnUp, parse_cards
from engine.bots import Bot, play_deal

P4 = ["A", "B", "C", "D"]
HANDS = {"A": "AS KC 3C", "B": "3S 9H 4D", "C": "QH 5C 6D", "D": "7H 2C 5D"}


def _deal(*, known: bool = True, enforce: bool = True) -> Deal:
    hands = {p: parse_cards(h.split()) for p, h in HANDS.items()} if known else None
    miss = parse_cards(["10C", "JC", "QC"]) if known else None
    d = Deal("three_card", P4, "D", balances={p: 50 for p in P4}, pool_before=6,
             hands=hands, miss=miss, enforce=enforce)
    d.push(TurnUp(Card.parse("2S")))
    for p in P4:
        d.push(Declare(p, "play"))
    return d


def _play(d: Deal, *plays: str) -> None:
    for text in plays:
        p, c = text.split(":")
        d.push(Play(p, Card.parse(c)))


def test_a_card_played_out_of_turn_must_be_played_when_the_turn_comes() -> None:
    d = _deal()
    d.push(Expose("B", (Card.parse("9H"),), out_of_turn=True))   # B's card hits the table early
    _play(d, "A:AS")
    assert d.legal_cards() == [Card.parse("3S")]    # the laws come first: B must follow spades
    _play(d, "B:3S", "C:QH", "D:7H")
    _play(d, "A:KC")                                 # B is void in clubs: any card, so the 9H
    assert d.legal_cards() == [Card.parse("9H")]
    assert Play("B", Card.parse("4D")) not in d.legal_moves
    with pytest.raises(IllegalActionError, match="B must play 9H, played out of turn"):
        _play(d, "B:4D")
    _play(d, "B:9H", "C:5C", "D:2C", "A:3C")
    assert d.legal_cards() == [Card.parse("4D")]
    assert d.warnings == ["B played 9H out of turn"]


def test_out_of_turn_card_that_is_legal_at_once_is_the_only_choice() -> None:
    d = _deal()
    _play(d, "A:AS", "B:3S", "C:QH", "D:7H", "A:KC")
    d.push(Expose("B", (Card.parse("4D"),), out_of_turn=True))
    assert d.legal_cards() == [Card.parse("4D")]
    d.pop()                                          # undoing the exposure frees the choice
    assert sorted(map(str, d.legal_cards())) == ["4D", "9H"]


def test_bots_play_the_card_shown_out_of_turn() -> None:
    d = _deal()
    d.push(Expose("B", (Card.parse("9H"),), out_of_turn=True))
    play_deal(d, Bot(random.Random(3)))   # left alone, the bot would throw the lower 4D
    assert ("B", Card.parse("9H")) in d.tricks[1]
    d.settle()


def test_without_enforcement_a_missed_out_of_turn_card_is_noted_not_a_revoke() -> None:
    d = _deal(enforce=False)
    d.push(Expose("B", (Card.parse("4D"),), out_of_turn=True))
    _play(d, "A:AS", "B:3S", "C:QH", "D:7H", "A:KC", "B:9H")
    assert d.revokes == []
    assert d.warnings[-1] == "B played 9H, not 4D played out of turn"


def test_the_camera_takes_it_as_evidence_only() -> None:
    d = _deal(known=False)
    d.push(Expose("B", (Card.parse("4D"),), out_of_turn=True))
    _play(d, "A:AS", "B:3S", "C:QH", "D:7H", "A:KC", "B:9H", "C:5C", "D:2C",
          "A:3C", "B:4D", "C:6D", "D:5D")
    assert d.revokes == []
    assert d.settle().kind == "play"
