"""Play of the cards (§8): legal cards with known hands, trick winners, Pam, "Pam be civil", leads."""

from __future__ import annotations

from typing import Any

import pytest

from engine import (
    DECK,
    CallCivil,
    Card,
    Deal,
    Declare,
    Exchange,
    IllegalActionError,
    Options,
    Play,
    TurnUp,
)


def known(variant: str, turn_up: str, hands: dict[str, list[str]], *, dealer: str | None = None,
          enforce: bool = True, **overrides: Any) -> Deal:
    """All seats stand; seats are the keys of ``hands`` in order; dealer = last seat."""
    opts = Options.for_variant(variant, **overrides)
    players = list(hands)
    dealer = dealer or players[-1]
    parsed = {p: [Card.parse(c) for c in cs] for p, cs in hands.items()}
    used = {c for cs in parsed.values() for c in cs} | {Card.parse(turn_up)}
    spare = [c for c in DECK if c not in used]
    miss = spare[:3] if opts.miss else None
    d = Deal(opts, players, dealer, hands=parsed, miss=miss, stock=spare[3:],
             balances={p: 100 for p in players}, pool_before=6, enforce=enforce)
    d.push(TurnUp(Card.parse(turn_up)))
    while d.phase == "declare":
        p = d.to_act
        assert p is not None
        d.push(Declare(p, "play") if d.allowed_declarations() else Exchange(p, 0))
    while d.phase == "exchange":
        p = d.to_act
        assert p is not None
        d.push(Exchange(p, 0))
    return d


def play(d: Deal, *cards: str) -> None:
    for c in cards:
        p = d.to_act
        assert p is not None
        d.push(Play(p, Card.parse(c)))


def legal(d: Deal) -> set[str]:
    return {str(c) for c in d.legal_cards()}


# ---------------------------------------------------------------- following (§8.2)
def test_follow_and_head() -> None:
    d = known("three_card", "2H", {"A": ["9C", "5D", "6D"], "B": ["KC", "3C", "AH"],
                                   "C": ["8S", "4S", "7D"]}, lead_rules="none")
    play(d, "9C")
    assert legal(d) == {"KC"}  # a club that heads
    d2 = known("three_card", "2H", {"A": ["9C", "5D", "6D"], "B": ["8C", "3C", "AH"],
                                    "C": ["8S", "4S", "7D"]}, lead_rules="none")
    play(d2, "9C")
    assert legal(d2) == {"8C", "3C"}  # cannot head: any club


def test_void_must_trump_then_overtrump_not_undertrump() -> None:
    hands = {"A": ["9C", "5D", "6D"], "B": ["3H", "2S", "3S"], "C": ["5H", "4S", "7D"]}
    d = known("three_card", "2H", hands, lead_rules="none")
    play(d, "9C")
    assert legal(d) == {"3H"}
    play(d, "3H")
    assert legal(d) == {"5H"}  # overtrump
    d = known("three_card", "2H", {**hands, "C": ["AD", "4S", "7D"]}, lead_rules="none")
    play(d, "9C", "3H")
    assert legal(d) == {"AD", "4S", "7D"}  # void, no trump: anything
    d = known("three_card", "2H", {"A": ["9C", "5D", "6D"], "B": ["5H", "2S", "3S"],
                                   "C": ["3H", "4S", "7D"]}, lead_rules="none")
    play(d, "9C", "5H")
    assert legal(d) == {"3H", "4S", "7D"}  # cannot overtrump: free (EW) by default
    d = known("three_card", "2H", {"A": ["9C", "5D", "6D"], "B": ["5H", "2S", "3S"],
                                   "C": ["3H", "4S", "7D"]}, lead_rules="none",
              must_undertrump=True)
    play(d, "9C", "5H")
    assert legal(d) == {"3H"}


