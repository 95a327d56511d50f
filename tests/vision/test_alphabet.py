"""One rank/suit alphabet. engine/cards.py holds it for every package that may import engine;
vision may import nothing of ours, so vision/labels.py keeps its own, and this checks that the
two agree and that nobody writes the alphabet out a third time."""

from __future__ import annotations

import re
from pathlib import Path

import engine.cards
import vision.labels
from engine.cards import DECK, Card, cards_by_player

ROOT = Path(__file__).resolve().parents[2]
HOMES = {"engine/cards.py", "vision/labels.py"}
WRITTEN_OUT = re.compile(r'"J", "Q", "K", "A"|JQKA|"C", "D", "H", "S"|"CDHS"|\[CDHS\]')


def test_engine_and_vision_spell_the_cards_alike() -> None:
    assert engine.cards.RANKS == vision.labels.RANKS
    assert "".join(vision.labels.SUITS) == engine.cards.SUITS
    assert vision.labels.FACES == tuple(str(c) for c in DECK)  # the same order too


def test_the_alphabet_is_written_out_only_in_its_two_homes() -> None:
    found = [f"{p.relative_to(ROOT)}:{n}" for pkg in ("engine", "vision", "table", "web", "models", "bench")
             for p in sorted((ROOT / pkg).rglob("*.py")) if str(p.relative_to(ROOT)) not in HOMES
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if WRITTEN_OUT.search(line)]
    assert found == []


def test_cards_by_player_keeps_each_players_order() -> None:
    c = Card.parse
    tricks = [[("Ann", c("AS")), ("Bea", c("2S"))], [("Bea", c("KH")), ("Ann", c("3H"))]]
    assert cards_by_player(tricks) == {"Ann": [c("AS"), c("3H")], "Bea": [c("2S"), c("KH")]}
