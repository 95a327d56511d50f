"""Train the card detector on a stream of fresh scenes, on a GPU where there is one.

``python -m models.detector`` synthesises a fixed set of scenes and trains on it for a few
epochs: right for a 2-core CPU, where the network, not the synthesis, is the slow part. On a
GPU the network is fast and synthesis is the limit, so this recipe runs the synthesis in worker
processes all the while and trains on each chunk of fresh scenes as it arrives (``--reuse``
passes over it), for ``--minutes``, with a learning rate that warms up and then follows a
cosine to zero by the deadline. Because it is bounded by time, not by steps, one run fits a
lease of a borrowed machine, and several networks (``--net``) learn from the same scenes at
once, for a fair comparison at no extra synthesis.

Where the deck artwork and the desktop backgrounds are not installed (a GPU machine), the
scenes' ingredients travel as one file: ``--pack FILE`` writes it here, ``--assets FILE``
reads it there.

Rendered decks over real surfaces still leave a gap to real photographs (a card's true paper,
its worn edges, a phone's tone curve). Packed with ``--real-per-batch N``, the pack also carries
the labelled ``--photos`` that are not held back, and training with it replaces a share
N/``--batch`` of every chunk's scenes with samples cut from them afresh
(:mod:`models.real_scenes`, as ``models.detector --real-per-batch`` does on the CPU). The
held-back photos never travel: they choose the threshold. (The shipped detector has none: see
``models/README.md``.)

The shipped detector, in three steps (the middle one on the GPU machine; ``--finish`` exports
the network, chooses its threshold on the photos held back from ``--photos`` and writes the
sidecar):

    python -m models.detector_stream --pack models/work/stream-assets.npz --photos PHOTOS/train
    python -m models.detector_stream --assets models/work/stream-assets.npz --device cuda --workers 15 \\
        --minutes 7 --chunk 128 --reuse 3 --net 16 --net 16+corners --net 24+corners --net 32 --out-dir OUT
    python -m models.detector_stream --finish OUT/detector-w32.pt --photos PHOTOS/train
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import platform
import sys
import time
from collections import deque
from collections.abc import Generator, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from models import detector
from models.real_scenes import RealPhoto


# ------------------------------------------------------------------------------------------------
# the scenes' ingredients, packed to travel
# ------------------------------------------------------------------------------------------------
def _encode(images: list[np.ndarray], ext: str, params: list[int]) -> tuple[np.ndarray, np.ndarray]:
    blobs = []
    for im in images:
        ok, buf = cv2.imencode(ext, im, params)
        if not ok:
            raise ValueError(f"cannot encode an image of shape {im.shape} as {ext}")
        blobs.append(buf.reshape(-1))
    return np.concatenate(blobs), np.array([len(b) for b in blobs], np.int64)


def _decode(data: np.ndarray, lengths: np.ndarray, flags: int) -> list[np.ndarray]:
    out, at = [], 0
    for n in lengths:
        im = cv2.imdecode(data[at : at + int(n)], flags)
        if im is None:
            raise ValueError("a packed image does not decode: the pack is damaged")
        out.append(im)
        at += int(n)
    return out


#: The longest side a packed labelled photo keeps: :func:`models.real_scenes.real_scene` scales a
#: photo to a long side near 512 (at most 1.25 times that), so more pixels would only weigh the pack.
REAL_LONG_SIDE = 1024
#: The JPEG quality of the packed labelled photos: they are phone photographs, noisy, and quality
#: 92 (the surfaces') would make the pack too heavy to travel beside the working tree (64 MiB);
#: 85 changes a pixel by 2.8 levels on average (bicycle-9a/train), less than the samples' own light and sensor changes.
REAL_JPEG_QUALITY = 85


def _fit(photo: RealPhoto, long_side: int = REAL_LONG_SIDE) -> RealPhoto:
    """``photo`` scaled down so that its long side is at most ``long_side``, its outlines and boxes with it."""
    h, w = photo.image.shape[:2]
    if max(h, w) <= long_side:
        return photo
    s = long_side / max(h, w)
    size = (max(1, round(w * s)), max(1, round(h * s)))
    sx, sy = size[0] / w, size[1] / h  # the rounded size's own scales, so labels stay on their cards
    image = cv2.resize(photo.image, size, interpolation=cv2.INTER_AREA)
    clear = [(q * np.array([sx, sy], np.float32)).astype(np.float32) for q in photo.clear]
    unclear = [(b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy) for b in photo.unclear]
    return RealPhoto(image, clear, unclear)


def pack_assets(path: Path, faces: list[np.ndarray], surfaces: list[np.ndarray],
                real: list[RealPhoto] | None = None) -> None:
    """Write the card faces (lossless PNG, alpha kept) and the surfaces (JPEG 92: they are
    photographs already) to one ``.npz``; with ``real``, the labelled photos too (JPEG
    :data:`REAL_JPEG_QUALITY`, long side at most :data:`REAL_LONG_SIDE`), with the clear cards'
    outlines and the unclear cards' boxes :func:`models.real_scenes.real_scene` cuts samples by
    (computed once here, from the full-size photo)."""
    fd, fl = _encode(faces, ".png", [cv2.IMWRITE_PNG_COMPRESSION, 9])
    sd, sl = _encode(surfaces, ".jpg", [cv2.IMWRITE_JPEG_QUALITY, 92])
    arrays: dict[str, Any] = {"faces": fd, "face_lengths": fl, "surfaces": sd, "surface_lengths": sl}
    if real:
        fitted = [_fit(p) for p in real]
        rd, rl = _encode([p.image for p in fitted], ".jpg", [cv2.IMWRITE_JPEG_QUALITY, REAL_JPEG_QUALITY])
        arrays |= {
            "real": rd, "real_lengths": rl,
            "real_clear": np.array([q for p in fitted for q in p.clear], np.float32).reshape(-1, 4, 2),
            "real_clear_counts": np.array([len(p.clear) for p in fitted], np.int64),
            "real_unclear": np.array([b for p in fitted for b in p.unclear], np.float32).reshape(-1, 4),
            "real_unclear_counts": np.array([len(p.unclear) for p in fitted], np.int64)}
    np.savez(path, **arrays)


def load_assets(path: Path) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The card faces and surfaces of a :func:`pack_assets` file."""
    try:
        z = np.load(path)
        return (_decode(z["faces"], z["face_lengths"], cv2.IMREAD_UNCHANGED),
                _decode(z["surfaces"], z["surface_lengths"], cv2.IMREAD_COLOR))
    except (OSError, KeyError, ValueError) as e:
        raise SystemExit(f"error: {path} is not a scene pack ({e})") from e


