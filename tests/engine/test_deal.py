"""The deal's state machine (§4–§7), push/pop/copy, the legal-move view and the text notation."""

from __future__ import annotations

import random

import pytest
from sim_helpers import OPTION_MIXES, camera_deal, random_deal

from engine import (
    MISS,
    Card,
    ClaimFlush,
    Deal,
    Declare,
    Exchange,
    IllegalActionError,
    InvalidInputError,
    Misdeal,
    Options,
    OutOfTurnError,
    Play,
    ShowPam,
    TurnUp,
    deal_from_text,
    deal_to_text,
)

P4 = ["A", "B", "C", "D"]


def camera(variant: str = "three_card", pool_before: int = 6, players: list[str] = P4,
           **overrides: object) -> Deal:
    return Deal(Options.for_variant(variant, **overrides), players, players[-1],
                balances={p: 100 for p in players}, pool_before=pool_before)


def decl(d: Deal, *actions: str) -> None:
    for a in actions:
        p = d.to_act
        assert p is not None
        d.push(Declare(p, a))


def test_phases_and_turns() -> None:
    d = camera()
    assert d.phase == "turn_up" and d.to_act is None and d.pool_at_play == 9
    with pytest.raises(IllegalActionError):
        d.push(Declare("A", "play"))
    d.push(TurnUp(Card.parse("7H")))
    assert (d.phase, d.trump, d.to_act, d.forced) == ("declare", "H", "A", False)
    with pytest.raises(OutOfTurnError, match="A's turn"):
        d.push(Declare("B", "play"))
    with pytest.raises(InvalidInputError):
        d.push(Declare("Zed", "play"))
    decl(d, "play", "pass", "play", "play")
    assert d.phase == "play" and d.standers == ["A", "C", "D"] and d.to_act == "A"
    with pytest.raises(OutOfTurnError):
        d.push(Play("C", Card.parse("2C")))
    d.push(Play("A", Card.parse("AH")))
    with pytest.raises(IllegalActionError, match="already played"):
        d.push(Play("C", Card.parse("AH")))
    with pytest.raises(IllegalActionError, match="turn-up"):
        d.push(Play("C", Card.parse("7H")))
    with pytest.raises(IllegalActionError):
        d.push(Misdeal())  # cards are on the table


def test_everyone_passes_dealer_takes_without_declaring() -> None:
    d = camera()
    d.push(TurnUp(Card.parse("7H")))
    decl(d, "pass", "pass", "pass")
    assert d.is_over and d.to_act is None
    s = d.settle()
    assert (s.kind, s.paid, s.pool_after) == ("all_pass", {"D": 9}, 0)
    d = camera(all_pass="carry")
    d.push(TurnUp(Card.parse("7H")))
    decl(d, "pass", "pass", "pass")
    assert d.settle().pool_after == 9


def test_dealer_contests_a_lone_stander() -> None:
    d = camera()
    d.push(TurnUp(Card.parse("7H")))
    decl(d, "pass", "play", "pass")
    assert d.allowed_declarations() == ("play", "take_miss", "defend_miss")
    with pytest.raises(IllegalActionError, match="may not pass"):
        d.push(Declare("D", "pass"))
    d.push(Declare("D", "defend_miss"))
    assert d.standers == ["B", MISS]
    # TC11's shape: the miss's trick stays in the pool, it is never looed
    for p, c in [("B", "AH"), (MISS, "2H"), ("B", "KS"), (MISS, "AS"), (MISS, "3D"), ("B", "4D")]:
        d.push(Play(p, Card.parse(c)))
    s = d.settle()
    assert s.trick_winners == ["B", MISS, "B"]
    assert s.paid == {"B": 6} and s.looed == {} and s.pool_after == 3


def test_miss_taker_alone_and_take_miss_rules() -> None:
    d = camera()
    d.push(TurnUp(Card.parse("7H")))
    decl(d, "take_miss")
    assert d.miss_taker == "A"
    assert d.allowed_declarations() == ("play", "pass")
    decl(d, "pass", "pass")
    assert d.allowed_declarations() == ("play", "pass")
    decl(d, "pass")
    s = d.settle()
    assert (s.kind, s.paid) == ("lone_stander", {"A": 9})


def test_bold_stand_and_club_law() -> None:
    d = camera(pool_before=0)
    d.push(TurnUp(Card.parse("7H")))
    assert d.forced and d.allowed_declarations() == ("play", "take_miss")
    decl(d, "play")
    assert d.allowed_declarations() == ("play",)
    d = camera(pool_before=0, force_miss="none")
    d.push(TurnUp(Card.parse("7H")))
    assert d.allowed_declarations() == ("play",)
    d = camera(club_law=True)
    d.push(TurnUp(Card.parse("7C")))
    assert d.forced and d.allowed_declarations() == ("play",)
    d = camera("five_card", pool_before=0)
    d.push(TurnUp(Card.parse("7C")))
    assert not d.forced and "pass" in d.allowed_declarations()


