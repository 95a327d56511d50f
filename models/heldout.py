"""Score model files on the held-out rendered decks' test crops, as the recipe does.

    python -m models.heldout MODEL.onnx [MODEL.onnx ...] [--covered N]

The recipe (``models.train``) writes these figures into ``metrics.json`` for the network it
trains; a model made afterwards (the fine-tuned reader, ``models/finetune.py``) is scored here on
the same crops (the recipe's config, seed + 3) with the open-set rule in its own sidecar, so the
two can be compared row for row. One line per model: top-1, confidently wrong, unsure, not-a-card
crops accepted, and top-1 per deck. Needs the deck artwork (``models/README.md``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.heldout", description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", type=Path, metavar="MODEL", help="ONNX card models with their .json sidecars")
    ap.add_argument("--workers", type=int, default=2, help="synthesis processes (default 2)")
    ap.add_argument("--covered", type=int, default=0, metavar="N",
                    help="score crops of covered cards instead: each held-out card N times with another card of its "
                         "deck lying on most of it (models/synth.py), not-a-card crops as before")
    args = ap.parse_args(argv)
    for path in args.models:
        if not path.is_file() or not path.with_suffix(".json").is_file():
            print(f"error: {path}: model or its .json sidecar missing", file=sys.stderr)
            return 2
    from models.train import Config, evaluate, held_out_plans, load_artwork, synthesise

    cfg = Config()
    _train, held = load_artwork(cfg)
    _calib, test, neg, _ = held_out_plans(cfg, held)
    if args.covered > 0:  # a stream of its own: not the finetune's covered calibration crops (seed + 8)
        import numpy as np

        from models.train import _plan

        test = _plan(np.random.default_rng(cfg.seed + 10), 0, held, cfg, negatives=0, per_card=args.covered, covered=1.0)
    x, y = synthesise(held, test + neg, cfg.seed + 3, args.workers, "covered test crops" if args.covered else "test crops")
    groups = [nm or "procedural-back" if li >= 0 else "negative" for li, nm, _ in test + neg]
    for path in args.models:
        meta = json.loads(path.with_suffix(".json").read_text())
        ev = evaluate(path, x, y, groups, float(meta["threshold"]), float(meta["margin"]))
        a = ev["all"]
        decks = ", ".join(f"{k} {100 * v['top1']:.2f} %" for k, v in ev["decks"].items())
        print(f"{path}: {a['n']} crops, top-1 {100 * a['top1']:.2f} %, confidently wrong {100 * a['confidently_wrong']:.3f} %, "
              f"unsure {100 * a['unsure']:.1f} %, not-a-card accepted {100 * ev.get('not_a_card', {}).get('accepted_as_card', 0):.1f} % "
              f"(threshold {meta['threshold']}); {decks}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
