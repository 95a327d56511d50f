"""`loo-table mat`: the printable table mat (SVG at real size): the four calibration markers and
every zone, labelled with whose place it is (`vision.mat`).

The zones come from the calibration file (``--calibration``, what `loo-table calibrate` wrote)
or the default layout for ``--seats`` on a ``--table-mm`` table (what `calibrate` would make).
The Admin page serves the same mat for the table as it is now (``/mat.svg``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from table.cli import CommandError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--calibration", metavar="FILE", help="the zones of this calibration file "
                        "(from `loo-table calibrate`; default: the default layout for --seats)")
    parser.add_argument("--seats", type=int, default=4, metavar="N", help="seats without --calibration (2-8, default 4)")
    parser.add_argument("--table-mm", type=float, nargs=2, default=(800.0, 800.0), metavar=("W", "H"),
                        help="marker centre to marker centre without --calibration (default 800 800)")
    parser.add_argument("--players", metavar="NAMES", help="label the seats with these names, comma separated")
    parser.add_argument("--marker-mm", type=float, default=50.0, metavar="MM", help="marker size (default 50)")
    parser.add_argument("--output", "-o", metavar="PATH", help="write the SVG here (default: standard output)")


def run(args: argparse.Namespace) -> int:
    from vision.calibration import CalibrationError, load
    from vision.geometry import GeometryError, TableLayout
    from vision.mat import mat_svg

    if not 10 <= args.marker_mm <= 200:
        raise CommandError("--marker-mm must be between 10 and 200")
    try:
        if args.calibration:
            layout = load(args.calibration)[1]
        else:
            w, h = args.table_mm
            if not (200 <= w <= 3000 and 200 <= h <= 3000):
                raise CommandError("--table-mm: each side between 200 and 3000 mm")
            layout = TableLayout.default(args.seats, width_mm=w, height_mm=h)
    except (CalibrationError, GeometryError) as exc:
        raise CommandError(str(exc)) from None
    names = [n.strip() for n in (args.players or "").split(",") if n.strip()]
    labels = {"turn_up": "turn-up (trumps)", "stock": "stock"}
    for i, zone in enumerate(layout.seats):
        labels[zone.name] = names[i] if i < len(names) else f"seat {i + 1}"
    svg = mat_svg(layout, labels, marker_mm=args.marker_mm)
    if not args.output:
        sys.stdout.write(svg)
        return 0
    try:
        Path(args.output).write_text(svg, encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    print(f"wrote {args.output}: {layout.width_mm:g} x {layout.height_mm:g} mm between the marker centres, "
          f"{len(layout.zones)} zones; print at 100 %", file=sys.stderr)
    return 0
