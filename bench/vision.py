"""Benchmark the table vision pipeline (a benchmark, not a test); prints its figures.

1. Per-frame time of ``TableWatcher.process`` on 1280×720 frames with 8 cards on the table, on ONE
   core (this process pinned to one CPU, OpenCV and onnxruntime single-threaded): a sequence in
   which hands reach in and cards are exchanged, so the figure includes the frames that analyse
   and classify, plus the worst case of all 8 zones read in one frame.
2. Card-at-rest → event latency at 15 fps, from the synthetic night's ground truth.
3. Peak resident memory of the pipeline alone: ``loo-table replay`` run as a child process on a
   recording (ru_maxrss of the child: Python, numpy, OpenCV, onnxruntime, model, watcher).
4. A seeded synthetic night (default 200 deals): every played card must be reported once, in the
   right zone; a card accepted as the wrong card is a failure (a misread must come out unsure).
   Each deal is a fresh table (cloth or wood, light or dark, new camera pose), calibrated from
   its ArUco markers exactly as ``loo-table calibrate`` would.
5. With ``--real FOLDER``: real photographs as the table. Each VOC-labelled photo is one settled
   frame of a zone covering the photo, at the scale its cards show; the watcher (the same finder
   and reader as ``loo-table identify``) reports what it would tell the referee, scored by rank.

    python bench/vision.py                   # everything, 200 deals
    python bench/vision.py --deals 10        # a quick run
    python bench/vision.py --jobs 2          # the night on two processes (same result)

Targets (issue 4): median ≤ 30 ms/frame, latency ≤ 500 ms, memory ≤ 300 MB, night: every card
once, zero wrong cards accepted.
"""

# The quickest options (`make bench QUICK=1`, tests/pi/test_bench.py): every part runs, the figures mean little.
# quick: --deals 1 --frames 20
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402


@dataclass
class FrameT:
    image: np.ndarray
    timestamp: float
    index: int = 0
    lores: Any = None


def one_core() -> str:
    import cv2

    cv2.setNumThreads(1)
    try:
        cpu = sorted(os.sched_getaffinity(0))[0]
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    except (AttributeError, OSError):
        return "not pinned (no sched_setaffinity)"


def detector(path: str | None) -> Any:
    """The card detector the watcher's finder uses (None: the contour cues alone), as `run` loads it."""
    if path is None:
        return None
    from vision.detector import CardDetector

    return CardDetector(path, threads=1)


def classifier(model: Path | None, prototypes: Path | None = None) -> Any:
    from vision.classifier import CardClassifier

    return CardClassifier(model or ROOT / "models" / "card_classifier.onnx", threads=1,
                          providers=["CPUExecutionProvider"], prototypes=prototypes)


# -- 1. per-frame time --------------------------------------------------------------------------
#: Frames at the start of the timing that are not timed: a second at 15 fps, the watcher learning the table.
WARM_UP_FRAMES = 15