def load_real(path: Path) -> list[RealPhoto]:
    """The labelled photos of a :func:`pack_assets` file (none where it was packed without them)."""
    try:
        z = np.load(path)
        if "real" not in z.files:
            return []
        images = _decode(z["real"], z["real_lengths"], cv2.IMREAD_COLOR)
        clear, unclear = z["real_clear"], z["real_unclear"]
        ci = np.concatenate([[0], np.cumsum(z["real_clear_counts"])])
        ui = np.concatenate([[0], np.cumsum(z["real_unclear_counts"])])
        if len(ci) != len(images) + 1 or len(ui) != len(images) + 1 or ci[-1] != len(clear) or ui[-1] != len(unclear):
            raise ValueError("the labelled photos' labels do not match their images")
    except (OSError, KeyError, ValueError) as e:
        raise SystemExit(f"error: {path} is not a scene pack ({e})") from e
    return [RealPhoto(im, list(clear[ci[k] : ci[k + 1]]),
                      [tuple(float(v) for v in b) for b in unclear[ui[k] : ui[k + 1]]])  # type: ignore[misc]
            for k, im in enumerate(images)]


def real_photos_in(path: Path) -> int:
    """How many labelled photos a pack holds, without decoding them."""
    try:
        with np.load(path) as z:
            return len(z["real_lengths"]) if "real_lengths" in z.files else 0
    except (OSError, ValueError) as e:
        raise SystemExit(f"error: {path} is not a scene pack ({e})") from e


