"""The night's deck learning on real photographs: learn from host answers on one folder, read another.

    .venv/bin/python bench/learn_photos.py TRAIN TEST [--json]

TRAIN and TEST are folders of photos with Pascal VOC labels (``vision/voc.py``), e.g. the
``train`` and ``test`` folders of the bicycle-9a set the model card describes.

1. *Before*: every TEST photo through ``vision.identify.identify`` (the pipeline of ``loo-table
   identify``), scored against its VOC labels exactly as ``bench/realphotos.py`` does.
2. *Learning*: every TRAIN photo is read the same way and each card found is matched to its label
   (IoU >= 0.5). What the table would learn is learned, through the table's own store
   (``table.deck_learning.NightDeck``, its guards included):
   - a read at or above ``LEARN_SURE_READS`` whose rank agrees with the label: a sure read;
   - an unsure card, or a read of the wrong rank: the host answers from the label. These labels
     name the rank only (``king``), so the answer cannot name the suit: the view is enrolled under
     all four cards of that rank (a *rank* view). It lifts the four alike, so among them the
     suit is still the network's own choice, judged by its own open-set rule;
   - no view from a card the finder was unsure of: an outline that the detector and the contour
     cues did not both find (a bare detector rectangle, a cue-only find).
3. *After*: the TEST photos read again through what was learned, scored the same way.

Nothing is trained, calibrated or chosen on TEST. The figures are in models/README.md.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from table.deck_learning import LEARN_SURE_READS, NightDeck  # noqa: E402
from vision.classifier import CardClassifier  # noqa: E402
from vision.detector import CardDetector  # noqa: E402
from vision.identify import identify  # noqa: E402
from vision.image_file import read_image  # noqa: E402
from vision.labels import SUITS  # noqa: E402
from vision.voc import Tally, box_iou, labelled_photos, rank_of, read_labels, score_photo  # noqa: E402


def score(folder: Path, clf: CardClassifier, det: CardDetector, deck: NightDeck | None = None,
          near: list[tuple[float, bool]] | None = None) -> Tally:
    """Score ``folder``; with ``deck`` and ``near``, note for every card left unsure how close its
    nearest learned view lies (cosine) and whether that view is of the card's rank."""
    total = Tally()
    for photo, xml in labelled_photos(folder):
        image = read_image(photo)
        labels = read_labels(xml, (image.shape[1], image.shape[0]))
        cards = identify(image, clf, det)
        total.add(score_photo(labels, [(c.shown_box, c.reading.card) for c in cards], name=photo.name))
        if deck is not None and near is not None and deck.views:
            for c in cards:
                if c.reading.unsure and c.reading.embedding is not None:
                    lab = max(labels, key=lambda lab: box_iou(lab.box, c.shown_box))
                    if box_iou(lab.box, c.shown_box) >= 0.5:
                        sims = [(float(v.vector @ c.reading.embedding), v.label) for v in deck.views]
                        best, label = max(sims)
                        near.append((best, rank_of(label) == lab.rank))
    return total


def learn(folder: Path, clf: CardClassifier, det: CardDetector, deck: NightDeck, *,
          finder_guard: bool = True) -> dict[str, int]:
    """Read TRAIN as the table would and teach ``deck`` what the referee would accept."""
    counts = {"cards": 0, "sure_reads": 0, "host_answers": 0, "finder_unsure": 0, "not_learned": 0}
    key = 0
    for photo, xml in labelled_photos(folder):
        image = read_image(photo)
        labels = read_labels(xml, (image.shape[1], image.shape[0]))
        cards = identify(image, clf, det)
        pairs = sorted(((box_iou(lab.box, c.shown_box), i, j) for i, lab in enumerate(labels)
                        for j, c in enumerate(cards)), reverse=True)
        used_l: set[int] = set()
        used_c: set[int] = set()
        for iou, i, j in pairs:
            if iou < 0.5:
                break
            if i in used_l or j in used_c:
                continue
            used_l.add(i)
            used_c.add(j)
            counts["cards"] += 1
            lab, card = labels[i], cards[j]
            view = card.reading.embedding if card.found.clear or not finder_guard else None
            if view is None:
                counts["finder_unsure"] += 1
                continue
            read = card.reading.card
            if read is not None and rank_of(read) == lab.rank and (lab.suit is None or read[-1] == lab.suit):
                key += 1
                learned = deck.learn(key, read, view, source="sure", deal=1, confidence=card.reading.confidence)
                counts["sure_reads" if learned else "not_learned"] += 1
                continue
            # the host answers: the full card when the label names it, else the rank's four cards
            faces = [lab.rank + lab.suit] if lab.suit else [lab.rank + s for s in SUITS]
            for face in faces:
                key += 1
                deck.learn(key, face, view, source="host", deal=1)
            counts["host_answers"] += 1
    return counts


def as_dict(t: Tally) -> dict[str, int]:
    return {k: getattr(t, k) for k in ("photos", "cards", "found", "right", "wrong", "unsure", "missed")}


def line(name: str, t: Tally) -> str:
    def pct(n: int) -> str:
        return f"{100 * n / t.cards:.1f} %" if t.cards else "-"

    return (f"{name}: {t.photos} photos, {t.cards} cards: found {pct(t.found)}, right {t.right} ({pct(t.right)}), "
            f"wrong {t.wrong} ({pct(t.wrong)}), unsure {t.unsure} ({pct(t.unsure)}), missed {t.missed}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("train", type=Path, help="folder of labelled photos the host answers on")
    ap.add_argument("test", type=Path, help="folder of labelled photos read before and after")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--no-finder-guard", action="store_true",
                    help="learn from every card found, however unsure the finder was (to see what the guard costs)")
    args = ap.parse_args()
    for folder in (args.train, args.test):
        if not folder.is_dir() or not labelled_photos(folder):
            print(f"learn_photos: {folder}: no labelled photos", file=sys.stderr)
            return 1
    clf = CardClassifier(ROOT / "models" / "card_classifier.onnx")
    det = CardDetector(ROOT / "models" / "card_detector.onnx")
    before = score(args.test, clf, det)
    with tempfile.TemporaryDirectory(prefix="loo-learn-") as tmp:
        deck = NightDeck(Path(tmp) / "photos.deck.npz", clf, night="photos")
        counts = learn(args.train, clf, det, deck, finder_guard=not args.no_finder_guard)
        summary = deck.summary()
        near: list[tuple[float, bool]] = []
        after = score(args.test, clf, det, deck, near)
    if args.json:
        print(json.dumps({"before": as_dict(before), "after": as_dict(after), "learning": counts,
                          "unsure_nearest_view": near,
                          "deck": summary, "learn_sure_reads": LEARN_SURE_READS}))
    else:
        print(f"learned from {args.train.name}: {counts}; store {summary}")
        print(line(f"before ({args.test.name})", before))
        print(line(f"after  ({args.test.name})", after))
        if near:
            sims = sorted(x for x, _ in near)
            print(f"  cards left unsure: nearest learned view at cosine median {sims[len(sims) // 2]:.3f} "
                  f"(max {sims[-1]:.3f}); of the card's own rank for {sum(ok for _, ok in near)} of {len(near)}")
        for ex in after.wrong_examples:
            print(f"  wrong after: {ex}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
