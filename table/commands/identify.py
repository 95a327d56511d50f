"""`loo-table identify IMAGE...`: find and read the cards in still photos, one JSON line per image.

Each line is ``{"image": path, "cards": [{"card": "QH", "confidence": 0.998, "corners": [[x, y],
...4], "box": [x0, y0, x1, y1]}]}``: ``corners`` outline the whole card, also where another
lies on it; ``box`` bounds the part that shows, and a card with others lying on it has
``"under"``: their places in the list. A card the model is unsure of has ``"card": null`` and
``"top3"``; a face-down card has ``"card": null`` and ``"face_down": true``. An image that cannot be read gives an ``error:``
line on stderr, the remaining images are still read, and the exit status is 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from table.cli import CommandError

if TYPE_CHECKING:
    from vision.classifier import CardClassifier
    from vision.detector import CardDetector


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by identify and enroll."""
    parser.add_argument("--model", type=Path, default=None, help="ONNX card model (default: the shipped models/card_classifier.onnx)")
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads (default 1)")
    parser.add_argument("--provider", action="append", default=None, metavar="NAME",
                        help="onnxruntime execution provider in order of preference (repeatable; default: TensorRT, CUDA, CPU when present)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("images", nargs="+", type=Path, metavar="IMAGE", help="photos of cards on a table")
    add_model_arguments(parser)
    parser.add_argument("--threshold", type=float, default=None, help="open-set confidence threshold (default: the model's)")
    parser.add_argument("--margin", type=float, default=None, help="open-set top-1/top-2 margin (default: the model's)")
    parser.add_argument("--prototypes", type=Path, default=None, help="enrolment file from `loo-table enroll` (reads your deck better)")
    add_detector_arguments(parser)


def add_detector_arguments(parser: argparse.ArgumentParser) -> None:
    """The finder's options, shared by identify and enroll (a layout is found as identify finds cards)."""
    parser.add_argument("--detector", type=Path, default=None,
                        help="ONNX card detector (default: the shipped models/card_detector.onnx)")
    parser.add_argument("--no-detector", action="store_true",
                        help="find cards with the contour cues alone (faster; only cards lying apart on a plain table)")


def load_classifier(args: argparse.Namespace, *, threshold: float | None = None,
                    margin: float | None = None, prototypes: Path | None = None) -> CardClassifier:
    from table.runtime import default_model_path
    from vision.classifier import CardClassifier, ModelError

    try:
        return CardClassifier(args.model or default_model_path(), threads=args.threads, providers=args.provider,
                              threshold=threshold, margin=margin, prototypes=prototypes)
    except (ModelError, ValueError) as exc:
        raise CommandError(str(exc)) from None


def load_detector(args: argparse.Namespace) -> CardDetector | None:
    """The card detector the options name, or None for the contour cues alone."""
    from vision.classifier import ModelError
    from vision.detector import CardDetector  # noqa: F811 - the class itself, not only its type

    if getattr(args, "no_detector", False):
        return None
    from table.runtime import default_detector_path

    try:
        return CardDetector(args.detector or default_detector_path(), threads=args.threads)
    except (ModelError, ValueError) as exc:
        raise CommandError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from vision.identify import identify
    from vision.image_file import UnreadableImage, read_image

    clf = load_classifier(args, threshold=args.threshold, margin=args.margin, prototypes=args.prototypes)
    detector = load_detector(args)
    status = 0
    for path in args.images:
        try:
            image = read_image(path)
        except UnreadableImage as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = 2
            continue
        cards = [card.to_dict() for card in identify(image, clf, detector)]
        print(json.dumps({"image": str(path), "cards": cards}), flush=True)
    return status
