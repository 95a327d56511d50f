"""engine.game: a late joiner (`Game.add_player`) between deals, its errors, chips and replay."""

from __future__ import annotations

import random

import pytest

from engine import IllegalActionError, InvalidInputError, Options, RecordError
from engine.bots import Bot, play_deal
from engine.game import Game


def bot_deal(game: Game, seed: int) -> None:
    deal = game.new_deal(rng=random.Random(seed))
    play_deal(deal, Bot(random.Random(seed)))
    game.finish_deal()


def test_a_joiner_takes_the_next_seat_with_the_buy_in_and_plays_the_next_deal() -> None:
    game = Game("three_card", ["Ann", "Bea", "Cal"], dealer="Ann")
    bot_deal(game, 1)
    total = game.total_chips
    assert game.dealer == "Bea"
    seat = game.add_player("Eve", 40)
    assert seat == 3 and game.players == ("Ann", "Bea", "Cal", "Eve")
    assert game.balances["Eve"] == 40 and game.total_chips == total + 40 == game.chips()
    assert game.dealer == "Bea" and game.scheduled_deals == 4 * game.options.deals_per_player
    deal = game.new_deal(rng=random.Random(2))
    assert "Eve" in deal.players and len(deal.hand("Eve")) == 3  # dealt in from the next deal
    play_deal(deal, Bot(random.Random(2)))
    game.finish_deal()
    assert game.dealer == "Cal" and game.chips() == game.total_chips
    bot_deal(game, 3)
    assert game.dealer == "Eve"  # the deal reaches the new seat in its turn, then goes on to Ann
    bot_deal(game, 4)
    assert game.dealer == "Ann"


@pytest.mark.parametrize(("name", "chips", "error", "match"), [
    ("Bea", 20, InvalidInputError, "'Bea' is already at the table"),
    ("bea", 20, InvalidInputError, "'Bea' is already at the table"),
    ("", 20, InvalidInputError, "needs a name"),
    (" Eve", 20, InvalidInputError, "needs a name"),
    ("MISS", 20, InvalidInputError, "reserved for the miss"),
    ("Eve", 0, InvalidInputError, "at least 1"),
    ("Eve", True, InvalidInputError, "whole number"),
])
def test_bad_joiners_are_refused_and_change_nothing(name: str, chips: int, error: type, match: str) -> None:
    game = Game("three_card", ["Ann", "Bea", "Cal"], dealer="Ann")
    with pytest.raises(error, match=match):
        game.add_player(name, chips)
    assert game.players == ("Ann", "Bea", "Cal") and game.total_chips == 300


def test_no_join_in_the_middle_of_a_deal_nor_after_the_night() -> None:
    game = Game("three_card", ["Ann", "Bea", "Cal"], dealer="Ann")
    game.new_deal()
    with pytest.raises(IllegalActionError, match="between deals, not during one"):
        game.add_player("Eve", 50)
    assert game.players == ("Ann", "Bea", "Cal") and "Eve" not in game.balances
    game.end_now()
    with pytest.raises(IllegalActionError, match="the game is over"):
        game.add_player("Eve", 50)


def test_a_full_table_refuses_another_player() -> None:
    opts = Options.for_variant("three_card", players_max=4)
    game = Game(opts, ["Ann", "Bea", "Cal"], dealer="Ann")
    game.add_player("Dot", 10)
    with pytest.raises(IllegalActionError, match="the table is full: three_card seats at most 4 players"):
        game.add_player("Eve", 10)
    assert len(game.players) == 4


def test_replay_of_the_records_seats_the_joiner_again() -> None:
    game = Game("irish", ["Ann", "Bea", "Cal"], dealer="Ann")
    bot_deal(game, 5)
    bot_deal(game, 6)
    game.add_player("Eve", 60)
    for seed in (7, 8, 9):
        bot_deal(game, seed)
    again = Game.replay(game.records)
    assert again.players == game.players and again.balances == game.balances
    assert again.pool == game.pool and again.dealer == game.dealer
    assert again.total_chips == game.total_chips == 360
    broken = [dict(r) for r in game.records]
    broken[2]["balances_before"] = {k: v for k, v in broken[2]["balances_before"].items() if k != "Eve"}
    with pytest.raises(RecordError):
        Game.replay(broken)


def test_a_deal_from_before_the_join_cannot_be_undone() -> None:
    game = Game("three_card", ["Ann", "Bea", "Cal"], dealer="Ann")
    bot_deal(game, 1)
    game.add_player("Eve", 40)
    with pytest.raises(IllegalActionError, match="before a player joined"):
        game.pop_deal()
    bot_deal(game, 2)
    before = dict(game.balances)
    bot_deal(game, 3)
    game.pop_deal()  # a deal after the join still can
    assert game.balances == before
