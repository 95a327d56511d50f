"""The detector's streaming recipe (models/detector_stream.py): the pack that carries the
scenes' ingredients, the stream of fresh scenes, the schedule, and a short run end to end."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
import pytest

from models.detector_stream import NetSpec, load_assets, lr_at, pack_assets, scene_chunks


def _faces(rng: np.random.Generator, n: int = 6) -> list[np.ndarray]:
    """Card faces as the decks render them: BGRA, opaque, a white card with a coloured mark."""
    faces = []
    for k in range(n):
        f = np.full((120, 78, 4), 255, np.uint8)
        f[10:40, 8:30, :3] = rng.integers(0, 255, 3, dtype=np.uint8)
        f[0, 0, 3] = k  # an alpha that is not all 255: the pack must keep it
        faces.append(f)
    return faces


def _surfaces(rng: np.random.Generator, n: int = 3) -> list[np.ndarray]:
    """Smooth images, as a photographed table is (JPEG keeps them closely; it would not keep noise)."""
    import cv2

    return [cv2.resize(rng.integers(60, 200, (6, 9, 3), dtype=np.uint8), (140, 90 + 10 * k),
                       interpolation=cv2.INTER_CUBIC) for k in range(n)]


@pytest.fixture
def pack(tmp_path: Path) -> Path:
    rng = np.random.default_rng(3)
    path = tmp_path / "assets.npz"
    pack_assets(path, _faces(rng), _surfaces(rng))
    return path


def test_the_pack_keeps_faces_exactly_and_surfaces_closely(pack: Path) -> None:
    rng = np.random.default_rng(3)
    faces, surfaces = _faces(rng), _surfaces(rng)
    got_faces, got_surfaces = load_assets(pack)
    assert len(got_faces) == len(faces) and len(got_surfaces) == len(surfaces)
    for a, b in zip(faces, got_faces, strict=True):
        assert np.array_equal(a, b)  # PNG: lossless, alpha included
    for a, b in zip(surfaces, got_surfaces, strict=True):
        assert a.shape == b.shape
        assert np.abs(a.astype(int) - b.astype(int)).mean() < 3  # JPEG: close, not exact


def test_a_damaged_pack_is_refused_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a pack")
    with pytest.raises(SystemExit, match="is not a scene pack"):
        load_assets(bad)


def test_net_specs_parse_and_refuse() -> None:
    assert NetSpec.parse("16") == NetSpec(16, False)
    assert NetSpec.parse("24+corners") == NetSpec(24, True)
    assert NetSpec.parse("16+distil+corners") == NetSpec(16, True, True)
    assert NetSpec.parse("32+corners").name == "w32-corners"
    for bad in ("", "x", "4", "16+wide", "128"):
        with pytest.raises(argparse.ArgumentTypeError):
            NetSpec.parse(bad)


def test_the_learning_rate_warms_up_then_falls_to_zero_by_the_deadline() -> None:
    assert lr_at(0.0, 1.0) == 0.0
    assert math.isclose(lr_at(0.05, 1.0), 1.0)
    rates = [lr_at(f, 1.0) for f in np.linspace(0.05, 1.0, 40)]
    assert all(a >= b for a, b in zip(rates, rates[1:], strict=False))
    assert lr_at(1.0, 1.0) < 1e-12 and lr_at(1.5, 1.0) < 1e-12


@pytest.mark.slow  # ~5 s: two spawned workers load the pack
def test_the_stream_is_the_same_whatever_the_number_of_workers(pack: Path) -> None:
    def first(workers: int, n: int = 3) -> list[tuple[np.ndarray, np.ndarray]]:
        stream = scene_chunks(pack, seed=5, side=64, chunk=2, workers=workers, ahead=2)
        try:
            return [next(stream) for _ in range(n)]
        finally:
            stream.close()

    one, two = first(1), first(2)
    for (xa, ta), (xb, tb) in zip(one, two, strict=True):
        assert xa.shape == (2, 64, 64, 3) and ta.shape[0] == 2
        assert np.array_equal(xa, xb) and np.array_equal(ta, tb)
    assert not np.array_equal(one[0][0], one[1][0])  # each chunk is fresh


@pytest.mark.slow  # ~10 s, most of it importing torch
def test_a_short_run_trains_each_network_and_saves_it(pack: Path, tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from models.detector import build_net
    from models.detector_stream import main

    out = tmp_path / "out"
    assert main(["--assets", str(pack), "--minutes", "0.05", "--net", "8", "--net", "8+corners", "--side", "64",
                 "--chunk", "8", "--batch", "4", "--workers", "1", "--onnx", "--out-dir", str(out)]) == 0
    for name, corners in (("w8", False), ("w8-corners", True)):
        state = torch.load(out / f"detector-{name}.pt")
        torch.manual_seed(7)
        fresh = build_net(8, corners=corners)  # the run's own start: the same seed
        assert state.keys() == fresh.state_dict().keys()
        moved = [k for k, v in fresh.state_dict().items() if v.dtype.is_floating_point and not torch.equal(v, state[k])]
        assert moved  # it learnt
        assert (out / f"detector-{name}.onnx").stat().st_size > 10_000
    record = json.loads((out / "detector-w8-corners.train.json").read_text())
    assert record["alongside"] == ["w8"] and record["steps"] > 0 and record["scenes"] >= 8 and record["side"] == 64
    # finishing makes a detector the product loads: no photos, so no threshold of its own
    from vision.detector import CardDetector

    shipped = tmp_path / "card_detector.onnx"
    assert main(["--finish", str(out / "detector-w8-corners.pt"), "--out", str(shipped)]) == 0
    meta = json.loads(shipped.with_suffix(".json").read_text())
    assert "corner" in meta["channels"] and meta["recipe"]["net"] == "w8-corners" and "threshold" not in meta
    det = CardDetector(shipped)
    assert det.detect(np.full((128, 128, 3), 90, np.uint8)) is not None
    with pytest.raises(SystemExit, match="not a network this recipe trained"):
        main(["--finish", str(out / "detector-w8.onnx"), "--out", str(shipped)])
    # a second run goes on from the first: it starts from the first's weights and records the chain
    again = tmp_path / "again"
    assert main(["--assets", str(pack), "--minutes", "0.03", "--net", "8", "--side", "64", "--chunk", "8",
                 "--batch", "4", "--workers", "1", "--seed", "8", "--init", str(out / "detector-w8.pt"),
                 "--out-dir", str(again)]) == 0
    second = json.loads((again / "detector-w8.train.json").read_text())
    assert second["seed"] == 8 and second["init"]["file"] == "detector-w8.pt" and second["init"]["seed"] == 7
    assert second["init"]["steps"] == json.loads((out / "detector-w8.train.json").read_text())["steps"]
    with pytest.raises(SystemExit, match="not the weights of a w8-corners network"):
        main(["--assets", str(pack), "--minutes", "0.01", "--net", "8+corners", "--side", "64", "--chunk", "4",
              "--batch", "2", "--workers", "1", "--init", str(out / "detector-w8.pt"), "--out-dir", str(again)])
    with pytest.raises(SystemExit, match="needs --teacher"):
        main(["--assets", str(pack), "--minutes", "0.01", "--net", "8+distil", "--side", "64", "--chunk", "4",
              "--batch", "2", "--workers", "1", "--out-dir", str(out)])


def test_the_shipped_detector_was_made_by_the_docstrings_command() -> None:
    """The GPU command in the recipe's docstring, parsed by the recipe itself, gives the options
    the shipped sidecar records (so the documented command is the one that made the model)."""
    import shlex

    import models.detector_stream as recipe

    lines = (recipe.__doc__ or "").splitlines()
    at = next(i for i, line in enumerate(lines) if "--device cuda" in line)
    command = " ".join(line.strip().rstrip("\\") for line in lines[at : at + 2])
    command = command.split("python -m models.detector_stream", 1)[1]
    args = recipe.build_parser().parse_args(shlex.split(command.replace("OUT", "out")))
    shipped = json.loads((Path(__file__).parents[2] / "models" / "card_detector.json").read_text())["recipe"]
    for key in recipe.RECIPE_KEYS:
        assert getattr(args, key) == shipped.get(key), key
    assert shipped["net"] in [spec.name for spec in args.net]
    assert sorted(shipped["alongside"] + [shipped["net"]]) == sorted(spec.name for spec in args.net)