def test_trumped_trick_still_must_follow_with_any_card_of_the_suit() -> None:
    d = known("three_card", "2H", {"A": ["9C", "5D", "6D"], "B": ["3H", "2S", "3S"],
                                   "C": ["KC", "2C", "7D"]}, lead_rules="none")
    play(d, "9C", "3H")
    assert legal(d) == {"KC", "2C"}


def test_whist_style_options() -> None:
    d = known("five_card", "2H", {"A": ["9C", "5D", "6D", "7D", "8D"],
                                  "B": ["KC", "3C", "AH", "2S", "3S"],
                                  "C": ["4S", "5S", "6S", "7S", "8S"]},
              must_head=False, must_trump=False)
    play(d, "9C")
    assert legal(d) == {"KC", "3C"}
    play(d, "3C")
    assert legal(d) == {"4S", "5S", "6S", "7S", "8S"}


def test_trick_winner_by_power() -> None:
    d = known("three_card", "2H", {"A": ["9C", "5D", "6D"], "B": ["AS", "2S", "3S"],
                                   "C": ["3H", "4S", "7D"]}, lead_rules="none", must_trump=False)
    play(d, "9C", "AS", "3H")
    assert d.trick_winners == ["C"] and d.to_act == "C"


# ---------------------------------------------------------------- Pam (§8.4–8.6)
FIVE = {"A": ["AS", "3D", "KH", "9H", "7C"], "B": ["JC", "6S", "2H", "QD", "8C"],
        "C": ["10S", "4C", "5H", "AD", "KC"]}


def test_pam_civil_automatic_holder_with_another_trump() -> None:
    d = known("five_card", "4S", FIVE, dealer="D" if False else None)
    play(d, "AS")
    assert legal(d) == {"6S"}


def test_pam_civil_on_call() -> None:
    d = known("five_card", "4S", FIVE, pam_be_civil="on_call")
    play(d, "AS")
    assert legal(d) == {"JC"}  # FC25: uncalled, Pam is the only card that heads the ace
    assert CallCivil() in d.legal_moves
    d.push(CallCivil())
    assert legal(d) == {"6S"}
    with pytest.raises(IllegalActionError):
        d.push(CallCivil())


def test_pam_civil_only_trump_must_be_played_or_not_under_strict() -> None:
    hands = {"A": ["AH", "QS", "3D", "2C", "KS"], "B": ["JC", "4S", "8D", "6C", "9D"],
             "C": ["7H", "AS", "10D", "KC", "3C"]}
    d = known("five_card", "5H", hands)
    play(d, "AH")
    assert legal(d) == {"JC"}  # FC05
    d = known("five_card", "5H", hands, pam_civil_strict=True)
    play(d, "AH")
    assert legal(d) == {"4S", "8D", "6C", "9D"}  # FC06


def test_pam_civil_off() -> None:
    d = known("five_card", "4S", FIVE, pam_be_civil="off")
    play(d, "AS")
    assert legal(d) == {"JC"}


def test_pam_is_a_trump_not_a_club() -> None:
    hands = {"A": ["5C", "3H", "AH", "7S", "KD"], "B": ["JC", "8C", "QH", "2S", "6D"],
             "C": ["AC", "10D", "4H", "KS", "9S"]}
    d = known("five_card", "9D", hands)
    play(d, "5C")
    assert legal(d) == {"8C"}  # FC07: Pam on a club lead while holding a club is illegal
    hands["B"] = ["JC", "7H", "QH", "2S", "6D"]
    d = known("five_card", "9D", hands)
    play(d, "5C")
    assert legal(d) == {"JC", "6D"}  # FC08: void in clubs, trumps that head
    play(d, "JC", "AC")
    assert d.trick_winners == ["B"]


