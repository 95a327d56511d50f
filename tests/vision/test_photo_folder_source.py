"""A folder of photos standing in for the camera: each photo a still table for a while, round
and round, every one at the first one's size; a missing or empty folder and a damaged photo say so."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.sources import SourceCorrupt, SourceUnavailable, open_source


def _folder(tmp_path, sizes=((320, 200), (320, 200))):
    for i, (w, h) in enumerate(sizes):
        cv2.imwrite(str(tmp_path / f"photo{i}.png"), np.full((h, w, 3), 40 + 100 * i, np.uint8))
    return tmp_path


def test_each_photo_is_held_then_the_next_round_and_round(tmp_path):
    folder = _folder(tmp_path, sizes=((320, 200), (640, 400)))
    with open_source({"source": "photos", "device": str(folder), "fps": 10, "hold_s": 0.3}) as src:
        frames = [src.read() for _ in range(7)]
    levels = [int(f.image[0, 0, 0]) for f in frames]
    assert levels == [40, 40, 40, 140, 140, 140, 40]
    assert [round(f.timestamp, 2) for f in frames] == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    assert {f.image.shape for f in frames} == {(200, 320, 3)}  # one camera: one size


def test_a_missing_folder_an_empty_one_and_a_damaged_photo_say_so(tmp_path):
    with pytest.raises(SourceUnavailable, match="no such folder"):
        open_source({"source": "photos", "device": str(tmp_path / "nope")}).open()
    with pytest.raises(SourceCorrupt, match="holds no photos"):
        open_source({"source": "photos", "device": str(tmp_path)}).open()
    (tmp_path / "bad.jpg").write_bytes(b"\xff\xd8 not really")
    src = open_source({"source": "photos", "device": str(tmp_path)}).open()
    with pytest.raises(SourceCorrupt, match="bad.jpg"):
        src.read()
    with pytest.raises(ValueError, match="folder of photos"):
        open_source({"source": "photos"})
