"""engine.game: a player who leaves between deals (`Game.remove_player`): chips, deal, errors."""

from __future__ import annotations

import random

import pytest

from engine import IllegalActionError, InvalidInputError
from engine.bots import Bot, play_deal
from engine.game import Game


def bot_deal(game: Game, seed: int) -> None:
    deal = game.new_deal(rng=random.Random(seed))
    play_deal(deal, Bot(random.Random(seed)))
    game.finish_deal()


def test_a_leaver_takes_their_chips_and_the_deal_passes_on() -> None:
    game = Game("three_card", ["Ann", "Bea", "Cal", "Dot"], dealer="Ann")
    bot_deal(game, 1)
    assert game.dealer == "Bea"
    total, held = game.total_chips, game.balances["Bea"]
    assert game.remove_player("Bea") == held
    assert game.players == ("Ann", "Cal", "Dot") and "Bea" not in game.balances
    assert game.total_chips == total - held == game.chips()  # the chips left with her
    assert game.dealer == "Cal"  # she was to deal: the next player deals instead
    assert game.scheduled_deals == 3 * game.options.deals_per_player
    bot_deal(game, 2)  # the night goes on without her
    assert game.dealer == "Dot"


def test_a_leave_is_refused_during_a_deal_below_the_fewest_players_and_for_a_stranger() -> None:
    game = Game("three_card", ["Ann", "Bea", "Cal"], dealer="Ann")
    with pytest.raises(IllegalActionError, match="needs at least 3 players"):
        game.remove_player("Cal")
    game2 = Game("three_card", ["Ann", "Bea", "Cal", "Dot"], dealer="Ann")
    with pytest.raises(InvalidInputError, match="not at the table"):
        game2.remove_player("Zed")
    game2.new_deal(rng=random.Random(3))
    with pytest.raises(IllegalActionError, match="between deals"):
        game2.remove_player("Dot")
    assert game2.players == ("Ann", "Bea", "Cal", "Dot")
