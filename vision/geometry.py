"""Table geometry: the camera image ↔ table-plane homography and the zones, in table millimetres.

Why millimetres: a card is 63 × 88 mm whatever the camera height, so working in the table plane
gives every zone a known card size in pixels after rectification, which is the strongest check we
have against hands, shadows and half-seen cards. The table frame is fixed by the four ArUco markers
(see :mod:`vision.calibration`): the origin is the centre of marker 0 (top left as seen by the
camera), x runs towards marker 1, y towards marker 3.

Everything here (de)serialises to plain dicts so it can live in the TOML config or a JSON file.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vision.event_types import ZoneId

#: Size of a standard (poker) playing card in millimetres: width, height.
CARD_MM: tuple[float, float] = (63.0, 88.0)


class GeometryError(ValueError):
    """A calibration or layout is malformed or degenerate; the message names what is wrong."""


def _as_h(matrix: Any) -> np.ndarray:
    h = np.asarray(matrix, dtype=np.float64)
    if h.shape != (3, 3) or not np.all(np.isfinite(h)):
        raise GeometryError(f"homography must be a finite 3×3 matrix, got shape {h.shape}")
    if abs(np.linalg.det(h)) < 1e-12:
        raise GeometryError("homography is singular")
    return h


def apply_h(h: np.ndarray, points: Any) -> np.ndarray:
    """Map N×2 points through a homography (numpy, no OpenCV needed)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    homo = np.hstack([pts, np.ones((len(pts), 1))]) @ h.T
    w = homo[:, 2:3]
    if np.any(np.abs(w) < 1e-12):
        raise GeometryError("point maps to infinity (behind the camera?)")
    mapped: np.ndarray = homo[:, :2] / w
    return mapped


