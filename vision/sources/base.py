"""The frame-source interface shared by every camera kind, its errors, and reopening with backoff.

Why backoff lives here and not in the controller: a USB camera that is unplugged for a second, or a
picamera2 pipeline that times out once, should cost the referee a few frames, not a restart; and
every caller would otherwise write the same retry loop. A source that cannot come back within its
budget raises :class:`SourceUnavailable`, which the controller turns into a status-LED fault.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import TracebackType

import numpy as np


class SourceError(RuntimeError):
    """A frame source failed; the message is one line naming the source and what went wrong."""


class SourceUnavailable(SourceError):
    """The camera or file is missing, unplugged, or did not come back after reopening."""


class SourceStalled(SourceError):
    """The camera stopped delivering frames without failing (a Camera Module whose frontend timed
    out): the device has been closed already. With a reopen schedule the source reopens it; with
    none (``Backoff(attempts=0)``, as `loo-table run` builds it) the error goes to the caller at once,
    so the table can say so while it reopens."""


class SourceCorrupt(SourceError):
    """A recording is truncated or holds an unreadable frame (reopening would not help)."""


class SourceEnded(SourceError):
    """A finite recording has no more frames (not a failure: iteration just stops)."""


@dataclass(frozen=True)
class Frame:
    """One camera frame: BGR ``image`` (H×W×3 uint8), ``timestamp`` in seconds (monotonic for
    live cameras, the recorded time for replays), ``index`` counting from 0, and optionally
    ``lores``: a small greyscale image of the same view (picamera2's ISP-scaled stream) that the
    watcher uses for motion checks instead of downscaling ``image`` itself."""

    image: np.ndarray
    timestamp: float
    index: int
    lores: np.ndarray | None = None


@dataclass(frozen=True)
class Backoff:
    """Reopen schedule: ``attempts`` tries, waiting ``initial`` s then doubling up to ``maximum``."""

    attempts: int = 5
    initial: float = 0.5
    maximum: float = 8.0

    def delays(self) -> Iterator[float]:
        d = self.initial
        for _ in range(self.attempts):
            yield d
            d = min(d * 2, self.maximum)


class FrameSource:
    """Base class: a context manager yielding :class:`Frame` from :meth:`read`.

    Subclasses implement ``_open``, ``_close`` and ``_grab`` (returning ``(image, timestamp,
    lores)`` or raising). Transient failures (``_grab`` raising :class:`SourceError` that is not
    :class:`SourceCorrupt`/:class:`SourceEnded`) trigger a reopen with backoff; ``sleep`` and
    ``clock`` are injectable so tests run instantly.
    """

    kind = "base"

    def __init__(self, *, backoff: Backoff | None = None, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.backoff = backoff or Backoff()
        self._sleep = sleep
        self._clock = clock
        self._index = 0
        self._opened = False
        self.reopens = 0  # how many times the source came back after a failure
        self._t0: float | None = None  # the clock's time of timestamp 0, for _pace (None: not yet)

    def _pace(self, ts: float) -> None:
        """Sleep until timestamp ``ts`` (seconds from the first frame paced) is due on the clock:
        a recording, a folder of photos or the synthetic table delivered at the camera's rate."""
        now = self._clock()
        if self._t0 is None:
            self._t0 = now - ts
        wait = self._t0 + ts - now
        if wait > 0:
            self._sleep(wait)

    # -- subclass hooks ------------------------------------------------------------------------
    def _open(self) -> None:
        raise NotImplementedError

    def _close(self) -> None:
        pass

    def _grab(self) -> tuple[np.ndarray, float | None, np.ndarray | None]:
        raise NotImplementedError

    def describe(self) -> str:
        return self.kind

    # -- public API ----------------------------------------------------------------------------
    def open(self) -> FrameSource:
        if not self._opened:
            self._open_with_backoff(first=True)
        return self

    def close(self) -> None:
        if self._opened:
            self._opened = False
            self._close()

    def __enter__(self) -> FrameSource:
        return self.open()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __iter__(self) -> Iterator[Frame]:
        self.open()
        while True:
            try:
                yield self.read()
            except SourceEnded:
                return

    def read(self) -> Frame:
        """The next frame. On a transient failure the source closes, reopens at once, then
        keeps trying (open and grab) after each backoff delay; when the delays run out it raises
        :class:`SourceUnavailable` naming the last failure."""
        if not self._opened:
            self.open()
        delays = self.backoff.delays()
        immediate = True
        while True:
            try:
                if not self._opened:
                    self._open()
                    self._opened = True
                    self.reopens += 1
                image, ts, lores = self._grab()
                break
            except (SourceCorrupt, SourceEnded):
                raise
            except SourceError as exc:
                last = exc
            self._opened = False
            try:
                self._close()
            except Exception:  # noqa: BLE001 - a half-dead device may fail to close; reopening decides
                pass
            if isinstance(last, SourceStalled) and self.backoff.attempts <= 0:
                raise last  # already waited the capture timeout: the caller reports it, then reopens
            if immediate:
                immediate = False
                continue
            delay = next(delays, None)
            if delay is None:
                raise SourceUnavailable(
                    f"{self.describe()}: gave up after {self.backoff.attempts} reopen attempts: {last}")
            self._sleep(delay)
        frame = Frame(image, self._clock() if ts is None else ts, self._index, lores)
        self._index += 1
        return frame

    def _try_open(self, *, first: bool) -> SourceError | None:
        """One attempt to open: None on success, the error to retry on otherwise.

        A corrupt or finished source is final and raised at once: retrying cannot mend it.
        """
        try:
            self._open()
        except (SourceCorrupt, SourceEnded):
            raise
        except SourceError as exc:
            return exc
        self._opened = True
        if not first:
            self.reopens += 1
        return None

    def _open_with_backoff(self, *, first: bool) -> None:
        last = self._try_open(first=first)
        if last is None:
            return
        if self.backoff.attempts <= 0:
            raise last if isinstance(last, SourceUnavailable) else SourceUnavailable(str(last))
        for delay in self.backoff.delays():
            self._sleep(delay)
            try:
                self._close()
            except Exception:  # noqa: BLE001 - a half-open device may fail to close; reopening decides
                pass
            last = self._try_open(first=first)
            if last is None:
                return
        raise SourceUnavailable(f"{self.describe()}: gave up after {self.backoff.attempts} reopen attempts: {last}")