def test_irish_and_five_card_lone_stander_takes_pool() -> None:
    for variant in ("irish", "five_card"):
        d = camera(variant)
        d.push(TurnUp(Card.parse("7H")))
        decl(d, "pass", "play", "pass", "pass")
        s = d.settle()
        assert (s.kind, s.paid) == ("lone_stander", {"B": d.pool_at_play})


def test_exchange_order_and_timing() -> None:
    d = camera("five_card")
    d.push(TurnUp(Card.parse("7H")))
    decl(d, "play", "pass", "play", "play")
    assert d.phase == "exchange" and d.to_act == "A"
    with pytest.raises(OutOfTurnError):
        d.push(Exchange("C", 1))
    with pytest.raises(IllegalActionError):
        d.push(Exchange("A", 6))
    for p, n in [("A", 2), ("C", 0), ("D", 5)]:
        d.push(Exchange(p, n))
    assert d.phase == "flush" and d.exchanges == {"A": 2, "C": 0, "D": 5}
    d = camera("irish", exchange_timing="with_declaration")
    d.push(TurnUp(Card.parse("7H")))
    decl(d, "play")
    assert d.to_act == "A" and d.allowed_declarations() == ()
    d.push(Exchange("A", 1))
    assert d.to_act == "B"


def test_flush_window() -> None:
    d = camera("five_card")
    d.push(TurnUp(Card.parse("6D")))
    decl(d, "pass", "play", "play", "play")
    for p in "BCD":
        d.push(Exchange(p, 0))
    with pytest.raises(IllegalActionError, match="did not stand"):
        d.push(ClaimFlush("A", tuple(map(Card.parse, ["KH", "10H", "8H", "5H", "3H"]))))
    d.push(ClaimFlush("D", tuple(map(Card.parse, ["KS", "10S", "8S", "5S", "3C"]))))  # false
    assert not d.is_over and d.known_holdings("D")
    d.push(ClaimFlush("C", tuple(map(Card.parse, ["KH", "10H", "8H", "5H", "3H"]))))
    assert d.is_over
    with pytest.raises(IllegalActionError, match="flush"):
        d.push(Play("B", Card.parse("2C")))
    d.push(ShowPam("B"))
    s = d.settle()
    assert s.flush_winner == "C" and s.paid == {"C": 11} and s.looed == {"D": 5}


def test_push_pop_copy_and_legal_moves_view() -> None:
    rng = random.Random(7)
    deal, _ = random_deal(rng, "five_card", {}, n_players=5, sloppiness=0.0)
    moves = deal.moves
    d = Deal(deal.options, deal.players, deal.dealer, balances=deal.balances_before,
             pool_before=deal.pool_before, hands={p: deal._init_hands[p] for p in deal.players},
             stock=deal._init_stock)
    for a in moves:
        assert a in d.legal_moves
        before = list(d.legal_moves)
        assert len(d.legal_moves) == len(before)
        d.push(a)
        snapshot = deal_to_text(d)
        c = d.copy()
        undone = d.pop()
        assert undone == a and list(d.legal_moves) == before
        d.push(a)
        assert deal_to_text(d) == snapshot == deal_to_text(c)
    assert d.is_over and not d.legal_moves
    assert d.settle() == deal.settle()


@pytest.mark.parametrize("mix", range(len(OPTION_MIXES)), ids=lambda i: OPTION_MIXES[i][0])
def test_notation_round_trips(mix: int) -> None:
    variant, overrides = OPTION_MIXES[mix]
    rng = random.Random(500 + mix)
    for _ in range(8):
        deal, _ = random_deal(rng, variant, overrides)
        for d in (deal, camera_deal(deal)):
            text = deal_to_text(d)
            back = deal_from_text(text)
            assert deal_to_text(back) == text
            assert back.settle() == d.settle()


def test_notation_errors_are_clear() -> None:
    with pytest.raises(InvalidInputError, match="Players"):
        deal_from_text('[Variant "three_card"]\n[Dealer "C"]\n')
    text = '[Variant "three_card"]\n[Players "A B C"]\n[Dealer "C"]\n*up:7H A:play B:frob\n'
    with pytest.raises(InvalidInputError, match="move 3"):
        deal_from_text(text)


def test_bad_construction() -> None:
    with pytest.raises(InvalidInputError, match="dealer"):
        Deal("three_card", ["A", "B", "C"], "Z")
    with pytest.raises(InvalidInputError, match="players"):
        Deal("three_card", ["A", "B"], "B")
    with pytest.raises(InvalidInputError, match="different"):
        Deal("three_card", ["A", "A", "C"], "C")
    with pytest.raises(InvalidInputError, match="MISS"):
        Deal("three_card", ["A", "MISS", "C"], "C")
    with pytest.raises(InvalidInputError, match="twice"):
        Deal("three_card", ["A", "B", "C"], "C",
             hands={"A": ["AH", "2C", "3C"], "B": ["AH", "4C", "5C"], "C": ["6C", "7C", "8C"]},
             miss=["9C", "10C", "JC"])


