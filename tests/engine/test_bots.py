"""engine.bots and the terminal demo built on them: seeded, legal unless told otherwise, readable."""

from __future__ import annotations

import io
import random

import pytest

from engine import Card, ClaimFlush, Deal, Declare, Exchange, Options, TurnUp
from engine.bots import Bot, play_deal, play_game
from table.cli import main
from table.terminal_demo import player_names, run_demo


def test_same_seed_same_night() -> None:
    a = play_game("five_card", ["A", "B", "C", "D"], random.Random(4), revoke_rate=0.1, max_deals=10)
    b = play_game("five_card", ["A", "B", "C", "D"], random.Random(4), revoke_rate=0.1, max_deals=10)
    assert a.records == b.records and a.balances == b.balances


def test_bots_without_revoke_rate_play_only_legal_cards() -> None:
    game = play_game("three_card", ["A", "B", "C", "D", "E"], random.Random(9), max_deals=25)
    assert all(not r.settlement.revokes for r in game.results)
    assert any(r.settlement.kind == "play" for r in game.results)


def test_revoke_rate_one_revokes_whenever_it_can() -> None:
    rng = random.Random(1)
    revokes = 0
    for _ in range(20):
        deal = Deal.shuffled("irish", ["A", "B", "C", "D"], "D", rng, enforce=False,
                             balances={p: 20 for p in "ABCD"}, pool_before=3)
        play_deal(deal, Bot(rng, revoke_rate=1.0))
        revokes += len(deal.revokes)
    assert revokes >= 10


def test_enforced_deal_replaces_a_refused_card() -> None:
    rng = random.Random(2)
    for _ in range(10):
        deal = Deal.shuffled("three_card", ["A", "B", "C"], "C", rng,
                             balances={p: 20 for p in "ABC"}, pool_before=3)
        play_deal(deal, Bot(rng, revoke_rate=1.0))
        assert deal.is_over and not deal.revokes


def test_a_bot_claims_its_flush() -> None:
    hands = {"A": ["2H", "5H", "9H", "JH", "KH"], "B": ["2S", "3S", "4C", "5D", "7C"],
             "C": ["AS", "KS", "QD", "JD", "10C"]}
    deal = Deal(Options.for_variant("five_card"), ["A", "B", "C"], "C", hands=hands,
                balances={p: 20 for p in "ABC"}, pool_before=5)
    deal.push(TurnUp(Card.parse("6S")))
    for p in ("A", "B", "C"):
        deal.push(Declare(p, "play"))
    play_deal(deal, Bot(random.Random(0)))
    assert deal.settle().flush_winner == "A"
    assert any(isinstance(m, ClaimFlush) for m in deal.moves)
    exch = [m for m in deal.moves if isinstance(m, Exchange) and m.player == "A"]
    assert exch and exch[0].count == 0  # a flush stands pat


def test_revoke_rate_is_checked() -> None:
    with pytest.raises(ValueError):
        Bot(random.Random(0), revoke_rate=2.0)


# ------------------------------------------------------------------ the terminal demo
def test_demo_prints_deals_revokes_settlements_and_final_chips() -> None:
    out = io.StringIO()
    game = run_demo(variant="three_card", players=player_names("4"), seed=5, revoke_rate=0.2,
                    out=out, symbols=True, colour=False)
    text = out.getvalue()
    assert "Cut for the deal" in text and "── Deal 1" in text
    assert "Declarations:" in text and "Trick 3:" in text and "Settlement:" in text
    assert "revoked in trick" in text  # the describe() sentence of a proven revoke
    assert "Final chips:" in text
    assert f"Chips on the table: {game.total_chips} (unchanged)" in text
    assert "♠" in text or "♥" in text or "♦" in text or "♣" in text


def test_demo_is_deterministic_and_ascii_on_request() -> None:
    texts = []
    for _ in range(2):
        out = io.StringIO()
        run_demo(variant="five_card", players=["Ann", "Bea", "Cal"], seed=7, hands=3, out=out,
                 symbols=False, colour=False)
        texts.append(out.getvalue())
    assert texts[0] == texts[1]
    assert "♠" not in texts[0] and "\033[" not in texts[0]
    assert "Stopped after 3 deals" in texts[0] or "Game over" in texts[0]


def test_demo_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--text", "--variant", "irish", "--players", "5", "--hands", "2",
                 "--seed", "3", "--ascii"]) == 0
    assert "A night of Irish Loo" in capsys.readouterr().out
    assert main(["demo", "--text", "--players", "2"]) == 1
    assert "3 to 16 players" in capsys.readouterr().err
    assert main(["demo", "--text", "--option", "loo_mode=often"]) == 1
    assert "loo_mode" in capsys.readouterr().err
    assert main(["demo", "--text", "--hands", "0"]) == 1


def test_a_bot_shows_pam_against_a_flush() -> None:
    hands = {"A": ["2H", "5H", "9H", "QH", "KH"], "B": ["JC", "2S", "3S", "4D", "5D"],
             "C": ["AS", "KS", "QD", "JD", "10C"]}
    deal = Deal(Options.for_variant("five_card"), ["A", "B", "C"], "C", hands=hands,
                balances={p: 20 for p in "ABC"}, pool_before=5)
    deal.push(TurnUp(Card.parse("6S")))
    for p in ("A", "B", "C"):
        deal.push(Declare(p, "play"))
    play_deal(deal, Bot(random.Random(0)))
    s = deal.settle()
    assert s.flush_winner == "A" and deal.pam_shown == ["B"]
    assert "B" not in s.looed and "C" in s.looed
