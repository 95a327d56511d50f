"""bench/on_top.py's whole synthesised scenes: every pair the scene answers is scored once by each
rule (it needs the training decks' artwork, installed by .ci/run)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from models.decks import decks
from models.detector import DETECTOR_DECKS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not any(d.available() for d in decks(names=DETECTOR_DECKS)),
                    reason="deck artwork missing (apt-get install gnome-cards-data kdegames-card-data-kf5)")
def test_whole_scenes_score_each_answered_pair_once_per_rule() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "on_top.py"), "--scenes", "0", "--whole-scenes", "12"],
                         capture_output=True, text=True, timeout=300, check=True).stdout.splitlines()
    assert [line.split(": pairs")[0] for line in out] == [
        "whole synthesised scenes, 12, pair by pair",
        "whole synthesised scenes, 12, then each spread in one order (identify)"]
    counts = [tuple(int(v) for v in re.findall(r"(?:pairs|right|wrong|undecided) (\d+)", line)) for line in out]
    assert counts[0][0] == counts[1][0] > 0  # the same pairs, scored by both rules
    for pairs, right, wrong, undecided in counts:
        assert right + wrong + undecided == pairs and right > 0


def test_negative_scene_counts_are_refused() -> None:
    bad = subprocess.run([sys.executable, str(ROOT / "bench" / "on_top.py"), "--whole-scenes", "-1"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "must be 0 or more" in bad.stderr
