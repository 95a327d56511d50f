"""Overlapping cards end to end: rows, fans and piles of the held-out deck designs, as ``identify`` reads them.

    .venv/bin/python bench/overlaps.py [--scenes 300] [--seed 12345] [--json] [--wrong]

``bench/photos.py`` lays its cards apart; a spread hand, a row and a trick pile are where the
rules for covered cards (``vision/occlusion.py``, ``vision/strips.py``, ``identify``'s reads of
what shows) earn or lose their keep, and where a wrong card is easiest to name. Each scene is a
seeded 640×480 photo of 2-5 cards of one held-out design (never trained on), 110-330 px tall, laid
out by the detector recipe's own layouts (``models.scenes``: a fan, a row, a pile or a scatter)
wholly inside the frame, on a desktop photograph (Debian's ``gnome-backgrounds``, where installed)
or a procedural table, with uneven light, a colour cast and sensor noise.

A card is *right* when ``identify`` names it with an outline overlapping its true outline by IoU
0.5 or more; a named card that is not right is *wrong* (the referee would act on it); a card not
named right is *unsure* where an outline overlaps it by 0.5 unnamed, else *missed*. Cards are
counted apart by how much of them shows: at least a quarter (what the detector learnt to answer)
and less (a strip beside the card on top). ``ms`` is the median time per scene, one thread.
Needs the held-out deck artwork (``models/README.md``: apt and npm packages).
"""

# The quickest options (`make bench QUICK=1`, tests/pi/test_bench.py): every part runs, the figures mean little.
# quick: --scenes 2
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
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZE = (640, 480)
CARDS = (2, 5)
HEIGHTS = (110.0, 330.0)
#: A card showing less than this share of itself is counted with the strips.
STRIP = 0.25
WALLPAPERS = Path("/usr/share/backgrounds")


