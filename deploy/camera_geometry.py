#!/usr/bin/env python3
"""How high to mount the camera over a table, and how many pixels a card gets there.

A pinhole camera looking straight down with field of view F sees a strip 2·h·tan(F/2) wide at
height h. The camera must see the play area plus a margin in BOTH directions, so

    h = max((width + 2·margin) / (2·tan(HFOV/2)), (depth + 2·margin) / (2·tan(VFOV/2)))

and at that height one image pixel covers ground/resolution millimetres. Standard library only, so it
runs on a bare Pi before anything is installed. docs/hardware.md pastes its output.
"""

from __future__ import annotations

import argparse
import math
import sys

# Horizontal and vertical field of view in degrees (Raspberry Pi camera documentation; the C920's
# figures are Logitech's 78° diagonal split for 16:9).
LENSES: dict[str, tuple[str, float, float]] = {
    "cm3": ("Camera Module 3", 66.0, 41.0),
    "cm3-wide": ("Camera Module 3 Wide", 102.0, 67.0),
    "cm2": ("Camera Module 2", 62.2, 48.8),
    "c920": ("Logitech C920 (USB)", 70.42, 43.3),
}
CARD_MM = (63.0, 88.0)  # a standard poker-size card
CROP_PX = (64, 88)  # the classifier's canonical crop (vision.classifier.CANONICAL_SIZE)


def height_mm(width: float, depth: float, margin: float, hfov: float, vfov: float) -> float:
    need_w = (width + 2 * margin) / (2 * math.tan(math.radians(hfov) / 2))
    need_d = (depth + 2 * margin) / (2 * math.tan(math.radians(vfov) / 2))
    return max(need_w, need_d)


def report(width: float, depth: float, margin: float, lens: str, resolution: tuple[int, int]) -> str:
    name, hfov, vfov = LENSES[lens]
    h = height_mm(width, depth, margin, hfov, vfov)
    ground_w = 2 * h * math.tan(math.radians(hfov) / 2)
    ground_d = 2 * h * math.tan(math.radians(vfov) / 2)
    px_per_mm = min(resolution[0] / ground_w, resolution[1] / ground_d)
    card = (CARD_MM[0] * px_per_mm, CARD_MM[1] * px_per_mm)
    limit = "width" if (width + 2 * margin) / math.tan(math.radians(hfov) / 2) >= (
        depth + 2 * margin
    ) / math.tan(math.radians(vfov) / 2) else "depth"
    verdict = (
        "enough for the card reader"
        if card[0] >= CROP_PX[0] and card[1] >= CROP_PX[1]
        else f"LESS than the reader's {CROP_PX[0]}x{CROP_PX[1]} crop: raise the resolution or use a narrower lens"
    )
    return "\n".join([
        f"{name}: {hfov:g} x {vfov:g} degrees; table {width:g} x {depth:g} mm plus {margin:g} mm margin",
        f"mount the lens {h:.0f} mm above the table (the {limit} limits it)",
        f"it then sees {ground_w:.0f} x {ground_d:.0f} mm; at {resolution[0]}x{resolution[1]} "
        f"that is {px_per_mm:.2f} px/mm",
        f"a {CARD_MM[0]:g} x {CARD_MM[1]:g} mm card is {card[0]:.0f} x {card[1]:.0f} px: {verdict}",
    ])


def _size(text: str) -> tuple[float, float]:
    try:
        a, b = text.lower().split("x")
        return float(a), float(b)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxDEPTH, got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", type=_size, default=(900.0, 900.0), metavar="WxD",
                        help="play area in mm, seen from the camera (default: 900x900)")
    parser.add_argument("--margin", type=float, default=50.0, metavar="MM",
                        help="extra border seen around the play area (default: 50)")
    parser.add_argument("--lens", choices=sorted(LENSES), default="cm3", help="camera (default: cm3)")
    parser.add_argument("--resolution", type=_size, default=(1280, 720), metavar="WxH",
                        help="capture size, as [camera] width/height in the config (default: 1280x720)")
    args = parser.parse_args(argv)
    res = (int(args.resolution[0]), int(args.resolution[1]))
    print(report(args.table[0], args.table[1], args.margin, args.lens, res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
