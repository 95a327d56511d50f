"""The camera's view for the host: the latest frame, drawn with the zones and the cards as read.

The camera thread hands every frame it has read to :meth:`CameraView.offer`, which only keeps a
reference (and, while a host is watching, the watcher's reading of each zone): no copy, no
drawing, no encoding on the camera's or the referee's thread. The picture itself is made when a
host's phone asks for it (:meth:`picture`), on the web server's thread, at most once per
``interval_s`` however many phones ask, so the cost is one shrink, a few lines and one JPEG a
second (``bench/camera_view.py`` measures it). :meth:`zone_jpeg` cuts one zone out of the latest
frame for the unsure card's picture and the photo that proves a revoke.

A frame is never written to: the watcher reads the same array.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from table.contract.pictures import Picture
from vision.event_types import ZoneContent, ZoneId

if TYPE_CHECKING:  # the vision stack (OpenCV) loads only where a picture is made
    import numpy as np
    from numpy.typing import NDArray

    from vision.geometry import Calibration, TableLayout

__all__ = ["CameraView", "zone_labels"]



class ReadsZones(Protocol):
    """The watcher as the view draws it (`vision.events.TableWatcher`): where the zones lie in
    the picture and what it holds as lying in each."""

    @property
    def layout(self) -> TableLayout: ...

    @property
    def calibration(self) -> Calibration: ...

    def contents(self) -> Mapping[str, ZoneContent]: ...


#: how long after a host's last request the camera thread keeps the zones' readings
WATCH_S = 5.0


def zone_labels(contents: Mapping[str, ZoneContent] | None, zones: Sequence[str],
                names: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Each zone's label on the camera view: whose place it is and what the camera reads there, a
    card by its name and ``?`` for each card it is unsure of (``"Ann: 7H ?"``), with how sure
    (``sure``, ``unsure``, ``empty``) for the outline's colour. ``contents`` is
    `vision.events.TableWatcher.contents()` (None: not known yet, the places are named only)."""
    out: dict[str, tuple[str, str]] = {}
    for zone in zones:
        seat = ZoneId.seat_of(zone)
        if seat is not None:
            place = names[seat] if seat < len(names) else f"seat {seat + 1}"
        else:
            place = zone.replace("_", "-")
        c = (contents or {}).get(zone)
        if not c:
            out[zone] = (place, "empty")
            continue
        parts = [str(f) for f in c.get("faces", ())]
        parts += ["?"] * int(c.get("unsure", 0))
        down = int(c.get("face_down", 0))
        if down:
            parts.append(f"{down} face down")
        if c.get("obstructed"):
            parts.append("(in the way)")
        how = "unsure" if c.get("unsure") else ("sure" if parts else "empty")
        out[zone] = (f"{place}: {' '.join(parts)}" if parts else place, how)
    return out


class CameraView:
    """The latest frame and the pictures made from it; thread-safe.

    ``names()`` gives the players in seat order (a seat's zone is labelled with its player);
    ``interval_s`` is the longest a picture is reused; ``max_width`` and ``quality`` size the
    camera view's JPEG (a phone's screen, not the sensor's full size)."""

    def __init__(self, *, names: Callable[[], Sequence[str]] = lambda: (), interval_s: float = 1.0,
                 max_width: int = 960, quality: int = 70, clock: Callable[[], float] = time.monotonic) -> None:
        self.names = names
        self.interval_s = interval_s
        self.max_width = max_width
        self.quality = quality
        self.clock = clock
        self._lock = threading.Lock()  # the latest frame, swapped by the camera thread
        self._render = threading.Lock()  # one picture made at a time; the others wait for it
        self._frame: NDArray[np.uint8] | None = None
        self._watcher: ReadsZones | None = None
        self._contents: Mapping[str, ZoneContent] | None = None
        self._count = 0
        self._asked = float("-inf")
        self._made: tuple[float, int, Picture] | None = None
        self.rendered = 0  # pictures made (the benchmark and the tests count them)

    # -- the camera thread -----------------------------------------------------------------------
    def watching(self) -> bool:
        """A host asked for the view in the last few seconds."""
        return self.clock() - self._asked < WATCH_S

    def offer(self, image: NDArray[np.uint8], watcher: ReadsZones | None) -> None:
        """The frame just read and the watcher that read it (its layout, calibration and readings)."""
        contents = watcher.contents() if watcher is not None and self.watching() else None
        with self._lock:
            self._frame = image
            self._watcher = watcher
            self._contents = contents
            self._count += 1

    # -- any other thread ------------------------------------------------------------------------
    def latest(self) -> tuple[NDArray[np.uint8] | None, ReadsZones | None]:
        """(the latest frame, its watcher), or (None, None) before the first frame."""
        with self._lock:
            return self._frame, self._watcher

    def picture(self) -> Picture | None:
        """The camera view (None before the first frame); reused for ``interval_s``."""
        from vision.overlay import draw_zones, encode_jpeg, fit_width

        now = self.clock()
        self._asked = now
        with self._render:
            made = self._made
            if made is not None and now - made[0] < self.interval_s:
                return made[2]
            with self._lock:
                frame, watcher, contents, count = self._frame, self._watcher, self._contents, self._count
            if frame is None:
                return None
            if made is not None and made[1] == count:  # no new frame since (a stalled camera)
                self._made = (now, count, made[2])
                return made[2]
            if watcher is None:  # not calibrated yet: the picture alone, for finding the markers
                jpeg = encode_jpeg(fit_width(frame, self.max_width)[0], self.quality)
            else:
                layout = watcher.layout
                labels = zone_labels(contents, [z.name for z in layout.zones], list(self.names()))
                jpeg = encode_jpeg(draw_zones(frame, layout, watcher.calibration, labels, max_width=self.max_width),
                                   self.quality)
            pic = Picture(jpeg, hashlib.sha256(jpeg).hexdigest()[:16])
            self._made = (now, count, pic)
            self.rendered += 1
            return pic

    def zone_jpeg(self, zone: str, *, px_per_mm: float = 2.0, quality: int = 80) -> bytes | None:
        """The zone cut out of the latest frame, straightened (None: no frame, or no such zone)."""
        from vision.overlay import encode_jpeg, zone_crop

        frame, watcher = self.latest()
        if frame is None or watcher is None:
            return None
        try:
            z = watcher.layout.zone(zone)
        except KeyError:
            return None
        return encode_jpeg(zone_crop(frame, watcher.calibration, z, px_per_mm=px_per_mm), quality)
