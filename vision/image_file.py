"""Reading a photo from disk, with a reason when it cannot be read.

``cv2.imread`` answers ``None`` for a missing file, a folder, a text file and a HEIC photo alike,
and decodes a JPEG cut short by an interrupted copy without complaint (the missing rows come out
grey, and libjpeg prints a stray line on stderr), so a half-copied photo would be read as a table
with fewer cards. :func:`read_image` tells these apart, so ``loo-table identify``, ``enroll``,
``calibrate`` and a recording of stills each say what is wrong with the file in one line.

>>> from pathlib import Path
>>> read_image(Path("no-such-photo.jpg"))
Traceback (most recent call last):
...
vision.image_file.UnreadableImage: no-such-photo.jpg: no such file
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: File endings a folder of photos is scanned for.
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")
#: The most pixels a photo may have (a 108-megapixel phone camera fits). A few-megabyte PNG can
#: declare 30000 x 30000 and would take gigabytes to decode, so the size is read from the header
#: first (PNG, JPEG, BMP, WebP), and OpenCV's own limit is set to the same for the other formats.
MAX_PIXELS = 120_000_000
#: The most pixels a photo may declare per byte of file. A real photo has a few (a flat grey PNG
#: about 350); a 1 KB run-length BMP declaring 10,900 x 10,900 has 118,000 and would take 0.9 GB
#: to decode, so a declared size that far beyond its file is refused before decoding.
MAX_PIXELS_PER_BYTE = 4096
#: The largest photo file read (a 108-megapixel JPEG is about 30 MB).
MAX_FILE_BYTES = 256 << 20


class UnreadableImage(ValueError):
    """A photo that cannot be read; the message names the file and the reason."""


def jpeg_is_truncated(data: bytes) -> bool:
    """True when ``data`` is a JPEG whose main image ends before its end-of-image marker.

    Walks the marker segments from the start to the first scan (skipping an EXIF thumbnail, which
    is a whole JPEG of its own inside a segment), then looks for the end marker after it: inside
    the compressed data a 0xFF byte is always followed by 0x00 or a restart marker, so the first
    0xFF 0xD9 after the scan begins is the image's end. Data appended after that end (a phone's
    "motion photo" video) does not count as truncation. Written by hand because neither OpenCV nor
    numpy reports a short JPEG, and Pillow is not otherwise a dependency.
    """
    if data[:2] != b"\xff\xd8":
        return False
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return True  # not a marker where one must be: the header itself is damaged
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte before a marker
            i += 1
            continue
        if marker == 0xDA:  # start of scan: the compressed image follows
            return data.find(b"\xff\xd9", i) < 0
        if marker == 0xD9:
            return False  # an end marker before any scan: no image, left for the decoder to refuse
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        i += 2 + length
    return True  # the headers run past the end of the file


def declared_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from a PNG's IHDR, a BMP's info header, a WebP's frame header or a
    JPEG's frame header, without decoding; None for other formats or a header that is not there."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:2] == b"BM" and len(data) >= 26:
        if int.from_bytes(data[14:18], "little") == 12:  # the old OS/2 core header: 16-bit sizes
            return int.from_bytes(data[18:20], "little"), int.from_bytes(data[20:22], "little")
        # a negative height means top-down rows; the size is its magnitude
        return (abs(int.from_bytes(data[18:22], "little", signed=True)),
                abs(int.from_bytes(data[22:26], "little", signed=True)))
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) >= 30:
        kind = data[12:16]
        if kind == b"VP8X":
            return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
        if kind == b"VP8L":
            bits = int.from_bytes(data[21:25], "little")
            return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
        if kind == b"VP8 ":
            return int.from_bytes(data[26:28], "little") & 0x3FFF, int.from_bytes(data[28:30], "little") & 0x3FFF
        return None
    if data[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 9 <= len(data) and data[i] == 0xFF:
        marker = data[i + 1]
        if marker == 0xFF:
            i += 1
            continue
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # a start-of-frame header
            return int.from_bytes(data[i + 7:i + 9], "big"), int.from_bytes(data[i + 5:i + 7], "big")
        if marker == 0xDA:
            return None
        i += 2 + int.from_bytes(data[i + 2:i + 4], "big")
    return None


def _read_regular(path: Path) -> bytes:
    """The file's bytes, refusing (``UnreadableImage``) a FIFO or device, which would wait forever
    or never end, and a file over ``MAX_FILE_BYTES``; opened without blocking on a FIFO."""
    import os
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableImage(f"{path}: not a regular file (a pipe or a device), not read")
        if info.st_size > MAX_FILE_BYTES:
            raise UnreadableImage(f"{path}: {info.st_size:,} bytes is more than the "
                                  f"{MAX_FILE_BYTES >> 20} MB a photo may have")
        os.set_blocking(fd, True)
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise UnreadableImage(f"{path}: grew past {MAX_FILE_BYTES >> 20} MB while it was read")
    return data


def read_image(path: Path) -> np.ndarray:
    """The photo at ``path`` as a BGR ``uint8`` image (grey and 16-bit files converted, alpha dropped).

    Raises :class:`UnreadableImage` naming the file and why: no such file, a folder, a JPEG cut
    short, more than ``MAX_PIXELS``, or a file OpenCV cannot decode (not an image, or HEIC).
    """
    import os

    os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", str(MAX_PIXELS))  # read at OpenCV's first decode
    import cv2

    if not path.exists():
        raise UnreadableImage(f"{path}: no such file")
    if path.is_dir():
        raise UnreadableImage(f"{path}: is a folder, not an image")
    try:
        data = _read_regular(path)
    except OSError as exc:
        raise UnreadableImage(f"{path}: cannot be opened ({exc.strerror or exc})") from None
    if not data:
        raise UnreadableImage(f"{path}: empty file")
    if jpeg_is_truncated(data):
        raise UnreadableImage(f"{path}: truncated JPEG (the file ends before the image does)")
    size = declared_size(data)
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        raise UnreadableImage(f"{path}: {size[0]} x {size[1]} pixels is more than the "
                              f"{MAX_PIXELS // 1_000_000} megapixels a photo may have")
    if size is not None and size[0] * size[1] > MAX_PIXELS_PER_BYTE * len(data):
        raise UnreadableImage(f"{path}: declares {size[0]} x {size[1]} pixels in {len(data):,} bytes, "
                              "far more than a photo packs (a damaged or hostile file)")
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise UnreadableImage(f"{path}: not an image OpenCV can decode (JPEG, PNG, BMP, TIFF or WebP)")
    return image
