"""Benchmark the night's deck learning (a benchmark, not a test); prints its figures.

The full-table demo (`table.demo_table`, the same night as `loo-table demo --headless`) with a worn
deck the camera was not enrolled on (``--no-enrolled-deck --worn 12``), once per seed: the cards
the camera asked about in the first and the second half of the night, and the cards the referee
accepted without asking that were not the card played. Target: second half ≤ a third of the first,
nothing accepted wrong.

    python bench/deck_learning.py                    # seeds 1-5, 40 hands, learning on
    python bench/deck_learning.py --no-learning      # the same nights, the camera never learns
    python bench/deck_learning.py --show-deck        # the host shows the deck before the first deal
    python bench/deck_learning.py --similarities 11,12

``--similarities`` plays nights without learning and prints how close (cosine) the crops of one
card come to each other and to other cards' crops: where `NIGHT_MATCH_FLOOR` comes from (use
seeds other than the ones measured).
"""

# The quickest options (`make bench QUICK=1`, tests/pi/test_bench.py): every part runs, the figures mean little.
# quick: --seeds 1 --hands 1 --worn 1
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def night(seed: int, hands: int, worn: int, learn: bool, grab: Any = None, show_deck: bool = False,
          detector: bool = False) -> Any:
    from table.demo_table import TableDemo
    from table.runtime import load_classifier, load_detector

    clf = load_classifier(None)
    det = load_detector(None) if detector else None
    with tempfile.TemporaryDirectory(prefix="loo-bench-") as tmp:
        demo = TableDemo(db=Path(tmp) / "ledger.db", players=["Ann", "Bea", "Cal", "Dan"], seed=seed,
                         classifier=clf, revoke_rate=0.15, worn=worn, learn_deck=learn, detector=det)
        if grab is not None:
            submit = demo.camera_loop.submit

            def tap(ev: Any) -> None:
                grab(demo, ev)
                submit(ev)

            demo.camera_loop.submit = tap
        try:
            if show_deck:
                demo.show_deck()
            return demo.play(hands)
        finally:
            demo.close()


def similarities(seeds: list[int], hands: int, worn: int) -> None:
    import numpy as np

    rows: list[tuple[int, str, bool, Any]] = []

    def grab(demo: Any, ev: Any) -> None:
        placed = demo.camera.cards.get(str(ev.zone))
        if getattr(ev, "view", None) is not None and placed is not None:
            rows.append((demo.seed, placed.card, placed.card in demo.summary.worn_cards, ev.view))

    for seed in seeds:
        night(seed, hands, worn, False, grab)
    genuine: dict[bool, list[float]] = {True: [], False: []}
    impostor: dict[bool, list[float]] = {True: [], False: []}
    for i, (seed, card, is_worn, v) in enumerate(rows):
        before = [r for r in rows[:i] if r[0] == seed]
        same = [float(np.dot(v, r[3])) for r in before if r[1] == card]
        other = [float(np.dot(v, r[3])) for r in before if r[1] != card]
        if same:
            genuine[is_worn].append(max(same))
        if other:
            impostor[is_worn].append(max(other))
    for is_worn in (True, False):
        g, o = np.array(genuine[is_worn]), np.array(impostor[is_worn])
        print(f"{'stained' if is_worn else 'clean'} cards: nearest earlier crop of the same card "
              f"min {g.min():.3f}, 5th percentile {np.percentile(g, 5):.3f}, median {np.median(g):.3f}; "
              f"of another card median {np.median(o):.3f}, 95th percentile {np.percentile(o, 95):.3f}, "
              f"max {o.max():.3f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1,2,3,4,5", help="comma-separated demo seeds (default 1-5)")
    ap.add_argument("--hands", type=int, default=40, help="deals per night at most (default 40)")
    ap.add_argument("--worn", type=int, default=12, help="stained cards in the deck (default 12)")
    ap.add_argument("--no-learning", action="store_true", help="the camera never learns (the baseline)")
    ap.add_argument("--detector", action="store_true",
                    help="the camera's finder with the learned card detector (as `loo-table demo --detector`)")
    ap.add_argument("--show-deck", action="store_true",
                    help="the host shows the camera the deck before the first deal (\"show me the deck\")")
    ap.add_argument("--similarities", metavar="SEEDS", help="print crop similarities for these seeds instead")
    ap.add_argument("--json", action="store_true", help="one JSON line per seed")
    args = ap.parse_args()
    if args.similarities:
        similarities([int(s) for s in args.similarities.split(",")], args.hands, args.worn)
        return 0
    total = {"first": 0, "second": 0, "wrong": 0}
    for seed in (int(s) for s in args.seeds.split(",")):
        s = night(seed, args.hands, args.worn, not args.no_learning, show_deck=args.show_deck,
                  detector=args.detector)
        per = s.cards_unsure_by_deal
        half = (len(per) + 1) // 2
        first, second = sum(per[:half]), sum(per[half:])
        total["first"] += first
        total["second"] += second
        total["wrong"] += s.cards_accepted_wrong
        if args.json:
            print(json.dumps({"seed": seed, "deals": s.deals, "unsure_first_half": first,
                              "unsure_second_half": second, "cards_accepted_wrong": s.cards_accepted_wrong,
                              "cards_unsure_by_deal": per, "deck_learned": s.deck_learned}), flush=True)
        else:
            print(f"seed {seed}: {s.deals} deals, {s.cards_seen} cards; unsure {s.cards_unsure} "
                  f"(first half {first}, second half {second}); accepted wrong {s.cards_accepted_wrong}; "
                  f"learned {s.deck_learned or 'nothing'}"
                  + (f"; deck shown first: {s.deck_shown}" if s.deck_shown else ""), flush=True)
    ok = total["second"] * 3 <= total["first"] and total["wrong"] == 0
    print(f"all seeds: unsure first half {total['first']}, second half {total['second']}, "
          f"accepted wrong {total['wrong']} ({'target met' if ok else 'target NOT met'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
