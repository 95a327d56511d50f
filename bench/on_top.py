"""Which of two overlapping cards lies on top: how often ``vision.occlusion`` says it right.

    .venv/bin/python bench/on_top.py [FOLDER...] [--scenes N] [--seed S]

Two sets of overlapping pairs, each scored for the edges alone (``upper_of``) and for what
``identify`` asks (``what_shows`` with the reader's sureness: ``surer_of``, then the edges):

- **real pairs**, from each FOLDER of photos with VOC labels: the photo's cards are found and read
  from their whole outlines as ``identify`` does first, and of two overlapping outlines the label
  says which lies on top. A label boxes what shows of a card, so the upper card's label boxes its
  whole outline (IoU >= 0.8) while the lower card's is a strip inside its outline's box (IoU
  < 0.7, at least 70 % of it inside). Pairs whose labels say neither (or both) are left out.
- **synthesised pairs**, from N scenes of ``models/scenes.py`` at 640×480 (14 rendered decks on
  real and procedural surfaces, ``--seed``): the scene knows which card each pixel shows, so of
  two outlines overlapping by 5 % or more, the one showing 80 % or more of the shared pixels
  lies on top. The outlines are the true ones moved by a little noise (2 % of the card's width,
  per corner), as a detector's are; cards under 40 px wide are left out. Needs the deck artwork
  (``models/README.md``).

- **whole synthesised scenes**, ``--whole-scenes`` of them, seeded and drawn as above but read
  as ``identify`` reads them: the detector's outlines (matched to the true cards at IoU 0.5),
  every overlapping pair answered at once, then each spread of cards put in one order
  (``vision/spread.py``). Scored on the pairs the scene answers as above, pair by pair and
  with the spread's order.

One line per set and rule: pairs, right, wrong, undecided (neither card said to be on top: both
are then reported whole). Exits 1 when there is no pair to score.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision.classifier import CardClassifier  # noqa: E402
from vision.detector import CardDetector, quad_iou  # noqa: E402
from vision.finder import find_cards, order_corners, overlap, warp_card  # noqa: E402
from vision.image_file import UnreadableImage, read_image  # noqa: E402
from vision.occlusion import WORK_SIDE, _gradients, on_top_pairs, surer_of, upper_of  # noqa: E402
from vision.spread import Tops, in_spread_order  # noqa: E402
from vision.voc import LabelError, LabelledCard, box_iou, labelled_photos, quad_box, read_labels  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Pair:
    """Two overlapping outlines in ``image`` (photo pixels), how surely each was read from its
    whole outline, and ``truth``: 0 when the first lies on top, 1 when the second does."""

    image: np.ndarray
    a: np.ndarray
    b: np.ndarray
    sure_a: float
    sure_b: float
    truth: int


def _inside(label: tuple[float, ...], box: tuple[float, ...]) -> float:
    """The share of ``label``'s box lying inside ``box``."""
    w = max(0.0, min(label[2], box[2]) - max(label[0], box[0]))
    h = max(0.0, min(label[3], box[3]) - max(label[1], box[1]))
    area = (label[2] - label[0]) * (label[3] - label[1])
    return w * h / area if area > 0 else 0.0


def _whole(labels: list[LabelledCard], box: tuple[float, ...]) -> int | None:
    """The label boxing all of ``box`` (a card nothing lies on), if any."""
    best = max(range(len(labels)), key=lambda k: box_iou(labels[k].box, box), default=None)
    return best if best is not None and box_iou(labels[best].box, box) >= 0.8 else None


def _strip(labels: list[LabelledCard], box: tuple[float, ...], other: int) -> bool:
    """Whether a label other than ``other`` boxes only a strip of ``box`` (a card lying under another)."""
    rest = [k for k in range(len(labels)) if k != other]
    if not rest:
        return False
    k = max(rest, key=lambda k: _inside(labels[k].box, box) + box_iou(labels[k].box, box))
    return _inside(labels[k].box, box) > 0.7 and box_iou(labels[k].box, box) < 0.7


