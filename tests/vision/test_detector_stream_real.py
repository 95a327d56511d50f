"""Labelled photos in the detector's streaming recipe (models/detector_stream.py ``--real-per-batch``):
the pack carries them with the labels real samples are cut by, and a chunk swaps the asked-for share
of its scenes for real samples, deterministically. In-process, no GPU, no spawned workers."""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np
import pytest

import models.detector_stream as stream
from models import detector
from models.real_scenes import ASPECT, RealPhoto, _rectangle


def _faces(rng: np.random.Generator, n: int = 6) -> list[np.ndarray]:
    """Card faces as the decks render them: BGRA, a white card with a coloured mark."""
    faces = []
    for _ in range(n):
        f = np.full((120, 78, 4), 255, np.uint8)
        f[10:40, 8:30, :3] = rng.integers(0, 255, 3, dtype=np.uint8)
        faces.append(f)
    return faces


def _surfaces(rng: np.random.Generator, n: int = 3) -> list[np.ndarray]:
    return [cv2.resize(rng.integers(60, 200, (6, 9, 3), dtype=np.uint8), (140, 90 + 10 * k),
                       interpolation=cv2.INTER_CUBIC) for k in range(n)]


def _photo(h: int, w: int, theta: float) -> RealPhoto:
    """A dark table with one clear white card (its outline known) and an unclear box."""
    img = np.full((h, w, 3), 60, np.uint8)
    quad = _rectangle(np.array([w * 0.4, h * 0.5], np.float32), 0.3 * max(h, w), theta, ASPECT)
    cv2.fillConvexPoly(img, np.round(quad).astype(np.int32), (235, 235, 235))
    return RealPhoto(img, [quad], [(w * 0.7, h * 0.1, w * 0.9, h * 0.4)])


@pytest.fixture
def real() -> list[RealPhoto]:
    # the second is larger than the pack keeps: it must come back scaled, its labels with it
    return [_photo(300, 400, math.radians(30)), _photo(1500, 2048, math.radians(100))]


@pytest.fixture
def pack(tmp_path: Path, real: list[RealPhoto]) -> Path:
    rng = np.random.default_rng(3)
    path = tmp_path / "assets.npz"
    stream.pack_assets(path, _faces(rng), _surfaces(rng), real)
    return path


def test_the_pack_round_trips_the_labelled_photos(pack: Path, real: list[RealPhoto], tmp_path: Path) -> None:
    got = stream.load_real(pack)
    assert len(got) == len(real) == stream.real_photos_in(pack)
    small, big = got
    assert small.image.shape == real[0].image.shape
    assert np.abs(small.image.astype(int) - real[0].image.astype(int)).mean() < 3  # JPEG: close
    assert np.allclose(small.clear[0], real[0].clear[0]) and np.allclose(small.unclear[0], real[0].unclear[0])
    assert max(big.image.shape[:2]) == stream.REAL_LONG_SIDE
    s = stream.REAL_LONG_SIDE / 2048
    assert np.allclose(big.clear[0], real[1].clear[0] * s, atol=0.5)
    assert np.allclose(big.unclear[0], np.array(real[1].unclear[0]) * s, atol=0.5)
    # the card still lies under its outline after scaling and JPEG
    c = np.round(big.clear[0].mean(axis=0)).astype(int)
    assert big.image[c[1], c[0]].min() > 200
    # a pack without photos has none, and is refused for real samples before any worker starts
    bare = tmp_path / "bare.npz"
    rng = np.random.default_rng(3)
    stream.pack_assets(bare, _faces(rng), _surfaces(rng))
    assert stream.load_real(bare) == [] and stream.real_photos_in(bare) == 0
    with pytest.raises(SystemExit, match="holds no labelled photos"):
        stream.main(["--assets", str(bare), "--real-per-batch", "2", "--chunk", "8", "--batch", "4"])
    with pytest.raises(SystemExit):  # a chunk smaller than a batch would never take a step
        stream.main(["--assets", str(pack), "--chunk", "4", "--batch", "8"])


def test_a_chunk_holds_its_share_of_real_samples_deterministically(pack: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the worker's globals, set in this process and put back afterwards
    monkeypatch.setattr(detector, "_FACES", detector._FACES)
    monkeypatch.setattr(detector, "_SURFACES", detector._SURFACES)
    monkeypatch.setattr(stream, "_REAL", stream._REAL)
    threads = cv2.getNumThreads()
    try:
        stream._init_from_pack(pack, real=True)
        job = (7 * 100_003 + 4, 6, 64)
        x, t = stream._make_mixed((job, 2))
        x2, t2 = stream._make_mixed((job, 2))
        synth, _ = detector._make((job[0], 4, 64))
        other, _ = stream._make_mixed(((job[0] + 1, 6, 64), 2))
    finally:
        cv2.setNumThreads(threads)
    assert x.shape == (6, 64, 64, 3) and t.shape == (6, detector.TARGET_CHANNELS, 16, 16)
    assert np.isfinite(t).all()
    # a real sample's corner heat map is -1 throughout (its labels do not say which corners
    # show); a synthesised scene's never is: exactly the last two are real
    real_rows = [bool((t[i, 10] == -1).all()) for i in range(6)]
    assert real_rows == [False] * 4 + [True] * 2
    assert np.array_equal(x, x2) and np.array_equal(t, t2)  # a function of the job
    assert np.array_equal(x[:4], synth)  # the scenes the job alone would make first
    assert not np.array_equal(x[4:], other[4:])  # each chunk's real samples are its own
