"""A folder of photos standing in for the camera: each photo is a still table for a few seconds.

Photos of a real table (``felt-52``: a deck laid out on a felt mat) show what the camera would
see without a camera: the Admin page's camera view, calibration by tapping four corners, the
watcher reading the cards that lie in the zones. Each photo is delivered as ``hold_s`` seconds
of frames at ``fps`` (the watcher needs a still picture for a while before it reads), then the
next, round and round. Every photo is scaled to the first one's size, as one camera's frames are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from vision.image_file import UnreadableImage, read_image
from vision.sources.base import Backoff, FrameSource, SourceCorrupt, SourceUnavailable
from vision.sources.replay import IMAGE_SUFFIXES, image_files

__all__ = ["PhotoFolderSource"]


class PhotoFolderSource(FrameSource):
    """``realtime=True`` paces the frames at ``fps`` (the clock and sleep are injectable)."""

    kind = "photos"

    def __init__(self, path: str | Path, *, fps: float = 15.0, hold_s: float = 4.0, realtime: bool = False,
                 **kwargs: Any) -> None:
        kwargs.setdefault("backoff", Backoff(attempts=0))  # a folder does not come back by waiting
        super().__init__(**kwargs)
        if fps <= 0 or hold_s <= 0:
            raise ValueError("fps and hold_s must be positive")
        self.path = Path(path)
        self.fps = float(fps)
        self.per_photo = max(1, round(hold_s * fps))
        self.realtime = realtime
        self._files: list[Path] = []
        self._n = 0
        self._current: tuple[int, np.ndarray] | None = None
        self._size: tuple[int, int] | None = None

    def describe(self) -> str:
        return f"photos {self.path}"

    def _open(self) -> None:
        if not self.path.is_dir():
            raise SourceUnavailable(f"{self.describe()}: no such folder")
        self._files = image_files(self.path)
        if not self._files:
            raise SourceCorrupt(f"{self.describe()}: the folder holds no photos ({', '.join(IMAGE_SUFFIXES)})")
        self._t0 = None

    def _photo(self, i: int) -> np.ndarray:
        if self._current is not None and self._current[0] == i:
            return self._current[1]
        import cv2

        try:
            image = read_image(self._files[i])
        except UnreadableImage as exc:
            raise SourceCorrupt(str(exc)) from None
        if self._size is None:
            self._size = (image.shape[1], image.shape[0])
        elif (image.shape[1], image.shape[0]) != self._size:
            image = cv2.resize(image, self._size, interpolation=cv2.INTER_AREA)
        self._current = (i, image)
        return image

    def _grab(self) -> tuple[np.ndarray, float | None, np.ndarray | None]:
        if not self._files:
            raise SourceUnavailable(f"{self.describe()}: not open")
        i = (self._n // self.per_photo) % len(self._files)
        image = self._photo(i)
        ts = self._n / self.fps
        self._n += 1
        if self.realtime:
            self._pace(ts)
        return image, ts, None
