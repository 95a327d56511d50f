"""Enrol the committed demo deck (vision/assets/decks/heruka-2color) the way a host would.

A host runs `loo-table enroll` on a few photos of each card taken by the table camera. This script
does the same with the seeded synthetic table standing in for the camera: each card (and a back)
is laid alone on ``--views`` differently drawn tables (cloth or wood, light, camera pose), the
frame goes through the enrolment path (`vision.finder.find_cards`, largest card, the model's
embedding) and the prototypes file is written beside the deck. The seed (default 5150) is not the
benchmark's (20261122) nor any test's, so the night the benchmark scores is never enrolled.

    python -m models.enroll_demo_deck            # regenerates vision/assets/decks/heruka-2color/prototypes.npz
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DECK = ROOT / "vision" / "assets" / "decks" / "heruka-2color"
SEED = 5150


def render_views(seed: int, views: int, deck: Path = DECK) -> list[tuple[str, np.ndarray]]:
    """``(label, crop)`` for every card and a back, ``views`` per card, as enrolment would crop them."""
    import cv2

    from vision.classifier import CANONICAL_SIZE
    from vision.events import crop_card
    from vision.finder import find_cards
    from vision.synthetic import FACES, PlacedCard, SyntheticTable

    items: list[tuple[str, np.ndarray]] = []
    for v in range(views):
        rng = np.random.default_rng((seed, v))
        table = SyntheticTable(seed=int(rng.integers(2**31)), seats=5, deck=deck)
        zones = list(table.layout.seats)
        for i, label in enumerate((*FACES, "back")):
            z = zones[int(rng.integers(len(zones)))]
            cx, cy = z.center
            card = PlacedCard(label, cx + float(rng.uniform(-14, 14)), cy + float(rng.uniform(-14, 14)),
                              float(rng.uniform(-25, 25)))
            frame = table.render([card], frame_index=v * 1000 + i)
            found = find_cards(frame)
            if found:
                crop = max(found, key=lambda f: cv2.contourArea(f.corners)).crop
            else:  # the finder missed it: crop the known outline, as the table watcher would
                crop = crop_card(frame, table.card_quad(card), CANONICAL_SIZE)
            items.append((label, crop))
    return items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DECK / "prototypes.npz", help="prototypes file to write")
    parser.add_argument("--seed", type=int, default=SEED, help=f"seed of the enrolment tables (default {SEED})")
    parser.add_argument("--views", type=int, default=3, help="views per card (default 3)")
    parser.add_argument("--model", type=Path, default=ROOT / "models" / "card_classifier.onnx",
                        help="ONNX model the prototypes are keyed to (default: the shipped one)")
    args = parser.parse_args(argv)

    from vision.classifier import CardClassifier
    from vision.enroll import Prototypes, model_digest

    clf = CardClassifier(args.model, threads=1, providers=["CPUExecutionProvider"])
    items = render_views(args.seed, args.views)
    emb = clf.embed([c for _, c in items])
    readings = clf.classify([c for _, c in items])
    misread = sum(1 for (lab, _), r in zip(items, readings, strict=True)
                  if (r.card or ("back" if r.face_down else None)) not in (lab, None))
    protos = Prototypes.build(clf.labels, ((lab, e) for (lab, _), e in zip(items, emb, strict=True)),
                              model_sha256=model_digest(args.model))
    protos.save(args.out)
    print(f"{args.out}: {len(items)} views of {len(protos.enrolled)} cards (seed {args.seed}); "
          f"{misread} read as another card by the network alone; weight {protos.weight}, threshold "
          f"{protos.threshold}, match floor {protos.match_floor:.3f}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