# ------------------------------------------------------------------------------------------------
# the stream of scenes
# ------------------------------------------------------------------------------------------------
#: A worker's labelled photos (see :func:`_init_from_pack`).
_REAL: list[RealPhoto] = []


def _init_from_pack(path: Path, real: bool = False) -> None:
    """A worker's ingredients: the faces and surfaces, and the labelled photos only where real
    samples are asked for (decoded, bicycle-9a/train's weigh 170 MB in each of 15 workers)."""
    global _REAL
    from models.scenes import Surfaces

    faces, surfaces = load_assets(path)
    detector._init_worker(faces, Surfaces(surfaces))
    _REAL = load_real(path) if real else []


def _make_mixed(args: tuple[tuple[int, ...], int]) -> tuple[np.ndarray, np.ndarray]:
    """A chunk of :func:`models.detector._make`'s job whose last ``n_real`` samples are cut
    from the labelled photos instead (:func:`models.detector._real_batch`). The synthesised
    scenes are the first ones the job alone would make (the same generator, fewer draws); the
    real ones come from a generator of their own, seeded from the chunk's seed, so the chunk
    stays a function of its job."""
    job, n_real = args
    seed, n, side = job[:3]
    if not 0 < n_real <= n:
        raise ValueError(f"{n_real} real samples in a chunk of {n}")
    if not _REAL:
        raise ValueError("real samples asked for, but this worker has no labelled photos")
    x, t = detector._make((seed, n - n_real, side, *job[3:]))
    xr, tr = detector._real_batch(np.random.default_rng([seed, 1]), _REAL, n_real, side)
    return np.concatenate([x, xr]), np.concatenate([t, tr])


def scene_chunks(pack: Path, *, seed: int, side: int, chunk: int, workers: int,
                 ahead: int | None = None, min_visible: float = 0.25,
                 real: int = 0) -> Generator[tuple[np.ndarray, np.ndarray], None, None]:
    """Chunks of ``chunk`` fresh scenes and their targets, without end, in a fixed order (chunk
    ``k`` is seeded from ``seed`` and ``k`` alone, whatever the number of workers); at most
    ``ahead`` chunks are made ahead of the consumer, so a slow consumer holds memory down.
    ``real`` of each chunk's samples (its last ones; the batches draw in a shuffled order) are
    cut from the pack's labelled photos instead (:func:`_make_mixed`); with none, the chunks are
    exactly those of a pack without photos."""
    import multiprocessing

    ahead = ahead or 2 * workers
    # spawn, not fork: a forked child can inherit a lock held by one of OpenCV's threads and hang
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_from_pack,
                             initargs=(pack, real > 0)) as pool:
        queue: deque[Future[tuple[np.ndarray, np.ndarray]]] = deque()
        k = 0
        try:
            while True:
                while len(queue) < ahead:
                    job = (seed * 100_003 + k, chunk, side) + (() if min_visible == 0.25 else (round(100 * min_visible),))
                    queue.append(pool.submit(_make_mixed, (job, real)) if real else pool.submit(detector._make, job))
                    k += 1
                yield queue.popleft().result()
        finally:
            for f in queue:
                f.cancel()


