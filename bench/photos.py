"""Still photos end to end: find every card and read it, on the held-out deck designs.

    .venv/bin/python bench/photos.py [--photos 40] [--kind KIND ...] [--model models/card_classifier.onnx] [--json]

What ``loo-table identify`` does, scored against ground truth. Each photo is a seeded synthetic
still (``models.synth.table_photo``: light, dark, wooden and patterned tables, uneven light,
colour casts, blur, noise, JPEG) of cards drawn from the held-out decks (never trained on), in
three kinds of shot:

- ``phone``: 1600×1200, 2-4 cards 240-400 px tall (a phone held over the table);
- ``still``: 800×600, 3-5 cards 110-220 px tall (the size the identify target is quoted at);
- ``camera``: 1280×720, 6-8 cards 55-100 px tall (the table camera a metre up);
- ``phone-12mp``: 4000×3000, 2-4 cards 800-1300 px tall (a phone's full-size photo; the renders
  are 480 px tall, so these cards are upscaled and softer than a real phone's);
- ``edge``: a ``still`` cut down so that the photo's edge runs across one of its cards, 25-55 %
  of the card past it (a phone photo that did not quite take in the whole table);
- ``table-12mp``: 4000×3000, 3-6 cards 90-200 px tall (a phone's full-size photo of a whole table
  from above: the cards are small in a large frame).

Per card: *found* when ``identify`` reports a card whose corners are all within 15 % of the
card's height of the true corners (that card's outline, not a neighbour's or a pip's), and then
*right*, *unsure* or *wrong* by the shipped open-set rule; a card not found counts as missed.
*Precise* is the share of cards found with every corner within 5 % of the height (the
classifier is trained on warps about that far off). *Phantoms* are finds that overlap no card.
*Misnamed* counts the other finds, those whose outline is no card's within 15 % but lies on a
card (a fifth or more of the smaller of the two), that name a card other than the one they lie
on most: a wrong name the referee would act on, though no card is found there (a card the
photo's edge cuts, outlined as the part in view).
Times are medians per photo on one thread.
Needs the deck artwork (``models/README.md``: apt and npm packages); renders are cached.
"""

# The quickest options (`make bench QUICK=1`, tests/pi/test_bench.py): every part runs, the figures mean little.
# quick: --photos 1 --kind still
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
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: kind -> (image size, cards per photo, card height range in px)
SHOTS: dict[str, tuple[tuple[int, int], tuple[int, int], tuple[float, float]]] = {
    "phone": ((1600, 1200), (2, 4), (240, 400)),
    "still": ((800, 600), (3, 5), (110, 220)),
    "camera": ((1280, 720), (6, 8), (55, 100)),
    "phone-12mp": ((4000, 3000), (2, 4), (800, 1300)),
    "edge": ((800, 600), (2, 3), (110, 220)),
    "table-12mp": ((4000, 3000), (3, 6), (90, 200)),
}
CUT = (0.25, 0.55)  # ``edge``: the share of the cut card's width or height that lies past the photo's edge
FOUND = 0.15  # corner error, as a share of the card's height, within which a find is that card's
PRECISE = 0.05  # ... within which its warp is as good as the training crops assume


def corner_error(found: np.ndarray, truth: np.ndarray) -> float:
    """Largest corner distance between two clockwise quads, in pixels, over the ways round the
    finder may start (it cannot know which short edge is the card's top)."""
    return float(min(np.linalg.norm(np.roll(found, k, axis=0) - truth, axis=1).max() for k in range(4)))