def frame_times(model: Path | None, frames: int, seed: int, detector_path: str | None = None) -> dict[str, Any]:
    from vision.events import TableWatcher
    from vision.synthetic import FACES, HandPose, PlacedCard, SyntheticTable

    table = SyntheticTable(seed=seed, seats=6)
    rng = np.random.default_rng(seed)
    deck = list(FACES)
    rng.shuffle(deck)
    zones = [z for z in table.layout.zones]
    cards = {z.name: PlacedCard(deck.pop(), *z.center, float(rng.uniform(-20, 20))) for z in zones}
    watcher = TableWatcher(table.layout, table.calibration, classifier(model), detector=detector(detector_path))
    times: list[float] = []
    cpu_times: list[float] = []
    for i in range(frames):
        phase = i % 30  # every 2 s at 15 fps a hand exchanges the card of one zone
        hand = None
        zone = zones[(i // 30) % len(zones)]
        if 4 <= phase < 12:
            if phase == 8:
                cards[zone.name] = PlacedCard(deck.pop() if deck else "back", *zone.center, float(rng.uniform(-20, 20)))
            cx, cy = zone.center
            d = abs(phase - 8) * 60
            hand = HandPose(cx + d, cy + 40, 30, height=30)
        img = table.render(list(cards.values()), hand=hand, frame_index=i)
        t0, c0 = time.perf_counter(), time.thread_time()
        watcher.process(FrameT(img, i / 15.0, i))
        times.append(time.perf_counter() - t0)
        cpu_times.append(time.thread_time() - c0)  # CPU time: honest on a machine shared with other jobs
    # worst case: a fresh watcher's first full read of all 8 zones in one frame
    still = table.render(list(cards.values()), frame_index=frames + 1)
    worst, worst_cpu = [], []
    w = TableWatcher(table.layout, table.calibration, watcher.classifier, stable_s=0.0, detector=watcher.detector)
    for _ in range(15):
        w.reset()
        w.process(FrameT(still, 0.0))
        t0, c0 = time.perf_counter(), time.thread_time()
        w.process(FrameT(still, 0.1))
        worst.append(time.perf_counter() - t0)
        worst_cpu.append(time.thread_time() - c0)
    ms = np.array(times[WARM_UP_FRAMES:]) * 1000  # skip the first second (the watcher learns the table)
    cpu = np.array(cpu_times[WARM_UP_FRAMES:]) * 1000
    return {"frames": len(ms), "median_ms": float(np.median(ms)), "p95_ms": float(np.percentile(ms, 95)),
            "mean_ms": float(ms.mean()), "max_ms": float(ms.max()),
            "cpu_median_ms": float(np.median(cpu)), "cpu_p95_ms": float(np.percentile(cpu, 95)),
            "all_8_zones_read_ms": float(np.median(worst) * 1000),
            "all_8_zones_read_cpu_ms": float(np.median(worst_cpu) * 1000),
            "load_average": os.getloadavg()[0],
            "analyses": int(watcher.stats["analyses"]), "crops_classified": int(watcher.stats["crops"])}


# -- 5. real photographs as table frames ---------------------------------------------------------
def real_photo_frames(folder: Path, model: Path | None, detector_path: str | None, limit: int | None = None) -> dict[str, Any]:
    """Each labelled photo of ``folder`` as the live table sees a settled frame: one zone over the
    whole photo, a calibration at the scale its clear cards show (their outlines recovered from
    the label boxes, as the detector's recipe recovers them), and the photo fed as still frames
    until the watcher commits. Events carry no position, so a photo is scored by ranks: a placed
    card whose rank a label still wants is right, any other placed card is wrong; unsure events
    count as asked; what is left of the labels is missed. ``obstructed`` counts photos the zone
    would not commit (something it took for a hand)."""
    from collections import Counter

    import cv2

    from models.real_scenes import boxes_meet, outline_in_box
    from vision.events import TableWatcher
    from vision.geometry import CARD_MM, Calibration, TableLayout, Zone
    from vision.voc import labelled_photos, rank_of, read_labels

    clf = classifier(model)
    det = detector(detector_path)
    tot = Counter()  # type: Counter[str]
    for photo, xml in labelled_photos(folder)[:limit]:
        image = cv2.imread(str(photo))
        if image is None:
            continue
        labels = read_labels(xml, (image.shape[1], image.shape[0]))
        boxes = [lab.box for lab in labels]
        lab_img = cv2.cvtColor(cv2.GaussianBlur(image, (3, 3), 0), cv2.COLOR_BGR2LAB)
        longs = [float(np.linalg.norm(q[3] - q[0])) for i, b in enumerate(boxes)
                 if not any(boxes_meet(b, o) for j, o in enumerate(boxes) if j != i)
                 for q in [outline_in_box(b, lab_img)]]
        longs = longs or [max(b[2] - b[0], b[3] - b[1]) for b in boxes]
        px_per_mm = float(np.median(longs)) / CARD_MM[1]
        h, w = image.shape[:2]
        size_mm = (w / px_per_mm, h / px_per_mm)
        cal = Calibration(np.diag([px_per_mm, px_per_mm, 1.0]), (w, h), size_mm, method="labels")
        layout = TableLayout(size_mm[0], size_mm[1], (Zone("table", 0.0, 0.0, size_mm[0], size_mm[1]),))
        watcher = TableWatcher(layout, cal, clf, stable_s=0.3, margin_mm=5.0, detector=det)
        events = []
        for k in range(4):
            events += watcher.process(FrameT(image, 0.15 * k, k))
        want = Counter(lab.rank for lab in labels)
        tot["photos"] += 1
        tot["cards"] += len(labels)
        tot["obstructed"] += int(watcher.stats["obstructed"] > 0 and not events)
        for e in events:
            if e.kind == "card_placed" and e.card:
                if want[rank_of(e.card)] > 0:
                    want[rank_of(e.card)] -= 1
                    tot["right"] += 1
                else:
                    tot["wrong"] += 1
            elif e.kind == "card_unsure":
                tot["unsure"] += 1
    tot["missed"] = max(0, tot["cards"] - tot["right"] - tot["wrong"] - tot["unsure"])
    return dict(tot)


# -- 3. memory ----------------------------------------------------------------------------------
def pipeline_memory(model: Path | None, seed: int) -> dict[str, Any]:
    from vision.sources.replay import write_recording
    from vision.synthetic import night

    with tempfile.TemporaryDirectory(prefix="loo-vision-") as tmp:
        frames, stamps = [], []
        for nf in night(seed=seed, deals=1, seats=6, tricks=1):
            frames.append(nf.image)
            stamps.append(nf.truth.timestamp)
            if len(frames) >= 90:
                break
        write_recording(tmp, frames, stamps, ext=".jpg")
        argv = ["replay", tmp, "--seats", "6", "--quiet"] + (["--model", str(model)] if model else [])
        # the child reports its own peak (VmHWM restarts at exec; ru_maxrss of a forked child
        # would count this process's pages from before the exec)
        code = ("import sys; from table.cli import main; rc = main(sys.argv[1:]); "
                "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]; "
                "print('VMHWM', hwm, file=sys.stderr); raise SystemExit(rc)")
        proc = subprocess.run([sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        if proc.returncode != 0:
            raise SystemExit(f"bench/vision.py: replay failed: {proc.stderr.strip()[-300:]}")
        events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        hwm_kb = int(next(line.split()[1] for line in proc.stderr.splitlines() if line.startswith("VMHWM")))
    return {"peak_rss_mb": hwm_kb / 1024.0, "replay_frames": len(frames), "replay_events": len(events)}


# -- 4. the night ---------------------------------------------------------------------------------
@dataclass
class DealScore:
    deal: int
    expected: int = 0
    reported_once: int = 0
    duplicates: int = 0
    unsure: int = 0
    missed: int = 0
    wrong_accepted: int = 0
    conflicts: int = 0
    spurious_removals: int = 0
    face_down_ok: int = 0
    face_down_expected: int = 0
    latencies: list[float] = field(default_factory=list)
    frames: int = 0
    process_s: float = 0.0
    calibration_error: str = ""
    wrong: list[str] = field(default_factory=list)
    missed_cards: list[str] = field(default_factory=list)


def score_deal(deal: int, frames: list[Any], events: list[Any]) -> DealScore:
    """Compare one deal's events with its ground truth."""
    s = DealScore(deal)
    rests = [(f.truth.timestamp, z, c) for f in frames for z, c in f.truth.came_to_rest]
    placed = [e for e in events if e.kind in ("card_placed", "conflict")]
    truth_pairs = {(z, c) for _, z, c in rests if c != "back"}
    for e in placed:
        if e.kind == "conflict":
            s.conflicts += 1
        elif (str(e.zone), e.card) not in truth_pairs:
            s.wrong_accepted += 1
            s.wrong.append(f"deal {deal} t={e.timestamp:.2f} {e.zone} read {e.card}")
    # a card reported gone while it still lies there would make the referee lose a play
    resting_at = {round(f.truth.timestamp, 6): f.truth.resting for f in frames}
    for e in events:
        if e.kind == "card_removed" and e.card is not None:
            if e.card in resting_at.get(round(e.timestamp, 6), {}).get(str(e.zone), []):
                s.spurious_removals += 1
                s.wrong.append(f"deal {deal} t={e.timestamp:.2f} {e.zone} said {e.card} left while it lay there")
    for ts, zone, card in rests:
        if card == "back":
            s.face_down_expected += 1
            if any(e.kind == "card_face_down" and str(e.zone) == zone for e in events):
                s.face_down_ok += 1
            continue
        s.expected += 1
        hits = [e for e in placed if e.kind == "card_placed" and str(e.zone) == zone and e.card == card]
        if len(hits) == 1:
            s.reported_once += 1
            s.latencies.append(hits[0].timestamp - ts)
        elif len(hits) > 1:
            s.duplicates += 1
        elif any(e.kind == "card_unsure" and str(e.zone) == zone and e.timestamp >= ts for e in events):
            s.unsure += 1
            s.missed_cards.append(f"deal {deal} {zone} {card}: unsure")
        else:
            s.missed += 1
            s.missed_cards.append(f"deal {deal} {zone} {card}: missed")
    return s


def run_deals(args: tuple[int, int, int, int, str | None, float, str | None, str | None]) -> list[DealScore]:
    seed, start, count, seats, model, stable_s, prototypes, detector_path = args
    one_core()
    from vision.calibration import CalibrationError, from_markers
    from vision.events import TableWatcher
    from vision.synthetic import night

    clf = classifier(Path(model) if model else None, Path(prototypes) if prototypes else None)
    det = detector(detector_path)
    scores: list[Any] = []
    frames: list[Any] = []
    events: list[Any] = []
    watcher = None
    current = None
    spent = 0.0
    error = ""

    def finish() -> None:
        if current is not None:
            sc = score_deal(current, frames, events)
            sc.frames = len(frames)
            sc.process_s = spent
            sc.calibration_error = error
            scores.append(sc)

    for nf in night(seed=seed, deals=count, seats=seats, start_deal=start):
        t = nf.truth
        if t.new_deal:
            finish()
            frames, events, spent, error = [], [], 0.0, ""
            current = t.deal
            try:
                cal = from_markers(nf.image, (nf.table.layout.width_mm, nf.table.layout.height_mm))
            except CalibrationError as exc:
                error = str(exc)
                cal = nf.table.calibration
            watcher = TableWatcher(nf.table.layout, cal, clf, stable_s=stable_s, detector=det)
        image = nf.image
        nf.image = np.empty((0, 0, 3), np.uint8)  # keep memory flat: the truth is all the scorer needs
        frames.append(nf)
        assert watcher is not None
        t0 = time.perf_counter()
        out = watcher.process(FrameT(image, t.timestamp, t.frame_index))
        spent += time.perf_counter() - t0
        events.extend(out)
    finish()
    return scores


def night_score(seed: int, deals: int, seats: int, jobs: int, model: Path | None, stable_s: float,
                prototypes: Path | None = None, detector_path: str | None = None) -> dict[str, Any]:
    chunks = []
    per = max(1, -(-deals // max(1, jobs * 4)))
    start = 0
    while start < deals:
        n = min(per, deals - start)
        chunks.append((seed, start, n, seats, str(model) if model else None, stable_s,
                       str(prototypes) if prototypes else None, detector_path))
        start += n
    scores: list[DealScore] = []
    t0 = time.time()
    if jobs <= 1:
        for c in chunks:
            scores += run_deals(c)
            print(f"  night: {len(scores)}/{deals} deals ({time.time() - t0:.0f} s)", file=sys.stderr)
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for got in pool.map(run_deals, chunks):
                scores += got
                print(f"  night: {len(scores)}/{deals} deals ({time.time() - t0:.0f} s)", file=sys.stderr)
    lat = np.array([x for s in scores for x in s.latencies]) * 1000
    tot = {k: sum(getattr(s, k) for s in scores) for k in
           ("expected", "reported_once", "duplicates", "unsure", "missed", "wrong_accepted", "conflicts",
            "spurious_removals",
            "face_down_ok", "face_down_expected", "frames")}
    tot["deals"] = len(scores)
    tot["calibration_failures"] = sum(1 for s in scores if s.calibration_error)
    tot["latency_ms_median"] = float(np.median(lat)) if len(lat) else None
    tot["latency_ms_p95"] = float(np.percentile(lat, 95)) if len(lat) else None
    tot["latency_ms_max"] = float(lat.max()) if len(lat) else None
    frames = max(1, tot["frames"])
    tot["process_ms_mean"] = 1000 * sum(s.process_s for s in scores) / frames
    tot["wrong_examples"] = [w for s in scores for w in s.wrong][:10]
    tot["not_reported_examples"] = [m for s in scores for m in s.missed_cards][:10]
    tot["wall_s"] = time.time() - t0
    return tot


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=200, help="deals in the synthetic night (default 200)")
    parser.add_argument("--seats", type=int, default=5, help="players in the night (default 5)")
    parser.add_argument("--seed", type=int, default=20261122, help="seed of the night (default 20261122)")
    parser.add_argument("--jobs", type=int, default=1, help="processes for the night (default 1)")
    parser.add_argument("--frames", type=int, default=300, help="frames for the per-frame timing (default 300)")
    parser.add_argument("--stable-s", type=float, default=0.3, help="watcher stable_s (default 0.3)")
    parser.add_argument("--model", type=Path, help="ONNX model (default: models/card_classifier.onnx)")
    parser.add_argument("--detector", type=Path, default=ROOT / "models" / "card_detector.onnx",
                        help="ONNX card detector the watcher's finder uses (default: the shipped one)")
    parser.add_argument("--no-detector", action="store_true", help="the finder's contour cues alone")
    parser.add_argument("--real", type=Path, action="append", default=[], metavar="FOLDER",
                        help="also run the watcher on each VOC-labelled photo of FOLDER as a settled table frame "
                             "(repeatable)")
    parser.add_argument("--real-limit", type=int, default=None, help="only the first N photos of each --real folder")
    parser.add_argument("--prototypes", type=Path,
                        help="enrolled-deck prototypes for the night (default: none, the network alone); "
                             "e.g. vision/assets/decks/heruka-2color/prototypes.npz")
    parser.add_argument("--skip", action="append", default=[], choices=("frames", "memory", "night"),
                        help="leave out a part (repeatable)")
    parser.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if "frames" not in args.skip and args.frames <= WARM_UP_FRAMES:
        parser.error(f"--frames must be over {WARM_UP_FRAMES}: the first {WARM_UP_FRAMES} (a second) are the watcher "
                     "learning the table, and are not timed")
    if args.deals < 1:
        parser.error("--deals must be at least 1")
    if args.prototypes is not None and not args.prototypes.is_file():
        parser.error(f"--prototypes: {args.prototypes} does not exist")

    det_path = None if args.no_detector else str(args.detector)
    out: dict[str, Any] = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
                                      f"{platform.release()}, Python {platform.python_version()}"}
    print(f"machine: {out['machine']}")
    if args.prototypes is not None:
        out["prototypes"] = str(args.prototypes)
        print(f"enrolled deck (night only): {args.prototypes}")
    if "frames" not in args.skip:
        pin = one_core()
        r = frame_times(args.model, args.frames, args.seed, det_path)
        out["per_frame"] = r
        print(f"per-frame (1280x720, 8 cards, one core, {pin}, load average {r['load_average']:.1f}): "
              f"median {r['median_ms']:.2f} ms, p95 {r['p95_ms']:.2f} ms, max {r['max_ms']:.2f} ms wall; "
              f"CPU median {r['cpu_median_ms']:.2f} ms, p95 {r['cpu_p95_ms']:.2f} ms over {r['frames']} frames "
              f"(target median <= 30 ms)")
        print(f"worst case, all 8 zones looked at and read in one frame: {r['all_8_zones_read_ms']:.2f} ms wall, "
              f"{r['all_8_zones_read_cpu_ms']:.2f} ms CPU")
    if "memory" not in args.skip:
        m = pipeline_memory(args.model, args.seed)
        out["memory"] = m
        print(f"memory: peak RSS of `loo-table replay` (whole pipeline) {m['peak_rss_mb']:.0f} MB "
              f"(target <= 300 MB)")
    if "night" not in args.skip:
        n = night_score(args.seed, args.deals, args.seats, args.jobs, args.model, args.stable_s, args.prototypes,
                        det_path)
        out["night"] = n
        print(f"night: {n['deals']} deals, {n['seats'] if 'seats' in n else args.seats} seats, {n['frames']} frames "
              f"at 15 fps; played cards {n['expected']}: reported once {n['reported_once']}, unsure "
              f"(asked a person) {n['unsure']}, missed {n['missed']}, duplicated {n['duplicates']}; "
              f"WRONG cards accepted {n['wrong_accepted']}; conflicts {n['conflicts']}; cards reported gone while "
              f"still there {n['spurious_removals']}; stock face-down "
              f"{n['face_down_ok']}/{n['face_down_expected']}; calibration failures {n['calibration_failures']}")
        if n["latency_ms_median"] is not None:
            print(f"latency card at rest -> event at 15 fps: median {n['latency_ms_median']:.0f} ms, "
                  f"p95 {n['latency_ms_p95']:.0f} ms, max {n['latency_ms_max']:.0f} ms (target <= 500 ms)")
        for w in n["wrong_examples"]:
            print(f"  wrong: {w}")
        for m in n["not_reported_examples"]:
            print(f"  not reported: {m}")
    for folder in args.real:
        r = real_photo_frames(folder, args.model, det_path, args.real_limit)
        out.setdefault("real_photos", {})[str(folder)] = r
        cards = max(1, r.get("cards", 0))
        print(f"real photos as table frames, {folder}: photos {r.get('photos', 0)}, cards {r.get('cards', 0)}, "
              f"right {r.get('right', 0)} ({100 * r.get('right', 0) / cards:.1f} %), wrong {r.get('wrong', 0)}, "
              f"unsure {r.get('unsure', 0)}, missed {r.get('missed', 0)}, photos obstructed {r.get('obstructed', 0)}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