def scene(rng: np.random.Generator, deck: dict[str, np.ndarray], surfaces: Any) -> tuple[np.ndarray, list[str], list[np.ndarray], list[float]] | None:
    """One scene: the image, each card's label, true outline and share showing; None where the
    layout drawn does not fit (cards of the wrong size or past the frame)."""
    import cv2

    from models.scenes import _layout
    from models.synth import _colour, _light, _sensor, table_texture

    W, H = SIZE
    labels = [str(x) for x in rng.choice(sorted(deck), size=int(rng.integers(CARDS[0], CARDS[1] + 1)), replace=False)]
    bg = surfaces.sample(rng, H, W) if rng.random() < 0.6 else None
    canvas = table_texture(rng, H, W) if bg is None else bg
    quads = _layout(rng, len(labels), W, H, 1.4)
    height = float(np.linalg.norm(quads[0][3] - quads[0][0]))
    if not HEIGHTS[0] < height < HEIGHTS[1] or any((q < 0).any() or (q[:, 0] >= W).any() or (q[:, 1] >= H).any() for q in quads):
        return None
    owner = np.full((H, W), -1, np.int16)
    for i, (q, label) in enumerate(zip(quads, labels, strict=True)):
        face = deck[label]
        h0, w0 = face.shape[:2]
        src = np.array([[0, 0], [w0 - 1, 0], [w0 - 1, h0 - 1], [0, h0 - 1]], np.float32)
        warped = cv2.warpPerspective(face, cv2.getPerspectiveTransform(src, q), (W, H), flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
        alpha = warped[:, :, 3:4].astype(np.float32) / 255.0
        canvas = canvas * (1 - alpha) + warped[:, :, :3].astype(np.float32) * alpha
        owner[alpha[:, :, 0] > 0.5] = i
    canvas = _light(rng, canvas) if rng.random() < 0.8 else canvas
    canvas = _colour(rng, canvas) if rng.random() < 0.8 else canvas
    shows = [float((owner == i).sum()) / max(1.0, float(cv2.contourArea(q))) for i, q in enumerate(quads)]
    return _sensor(rng, canvas), labels, quads, shows


def count(cards: list[Any], labels: list[str], quads: list[np.ndarray], groups: list[str],
          tallies: dict[str, dict[str, int]]) -> list[tuple[int, str]]:
    """Adds one photo's cards to ``tallies`` (group -> cards, right, wrong, unsure, missed), card
    ``j`` (``labels[j]`` at ``quads[j]``) in group ``groups[j]``, as the module's docstring says;
    returns each wrong read as (the index of the card its outline overlaps most, the card read)."""
    from vision.detector import quad_iou

    iou = np.array([[quad_iou(c.found.corners, q) for q in quads] for c in cards]).reshape(len(cards), len(quads))
    right = set()
    wrongs: list[tuple[int, str]] = []
    for k, c in enumerate(cards):
        if c.reading.card is None:
            continue
        j = labels.index(c.reading.card) if c.reading.card in labels else -1
        if j >= 0 and iou[k, j] >= 0.5:
            right.add(j)
        else:
            near = int(np.argmax(iou[k])) if len(quads) else 0
            tallies[groups[near]]["wrong"] += 1
            wrongs.append((near, c.reading.card))
    for j, group in enumerate(groups):
        t = tallies[group]
        t["cards"] += 1
        if j in right:
            t["right"] += 1
        elif any(iou[k, j] >= 0.5 for k in range(len(cards))):
            t["unsure"] += 1
        else:
            t["missed"] += 1
    return wrongs


def score(clf: Any, detector: Any, decks: list[dict[str, np.ndarray]], surfaces: Any, scenes: int,
          seed: int, *, list_wrong: bool = False) -> dict[str, Any]:
    """The tallies, for cards showing at least :data:`STRIP` of themselves and for the others
    (``list_wrong``: each wrong read also said on stderr, with its scene)."""
    from vision.identify import identify

    rng = np.random.default_rng(seed)
    tallies = {kind: dict(cards=0, right=0, wrong=0, unsure=0, missed=0) for kind in ("shown", "strips")}
    ms: list[float] = []
    made = 0
    while made < scenes:
        drawn = scene(rng, decks[int(rng.integers(len(decks)))], surfaces)
        if drawn is None:
            continue
        made += 1
        image, labels, quads, shows = drawn
        t0 = time.perf_counter()
        cards = identify(image, clf, detector)
        ms.append((time.perf_counter() - t0) * 1000)
        for near, read in count(cards, labels, quads, ["shown" if show >= STRIP else "strips" for show in shows], tallies):
            if list_wrong:
                print(f"wrong: scene {made - 1}: {labels[near]} read as {read}", file=sys.stderr)
        if made % 50 == 0:
            print(f"  {made} of {scenes} scenes", file=sys.stderr, flush=True)
    return {"scenes": scenes, "ms": round(statistics.median(ms), 1), **tallies}


def arguments(description: str, scenes: int, seed: int, what: str = "scenes to make and read") -> argparse.ArgumentParser:
    """The options every bench of made-up scenes of the held-out decks takes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--scenes", type=int, default=scenes, help=f"{what} (default {scenes})")
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument("--model", type=Path, default=ROOT / "models" / "card_classifier.onnx")
    parser.add_argument("--detector", type=Path, default=ROOT / "models" / "card_detector.onnx")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the lines")
    return parser


def load(bench: str, args: argparse.Namespace) -> tuple[list[Any], list[dict[str, np.ndarray]], Any, Any] | int:
    """The held-out decks, their faces, the reader and the detector; or the exit code, having said
    why on stderr (1: the artwork is missing, 2: a model will not load)."""
    import cv2

    from models.decks import decks, load_deck
    from vision.classifier import CardClassifier
    from vision.detector import CardDetector

    cv2.setNumThreads(1)
    held = decks(held_out=True)
    if len(held) < 3:
        print(f"{bench}: held-out deck artwork missing (apt and npm packages: models/README.md)", file=sys.stderr)
        return 1
    art = [{k: v for k, v in load_deck(d).items() if k != "back"} for d in held]
    try:
        return held, art, CardClassifier(args.model, threads=1), CardDetector(args.detector, threads=1)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def tally_line(what: str, t: dict[str, int]) -> str:
    """One group's tallies, as the benches print them."""
    n = max(1, t["cards"])
    return (f"{what}: cards {t['cards']}, right {t['right']} ({100 * t['right'] / n:.1f} %), wrong {t['wrong']}, "
            f"unsure {t['unsure']}, missed {t['missed']}")


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__.splitlines()[0], scenes=300, seed=12345)
    parser.add_argument("--wrong", action="store_true", help="also say each wrong read and its scene (stderr)")
    args = parser.parse_args(argv)
    if args.scenes < 1:
        parser.error("--scenes must be 1 or more")
    loaded = load("bench/overlaps.py", args)
    if isinstance(loaded, int):
        return loaded
    held, art, clf, detector = loaded

    from models.scenes import Surfaces

    walls = sorted(p for p in WALLPAPERS.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png", ".webp")) \
        if WALLPAPERS.is_dir() else []
    surfaces = Surfaces.from_folders([], walls)
    figures = score(clf, detector, art, surfaces, args.scenes, args.seed, list_wrong=args.wrong)
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"decks: {', '.join(d.name for d in held)}; surfaces: {len(surfaces.images)} photographs and procedural tables")
    for kind, what in (("shown", "a quarter or more showing"), ("strips", "less than a quarter showing")):
        print(tally_line(what, figures[kind]))
    print(f"scenes {figures['scenes']}, {figures['ms']} ms/scene")
    return 0


if __name__ == "__main__":
    sys.exit(main())
