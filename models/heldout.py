"""Score model files on the held-out rendered decks' test crops, as the recipe does.

    python -m models.heldout MODEL.onnx [MODEL.onnx ...] [--covered N [--calibration]] [--fresh N]

The recipe (``models.train``) writes these figures into ``metrics.json`` for the network it
trains; a model made afterwards (the fine-tuned reader, ``models/finetune.py``) is scored here on
the same crops (the recipe's config, seed + 3) with the open-set rule in its own sidecar, so the
two can be compared row for row. One line per model: top-1, confidently wrong, unsure, not-a-card
crops accepted, and top-1 per deck. Needs the deck artwork (``models/README.md``).

``--fresh N`` scores N more crops of every held-out card from a stream of their own (seed + 20),
which no rule was chosen on: 4,240 test crops can show no wrong read by luck where the rate is
one in two thousand, and a rate is what a night of play meets. ``--stream K`` picks another such
stream (seed + K): 30 is the one the steadiness rule was chosen on.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.heldout", description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", type=Path, metavar="MODEL", help="ONNX card models with their .json sidecars")
    ap.add_argument("--workers", type=int, default=2, help="synthesis processes (default 2)")
    ap.add_argument("--covered", type=int, default=0, metavar="N",
                    help="score covered cards instead: each held-out card N times with another card of its deck "
                         "lying on most of it (models/synth.py), read from its whole crop, from its crop completed "
                         "by its half turn, and by identify's rule for the two")
    ap.add_argument("--calibration", action="store_true",
                    help="with --covered: the calibration stream of covered cards (where vision.identify.COMPLETED_SURE "
                         "was chosen), not the one reported")
    ap.add_argument("--fresh", type=int, default=0, metavar="N",
                    help="score N crops of every held-out card from a fresh stream (seed + 20) instead of the test crops")
    ap.add_argument("--stream", type=int, default=20, metavar="K",
                    help="with --fresh: the stream's seed offset (default 20, the stream reported; 30 is the stream "
                         "the steadiness rule was chosen on, with the recipe's calibration crops)")
    args = ap.parse_args(argv)
    for path in args.models:
        if not path.is_file() or not path.with_suffix(".json").is_file():
            print(f"error: {path}: model or its .json sidecar missing", file=sys.stderr)
            return 2
    from models.train import Config, _plan, evaluate, held_out_plans, load_artwork, synthesise

    cfg = Config()
    _train, held = load_artwork(cfg)
    _calib, test, neg, _ = held_out_plans(cfg, held)
    if args.covered > 0:
        return _covered(args.models, held, args.covered, cfg.seed + (8 if args.calibration else 10))
    if args.fresh > 0:
        import numpy as np

        plan = _plan(np.random.default_rng(cfg.seed + args.stream), 0, held, cfg, negatives=0, per_card=args.fresh)
        x, y = synthesise(held, plan, cfg.seed + args.stream + 1, args.workers, "fresh crops")
    else:
        plan = test + neg
        x, y = synthesise(held, plan, cfg.seed + 3, args.workers, "test crops")
    groups = [nm or "procedural-back" if li >= 0 else "negative" for li, nm, _ in plan]
    for path in args.models:
        meta = json.loads(path.with_suffix(".json").read_text())
        ev = evaluate(path, x, y, groups, float(meta["threshold"]), float(meta["margin"]))
        a = ev["all"]
        decks = ", ".join(f"{k} {100 * v['top1']:.2f} %" for k, v in ev["decks"].items())
        wrong = round(a["confidently_wrong"] * a["n"])
        print(f"{path}: {a['n']} crops, top-1 {100 * a['top1']:.2f} %, confidently wrong {100 * a['confidently_wrong']:.3f} % ({wrong}), "
              f"unsure {100 * a['unsure']:.1f} %, not-a-card accepted {100 * ev.get('not_a_card', {}).get('accepted_as_card', 0):.1f} % "
              f"(threshold {meta['threshold']}); {decks}", flush=True)
    return 0


def _covered(models: list[Path], held: dict[str, Any], per_card: int, seed: int) -> int:
    """Covered held-out cards read three ways (see ``--covered``): one line per model and way."""
    from dataclasses import replace

    import numpy as np

    from models.synth import covered_crop
    from vision.classifier import CardClassifier, Reading
    from vision.identify import _either
    from vision.occlusion import completed_crop

    rng = np.random.default_rng(seed)
    crops, masks, truth, on_top = [], [], [], []
    for name in sorted(held):
        deck = held[name]
        faces = sorted(k for k in deck if k != "back")
        for label in faces:
            for _ in range(per_card):
                other = faces[int(rng.integers(len(faces)))]
                while other == label:
                    other = faces[int(rng.integers(len(faces)))]
                crop, shown = covered_crop(rng, deck[label], deck[other])
                crops.append(crop)
                masks.append(shown)
                truth.append(label)
                on_top.append(other)
    for path in models:
        clf = CardClassifier(path)
        whole = clf.classify(crops)
        done = [completed_crop(c, m) for c, m in zip(crops, masks, strict=True)]
        filled = [d if d is not None else c for d, c in zip(done, crops, strict=True)]
        again, index_reads = clf.classify_with_index(filled, outlined=False)  # as identify reads them
        by_index: list[Reading | None] = list(index_reads) if index_reads else [None] * len(filled)
        # identify never names a covered card as the card lying on it (read as itself: it shows whole)
        rule = [_either(w, a, x) for w, a, x in zip(whole, again, by_index, strict=True)]
        rule = [replace(r, card=None) if r.card == other else r for r, other in zip(rule, on_top, strict=True)]
        ways = {"whole crop": whole, "completed crop": again, "identify's rule": rule}
        for way, reads in ways.items():
            named = [r.card for r in reads]
            right = sum(c == t for c, t in zip(named, truth, strict=True))
            wrong = sum(c is not None and c != t for c, t in zip(named, truth, strict=True))
            print(f"{path} covered, {way}: {len(truth)} crops, named right {100 * right / len(truth):.1f} %, "
                  f"confidently wrong {100 * wrong / len(truth):.2f} % ({wrong}), unsure {100 * (len(truth) - right - wrong) / len(truth):.1f} %",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