@dataclass(frozen=True)
class Calibration:
    """Maps table millimetres to image pixels (``table_to_image``) and back.

    ``residual_px`` is the RMS reprojection error of the points it was fitted on (0 for four
    user-marked corners, which fit exactly); ``method`` says how it was made (``aruco``,
    ``corners``, ``synthetic``).
    """

    table_to_image: np.ndarray
    image_size: tuple[int, int]  # (width, height)
    table_size_mm: tuple[float, float]  # (width, height): marker centre to marker centre
    method: str = "corners"
    residual_px: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "table_to_image", _as_h(self.table_to_image))
        w, h = self.image_size
        if w <= 0 or h <= 0:
            raise GeometryError(f"image size must be positive, got {self.image_size}")
        tw, th = self.table_size_mm
        if tw <= 0 or th <= 0:
            raise GeometryError(f"table size must be positive, got {self.table_size_mm}")

    @property
    def image_to_table(self) -> np.ndarray:
        return np.linalg.inv(self.table_to_image)

    def to_image(self, points_mm: Any) -> np.ndarray:
        return apply_h(self.table_to_image, points_mm)

    def to_table(self, points_px: Any) -> np.ndarray:
        return apply_h(self.image_to_table, points_px)

    @classmethod
    def from_corners(
        cls,
        corners_px: Any,
        table_size_mm: tuple[float, float],
        image_size: tuple[int, int],
        *,
        method: str = "corners",
    ) -> Calibration:
        """Four image points (top-left, top-right, bottom-right, bottom-left of the table frame)."""
        src = np.asarray(corners_px, dtype=np.float64).reshape(-1, 2)
        if src.shape != (4, 2):
            raise GeometryError(f"need exactly four corner points, got {len(src)}")
        tw, th = table_size_mm
        dst = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], dtype=np.float64)
        h = homography(dst, src)
        return cls(h, image_size, (float(tw), float(th)), method=method, residual_px=0.0)

    def card_height_px(self, center_mm: tuple[float, float]) -> float:
        """How tall (pixels) an upright card lying at ``center_mm`` appears in the image."""
        cx, cy = center_mm
        _, ch = CARD_MM
        top, bottom = self.to_image([[cx, cy - ch / 2], [cx, cy + ch / 2]])
        return float(np.linalg.norm(bottom - top))

    def to_dict(self) -> dict[str, Any]:
        return {
            "table_to_image": [[float(v) for v in row] for row in self.table_to_image],
            "image_size": list(self.image_size),
            "table_size_mm": list(self.table_size_mm),
            "method": self.method,
            "residual_px": round(float(self.residual_px), 4),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        try:
            return cls(
                np.asarray(data["table_to_image"], dtype=np.float64),
                (int(data["image_size"][0]), int(data["image_size"][1])),
                (float(data["table_size_mm"][0]), float(data["table_size_mm"][1])),
                method=str(data.get("method", "corners")),
                residual_px=float(data.get("residual_px", 0.0)),
            )
        except (KeyError, TypeError, IndexError, ValueError) as exc:
            if isinstance(exc, GeometryError):
                raise
            raise GeometryError(f"calibration: malformed ({type(exc).__name__}: {exc})") from None


def homography(src: Any, dst: Any) -> np.ndarray:
    """Least-squares homography mapping ``src`` to ``dst`` (N ≥ 4 point pairs), by the DLT.

    Hand-written (30 lines of numpy) so that geometry needs no OpenCV and stays testable alone;
    :mod:`vision.calibration` uses ``cv2.findHomography`` where OpenCV is loaded anyway.
    """
    s = np.asarray(src, dtype=np.float64).reshape(-1, 2)
    d = np.asarray(dst, dtype=np.float64).reshape(-1, 2)
    if len(s) < 4 or len(s) != len(d):
        raise GeometryError("a homography needs at least four point pairs")

    def norm(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = p.mean(axis=0)
        scale = math.sqrt(2) / max(float(np.mean(np.linalg.norm(p - c, axis=1))), 1e-12)
        t = np.array([[scale, 0, -scale * c[0]], [0, scale, -scale * c[1]], [0, 0, 1]])
        return apply_h(t, p), t

    sn, ts = norm(s)
    dn, td = norm(d)
    rows = []
    for (x, y), (u, v) in zip(sn, dn, strict=True):
        rows.append([-x, -y, -1, 0, 0, 0, u * x, u * y, u])
        rows.append([0, 0, 0, -x, -y, -1, v * x, v * y, v])
    _, sv, vt = np.linalg.svd(np.asarray(rows))
    if sv[-2] < 1e-9:
        raise GeometryError("points are degenerate (three in a line?)")
    hn = vt[-1].reshape(3, 3)
    h = np.linalg.inv(td) @ hn @ ts
    return _as_h(h / h[2, 2])


@dataclass(frozen=True)
class Zone:
    """An axis-aligned rectangle on the table, in millimetres: ``(x, y)`` is its top-left corner.

    A card belongs to the zone that contains its centre, so zones may touch but should not overlap.
    """

    name: str
    x: float
    y: float
    width: float
    height: float

    def __post_init__(self) -> None:
        if not self.name:
            raise GeometryError("zone name must not be empty")
        if self.width < CARD_MM[0] or self.height < CARD_MM[0]:
            raise GeometryError(f"zone {self.name}: {self.width}×{self.height} mm is smaller than a card")

    @property
    def center(self) -> tuple[float, float]:
        return (self.x + self.width / 2, self.y + self.height / 2)

    def corners(self, margin: float = 0.0) -> np.ndarray:
        """4×2 corners (clockwise from top left), grown by ``margin`` mm on every side."""
        x0, y0 = self.x - margin, self.y - margin
        x1, y1 = self.x + self.width + margin, self.y + self.height + margin
        return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)

    def overlaps(self, other: Zone) -> bool:
        """Whether the two rectangles share any area (touching edges do not count)."""
        return (self.x < other.x + other.width and other.x < self.x + self.width
                and self.y < other.y + other.height and other.y < self.y + self.height)

    def contains(self, point_mm: tuple[float, float]) -> bool:
        px, py = point_mm
        return self.x <= px < self.x + self.width and self.y <= py < self.y + self.height

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "x": self.x, "y": self.y, "width": self.width, "height": self.height}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Zone:
        try:
            return cls(str(data["name"]), float(data["x"]), float(data["y"]),
                       float(data["width"]), float(data["height"]))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, GeometryError):
                raise
            raise GeometryError(f"zone: malformed ({type(exc).__name__}: {exc})") from None


