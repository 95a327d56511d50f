"""Raspberry Pi camera sensor modes and which one the picamera2 source asks for.

Standard library only: `deploy/camera_geometry.py` loads this file by path on a bare Pi, so the
field of view it prints comes from the same choice the camera source makes.

picamera2 left to itself picks the mode from the output size alone: on a Camera Module 3 a 1280×720
output gets the 1536×864 mode, which reads only the middle two thirds of the sensor. The source asks
instead for the smallest mode that sees the whole sensor, is at least the output size and keeps up
with the frame rate; the ISP scales it down at no CPU cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# Picamera2.sensor_modes as the cameras report them (size, fastest frame rate, the sensor area the
# mode reads as x, y, width, height), trimmed to what the choice uses.
IMX708_MODES: list[dict[str, Any]] = [  # Camera Module 3 and 3 Wide
    {"bit_depth": 10, "size": (1536, 864), "fps": 120.13, "crop_limits": (768, 432, 3072, 1728)},
    {"bit_depth": 10, "size": (2304, 1296), "fps": 56.03, "crop_limits": (0, 0, 4608, 2592)},
    {"bit_depth": 10, "size": (4608, 2592), "fps": 14.35, "crop_limits": (0, 0, 4608, 2592)},
]
IMX219_MODES: list[dict[str, Any]] = [  # Camera Module 2
    {"bit_depth": 10, "size": (640, 480), "fps": 103.33, "crop_limits": (1000, 752, 1280, 960)},
    {"bit_depth": 10, "size": (1640, 1232), "fps": 41.85, "crop_limits": (0, 0, 3280, 2464)},
    {"bit_depth": 10, "size": (1920, 1080), "fps": 47.57, "crop_limits": (680, 692, 1920, 1080)},
    {"bit_depth": 10, "size": (3280, 2464), "fps": 21.19, "crop_limits": (0, 0, 3280, 2464)},
]


def _view(mode: Mapping[str, Any]) -> int:
    crop = mode["crop_limits"]
    return int(crop[2]) * int(crop[3])


def _area(mode: Mapping[str, Any]) -> int:
    return int(mode["size"][0]) * int(mode["size"][1])


def full_view_mode(modes: Sequence[Mapping[str, Any]], size: tuple[int, int], fps: float) -> Mapping[str, Any] | None:
    """The smallest mode that sees the whole sensor (the largest area any mode reads), is at least
    ``size`` and runs at ``fps``; if none is that big, the largest such mode. None when ``modes``
    say nothing usable (a USB camera through libcamera), which leaves picamera2 to choose."""
    usable = [m for m in modes if "size" in m and "crop_limits" in m]
    if not usable:
        return None
    widest = max(_view(m) for m in usable)
    full = [m for m in usable if _view(m) == widest]
    fast = [m for m in full if float(m.get("fps", fps)) >= fps] or full
    big = [m for m in fast if m["size"][0] >= size[0] and m["size"][1] >= size[1]]
    return min(big, key=_area) if big else max(fast, key=_area)
