"""Evaluate a card model on the held-out deck designs, with and without deck enrolment.

    python -m models.evaluate [--model models/card_classifier.onnx] [--enroll-per-card 3]

Uses exactly the calibration and test crops of the training recipe (same seeds, so the cached
crops are reused). Enrolment is simulated per held-out deck: ``--enroll-per-card`` further
camera-like crops of each card of that deck (another seed: the user's own photos) become the
prototypes; the prototype weight is chosen on the calibration crops and every figure is reported on
the test crops. Writes ``models/enroll_metrics.json`` (quoted by the model card).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from models.train import (
    HERE,
    Config,
    _plan,
    cfg_cache,
    choose_open_set,
    held_out_plans,
    load_artwork,
    synthesise,
)


def _rates(probs: np.ndarray, y: np.ndarray, threshold: float | np.ndarray, margin: float | np.ndarray) -> dict[str, float]:
    """Top-1, confidently wrong and unsure over the cards in ``probs``; the rule may differ per crop."""
    order = np.sort(probs, axis=1)
    acc = (order[:, -1] >= threshold) & (order[:, -1] - order[:, -2] >= margin)
    pred = probs.argmax(1)
    pos = y >= 0
    return {
        "top1": round(float((pred[pos] == y[pos]).mean()), 5),
        "confidently_wrong": round(float((acc[pos] & (pred[pos] != y[pos])).mean()), 5),
        "unsure": round(float((~acc[pos]).mean()), 5),
    }


class HeldOutCrops(NamedTuple):
    """The recipe's calibration and test crops of the held-out decks, with each crop's deck name."""

    cfg: Config
    held: dict[str, dict[str, np.ndarray]]
    rng: np.random.Generator
    xc: np.ndarray
    yc: np.ndarray
    gc: np.ndarray
    xt: np.ndarray
    yt: np.ndarray
    gt: np.ndarray


def held_out_crops(metrics_path: Path, workers: int) -> HeldOutCrops:
    """Rebuild (from the cache when it is there) the crops the run in ``metrics_path`` was scored on."""
    metrics = json.loads(metrics_path.read_text())
    cfg = Config(**{k: v for k, v in metrics["config"].items() if k in Config.__dataclass_fields__})
    cfg.workers = workers
    cfg.procedural_decks = 0  # only the held-out decks are needed here
    _, held = load_artwork(cfg)
    calib_plan, test_plan, neg_plan, rng = held_out_plans(cfg, held)
    xc, yc = synthesise(held, calib_plan + neg_plan, cfg.seed + 2, cfg.workers, "calibration crops", cache=cfg_cache(cfg))
    xt, yt = synthesise(held, test_plan + neg_plan, cfg.seed + 3, cfg.workers, "test crops", cache=cfg_cache(cfg))
    gc = np.array([nm if li >= 0 else "negative" for li, nm, _ in calib_plan + neg_plan])
    gt = np.array([nm if li >= 0 else "negative" for li, nm, _ in test_plan + neg_plan])
    return HeldOutCrops(cfg, held, rng, xc, yc, gc, xt, yt, gt)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m models.evaluate", description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=HERE / "card_classifier.onnx")
    parser.add_argument("--enroll-per-card", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "enroll_metrics.json")
    args = parser.parse_args(argv)

    from vision.classifier import NEVER, CardClassifier, softmax
    from vision.enroll import Prototypes

    cfg, held, rng, xc, yc, gc, xt, yt, gt = held_out_crops(args.model.parent / "metrics.json", args.workers)

    clf = CardClassifier(args.model, threads=1)
    thr, mar = clf.threshold, clf.margin

    def run(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        lo, em = [], []
        for i in range(0, len(x), 256):
            a, b = clf._run(list(x[i : i + 256]), ["logits", "embedding"])
            lo.append(a)
            em.append(b)
        return softmax(np.concatenate(lo)), np.concatenate(em)

    pc, ec = run(xc)
    pt, et = run(xt)
    result: dict[str, Any] = {"model": args.model.name, "enroll_views_per_card": args.enroll_per_card,
                              "threshold": thr, "margin": mar, "decks": {}}
    # enrol each held-out deck on its own (a user enrols one deck), then choose ONE prototype
    # weight and open-set rule for all enrolled decks on the pooled calibration crops
    protos_by_deck: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for deck in sorted(held):
        enrol_plan = _plan(rng, 0, {deck: held[deck]}, cfg, negatives=0, per_card=args.enroll_per_card)
        xe, ye = synthesise({deck: held[deck]}, enrol_plan, cfg.seed + 99, cfg.workers, f"enrol {deck}",
                            cache=cfg_cache(cfg))
        protos_by_deck[deck] = (ye, run(xe)[1])

    def enrolled_probs(w: float, p: np.ndarray, e: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Probabilities with each deck's prototypes, and which crops matched an enrolled view: 1 where
        a view of the crop's best card vouches for it, -1 where views of other cards only, 0 where none."""
        out, matched = p.copy(), np.zeros(len(p), np.int8)
        for deck, (ye, ee) in protos_by_deck.items():
            m = groups == deck
            protos = Prototypes.build(clf.labels, [(clf.labels[int(k)], v) for k, v in zip(ye, ee, strict=True)], weight=w)
            sim = protos.similarities(e[m])
            out[m], near = protos.reweigh(e[m], p[m], similarities=sim)
            matched[m] = np.where(near, np.where(protos.vouched(e[m], out[m], similarities=sim), 1, -1), 0)
        return out, matched

    def enrolled_rates(probs: np.ndarray, matched: np.ndarray, y: np.ndarray, t: float, m: float) -> dict[str, float]:
        """As CardClassifier.classify judges them: vouched crops by enrolment's rule, crops near only other
        cards' views by none (never named), the rest by the network's."""
        return _rates(probs, y, np.where(matched > 0, t, np.where(matched < 0, NEVER, thr)), np.where(matched > 0, m, mar))

    keep_c = np.isin(gc, list(held))
    best: tuple[float, float, float, float] | None = None  # (unsure, weight, threshold, margin)
    for w in (2.0, 5.0, 10.0, 20.0):
        probs, matched = (a[keep_c] for a in enrolled_probs(w, pc, ec, gc))
        t, m = choose_open_set(probs, yc[keep_c], cfg.max_wrong)
        unsure = enrolled_rates(probs, matched, yc[keep_c], t, m)["unsure"]
        if best is None or unsure < best[0]:
            best = (unsure, w, t, m)
    assert best is not None
    _, w, t, m = best
    result["prototypes"] = {"weight": w, "threshold": t, "margin": m,
                            "chosen_on": "pooled calibration crops of the held-out decks, each deck enrolled on its own"}
    after_all, matched_all = enrolled_probs(w, pt, et, gt)
    for deck in sorted(held):
        mt = gt == deck
        before = _rates(pt[mt], yt[mt], thr, mar)
        after = enrolled_rates(after_all[mt], matched_all[mt], yt[mt], t, m)
        result["decks"][deck] = {"n": int(mt.sum()), "without_enrolment": before, "with_enrolment": after}
        print(f"{deck}: without enrolment top-1 {before['top1'] * 100:.2f}% (unsure {before['unsure'] * 100:.1f}%, "
              f"confidently wrong {before['confidently_wrong'] * 100:.2f}%); with {args.enroll_per_card} views per card "
              f"top-1 {after['top1'] * 100:.2f}% (unsure {after['unsure'] * 100:.1f}%, confidently wrong "
              f"{after['confidently_wrong'] * 100:.2f}%)", file=sys.stderr)
    print(f"prototype weight {w}, threshold {t}, margin {m}", file=sys.stderr)
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
