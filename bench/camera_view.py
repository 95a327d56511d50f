"""Camera view benchmark: what the host's camera view costs the table at one picture a second.

    .venv/bin/python bench/camera_view.py [--frames 450] [--pictures 30] [--size 1920x1080] [--json]

The table: a synthetic camera at ``--size`` (the config's default 1920x1080) over six seats with a
card in each zone and the turn-up, read by the real watcher and the real classifier (one thread)
through the real `CameraLoop`, as `loo-table run` reads the camera.

1. One picture: `CameraView.picture()` made again and again (shrink to 960 px, the zones and
   labels drawn, JPEG): the median CPU time of one, and what one a second is of one core.
2. The camera thread while a host watches: `CameraView.offer` with the zones' readings, per frame.
3. End to end: the same ``--frames`` frames (15 a second of table time) through the camera loop
   twice, once with nobody watching and once with a picture made every 15 frames (one a second);
   the extra CPU time per second of table time, as a share of one core (target: under 5 %).

Figures depend on the machine (printed with them) and on what else it runs.
"""

# The quickest options (`make bench QUICK=1`, tests/pi/test_bench.py): every part runs, the figures mean little.
# quick: --frames 30 --pictures 3 --size 960x540
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

os.environ.setdefault("OMP_NUM_THREADS", "1")

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from bench._machine import machine  # noqa: E402
from table.camera_view import CameraView  # noqa: E402
from table.runtime import CameraLoop, load_classifier  # noqa: E402
from vision.events import Reader, TableWatcher  # noqa: E402
from vision.sources import Frame  # noqa: E402
from vision.synthetic import PlacedCard, SyntheticTable  # noqa: E402

FPS = 15
CARDS = ["7H", "QS", "10D", "2C", "AH", "9S", "KD"]


class Clock:
    """Table time: the frames' own clock (15 a second), so a run is the same however fast."""

    def __init__(self) -> None:
        self.t = 0.0  # the latest frame's time
        self.ahead = 0.0  # moved on by the benchmark, so each timed picture is a new one

    def __call__(self) -> float:
        return self.t + self.ahead


class Frames:
    """Pre-rendered frames played in a loop (rendering is the simulator's cost, not the table's)."""

    def __init__(self, images: list[np.ndarray], clock: Clock) -> None:
        self.images = images
        self.clock = clock
        self.n = 0

    def read(self) -> Frame:
        img = self.images[self.n % len(self.images)]
        self.n += 1
        self.clock.t = self.n / FPS
        return Frame(img, self.clock.t, self.n)

    def close(self) -> None:
        pass


def scene(size: tuple[int, int]) -> tuple[SyntheticTable, list[np.ndarray]]:
    table = SyntheticTable(seed=7, seats=6, size=size)
    zones = [z for z in table.layout.zones if z.name != "stock"]
    cards = [PlacedCard(c, *z.center, 8.0 * i) for i, (c, z) in enumerate(zip(CARDS, zones, strict=False))]
    return table, [table.render(cards, frame_index=i) for i in range(FPS)]


def rig(table: SyntheticTable, images: list[np.ndarray], classifier: Reader) -> tuple[CameraLoop, CameraView, Clock]:
    clock = Clock()
    # a picture asked for each second is made afresh each time (the view reuses one for up to 1 s)
    view = CameraView(names=lambda: ["Ann", "Bea", "Cal", "Dot", "Eve", "Fay"], clock=clock, interval_s=0.9)
    watcher = TableWatcher(table.layout, table.calibration, classifier, stable_s=0.3)
    loop = CameraLoop(Frames(images, clock), watcher, lambda item: None, view=view)
    for _ in range(FPS):  # the cards settle and are read once
        loop.step()
    return loop, view, clock


def run_loop(loop: CameraLoop, view: CameraView, clock: Clock, frames: int, *, watch: bool) -> float:
    """CPU seconds (this process) for ``frames`` frames, a picture every FPS frames when ``watch``."""
    start = time.process_time()
    for i in range(frames):
        loop.step()
        if watch and i % FPS == FPS - 1:
            view.picture()
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=450, help="frames per end-to-end run (default 450: 30 s)")
    ap.add_argument("--pictures", type=int, default=30, help="pictures timed one by one (default 30)")
    ap.add_argument("--size", default="1920x1080", help="camera frame size WxH (default 1920x1080)")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = ap.parse_args(argv)
    try:
        w, h = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        ap.error(f"--size {args.size!r}: write WIDTHxHEIGHT, e.g. 1920x1080")
    if args.frames < FPS or args.pictures < 1:
        ap.error(f"--frames must be at least {FPS} and --pictures at least 1")
    cv2.setNumThreads(1)
    classifier = load_classifier(None, threads=1)
    table, images = scene((w, h))

    loop, view, clock = rig(table, images, classifier)
    view.picture()  # a host is watching: the readings travel with each frame
    times, sizes = [], []
    for _ in range(args.pictures):
        loop.step()
        clock.ahead += 1.0
        t0 = time.thread_time()
        pic = view.picture()
        times.append(time.thread_time() - t0)
        assert pic is not None
        sizes.append(len(pic.jpeg))
    made = view.rendered
    t0 = time.thread_time()
    for _ in range(200):
        view.offer(images[0], loop.watcher)
    offer_s = (time.thread_time() - t0) / 200

    loop, view, clock = rig(table, images, classifier)
    off = run_loop(loop, view, clock, args.frames, watch=False)
    loop, view, clock = rig(table, images, classifier)
    on = run_loop(loop, view, clock, args.frames, watch=True)
    seconds = args.frames / FPS
    picture_ms = statistics.median(times) * 1000
    figures = {
        "machine": machine(),
        "frame": f"{w}x{h}",
        "picture_ms_median": round(picture_ms, 2),
        "picture_kb_median": round(statistics.median(sizes) / 1024, 1),
        "picture_share_of_core_at_1hz_pct": round(picture_ms / 10, 2),
        "offer_us_per_frame_watched": round(offer_s * 1e6, 1),
        "offer_share_of_core_at_15fps_pct": round(offer_s * FPS * 100, 3),
        "loop_cpu_s_per_s_nobody_watching": round(off / seconds, 4),
        "loop_cpu_s_per_s_watched_1hz": round(on / seconds, 4),
        "extra_share_of_core_pct": round((on - off) / seconds * 100, 2),
        "pictures_timed": made - 1,
        "pictures_made_end_to_end": view.rendered,
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"camera view at one picture a second ({figures['machine']}; frames {w}x{h}, {FPS} fps of table time)")
    print(f"  one picture (shrink, zones, labels, JPEG): median {picture_ms:.1f} ms CPU, "
          f"{figures['picture_kb_median']} KB; at 1 Hz {figures['picture_share_of_core_at_1hz_pct']} % of one core")
    print(f"  camera thread per frame while watched: {figures['offer_us_per_frame_watched']} us "
          f"({figures['offer_share_of_core_at_15fps_pct']} % of one core at {FPS} fps)")
    print(f"  the camera loop, {args.frames} frames: {figures['loop_cpu_s_per_s_nobody_watching']} CPU s per s "
          f"nobody watching, {figures['loop_cpu_s_per_s_watched_1hz']} watched at 1 Hz: "
          f"{figures['extra_share_of_core_pct']} % of one core more (target < 5 %)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