def real_pairs(folder: Path, reader: CardClassifier, detector: CardDetector) -> Iterator[Pair]:
    for photo, xml in labelled_photos(folder):
        image = read_image(photo)
        H, W = image.shape[:2]
        labels = read_labels(xml, (W, H))
        found = find_cards(image, detector=detector)
        readings = reader.classify([f.crop for f in found])
        boxes = [quad_box(f.corners) for f in found]
        boxes = [(max(0.0, b[0]), max(0.0, b[1]), min(float(W), b[2]), min(float(H), b[3])) for b in boxes]
        for i in range(len(found)):
            for j in range(i + 1, len(found)):
                if not overlap(found[i].corners, found[j].corners) > 0.03:
                    continue
                whole_i, whole_j = _whole(labels, boxes[i]), _whole(labels, boxes[j])
                i_on_top = whole_i is not None and _strip(labels, boxes[j], whole_i)
                j_on_top = whole_j is not None and _strip(labels, boxes[i], whole_j)
                if i_on_top != j_on_top:
                    yield Pair(image, found[i].corners, found[j].corners, readings[i].confidence,
                               readings[j].confidence, 0 if i_on_top else 1)


def _scenes(n: int, rng: np.random.Generator) -> Iterator[tuple[np.ndarray, list[np.ndarray], dict[tuple[int, int], int]]]:
    """``n`` scenes (drawn with ``rng``) of ``models/scenes.py`` at 640×480: the image, the true outlines and,
    for each pair (i, j) overlapping by 5 % or more whose shared pixels one of the two shows (80 %
    of them or more), 0 where i lies on top, 1 where j does."""
    from models.detector import load_faces
    from models.scenes import Surfaces, scene_with_owner

    faces = load_faces()
    walls = sorted(p for p in Path("/usr/share/backgrounds").rglob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
    surfaces = Surfaces.from_folders([], walls[:40])
    for _ in range(n):
        image, cards, owner = scene_with_owner(rng, faces, surfaces, size=(640, 480))
        quads = [c.quad.astype(np.float32) for c in cards]
        truth = {}
        for i in range(len(quads)):
            for j in range(i + 1, len(quads)):
                if not overlap(quads[i], quads[j]) > 0.05:
                    continue
                _inter, poly = cv2.intersectConvexConvex(quads[i], quads[j])
                shared = np.zeros(owner.shape, np.uint8)
                cv2.fillConvexPoly(shared, np.round(poly.reshape(-1, 2)).astype(np.int32), 1)
                on_a, on_b = int(((owner == i) & (shared > 0)).sum()), int(((owner == j) & (shared > 0)).sum())
                if on_a + on_b < 0.5 * shared.sum() or max(on_a, on_b) < 0.8 * (on_a + on_b):
                    continue  # a third card covers the overlap, or the two share it: no answer
                truth[i, j] = 0 if on_a > on_b else 1
        yield image, quads, truth


def synthesised_pairs(n: int, seed: int, reader: CardClassifier) -> Iterator[Pair]:
    rng = np.random.default_rng(seed)  # the scenes and the outlines' noise, drawn in turn
    for image, quads, truth in _scenes(n, rng):
        for (i, j), top in truth.items():
            a, b = quads[i], quads[j]
            short = min(np.linalg.norm(a[1] - a[0]), np.linalg.norm(b[1] - b[0]))
            if short < 40:
                continue
            a = (a + rng.normal(0, 0.02 * short, a.shape)).astype(np.float32)
            b = (b + rng.normal(0, 0.02 * short, b.shape)).astype(np.float32)
            ra, rb = reader.classify([warp_card(image, order_corners(a)), warp_card(image, order_corners(b))])
            yield Pair(image, a, b, ra.confidence, rb.confidence, top)


def whole_scenes(n: int, seed: int, reader: CardClassifier, detector: CardDetector) -> Iterator[dict[str, list[int | None]]]:
    """For each scene, each rule's answer and the truth for every answered pair whose two cards
    the detector found (``{"truth": [...], rule: [...]}``; the answers in the pair's own order,
    0 for the first card on top)."""
    for made, (image, quads, truth) in enumerate(_scenes(n, np.random.default_rng(seed)), start=1):
        if made % 100 == 0:
            print(f"  {made} of {n} whole scenes", file=sys.stderr, flush=True)
        found = find_cards(image, detector=detector)
        match = {}
        for t, q in enumerate(quads):
            ious = [quad_iou(f.corners, q) for f in found]
            if ious and max(ious) >= 0.5:
                match[t] = int(np.argmax(ious))
        pairs = [(i, j) for (i, j) in truth if i in match and j in match and match[i] != match[j]]
        if not pairs:
            continue
        outlines = [f.corners for f in found]
        tops = on_top_pairs(image, outlines, sureness=[r.confidence for r in reader.classify([f.crop for f in found])])
        spread = in_spread_order(outlines, tops)
        answers: dict[str, list[int | None]] = {"truth": [truth[p] for p in pairs]}
        for rule, said in (("pair by pair", tops), ("then each spread in one order (identify)", spread)):
            answers[rule] = [_said(said, match[i], match[j]) for i, j in pairs]
        yield answers


def _said(tops: Tops, a: int, b: int) -> int | None:
    """Which of found outlines ``a`` and ``b`` lies on top by ``tops``: 0 for ``a``, 1 for ``b``."""
    top = tops.get((min(a, b), max(a, b)))
    return None if top is None else (top if a < b else 1 - top)


def decisions(pair: Pair) -> dict[str, int | None]:
    """Each rule's answer for one pair: 0 (the first on top), 1 (the second) or None."""
    H, W = pair.image.shape[:2]
    scale = min(1.0, WORK_SIDE / max(H, W))
    edges = upper_of(_gradients(pair.image, scale), pair.a * scale, pair.b * scale)
    reader = surer_of(pair.sure_a, pair.sure_b)
    return {"edges alone": edges, "reader, then edges (identify)": edges if reader is None else reader}


def score(name: str, pairs: Iterator[Pair]) -> int:
    tally: dict[str, list[int]] = {}
    n = 0
    for pair in pairs:
        n += 1
        for rule, answer in decisions(pair).items():
            t = tally.setdefault(rule, [0, 0, 0])
            t[0 if answer == pair.truth else (2 if answer is None else 1)] += 1
    for rule, (right, wrong, undecided) in tally.items():
        print(f"{name}, {rule}: pairs {n}, right {right}, wrong {wrong}, undecided {undecided}", flush=True)
    return n


def score_scenes(name: str, scenes: Iterator[dict[str, list[int | None]]]) -> int:
    tally: dict[str, list[int]] = {}
    n = 0
    for answers in scenes:
        truth = answers.pop("truth")
        n += len(truth)
        for rule, said in answers.items():
            t = tally.setdefault(rule, [0, 0, 0])
            for answer, top in zip(said, truth, strict=True):
                t[0 if answer == top else (2 if answer is None else 1)] += 1
    for rule, (right, wrong, undecided) in tally.items():
        print(f"{name}, {rule}: pairs {n}, right {right}, wrong {wrong}, undecided {undecided}", flush=True)
    return n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("folders", nargs="*", type=Path, metavar="FOLDER", help="folders of photos with VOC .xml labels")
    ap.add_argument("--scenes", type=int, default=300, help="synthesised scenes (default 300; 0: none)")
    ap.add_argument("--whole-scenes", type=int, default=600, help="whole synthesised scenes read as identify reads them (default 600; 0: none)")
    ap.add_argument("--seed", type=int, default=5, help="the synthesised scenes' seed (default 5)")
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "card_classifier.onnx", help="ONNX card model")
    ap.add_argument("--detector", type=Path, default=ROOT / "models" / "card_detector.onnx", help="ONNX card detector")
    args = ap.parse_args(argv)
    if args.scenes < 0 or args.whole_scenes < 0:
        ap.error("--scenes and --whole-scenes must be 0 or more")
    try:
        reader = CardClassifier(args.model, threads=1)
        detector = CardDetector(args.detector)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    total = 0
    for folder in args.folders:
        if not folder.is_dir():
            print(f"error: {folder}: not a folder", file=sys.stderr)
            return 2
        try:
            total += score(f"real pairs, {folder}", real_pairs(folder, reader, detector))
        except (UnreadableImage, LabelError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    if args.scenes:
        total += score(f"synthesised pairs, {args.scenes} scenes", synthesised_pairs(args.scenes, args.seed, reader))
    if args.whole_scenes:
        total += score_scenes(f"whole synthesised scenes, {args.whole_scenes}",
                              whole_scenes(args.whole_scenes, args.seed, reader, detector))
    if total == 0:
        print("error: no overlapping pair to score", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
