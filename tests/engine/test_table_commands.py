"""The engine keeps its own invariants and says which of the host's commands apply now:
``Deal.table_commands()``, ``Game.adjust_chips``, ``Game.replace_deal``, ``ChipConservationError``."""

from __future__ import annotations

import pytest

from engine import (
    Card,
    ChipConservationError,
    ClaimFlush,
    Deal,
    Declare,
    Exchange,
    Game,
    IllegalActionError,
    LooError,
    Options,
    ShowPam,
    TableCommands,
    TurnUp,
    parse_cards,
)

BAL = {"Ann": 50, "Bea": 50, "Cal": 50}


def _five(**options: object) -> Deal:
    deal = Deal(Options.for_variant("five_card", **options), ["Ann", "Bea", "Cal"], "Cal",
                balances=BAL, pool_before=5)
    deal.push(TurnUp(Card.parse("7H")))
    return deal


def _to_flush_window(deal: Deal) -> None:
    for p, what in (("Ann", "play"), ("Bea", "play"), ("Cal", "pass")):
        deal.push(Declare(p, what))
    deal.push(Exchange("Ann", 0))
    deal.push(Exchange("Bea", 0))


def test_misdeal_is_open_until_the_first_card() -> None:
    deal = Deal("three_card", list(BAL), "Cal", balances=BAL, pool_before=6)
    assert deal.table_commands() == TableCommands(misdeal=True)
    deal.push(TurnUp(Card.parse("7H")))
    for p in BAL:
        deal.push(Declare(p, "play"))
    assert deal.table_commands().misdeal
    deal.play("Ann", "AH")
    assert deal.table_commands() == TableCommands()


def test_flush_window_names_the_standers_who_may_claim() -> None:
    deal = _five()
    for p, what in (("Ann", "play"), ("Bea", "play"), ("Cal", "pass")):
        deal.push(Declare(p, what))
    deal.push(Exchange("Ann", 1))
    # Ann has exchanged and may already show a flush; Bea has not yet
    assert deal.table_commands().claim_flush == ("Ann",)
    deal.push(Exchange("Bea", 0))
    assert deal.table_commands() == TableCommands(misdeal=True, claim_flush=("Ann", "Bea"))


def test_after_a_flush_has_won_others_may_claim_or_show_pam() -> None:
    deal = _five()
    _to_flush_window(deal)
    deal.push(ClaimFlush("Bea", tuple(parse_cards(["2S", "5S", "9S", "JS", "KS"]))))
    cmds = deal.table_commands()
    assert cmds == TableCommands(claim_flush=("Ann",), show_pam=("Ann",))
    deal.push(ShowPam("Ann"))
    assert deal.table_commands().show_pam == ()


def test_no_pam_to_show_after_a_false_claim_or_when_pam_was_in_a_flush() -> None:
    deal = _five()
    _to_flush_window(deal)
    deal.push(ClaimFlush("Ann", tuple(parse_cards(["2S", "5S", "9S", "JS", "KD"]))))  # no flush
    assert deal.table_commands() == TableCommands(misdeal=True, claim_flush=("Bea",))
    deal = _five()
    _to_flush_window(deal)
    deal.push(ClaimFlush("Bea", tuple(parse_cards(["2S", "5S", "9S", "JC", "KS"]))))  # Pam in it
    assert deal.table_commands().show_pam == ()


@pytest.mark.parametrize("mode, lead, expected", [
    ("on_call", "AH", True),     # the ace of trumps led, the house calls civil
    ("automatic", "AH", False),  # always civil: nothing to call
    ("on_call", "KH", False),    # not the ace
    ("on_call", "AS", False),    # not a trump
])
def test_civil_is_open_right_after_the_ace_of_trumps_when_called_by_the_house(
        mode: str, lead: str, expected: bool) -> None:
    deal = _five(pam_be_civil=mode)
    _to_flush_window(deal)
    deal.play("Ann", lead)
    assert deal.table_commands().call_civil is expected
    deal.play("Bea", "2H")
    assert not deal.table_commands().call_civil


def test_replay_is_open_when_the_deal_is_over_with_a_revoke() -> None:
    deal = Deal(Options.for_variant("three_card", revoke_action="replay_from_offence"),
                list(BAL), "Cal", balances=BAL, pool_before=6)
    deal.push(TurnUp(Card.parse("2S")))
    for p in BAL:
        deal.push(Declare(p, "play"))
    for p, c in (("Ann", "KH"), ("Bea", "3C"), ("Cal", "5H"), ("Ann", "4D"), ("Bea", "2H"),
                 ("Cal", "6D"), ("Cal", "7C"), ("Ann", "8C"), ("Bea", "9C")):
        deal.play(p, c)
    assert deal.is_over and deal.revokes  # Bea threw 3C on hearts holding 2H
    assert deal.table_commands() == TableCommands(replay=True)


def test_chip_conservation_error_is_a_loo_error() -> None:
    assert issubclass(ChipConservationError, LooError)


def test_adjust_chips_moves_the_balance_and_the_total_together() -> None:
    game = Game("three_card", list(BAL), balances=50, dealer="Cal")
    assert game.adjust_chips("Bea", -7) == 43
    assert game.total_chips == 143 and game.chips() == game.total_chips
    with pytest.raises(LooError, match="not at the table"):
        game.adjust_chips("Zed", 1)
    game.new_deal()
    with pytest.raises(IllegalActionError, match="between deals"):
        game.adjust_chips("Bea", 1)


def test_a_broken_ledger_raises_chip_conservation_error() -> None:
    game = Game("three_card", list(BAL), balances=50, dealer="Cal")
    game.balances["Ann"] += 1  # what the table must never do (and no longer does)
    with pytest.raises(ChipConservationError, match="chips not conserved"):
        game.adjust_chips("Bea", 1)


def test_replace_deal_takes_only_the_same_deal() -> None:
    game = Game("three_card", list(BAL), balances=50, dealer="Cal")
    deal = game.new_deal()
    fixed = Deal(game.options, game.players, "Cal", balances=game.balances)
    game.replace_deal(fixed)
    assert game.current is fixed
    with pytest.raises(IllegalActionError, match="same deal"):
        game.replace_deal(Deal(game.options, game.players, "Ann", balances=game.balances))
    assert deal is not game.current
