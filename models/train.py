"""The seeded card-model recipe: render, synthesise, train, export, quantise, evaluate.

``python -m models.train`` (or ``loo-table train``) does every step and writes, into ``--out``
(default: this folder):

- ``card_classifier.fp32.onnx`` and ``card_classifier.int8.onnx`` (static QDQ, calibrated on
  camera-like crops of training decks), each with its ``.json`` sidecar (labels, open-set defaults);
- ``card_classifier.onnx`` (+ ``.json``): a copy of the faster of the two at equal accuracy;
- ``metrics.json``: accuracy per held-out deck, confidently-wrong and unsure rates, the most
  confused pairs, latency per crop on one thread, the open-set threshold/margin and how they were
  chosen. The model card (``models/README.md``) quotes this file.

With ``members`` set (the default; ``--members``) the recipe trains each member network as a run
of its own into ``models/work/members/`` (reusing one already there) and ships their merge
(``models.ensemble``): the same files, two networks averaged inside each ONNX graph.

Held-out decks (``models.decks``) are never rendered into the training set. The open-set
threshold is chosen on one seeded set of held-out crops (calibration) and every figure is
reported on a second, differently seeded set (test), so the figures are not the tuning data.

``--tiny`` runs the whole recipe in seconds on fonts drawn with OpenCV (no artwork needed); the
test suite uses it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import platform
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
SHIPPED = "card_classifier"


@dataclass
class Config:
    """Everything that determines the model; stored in metrics.json so a run can be repeated."""

    seed: int = 20261122
    samples: int = 40000  # training crops synthesised (fresh each round)
    rounds: int = 8  # data is re-synthesised this many times (each round: epochs_per_round epochs)
    epochs_per_round: int = 4
    batch: int = 128
    lr: float = 3e-3
    weight_decay: float = 1e-4
    width: int = 16
    arch: str = "card"  # "card": the whole-card CardNet; "index": the corner-index IndexNet (models/net.py)
    fine_stem: int = 0  # channels of a full-resolution first block (models/net.py); 0: none
    aux_heads: float = 0.0  # weight of the training-only rank and suit heads on the embedding (models.net.AuxHeads); 0: none
    negatives: float = 0.04  # share of "not a card" crops (trained towards a uniform output)
    covered: float = 0.0  # share of cards with another card of the deck lying on most of it (_plan)
    completed: float = 0.0  # share of those covered cards given as identify completes them (_plan)
    picture_swap: float = 0.5  # court cards: chance the picture is swapped for another rank's (_swap_pictures)
    court_donor: str = "rank"  # whose picture a court gets: "rank" (another rank's) or "card" (any other court card's)
    pip_swap: float = 0.0  # pip cards: chance the middle is another pip card's (_swap_pictures)
    demo_weight: float = 3.0  # the demo's deck (heruka-2color) is sampled this much more often
    eval_per_card: int = 20  # test crops per card per held-out deck
    calib_per_card: int = 10  # calibration crops per card per held-out deck
    calib_more_per_card: int = 30  # more calibration crops per card, from their own stream (held_out_plans)
    calib_negatives: int = 4  # calibration sees this many times the test's not-a-card crops (held_out_plans)
    render_height: int = 240
    workers: int = 2
    threads: int = 2  # torch threads while training (synthesis runs before, not beside, training)
    procedural_decks: int = 48  # randomised designs drawn with system fonts (models/procedural.py)
    procedural_weight: float = 0.4  # each procedural deck is sampled this often relative to a real deck
    full_bleed: float = 0.0  # share of procedural designs whose court pictures fill the face (procedural_deck)
    max_wrong: float = 0.0005  # confidently wrong allowed on calibration when choosing the threshold
    flip_average: bool = True  # the runtime averages each crop with its 180° turn (sidecar flag)
    # an ensemble: one member per ";"-separated part, each this config with its key=value settings
    # (models/ensemble.py); empty: one network trained with this config
    # the shipped three: a whole-card network (weighed twice) and two corner-index networks (models/README.md)
    members: str = "full_bleed=0.25 weight=2; full_bleed=0.25 aux_heads=0.5 arch=index; aux_heads=0.5 arch=index"
    tiny: bool = False
    train_decks: list[str] = field(default_factory=list)
    held_out_decks: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------
_POOL: dict[str, Any] = {}  # worker state, inherited by fork


def _labels() -> tuple[str, ...]:
    from vision.classifier import LABELS

    return LABELS


#: A :func:`pack_artwork` file that :func:`load_artwork` reads instead of rendering (``--assets``):
#: a GPU machine has neither the deck packages nor rsvg-convert.
ASSETS: Path | None = None


def pack_artwork(path: Path, train: dict[str, dict[str, np.ndarray]], held: dict[str, dict[str, np.ndarray]]) -> None:
    """Every rendered face of ``train`` and ``held`` (procedural designs included) in one ``.npz``,
    each a lossless WebP with its alpha (about half a PNG's size, so the pack travels)."""
    import cv2

    index, blobs = [], []
    for part, decks in (("train", train), ("held", held)):
        for name in decks:
            for label, img in decks[name].items():
                ok, buf = cv2.imencode(".webp", img, [cv2.IMWRITE_WEBP_QUALITY, 101])
                if not ok:
                    raise SystemExit(f"models.train: could not encode {name} {label}")
                index.append([part, name, label, len(buf)])
                blobs.append(buf.ravel())
    np.savez(path, index=np.array(json.dumps(index)), data=np.concatenate(blobs))


def unpack_artwork(path: Path) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, np.ndarray]]]:
    """The (training, held-out) decks of a :func:`pack_artwork` file."""
    import cv2

    try:
        z = np.load(path)
        index, data = json.loads(str(z["index"])), z["data"]
    except (OSError, KeyError, ValueError) as e:
        raise SystemExit(f"models.train: {path} is not an artwork pack ({e})") from e
    out: dict[str, dict[str, dict[str, np.ndarray]]] = {"train": {}, "held": {}}
    at = 0
    for part, name, label, n in index:
        img = cv2.imdecode(data[at : at + n], cv2.IMREAD_UNCHANGED)
        at += n
        if img is None:
            raise SystemExit(f"models.train: {path}: {name} {label} does not decode")
        out[part].setdefault(name, {})[label] = img
    return out["train"], out["held"]


