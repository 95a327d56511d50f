"""``allow_negative_balance = false`` (docs/rules.md §14.5): a player who cannot cover a loo may not
stand, and in a forced deal (bold stand, must, club law) he is excused and passes."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Card, Deal, Declare, IllegalActionError, Options, TurnUp
from engine.bots import play_game
from engine.errors import RecordError
from engine.game import Game
from engine.records import score_record

P4 = ["A", "B", "C", "D"]


def _deal(variant: str, balances: dict[str, int], *, pool_before: int = 0,
          known: bool = False, **overrides: object) -> Deal:
    opts = Options.for_variant(variant, allow_negative_balance=False, **overrides)
    if not known:
        return Deal(opts, P4, "D", balances=balances, pool_before=pool_before)
    return Deal.shuffled(opts, P4, "D", random.Random(5), balances=balances,
                         pool_before=pool_before)


@pytest.mark.parametrize("known", [False, True])
def test_a_player_who_cannot_cover_is_excused_from_a_bold_stand(known: bool) -> None:
    d = _deal("three_card", {"A": 2, "B": 50, "C": 50, "D": 50}, pool_before=0, known=known)
    if not known:
        d.push(TurnUp(Card.parse("7H")))
    assert d.forced
    assert d.allowed_declarations() == ("pass",)
    assert [m for m in d.legal_moves] == [Declare("A", "pass")]
    assert Declare("A", "play") not in d.legal_moves
    with pytest.raises(IllegalActionError,
                       match=r"A has 2 chips and cannot cover a loo of 3, so he may not play: "
                             r"he must pass \(excused from the forced deal\)"):
        d.push(Declare("A", "play"))
    d.push(Declare("A", "pass"))
    assert d.allowed_declarations() != ("pass",)       # B can pay: he must still play
    assert "pass" not in d.allowed_declarations()


def test_club_law_excuses_in_irish() -> None:
    d = _deal("irish", {"A": 50, "B": 0, "C": 50, "D": 50}, pool_before=6)
    d.push(TurnUp(Card.parse("7C")))
    assert d.forced
    d.push(Declare("A", "play"))
    assert d.allowed_declarations() == ("pass",)
    d.push(Declare("B", "pass"))
    d.push(Declare("C", "play"))
    d.push(Declare("D", "play"))
    assert d.standers == ["A", "C", "D"]


def test_everyone_excused_from_a_forced_deal_is_an_all_pass() -> None:
    d = _deal("three_card", {"A": 1, "B": 1, "C": 1, "D": 4}, pool_before=0)
    d.push(TurnUp(Card.parse("7H")))
    for p in P4:
        d.push(Declare(p, "pass"))
    assert d.is_over
    s = d.settle()
    assert s.kind == "all_pass"
    assert s.balances_after == {"A": 1, "B": 1, "C": 1, "D": 4}  # the dealer takes his ante back


def test_a_dealer_who_cannot_cover_may_leave_the_lone_stander_the_pool() -> None:
    # Three-card: one own-hand stander makes the dealer contest (play, take or defend the miss),
    # but a dealer who cannot cover a loo is excused: the stander takes the pool.
    d = _deal("three_card", {"A": 50, "B": 50, "C": 50, "D": 5}, pool_before=6)
    d.push(TurnUp(Card.parse("7H")))
    d.push(Declare("A", "play"))
    d.push(Declare("B", "pass"))
    d.push(Declare("C", "pass"))
    assert d.allowed_declarations() == ("pass",)        # D has 5 - 3 ante = 2 < 3
    d.push(Declare("D", "pass"))
    s = d.settle()
    assert s.kind == "lone_stander" and s.paid == {"A": 9}


def test_a_record_of_an_excused_pass_in_a_forced_deal_scores() -> None:
    record = {
        "format": "loo-hand/1", "id": "neg", "variant": "three_card",
        "options": {"allow_negative_balance": False},
        "players": P4, "dealer": "D", "balances_before": {"A": 2, "B": 50, "C": 50, "D": 50},
        "pool_before": 0, "turn_up": "7H",
        "declarations": [["A", "pass"], ["B", "play"], ["C", "play"], ["D", "play"]],
        "tricks": [{"plays": [["B", "AH"], ["C", "2H"], ["D", "3H"]]},
                   {"plays": [["B", "KS"], ["C", "2S"], ["D", "3S"]]},
                   {"plays": [["B", "KD"], ["C", "2D"], ["D", "AD"]]}],
    }
    out = score_record(json.loads(json.dumps(record)))
    assert out["balances_after"]["A"] == 2
    assert out["looed"] == {"C": 3}


def test_a_balance_below_zero_after_an_ante_replays_and_may_only_pass() -> None:
    # The dealer had 1 chip and paid an ante of 3: the next record starts at -2. It must be
    # accepted (the engine played it), and the player may only pass.
    record = {
        "format": "loo-hand/1", "id": "neg2", "variant": "three_card",
        "options": {"allow_negative_balance": False},
        "players": P4, "dealer": "A", "balances_before": {"A": 50, "B": -2, "C": 50, "D": 50},
        "pool_before": 6, "turn_up": "7H",
        "declarations": [["B", "play"], ["C", "play"], ["D", "play"], ["A", "pass"]],
        "tricks": [],
    }
    with pytest.raises(RecordError, match="B has -2 chips and cannot cover a loo of 3"):
        score_record(json.loads(json.dumps(record)))
    record["declarations"] = [["B", "pass"], ["C", "play"], ["D", "play"], ["A", "pass"]]
    record["tricks"] = [{"plays": [["C", "AH"], ["D", "2H"]]}, {"plays": [["C", "KS"], ["D", "2S"]]},
                        {"plays": [["C", "KD"], ["D", "2D"]]}]
    out = score_record(json.loads(json.dumps(record)))
    assert out["balances_after"]["B"] == -2 and out["looed"] == {"D": 3}


@settings(max_examples=30, deadline=None, derandomize=True)
@given(variant=st.sampled_from(("three_card", "irish", "five_card")),
       club_law=st.booleans(), force=st.booleans(),
       loo_mode=st.sampled_from(("limited", "unlimited", "mixed")),
       revoke_action=st.sampled_from(("play_on", "void_deal", "replay_from_offence")),
       chips=st.integers(0, 12), revoke_rate=st.sampled_from((0.0, 0.15)),
       seed=st.integers(0, 2**32))
def test_nights_without_negative_balances_finish_and_no_loo_goes_below_zero(
    variant: str, club_law: bool, force: bool, loo_mode: str, revoke_action: str, chips: int,
    revoke_rate: float, seed: int,
) -> None:
    options = Options.for_variant(
        variant, allow_negative_balance=False, club_law=club_law,
        force_when_pool_is_ante_only=force, loo_mode=loo_mode, loo_cap=8,
        revoke_action=revoke_action)
    players = ["P0", "P1", "P2", "P3", "P4"]
    rng = random.Random(seed)
    balances = {p: rng.randint(0, chips) for p in players}
    game = play_game(options, players, rng, balances=balances, revoke_rate=revoke_rate,
                     max_deals=12)
    again = Game.replay(json.loads(json.dumps(game.records)))  # the camera's view agrees
    assert [r.settlement for r in again.results] == [r.settlement for r in game.results]
    for result in game.results:
        s = result.settlement
        for p, amount in s.looed.items():
            before = result.record["balances_before"][p] - s.antes.get(p, 0)
            assert before >= amount, (p, before, amount)
            assert s.balances_after[p] >= 0, (p, s.balances_after[p])
