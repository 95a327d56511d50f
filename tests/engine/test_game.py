"""engine.game: first dealer, rotation, misdeals, end of game (§9.7, EG01, MD01), residue, undo."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from engine import Card, Declare, IllegalActionError, InvalidInputError, Misdeal, Options, RecordError
from engine.bots import play_game
from engine.game import Game, cut_for_dealer
from engine.records import load_records, score_record

P3 = ["A", "B", "C"]


class StackedPack(random.Random):
    """A Random whose shuffle lays the pack so that cards are drawn in ``order`` (tests only)."""

    def __init__(self, order: Sequence[str]) -> None:
        super().__init__(0)
        self.order = [Card.parse(c) for c in order]

    def shuffle(self, x: list[Card]) -> None:  # type: ignore[override]
        rest = [c for c in x if c not in self.order]
        x[:] = rest + list(reversed(self.order))  # drawn with pop() from the end


# ------------------------------------------------------------------ first dealer
def test_lowest_card_deals_and_the_ace_is_low() -> None:
    dealer, cuts = cut_for_dealer("lowest_card", P3, StackedPack(["2H", "AS", "9C"]))
    assert dealer == "B"
    assert [(p, str(c)) for p, c in cuts] == [("A", "2H"), ("B", "AS"), ("C", "9C")]


def test_highest_card_counts_the_ace_high() -> None:
    dealer, _ = cut_for_dealer("highest_card", P3, StackedPack(["KH", "AS", "9C"]))
    assert dealer == "B"


def test_ties_are_cut_again_among_the_tied() -> None:
    dealer, cuts = cut_for_dealer("lowest_card", P3, StackedPack(["3H", "9S", "3C", "8D", "4S"]))
    assert dealer == "C"  # A and C tie on 3; the re-cut gives A 8, C 4
    assert [p for p, _ in cuts] == ["A", "B", "C", "A", "C"]


def test_first_jack_deals() -> None:
    dealer, cuts = cut_for_dealer("first_jack", P3, StackedPack(["2H", "5S", "QC", "AD", "JD"]))
    assert dealer == "B" and len(cuts) == 5


def test_game_cuts_with_the_rng_it_is_given() -> None:
    a = Game("three_card", P3, rng=random.Random(5))
    b = Game("three_card", P3, rng=random.Random(5))
    assert a.dealer == b.dealer and a.cuts == b.cuts and a.cuts


def test_manual_first_dealer_needs_a_name() -> None:
    opts = Options.for_variant("three_card", first_dealer="manual")
    with pytest.raises(InvalidInputError, match="manual"):
        Game(opts, P3)
    assert Game(opts, P3, dealer="C").dealer == "C"


def test_cutting_needs_an_rng_and_seats_must_be_valid() -> None:
    with pytest.raises(InvalidInputError, match="random"):
        Game("three_card", P3)
    with pytest.raises(InvalidInputError, match="not at the table"):
        Game("three_card", P3, dealer="Z")
    with pytest.raises(InvalidInputError):
        Game("three_card", ["A", "B"], dealer="A")


# ------------------------------------------------------------------ scripted deals (unknown hands)
def loo_deal(game: Game) -> None:
    """Everyone plays; the eldest wins every trick, so the other two are looed."""
    deal = game.new_deal()
    order = list(game.players[game.players.index(game.dealer) + 1:]) + list(
        game.players[: game.players.index(game.dealer) + 1])
    from engine import Play, TurnUp

    deal.push(TurnUp(Card.parse("2H")))
    for p in order:
        deal.push(Declare(p, "play"))
    cards = [["AS", "3S", "4S"], ["KS", "5S", "6S"], ["QS", "7S", "8S"]]
    for trick in cards:
        for p, c in zip(order, trick, strict=True):
            deal.push(Play(p, Card.parse(c)))
    game.finish_deal()


def pass_deal(game: Game) -> None:
    """Everyone before the dealer passes (no loo)."""
    from engine import TurnUp

    deal = game.new_deal()
    deal.push(TurnUp(Card.parse("2H")))
    while not deal.is_over:
        assert deal.to_act is not None
        deal.push(Declare(deal.to_act, "pass"))
    game.finish_deal()


def test_eg01_through_the_game() -> None:
    game = Game("three_card", P3, dealer="A")
    assert game.scheduled_deals == 3
    loo_deal(game)
    pass_deal(game)
    assert not game.is_over  # deal 2 had no loo, but the round is not complete
    loo_deal(game)
    assert not game.is_over  # deal 3 completes the round but had a loo
    pass_deal(game)
    assert game.is_over
    assert [r.dealer for r in game.results] == ["A", "B", "C", "A"]
    schedule = {"kind": "end_of_game", "variant": "three_card", "players": P3, "deals_per_player": 1,
                "deals": [{"dealer": r.dealer, "had_loo": r.had_loo} for r in game.results]}
    assert score_record(schedule) == {"game_ends_after_deal": len(game.results)}
    with pytest.raises(IllegalActionError, match="over"):
        game.new_deal()


def test_fixed_deals_stop_on_schedule_even_after_a_loo() -> None:
    game = Game(Options.for_variant("three_card", end_rule="fixed_deals"), P3, dealer="A")
    for _ in range(3):
        loo_deal(game)
    assert game.is_over and len(game.results) == 3


def test_residue_is_split_from_the_last_eldest() -> None:
    opts = Options.for_variant("three_card", all_pass="carry")
    game = Game(opts, P3, dealer="A")
    loo_deal(game)        # B wins every trick; A and C are looed
    pass_deal(game)
    loo_deal(game)
    before = dict(game.balances)
    pool = game.pool + 3  # the last dealer's ante joins the pool, which then lies
    pass_deal(game)       # dealer A; everyone passes; the pool lies → no loo → the night ends
    assert game.is_over and game.pool == 0
    residue = game.results[-1].residue
    assert sum(residue.values()) == pool
    base, extra = divmod(pool, 3)
    # remainder one chip each from the last deal's eldest (B), then C, then A
    expected = {p: base + (1 if i < extra else 0) for i, p in enumerate(["B", "C", "A"])}
    assert residue == {p: v for p, v in expected.items() if v}
    assert game.balances["A"] == before["A"] - 3 + expected["A"]
    assert game.chips() == game.total_chips


def test_residue_to_last_dealer() -> None:
    opts = Options.for_variant("three_card", all_pass="carry", end_residue="to_last_dealer",
                               end_rule="fixed_deals")
    game = Game(opts, P3, dealer="A", pool=5)
    for _ in range(3):
        pass_deal(game)
    assert game.is_over
    assert game.results[-1].residue == {"C": 5 + 9}


# ------------------------------------------------------------------ misdeals
def test_md01_through_the_game() -> None:
    game = Game("three_card", P3, dealer="C", pool=6)
    deal = game.new_deal()
    deal.push(Misdeal())
    result = game.finish_deal()
    assert game.balances == {"A": 100, "B": 100, "C": 94} and game.pool == 12
    assert not result.counted and result.had_loo and game.redeal_pending
    assert game.dealer == "C"  # the same dealer deals again
    redeal = game.new_deal()
    assert redeal.antes == {} and redeal.pool_at_play == 12
    md01 = next(v for v in load_records(open("tests/data/vectors.json").read()) if v["id"] == "MD01")
    assert result.record["balances_before"] == md01["balances_before"]
    assert score_record(result.record)["balances_after"] == md01["expected"]["balances_after"]


def test_misdeal_loo_counts_for_the_end_of_the_night() -> None:
    game = Game("three_card", P3, dealer="A")
    loo_deal(game)
    loo_deal(game)
    deal = game.new_deal()  # dealer C, the last scheduled deal
    deal.push(Misdeal())
    game.finish_deal()
    pass_deal(game)  # the re-deal has no loo itself, but the misdeal before it had one
    assert not game.is_over
    assert game.results[-1].had_loo and game.results[-1].number == 3


def test_lose_deal_passes_the_deal_and_keeps_the_ante() -> None:
    opts = Options.for_variant("three_card", misdeal="lose_deal")
    game = Game(opts, P3, dealer="A", pool=6)
    deal = game.new_deal()
    deal.push(Misdeal())
    result = game.finish_deal()
    assert result.counted and not game.redeal_pending
    assert game.dealer == "B" and game.pool == 9 and game.balances["A"] == 97


def test_redeal_record_replays_with_no_second_ante() -> None:
    game = Game("three_card", P3, dealer="C", pool=6)
    game.new_deal().push(Misdeal())
    game.finish_deal()
    pass_deal(game)
    again = Game.replay(game.records)
    assert again.balances == game.balances and again.pool == game.pool
    assert game.records[1]["redeal"] is True


# ------------------------------------------------------------------ rotation, ledger, undo, replay
def test_dealer_rotates_to_the_left_every_deal() -> None:
    players = ["Ann", "Bea", "Cal", "Dan", "Eve"]
    game = play_game("irish", players, random.Random(3), max_deals=12, misdeal_rate=0.2)
    assert any(r.settlement.kind == "misdeal" for r in game.results)
    for prev, result in zip(game.results, game.results[1:], strict=False):
        if prev.settlement.kind == "misdeal":  # loo_and_redeal: the same dealer deals again
            assert result.dealer == prev.dealer
        else:
            assert result.dealer == players[(players.index(prev.dealer) + 1) % len(players)]


def test_only_one_deal_at_a_time() -> None:
    game = Game("three_card", P3, dealer="A")
    game.new_deal()
    with pytest.raises(IllegalActionError, match="not finished"):
        game.new_deal()
    game.abandon_deal()
    game.new_deal()
    with pytest.raises(IllegalActionError, match="no deal"):
        Game("three_card", P3, dealer="A").finish_deal()


def test_pop_deal_restores_chips_dealer_and_schedule() -> None:
    game = Game("three_card", P3, dealer="A")
    loo_deal(game)
    snapshot = (dict(game.balances), game.pool, game.dealer, game.deals_played)
    loo_deal(game)
    game.pop_deal()
    assert (dict(game.balances), game.pool, game.dealer, game.deals_played) == snapshot
    with pytest.raises(IllegalActionError):
        Game("three_card", P3, dealer="A").pop_deal()


def test_replay_equals_the_night_as_played() -> None:
    game = play_game("five_card", ["A", "B", "C", "D"], random.Random(8), revoke_rate=0.1,
                     misdeal_rate=0.1, max_deals=30)
    again = Game.replay(game.records)
    assert again.balances == game.balances and again.pool == game.pool
    assert again.is_over == game.is_over
    assert [r.settlement for r in again.results] == [r.settlement for r in game.results]


def test_play_record_refuses_a_record_that_does_not_continue_the_night() -> None:
    game = play_game("three_card", P3, random.Random(2), max_deals=3)
    records = game.records
    fresh = Game.replay(records[:1])
    wrong = dict(records[2])
    with pytest.raises(RecordError, match="dealer|balances_before|pool_before"):
        fresh.play_record(wrong)
    with pytest.raises(RecordError, match="no records"):
        Game.replay([])


def test_end_now_shares_the_pool_and_ends_the_night() -> None:
    game = Game("three_card", P3, dealer="A")
    loo_deal(game)
    pool = game.pool
    game.new_deal()  # in progress: abandoned, nothing of it was paid
    residue = game.end_now()
    assert game.is_over and game.pool == 0 and game.current is None
    assert sum(residue.values()) == pool and game.ended_early == residue
    assert game.chips() == game.total_chips
    with pytest.raises(IllegalActionError, match="over"):
        game.end_now()


def test_copy_is_independent() -> None:
    game = Game("three_card", P3, dealer="A")
    loo_deal(game)
    other = game.copy()
    loo_deal(other)
    other.pop_deal()
    other.pop_deal()
    assert len(game.results) == 1 and len(other.results) == 0
    assert game.balances != other.balances
    loo_deal(game)
    assert game.chips() == game.total_chips == other.chips()


def test_bold_stand_after_a_single_and_on_the_first_deal() -> None:
    from engine import TurnUp

    game = Game("three_card", P3, dealer="A")
    first = game.new_deal()
    first.push(TurnUp(Card.parse("2H")))
    assert first.forced  # the pool carried is 0: nobody may pass
    game.abandon_deal()
    loo_deal(game)
    assert game.pool > 0
    deal = game.new_deal()
    deal.push(TurnUp(Card.parse("2H")))
    assert not deal.forced
    game.abandon_deal()
    pass_deal(game)  # the dealer takes the pool: a single, the pool is empty again
    assert game.pool == 0
    deal = game.new_deal()
    deal.push(TurnUp(Card.parse("2H")))
    assert deal.forced
