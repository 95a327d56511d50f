"""A phone's full-size photo of a card table from above: a row of five and four overlapping pairs.

    .venv/bin/python bench/poker_table.py [--scenes 20] [--seed 7] [--size 4000x3000] [--heights 150-260] [--json]

``bench/photos.py`` lays its cards apart on a table that fills the frame, and ``bench/overlaps.py``
reads small photos of one group of cards. A photo of a whole game from above is neither: a light
table standing on a floor (the floor shows round it), a row of five cards lying close side by side
in the middle, and at each of four seats a pair, the second card across the first with the first's
corner index showing, all small in a 4000×3000 frame (150-260 px tall; ``--size`` and ``--heights``
for others, such as a 24 MP camera's 6000×4000 with 90-150 px cards). Each scene is seeded and
uses the held-out deck designs (never trained on), with uneven light, a colour cast, sensor noise
and JPEG.

Cards are *right*, *wrong*, *unsure* or *missed* as ``bench/overlaps.py`` counts them. Cards are
counted apart by where they lie: the row, the card on top of a pair, the card under it. ``ms`` is
the median time of ``identify`` per photo, one thread.
Needs the held-out deck artwork (``models/README.md``: apt and npm packages).
"""

# The quickest options (`make bench QUICK=1`, tests/pi/test_bench.py): every part runs, the figures mean little.
# quick: --scenes 1 --size 1000x1000 --heights 60-100
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZE = (4000, 3000)
HEIGHTS = (150.0, 260.0)
ROLES = ("row", "pair top", "pair under")


def _rect(centre: np.ndarray, angle: float, height: float) -> np.ndarray:
    """A card's outline (4×2, the render's corner order) standing ``angle`` radians off upright."""
    w, h = height / 1.4, height
    base = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]], np.float32)
    rot = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]], np.float32)
    return (base @ rot.T + centre.astype(np.float32)).astype(np.float32)


def _floor(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A parquet floor: planks of wood grain, each its own shade (float32 BGR)."""
    from models.synth import _noise

    base = np.array([rng.uniform(40, 90), rng.uniform(70, 130), rng.uniform(110, 180)], np.float32)
    plank = int(rng.integers(60, 140))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    rows = (yy // plank).astype(np.int32)
    shade = rng.uniform(0.75, 1.2, int(rows.max()) + 1).astype(np.float32)[rows]
    grain = 1 + 0.08 * np.sin(xx * rng.uniform(0.02, 0.08) + 4 * np.sin(yy * 0.05 + rows))
    img = base[None, None, :] * (shade * grain)[:, :, None]
    return np.asarray(img + _noise(rng, (h, w, 1), 4))


def _paste(canvas: np.ndarray, face: np.ndarray, quad: np.ndarray) -> None:
    """Lays the BGRA render ``face`` at ``quad`` on ``canvas`` (float32 BGR), warping only the
    card's own box of the photo (a whole-frame warp per card is most of a 12 MP scene's cost)."""
    import cv2

    H, W = canvas.shape[:2]
    x0, y0 = np.floor(quad.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 2
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, W), min(y1, H)
    shrink = float(np.linalg.norm(quad[3] - quad[0])) / face.shape[0]
    if shrink < 1:  # downscaled as a lens would, not aliased by the warp
        face = cv2.resize(face, None, fx=shrink, fy=shrink, interpolation=cv2.INTER_AREA)
    h0, w0 = face.shape[:2]
    src = np.array([[0, 0], [w0 - 1, 0], [w0 - 1, h0 - 1], [0, h0 - 1]], np.float32)
    m = cv2.getPerspectiveTransform(src, (quad - np.array([x0, y0], np.float32)).astype(np.float32))
    warped = cv2.warpPerspective(face, m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    alpha = warped[:, :, 3:4].astype(np.float32) / 255.0
    box = canvas[y0:y1, x0:x1]
    canvas[y0:y1, x0:x1] = box * (1 - alpha) + warped[:, :, :3].astype(np.float32) * alpha


def scene(rng: np.random.Generator, deck: dict[str, np.ndarray]) -> tuple[np.ndarray, list[str], list[np.ndarray], list[str]]:
    """One photo: the image, each card's label, true outline and role (:data:`ROLES`)."""
    import cv2

    from models.synth import _colour, _light, _noise, _random_colour, _sensor

    W, H = SIZE
    height = float(rng.uniform(*HEIGHTS))
    width = height / 1.4
    canvas = _floor(rng, H, W)
    tx0, ty0 = int(rng.uniform(0, 0.12) * W), int(rng.uniform(0, 0.12) * H)
    tx1, ty1 = int(W - rng.uniform(0, 0.12) * W), int(H - rng.uniform(0, 0.12) * H)
    canvas[ty0:ty1, tx0:tx1] = _random_colour(rng, light=True) + _noise(rng, (ty1 - ty0, tx1 - tx0, 1), 3)
    labels = [str(x) for x in rng.choice(sorted(deck), size=13, replace=False)]
    quads: list[np.ndarray] = []
    roles: list[str] = []
    centre = np.array([(tx0 + tx1) / 2, (ty0 + ty1) / 2])
    turn = rng.uniform(-0.15, 0.15)
    along = np.array([math.cos(turn), math.sin(turn)])
    for i in range(5):  # the row: cards side by side, a tenth to a fifth of a card apart
        quads.append(_rect(centre + (i - 2) * width * rng.uniform(1.1, 1.2) * along, turn + rng.normal(0, 0.03), height))
        roles.append("row")
    for sx, sy in ((-0.3, -0.28), (0.3, -0.28), (-0.3, 0.28), (0.3, 0.28)):  # the seats' pairs
        seat = centre + np.array([sx * (tx1 - tx0), sy * (ty1 - ty0)])
        angle = rng.uniform(-0.5, 0.5)
        quads.append(_rect(seat, angle, height))
        roles.append("pair under")
        shift = np.array([math.cos(angle), math.sin(angle)]) * width * rng.uniform(0.35, 0.6) + rng.normal(0, 0.05 * height, 2)
        quads.append(_rect(seat + shift, angle + rng.normal(0, 0.12), height))
        roles.append("pair top")
    for quad, label in zip(quads, labels, strict=False):
        _paste(canvas, deck[label], quad)
    canvas = _light(rng, canvas)
    canvas = _colour(rng, canvas) if rng.random() < 0.7 else canvas
    image = _sensor(rng, canvas)
    _, jpg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(80, 95))])
    return np.asarray(cv2.imdecode(jpg, cv2.IMREAD_COLOR)), labels[: len(quads)], quads, roles


