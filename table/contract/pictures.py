"""The pictures the dashboard may show the host: the camera's view of the table, the unsure
card's picture, and the photos that prove a revoke, a card out of turn or a correction.

A protocol of its own beside `table.contract.service.TableService` because pictures are bytes, not
JSON, and a table without a camera (the dashboard's tests, a controller whose camera never came)
has none: `web.create_app(service, pictures=None)` then answers "no picture" instead. Nothing here
imports Flask, OpenCV or numpy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["PHOTO_NAME", "Picture", "TablePictures"]

#: a stored photo's name: the SHA-256 of its JPEG bytes, 64 lowercase hex digits
PHOTO_NAME = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True, slots=True)
class Picture:
    """A JPEG and a tag that changes whenever the picture does (the HTTP ETag)."""

    jpeg: bytes
    tag: str


@runtime_checkable
class TablePictures(Protocol):
    """What the controller gives the dashboard's picture routes; thread-safe like the service."""

    def camera_view(self) -> Picture | None:
        """The table as the camera sees it now, the zones drawn and each card as read; None when
        no frame has come yet. Made at most about once a second however many ask."""
        ...

    def alert_picture(self, alert_id: int) -> Picture | None:
        """The picture kept with an alert (the zone of the card the camera is unsure of, the card
        out of turn, the revoke), or None."""
        ...

    def photo(self, name: str) -> Picture | None:
        """A stored photo by its name (`PHOTO_NAME`), or None when there is none."""
        ...

    def table_mat(self) -> str | None:
        """The printable mat of the table as the camera watches it now (SVG at real size: the
        markers and the zones, labelled with the players); before the camera is calibrated, the
        default layout for the players (what calibrating will draw). None: no mat to give."""
        ...