# ------------------------------------------------------------------------------------------------
# training
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NetSpec:
    """One network to train: its width and whether it has the corner head (trained jointly)."""

    width: int
    corners: bool
    distil: bool = False

    @classmethod
    def parse(cls, text: str) -> NetSpec:
        width, *extras = text.split("+")
        if not width.isdigit() or not 8 <= int(width) <= 64 or any(e not in ("corners", "distil") for e in extras):
            raise argparse.ArgumentTypeError(
                f"{text!r}: give a width 8..64, optionally with +corners and +distil (e.g. 16+corners)")
        return cls(int(width), "corners" in extras, "distil" in extras)

    @property
    def name(self) -> str:
        return f"w{self.width}" + ("-corners" if self.corners else "") + ("-distil" if self.distil else "")


def lr_at(fraction: float, peak: float, warmup: float = 0.05) -> float:
    """The learning rate at ``fraction`` of the run's time: a linear warm-up, then a cosine to zero."""
    if fraction < warmup:
        return peak * max(fraction, 0.0) / warmup
    return peak * 0.5 * (1 + math.cos(math.pi * min(1.0, (fraction - warmup) / (1 - warmup))))


def joint_loss(out: Any, t: Any, corners: bool) -> Any:
    """The card maps' loss, plus the corner head's where the network has one."""
    loss, _ = detector.loss_fn(out[:, :8], t)
    if corners:
        loss = loss + detector.corner_loss(out[:, 8:], t)[0]
    return loss


def distil_loss(out: Any, teacher: Any, t: Any) -> Any:
    """How far a student's card maps are from its teacher's: the heat map above all (its peaks
    decide what is a card), the sizes and angle where a card is asked for, and the mask."""
    w = t[:, 8:9]
    return (20.0 * ((out[:, 0] - teacher[:, 0]) ** 2).mean()
            + ((out[:, 1:7] - teacher[:, 1:7]).abs() * w).sum() / w.sum().clamp(min=1) / 6
            + (out[:, 7] - teacher[:, 7]).abs().mean())


def load_teacher(text: str, device: str) -> Any:
    """The network of ``WIDTH=PATH`` (a ``.pt`` this recipe saved), frozen, to teach ``+distil`` networks."""
    import torch

    width, _, path = text.partition("=")
    if not width.isdigit() or not path:
        raise SystemExit(f"error: --teacher {text!r}: give WIDTH=PATH, e.g. 32=detector-w32.pt")
    net = detector.build_net(int(width))
    try:
        net.load_state_dict(torch.load(path, map_location="cpu"))
    except (OSError, RuntimeError) as e:
        raise SystemExit(f"error: --teacher {path}: {e}") from e
    for p in net.parameters():
        p.requires_grad_(False)
    return net.to(device).eval()


