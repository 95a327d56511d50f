"""bench/overlaps.py: rows, fans and piles of the held-out designs, read end to end (it needs the
held-out deck artwork, installed by .ci/run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from models.decks import decks

ROOT = Path(__file__).resolve().parents[2]
needs_art = pytest.mark.skipif(len(decks(held_out=True)) < 3,
                               reason="held-out deck artwork missing (apt-get install gnome-cards-data kdegames-card-data-kf5)")


@needs_art
def test_every_card_of_every_scene_is_counted_once() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "overlaps.py"), "--scenes", "4", "--json"],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    figures = json.loads(out)
    assert figures["scenes"] == 4
    cards = 0
    for kind in ("shown", "strips"):
        t = figures[kind]
        assert t["cards"] == t["right"] + t["unsure"] + t["missed"]  # a card read wrongly is unsure or missed too
        cards += t["cards"]
    assert 8 <= cards <= 20  # 2-5 cards a scene
    assert figures["shown"]["right"] > 0


def test_a_scene_count_below_one_is_refused() -> None:
    bad = subprocess.run([sys.executable, str(ROOT / "bench" / "overlaps.py"), "--scenes", "0"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--scenes must be 1 or more" in bad.stderr
