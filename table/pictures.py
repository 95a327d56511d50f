"""`TablePictures`: the pictures the dashboard is given (`web.create_app(service, pictures=...)`).

It joins the three places pictures come from: the camera view (`table.camera_view.CameraView`),
the pictures the referee keeps with its open alerts (the unsure card's zone, the card out of
turn), and the photos kept beside the ledger (`table.photos.PhotoStore`). Implements
`table.contract.pictures.TablePictures`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from table.camera_view import CameraView, zone_labels
from table.contract.pictures import PHOTO_NAME, Picture

__all__ = ["TablePictures"]


class TablePictures:
    """Thread-safe reads of the camera view, the alerts' pictures and the stored photos."""

    def __init__(self, view: CameraView, *, alert_jpeg: Callable[[int], bytes | None] | None = None,
                 photo_jpeg: Callable[[str], bytes | None] | None = None) -> None:
        self.view = view
        self._alert_jpeg = alert_jpeg
        self._photo_jpeg = photo_jpeg

    def camera_view(self) -> Picture | None:
        return self.view.picture()

    def alert_picture(self, alert_id: int) -> Picture | None:
        jpeg = self._alert_jpeg(alert_id) if self._alert_jpeg is not None else None
        return None if jpeg is None else Picture(jpeg, hashlib.sha256(jpeg).hexdigest()[:16])

    def table_mat(self) -> str | None:
        from vision.geometry import TableLayout
        from vision.mat import mat_svg

        _, watcher = self.view.latest()
        # no camera or not calibrated yet: the default layout for the players, what calibrating will draw
        layout = watcher.layout if watcher is not None else TableLayout.default(min(8, max(2, len(self.view.names()))))
        labels = zone_labels(None, [z.name for z in layout.zones], list(self.view.names()))
        return str(mat_svg(layout, {zone: text for zone, (text, _) in labels.items()}))

    def photo(self, name: str) -> Picture | None:
        if not PHOTO_NAME.match(name) or self._photo_jpeg is None:
            return None
        jpeg = self._photo_jpeg(name)
        return None if jpeg is None else Picture(jpeg, name[:16])
