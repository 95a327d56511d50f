"""Score trained runs, alone and averaged, on the held-out crops: how ensemble members are chosen.

    python -m models.compare models/work/fb1 models/work/ps8 models/work/mid2 [--size 2 --size 3]

Each RUN is a folder holding ``card_classifier.int8.onnx`` (or ``--variant fp32``), for example
``python -m models.train --members '' --full-bleed 0.25 --out models/work/fb1``, or a merged
model's file, whose members are scored as runs of their own (``models/card_classifier.onnx``:
the shipped members, ``card_classifier.int8.m0`` and ``.m1``, without retraining them). Every
combination's probabilities are averaged as the merged graph averages them (``models/ensemble.py``);
its open-set rule is chosen on the *calibration* crops and its figures are the *test* crops'.
Rows are sorted by calibration top-1, the figure to choose on: picking by test top-1 would tune
the recipe to the very crops it is reported on.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from models.evaluate import _rates, held_out_crops
from models.train import HERE, batched_probabilities, choose_open_set


def score_combinations(calib: Mapping[str, np.ndarray], test: Mapping[str, np.ndarray], yc: np.ndarray,
                       yt: np.ndarray, *, sizes: Iterable[int], max_wrong: float,
                       weights: Mapping[str, float] | None = None) -> list[dict[str, Any]]:
    """One row per combination of runs (of each size): members, calibration top-1, rule, test rates;
    best calibration top-1 first (ties: fewer unsure on calibration). ``weights`` (default 1 each)
    weigh a run's probabilities in every combination it is in, as a member's ``weight`` setting does."""
    rows: list[dict[str, Any]] = []
    for k in sizes:
        for combo in itertools.combinations(sorted(calib), k):
            w = [(weights or {}).get(r, 1.0) for r in combo]
            pc = np.average([calib[r] for r in combo], axis=0, weights=w)
            pt = np.average([test[r] for r in combo], axis=0, weights=w)
            threshold, margin = choose_open_set(pc, yc, max_wrong)
            on_calib = _rates(pc, yc, threshold, margin)
            rows.append({"members": list(combo), "calibration_top1": on_calib["top1"],
                         "calibration_unsure": on_calib["unsure"], "threshold": threshold, "margin": margin,
                         "test": _rates(pt, yt, threshold, margin)})
    rows.sort(key=lambda r: (-r["calibration_top1"], r["calibration_unsure"]))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m models.compare", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="folders of trained runs")
    parser.add_argument("--size", type=int, action="append", dest="sizes",
                        help="combination sizes to score (repeatable; default 1 and 2)")
    parser.add_argument("--variant", choices=("int8", "fp32"), default="int8")
    parser.add_argument("--metrics", type=Path, default=HERE / "metrics.json",
                        help="whose held-out crops to score on (default: the shipped model's)")
    parser.add_argument("--workers", type=int, default=2, help="processes synthesising crops")
    parser.add_argument("--no-turn", action="store_true",
                        help="read each crop once, without averaging it with its 180° turn (what more networks "
                             "instead of the turn would give at the same cost)")
    parser.add_argument("--weight", action="append", default=[], metavar="RUN=W",
                        help="weigh a run's probabilities by W in every combination (repeatable; default 1; "
                             "RUN as the rows name it)")
    args = parser.parse_args(argv)
    try:
        args.weights = {name: float(w) for name, _, w in (item.partition("=") for item in args.weight)}
    except ValueError:
        parser.error(f"--weight takes RUN=W with W a number, not {args.weight}")
    if any(w <= 0 for w in args.weights.values()):
        parser.error("--weight: weights must be positive")
    with tempfile.TemporaryDirectory(prefix="loo-compare-") as tmp:
        return _compare(args, Path(tmp))


def _compare(args: argparse.Namespace, tmp: Path) -> int:
    from models.ensemble import member_count, split

    models: dict[str, Path] = {}
    missing: list[str] = []
    for run in args.runs:
        if run.is_file():  # a merged model: each member is a run
            if member_count(run) == 0:
                print(f"models.compare: {run}: not a merged model (give its folder instead)", file=sys.stderr)
                return 2
            for path in split(run, tmp / f"{len(models)}"):
                models[f"{run.stem}.{path.parent.name}"] = path
            continue
        path = run / f"card_classifier.{args.variant}.onnx"
        if not path.is_file() or run.name in models:
            missing.append(str(path))
        models[run.name] = path
    if missing:
        print(f"models.compare: {', '.join(missing)}: not found (or two runs share a folder name)", file=sys.stderr)
        return 2
    unknown = sorted(set(args.weights) - set(models))
    if unknown:
        print(f"models.compare: --weight {', '.join(unknown)}: no such run (runs: {', '.join(models)})", file=sys.stderr)
        return 2
    if not args.metrics.is_file():
        print(f"models.compare: {args.metrics}: no metrics.json to take the held-out crops from", file=sys.stderr)
        return 2

    from vision.classifier import CardClassifier

    crops = held_out_crops(args.metrics, args.workers)
    calib, test = {}, {}
    for name, path in models.items():
        clf = CardClassifier(path, threads=2, flip_average=False if args.no_turn else None)
        calib[name], test[name] = batched_probabilities(clf, crops.xc), batched_probabilities(clf, crops.xt)
        print(f"scored {name}", file=sys.stderr)
    sizes = [k for k in (args.sizes or [1, 2]) if 1 <= k <= len(models)]
    for row in score_combinations(calib, test, crops.yc, crops.yt, sizes=sizes, max_wrong=crops.cfg.max_wrong,
                                  weights=args.weights):
        t = row["test"]
        names = [f"{m}×{args.weights[m]:g}" if m in args.weights else m for m in row["members"]]
        print(f"{' + '.join(names)}: calibration top-1 {row['calibration_top1'] * 100:.2f}% "
              f"(unsure {row['calibration_unsure'] * 100:.1f}%), rule {row['threshold']}/{row['margin']}; "
              f"test top-1 {t['top1'] * 100:.2f}%, confidently wrong {t['confidently_wrong'] * 100:.3f}%, "
              f"unsure {t['unsure'] * 100:.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
