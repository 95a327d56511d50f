"""`loo-table replay PATH`: run a recording through the vision pipeline; print events as JSON lines.

PATH is a folder of images (optionally with ``timestamps.json``) or a video file. The table
geometry comes from ``--calibration`` (a file written by ``loo-table calibrate``) or, failing
that, from the ArUco markers in the first frame with a layout: ``--layout FILE`` (a table layout
as JSON: ``width_mm``, ``height_mm``, ``zones``), else the ``layout.json`` lying beside a recorded
video or inside a recorded folder (as ``tests/data/recordings`` has), else the default layout for
``--seats``.
Each event is one JSON object per line on stdout::

    {"kind": "card_placed", "zone": "seat:2", "timestamp": 4.2, "frame": 63, "card": "9H", "confidence": 0.97}

A summary (frames, events, time per frame) goes to stderr so stdout stays machine-readable.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from table.cli import CommandError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", type=Path, help="a folder of frames or a video file")
    parser.add_argument("--calibration", type=Path, metavar="FILE",
                        help="calibration file from `loo-table calibrate` (default: find the markers in frame 0)")
    parser.add_argument("--layout", type=Path, metavar="FILE",
                        help="table layout JSON (default: layout.json beside the recording, else the default layout)")
    parser.add_argument("--seats", type=int, default=4, help="seats for the default layout (default 4)")
    parser.add_argument("--table-mm", type=float, nargs=2, default=(800.0, 800.0), metavar=("W", "H"),
                        help="marker centre to marker centre, millimetres (default 800 800)")
    parser.add_argument("--marker-mm", type=float, default=50.0, help="printed marker side (default 50)")
    parser.add_argument("--model", type=Path, help="ONNX card model (default: the shipped one)")
    parser.add_argument("--detector", type=Path, help="ONNX card detector (default: the shipped one)")
    parser.add_argument("--no-detector", action="store_true", help="find cards with the contour cues alone")
    parser.add_argument("--stable-s", type=float, default=0.3, help="seconds a card must lie still (default 0.3)")
    parser.add_argument("--fps", type=float, default=15.0, help="frame rate of a folder without timestamps.json")
    parser.add_argument("--realtime", action="store_true", help="replay at the recorded pace (default: as fast as possible)")
    parser.add_argument("--quiet", action="store_true", help="no summary on stderr")


def layout_file(args: argparse.Namespace) -> Path | None:
    """``--layout``, else the recording's own ``layout.json``: a recording made on another table
    than the default one gives no event read with the default zones."""
    if args.layout is not None:
        return Path(args.layout)
    beside = (args.path if args.path.is_dir() else args.path.parent) / "layout.json"
    return beside if beside.is_file() else None


def run(args: argparse.Namespace) -> int:
    from table.runtime import load_classifier, load_detector
    from vision.calibration import CalibrationError, from_markers, load
    from vision.classifier import ModelError
    from vision.events import TableWatcher
    from vision.geometry import GeometryError, TableLayout
    from vision.sources import SourceError
    from vision.sources.replay import ReplaySource

    try:
        classifier = load_classifier(args.model, threads=1)
        detector = None if args.no_detector else load_detector(args.detector, threads=1)
    except ModelError as exc:
        raise CommandError(str(exc)) from None
    source = ReplaySource(args.path, fps=args.fps, realtime=args.realtime)
    frames = events = 0
    spent = 0.0
    try:
        with source:
            watcher = None
            for frame in source:
                if watcher is None:
                    try:
                        if args.calibration:
                            calibration, layout = load(args.calibration)
                        else:
                            found = layout_file(args)
                            if found is not None:
                                try:
                                    layout = TableLayout.from_dict(json.loads(found.read_text()))
                                except (OSError, ValueError, GeometryError, KeyError, TypeError) as exc:
                                    raise CommandError(f"{found}: not a table layout ({exc})") from None
                                size = (layout.width_mm, layout.height_mm)
                            else:
                                size = (args.table_mm[0], args.table_mm[1])
                                layout = TableLayout.default(args.seats, width_mm=size[0], height_mm=size[1])
                            calibration = from_markers(frame.image, size, marker_mm=args.marker_mm)
                        watcher = TableWatcher(layout, calibration, classifier, stable_s=args.stable_s, detector=detector)
                    except (CalibrationError, GeometryError, ValueError) as exc:
                        raise CommandError(f"calibration: {exc}") from None
                t0 = time.perf_counter()
                out = watcher.process(frame)
                spent += time.perf_counter() - t0
                frames += 1
                for event in out:
                    record = event.to_dict()
                    record["frame"] = frame.index
                    sys.stdout.write(json.dumps(record) + "\n")
                    events += 1
                sys.stdout.flush()
    except SourceError as exc:
        raise CommandError(str(exc)) from None
    if frames == 0:
        raise CommandError(f"{args.path}: no frames")
    if not args.quiet:
        print(f"replay: {frames} frames, {events} events, {1000 * spent / frames:.2f} ms/frame mean",
              file=sys.stderr)
    return 0
