"""Worked deals derived by hand from docs/rules.md, one per rules point the engine once got wrong.

Each deal is written as a hand record (what the table saw) and, where the point concerns live
play too, driven through a known-hands ``Deal`` as well: both paths must agree.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine import (
    DECK,
    Card,
    ClaimFlush,
    Deal,
    Declare,
    Exchange,
    IllegalActionError,
    Options,
    RecordError,
    TakeTurnUp,
    TurnUp,
)
from engine.bots import Bot, play_deal
from engine.records import deal_to_record, score_record


def _score_error(record: dict[str, Any]) -> str:
    with pytest.raises(RecordError) as info:
        score_record(record)
    return str(info.value)


def _tricks(*tricks: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [{"plays": [list(p) for p in t]} for t in tricks]


# ------------------------------------------------------------------ 1. turn-up taken, then the miss
def _turnup_then_miss(**extra: Any) -> dict[str, Any]:
    """Three-card, dealer_takes_turnup. D takes the turn-up 7S, then contests A's lone stand by
    taking the miss (3D QH AC): his own hand, 7S in it, is dead (§5.1). Spades are led and the
    miss has none, so 3D is a free discard: no revoke. A 6, D 3; nobody looed."""
    return {
        "variant": "three_card", "options": {"dealer_takes_turnup": True},
        "players": ["A", "B", "C", "D"], "dealer": "D",
        "balances_before": {p: 50 for p in "ABCD"}, "pool_before": 6, "turn_up": "7S",
        "declarations": [["A", "play"], ["B", "pass"], ["C", "pass"], ["D", "take_miss"]],
        "tricks": _tricks([("A", "AS"), ("D", "3D")], [("A", "KH"), ("D", "QH")],
                          [("A", "2C"), ("D", "AC")]),
        **extra,
    }


@pytest.mark.parametrize("holdings", [None, {"D": ["7S"]}], ids=["plain", "turn-up-as-holding"])
def test_miss_taker_is_not_charged_with_a_card_of_his_dead_hand(holdings: Any) -> None:
    record = _turnup_then_miss(**({"known_holdings": holdings} if holdings else {}))
    out = score_record(record)
    assert out["revokes"] == []
    assert out["trick_winners"] == ["A", "A", "D"]
    assert out["paid"] == {"A": 6, "D": 3} and out["looed"] == {}
    assert out["balances_after"] == {"A": 56, "B": 50, "C": 50, "D": 50}
    assert out["pool_after"] == 0 and out["total_chips"] == 206


def test_miss_taker_live_play_charges_no_revoke_on_the_dead_hand() -> None:
    opts = Options.for_variant("three_card", dealer_takes_turnup=True)
    hands = {"A": ["AS", "KH", "2C"], "B": ["8D", "9D", "10D"], "C": ["JD", "QD", "KD"],
             "D": ["4H", "5H", "6C"]}
    deal = Deal(opts, "ABCD", "D", balances={p: 50 for p in "ABCD"}, pool_before=6,
                hands=hands, miss=["3D", "QH", "AC"], enforce=False)
    deal.push(TurnUp(Card.parse("7S")))
    deal.push(TakeTurnUp(Card.parse("4H")))
    assert deal.turn_up_holder == "D"
    for p, what in (("A", "play"), ("B", "pass"), ("C", "pass"), ("D", "take_miss")):
        deal.push(Declare(p, what))
    assert deal.turn_up_holder is None  # his hand, 7S in it, is dead
    for p, c in (("A", "AS"), ("D", "3D"), ("A", "KH"), ("D", "QH"), ("A", "2C"), ("D", "AC")):
        deal.play(p, c)
    assert deal.revokes == []
    assert deal.settle().to_dict()["balances_after"] == {"A": 56, "B": 50, "C": 50, "D": 50}


def test_miss_taker_cannot_play_the_turn_up_of_his_dead_hand() -> None:
    record = _turnup_then_miss()
    record["tricks"][0]["plays"][1] = ["D", "7S"]
    assert "7S is the turn-up" in _score_error(record)


# ------------------------------------------------------------------ 2. a known card never played
def _known_card_unplayed(options: dict[str, Any], turn_up: str,
                         holdings: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """D stands and plays 3D, QH, AC: never 7S, which the table saw in his hand. §10.5: the
    record is inconsistent; no must_follow revoke may be built on 7S."""
    record = _turnup_then_miss()
    record.update(options=options, turn_up=turn_up,
                  declarations=[["A", "play"], ["B", "pass"], ["C", "pass"], ["D", "play"]])
    if holdings:
        record["known_holdings"] = holdings
    return record


@pytest.mark.parametrize("record", [
    _known_card_unplayed({"dealer_takes_turnup": True}, "7S"),        # the turn-up he kept
    _known_card_unplayed({}, "8H", {"D": ["7S"]}),                    # a card seen exposed
], ids=["kept-turn-up", "exposed-card"])
def test_a_known_card_its_holder_never_plays_is_an_inconsistent_record(
        record: dict[str, Any]) -> None:
    msg = _score_error(record)
    assert "tricks[2].plays[1] (D AC)" in msg
    assert "known to hold 7S" in msg


def test_cards_of_a_false_flush_must_be_played() -> None:
    """Five-card: A claims 2H 3H 4H 5H 7S (no flush), so these are his five cards; leading KD
    leaves four turns for five known cards."""
    record = {
        "variant": "five_card", "players": ["A", "B", "C"], "dealer": "C",
        "balances_before": {p: 50 for p in "ABC"}, "pool_before": 5, "turn_up": "2D",
        "declarations": [["A", "play"], ["B", "play"], ["C", "pass"]],
        "flush_claims": [{"player": "A", "cards": ["2H", "3H", "4H", "5H", "7S"]}],
        "tricks": _tricks([("A", "KD"), ("B", "AD")]),
    }
    assert "known to hold 2H, 3H, 4H, 5H, 7S" in _score_error(record)


def test_live_camera_play_leaving_a_known_card_unplayed_is_refused() -> None:
    """Unknown hands (the camera): the last card is refused, so the host is asked (§10.5)."""
    deal = Deal(Options.for_variant("three_card", dealer_takes_turnup=True), "ABCD", "D",
                balances={p: 50 for p in "ABCD"}, pool_before=6)
    deal.push(TurnUp(Card.parse("7S")))
    for p, what in (("A", "play"), ("B", "pass"), ("C", "pass"), ("D", "play")):
        deal.push(Declare(p, what))
    for p, c in (("A", "AS"), ("D", "3D"), ("A", "KH"), ("D", "QH"), ("A", "2C")):
        deal.play(p, c)
    with pytest.raises(IllegalActionError, match="known to hold 7S"):
        deal.play("D", "AC")
    deal.play("D", "7S")  # the card he must still have
    assert deal.is_over


# ------------------------------------------------------------------ 3. exchange_stock_exhausted = stop
def _ten_five_card(exchanges: dict[str, int], **options: Any) -> dict[str, Any]:
    """Five-card, ten seats: 50 cards dealt and the turn-up leave a stock of one card. A and B
    stand; A leads five hearts, B throws spades: A takes 10, B is looed."""
    players = list("ABCDEFGHIJ")
    return {
        "variant": "five_card", "options": options, "players": players, "dealer": "J",
        "balances_before": {p: 50 for p in players}, "pool_before": 5, "turn_up": "2D",
        "declarations": [[p, "play" if p in "AB" else "pass"] for p in players],
        "exchanges": exchanges,
        "tricks": _tricks(*[[("A", f"{r}H"), ("B", f"{r}S")] for r in ("A", "K", "Q", "J", "10")]),
    }


def test_stop_scores_an_exchange_the_stock_can_supply() -> None:
    out = score_record(_ten_five_card({"A": 1}, exchange_stock_exhausted="stop"))
    assert out["paid"] == {"A": 10} and out["looed"] == {"B": 5}


def test_stop_refuses_an_exchange_the_stock_cannot_supply() -> None:
    msg = _score_error(_ten_five_card({"A": 1, "B": 1}, exchange_stock_exhausted="stop"))
    assert "exchanges['B']" in msg and "too few cards for 1" in msg and "= stop" in msg
    # The default continues the stock with the passers' cards.
    assert score_record(_ten_five_card({"A": 1, "B": 1}))["paid"] == {"A": 10}


def test_irish_seventeen_seats_have_no_stock_under_stop() -> None:
    players = [f"P{i:02}" for i in range(1, 18)]
    record = {
        "variant": "irish", "options": {"exchange_stock_exhausted": "stop"}, "players": players,
        "dealer": players[-1], "balances_before": {p: 50 for p in players}, "pool_before": 3,
        "turn_up": "2D",
        "declarations": [[p, "play" if i < 2 else "pass"] for i, p in enumerate(players)],
        "exchanges": {"P01": 1}, "tricks": [],
    }
    assert "too few cards for 1: P01 can draw 0" in _score_error(record)


@pytest.mark.parametrize("variant,seats", [("five_card", 10), ("irish", 17)])
def test_known_hands_and_records_refuse_the_same_short_stock(variant: str, seats: int) -> None:
    players = [f"P{i:02}" for i in range(1, seats + 1)]
    opts = Options.for_variant(variant, exchange_stock_exhausted="stop", club_law=False)
    deal = Deal.shuffled(opts, players, players[-1], random.Random(3), pool_before=5)
    for i, p in enumerate(players):
        deal.push(Declare(p, "play" if i < 2 else "pass"))
    room = 52 - seats * opts.hand_size - 1
    first = deal.to_act
    assert first == "P01"
    if room:
        deal.push(Exchange(first, room, tuple(deal.hand(first)[:room])))
    second = deal.to_act
    assert second is not None
    with pytest.raises(IllegalActionError, match="too few cards for 1"):
        deal.push(Exchange(second, 1, (deal.hand(second)[0],)))


# ------------------------------------------------------------------ 4. the turn-up is never drawn
def test_turn_up_in_a_passing_dealers_hand_is_never_drawn_and_both_paths_agree() -> None:
    """Five-card, ten seats, dealer_takes_turnup: J takes the turn-up 2C (the first card in the
    engine's reshuffle order) and passes. A's exchange of five runs the one-card stock out and
    the passers' cards continue it -- without the turn-up (§2 over §14.2, see docs/rules.md)."""
    players = list("ABCDEFGHIJ")
    rest = [c for c in DECK if str(c) not in ("2C", "3C")]
    hands = {p: rest[5 * i:5 * i + 5] for i, p in enumerate(players)}
    opts = Options.for_variant("five_card", dealer_takes_turnup=True)
    deal = Deal(opts, players, "J", balances={p: 50 for p in players}, pool_before=5, hands=hands)
    turn_up = Card.parse("2C")
    deal.push(TurnUp(turn_up))
    deal.push(TakeTurnUp(hands["J"][0]))
    for p in players:
        deal.push(Declare(p, "play" if p in "AB" else "pass"))
    for p in "AB":
        deal.push(Exchange(p, 5, tuple(deal.hand(p))))
        assert turn_up not in deal.hand(p)
    play_deal(deal, Bot(random.Random(1)))
    settlement = deal.settle().to_dict()
    scored = score_record(deal_to_record(deal))
    assert {k: scored[k] for k in settlement if k in scored} == {
        k: settlement[k] for k in settlement if k in scored}


def test_a_stop_table_counts_the_turn_up_out_of_the_passers_cards() -> None:
    """Both modes agree on the room a reshuffle gives: the passing dealer's hand adds four."""
    players = list("ABCDEFGHIJ")
    for known in (True, False):
        kw: dict[str, Any] = {}
        if known:
            rest = [c for c in DECK if str(c) not in ("2C", "3C")]
            kw["hands"] = {p: rest[5 * i:5 * i + 5] for i, p in enumerate(players)}
        deal = Deal(Options.for_variant("five_card", dealer_takes_turnup=True), players, "J",
                    balances={p: 50 for p in players}, **kw)
        deal.push(TurnUp(Card.parse("2C")))
        if known:
            deal.push(TakeTurnUp(kw["hands"]["J"][0]))
        for p in players:
            deal.push(Declare(p, "play" if p == "A" or p == "B" else "pass"))
        # stock 1 + J's discard 1 + seven passers' 35 + J's hand without the turn-up 4
        assert deal._exchange_room("A") == 41, known


# ------------------------------------------------------------------ 5. the second lead, named once
def _second_lead(**options: Any) -> dict[str, Any]:
    """Three-card, spades trumps. B wins trick 1 with AH, then holds 5S and QS and leads the
    lower: the law of trick 2 (the winner of trick 1 leads a trump, the higher of two) is broken,
    proven when QS appears in trick 3. B forfeits his tricks and is looed, with A and C."""
    return {
        "variant": "three_card", "options": options, "players": ["A", "B", "C"], "dealer": "C",
        "balances_before": {p: 50 for p in "ABC"}, "pool_before": 6, "turn_up": "2S",
        "declarations": [["A", "play"], ["B", "play"], ["C", "play"]],
        "tricks": _tricks([("A", "KH"), ("B", "AH"), ("C", "5H")],
                          [("B", "5S"), ("C", "6C"), ("A", "3C")],
                          [("B", "QS"), ("C", "7C"), ("A", "4D")]),
    }


@pytest.mark.parametrize("options", [{}, {"two_trumps_lead": "any"}], ids=["highest", "any"])
def test_second_lead_of_the_lower_of_two_trumps_is_lead_trump_after_first_trick(
        options: dict[str, Any]) -> None:
    out = score_record(_second_lead(**options))
    assert out["revokes"] == [{"player": "B", "trick": 2, "rule": "lead_trump_after_first_trick",
                               "witness": "QS", "detected_in_trick": 3}]
    assert out["paid"] == {} and out["looed"] == {"A": 3, "B": 3, "C": 3}
    assert out["pool_after"] == 18


# ------------------------------------------------------------------ 6. no exchange in three-card
def test_an_exchange_in_three_card_is_refused_for_the_right_reason() -> None:
    record = _second_lead()
    record["exchanges"] = {"A": 1}
    assert _score_error(record) == "exchanges: there is no exchange in three-card Loo"
    record["exchanges"] = {"A": 0}  # "exchanged 0" is no exchange at all
    assert score_record(record)["revokes"]


def test_a_live_exchange_in_three_card_names_the_game() -> None:
    deal = Deal("three_card", "ABC", "C", balances={p: 50 for p in "ABC"}, pool_before=6)
    deal.push(TurnUp(Card.parse("2S")))
    with pytest.raises(IllegalActionError, match="no exchange in three-card Loo"):
        deal.push(Exchange("A", 1))
    with pytest.raises(IllegalActionError, match="no flushes in three-card Loo"):
        deal.push(ClaimFlush("A", tuple(DECK[:5])))
