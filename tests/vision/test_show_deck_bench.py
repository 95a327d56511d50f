"""``bench/show_deck.py``: a layout shown, then the other layouts read with the enrolment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2

from bench.show_deck import layout_of
from tests.vision.card_scene import card_scene, rect

ROOT = Path(__file__).resolve().parents[2]


def _layout(path: Path, cards: dict[str, tuple[float, float]], seed: int) -> None:
    scene = None
    for card, (x, y) in cards.items():
        scene = card_scene(card, rect(x, y, 150, 107, 90 + (x % 7)), seed=seed, table=scene)
    assert scene is not None
    cv2.imwrite(str(path), scene.astype("uint8"))


def test_photos_of_one_layout_go_together() -> None:
    assert layout_of("club1.png") == layout_of("club2.png") == "club-A"
    assert layout_of("club3.png") == "club-B"
    assert layout_of("surface1.png") == "surface1"


def test_a_layout_is_shown_and_the_others_are_read(tmp_path: Path) -> None:
    _layout(tmp_path / "club1.png", {"7C": (150, 240), "2C": (330, 250), "KC": (500, 230)}, seed=3)
    _layout(tmp_path / "club3.png", {"KC": (150, 240), "7C": (330, 250), "2C": (500, 230)}, seed=4)
    (tmp_path / "labels.tsv").write_text("club1.png\t2C,7C,KC\nclub3.png\t2C,7C,KC\n")
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "show_deck.py"), str(tmp_path), "--shown", "club1"],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    lines = out.splitlines()
    assert lines[0] == "shown club1.png: 3 of 3 cards assigned, not found none; not enrolled, to check: none"
    assert lines[1] == "enrolled 3 cards from 1 photos (3 views)"
    assert lines[2].startswith("the other photos, not shown: photos 1, cards 3,")
    assert lines[3].startswith("the other photos, deck shown: photos 1, cards 3, found 3 (100.0 %), right 3 (100.0 %)")
