"""`loo-table calibrate`: map the camera image to the table from four ArUco markers (or four
corners you mark), check the result, and write the calibration file.

The frame comes from ``--image`` or, without it, from the camera the config names. The file
(``loo-table-calibration/1`` JSON: homography + zone layout) goes to ``--output``, else to the
config's ``camera.calibration``, else to ``calibration.json`` beside the config.

From a camera it also locks the picture: automatic exposure, white balance and (on a Camera
Module 3 or a USB camera with a focus motor) continuous autofocus run for ``--settle`` seconds,
then the values they reached are stored in the file as ``camera_controls`` (libcamera controls for
a Pi camera, OpenCV's V4L2 properties for a USB camera), and `loo-table run` starts the camera
with them. Left
automatic, the picture drifts with the room's light and the players' arms, while the card finder
compares grey levels and the reader tells red from black by colour. The file lives beside the
ledger where the service user may write it; the config (root's) only names it. The checks printed:
marker reprojection error (pixels) and how tall a card looks in each zone (pixels). Exit status 1
when the markers are not found; 0 with warnings printed when the checks are poor (use ``--strict``
to fail on warnings).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from table.cli import CommandError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

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
    parser.add_argument("--settle", type=float, default=3.0, metavar="S",
                        help="seconds of automatic exposure, white balance and focus before they are "
                             "locked (default 3)")
    parser.add_argument("--no-lock", action="store_true",
                        help="leave exposure, white balance and focus automatic (store no camera controls)")


def _frame_from_camera(config: TableConfig, *, settle_s: float, lock: bool) -> tuple[NDArray[np.uint8], dict[str, object]]:
    """A frame from the configured camera, and the controls that hold its picture ({} when the
    camera has none to lock, or ``lock`` is off): libcamera's for a Pi camera, OpenCV's V4L2
    properties (``CAP_PROP_*``) for a USB camera."""
    from vision.sources import SourceError, open_source
    from vision.sources.opencv import AUTOMATIC
    from vision.sources.picamera2 import AF_CONTINUOUS, locked_controls

    cam = config.camera
    spec: dict[str, object] = {"source": cam.source, "device": cam.device, "width": cam.width, "height": cam.height, "fps": cam.fps}
    if cam.source == "picamera2":  # everything automatic while it settles (unsupported ones are skipped)
        spec["controls"] = {"AeEnable": True, "AwbEnable": True, "AfMode": AF_CONTINUOUS}
    elif cam.source == "opencv":
        spec["controls"] = dict(AUTOMATIC)
    frames = max(5, round(settle_s * cam.fps))
    try:
        with open_source(spec) as source:
            for _ in range(frames):  # let exposure, white balance and focus settle
                frame = source.read()
            metadata = getattr(source, "metadata", None) or {}
            usb = source.lock_controls() if lock and hasattr(source, "lock_controls") else {}
    except SourceError as exc:
        raise CommandError(str(exc)) from None
    if not lock:
        return frame.image, {}
    return frame.image, (usb or locked_controls(metadata))


def _describe_controls(controls: Mapping[str, object]) -> str:
    def num(key: str) -> float:
        value = controls[key]
        if not isinstance(value, int | float):
            raise TypeError(f"camera control {key}: {value!r} is not a number")
        return value

    parts = []
    if "CAP_PROP_EXPOSURE" in controls:
        parts.append(f"exposure {num('CAP_PROP_EXPOSURE'):g}")
    if "CAP_PROP_WB_TEMPERATURE" in controls:
        parts.append(f"white balance {num('CAP_PROP_WB_TEMPERATURE'):g} K")
    if "CAP_PROP_FOCUS" in controls:
        parts.append(f"focus {num('CAP_PROP_FOCUS'):g}")
    if "ExposureTime" in controls:
        parts.append(f"exposure {num('ExposureTime') / 1000:.1f} ms, gain {num('AnalogueGain'):.2f}")
    gains = controls.get("ColourGains")
    if "ColourGains" in controls and isinstance(gains, list | tuple):
        parts.append("colour gains {:.2f}/{:.2f}".format(*gains))
    if "LensPosition" in controls:
        parts.append(f"focus {num('LensPosition'):.2f} dioptres")
    return ", ".join(parts)


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
    controls: dict[str, object] = {}
    if args.image is not None:
        from vision.image_file import UnreadableImage, read_image

        try:
            image = read_image(args.image)
        except UnreadableImage as exc:
            raise CommandError(str(exc)) from None
    else:
        assert config is not None  # loaded above whenever no --image is given
        image, controls = _frame_from_camera(config, settle_s=args.settle, lock=not args.no_lock)
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
    report["camera_controls"] = controls
    if not args.dry_run:
        try:
            cal.save(out, calibration, layout, camera_controls=controls)
        except OSError as exc:
            raise CommandError(f"{out}: cannot write ({exc.strerror})") from None
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        print(f"method: {calibration.method}; markers found: {found or '-'}")
        print(f"reprojection error: {result.residual_px:.3f} px (want ≤ {cal.MAX_RESIDUAL_PX} px)")
        sizes = ", ".join(f"{k} {v:.0f}" for k, v in result.card_px.items())
        print(f"card height in px: {sizes} (want ≥ {cal.MIN_CARD_PX:.0f})")
        print("camera controls: " + (f"locked ({_describe_controls(controls)})" if controls else
                                     "automatic (calibrated from a photo, --no-lock, or a camera "
                                     "that reports none)"))
        for warning in result.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        print("written: " + (str(out) if not args.dry_run else "nothing (--dry-run)"))
    if args.strict and result.warnings:
        raise CommandError(f"{len(result.warnings)} check(s) failed: {result.warnings[0]}")
    return 0
