"""Regenerate the committed card fixtures (run from the repository root, after rendering decks).

    .venv/bin/python tests/data/cards/make_fixtures.py

The cards come from two deck designs that the model never trains on (held out in models/decks.py):
the npm ``@younestouati/playing-cards-standard-deck`` (LGPL-3.0) and GNOME ``bellot`` from
``gnome-cards-data`` (GPL-3+). Photos are synthesised table stills (models.synth.table_photo);
crops are camera-like canonical crops (models.synth.camera_crop) at a moderate strength.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from models.decks import decks, load_deck
from models.synth import camera_crop, table_photo

HERE = Path(__file__).resolve().parent
PHOTOS = [  # (name, deck, cards, light table?)
    ("photo_light_qh.jpg", "younestouati-standard", ["QH"], True),
    ("photo_dark_10s_7d.jpg", "younestouati-standard", ["10S", "7D"], False),
    ("photo_wood_as_kc_2h.jpg", "gnome-bellot", ["AS", "KC", "2H"], None),
    ("photo_white_jd.jpg", "gnome-bellot", ["JD"], True),
    ("photo_dark_9c_8h.jpg", "gnome-bellot", ["9C", "8H"], False),
    ("photo_light_back_5s.jpg", "gnome-bellot", ["back", "5S"], True),
]
CROPS = ["AC", "3D", "6H", "8S", "10C", "JH", "QS", "KD", "4C", "7H", "9S", "back"]


def main() -> None:
    art = {d.name: load_deck(d) for d in decks(held_out=True)}
    rng = np.random.default_rng(7)
    truth: dict[str, list[str]] = {}
    for name, deck, cards, light in PHOTOS:
        img, _ = table_photo(rng, [art[deck][c] for c in cards], size=(480, 360), card_height=(110, 150),
                             light_table=light)
        cv2.imwrite(str(HERE / name), img, [cv2.IMWRITE_JPEG_QUALITY, 85])
        truth[name] = cards
    for i, label in enumerate(CROPS):
        deck = "younestouati-standard" if i % 2 == 0 else "gnome-bellot"
        crop = camera_crop(rng, art[deck][label], strength=0.6, height_range=(80, 130))
        name = f"crop_{label}_{deck.split('-')[0]}.png"
        cv2.imwrite(str(HERE / name), crop)
        truth[name] = [label]
    (HERE / "truth.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