@dataclass(frozen=True)
class TableLayout:
    """The zones of a table: ``seat:0`` … ``seat:N-1``, ``turn_up`` and ``stock``."""

    width_mm: float
    height_mm: float
    zones: tuple[Zone, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        names = [z.name for z in self.zones]
        if len(set(names)) != len(names):
            raise GeometryError("zone names must be unique")
        for a in range(len(self.zones)):
            for b in range(a + 1, len(self.zones)):
                za, zb = self.zones[a], self.zones[b]
                if za.overlaps(zb):
                    raise GeometryError(f"zones {za.name} and {zb.name} overlap")

    def zone(self, name: str) -> Zone:
        for z in self.zones:
            if z.name == name:
                return z
        raise KeyError(name)

    @property
    def seats(self) -> list[Zone]:
        seated = [(seat, z) for z in self.zones if (seat := ZoneId.seat_of(z.name)) is not None]
        return [z for _, z in sorted(seated, key=lambda pair: pair[0])]

    def zone_at(self, point_mm: tuple[float, float]) -> Zone | None:
        for z in self.zones:
            if z.contains(point_mm):
                return z
        return None

    @classmethod
    def default(cls, seats: int, *, width_mm: float = 800.0, height_mm: float = 800.0,
                zone_mm: tuple[float, float] = (120.0, 120.0)) -> TableLayout:
        """Seats evenly round an ellipse (seat 0 at the bottom, clockwise as seen from above),
        the turn-up spot and the stock side by side in the middle."""
        if not 2 <= seats <= 8:
            raise GeometryError(f"seats must be 2..8, got {seats}")
        zw, zh = zone_mm
        cx, cy = width_mm / 2, height_mm / 2
        zones = _seat_spots(seats, width_mm, height_mm, zone_mm)
        zones.append(Zone("turn_up", round(cx - zw - 5, 1), round(cy - zh / 2, 1), zw, zh))
        zones.append(Zone("stock", round(cx + 5, 1), round(cy - zh / 2, 1), zw, zh))
        return cls(width_mm, height_mm, tuple(zones))

    def with_seats(self, seats: int, *, step_mm: float = 10.0) -> TableLayout:
        """This layout with a zone for each of ``seats`` seats: the zones there are stay where they
        are (a host may have moved them by hand), and each missing seat's zone goes where the
        default layout for that many seats puts it, or, where that spot is taken, to the free spot
        on the table nearest to it (searched on a ``step_mm`` grid). GeometryError when the table
        has no room left for a zone of that size."""
        if not 2 <= seats <= 8:
            raise GeometryError(f"seats must be 2..8, got {seats}")
        have = {z.name for z in self.zones}
        size = (self.seats[0].width, self.seats[0].height) if self.seats else (120.0, 120.0)
        zones = list(self.zones)
        for ideal in _seat_spots(seats, self.width_mm, self.height_mm, size):
            if ideal.name in have:
                continue
            zones.append(self._free_spot(ideal, zones, step_mm))
        return TableLayout(self.width_mm, self.height_mm, tuple(zones))

    def _free_spot(self, ideal: Zone, zones: list[Zone], step_mm: float) -> Zone:
        """``ideal`` moved to the nearest place on the table where it overlaps none of ``zones``."""
        xs = np.arange(0.0, self.width_mm - ideal.width + 1e-6, step_mm)
        ys = np.arange(0.0, self.height_mm - ideal.height + 1e-6, step_mm)
        spots = [Zone(ideal.name, round(float(x), 1), round(float(y), 1), ideal.width, ideal.height)
                 for x in [ideal.x, *xs] for y in [ideal.y, *ys]
                 if 0 <= x <= self.width_mm - ideal.width and 0 <= y <= self.height_mm - ideal.height]
        free = [z for z in spots if not any(z.overlaps(other) for other in zones)]
        if not free:
            raise GeometryError(f"no room on the {self.width_mm:g}×{self.height_mm:g} mm table for {ideal.name}")
        return min(free, key=lambda z: math.hypot(z.x - ideal.x, z.y - ideal.y))

    def to_dict(self) -> dict[str, Any]:
        return {"width_mm": self.width_mm, "height_mm": self.height_mm,
                "zones": [z.to_dict() for z in self.zones]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TableLayout:
        try:
            zones = tuple(Zone.from_dict(z) for z in data["zones"])
            return cls(float(data["width_mm"]), float(data["height_mm"]), zones)
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, GeometryError):
                raise
            raise GeometryError(f"layout: malformed ({type(exc).__name__}: {exc})") from None


def _seat_spots(seats: int, width_mm: float, height_mm: float, zone_mm: tuple[float, float]) -> list[Zone]:
    """The default seat zones: evenly round an ellipse, seat 0 at the bottom, clockwise."""
    zw, zh = zone_mm
    cx, cy = width_mm / 2, height_mm / 2
    rx, ry = width_mm / 2 - zw * 0.5 - 60, height_mm / 2 - zh * 0.5 - 60
    zones = []
    for i in range(seats):
        a = math.pi / 2 + 2 * math.pi * i / seats  # y grows downwards: pi/2 is the bottom
        zx, zy = cx + rx * math.cos(a), cy + ry * math.sin(a)
        zones.append(Zone(str(ZoneId.of_seat(i)), round(zx - zw / 2, 1), round(zy - zh / 2, 1), zw, zh))
    return zones


def order_card_corners(corners: Iterable[Iterable[float]]) -> np.ndarray:
    """Order four corners of a card clockwise from its top-left *in portrait*.

    The long sides become the vertical ones; of the two portrait orientations (180° apart, which
    a card does not distinguish) we take the one whose top edge is higher in the source frame.
    """
    pts = np.asarray(list(corners), dtype=np.float64).reshape(4, 2)
    c = pts.mean(axis=0)
    ang = np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])
    pts = pts[np.argsort(ang)]  # clockwise in image coordinates (y down), starting anywhere
    # make edge 0→1 a short side (the top of a portrait card)
    if np.linalg.norm(pts[1] - pts[0]) > np.linalg.norm(pts[2] - pts[1]):
        pts = np.roll(pts, -1, axis=0)
    # of the two short sides, start at the one nearer the top
    if (pts[2, 1] + pts[3, 1]) < (pts[0, 1] + pts[1, 1]):
        pts = np.roll(pts, -2, axis=0)
    return pts
