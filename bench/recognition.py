"""Card recognition benchmark: latency per crop, identify time, resident memory, held-out accuracy.

    .venv/bin/python bench/recognition.py [--runs 300] [--model models/card_classifier.onnx]

Prints one line per figure (and ``--json`` for a machine-readable copy). Latency is the median
of ``--runs`` single-crop ``CardClassifier.classify`` calls on ONE onnxruntime thread, for the
fp32 and the int8 model; ``identify`` is the median time to decode an 800×600 JPEG with one card (the QH fixture photo scaled up),
find the card and read it (what ``loo-table identify`` does per image, without process start).
Accuracy on the held-out deck designs is quoted from ``models/metrics.json`` (written by the
training recipe, which synthesised the held-out crops); ``models/evaluate.py`` recomputes it.
"""

# The quickest options (`make bench QUICK=1`, tests/pi/test_bench.py): every part runs, the figures mean little.
# quick: --runs 3 --tables 1
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _read(path: Path) -> np.ndarray:
    """A fixture image, or a clear stop when it is missing (cv2.imread answers None)."""
    import cv2

    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise SystemExit(f"bench/recognition.py: cannot read {path}")
    return np.asarray(image)


def rss_mb() -> float:
    """Resident set size of this process (Linux /proc), MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def photo_with_one_card(path: Path) -> None:
    """An 800×600 JPEG with one held-out card (the committed fixture photo, scaled up)."""
    import cv2

    img = _read(ROOT / "tests" / "data" / "cards" / "photo_light_qh.jpg")
    cv2.imwrite(str(path), cv2.resize(img, (800, 600), interpolation=cv2.INTER_CUBIC), [cv2.IMWRITE_JPEG_QUALITY, 90])


def synthetic_table_accuracy(clf, tables: int = 12) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """The demo's deck on VISION's synthetic table: cards at random spots, angles, light and dark
    tables, camera noise; crops warped from the true corners (what the table pipeline does with a
    good calibration), plus how many of the cards find_cards locates on its own."""
    import numpy as np

    from vision.finder import find_cards, order_corners, warp_card
    from vision.synthetic import FACES, PlacedCard, SyntheticTable

    right = unsure = wrong = total = found = 0
    heights: list[float] = []
    rng = np.random.default_rng(11)
    for seed in range(tables):
        table = SyntheticTable(seed=seed)
        W, H = table.layout.width_mm, table.layout.height_mm
        cards = []
        labels = list(rng.permutation([*FACES, "back"]))[:10]
        for i, label in enumerate(labels):
            x = W * (0.15 + 0.7 * ((i % 5) / 4))
            y = H * (0.3 + 0.4 * (i // 5))
            cards.append(PlacedCard(label, x + rng.uniform(-15, 15), y + rng.uniform(-15, 15), rng.uniform(0, 360)))
        frame = table.render(cards, frame_index=seed)
        quads = [order_corners(table.card_quad(c).astype(np.float32)) for c in cards]
        heights += [float(np.linalg.norm(q[3] - q[0])) for q in quads]
        readings = clf.classify([warp_card(frame, q) for q in quads])
        for c, r in zip(cards, readings, strict=True):
            total += 1
            got = "back" if r.face_down else r.card
            if got is None:
                unsure += 1
            elif got == c.card:
                right += 1
            else:
                wrong += 1
        hits = find_cards(frame)
        for q in quads:
            if any(np.linalg.norm(h.corners.mean(axis=0) - q.mean(axis=0)) < 10 for h in hits):
                found += 1
    return {"synthetic_cards": total, "synthetic_right": right / total, "synthetic_unsure": unsure / total,
            "synthetic_wrong": wrong / total, "synthetic_found": found / total,
            "synthetic_card_px": f"{min(heights):.0f}-{max(heights):.0f}"}


def stained_deck_figures(models: Path, prototypes: Path | None) -> dict[str, list[int]]:
    """The demo deck with coffee stains over both indices of EVERY card (the demo's worn cards,
    `table.demo_table.worn_deck`), 52 faces on three seeded tables: [right, unsure, wrong] for the
    network alone and, when the prototypes fit the model, enrolled with and without the match floor.
    A stress test: the index is the rank's best cue, so "unsure" is the right answer here."""
    import dataclasses

    from table.demo_table import worn_deck
    from vision.classifier import CardClassifier
    from vision.enroll import EnrollError
    from vision.synthetic import FACES, seat_crops

    model = models / "card_classifier.onnx"
    readers: dict[str, CardClassifier] = {"network alone": CardClassifier(model, threads=1)}
    if prototypes is not None:
        try:
            enrolled = CardClassifier(model, threads=1, prototypes=prototypes)
        except EnrollError:
            enrolled = None  # made for another model file: no enrolled rows
        if enrolled is not None:
            readers["enrolled"] = enrolled
            bare = CardClassifier(model, threads=1, prototypes=prototypes)
            bare.set_prototypes(dataclasses.replace(bare.prototypes, _floor=0.0))
            readers["enrolled, no match floor"] = bare
    out = {name: [0, 0, 0] for name in readers}
    with tempfile.TemporaryDirectory() as tmp:
        deck = worn_deck(Path(tmp) / "deck", list(FACES))
        for seed in (3, 6, 8):
            crops, labels = seat_crops(seed, deck=deck)
            for name, clf in readers.items():
                for r, label in zip(clf.classify(crops), labels, strict=True):
                    out[name][0 if r.card == label else 1 if r.card is None else 2] += 1
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--models", type=Path, default=ROOT / "models")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    parser.add_argument("--tables", type=int, default=12, help="synthetic tables for the demo-deck figure")
    args = parser.parse_args(argv)

    base_rss = rss_mb()
    import cv2

    from vision.classifier import CardClassifier
    from vision.finder import find_cards

    cv2.setNumThreads(1)
    crops = [_read(p) for p in sorted((ROOT / "tests" / "data" / "cards").glob("crop_*.png"))]
    out: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, "
                   f"Python {platform.python_version()}",
    }
    print(f"machine: {out['machine']}")
    # the shipped reader (int8, fine-tuned on photos) and the rendered-only recipe's fp32 network
    for variant, name in (("fp32", "card_classifier.fp32.onnx"), ("int8", "card_classifier.onnx")):
        path = args.models / name
        clf = CardClassifier(path, threads=1)
        for c in crops[:5]:
            clf.classify([c])
        times = []
        for i in range(args.runs):
            one = [crops[i % len(crops)]]
            t = time.perf_counter()
            clf.classify(one)
            times.append(time.perf_counter() - t)
        batch = crops[:8]
        bt = []
        for _ in range(max(10, args.runs // 8)):
            t = time.perf_counter()
            clf.classify(batch)
            bt.append((time.perf_counter() - t) / len(batch))
        out[f"{variant}_ms_per_crop"] = round(statistics.median(times) * 1000, 3)
        out[f"{variant}_ms_per_crop_batch8"] = round(statistics.median(bt) * 1000, 3)
        print(f"{variant}: {out[f'{variant}_ms_per_crop']} ms per crop (one thread, batch 1), "
              f"{out[f'{variant}_ms_per_crop_batch8']} ms per crop in a batch of 8")

    shipped = CardClassifier(args.models / "card_classifier.onnx", threads=1)
    from vision.detector import CardDetector

    detector = CardDetector(args.models / "card_detector.onnx", threads=1)  # as `loo-table identify` runs
    with tempfile.TemporaryDirectory() as tmp:
        photo = Path(tmp) / "one_card.jpg"
        photo_with_one_card(photo)
        times = []
        found_cards: list[str | None] = []
        for _ in range(max(20, args.runs // 5)):
            t = time.perf_counter()
            image = _read(photo)
            found = find_cards(image, detector=detector)
            readings = shipped.classify([f.crop for f in found])
            times.append(time.perf_counter() - t)
            found_cards = [r.card for r in readings]
        find_only = []
        for _ in range(20):
            t = time.perf_counter()
            find_cards(image, detector=detector)
            find_only.append(time.perf_counter() - t)
    out["identify_ms_800x600_one_card"] = round(statistics.median(times) * 1000, 2)
    out["find_cards_ms_800x600"] = round(statistics.median(find_only) * 1000, 2)
    out["identify_read"] = found_cards
    print(f"identify (decode + find with the detector + read) on an 800x600 photo with one card: {out['identify_ms_800x600_one_card']} ms "
          f"(find_cards alone {out['find_cards_ms_800x600']} ms; read {found_cards})")
    out["rss_mb_recognition_stack"] = round(rss_mb(), 1)
    out["rss_mb_python_before_imports"] = round(base_rss, 1)
    print(f"resident memory: {out['rss_mb_recognition_stack']} MB with numpy, OpenCV, onnxruntime, the reader's three sessions and the detector "
          f"loaded ({out['rss_mb_python_before_imports']} MB before the imports)")

    demo = synthetic_table_accuracy(shipped, tables=args.tables)
    out.update(demo)
    print(f"demo deck (heruka-2color) on the synthetic table (vision.synthetic, 1280x720, cards "
          f"{demo['synthetic_card_px']} px tall, {args.tables} seeded tables, {demo['synthetic_cards']} cards): "
          f"read right {demo['synthetic_right'] * 100:.2f}%, unsure {demo['synthetic_unsure'] * 100:.2f}%, "
          f"confidently wrong {demo['synthetic_wrong'] * 100:.2f}% (crops warped from the true corners); "
          f"find_cards found {demo['synthetic_found'] * 100:.1f}% of the cards")

    demo_protos = ROOT / "vision" / "assets" / "decks" / "heruka-2color" / "prototypes.npz"
    stained = stained_deck_figures(args.models, demo_protos if demo_protos.is_file() else None)
    out["stained_deck"] = stained
    for name, (ok, unsure, wrong) in stained.items():
        print(f"demo deck stained over both indices on every card (3 tables, {ok + unsure + wrong} crops), "
              f"{name}: right {ok}, unsure {unsure}, WRONG {wrong}")

    metrics_path = args.models / "metrics.json"
    if metrics_path.is_file():
        m = json.loads(metrics_path.read_text())
        for variant, res in m.get("results", {}).items():
            a = res["all"]
            decks = ", ".join(f"{d} {v['top1'] * 100:.2f}%" for d, v in res["decks"].items())
            print(f"held-out accuracy ({variant}, from models/metrics.json): top-1 {a['top1'] * 100:.2f}%, "
                  f"confidently wrong {a['confidently_wrong'] * 100:.2f}%, unsure {a['unsure'] * 100:.2f}% "
                  f"of {a['n']} crops [{decks}]")
            out[f"{variant}_heldout_top1"] = a["top1"]
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
