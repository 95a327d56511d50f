"""Frame sources: one interface (:class:`FrameSource`), five kinds, one factory.

``open_source(config)`` takes the ``[camera]`` table of the config as a plain dict::

    {"source": "picamera2" | "opencv" | "replay" | "synthetic",   # or "kind"
     "device": 0, "width": 1920, "height": 1080, "fps": 15,       # camera kinds
     "controls": {"AeEnable": False, ...},                        # locked controls (picamera2's
                                                                  # libcamera names, opencv's CAP_PROP_*)
     "path": "recording/", "realtime": false,                     # replay
     "seed": 0, "seats": 4, "deals": 1,                           # synthetic
     "hold_s": 4.0}                                               # photos: a folder, each photo held

Nothing heavy is imported until a source of that kind is built (picamera2 only on a Pi).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vision.sources.base import (
    Backoff,
    Frame,
    FrameSource,
    SourceCorrupt,
    SourceEnded,
    SourceError,
    SourceStalled,
    SourceUnavailable,
)

KINDS = ("picamera2", "opencv", "replay", "synthetic", "photos")


def open_source(config: Mapping[str, Any], **inject: Any) -> FrameSource:
    """Build (not yet open) the source a config names; ``inject`` passes test doubles
    (``sleep``, ``clock``, ``capture_factory``, ``module``) through. Unknown kinds and missing
    keys raise ``ValueError`` naming the key."""
    kind = str(config.get("kind") or config.get("source") or "")
    size = (int(config.get("width", 1920)), int(config.get("height", 1080)))
    fps = float(config.get("fps", 15))
    backoff = inject.pop("backoff", None)
    if backoff is None and "reopen_attempts" in config:
        backoff = Backoff(attempts=int(config["reopen_attempts"]))
    if backoff is not None:
        inject["backoff"] = backoff
    if kind == "picamera2":
        from vision.sources.picamera2 import Picamera2Source

        lores = tuple(config.get("lores", (320, 180)))
        return Picamera2Source(camera=int(config.get("device", 0) or 0), size=size, lores=lores,
                               fps=fps, controls=config.get("controls") or None, **inject)
    if kind == "opencv":
        from vision.sources.opencv import OpenCVSource

        device = config.get("device", 0)
        if isinstance(device, str) and device.isdigit():
            device = int(device)
        return OpenCVSource(device, size=size, fps=fps, controls=config.get("controls") or None, **inject)
    if kind == "replay":
        from vision.sources.replay import ReplaySource

        path = config.get("path") or config.get("device")
        if not path or not isinstance(path, str):
            raise ValueError("camera.path: a replay source needs the recording's path")
        return ReplaySource(path, fps=fps, realtime=bool(config.get("realtime", False)),
                            loop=bool(config.get("loop", False)), **inject)
    if kind == "photos":
        from vision.sources.photos import PhotoFolderSource

        folder = config.get("path") or config.get("device")
        if not folder or not isinstance(folder, str):
            raise ValueError("camera.device: a photos source needs the folder of photos")
        return PhotoFolderSource(folder, fps=fps, hold_s=float(config.get("hold_s", 4.0)),
                                 realtime=bool(config.get("realtime", False)), **inject)
    if kind == "synthetic":
        from vision.sources.synthetic import SyntheticSource

        return SyntheticSource(seed=int(config.get("seed", 0)), seats=int(config.get("seats", 4)),
                               deals=int(config.get("deals", 1)), fps=fps, size=size,
                               deck=config.get("deck") or None, realtime=bool(config.get("realtime", False)),
                               **inject)
    raise ValueError(f"camera.source: unknown kind {kind!r} (expected one of {', '.join(KINDS)})")


__all__ = ["Backoff", "Frame", "FrameSource", "KINDS", "SourceCorrupt", "SourceEnded", "SourceError",
           "SourceStalled", "SourceUnavailable", "open_source"]
