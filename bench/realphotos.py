"""Real photographs end to end: what ``loo-table identify`` reports, scored against VOC labels.

    .venv/bin/python bench/realphotos.py FOLDER... [--model PATH] [--limit N] [--every N] [--json] [--wrong] [--lost]

Each FOLDER holds photos with a Pascal VOC ``.xml`` beside each, or a ``labels.tsv`` listing
the cards in each photo (``vision/voc.py``). Every photo goes through exactly the pipeline of
``loo-table identify`` (``vision.identify.identify``: the finder, then the shipped reader and its
open-set rule). A VOC card is *found* when a reported card's outline has a bounding box with IoU
>= 0.5 against the label's box, then *right* (rank, and suit where the label has one), *wrong*
(another card named, with confidence: the referee would act on it) or *unsure* (found, nothing
named: the referee asks); *missed* when nothing matches; *extra* counts reported cards that match
no label. A listed photo is scored order-free (``vision.voc.score_listed_photo``). One line per
folder, its table by rank (cards, right, wrong, unsure, missed) and its worst rank, a total, and
how many of the photos of a single card were read right; ``ms/photo`` is the median time of the
whole pipeline per photo, one thread.
Exits 1 when a folder has no labelled photo.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision.classifier import CardClassifier  # noqa: E402
from vision.detector import CardDetector  # noqa: E402
from vision.identify import identify  # noqa: E402
from vision.image_file import UnreadableImage, read_image  # noqa: E402
from vision.voc import (  # noqa: E402
    CARD_LISTS,
    LabelError,
    Tally,
    labelled_photos,
    listed_photos,
    read_labels,
    score_listed_photo,
    score_photo,
)

DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "card_classifier.onnx"
DEFAULT_DETECTOR = Path(__file__).resolve().parent.parent / "models" / "card_detector.onnx"


def score_folder(folder: Path, clf: CardClassifier, detector: CardDetector | None, *, limit: int | None = None,
                 every: int = 1) -> tuple[Tally, Tally]:
    """The folder's tally, and the tally of its photos of a single card (a target of their own)."""
    total, single = Tally(), Tally()
    listed = (folder / CARD_LISTS).is_file()
    photos: list[tuple[Path, Path | list[str]]] = list(listed_photos(folder) if listed else labelled_photos(folder))
    for photo, label in photos[::every][:limit]:
        image = read_image(photo)
        t0 = time.perf_counter()
        cards = identify(image, clf, detector)
        ms = (time.perf_counter() - t0) * 1000
        if isinstance(label, list):
            t = score_listed_photo(label, [c.reading.card for c in cards if c.reading.card is not None],
                                   sum(c.reading.unsure for c in cards), name=photo.name)
        else:
            labels = read_labels(label, (image.shape[1], image.shape[0]))
            t = score_photo(labels, [(c.shown_box, c.reading.card) for c in cards], name=photo.name)
        t.ms.append(ms)
        total.add(t)
        if t.cards == 1:
            single.add(t)
    return total, single


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f} %" if d else "-"


def line(name: str, t: Tally) -> str:
    ms = statistics.median(t.ms) if t.ms else 0.0
    return (f"{name}: photos {t.photos}, cards {t.cards}, found {t.found} ({_pct(t.found, t.cards)}), "
            f"right {t.right} ({_pct(t.right, t.cards)}), wrong {t.wrong} ({_pct(t.wrong, t.cards)}), "
            f"unsure {t.unsure} ({_pct(t.unsure, t.cards)}), missed {t.missed} ({_pct(t.missed, t.cards)}), "
            f"extra {t.extra}, {ms:.1f} ms/photo")


def rank_table(t: Tally) -> str:
    """The folder's cards by rank, one line each, then its worst rank."""
    lines = ["  rank  cards  right  wrong  unsure  missed"]
    for rank, n, right, wrong, unsure, missed in t.rank_rows():
        lines.append(f"  {rank:>4}  {n:5d}  {_pct(right, n):>7}  {wrong:5d}  {unsure:6d}  {missed:6d}")
    worst = t.worst_rank()
    if worst is not None:
        lines.append(f"  worst rank: {worst[0]} ({100 * worst[1]:.1f} % right)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("folders", nargs="+", type=Path, metavar="FOLDER", help="folders of photos with VOC .xml labels")
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="ONNX card model (default: the shipped one)")
    ap.add_argument("--detector", type=Path, default=DEFAULT_DETECTOR, help="ONNX card detector (default: the shipped one)")
    ap.add_argument("--no-detector", action="store_true", help="the contour cues alone, without the detector")
    ap.add_argument("--threshold", type=float, default=None, help="detector peak threshold (default: the model's)")
    ap.add_argument("--reader-threshold", type=float, action="append", default=None, metavar="T",
                    help="score with this open-set threshold instead of the model's (repeatable: one line each, a risk-coverage curve)")
    ap.add_argument("--limit", type=int, default=None, help="score only the first N photos of each folder")
    ap.add_argument("--every", type=int, default=1, metavar="N",
                    help="score every N-th photo from the first (5: the train/ photos the recipes hold back)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the lines")
    ap.add_argument("--wrong", action="store_true", help="also list every confidently wrong read")
    ap.add_argument("--lost", action="store_true",
                    help="also list every card missed or left unsure, with the report lying nearest it")
    args = ap.parse_args(argv)
    if args.every < 1:
        ap.error("--every must be 1 or more")
    try:
        readers = [CardClassifier(args.model, threads=1, threshold=t) for t in (args.reader_threshold or [None])]
        detector = None if args.no_detector else CardDetector(args.detector, threshold=args.threshold)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for clf in readers:
        if args.reader_threshold:
            print(f"reader threshold {clf.threshold}:")
        status = score_all(args, clf, detector)
        if status:
            return status
    return 0


def score_all(args: argparse.Namespace, clf: CardClassifier, detector: CardDetector | None) -> int:
    grand, singles = Tally(), Tally()
    rows = {}
    for folder in args.folders:
        if not folder.is_dir():
            print(f"error: {folder}: not a folder", file=sys.stderr)
            return 2
        try:
            t, single = score_folder(folder, clf, detector, limit=args.limit, every=args.every)
        except (UnreadableImage, LabelError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if t.photos == 0:
            print(f"error: {folder}: no photo with a .xml label beside it, and no {CARD_LISTS}", file=sys.stderr)
            return 1
        grand.add(t)
        singles.add(single)
        rows[str(folder)] = t
        if not args.json:
            print(line(str(folder), t))
            print(rank_table(t), flush=True)
    if args.json:
        out = {k: {f: getattr(t, f) for f in ("photos", "cards", "found", "right", "wrong", "unsure", "missed", "extra")}
               | {"ms_per_photo": round(statistics.median(t.ms), 1),
                  "ranks": {r[0]: dict(zip(("cards", "right", "wrong", "unsure", "missed"), r[1:], strict=True))
                            for r in t.rank_rows()}}
               for k, t in rows.items()}
        print(json.dumps({"folders": out, "single_card_photos": {"photos": singles.photos, "right": singles.right},
                          "machine": f"{platform.machine()}, {os.cpu_count()} cores"}))
    else:
        print(line("total", grand))
        print(f"single-card photos: {singles.photos}, right {singles.right} ({_pct(singles.right, singles.photos)})")
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, model {args.model.name}")
    if args.wrong:
        for w in grand.wrong_examples:
            print("wrong:", w)
    if args.lost:
        for w in grand.lost_examples:
            print("lost:", w)
    return 0


if __name__ == "__main__":
    sys.exit(main())
