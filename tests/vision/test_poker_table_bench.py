"""bench/poker_table.py: a 12 MP photo of a card table, a row of five and four pairs, read end to
end (it needs the held-out deck artwork, installed by .ci/run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models.decks import decks

ROOT = Path(__file__).resolve().parents[2]
needs_art = pytest.mark.skipif(len(decks(held_out=True)) < 3,
                               reason="held-out deck artwork missing (apt-get install gnome-cards-data kdegames-card-data-kf5)")


def test_a_scene_is_a_row_of_five_and_four_pairs_each_under_card_s_corner_showing() -> None:
    import importlib.util

    from vision.finder import overlap

    # loaded from its file: bench/ on sys.path would hide the vision package behind bench/vision.py
    spec = importlib.util.spec_from_file_location("poker_table", ROOT / "bench" / "poker_table.py")
    assert spec is not None and spec.loader is not None
    poker_table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(poker_table)

    deck = {f"{r}S": np.full((140, 100, 4), 255, np.uint8) for r in "A23456789"} | \
        {f"{r}H": np.full((140, 100, 4), 255, np.uint8) for r in "A23456789"}
    image, labels, quads, roles = poker_table.scene(np.random.default_rng(3), deck)
    assert image.shape == (3000, 4000, 3) and len(set(labels)) == len(labels) == len(quads) == 13
    assert roles == ["row"] * 5 + ["pair under", "pair top"] * 4
    row = quads[:5]
    assert all(overlap(a, b) == 0 for i, a in enumerate(row) for b in row[i + 1:])  # the row's cards lie apart
    for under, top in zip(quads[5::2], quads[6::2], strict=True):
        assert 0 < overlap(under, top) < 0.75  # the top card lies across the under card, not on all of it


@needs_art
def test_every_card_of_every_photo_is_counted_once() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "poker_table.py"), "--scenes", "1", "--json"],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    figures = json.loads(out)
    assert figures["scenes"] == 1
    assert [figures[role]["cards"] for role in ("row", "pair top", "pair under")] == [5, 4, 4]
    for role in ("row", "pair top", "pair under"):
        t = figures[role]
        assert t["cards"] == t["right"] + t["unsure"] + t["missed"]  # a card read wrongly is unsure or missed too
    assert figures["row"]["right"] > 0


def test_a_photo_count_below_one_is_refused() -> None:
    bad = subprocess.run([sys.executable, str(ROOT / "bench" / "poker_table.py"), "--scenes", "0"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--scenes must be 1 or more" in bad.stderr


def test_a_size_that_is_not_width_by_height_is_refused() -> None:
    bad = subprocess.run([sys.executable, str(ROOT / "bench" / "poker_table.py"), "--size", "6000"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--size is WIDTHxHEIGHT" in bad.stderr