def photo(rng: np.random.Generator, art: dict[str, dict[str, np.ndarray]], kind: str) -> tuple[np.ndarray, list[str], list[np.ndarray]]:
    """One seeded JPEG-decoded still of ``kind``: the image, each card's label and true corners."""
    import cv2

    from models.synth import table_photo
    from vision.finder import overlap

    size, (lo, hi), heights = SHOTS[kind]
    deck = str(rng.choice(sorted(art)))
    labels = [str(x) for x in rng.choice(sorted(art[deck]), size=int(rng.integers(lo, hi + 1)), replace=False)]
    light = [True, False, None][int(rng.integers(0, 3))]  # plain light, plain dark, any texture
    for _attempt in range(100):  # table_photo gives up after 50 tries to lay big cards apart; the finder does not split a pile
        img, quads = table_photo(rng, [art[deck][c] for c in labels], size=size, card_height=heights, light_table=light)
        if not any(overlap(a, b) > 0 for i, a in enumerate(quads) for b in quads[i + 1 :]):
            break
    else:
        raise SystemExit(f"bench/photos.py: {len(labels)} cards of {heights} px do not lie apart in {size}")
    if kind == "edge":
        img, labels, quads = _cut_across(rng, img, labels, quads)
    _, jpg = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(75, 93))])
    return np.asarray(cv2.imdecode(jpg, cv2.IMREAD_COLOR)), labels, quads


def _cut_across(rng: np.random.Generator, img: np.ndarray, labels: list[str],
                quads: list[np.ndarray]) -> tuple[np.ndarray, list[str], list[np.ndarray]]:
    """The photo cut down so that one of its edges runs across a card (:data:`CUT` of it past
    the edge), the cards wholly past the new edge dropped; the true corners of a cut card stay
    where the card lies, past the frame."""
    k, side = int(rng.integers(len(quads))), int(rng.integers(4))  # right, left, bottom, top
    axis = side // 2
    lo, hi = float(quads[k][:, axis].min()), float(quads[k][:, axis].max())
    past = rng.uniform(*CUT) * (hi - lo)
    cut = int(round(hi - past)) if side in (0, 2) else int(round(lo + past))
    if side in (0, 2):
        img = img[:, :cut] if axis == 0 else img[:cut]
        keep = [i for i, q in enumerate(quads) if q[:, axis].min() < cut - 10]
        shift = np.zeros(2, np.float32)
    else:
        img = img[:, cut:] if axis == 0 else img[cut:]
        keep = [i for i, q in enumerate(quads) if q[:, axis].max() > cut + 10]
        shift = np.array([cut, 0] if axis == 0 else [0, cut], np.float32)
    return np.ascontiguousarray(img), [labels[i] for i in keep], [quads[i] - shift for i in keep]


