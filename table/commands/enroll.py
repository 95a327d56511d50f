"""`loo-table enroll`: adapt the card reader to your own deck, card by card.

Three ways in, all guided:

- a layout: the cards of a suit (or the whole deck) laid face up, apart, in any order and any
  arrangement, photographed from above; ``--cards`` names the cards that lie there
  (``--cards 2C,3C,...,AC``, or ``--cards all``). Several photos of one layout may be given. The
  cards found are assigned the named cards as a set (``vision/layout.py``), and what each was
  assigned is printed for the host to check;
- photos: one photo per card (any number per card), named after the card: ``2C.jpg``,
  ``QH-2.jpg``, ``10D.png``, ``back.jpg``; pass the files or their folder;
- a short video: show the cards one at a time in the guide order (``loo-table enroll --guide``),
  each for about a second, taking each card away before showing the next.

The command reports card by card what it got (and which cards are still missing or read as
another card, i.e. a misnamed photo), then writes the prototypes file (default
``deck-prototypes.npz``; point ``[model] prototypes`` of the table config at it, or pass
``--prototypes`` to ``loo-table identify``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from table.cli import CommandError
from table.commands.identify import (
    add_detector_arguments,
    add_model_arguments,
    load_classifier,
    load_detector,
)
from vision.image_file import IMAGE_EXTENSIONS, UnreadableImage, read_image

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from vision.classifier import CardClassifier
    from vision.detector import CardDetector

    Image = NDArray[np.uint8]
    """A BGR photo, a video frame or a card's crop."""
    Item = tuple[str, Image, str]
    """One view to enrol: its label, the card's crop, where it came from."""

VIDEO_EXT = {".mp4", ".avi", ".mov", ".mkv", ".webm", ".h264", ".mjpeg"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sources", nargs="*", type=Path, metavar="PHOTO|FOLDER|VIDEO",
                        help="photos of a layout (with --cards), photos named after their card (2C.jpg, QH-2.jpg, "
                             "back.jpg), folders of them, or one video")
    parser.add_argument("--guide", action="store_true", help="print how to photograph or film the deck, then exit")
    parser.add_argument("--out", type=Path, default=Path("deck-prototypes.npz"),
                        help="prototypes file to write (default: deck-prototypes.npz in the current folder; point "
                             "[model] prototypes of the table config at it)")
    parser.add_argument("--cards", default=None,
                        help="for photos of a layout: the cards lying in it, in any order (2C,3C,...,AC, or 'all'); "
                             "for a video: the cards it shows, in order, comma-separated (default: the guide order)")
    parser.add_argument("--every", type=int, default=2, help="for a video: use every Nth frame (default 2)")
    add_model_arguments(parser)
    add_detector_arguments(parser)


def _guide(order: tuple[str, ...]) -> str:
    lines = [
        "Enrol your deck: lay each card face up under the table camera (or any camera), alone,",
        "on the table you play on. Either photograph each card and name the file after it",
        "(2C.jpg, 10H.jpg, QS.jpg, back.jpg; several photos per card help), or film the cards",
        "one at a time in this order, about a second each, taking each away before the next:",
        "",
    ]
    for i in range(0, len(order), 13):
        lines.append("  " + " ".join(order[i : i + 13]))
    lines += ["", "Then run: loo-table enroll PHOTOS-OR-VIDEO --out deck-prototypes.npz"]
    return "\n".join(lines)


def _largest_card(image: Image) -> Image | None:
    from vision.finder import find_cards

    found = find_cards(image)
    if not found:
        return None
    import cv2

    return max(found, key=lambda f: cv2.contourArea(f.corners)).crop


def _from_photos(paths: list[Path], clf: CardClassifier) -> list[Item]:
    from vision.enroll import label_from_filename

    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files += sorted(f for f in p.iterdir() if f.suffix.lower() in IMAGE_EXTENSIONS)
        else:
            files.append(p)
    items: list[Item] = []
    for f in files:
        label = label_from_filename(f)
        if label is None:
            print(f"error: {f}: name the photo after its card (2C.jpg, 10H-2.png, back.jpg)", file=sys.stderr)
            continue
        try:
            image = read_image(f)
        except UnreadableImage as exc:
            print(f"error: {exc}", file=sys.stderr)
            continue
        crop = _largest_card(image)
        if crop is None:
            print(f"error: {f}: no whole card found (lay it flat, all four corners in view)", file=sys.stderr)
            continue
        items.append((label, crop, str(f)))
    return items


