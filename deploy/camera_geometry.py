#!/usr/bin/env python3
"""How high to mount the camera over a table, and how many pixels a card gets there.

A pinhole camera looking straight down with field of view F sees a strip 2·h·tan(F/2) wide at
height h. The camera must see the play area plus a margin in BOTH directions, so

    h = max((width + 2·margin) / (2·tan(HFOV/2)), (depth + 2·margin) / (2·tan(VFOV/2)))

and at that height one image pixel covers ground/resolution millimetres. F is the lens's field of
view over the part of the sensor that the sensor mode reads, trimmed to the capture's aspect ratio:
the mode is chosen as the picamera2 source chooses it (vision/sources/sensor_modes.py, loaded from
this checkout by path). Standard library only, so it runs on a bare Pi before anything is installed.
docs/hardware.md pastes its output.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

# Horizontal and vertical field of view in degrees over the whole sensor (Raspberry Pi camera
# documentation; the C920's figures are Logitech's 78° diagonal split for 16:9), and the sensor's
# modes (None: a USB camera, whose driver crops and scales as it likes).
LENSES: dict[str, tuple[str, float, float, str | None]] = {
    "cm3": ("Camera Module 3", 66.0, 41.0, "IMX708_MODES"),
    "cm3-wide": ("Camera Module 3 Wide", 102.0, 67.0, "IMX708_MODES"),
    "cm2": ("Camera Module 2", 62.2, 48.8, "IMX219_MODES"),
    "c920": ("Logitech C920 (USB)", 70.42, 43.3, None),
}
CARD_MM = (63.0, 88.0)  # a standard poker-size card
CROP_PX = (64, 88)  # the classifier's canonical crop (vision.classifier.CANONICAL_SIZE)


def sensor_modes() -> ModuleType:
    """vision/sources/sensor_modes.py from this checkout, without importing the vision package."""
    path = Path(__file__).resolve().parents[1] / "vision" / "sources" / "sensor_modes.py"
    spec = importlib.util.spec_from_file_location("loo_table_sensor_modes", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def height_mm(width: float, depth: float, margin: float, hfov: float, vfov: float) -> float:
    need_w = (width + 2 * margin) / (2 * math.tan(math.radians(hfov) / 2))
    need_d = (depth + 2 * margin) / (2 * math.tan(math.radians(vfov) / 2))
    return max(need_w, need_d)


def view(lens: str, resolution: tuple[int, int], fps: float, forced: tuple[int, int] | None = None
         ) -> tuple[float, float, str]:
    """(horizontal, vertical field of view in degrees, the mode's description) for a capture of
    ``resolution`` at ``fps``: the mode the camera source picks (or ``forced``), its crop of the
    sensor, then the capture's aspect ratio cut from it."""
    _, hfov, vfov, table = LENSES[lens]
    if table is None:
        return hfov, vfov, "the camera's own"
    modes = getattr(sensor_modes(), table)
    if forced is not None:
        matching = [m for m in modes if tuple(m["size"]) == forced]
        if not matching:
            raise SystemExit(f"camera_geometry.py: no {forced[0]}x{forced[1]} mode; the modes are "
                             + ", ".join("{}x{}".format(*m["size"]) for m in modes))
        mode = matching[0]
    else:
        mode = sensor_modes().full_view_mode(modes, resolution, fps)
    full_w = max(m["crop_limits"][0] + m["crop_limits"][2] for m in modes)
    full_h = max(m["crop_limits"][1] + m["crop_limits"][3] for m in modes)
    _, _, crop_w, crop_h = mode["crop_limits"]
    tan_h = math.tan(math.radians(hfov) / 2) * crop_w / full_w
    tan_v = math.tan(math.radians(vfov) / 2) * crop_h / full_h
    out_aspect, mode_aspect = resolution[0] / resolution[1], crop_w / crop_h
    if out_aspect > mode_aspect:  # a wider picture than the mode: the ISP cuts rows off
        tan_v *= mode_aspect / out_aspect
    else:
        tan_h *= out_aspect / mode_aspect
    share = crop_w * crop_h / (full_w * full_h)
    what = "the whole sensor" if share > 0.999 else f"{math.sqrt(share):.0%} of the sensor's width and height"
    label = "{}x{} ({})".format(*mode["size"], what)
    return math.degrees(2 * math.atan(tan_h)), math.degrees(2 * math.atan(tan_v)), label


def _card_line(px_per_mm: float) -> str:
    card = (CARD_MM[0] * px_per_mm, CARD_MM[1] * px_per_mm)
    verdict = (
        "enough for the card reader"
        if card[0] >= CROP_PX[0] and card[1] >= CROP_PX[1]
        else f"LESS than the reader's {CROP_PX[0]}x{CROP_PX[1]} crop: raise the resolution or use a narrower lens"
    )
    return f"a {CARD_MM[0]:g} x {CARD_MM[1]:g} mm card is {card[0]:.0f} x {card[1]:.0f} px: {verdict}"


def report(width: float, depth: float, margin: float, lens: str, resolution: tuple[int, int],
           fps: float = 15.0, mode: tuple[int, int] | None = None) -> str:
    name = LENSES[lens][0]
    hfov, vfov, label = view(lens, resolution, fps, mode)
    h = height_mm(width, depth, margin, hfov, vfov)
    ground_w = 2 * h * math.tan(math.radians(hfov) / 2)
    ground_d = 2 * h * math.tan(math.radians(vfov) / 2)
    px_per_mm = min(resolution[0] / ground_w, resolution[1] / ground_d)
    limit = "width" if (width + 2 * margin) / math.tan(math.radians(hfov) / 2) >= (
        depth + 2 * margin
    ) / math.tan(math.radians(vfov) / 2) else "depth"
    return "\n".join([
        f"{name}: {LENSES[lens][1]:g} x {LENSES[lens][2]:g} degrees; table {width:g} x {depth:g} mm plus {margin:g} mm margin",
        f"sensor mode {label}, scaled to {resolution[0]}x{resolution[1]}: {hfov:.1f} x {vfov:.1f} degrees",
        f"mount the lens {h:.0f} mm above the table (the {limit} limits it)",
        f"it then sees {ground_w:.0f} x {ground_d:.0f} mm; at {resolution[0]}x{resolution[1]} "
        f"that is {px_per_mm:.2f} px/mm",
        _card_line(px_per_mm),
    ])


def heights_table(heights: list[float], lens: str, resolution: tuple[int, int], fps: float = 15.0,
                  mode: tuple[int, int] | None = None) -> str:
    """What the camera sees at each mount height (one row each)."""
    hfov, vfov, label = view(lens, resolution, fps, mode)
    rows = [f"{LENSES[lens][0]}, sensor mode {label}, {resolution[0]}x{resolution[1]}:",
            "height mm | sees mm     | px/mm | card px"]
    for h in heights:
        ground_w = 2 * h * math.tan(math.radians(hfov) / 2)
        ground_d = 2 * h * math.tan(math.radians(vfov) / 2)
        px = min(resolution[0] / ground_w, resolution[1] / ground_d)
        rows.append(f"{h:9.0f} | {ground_w:4.0f} x {ground_d:4.0f} | {px:5.2f} | "
                    f"{CARD_MM[0] * px:.0f} x {CARD_MM[1] * px:.0f}")
    return "\n".join(rows)


def _size(text: str) -> tuple[float, float]:
    try:
        a, b = text.lower().split("x")
        return float(a), float(b)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxDEPTH, got {text!r}") from None


def _heights(text: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected heights in mm such as 1000,1200,1400, got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", type=_size, default=(900.0, 900.0), metavar="WxD",
                        help="play area in mm, seen from the camera (default: 900x900)")
    parser.add_argument("--margin", type=float, default=50.0, metavar="MM",
                        help="extra border seen around the play area (default: 50)")
    parser.add_argument("--lens", choices=sorted(LENSES), default="cm3", help="camera (default: cm3)")
    parser.add_argument("--resolution", type=_size, default=(1920, 1080), metavar="WxH",
                        help="capture size, as [camera] width/height in the config (default: 1920x1080, "
                             "the shipped config's)")
    parser.add_argument("--fps", type=float, default=15.0, help="[camera] fps (default: 15)")
    parser.add_argument("--sensor-mode", type=_size, metavar="WxH",
                        help="this sensor mode instead of the one the camera source picks (to compare)")
    parser.add_argument("--heights", type=_heights, metavar="MM,MM,...",
                        help="print what the camera sees at each of these mount heights instead")
    args = parser.parse_args(argv)
    res = (int(args.resolution[0]), int(args.resolution[1]))
    mode = (int(args.sensor_mode[0]), int(args.sensor_mode[1])) if args.sensor_mode else None
    if args.heights:
        print(heights_table(args.heights, args.lens, res, args.fps, mode))
    else:
        print(report(args.table[0], args.table[1], args.margin, args.lens, res, args.fps, mode))
    return 0


if __name__ == "__main__":
    sys.exit(main())