def load_artwork(cfg: Config) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, np.ndarray]]]:
    """(training decks, held-out decks): deck name -> label -> BGRA render."""
    from models import decks as D

    train: dict[str, dict[str, np.ndarray]]
    held: dict[str, dict[str, np.ndarray]]
    if ASSETS is not None and not cfg.tiny:
        train, held = unpack_artwork(ASSETS)
        procedural = sum(name.startswith("procedural-") for name in train)
        if procedural != cfg.procedural_decks:
            raise SystemExit(f"models.train: {ASSETS} holds {procedural} procedural designs, the config asks for "
                             f"{cfg.procedural_decks}")
        cfg.train_decks, cfg.held_out_decks = list(train), list(held)
        return train, held
    if cfg.tiny:
        train = {"font-0": D.font_deck(0), "font-2": D.font_deck(2)}
        held = {"font-1": D.font_deck(1)}
        cfg.train_decks, cfg.held_out_decks = list(train), list(held)
        return train, held
    if shutil.which("rsvg-convert") is None:
        raise SystemExit("models.train: rsvg-convert not found (apt-get install librsvg2-bin)")
    train_specs = D.decks(held_out=False)
    held_specs = D.decks(held_out=True)
    if len(held_specs) < 3 or len(train_specs) < 5:
        raise SystemExit(
            "models.train: deck artwork missing (apt-get install gnome-cards-data kdegames-card-data-kf5; "
            "npm packages under models/work/npm, see models/README.md)"
        )
    from tqdm import tqdm

    train = {}
    held = {}
    for spec in tqdm(train_specs + held_specs, desc="render decks", unit="deck", file=sys.stderr):
        imgs = D.load_deck(spec, height=cfg.render_height, workers=cfg.workers)
        (held if spec.held_out else train)[spec.name] = imgs
    if "heruka-2color" not in train:  # the demo's deck, as committed beside the synthetic table
        train["heruka-2color"] = committed_demo_deck()
    train.update(procedural_decks(cfg, train))
    cfg.train_decks, cfg.held_out_decks = list(train), list(held)
    return train, held


def committed_demo_deck() -> dict[str, np.ndarray]:
    """The demo deck's committed renders (``vision/assets/decks/heruka-2color``), label -> BGRA.

    The recipe renders it from its npm package; where that is not installed the committed PNGs
    stand in, so that the reader keeps the deck the demo's synthetic table shows (it is sampled
    ``Config.demo_weight`` times as often as another deck)."""
    import cv2

    folder = HERE.parent / "vision" / "assets" / "decks" / "heruka-2color"
    out = {}
    for png in sorted(folder.glob("*.png")):
        img = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
        if img is not None and img.ndim == 3 and img.shape[2] == 4:
            out[png.stem] = img
    return out


def procedural_decks(cfg: Config, real: dict[str, dict[str, np.ndarray]]) -> dict[str, dict[str, np.ndarray]]:
    """``cfg.procedural_decks`` randomised designs (seeded from cfg.seed), courts dressed in ``real`` pictures."""
    from tqdm import tqdm

    from models.procedural import court_pictures, procedural_deck

    pictures = court_pictures(real)
    out: dict[str, dict[str, np.ndarray]] = {}
    for i in tqdm(range(cfg.procedural_decks), desc="draw procedural decks", unit="deck", file=sys.stderr):
        out[f"procedural-{i:02d}"] = procedural_deck(cfg.seed * 100 + i, pictures, height=cfg.render_height,
                                                     full_bleed=cfg.full_bleed,
                                                     workers=cfg.workers)
    return out


Plan = list[tuple[int, str, str]]  # (label index or -1, deck name or '', kind)


def _plan(rng: np.random.Generator, n: int, decks: dict[str, dict[str, np.ndarray]], cfg: Config,
          *, negatives: float, per_card: int | None = None, covered: float = 0.0, completed: float = 0.0) -> Plan:
    """Sample list: (label index or -1, deck name or '', kind) — kinds: card, covered (a card
    with another of its deck lying on most of it, a ``covered`` share of the cards; with
    ``per_card``, all of them), completed (a covered card as ``identify`` completes it from its
    half turn, a ``completed`` share of the covered ones), pback, partial, table."""
    labels = _labels()
    names = sorted(decks)
    plan: Plan = []
    if per_card is not None:  # evaluation: every label of every deck, per_card times
        for name in names:
            for li, lab in enumerate(labels):
                for _ in range(per_card):
                    if lab in decks[name]:
                        plan.append((li, name, "covered" if covered else "card"))
                    elif lab == "back":
                        plan.append((li, "", "pback"))
        return plan
    weights = np.array([cfg.demo_weight if nm == "heruka-2color"
                        else cfg.procedural_weight if nm.startswith("procedural-") else 1.0 for nm in names])
    for _ in range(n):
        if rng.random() < negatives:
            if rng.random() < 0.5:
                plan.append((-1, "", "table"))
            else:
                nm = names[rng.integers(len(names))]
                plan.append((-1, nm, "partial"))
            continue
        li = int(rng.integers(len(labels)))
        lab = labels[li]
        if lab == "back" and rng.random() < 0.5:
            plan.append((li, "", "pback"))
            continue
        have = np.array([lab in decks[nm] for nm in names])
        if not have.any():
            plan.append((li, "", "pback"))
            continue
        w = weights * have
        nm = names[int(rng.choice(len(names), p=w / w.sum()))]
        kind = "covered" if covered and rng.random() < covered else "card"
        if kind == "covered" and completed and rng.random() < completed:
            kind = "completed"
        plan.append((li, nm, kind))
    return plan


def _make_chunk(args: tuple[int, list[tuple[int, str, str]]]) -> np.ndarray:
    from models.synth import camera_crop, covered_crop, not_a_card, procedural_back
    from vision.occlusion import completed_crop

    seed, items = args
    rng = np.random.default_rng(seed)
    decks = _POOL["decks"]
    labels = _labels()
    out = []
    for li, name, kind in items:
        if kind == "table":
            out.append(not_a_card(rng))
        elif kind == "pback":
            out.append(camera_crop(rng, procedural_back(rng)))
        elif kind == "partial":
            deck = decks[name]
            keys = sorted(deck)
            out.append(camera_crop(rng, deck[keys[rng.integers(len(keys))]], partial=True))
        elif kind == "covered":
            deck = decks[name]
            others = sorted(k for k in deck if k != labels[li])
            out.append(camera_crop(rng, deck[labels[li]], cover=deck[others[rng.integers(len(others))]]))
        elif kind == "completed":
            deck = decks[name]
            others = sorted(k for k in deck if k != labels[li])
            crop, shown = covered_crop(rng, deck[labels[li]], deck[others[rng.integers(len(others))]])
            done = completed_crop(crop, shown)
            out.append(crop if done is None else done)
        else:
            out.append(camera_crop(rng, decks[name][labels[li]]))
    return np.stack(out)


