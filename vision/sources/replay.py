"""Recordings: a folder of images (``frame_000123.png``, …) or a video file, at the recorded
speed or as fast as possible.

A folder may hold ``timestamps.json`` (a list of seconds, one per image, in name order); without
it frames are spaced by ``fps``. A video's timestamps come from its frame rate. A frame that cannot
be read, or a video that ends before its declared frame count, raises :class:`SourceCorrupt`:
replaying a damaged recording must not look like a quiet table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from vision.image_file import UnreadableImage, read_image
from vision.sources.base import Backoff, FrameSource, SourceCorrupt, SourceEnded, SourceUnavailable

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")


def image_files(folder: Path) -> list[Path]:
    """The photos in ``folder`` (by suffix), in name order: one frame each, or one photo each."""
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)


class ReplaySource(FrameSource):
    """``realtime=True`` sleeps so frames come at the recorded pace (the clock and sleep are
    injectable); ``realtime=False`` (default) delivers them as fast as the caller reads."""

    kind = "replay"

    def __init__(self, path: str | Path, *, fps: float = 15.0, realtime: bool = False,
                 loop: bool = False, **kwargs: Any) -> None:
        kwargs.setdefault("backoff", Backoff(attempts=0))  # a file does not come back by waiting
        super().__init__(**kwargs)
        self.path = Path(path)
        self.fps = float(fps)
        if self.fps <= 0:
            raise ValueError("fps must be positive")
        self.realtime = realtime
        self.loop = loop
        self._files: list[Path] = []
        self._times: list[float] = []
        self._cap: Any = None
        self._declared = 0
        self._pos = 0

    def describe(self) -> str:
        return f"replay {self.path}"

    def _open(self) -> None:
        if not self.path.exists():
            raise SourceUnavailable(f"{self.describe()}: no such file or folder")
        self._pos = 0
        self._t0 = None
        if self.path.is_dir():
            self._files = image_files(self.path)
            if not self._files:
                raise SourceCorrupt(f"{self.describe()}: folder holds no images")
            ts_file = self.path / "timestamps.json"
            if ts_file.is_file():
                try:
                    times = json.loads(ts_file.read_text(encoding="utf-8"))
                    self._times = [float(t) for t in times]
                except (ValueError, TypeError, OSError) as exc:
                    raise SourceCorrupt(f"{ts_file}: unreadable timestamps ({exc})") from None
                if len(self._times) != len(self._files):
                    raise SourceCorrupt(f"{ts_file}: {len(self._times)} timestamps for {len(self._files)} images")
            else:
                self._times = [i / self.fps for i in range(len(self._files))]
        else:
            import cv2

            cap = cv2.VideoCapture(str(self.path))
            if not cap.isOpened():
                raise SourceCorrupt(f"{self.describe()}: not a readable video")
            fps = cap.get(cv2.CAP_PROP_FPS)
            if fps and fps > 0:
                self.fps = float(fps)
            self._declared = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
            self._cap = cap

    def _close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None

    def __len__(self) -> int:
        return len(self._files) if self._files else self._declared

    def _grab(self) -> tuple[np.ndarray, float | None, np.ndarray | None]:
        import cv2

        if self._cap is None and not self._files:
            raise SourceUnavailable(f"{self.describe()}: not open")
        if self._files:
            if self._pos >= len(self._files):
                if not self.loop:
                    raise SourceEnded(f"{self.describe()}: end of recording")
                self._pos = 0
            f = self._files[self._pos]
            try:
                image = read_image(f)
            except UnreadableImage as exc:
                raise SourceCorrupt(str(exc)) from None
            ts = self._times[self._pos]
        else:
            ok, image = self._cap.read()
            if not ok or image is None:
                if self._declared and self._pos < self._declared - 1:
                    raise SourceCorrupt(
                        f"{self.describe()}: truncated: frame {self._pos} of {self._declared} unreadable")
                if not self.loop:
                    raise SourceEnded(f"{self.describe()}: end of recording")
                self._cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
                self._pos = 0
                ok, image = self._cap.read()
                if not ok:
                    raise SourceCorrupt(f"{self.describe()}: cannot rewind")
            ts = self._pos / self.fps
        self._pos += 1
        if self.realtime:
            self._pace(ts)
        return image, ts, None


def write_recording(folder: str | Path, frames: list[np.ndarray], timestamps: list[float] | None = None,
                    *, ext: str = ".png") -> Path:
    """Write frames as a replayable folder (names sort in order; optional timestamps.json)."""
    import cv2

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for i, img in enumerate(frames):
        if not cv2.imwrite(str(out / f"frame_{i:06d}{ext}"), img):
            raise OSError(f"{out}: could not write frame {i}")
    if timestamps is not None:
        (out / "timestamps.json").write_text(json.dumps([round(t, 6) for t in timestamps]), encoding="utf-8")
    return out

