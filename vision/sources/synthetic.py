"""Frames from the seeded virtual table (:mod:`vision.synthetic`): a scripted game night."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from vision.sources.base import FrameSource, SourceEnded, SourceError


class SyntheticSource(FrameSource):
    """Plays :func:`vision.synthetic.night` for ``seed``; timestamps are virtual (index / fps),
    so the result is the same however fast the machine is. ``realtime=True`` paces it like a
    camera (for the demo)."""

    kind = "synthetic"

    def __init__(self, *, seed: int = 0, seats: int = 4, deals: int = 1, fps: float = 15.0,
                 size: tuple[int, int] = (1280, 720), deck: str | None = None, realtime: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seed, self.seats, self.deals, self.fps = int(seed), int(seats), int(deals), float(fps)
        self.size, self.deck, self.realtime = size, deck, realtime
        self._it: Iterator[Any] | None = None
        self.last_truth: Any = None
        self.table: Any = None

    def describe(self) -> str:
        return f"synthetic table seed {self.seed}"

    def _open(self) -> None:
        try:
            from vision.synthetic import night
        except ImportError as exc:  # pragma: no cover - only if the install is broken
            raise SourceError(f"{self.describe()}: {exc}") from None
        self._it = night(seed=self.seed, deals=self.deals, seats=self.seats, fps=self.fps,
                         size=self.size, deck=self.deck)
        self._n = 0

    def _close(self) -> None:
        self._it = None

    def _grab(self) -> tuple[np.ndarray, float | None, np.ndarray | None]:
        if self._it is None:
            raise SourceError(f"{self.describe()}: not open")
        try:
            nf = next(self._it)
        except StopIteration:
            raise SourceEnded(f"{self.describe()}: night over") from None
        self.last_truth, self.table = nf.truth, nf.table
        ts = self._n / self.fps
        self._n += 1
        if self.realtime:
            self._pace(ts)
        return nf.image, ts, None
