"""docs/rules.md §3 is the product's list of house rules: it must name every engine option, with
the engine's default for each game and the engine's accepted values."""

from __future__ import annotations

import re
from pathlib import Path

from engine import Options
from engine.options import CHOICES

RULES = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
GAMES = ("three_card", "irish", "five_card")


def _table() -> dict[str, list[str]]:
    text = RULES.read_text(encoding="utf-8")
    section = text.split("## 3. House rules and their defaults", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        m = re.match(r"\| `(\w+)` \|(.*)\|\s*$", line)
        if m:
            rows[m.group(1)] = [cell.strip() for cell in m.group(2).split("|")]
    return rows


def _shown(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def test_every_option_is_listed_with_the_engines_default() -> None:
    rows = _table()
    defaults = {g: Options.for_variant(g).to_dict() for g in GAMES}
    options = [k for k in defaults["three_card"] if k != "variant"]
    assert list(rows) == options
    for name in options:
        cells = rows[name]
        for game, cell in zip(GAMES, cells[1:4], strict=True):
            if cell != "—":
                assert cell == _shown(defaults[game][name]), (name, game)


def test_word_options_list_exactly_the_accepted_values() -> None:
    rows = _table()
    for name, values in CHOICES.items():
        listed = re.findall(r"`(\w+)`", rows[name][0])
        assert listed == list(values), name