def _cache_key(decks: dict[str, dict[str, np.ndarray]], plan: Plan, seed: int) -> str:
    import hashlib

    h = hashlib.sha1()
    h.update(repr((seed, plan)).encode())
    for name in sorted(decks):  # the artwork itself (render height, deck versions)
        for lab in sorted(decks[name]):
            h.update(name.encode() + lab.encode() + np.ascontiguousarray(decks[name][lab][::17, ::17]).tobytes())
    h.update((HERE / "synth.py").read_bytes())
    return h.hexdigest()[:20]


def synthesise(decks: dict[str, dict[str, np.ndarray]], plan: Plan, seed: int,
               workers: int, desc: str, cache: Path | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Crops (N, H, W, 3) uint8 and labels (N,) int64 for ``plan``; deterministic for any worker count.

    With ``cache`` (a folder) the crops are kept as .npy keyed by plan, seed, artwork and synth.py,
    so a second run with the same recipe skips the slowest step.
    """
    from tqdm import tqdm

    y = np.array([li for li, _, _ in plan], dtype=np.int64)
    cached = None
    if cache is not None:
        cached = cache / f"crops-{_cache_key(decks, plan, seed)}.npy"
        if cached.is_file():
            x = np.load(cached)
            if len(x) == len(plan):
                return x, y

    chunk = 256
    jobs = [(seed * 1000 + i, plan[s : s + chunk]) for i, s in enumerate(range(0, len(plan), chunk))]
    _POOL["decks"] = decks
    parts: list[np.ndarray] = []
    bar = tqdm(total=len(plan), desc=desc, unit="crop", file=sys.stderr, mininterval=2)
    if workers > 1 and len(jobs) > 1:
        with mp.get_context("fork").Pool(workers, initializer=_quiet_worker) as pool:
            for part in pool.imap(_make_chunk, jobs):
                parts.append(part)
                bar.update(len(part))
    else:
        for job in jobs:
            parts.append(_make_chunk(job))
            bar.update(len(parts[-1]))
    bar.close()
    x = np.concatenate(parts) if parts else np.zeros((0, 88, 64, 3), np.uint8)
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(f".{os.getpid()}.tmp.npy")  # members may train side by side
        np.save(tmp, x)
        tmp.replace(cached)
    return x, y


def _quiet_worker() -> None:
    import cv2

    cv2.setNumThreads(1)
    try:
        os.nice(5)
    except OSError:
        pass


def cfg_cache(cfg: Config) -> Path | None:
    """Where synthesised crops are cached (git-ignored models/work/cache); none for --tiny."""
    return None if cfg.tiny else HERE / "work" / "cache"


# --------------------------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------------------------
def _to_tensor(x: np.ndarray) -> Any:
    import torch

    return torch.from_numpy(x).permute(0, 3, 1, 2).float().div_(255.0)


#: The middle of a canonical 64x88 crop: a court card's picture, clear of both index corners.
_PICTURE = (slice(14, 74), slice(12, 52))


def _swap_middles(xb: Any, yb: Any, members: Any, key: Any, p: float, gen: Any) -> None:
    """Give each crop in ``members`` (a mask), with chance ``p``, the middle of another member whose
    ``key`` differs (in place); the index corners are left as they were."""
    import torch

    idx = members.nonzero().flatten()
    if len(idx) < 2 or p <= 0:
        return
    # drawn from the CPU generator and moved, so a GPU run draws what a CPU run draws
    donor = idx[torch.randperm(len(idx), generator=gen).to(idx.device)]
    pick = (torch.rand(len(idx), generator=gen).to(idx.device) < p) & (key[idx] != key[donor])
    dst, src = idx[pick], donor[pick]
    if len(dst):
        ys, xs = _PICTURE
        xb[dst, :, ys, xs] = xb[src, :, ys, xs].clone()


def _swap_pictures(xb: Any, yb: Any, court_p: float, pip_p: float, gen: Any, *, court_donor: str = "rank") -> None:
    """Give some cards the middle of another card (in place), so that the index must be read.

    Court pictures differ from design to design, the index does not: a network that learns
    "this queen looks like the queens I trained on" confuses J, Q and K of an unseen deck
    (the first held-out evaluation's most confused pairs). So court cards get, with ``court_p``,
    the picture of a court of another rank. Pip middles mislead too: a held-out design whose four
    of spades is one giant "4" between two giant spades was read as a queen (proc3's most
    confused pair), so pip cards (A to 10) get, with ``pip_p``, the middle of a pip card with
    another label. Pip and court middles are never mixed: doing so for every card (mid1) sent
    orell's blurred courts to "back" (models/README.md, the runs after the procedural designs).

    ``court_donor="rank"`` takes a court's picture from another rank only, so the picture still
    tells the suit (a queen of spades keeps a spade queen's picture or gets a jack's or king's of
    any suit); ``"card"`` takes it from any other court card, the same rank of another suit too,
    so that the suit as well must be read from the index. Aimed at the shipped pair's Q♠→Q♣ and
    J♠→J♣ on kde-standard and orell; tried as run fb1c, it did not help (models/README.md), so
    the default stays "rank".
    """
    if court_donor not in ("rank", "card"):
        raise ValueError(f"court_donor must be 'rank' or 'card', not {court_donor!r}")
    card = (yb >= 0) & (yb < 52)
    rank = yb % 13
    court = card & (rank >= 9) & (rank <= 11)
    _swap_middles(xb, yb, court, rank if court_donor == "rank" else yb, court_p, gen)
    _swap_middles(xb, yb, card & ~court, yb, pip_p, gen)


class StoppedEarly(SystemExit):
    """Training stopped at its time budget after a round; its checkpoint resumes it (exit code 3)."""


def _recipe_key(cfg: Config) -> dict[str, Any]:
    """The config as far as it decides the network: a checkpoint of another recipe is not resumed."""
    return {k: v for k, v in asdict(cfg).items() if k not in ("workers", "threads", "train_decks", "held_out_decks")}


def train_model(cfg: Config, train_decks: dict[str, dict[str, np.ndarray]], device: str, *,
                checkpoint: Path | None = None, deadline: float | None = None) -> Any:
    """The network of ``cfg``, trained round by round. With ``checkpoint`` every round's end is
    saved there (network, optimiser, schedule and every random state), and a checkpoint of the same
    recipe found there is resumed from: a run that a machine's time limit stops loses at most a
    round. With ``deadline`` (a ``time.time()``) the run stops after the first round that ends
    past it (:class:`StoppedEarly`); run it again to go on. Why: a lent GPU machine gives one
    command ten minutes, and synthesis, not the GPU, sets a round's time."""
    import torch
    import torch.nn.functional as F
    from tqdm import tqdm

    from models.net import AuxHeads, build_net

    torch.manual_seed(cfg.seed)
    model = build_net(cfg.arch, cfg.width, fine_stem=cfg.fine_stem).to(device).to(memory_format=torch.channels_last)  # type: ignore[call-overload]  # (torch's and onnxruntime's stubs)
    aux = AuxHeads(model.classifier.in_features).to(device) if cfg.aux_heads > 0 else None
    params = list(model.parameters()) + (list(aux.parameters()) if aux is not None else [])
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    steps_per_epoch = max(1, cfg.samples // cfg.batch)
    total = steps_per_epoch * cfg.epochs_per_round * cfg.rounds
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg.lr, total_steps=total, pct_start=0.15)
    rng = np.random.default_rng(cfg.seed)
    gen = torch.Generator().manual_seed(cfg.seed)
    first = 0
    if checkpoint is not None and checkpoint.is_file():
        state = torch.load(checkpoint, map_location=device, weights_only=False)
        if state.get("recipe") == _recipe_key(cfg):
            model.load_state_dict(state["model"])
            if aux is not None:
                aux.load_state_dict(state["aux"])
            opt.load_state_dict(state["opt"])
            sched.load_state_dict(state["sched"])
            rng.bit_generator.state = state["rng"]
            gen.set_state(state["gen"])
            torch.set_rng_state(state["torch_rng"])
            if device == "cuda" and state.get("cuda_rng") is not None:
                torch.cuda.set_rng_state(state["cuda_rng"])
            first = int(state["rounds_done"])
            print(f"resuming {checkpoint} after round {first} of {cfg.rounds}", file=sys.stderr, flush=True)
    for rnd in range(first, cfg.rounds):
        plan = _plan(rng, cfg.samples, train_decks, cfg, negatives=cfg.negatives, covered=cfg.covered,
                     completed=cfg.completed)
        x, y = synthesise(train_decks, plan, cfg.seed + 17 * (rnd + 1), cfg.workers, f"synthesise round {rnd + 1}",
                          cache=cfg_cache(cfg))
        xt = torch.from_numpy(x)
        yt = torch.from_numpy(y)
        for ep in range(cfg.epochs_per_round):
            model.train()
            perm = torch.randperm(len(xt), generator=gen)
            bar = tqdm(range(steps_per_epoch), desc=f"train r{rnd + 1} e{ep + 1}", unit="batch", file=sys.stderr,
                       mininterval=2)
            seen = correct = 0
            loss_sum = 0.0
            for b in bar:
                idx = perm[b * cfg.batch : (b + 1) * cfg.batch]
                xb = xt[idx].permute(0, 3, 1, 2).float().div_(255.0).to(device)
                xb = xb.contiguous(memory_format=torch.channels_last)
                yb = yt[idx].to(device)
                # cheap online jitter on top of the synthesis: brightness / contrast per crop
                gain = torch.empty(len(xb), 1, 1, 1, device=device).uniform_(0.8, 1.2)
                bias = torch.empty(len(xb), 1, 1, 1, device=device).uniform_(-0.08, 0.08)
                xb = (xb * gain + bias).clamp_(0, 1)
                _swap_pictures(xb, yb, cfg.picture_swap, cfg.pip_swap, gen, court_donor=cfg.court_donor)
                logits, emb = model(xb)
                pos = yb >= 0
                loss = torch.zeros((), device=device)
                if pos.any():
                    loss = loss + F.cross_entropy(logits[pos], yb[pos], label_smoothing=0.05)
                    if aux is not None:
                        loss = loss + cfg.aux_heads * aux.loss(model.drop(emb[pos]), yb[pos])
                if (~pos).any():  # outlier exposure: "not a card" -> uniform output
                    loss = loss + 0.5 * (-F.log_softmax(logits[~pos], dim=1).mean(dim=1)).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()  # type: ignore[no-untyped-call]  # (torch's and onnxruntime's stubs)
                opt.step()
                sched.step()
                with torch.no_grad():
                    seen += int(pos.sum())
                    correct += int((logits[pos].argmax(1) == yb[pos]).sum())
                    loss_sum += float(loss)
                bar.set_postfix(loss=f"{loss_sum / (b + 1):.3f}", acc=f"{correct / max(seen, 1):.3f}")
            bar.close()
        if checkpoint is not None:
            state = {"recipe": _recipe_key(cfg), "rounds_done": rnd + 1, "model": model.state_dict(),
                     "aux": None if aux is None else aux.state_dict(), "opt": opt.state_dict(),
                     "sched": sched.state_dict(), "rng": rng.bit_generator.state, "gen": gen.get_state(),
                     "torch_rng": torch.get_rng_state(),
                     "cuda_rng": torch.cuda.get_rng_state() if device == "cuda" else None}
            checkpoint.parent.mkdir(parents=True, exist_ok=True)
            tmp = checkpoint.with_suffix(f".{os.getpid()}.tmp")
            torch.save(state, tmp)
            tmp.replace(checkpoint)  # a power cut mid-save keeps the round before
        if deadline is not None and rnd + 1 < cfg.rounds and time.time() >= deadline:
            print(f"stopped after round {rnd + 1} of {cfg.rounds} at the time budget; the same command "
                  f"resumes from {checkpoint}", file=sys.stderr, flush=True)
            raise StoppedEarly(3)
    model.eval()
    return model.cpu()


def export_onnx(model: Any, path: Path) -> None:
    import torch

    from vision.classifier import CANONICAL_SIZE

    w, h = CANONICAL_SIZE
    dummy = torch.zeros(1, 3, h, w)
    torch.onnx.export(
        model, (dummy,), str(path), input_names=["input"], output_names=["logits", "embedding"],
        dynamic_axes={"input": {0: "n"}, "logits": {0: "n"}, "embedding": {0: "n"}},
        opset_version=17, dynamo=False,
    )


def _calibration_batches(x: np.ndarray) -> list[np.ndarray]:
    """Camera-like crops of training decks as the int8 calibrator's batches of 32."""
    from vision.classifier import preprocess

    return [preprocess(list(x[i : i + 32])) for i in range(0, len(x), 32)]


def quantise(fp32: Path, out: Path, calib: np.ndarray) -> None:
    """The reader's int8 model, calibrated on camera-like crops."""
    quantise_feeds(fp32, out, [{"input": b} for b in _calibration_batches(calib)])


def quantise_feeds(fp32: Path, out: Path, feeds: list[dict[str, np.ndarray]], *, keep_float: Sequence[str] = ()) -> None:
    """Static QDQ int8 (per-channel weights) of ``fp32``, its activations' ranges taken from
    ``feeds``; the convolutions named in ``keep_float`` stay float (a network's first and last
    layers are where int8 costs most accuracy and saves least time)."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    fp32, out = fp32.resolve(), out.resolve()
    pre = out.with_suffix(".pre.onnx")

    class Reader(CalibrationDataReader):  # type: ignore[misc]  # (torch's and onnxruntime's stubs)
        def __init__(self) -> None:
            self.left = iter(feeds)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.left, None)

    # onnxruntime leaves scratch files (sym_shape_infer_temp.onnx, <uuid>.data) in the working
    # folder: work in a temporary one, so nothing is left in the caller's
    with tempfile.TemporaryDirectory(prefix="loo-quant-") as scratch, contextlib.chdir(scratch):
        try:
            quant_pre_process(str(fp32), str(pre), skip_symbolic_shape=False)
        except Exception:  # a graph whose shapes symbolic inference cannot follow (a re-exported member)
            quant_pre_process(str(fp32), str(pre), skip_symbolic_shape=True)
        quantize_static(
            str(pre), str(out), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, nodes_to_exclude=list(keep_float),
        )
    pre.unlink(missing_ok=True)


# --------------------------------------------------------------------------------------------
# evaluation
# --------------------------------------------------------------------------------------------
def held_out_plans(cfg: Config, held: dict[str, dict[str, np.ndarray]]) -> tuple[Plan, Plan, Plan, np.random.Generator]:
    """Calibration, test and not-a-card plans for the held-out decks, and the stream they came from.

    The first ``calib_per_card`` calibration crops and the test crops share one stream (seed+1), as
    in every earlier run, so test figures stay comparable across runs. The ``calib_more_per_card``
    crops come from a stream of their own (seed+6): with 10 per card, 2,120 calibration crops could
    not see a 0.05 % risk (one crop), and the loosest rule with none wrong there was confidently
    wrong 0.2 % of the time on the test crops (r8, models/README.md). The returned generator
    (seed+1, after the test plan) is where models.evaluate draws its enrolment views.
    """
    rng = np.random.default_rng(cfg.seed + 1)
    calib = _plan(rng, 0, held, cfg, negatives=0, per_card=cfg.calib_per_card)
    test = _plan(rng, 0, held, cfg, negatives=0, per_card=cfg.eval_per_card)
    if cfg.calib_more_per_card > 0:
        more = np.random.default_rng(cfg.seed + 6)
        calib += _plan(more, 0, held, cfg, negatives=0, per_card=cfg.calib_more_per_card)
    n_neg = max(50, len(test) // 20)
    neg: Plan = [(-1, "", "table")] * (n_neg // 2) + [(-1, sorted(held)[0], "partial")] * (n_neg - n_neg // 2)
    # More not-a-card crops for calibration only, after its cards: 212 could not see a 1 % risk,
    # and the first index-net ensemble's rule, with none accepted there, took 2 of the test's 212
    # (partial warps of a card back read as "back"). Both sets still end with ``neg``.
    calib += neg * max(0, cfg.calib_negatives - 1)
    return calib, test, neg, rng


def choose_open_set(probs: np.ndarray, y: np.ndarray, max_wrong: float) -> tuple[float, float]:
    """Smallest-unsure (threshold, margin) whose confidently-wrong share on ``probs`` is <= max_wrong,
    and which accepts at most that share of the negatives (y == -1, crops that are not a card) too.

    Negatives count as wrong when accepted. Why the second bound: with a few hundred negatives
    among thousands of cards, the overall share alone let a rule accept some bare-table crops
    and partial warps as cards (the first index-net ensemble took 2 of 212 test negatives), and
    a crop that is not a card must come out unsure. Ties prefer the larger margin.
    """
    order = np.sort(probs, axis=1)
    p1, p2 = order[:, -1], order[:, -2]
    pred = probs.argmax(1)
    wrong = pred != y
    negative = y < 0
    best = (0.99, 0.5, 1.0)
    for margin in (0.0, 0.2, 0.4, 0.6, 0.8):
        for t in np.concatenate([np.arange(0.30, 0.95, 0.01), np.arange(0.95, 0.9995, 0.0005)]):
            acc = (p1 >= t) & (p1 - p2 >= margin)
            cw = float((acc & wrong).mean())
            unsure = float((~acc).mean())
            negatives_ok = not negative.any() or float(acc[negative].mean()) <= max_wrong
            if cw <= max_wrong and negatives_ok:
                if unsure < best[2] - 1e-9:
                    best = (float(t), margin, unsure)
                break
    return round(best[0], 4), best[1]


def batched_probabilities(clf: Any, x: np.ndarray, batch: int = 256) -> np.ndarray:
    """A CardClassifier's probabilities for many crops, ``batch`` at a time (bounded memory)."""
    return np.concatenate([clf.probabilities(list(x[i : i + batch])) for i in range(0, len(x), batch)])


def evaluate(model_path: Path, x: np.ndarray, y: np.ndarray, groups: list[str], threshold: float,
             margin: float) -> dict[str, Any]:
    """Accuracy figures for one ONNX model on crops ``x`` (labels ``y``, deck name per crop)."""
    from vision.classifier import CardClassifier

    clf = CardClassifier(model_path, threads=1, threshold=threshold, margin=margin)
    probs = batched_probabilities(clf, x)
    labels = clf.labels
    out: dict[str, Any] = {"decks": {}}
    garr = np.array(groups)
    order = np.sort(probs, axis=1)
    accepted = (order[:, -1] >= threshold) & (order[:, -1] - order[:, -2] >= margin)
    if clf.agreement is not None:  # read as the runtime reads a whole card the finder traced: the agreement rule on
        reads = [r for i in range(0, len(x), 256) for r in clf.classify(list(x[i:i + 256]), whole=[True] * len(x[i:i + 256]))]
        accepted = np.array([r.card is not None or r.face_down for r in reads])
    pred = probs.argmax(1)
    for g in sorted(set(groups)):
        m = garr == g
        pos = m & (y >= 0)
        if pos.any():
            out["decks"][g] = {
                "n": int(pos.sum()),
                "top1": round(float((pred[pos] == y[pos]).mean()), 5),
                "confidently_wrong": round(float((accepted[pos] & (pred[pos] != y[pos])).mean()), 5),
                "unsure": round(float((~accepted[pos]).mean()), 5),
            }
    pos = y >= 0
    out["all"] = {
        "n": int(pos.sum()),
        "top1": round(float((pred[pos] == y[pos]).mean()), 5),
        "confidently_wrong": round(float((accepted[pos] & (pred[pos] != y[pos])).mean()), 5),
        "unsure": round(float((~accepted[pos]).mean()), 5),
        "accuracy_when_sure": round(float((pred[pos & accepted] == y[pos & accepted]).mean()), 5)
        if (pos & accepted).any() else None,
    }
    neg = y < 0
    if neg.any():
        out["not_a_card"] = {"n": int(neg.sum()), "accepted_as_card": round(float(accepted[neg].mean()), 5)}
    pairs = Counter((labels[int(t)], labels[int(p)]) for t, p in zip(y[pos], pred[pos], strict=True) if t != p)
    out["confused"] = [{"true": t, "read": p, "count": c} for (t, p), c in pairs.most_common(12)]
    out["_probs"] = probs
    return out


def latency_ms(model_path: Path, crops: np.ndarray, runs: int = 300) -> float:
    """Median time of one crop through CardClassifier.classify on one thread (ms)."""
    from vision.classifier import CardClassifier

    clf = CardClassifier(model_path, threads=1)
    one = [crops[0]]
    for _ in range(20):
        clf.classify(one)
    times = []
    for i in range(runs):
        c = [crops[i % len(crops)]]
        t = time.perf_counter()
        clf.classify(c)
        times.append(time.perf_counter() - t)
    return round(float(np.median(times) * 1000), 4)


def write_sidecar(model: Path, threshold: float, margin: float, extra: dict[str, Any], flip_average: bool = True,
                  *, turn_in_graph: bool = False) -> None:
    """The model's JSON sidecar. ``turn_in_graph``: the model averages each crop with its 180° turn
    itself (an ensemble, models.ensemble.merge), so the runtime must not turn it again."""
    from vision.classifier import CANONICAL_SIZE, LABELS

    if turn_in_graph:
        flip_average, extra = False, {**extra, "turn": "in graph"}
    meta = {
        "labels": list(LABELS),
        "input": {"name": "input", "layout": "NCHW", "channels": "BGR", "scale": "1/255",
                  "width": CANONICAL_SIZE[0], "height": CANONICAL_SIZE[1]},
        "threshold": threshold,
        "margin": margin,
        "flip_average": flip_average,
        **extra,
    }
    model.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


# --------------------------------------------------------------------------------------------
# the recipe
# --------------------------------------------------------------------------------------------
def members_dir(cfg: Config, out_dir: Path) -> Path:
    """Where ensemble members are trained: the git-ignored models/work/members (out_dir/members for --tiny)."""
    return out_dir / "members" if cfg.tiny else HERE / "work" / "members"


def _same_recipe(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two recorded configs train the same network (machine settings and found decks aside)."""
    skip = {"workers", "threads", "train_decks", "held_out_decks", "members"}
    keys = (set(a) & set(b)) - skip
    return bool(keys) and all(a[k] == b[k] for k in keys)


def train_members(cfg: Config, out_dir: Path, *, quantise_int8: bool, log: Any,
                  deadline: float | None = None) -> list[dict[str, Any]]:
    """Train (or reuse, when an earlier run of the same member recipe is on disk) every member of
    ``cfg.members``, then merge their fp32 and int8 models into ``out_dir``; returns what
    metrics.json records of each member."""
    from models import ensemble

    root = members_dir(cfg, out_dir)
    done: list[dict[str, Any]] = []
    variants: dict[str, list[Path]] = {"fp32": [], "int8": []}
    specs = ensemble.parse_members(cfg.members)
    weights: list[float] = []
    turn: list[bool] = []  # members that read a crop and its 180-degree turn (an IndexNet reads both ways at once)
    index: list[bool] = []  # members that read the corner indices alone: the graph's index_logits
    for i, settings in enumerate(specs, 1):
        mcfg = ensemble.member_config(cfg, settings)
        weights.append(ensemble.member_weight(settings))
        turn.append(cfg.flip_average and mcfg.arch != "index")
        index.append(mcfg.arch == "index")
        mdir = root / ensemble.member_slug(settings)
        previous = json.loads((mdir / "metrics.json").read_text()) if (mdir / "metrics.json").is_file() else None
        have = all((mdir / f"{SHIPPED}.{v}.onnx").is_file() for v in (["fp32", "int8"] if quantise_int8 else ["fp32"]))
        if previous and have and _same_recipe(previous["config"], asdict(mcfg)):
            log(f"member {i}/{len(specs)} ({mdir.name}): reusing the run in {mdir}")
            metrics = previous
        else:
            log(f"member {i}/{len(specs)} ({mdir.name}): training")
            metrics = run_recipe(mcfg, mdir, quantise_int8=quantise_int8, log=log, deadline=deadline)
        for v in variants:
            variants[v].append(mdir / f"{SHIPPED}.{v}.onnx")
        done.append({"settings": settings, "parameters": metrics["parameters"],
                     "train_seconds": metrics["train_seconds"],
                     "total_seconds": metrics["total_seconds"],
                     "held_out": {v: r["all"] for v, r in metrics["results"].items()}})
    for v, paths in variants.items():
        if v == "fp32" or quantise_int8:
            ensemble.merge(paths, out_dir / f"{SHIPPED}.{v}.onnx", weights=weights, turn=turn, index=index)
    log(f"merged {len(specs)} members into {out_dir}")
    return done


def run_recipe(cfg: Config, out_dir: Path, *, quantise_int8: bool = True, log: Any = print,
               evaluate_only: bool = False, deadline: float | None = None) -> dict[str, Any]:
    """Every step; returns the metrics dict (also written to ``out_dir/metrics.json``).

    ``evaluate_only`` keeps the trained ``card_classifier.fp32.onnx`` already in ``out_dir`` (from
    a run of the same config) and redoes everything after training: quantisation, the open-set
    rule, evaluation, the shipped copy and metrics.json.

    Training keeps a checkpoint in ``out_dir`` after every round and resumes from it
    (:func:`train_model`); ``deadline`` stops it there, to be run again.
    """
    import torch

    t0 = time.time()
    fp32 = out_dir / f"{SHIPPED}.fp32.onnx"
    # checked before anything is rendered: rendering every deck takes minutes
    if evaluate_only and not fp32.is_file():
        raise SystemExit(f"models.train: --evaluate-only needs {fp32} from an earlier run")
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(max(1, cfg.threads))
    device = "cuda" if torch.cuda.is_available() else "cpu"
    log(f"device: {device}; threads: {cfg.threads}; workers: {cfg.workers}")
    train_decks, held_decks = load_artwork(cfg)
    log(f"training decks ({len(train_decks)}): {', '.join(train_decks)}")
    log(f"held-out decks ({len(held_decks)}): {', '.join(held_decks)}")

    from models.net import build_net, count_parameters

    members: list[dict[str, Any]] = []  # an ensemble's members, as metrics.json records them
    model = None  # the trained network (None for an ensemble: its parameters are the members')
    if evaluate_only:
        previous = json.loads((out_dir / "metrics.json").read_text()) if (out_dir / "metrics.json").is_file() else {}
        t_train = float(previous.get("train_seconds", 0.0))
        if cfg.members:
            members = previous.get("members", [])
        else:
            model = build_net(cfg.arch, cfg.width, fine_stem=cfg.fine_stem)
    elif cfg.members:
        t_m = time.time()
        members = train_members(cfg, out_dir, quantise_int8=quantise_int8, log=log, deadline=deadline)
        t0 += time.time() - t_m  # from here on t0 times the ensemble's own evaluation
        t_train = sum(float(m["train_seconds"]) for m in members)
    else:
        checkpoint = out_dir / "checkpoint.pt"
        model = train_model(cfg, train_decks, device, checkpoint=checkpoint, deadline=deadline)
        t_train = time.time() - t0
        export_onnx(model, fp32)
        checkpoint.unlink(missing_ok=True)
    from models.ensemble import turns_in_graph

    turned = bool(cfg.members) and turns_in_graph(fp32)  # an ensemble may turn its crops itself (train_members)
    write_sidecar(fp32, 0.9, 0.5, {}, cfg.flip_average, turn_in_graph=turned)

    # held-out crops: calibration (threshold) and test (figures), different seeds; plus negatives
    calib_plan, test_plan, neg_plan, _ = held_out_plans(cfg, held_decks)
    xc, yc = synthesise(held_decks, calib_plan + neg_plan, cfg.seed + 2, cfg.workers, "calibration crops",
                        cache=cfg_cache(cfg))
    xt, yt = synthesise(held_decks, test_plan + neg_plan, cfg.seed + 3, cfg.workers, "test crops",
                        cache=cfg_cache(cfg))
    groups_c = [nm or "procedural-back" if li >= 0 else "negative" for li, nm, _ in calib_plan + neg_plan]
    groups_t = [nm or "procedural-back" if li >= 0 else "negative" for li, nm, _ in test_plan + neg_plan]

    cal = evaluate(fp32, xc, yc, groups_c, 0.9, 0.5)
    threshold, margin = choose_open_set(cal["_probs"], yc, cfg.max_wrong)
    log(f"open-set rule chosen on calibration crops: threshold {threshold}, margin {margin}")
    write_sidecar(fp32, threshold, margin, {"variant": "fp32"}, cfg.flip_average, turn_in_graph=turned)

    results: dict[str, Any] = {}
    variants = {"fp32": fp32}
    if quantise_int8 and cfg.members:  # each member was quantised on its own; merged as they are
        int8 = out_dir / f"{SHIPPED}.int8.onnx"
        write_sidecar(int8, threshold, margin, {"variant": "int8"}, cfg.flip_average, turn_in_graph=turned)
        variants["int8"] = int8
    elif quantise_int8:
        int8 = out_dir / f"{SHIPPED}.int8.onnx"
        rng_q = np.random.default_rng(cfg.seed + 4)
        qplan = _plan(rng_q, 512 if not cfg.tiny else 64, train_decks, cfg, negatives=0.02)
        xq, _ = synthesise(train_decks, qplan, cfg.seed + 5, cfg.workers, "int8 calibration crops")
        quantise(fp32, int8, xq)
        write_sidecar(int8, threshold, margin, {"variant": "int8"}, cfg.flip_average, turn_in_graph=turned)
        variants["int8"] = int8
    # latency: the variants take turns, five times, and each keeps its best median, so that a burst
    # of other work on the machine cannot make the slower variant look faster (it once did)
    turns: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(1 if cfg.tiny else 5):
        for name, path in variants.items():
            turns[name].append(latency_ms(path, xt, runs=20 if cfg.tiny else 200))
    for name, path in variants.items():
        ev = evaluate(path, xt, yt, groups_t, threshold, margin)
        ev.pop("_probs")
        ev["latency_ms_per_crop_1thread"] = min(turns[name])
        ev["onnx_bytes"] = path.stat().st_size
        results[name] = ev
        log(f"{name}: held-out top1 {ev['all']['top1']:.4f}, confidently wrong {ev['all']['confidently_wrong']:.4f}, "
            f"unsure {ev['all']['unsure']:.4f}, {ev['latency_ms_per_crop_1thread']} ms/crop")

    # ship the faster at equal accuracy (within 0.2 points of top-1 and no more confidently wrong)
    shipped = "fp32"
    if "int8" in results:
        a, b = results["fp32"], results["int8"]
        if (b["all"]["top1"] >= a["all"]["top1"] - 0.002
                and b["all"]["confidently_wrong"] <= max(a["all"]["confidently_wrong"], cfg.max_wrong * 2)
                and b["latency_ms_per_crop_1thread"] < a["latency_ms_per_crop_1thread"]):
            shipped = "int8"
    shutil.copyfile(variants[shipped], out_dir / f"{SHIPPED}.onnx")
    write_sidecar(out_dir / f"{SHIPPED}.onnx", threshold, margin, {"variant": shipped}, cfg.flip_average, turn_in_graph=turned)

    # a re-evaluation keeps the training run's time: total = (that) training + this evaluation
    t_eval = time.time() - t0 - (0.0 if evaluate_only or members else t_train)
    # an ensemble's total: each member's whole run (training and its own evaluation) plus this one
    t_whole = sum(float(m["total_seconds"]) for m in members) + t_eval if members else t_train + t_eval
    metrics = {
        "shipped": shipped,
        "threshold": threshold,
        "margin": margin,
        "open_set_rule": "card if softmax top1 >= threshold and top1 - top2 >= margin, else unsure; "
                         "chosen on calibration crops of the held-out decks (seed+2), figures on test crops (seed+3)",
        "parameters": count_parameters(model) if model is not None else sum(int(m["parameters"]) for m in members),
        "train_seconds": round(t_train, 1),
        # a re-evaluation keeps the training run's time: total = that run's training + this evaluation
        "total_seconds": round(t_whole, 1),
        "evaluation_seconds": round(t_eval, 1),
        "device": device,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
                   f"{platform.release()}, Python {platform.python_version()}",
        "config": asdict(cfg),
        "calibration": {k: v for k, v in cal.items() if k != "_probs"},
        "results": results,
    }
    if members:
        metrics["members"] = members
    (out_dir / "metrics.json").write_text(json.dumps(metrics, indent=1) + "\n", encoding="utf-8")
    log(f"wrote {out_dir / (SHIPPED + '.onnx')} ({shipped}) and metrics.json in {time.time() - t0:.0f} s")
    return metrics


def add_arguments(parser: argparse.ArgumentParser) -> None:
    d = Config()
    parser.add_argument("--out", type=Path, default=HERE, help="folder for the models and metrics.json (default: models/)")
    parser.add_argument("--tiny", action="store_true", help="seconds-long run on OpenCV-font decks (for tests)")
    parser.add_argument("--seed", type=int, default=d.seed)
    parser.add_argument("--samples", type=int, default=None, help=f"training crops per round (default {d.samples})")
    parser.add_argument("--rounds", type=int, default=None, help=f"fresh synthesis rounds (default {d.rounds})")
    parser.add_argument("--epochs", type=int, default=None, help=f"epochs per round (default {d.epochs_per_round})")
    parser.add_argument("--pip-swap", type=float, default=None,
                        help=f"chance a pip card (A-10) gets another pip card's middle (default {d.pip_swap})")
    parser.add_argument("--full-bleed", type=float, default=None,
                        help=f"share of procedural designs whose court pictures fill the face (default {d.full_bleed})")
    parser.add_argument("--members", default=None,
                        help="train an ensemble: one member per ';'-separated part of key=value settings, "
                             f"e.g. 'rounds=10; pip_swap=0.2 rounds=6' (default {d.members!r}; '' for one network)")
    parser.add_argument("--workers", type=int, default=d.workers, help="processes synthesising crops")
    parser.add_argument("--threads", type=int, default=d.threads, help="torch threads")
    parser.add_argument("--procedural", type=int, default=None,
                        help=f"procedural deck designs added to training (default {d.procedural_decks})")
    parser.add_argument("--eval-per-card", type=int, default=None, help=f"test crops per card per held-out deck (default {d.eval_per_card})")
    parser.add_argument("--no-int8", action="store_true", help="skip the static int8 variant")
    parser.add_argument("--covered", type=float, default=None,
                        help=f"share of training cards with another card lying on most of it (default {d.covered})")
    parser.add_argument("--completed", type=float, default=None,
                        help=f"share of those given as identify completes them from their half turn (default {d.completed})")
    parser.add_argument("--pack", type=Path, metavar="FILE",
                        help="write the rendered artwork (training and held-out decks) to FILE and stop")
    parser.add_argument("--assets", type=Path, metavar="FILE",
                        help="read the artwork from a --pack FILE instead of rendering it (a machine without the decks)")
    parser.add_argument("--minutes", type=float, default=None,
                        help="stop after the first training round that ends past this many minutes (exit code 3); "
                             "the same command resumes from the round's checkpoint")
    parser.add_argument("--evaluate-only", action="store_true",
                        help="reuse the trained card_classifier.fp32.onnx in --out; redo quantisation, open-set rule, metrics")


def config_from_args(args: argparse.Namespace) -> Config:
    cfg = Config(seed=args.seed, workers=args.workers, threads=args.threads, tiny=args.tiny)
    if args.tiny:
        cfg.samples, cfg.rounds, cfg.epochs_per_round = 512, 1, 1
        cfg.eval_per_card, cfg.calib_per_card, cfg.width = 1, 1, 8
        cfg.calib_more_per_card, cfg.calib_negatives = 0, 1
        cfg.batch, cfg.procedural_decks = 64, 0
    # flags given on the command line override the config (and --tiny's settings)
    for flag, name in (("procedural", "procedural_decks"), ("samples", "samples"), ("rounds", "rounds"),
                       ("epochs", "epochs_per_round"), ("full_bleed", "full_bleed"), ("pip_swap", "pip_swap"),
                       ("members", "members"), ("covered", "covered"), ("completed", "completed")):
        if getattr(args, flag) is not None:
            setattr(cfg, name, getattr(args, flag))
    if args.tiny and args.members is None:
        cfg.members = ""
    if cfg.members:
        from models.ensemble import parse_members

        try:
            parse_members(cfg.members)
        except ValueError as exc:
            raise SystemExit(f"models.train: --members: {exc}") from None
    if args.eval_per_card is not None:
        cfg.eval_per_card = args.eval_per_card
        cfg.calib_per_card = max(1, args.eval_per_card // 2)
    return cfg


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m models.train", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    global ASSETS
    if args.pack is not None:
        cfg = config_from_args(args)
        pack_artwork(args.pack, *load_artwork(cfg))
        print(f"wrote {args.pack} ({args.pack.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
        return 0
    ASSETS = args.assets
    deadline = None if args.minutes is None else time.time() + 60 * args.minutes
    run_recipe(config_from_args(args), args.out, quantise_int8=not args.no_int8,
               log=lambda m: print(m, file=sys.stderr, flush=True), evaluate_only=args.evaluate_only,
               deadline=deadline)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