def score(clf: Any, detector: Any, decks: list[dict[str, np.ndarray]], scenes: int, seed: int) -> dict[str, Any]:
    """The tallies per role, and the median time per photo."""
    from bench.overlaps import count  # the same rules for right, wrong, unsure and missed
    from vision.identify import identify

    rng = np.random.default_rng(seed)
    tallies = {role: dict(cards=0, right=0, wrong=0, unsure=0, missed=0) for role in ROLES}
    ms: list[float] = []
    for made in range(1, scenes + 1):
        image, labels, quads, roles = scene(rng, decks[int(rng.integers(len(decks)))])
        t0 = time.perf_counter()
        cards = identify(image, clf, detector)
        ms.append((time.perf_counter() - t0) * 1000)
        count(cards, labels, quads, roles, tallies)
        if made % 5 == 0:
            print(f"  {made} of {scenes} photos", file=sys.stderr, flush=True)
    return {"scenes": scenes, "ms": round(statistics.median(ms), 1), **tallies}


def main(argv: list[str] | None = None) -> int:
    from bench.overlaps import arguments, load, tally_line

    parser = arguments(__doc__.splitlines()[0], scenes=20, seed=7, what="photos to make and read")
    parser.add_argument("--size", default="4000x3000", help="the photo's width and height (default 4000x3000)")
    parser.add_argument("--heights", default="150-260", help="the cards' height in px, least and most (default 150-260)")
    args = parser.parse_args(argv)
    if args.scenes < 1:
        parser.error("--scenes must be 1 or more")
    global SIZE, HEIGHTS
    try:
        w, h = (int(x) for x in args.size.lower().split("x"))
        lo, hi = (float(x) for x in args.heights.split("-"))
    except ValueError:
        parser.error("--size is WIDTHxHEIGHT and --heights LEAST-MOST, such as 6000x4000 and 90-150")
    if not (1000 <= min(w, h) and 40 <= lo <= hi <= min(w, h) / 6):
        parser.error("--size needs 1000 px a side or more, and --heights 40 px or more, a sixth of the photo at most")
    SIZE, HEIGHTS = (w, h), (lo, hi)
    loaded = load("bench/poker_table.py", args)
    if isinstance(loaded, int):
        return loaded
    held, art, clf, detector = loaded
    figures = score(clf, detector, art, args.scenes, args.seed)
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"decks: {', '.join(d.name for d in held)}; {SIZE[0]}×{SIZE[1]}, cards {HEIGHTS[0]:.0f}-{HEIGHTS[1]:.0f} px")
    for role in ROLES:
        print(tally_line(role, figures[role]))
    print(f"photos {figures['scenes']}, {figures['ms']} ms/photo")
    return 0


if __name__ == "__main__":
    sys.exit(main())
