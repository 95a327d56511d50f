"""Print the model card's figure tables (Markdown) from the recipe's metrics.json and enroll_metrics.json.

    python -m models.report [--dir models/]

Why: every accuracy figure in models/README.md must come from a command in the repository; this
one turns the two JSON files the recipe and ``models.evaluate`` write into the tables the card
quotes, so the card is pasted, never retyped.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _pct(x: float, digits: int = 2) -> str:
    return f"{x * 100:.{digits}f} %"


def held_out_table(metrics: dict[str, Any]) -> list[str]:
    """One row per held-out deck and variant, then the totals."""
    lines = ["| deck | variant | crops | top-1 | confidently wrong | unsure |", "|---|---|---|---|---|---|"]
    for variant, res in metrics["results"].items():
        for deck, row in sorted(res["decks"].items()):
            lines.append(f"| {deck} | {variant} | {row['n']} | {_pct(row['top1'])} | "
                         f"{_pct(row['confidently_wrong'])} | {_pct(row['unsure'], 1)} |")
        a = res["all"]
        lines.append(f"| **all held-out** | {variant} | {a['n']} | **{_pct(a['top1'])}** | "
                     f"**{_pct(a['confidently_wrong'], 3)}** | {_pct(a['unsure'], 1)} |")
    return lines


def variant_lines(metrics: dict[str, Any]) -> list[str]:
    out = []
    for variant, res in metrics["results"].items():
        neg = res["not_a_card"]
        out.append(f"- {variant}: accuracy when sure {_pct(res['all']['accuracy_when_sure'])}; not-a-card crops "
                   f"(bare table, partial warps; {neg['n']}) accepted as a card: {_pct(neg['accepted_as_card'], 1)}; "
                   f"{res['onnx_bytes'] / 1e6:.2f} MB; {res['latency_ms_per_crop_1thread']} ms per crop "
                   "(one thread, flip-averaged, measured by the recipe)")
    shipped = metrics["results"][metrics["shipped"]]
    pairs = ", ".join(f"{c['true']}→{c['read']} ×{c['count']}" for c in shipped["confused"][:10])
    out.append("")
    out.append(f"Most confused pairs (true → read, top-1 over all test crops, shipped variant): {pairs}.")
    return out


def members_table(metrics: dict[str, Any]) -> list[str]:
    """An ensemble's members, each alone (its own run's figures, int8 where it has one)."""
    lines = ["| member (settings over the shared config) | parameters | training | top-1 alone | "
             "confidently wrong alone | unsure alone |", "|---|---|---|---|---|---|"]
    for m in metrics["members"]:
        alone = m["held_out"].get("int8") or m["held_out"]["fp32"]
        settings = " ".join(f"{k}={v}" for k, v in sorted(m["settings"].items())) or "(shared config)"
        lines.append(f"| {settings} | {m['parameters']:,} | {m['train_seconds'] / 60:.0f} min | {_pct(alone['top1'])} | "
                     f"{_pct(alone['confidently_wrong'], 3)} | {_pct(alone['unsure'], 1)} |")
    return lines


def enrolment_table(enrol: dict[str, Any]) -> list[str]:
    lines = ["| deck | top-1 without | unsure without | confidently wrong without | top-1 enrolled | "
             "unsure enrolled | confidently wrong enrolled |", "|---|---|---|---|---|---|---|"]
    for deck, row in sorted(enrol["decks"].items()):
        a, b = row["without_enrolment"], row["with_enrolment"]
        lines.append(f"| {deck} | {_pct(a['top1'])} | {_pct(a['unsure'], 1)} | {_pct(a['confidently_wrong'])} | "
                     f"{_pct(b['top1'])} | {_pct(b['unsure'], 1)} | {_pct(b['confidently_wrong'])} |")
    p = enrol["prototypes"]
    lines.append("")
    lines.append(f"Prototype weight {p['weight']}, threshold {p['threshold']}, margin {p['margin']}, "
                 f"{enrol['enroll_views_per_card']} views per card; chosen on {p['chosen_on']}.")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m models.report", description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=HERE, help="folder holding metrics.json (default: models/)")
    args = parser.parse_args(argv)
    try:
        metrics = json.loads((args.dir / "metrics.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"error: cannot read {args.dir / 'metrics.json'}: {exc}", file=sys.stderr)
        return 1
    print(f"Shipped: **{metrics['shipped']}**. Open-set rule: threshold **{metrics['threshold']}**, margin "
          f"**{metrics['margin']}**. {metrics['parameters']:,} parameters. Recipe {metrics['total_seconds'] / 60:.0f} min "
          f"(render, synthesis and training {metrics['train_seconds'] / 60:.0f} min) on {metrics['machine']}, device {metrics['device']}.")
    print()
    print("\n".join(held_out_table(metrics)))
    print()
    print("\n".join(variant_lines(metrics)))
    if metrics.get("members"):
        print()
        print("\n".join(members_table(metrics)))
    enrol_path = args.dir / "enroll_metrics.json"
    if enrol_path.is_file():
        print()
        print("\n".join(enrolment_table(json.loads(enrol_path.read_text(encoding="utf-8")))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
