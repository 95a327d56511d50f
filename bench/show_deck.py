""""Show me the deck" on real photographs: enrol a deck from one photo of each suit laid out, then
read the other photos of that deck with the enrolment.

    .venv/bin/python bench/show_deck.py FOLDER [--shown NAME ...] [--model PATH] [--json]

FOLDER holds photos and a ``labels.tsv`` listing the cards in each (``vision/voc.py``), such as
the ``felt-52`` set: ``club1``...``spade4`` show the thirteen cards of one suit (photos 1 and 2
one layout, 3 and 4 another), ``surface1``...``surface4`` sixteen mixed cards. The photos named
by ``--shown`` (default: ``club1 club2 diamond1 diamond2 heart1 heart2 spade1 spade2``, the two
shots of the first layout of each suit) are the deck shown: each is read as ``loo-table enroll
PHOTO --cards ...`` reads a layout (``vision/layout.py``: the cards found, assigned the cards its
label lists as a set) and enrolled, but for the cards the host would be asked to check
(``Layout.trusted``). The photos of another
layout than the shown ones (a shown photo's near-duplicate, the other shot of its layout, is left
out: ``club2`` beside ``club1``) are then read as ``loo-table identify`` reads them, with the
enrolment and without it, and scored order-free. Prints, for each shown photo, how many of its
cards were assigned and which the host would be asked to check (the reader's own guess is
another card), then a line for the other photos without and with the enrolment, and the table by
rank with it.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.realphotos import line, rank_table  # noqa: E402
from vision.classifier import CardClassifier  # noqa: E402
from vision.detector import CardDetector  # noqa: E402
from vision.enroll import Prototypes, model_digest  # noqa: E402
from vision.identify import identify  # noqa: E402
from vision.image_file import read_image  # noqa: E402
from vision.layout import read_layout  # noqa: E402
from vision.voc import LabelError, Tally, listed_photos, score_listed_photo  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHOWN = ("club1", "club2", "diamond1", "diamond2", "heart1", "heart2", "spade1", "spade2")


def layout_of(name: str) -> str:
    """The layout a felt-52 photo shows: its suit and which of the two layouts (photos 1-2, 3-4),
    or the photo's own name for any other photo."""
    stem = Path(name).stem
    if stem[-1:].isdigit() and stem[:-1] in ("club", "diamond", "heart", "spade"):
        return f"{stem[:-1]}-{'A' if stem[-1] in '12' else 'B'}"
    return stem


def read_all(photos: list[tuple[Path, list[str]]], clf: CardClassifier, detector: CardDetector) -> Tally:
    total = Tally()
    for photo, cards in photos:
        image = read_image(photo)
        t0 = time.perf_counter()
        found = identify(image, clf, detector)
        ms = (time.perf_counter() - t0) * 1000
        t = score_listed_photo(cards, [c.reading.card for c in found if c.reading.card is not None],
                               sum(c.reading.unsure for c in found), name=photo.name)
        t.ms.append(ms)
        total.add(t)
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("folder", type=Path, metavar="FOLDER", help="photos with a labels.tsv (felt-52)")
    ap.add_argument("--shown", nargs="+", default=list(SHOWN), metavar="NAME",
                    help=f"the photos (stems) that show the deck (default: {' '.join(SHOWN)})")
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "card_classifier.onnx", help="ONNX card reader")
    ap.add_argument("--detector", type=Path, default=ROOT / "models" / "card_detector.onnx", help="ONNX card detector")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the lines")
    args = ap.parse_args(argv)
    try:
        photos = listed_photos(args.folder)
        clf = CardClassifier(args.model, threads=1)
        detector = CardDetector(args.detector)
    except (LabelError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    by_stem = {p.stem: (p, cards) for p, cards in photos}
    unknown = [s for s in args.shown if s not in by_stem]
    if unknown:
        print(f"error: {args.folder}: no listed photo {unknown[0]!r}", file=sys.stderr)
        return 2
    shown_layouts = {layout_of(s) for s in args.shown}
    views: list[tuple[str, object]] = []
    assigned = left = 0
    for stem in args.shown:
        photo, cards = by_stem[stem]
        layout = read_layout([read_image(photo)], cards, clf, detector)
        embeddings = clf.embed([c.crop for c in layout.trusted])
        views += [(c.card, e) for c, e in zip(layout.trusted, embeddings, strict=True)]
        assigned += len(layout.cards)
        left += len(layout.missing)
        if not args.json:
            checks = ", ".join(f"{c.card} (read {c.guess})" for c in layout.cards if c.to_check) or "none"
            print(f"shown {photo.name}: {len(layout.cards)} of {len(cards)} cards assigned, not found "
                  f"{', '.join(layout.missing) or 'none'}; not enrolled, to check: {checks}", flush=True)
    protos = Prototypes.build(clf.labels, views, model_sha256=model_digest(args.model))  # type: ignore[arg-type]
    others = [(p, cards) for p, cards in photos if layout_of(p.name) not in shown_layouts]
    before = read_all(others, clf, detector)
    clf.set_prototypes(protos)
    after = read_all(others, clf, detector)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    if args.json:
        def as_dict(t: Tally) -> dict[str, object]:
            return {f: getattr(t, f) for f in ("photos", "cards", "found", "right", "wrong", "unsure", "missed", "extra")} | {
                "ranks": {r[0]: dict(zip(("cards", "right", "wrong", "unsure", "missed"), r[1:], strict=True))
                          for r in t.rank_rows()}}
        print(json.dumps({"shown": list(args.shown), "assigned": assigned, "not_found": left,
                          "enrolled_cards": len(protos.enrolled), "without": as_dict(before), "with": as_dict(after),
                          "machine": machine}))
        return 0
    print(f"enrolled {len(protos.enrolled)} cards from {len(args.shown)} photos ({len(views)} views)")
    print(line("the other photos, not shown", before))
    print(line("the other photos, deck shown", after))
    print(rank_table(after))
    print(f"machine: {machine}, model {args.model.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