def score(clf: Any, photos: int, seed: int, art: dict[str, dict[str, np.ndarray]],
          detector: Any = None, kinds: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """Per kind of shot (``kinds``, default all; each kind's photos are the same whichever others
    are scored): found / precise / right / unsure / wrong / missed rates, phantoms, ms per photo."""
    from vision.finder import overlap
    from vision.identify import identify

    out: dict[str, dict[str, Any]] = {}
    for k, kind in enumerate(SHOTS):
        if kinds and kind not in kinds:
            continue
        rng = np.random.default_rng([seed, k])  # one stream per kind: changing one kind leaves the others
        tally = dict(cards=0, found=0, precise=0, right=0, unsure=0, wrong=0, missed=0, phantoms=0, misnamed=0)
        ms: list[float] = []
        err: list[float] = []
        shots = max(1, photos // 4) if kind.endswith("12mp") else photos  # 12 MP photos are slow to make
        for _ in range(shots):
            img, labels, quads = photo(rng, art, kind)
            t0 = time.perf_counter()
            cards = identify(img, clf, detector)
            ms.append((time.perf_counter() - t0) * 1000)
            found = [c.found for c in cards]
            readings = [c.reading for c in cards]
            used: set[int] = set()
            for label, q in zip(labels, quads, strict=True):
                tally["cards"] += 1
                h = float(np.linalg.norm(q[3] - q[0]))
                errs = [corner_error(f.corners, q) / h for f in found]
                best = int(np.argmin(errs)) if errs else -1
                if best < 0 or errs[best] > FOUND:
                    tally["missed"] += 1
                    continue
                used.add(best)
                err.append(errs[best])
                tally["found"] += 1
                tally["precise"] += errs[best] <= PRECISE
                r = readings[best]
                got = "back" if r.face_down else r.card
                tally["unsure" if got is None else "right" if got == label else "wrong"] += 1
            tally["phantoms"] += sum(
                1 for i, f in enumerate(found) if i not in used and not any(overlap(f.corners, q) > 0.2 for q in quads)
            )
            tally["misnamed"] += sum(1 for i, f in enumerate(found) if i not in used and _misnamed(f, readings[i], labels, quads))
        n = tally["cards"]
        out[kind] = {
            "photos": shots, "cards": n,
            **{k: round(tally[k] / n, 4) for k in ("found", "precise", "right", "unsure", "wrong", "missed")},
            "phantoms": tally["phantoms"], "misnamed": tally["misnamed"],
            "median_corner_error_pct": round(100 * statistics.median(err), 2) if err else None,
            "ms": round(statistics.median(ms), 1),
        }
    return out


def _misnamed(found: Any, reading: Any, labels: list[str], quads: list[np.ndarray]) -> bool:
    """Whether a find that is no card's outline names a card other than the one it lies on most
    (a fifth or more of the smaller outline); False where it names none or lies on none."""
    from vision.finder import overlap

    got = "back" if reading.face_down else reading.card
    shares = [overlap(found.corners, q) for q in quads]
    if got is None or not shares or max(shares) <= 0.2:
        return False
    return got != labels[int(np.argmax(shares))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--photos", type=int, default=40, help="photos per kind of shot (default 40; 12 MP shots: a quarter as many)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--model", type=Path, default=ROOT / "models" / "card_classifier.onnx")
    parser.add_argument("--detector", type=Path, default=ROOT / "models" / "card_detector.onnx",
                        help="the card detector identify uses (default: the shipped one)")
    parser.add_argument("--no-detector", action="store_true", help="the contour cues alone")
    parser.add_argument("--no-zoom", action="store_true",
                        help="never read a photo again closer where its cards are small (vision.detector.ZOOM_BELOW)")
    parser.add_argument("--kind", action="append", choices=list(SHOTS), default=None,
                        help="score only this kind of shot (repeatable; default all)")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = parser.parse_args(argv)

    import cv2

    from models.decks import decks, load_deck
    from vision.classifier import CardClassifier

    cv2.setNumThreads(1)
    held = decks(held_out=True)
    if len(held) < 3:
        print("bench/photos.py: held-out deck artwork missing (apt and npm packages: models/README.md)", file=sys.stderr)
        return 1
    art = {d.name: load_deck(d, height=480) for d in held}
    clf = CardClassifier(args.model, threads=1)
    from vision.detector import CardDetector

    detector = None if args.no_detector else CardDetector(args.detector, threads=1)
    if args.no_zoom:
        import vision.detector

        vision.detector.ZOOM_BELOW = 0.0
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
          f"Python {platform.python_version()}; decks: {', '.join(sorted(art))}")
    figures = score(clf, args.photos, args.seed, art, detector, args.kind)
    for kind, f in figures.items():
        size, _, heights = SHOTS[kind]
        print(f"{kind} ({size[0]}×{size[1]}{', cut' if kind == 'edge' else ''}, cards {heights[0]:.0f}-{heights[1]:.0f} px, {f['cards']} cards): "
              f"found {100 * f['found']:.1f}% (within 5%: {100 * f['precise']:.1f}%; median corner error "
              f"{f['median_corner_error_pct']}% of the height), right {100 * f['right']:.1f}%, unsure {100 * f['unsure']:.1f}%, wrong {100 * f['wrong']:.1f}%, "
              f"missed {100 * f['missed']:.1f}%, phantoms {f['phantoms']}, misnamed {f['misnamed']}; find and read {f['ms']} ms")
    import resource

    print(f"finder: {'contour cues alone' if detector is None else 'detector ' + args.detector.name + ' and the contour cues'}; "
          f"peak memory of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