def test_pam_led_commands_trumps() -> None:
    hands = {"A": ["JC", "3H", "AH", "7S", "KD"], "B": ["2D", "8C", "QH", "AD", "6S"],
             "C": ["AC", "10H", "4H", "KS", "9S"]}
    d = known("five_card", "9D", hands)
    play(d, "JC")
    assert legal(d) == {"2D", "AD"}  # nothing heads Pam: any trump
    play(d, "2D")
    assert legal(d) == {"AC", "10H", "4H", "KS", "9S"}


def test_pam_rule_free() -> None:
    hands = {"A": ["4C", "9H", "KS", "2D", "QH"], "B": ["JC", "7C", "3S", "5H", "AH"],
             "C": ["AC", "8D", "10S", "6S", "KH"]}
    d = known("five_card", "6D", hands, pam_rule="free")
    play(d, "4C")
    assert legal(d) == {"JC", "7C"}  # FC09
    d = known("five_card", "6D", {**hands, "A": ["4D", "9H", "KS", "2C", "QH"]}, pam_rule="free")
    play(d, "4D")
    assert legal(d) == {"JC", "7C", "3S", "5H", "AH"}  # not obliged to play Pam to trumps


def test_running_pam_and_pam_turned_up() -> None:
    d = known("five_card", "6H", {"A": ["KC", "2H", "9S", "4D", "JH"],
                                  "B": ["JC", "AH", "8S", "5D", "QC"],
                                  "C": ["10C", "KH", "AS", "3D", "7S"]},
              pam_identity="jack_of_trumps")
    assert str(d.pam) == "JH"
    d = known("five_card", "JC", {"A": ["AC", "KC", "4H", "7D", "2S"],
                                  "B": ["QC", "3H", "AH", "9D", "5S"],
                                  "C": ["10C", "2H", "KH", "8D", "6S"]})
    assert d.pam is None and d.trump == "C"


# ---------------------------------------------------------------- leads (§8.3)
def test_boss_trump_must_be_led_king_when_ace_turned() -> None:
    d = known("three_card", "2S", {"A": ["KH", "AS", "3D"], "B": ["QH", "5S", "8C"],
                                   "C": ["4H", "9D", "7C"]})
    assert legal(d) == {"AS"}
    d = known("three_card", "AD", {"A": ["KD", "5D", "QC"], "B": ["9D", "2H", "AC"],
                                   "C": ["JD", "6H", "10S"]})
    assert legal(d) == {"KD"}
    play(d, "KD", "9D", "JD")
    assert legal(d) == {"5D"}  # second_lead_rule


def test_two_trumps_lead_highest_or_any() -> None:
    hands = {"A": ["4H", "QH", "KS"], "B": ["9H", "AD", "2C"], "C": ["3H", "5C", "AS"]}
    assert legal(known("irish", "8H", hands)) == {"QH"}
    assert legal(known("irish", "8H", hands, two_trumps_lead="any")) == {"4H", "QH"}
    one = {"A": ["4H", "QC", "KS"], "B": ["9H", "AD", "2C"], "C": ["3H", "5C", "AS"]}
    assert legal(known("irish", "8H", one)) == {"4H", "QC", "KS"}


def test_parlett_cassell_highest_card() -> None:
    hands = {"A": ["5C", "QS", "8H"], "B": ["3D", "KS", "2H"], "C": ["6C", "4S", "7H"]}
    assert legal(known("three_card", "9D", hands, lead_rules="parlett_cassell")) == {"QS"}
    assert legal(known("three_card", "9D", hands)) == {"5C", "QS", "8H"}


def test_five_card_leads_are_free_by_default() -> None:
    assert legal(known("five_card", "4S", FIVE)) == set(FIVE["A"])


def test_enforced_illegal_play_is_explained() -> None:
    d = known("three_card", "2S", {"A": ["KH", "AS", "3D"], "B": ["QH", "5S", "8C"],
                                   "C": ["4H", "9D", "7C"]})
    with pytest.raises(IllegalActionError, match="A may not lead KH while holding AS, the top trump"):
        d.push(Play("A", Card.parse("KH")))
    assert d.current_trick == []