def _batches(x: np.ndarray, t: np.ndarray, *, reuse: int, batch: int, rng: np.random.Generator,
             device: str) -> Iterator[tuple[Any, Any]]:
    """A chunk's batches on ``device``: ``reuse`` passes, each in a fresh order."""
    import torch

    xg = torch.from_numpy(x).to(device).permute(0, 3, 1, 2).float().div_(255)
    tg = torch.from_numpy(t).to(device)
    for _ in range(reuse):
        order = rng.permutation(len(x))
        for k in range(len(x) // batch):
            idx = torch.from_numpy(np.sort(order[k * batch : (k + 1) * batch])).to(device)
            yield xg[idx], tg[idx]


def _learn(nets: dict[NetSpec, Any], opts: dict[NetSpec, Any], xb: Any, tb: Any, rate: float,
           teacher: Any) -> dict[NetSpec, Any]:
    """One optimiser step of every network on one batch; each network's loss (a tensor)."""
    import torch

    taught = None
    if teacher is not None:
        with torch.no_grad():
            taught = teacher(xb)
    losses = {}
    for spec, net in nets.items():
        opt = opts[spec]
        for group in opt.param_groups:
            group["lr"] = rate
        out = net(xb)
        loss = joint_loss(out, tb, spec.corners)
        if spec.distil:
            loss = loss + 5.0 * distil_loss(out, taught, tb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses[spec] = loss.detach()
    return losses


def train_stream(specs: list[NetSpec], chunks: Iterator[tuple[np.ndarray, np.ndarray]], *, minutes: float,
                 batch: int, lr: float, reuse: int, seed: int, device: str, log: Any = print,
                 checkpoint: Any = None, checkpoint_every: float = 120.0, teacher: Any = None,
                 init: Path | None = None) -> tuple[dict[NetSpec, Any], dict[str, Any]]:
    """Train every network of ``specs`` on the same batches of ``chunks`` until ``minutes`` have
    passed; each starts from the same seed, so each learns what it would alone. ``+distil``
    networks also learn ``teacher``'s card maps. ``init`` (a ``.pt`` this recipe saved) starts
    every network from those weights instead: a second run goes on from a first, on fresh
    scenes, its learning rate warming up and cooling down again. ``checkpoint`` (called with the networks and
    the run so far every ``checkpoint_every`` seconds) keeps a run that is cut off. Returns the
    networks and what the run came to (steps, scenes, minutes)."""
    import torch

    if any(s.distil for s in specs) and teacher is None:
        raise SystemExit("error: a +distil network needs --teacher")
    if device.startswith("cuda"):
        torch.backends.cudnn.benchmark = True  # fixed input sizes: let cuDNN pick its fastest kernels
    nets, opts = {}, {}
    for spec in specs:
        torch.manual_seed(seed)
        net = detector.build_net(spec.width, corners=spec.corners)
        if init is not None:
            try:
                net.load_state_dict(torch.load(init, map_location="cpu"))
            except (OSError, RuntimeError, pickle.UnpicklingError) as e:
                raise SystemExit(f"error: --init {init}: not the weights of a {spec.name} network ({e})") from e
        nets[spec] = net.to(device).train()
        opts[spec] = torch.optim.AdamW(nets[spec].parameters(), lr=lr, weight_decay=1e-4)
    rng = np.random.default_rng(seed)
    t0 = last_ck = time.time()
    end = t0 + 60 * minutes
    step = scenes = 0
    waited = 0.0

    def run() -> dict[str, Any]:
        return {"steps": step, "scenes": scenes, "minutes": round((time.time() - t0) / 60, 1)}

    def evaluated() -> dict[NetSpec, Any]:
        return {s: n.eval() for s, n in nets.items()}

    stream = iter(chunks)
    while True:
        t_wait = time.time()
        x, t = next(stream)
        waited += time.time() - t_wait
        scenes += len(x)
        for xb, tb in _batches(x, t, reuse=reuse, batch=batch, rng=rng, device=device):
            now = time.time()
            if now >= end:
                log(f"done: {step} steps, {scenes} scenes in {(now - t0) / 60:.1f} min")
                return evaluated(), run()
            rate = lr_at((now - t0) / (end - t0), lr)
            losses = _learn(nets, opts, xb, tb, rate, teacher)
            step += 1
            if step % 200 == 0:
                el = time.time() - t0
                parts = " ".join(f"{s.name} {float(v):.3f}" for s, v in losses.items())
                log(f"step {step}, {scenes} scenes, {el / 60:.1f}/{minutes:g} min, {step * batch / el:.0f} samples/s, "
                    f"{100 * waited / el:.0f} % waiting for scenes, lr {rate:.2e}, loss {parts}")
            if checkpoint is not None and time.time() - last_ck > checkpoint_every:
                checkpoint(evaluated(), run())
                for n in nets.values():
                    n.train()
                last_ck = time.time()


def save(nets: dict[NetSpec, Any], out_dir: Path, *, onnx: bool, record: dict[str, Any]) -> None:
    """Each network's weights (``.pt``, on the CPU) with its training record beside it
    (``.train.json``: the recipe, the networks trained alongside, steps, scenes, machine), and
    its ONNX export when asked."""
    import torch

    out_dir.mkdir(parents=True, exist_ok=True)
    for spec, net in nets.items():
        cpu = {k: v.detach().cpu() for k, v in net.state_dict().items()}
        torch.save(cpu, out_dir / f"detector-{spec.name}.pt")
        mine = record | {"net": spec.name, "width": spec.width, "corners": spec.corners,
                         "alongside": [s.name for s in nets if s != spec]}
        (out_dir / f"detector-{spec.name}.train.json").write_text(json.dumps(mine, indent=1) + "\n", encoding="utf-8")
        if onnx:
            host = detector.build_net(spec.width, corners=spec.corners)
            host.load_state_dict(cpu)
            detector.export(host.eval(), out_dir / f"detector-{spec.name}.onnx")


def finish(weights: Path, photos: list[Path], out: Path, log: Any = print) -> dict[str, Any]:
    """Make a shipped detector of a trained network's ``.pt``: its float export
    (``<out>.fp32.onnx``), the int8 model calibrated on the labelled photos that are not held
    back (``out``; float where no photos are given), and the sidecars, with the threshold chosen
    on the photos held back from ``photos`` (every fifth, as
    :func:`models.detector.choose_threshold` does for the CPU recipe) and the training record."""
    import shutil

    import torch

    from models.real_scenes import load_real_photos

    record_path = weights.with_suffix(".train.json")
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        net = detector.build_net(int(record["width"]), corners=bool(record["corners"]))
        net.load_state_dict(torch.load(weights, map_location="cpu"))
    except (OSError, KeyError, ValueError, RuntimeError, pickle.UnpicklingError) as e:
        raise SystemExit(f"error: {weights}: not a network this recipe trained, with its .train.json ({e})") from e
    out.parent.mkdir(parents=True, exist_ok=True)
    fp32 = out.with_suffix(".fp32.onnx")
    detector.export(net.eval(), fp32)
    meta: dict[str, Any] = {
        "kind": "card-detector", "stride": detector.STRIDE, "input": "BGR 0..1 NCHW, sides a multiple of 16",
        "channels": list(detector.CARD_CHANNELS) + (list(detector.CORNER_CHANNELS) if record["corners"] else []),
        "corner_reach": detector.CORNER_REACH, "recipe": record, "decks": list(detector.DETECTOR_DECKS)}
    held: list[Path] = []
    if photos:
        from models.train import quantise_feeds
        from vision.voc import labelled_photos

        _, held = load_real_photos(photos)
        taught = [p for folder in photos for p, _ in labelled_photos(folder) if p not in held]
        feeds = [{"image": _calibration_input(p)} for p in taught[:: max(1, len(taught) // CALIBRATION_PHOTOS)]]
        quantise_feeds(fp32, out, feeds, keep_float=_first_and_last_conv(fp32))
        meta["precision"] = f"int8 (static QDQ, per channel; first and last convolution float), calibrated on {len(feeds)} photos"
    else:
        shutil.copyfile(fp32, out)
        meta["precision"] = "float32 (no photos to calibrate int8 on)"
    if held:
        meta["threshold"] = detector.choose_threshold(out, held, candidates=THRESHOLDS, log=log)
        meta["threshold_chosen_on"] = f"{len(held)} labelled photos held back from training (found against extra finds)"
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    fp32.with_suffix(".json").write_text(json.dumps(meta | {"precision": "float32"}, indent=1) + "\n", encoding="utf-8")
    log(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB, {meta['precision']}), threshold {meta.get('threshold', 'none')}")
    return meta


#: How many of the taught photos calibrate the int8 detector.
CALIBRATION_PHOTOS = 32


def _calibration_input(photo: Path, side: int = 512) -> np.ndarray:
    """A taught photo scaled as the detector first reads it (long side 512, NCHW 0..1), its
    sides rounded down to a multiple of 16. (``CardDetector.maps`` rounds to the nearest: the
    shipped int8 model was calibrated on these inputs, and calibrating on the product's own gave
    95 of 108 held-back cards right but 2 wrong on all of train/ against 1, so this stays.)"""
    im = cv2.imread(str(photo))
    if im is None:
        raise SystemExit(f"error: {photo}: not an image")
    s = side / max(im.shape[:2])
    h, w = max(16, int(im.shape[0] * s) // 16 * 16), max(16, int(im.shape[1] * s) // 16 * 16)
    small = cv2.resize(im, (w, h), interpolation=cv2.INTER_AREA)
    return np.ascontiguousarray(small.transpose(2, 0, 1)[None], dtype=np.float32) / 255.0


def _first_and_last_conv(model: Path) -> list[str]:
    import onnx

    convs = [n.name for n in onnx.load(str(model)).graph.node if n.op_type == "Conv"]
    return [convs[0], convs[-1]] if convs else []


#: The detector thresholds :func:`finish` chooses among.
THRESHOLDS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65)


def _init_record(weights: Path) -> dict[str, Any]:
    """What a run that goes on from ``weights`` records of where it started: their file's name and
    their own training record, so the whole chain of runs stays written down."""
    try:
        first = json.loads(weights.with_suffix(".train.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SystemExit(f"error: --init {weights}: its training record (.train.json) does not read ({e})") from e
    return {"file": weights.name} | {k: v for k, v in first.items() if k not in ("net", "width", "corners")}


def _machine(device: str) -> str:
    where = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    if device.startswith("cuda"):
        import torch

        where = f"{torch.cuda.get_device_name(0)}, " + where
    return where


#: The options a training record keeps: what decides the network, not where files lie.
RECIPE_KEYS = ("minutes", "side", "chunk", "reuse", "batch", "lr", "seed", "workers", "device", "teacher", "init")


def build_parser() -> argparse.ArgumentParser:
    """The recipe's command line (also read by the test that ties the shipped sidecar to the docstring's command)."""
    ap = argparse.ArgumentParser(prog="python -m models.detector_stream", description=__doc__.split("\n\n")[0])
    ap.add_argument("--pack", type=Path, metavar="FILE",
                    help="write the scenes' ingredients (installed decks, backgrounds, --photos' card-free patches; "
                         "with --real-per-batch, their labelled photos not held back) to FILE and stop")
    ap.add_argument("--photos", type=Path, action="append", default=[], help="with --pack: a folder of VOC-labelled photos")
    ap.add_argument("--wallpapers", type=Path, default=Path("/usr/share/backgrounds"), help="with --pack: photographs used as surfaces")
    ap.add_argument("--assets", type=Path, metavar="FILE", help="train from this --pack file")
    ap.add_argument("--net", type=NetSpec.parse, action="append", default=[], metavar="WIDTH[+corners]",
                    help="a network to train (repeatable; default 16)")
    ap.add_argument("--minutes", type=float, default=5.0, help="training time (default 5)")
    ap.add_argument("--side", type=int, default=256, help="scene size in pixels (default 256)")
    ap.add_argument("--chunk", type=int, default=256, help="scenes a worker makes at a time (default 256)")
    ap.add_argument("--reuse", type=int, default=2, help="passes over each chunk (default 2)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--workers", type=int, default=2, help="scene synthesis processes (default 2)")
    ap.add_argument("--teacher", metavar="WIDTH=PATH", help="a trained network (.pt) that +distil networks learn from")
    ap.add_argument("--init", type=Path, metavar="PT",
                    help="start every --net from these weights (a .pt this recipe saved, its .train.json beside it)")
    ap.add_argument("--real-per-batch", type=int, default=0, metavar="N",
                    help="samples in N of each --batch cut from the pack's labelled photos instead of synthesised "
                         "(a share N/batch of every chunk; default 0: synthesised scenes only)")
    ap.add_argument("--min-visible", type=float, default=0.25,
                    help="the least share of a card that must show for the network to be asked to find it (default 0.25)")
    ap.add_argument("--device", default="cpu", help="torch device (default cpu; cuda on a GPU)")
    ap.add_argument("--onnx", action="store_true", help="export each network to ONNX too")
    ap.add_argument("--out-dir", type=Path, default=detector.WORK / "stream")
    ap.add_argument("--finish", type=Path, metavar="PT",
                    help="make a shipped detector of a trained network (.pt and its .train.json): ONNX export, "
                         "the threshold chosen on --photos' held-back photos, the sidecar; then stop")
    ap.add_argument("--out", type=Path, default=detector.OUT / "card_detector.onnx", help="with --finish: where to write")
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    def log(line: str) -> None:
        print(line, flush=True)

    if args.finish:
        finish(args.finish, args.photos, args.out, log=log)
        return 0
    if args.pack:
        from models.scenes import Surfaces

        walls = sorted(p for p in args.wallpapers.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png", ".webp")) \
            if args.wallpapers.is_dir() else []
        from models.real_scenes import load_real_photos

        faces = detector.load_faces()
        surfaces = Surfaces.from_folders(args.photos, walls).images
        real, held = load_real_photos(args.photos) if args.real_per_batch else ([], [])  # only a run that asks travels them
        args.pack.parent.mkdir(parents=True, exist_ok=True)
        pack_assets(args.pack, faces, surfaces, real)
        log(f"wrote {args.pack}: {len(faces)} card faces, {len(surfaces)} surfaces, {len(real)} labelled photos "
            f"({len(held)} held back, not packed), {args.pack.stat().st_size / 1e6:.1f} MB")
        return 0
    if args.assets is None:
        ap.error("give --assets FILE (made by --pack) or --pack FILE")
    if not args.assets.is_file():
        raise SystemExit(f"error: {args.assets} does not exist (make it with --pack)")
    specs = args.net or [NetSpec(16, False)]
    if len(set(specs)) != len(specs):
        ap.error("each --net once")
    if args.chunk < args.batch:  # a chunk gives no whole batch: no step would be taken, nor the deadline seen
        ap.error(f"--chunk {args.chunk} is less than --batch {args.batch}: give a chunk of at least one batch")
    if not 0 <= args.real_per_batch <= args.batch:
        ap.error(f"--real-per-batch: give 0..{args.batch} (the batch)")
    n_real = round(args.chunk * args.real_per_batch / args.batch)  # a chunk's share of real samples
    if args.real_per_batch and not n_real:
        ap.error(f"--real-per-batch {args.real_per_batch} of {args.batch} is no sample of a chunk of {args.chunk}")
    packed = real_photos_in(args.assets) if n_real else 0
    if n_real and not packed:
        raise SystemExit(f"error: {args.assets} holds no labelled photos for --real-per-batch (pack it with --photos)")
    chunks = scene_chunks(args.assets, seed=args.seed, side=args.side, chunk=args.chunk, workers=args.workers,
                          min_visible=args.min_visible, real=n_real)
    recipe = {k: v for k, v in vars(args).items() if k in RECIPE_KEYS} | {"machine": _machine(args.device)}
    if args.min_visible != 0.25:
        recipe["min_visible"] = args.min_visible
    if args.real_per_batch:
        recipe |= {"real_per_batch": args.real_per_batch, "real_per_chunk": n_real, "real_photos": packed}
    if args.init is not None:
        recipe["init"] = _init_record(args.init)
    try:
        nets, run = train_stream(specs, chunks, minutes=args.minutes, batch=args.batch, lr=args.lr, reuse=args.reuse,
                                 seed=args.seed, device=args.device, log=log,
                                 checkpoint=lambda n, r: save(n, args.out_dir, onnx=False, record=recipe | r),
                                 teacher=load_teacher(args.teacher, args.device) if args.teacher else None,
                                 init=args.init)
    finally:
        chunks.close()
    save(nets, args.out_dir, onnx=args.onnx, record=recipe | run)
    log(f"wrote {', '.join(s.name for s in specs)} to {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
