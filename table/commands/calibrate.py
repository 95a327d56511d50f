"""`loo-table calibrate`: map the camera image to the table from four ArUco markers (or four
corners you mark), check the result, and write the calibration file.

The frame comes from ``--image`` or, without it, from the camera the config names. The file
(``loo-table-calibration/1`` JSON: homography + zone layout) goes to ``--output``, else to the
config's ``camera.calibration``, else to ``calibration.json`` beside the config. The checks printed:
marker reprojection error (pixels) and how tall a card looks in each zone (pixels). Exit status 1
when the markers are not found; 0 with warnings printed when the checks are poor (use ``--strict``
to fail on warnings).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from table.cli import CommandError

if TYPE_CHECKING:
    import numpy as np

    from table.config import TableConfig


def _point(text: str) -> tuple[float, float]:
    try:
        x, y = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected X,Y in pixels, got {text!r}") from None
    return (x, y)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--image", type=Path, help="calibrate from this photo instead of the camera")
    parser.add_argument("--config", type=Path, help="config file (camera, players, calibration path)")
    parser.add_argument("--corners", type=_point, nargs=4, metavar="X,Y",
                        help="the four table-frame corners in pixels (top left, top right, bottom right, "
                             "bottom left) when there are no markers")
    parser.add_argument("--table-mm", type=float, nargs=2, default=(800.0, 800.0), metavar=("W", "H"),
                        help="marker centre to marker centre, millimetres (default 800 800)")
    parser.add_argument("--marker-mm", type=float, default=50.0, help="printed marker side (default 50)")
    parser.add_argument("--seats", type=int, help="seats for the default layout (default: players in the config)")
    parser.add_argument("--output", type=Path, help="where to write the calibration file")
    parser.add_argument("--dry-run", action="store_true", help="check only; write nothing")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a check gives a warning")
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")


def _frame_from_camera(config: TableConfig) -> np.ndarray:
    from vision.sources import SourceError, open_source

    cam = config.camera
    spec = {"source": cam.source, "device": cam.device, "width": cam.width, "height": cam.height, "fps": cam.fps}
    try:
        with open_source(spec) as source:
            for _ in range(5):  # let auto-exposure settle
                frame = source.read()
            return frame.image
    except SourceError as exc:
        raise CommandError(str(exc)) from None


def run(args: argparse.Namespace) -> int:

    from vision import calibration as cal
    from vision.geometry import Calibration, GeometryError, TableLayout

    config = None
    if args.config is not None or args.image is None or args.seats is None:
        from table.config import ConfigError, load_config

        try:
            config = load_config(args.config)
        except ConfigError as exc:
            raise CommandError(str(exc)) from None
    if args.image is not None:
        from vision.image_file import UnreadableImage, read_image

        try:
            image = read_image(args.image)
        except UnreadableImage as exc:
            raise CommandError(str(exc)) from None
    else:
        assert config is not None  # loaded above whenever no --image is given
        image = _frame_from_camera(config)
    seats = args.seats or (len(config.game.players) if config is not None else 4)
    h, w = image.shape[:2]
    try:
        layout = TableLayout.default(seats, width_mm=args.table_mm[0], height_mm=args.table_mm[1])
        if args.corners:
            calibration = Calibration.from_corners(args.corners, tuple(args.table_mm), (w, h))
            found: list[int] = []
        else:
            calibration = cal.from_markers(image, tuple(args.table_mm), marker_mm=args.marker_mm)
            found = sorted(cal.detect_markers(image))
    except (cal.CalibrationError, GeometryError) as exc:
        raise CommandError(str(exc)) from None
    result = cal.check(calibration, layout, markers_found=found)
    out = args.output
    if out is None and config is not None and config.camera.calibration:
        out = Path(config.camera.calibration)
    if out is None:
        base = Path(args.config).parent if args.config else Path.cwd()
        out = base / "calibration.json"
    report = result.to_dict()
    report["method"] = calibration.method
    report["written"] = None if args.dry_run else str(out)
    if not args.dry_run:
        try:
            cal.save(out, calibration, layout)
        except OSError as exc:
            raise CommandError(f"{out}: cannot write ({exc.strerror})") from None
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(f"method: {calibration.method}; markers found: {found or '-'}")
        print(f"reprojection error: {result.residual_px:.3f} px (want ≤ {cal.MAX_RESIDUAL_PX} px)")
        sizes = ", ".join(f"{k} {v:.0f}" for k, v in result.card_px.items())
        print(f"card height in px: {sizes} (want ≥ {cal.MIN_CARD_PX:.0f})")
        for warning in result.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        print("written: " + (str(out) if not args.dry_run else "nothing (--dry-run)"))
    if args.strict and result.warnings:
        raise CommandError(f"{len(result.warnings)} check(s) failed: {result.warnings[0]}")
    return 0