def test_negative_balance_option_stops_a_stander_who_cannot_pay() -> None:
    opts = Options.for_variant("three_card", allow_negative_balance=False)
    d = Deal(opts, ["A", "B", "C"], "C", balances={"A": 2, "B": 100, "C": 100}, pool_before=6)
    d.push(TurnUp(Card.parse("7H")))
    with pytest.raises(IllegalActionError, match="cannot cover"):
        d.push(Declare("A", "play"))
    d.push(Declare("A", "pass"))


def test_rejected_actions_change_nothing() -> None:
    """Fuzz: random actions at random moments; whatever push refuses leaves the deal as it was."""
    from engine import DECK, Action, CallCivil, Expose, Replay, TakeTurnUp

    rng = random.Random(99)
    refused = 0
    for mix in range(len(OPTION_MIXES)):
        variant, overrides = OPTION_MIXES[mix]
        for camera_mode in (False, True):
            deal, _ = random_deal(rng, variant, overrides, n_players=4)
            src = camera_deal(deal) if camera_mode else deal
            moves = src.moves
            d = deal_from_text(deal_to_text(src))
            while d.moves:
                d.pop()
            names = list(d.players) + [MISS, "Nobody"]
            for a in moves:
                for _ in range(2):
                    p = rng.choice(names)
                    cards = tuple(rng.sample(DECK, 5))
                    junk: list[Action] = [
                        Play(p, cards[0]), Declare(p, rng.choice(["play", "pass", "take_miss",
                                                                  "defend_miss"])),
                        Exchange(p, rng.randint(0, 6), cards[:2]), ClaimFlush(p, cards),
                        ShowPam(p), CallCivil(), TurnUp(cards[1]), TakeTurnUp(cards[2]),
                        Misdeal(), Replay(), Expose(p, cards[:1]),
                    ]
                    j = rng.choice(junk)
                    before = deal_to_text(d)
                    legal_before = list(d.legal_moves) if d.known_hands else None
                    try:
                        d.push(j)
                    except (IllegalActionError, InvalidInputError):
                        refused += 1
                        assert deal_to_text(d) == before
                        if legal_before is not None:
                            assert list(d.legal_moves) == legal_before
                    else:
                        d.pop()
                        assert deal_to_text(d) == before
                d.push(a)
            assert d.settle() == src.settle()
    assert refused > 250


def test_camera_legal_moves_list_what_can_be_known() -> None:
    d = camera("five_card")
    assert list(d.legal_moves) == []  # the turn-up is read, not chosen
    d.push(TurnUp(Card.parse("7H")))
    assert set(d.legal_moves) == {Declare("A", "play"), Declare("A", "pass")}
    assert Declare("B", "play") not in d.legal_moves
    decl(d, "play", "pass", "play", "play")
    assert [m for m in d.legal_moves if isinstance(m, Exchange)] == [
        Exchange("A", k) for k in range(6)]
    assert Exchange("A", 2) in d.legal_moves and Exchange("C", 2) not in d.legal_moves
    assert d.legal_moves.count() == 6


def test_play_of_shares_one_immutable_play_per_seat_and_card() -> None:
    ah = Card.parse("AH")
    assert Play.of("A", ah) is Play.of("A", ah)
    assert Play.of("A", ah) == Play("A", ah) and Play.of("B", ah) != Play.of("A", ah)
    assert str(Play.of("MISS", ah)) == "MISS:AH"


def test_flush_claims_open_are_the_claims_among_the_legal_moves() -> None:
    hands = {"A": ["2H", "5H", "7H", "9H", "KH"], "B": ["2S", "3S", "4C", "5D", "6S"],
             "C": ["3H", "4H", "6H", "8H", "10H"]}
    d = Deal("five_card", ["A", "B", "C"], "C", balances={p: 50 for p in "ABC"}, pool_before=5,
             hands=hands)
    d.push(TurnUp(Card.parse("QS")))
    assert d.flush_claims_open() == []
    for p in "ABC":
        d.push(Declare(p, "play"))
    for _ in range(3):
        assert d.flush_claims_open() == [m for m in d.legal_moves if isinstance(m, ClaimFlush)]
        d.push(Exchange(d.to_act or "", 0))
    claims = d.flush_claims_open()
    assert [c.player for c in claims] == ["A", "C"]
    assert claims == [m for m in d.legal_moves if isinstance(m, ClaimFlush)]
    d.push(claims[0])
    assert d.flush_claims_open() == [m for m in d.legal_moves if isinstance(m, ClaimFlush)]
