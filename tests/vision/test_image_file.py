"""Reading photos: each way a file can fail has its own one-line reason; odd but valid files read."""

from __future__ import annotations

import struct
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.image_file import UnreadableImage, jpeg_is_truncated, read_image

PHOTO = Path(__file__).resolve().parents[1] / "data" / "cards" / "photo_dark_9c_8h.jpg"


def _exif_orientation(data: bytes, orientation: int) -> bytes:
    """``data`` (a JPEG) with an EXIF segment saying how to turn it for display."""
    tiff = b"MM\x00\x2a" + struct.pack(">IH", 8, 1) + struct.pack(">HHII", 0x0112, 3, 1, orientation << 16) + b"\0" * 4
    app1 = b"Exif\x00\x00" + tiff
    return data[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + data[2:]


def test_reasons_name_the_file_and_what_is_wrong(tmp_path: Path) -> None:
    (tmp_path / "notes.jpg").write_text("shopping list")
    (tmp_path / "empty.png").write_bytes(b"")
    (tmp_path / "cut.jpg").write_bytes(PHOTO.read_bytes()[:3000])
    (tmp_path / "folder.jpg").mkdir()
    for name, reason in [("missing.jpg", "no such file"), ("folder.jpg", "is a folder"), ("empty.png", "empty file"),
                         ("cut.jpg", "truncated JPEG"), ("notes.jpg", "not an image OpenCV can decode")]:
        with pytest.raises(UnreadableImage, match=f"{name}: {reason}"):
            read_image(tmp_path / name)


def test_grey_16_bit_and_transparent_files_read_as_bgr(tmp_path: Path) -> None:
    image = cv2.imread(str(PHOTO))
    cv2.imwrite(str(tmp_path / "grey.png"), cv2.cvtColor(image, cv2.COLOR_BGR2GRAY))
    cv2.imwrite(str(tmp_path / "deep.png"), image.astype(np.uint16) * 257)
    cv2.imwrite(str(tmp_path / "alpha.png"), cv2.cvtColor(image, cv2.COLOR_BGR2BGRA))
    for name in ("grey.png", "deep.png", "alpha.png"):
        got = read_image(tmp_path / name)
        assert got.dtype == np.uint8 and got.shape == image.shape, name
    assert np.array_equal(read_image(tmp_path / "deep.png"), image)


def test_a_phone_photo_is_turned_upright_by_its_exif_orientation(tmp_path: Path) -> None:
    image = cv2.imread(str(PHOTO))
    ok, buf = cv2.imencode(".jpg", cv2.rotate(image, cv2.ROTATE_90_COUNTERCLOCKWISE))
    assert ok
    (tmp_path / "phone.jpg").write_bytes(_exif_orientation(buf.tobytes(), 6))  # 6: turn 90 degrees clockwise
    assert read_image(tmp_path / "phone.jpg").shape == image.shape


def test_truncation_is_judged_on_the_main_image_only() -> None:
    whole = PHOTO.read_bytes()
    assert not jpeg_is_truncated(whole)
    assert jpeg_is_truncated(whole[: len(whole) // 2]) and jpeg_is_truncated(whole[:40])
    # a motion photo: a video appended after the image's end marker is not truncation
    assert not jpeg_is_truncated(whole + b"\0\0\0\x18ftypmp42" + b"\xff\xda" + bytes(500))
    # an EXIF thumbnail is a whole JPEG inside a segment; its end marker must not hide a cut image
    thumbnail = b"Exif\x00\x00" + whole
    with_thumb = whole[:2] + b"\xff\xe1" + struct.pack(">H", len(thumbnail) + 2) + thumbnail + whole[2:]
    assert not jpeg_is_truncated(with_thumb)
    assert jpeg_is_truncated(with_thumb[: len(with_thumb) - 2000])
    assert not jpeg_is_truncated(b"\x89PNG\r\n\x1a\n")  # not a JPEG: left to the decoder


def test_the_module_example_runs() -> None:
    import doctest

    import vision.image_file

    assert doctest.testmod(vision.image_file).failed == 0