def _from_layout(paths: list[Path], cards_text: str, clf: CardClassifier, detector: CardDetector | None) -> list[Item]:
    """The cards of a layout photographed once or more, each assigned one of the named cards
    (``vision.layout``); prints what each find was given, so the host can check it."""
    from vision.layout import LayoutError, parse_cards, read_layout

    try:
        cards = parse_cards(cards_text)
    except LayoutError as exc:
        raise CommandError(f"--cards: {exc}") from None
    files: list[Path] = []
    for p in paths:
        files += sorted(f for f in p.iterdir() if f.suffix.lower() in IMAGE_EXTENSIONS) if p.is_dir() else [p]
    try:
        images = [read_image(f) for f in files]
        layout = read_layout(images, cards, clf, detector)
    except (UnreadableImage, LayoutError) as exc:
        raise CommandError(str(exc)) from None
    for c in sorted(layout.cards, key=lambda c: (c.photo, cards.index(c.card))):
        x, y = (float(v) for v in c.corners.mean(axis=0))
        note = f"  not enrolled: the reader's own guess is {c.guess}; lay it apart, or photograph it alone" \
            if c.to_check else ""
        print(f"{files[c.photo].name}: {c.card:>3} at ({x:.0f}, {y:.0f}), {100 * c.share:.0f} % of the named cards{note}")
    if layout.missing:
        print(f"not found in any photo: {', '.join(layout.missing)} (lay them apart, all four corners in view)",
              file=sys.stderr)
    if layout.left:
        print(f"{layout.left} find(s) given no card (not one of the named cards)", file=sys.stderr)
    return [(c.card, c.crop, f"{files[c.photo]}#{c.card}") for c in layout.trusted]


def _from_video(path: Path, order: tuple[str, ...], clf: CardClassifier, every: int) -> list[Item]:
    """Split a video into runs of one card each (consecutive frames showing the same card)."""
    import cv2
    import numpy as np

    cap = cv2.VideoCapture(str(path))
    if not cap.isOpened():
        raise CommandError(f"{path}: cannot open video")
    runs: list[list[tuple[Image, NDArray[np.float32]]]] = []  # each: [(crop, embedding)]
    current: list[tuple[Image, NDArray[np.float32]]] = []
    idx = 0
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        idx += 1
        if (idx - 1) % max(1, every):
            continue
        crop = _largest_card(np.asarray(frame, dtype=np.uint8))  # an 8-bit BGR frame: no copy
        if crop is None:
            if current:
                runs.append(current)
                current = []
            continue
        emb = clf.embed([crop])[0]
        if current:
            mean = np.mean([e for _, e in current], axis=0)
            if float(emb @ mean / max(np.linalg.norm(mean), 1e-8)) < 0.8:  # another card replaced it
                runs.append(current)
                current = []
        current.append((crop, emb))
    cap.release()
    if current:
        runs.append(current)
    runs = [r for r in runs if len(r) >= 3]  # shorter runs are a card sliding in or out
    if len(runs) != len(order):
        raise CommandError(
            f"{path}: found {len(runs)} cards shown one at a time, expected {len(order)} "
            f"({order[0]} ... {order[-1]}); film again following --guide, or use photos"
        )
    items = []
    for label, run in zip(order, runs, strict=True):
        step = max(1, len(run) // 8)
        for crop, _ in run[::step][:8]:
            items.append((label, crop, f"{path}#{label}"))
    return items


def run(args: argparse.Namespace) -> int:
    from vision.enroll import EnrollError, Prototypes, guide_order, model_digest

    order = guide_order()
    if args.guide or not args.sources:
        print(_guide(order))
        return 0
    clf = load_classifier(args)
    if not clf.has_embedding:
        raise CommandError(f"{clf.model_path}: model has no embedding output; enrolment needs one")

    videos = [p for p in args.sources if p.suffix.lower() in VIDEO_EXT]
    if videos and len(args.sources) > 1:
        raise CommandError("give one video, or photos/folders, not both")
    if videos:
        cards = tuple(c.strip() for c in args.cards.split(",")) if args.cards else order
        unknown = [c for c in cards if c not in clf.labels]
        if unknown:
            raise CommandError(f"--cards: unknown card {unknown[0]!r}")
        items = _from_video(videos[0], cards, clf, args.every)
    elif args.cards:
        items = _from_layout(list(args.sources), args.cards, clf, load_detector(args))
    else:
        items = _from_photos(list(args.sources), clf)
    if not items:
        raise CommandError("no card could be enrolled")

    readings = clf.classify([crop for _, crop, _ in items])
    embeddings = clf.embed([crop for _, crop, _ in items])
    got: dict[str, int] = {}
    for (label, _, src), r in zip(items, readings, strict=True):
        got[label] = got.get(label, 0) + 1
        read = r.card or ("back" if r.face_down else None)
        if read is not None and read != label:
            print(f"warning: {src}: enrolled as {label} but reads as {read} ({r.confidence:.2f}); check its name",
                  file=sys.stderr)
    if args.cards and not videos:
        # a layout: its own lines said where each card lies; the named cards not found are listed there
        print(f"{len(got)} of the named cards enrolled, {len(items)} views")
    else:
        for label in order:
            n = got.get(label, 0)
            print(f"{label:>4}  {'ok, ' + str(n) + ' view' + ('s' if n > 1 else '') if n else 'missing: add a photo named ' + label + '.jpg'}")
    from table.runtime import default_model_path

    try:
        protos = Prototypes.build(clf.labels, [(lab, e) for (lab, _, _), e in zip(items, embeddings, strict=True)],
                                  model_sha256=model_digest(args.model or default_model_path()))
        protos.save(args.out)
    except (EnrollError, OSError) as exc:
        raise CommandError(str(exc)) from None
    print(f"enrolled {len(protos.enrolled)} of {len(order)} cards ({len(items)} views) -> {args.out}")
    return 0
