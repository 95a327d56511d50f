"""The photos that prove: small crops of a zone kept beside the ledger, each named by its hash.

A revoke, a card out of turn and a host's correction keep the zone as the camera saw it at that
moment (`table.camera_view.CameraView.zone_jpeg`, about 20-40 KB). The ledger event that records
it carries the photo's name, the SHA-256 of its bytes, so the photo can be checked against the
event and the event (hash-chained) cannot be pointed at another photo unnoticed. The files live in
``<ledger>.photos/`` beside the ledger, as the night's deck learning lives in ``<ledger>.deck.npz``;
`table.backup` copies them with each backup and prunes them with it.

Writing is tmp-file, fsync, rename: a power cut leaves a whole photo or none (a missing photo is
shown as missing, the event stands).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from table.contract.pictures import PHOTO_NAME

__all__ = ["PhotoStore", "photos_dir"]


def photos_dir(ledger: Path | str) -> Path:
    """Where a ledger's photos are kept: ``<ledger>.photos`` beside it."""
    p = Path(ledger)
    return p.with_name(p.name + ".photos")


class PhotoStore:
    """Content-addressed JPEG files in one folder (made on the first photo)."""

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)

    @classmethod
    def for_ledger(cls, ledger: Path | str) -> PhotoStore:
        return cls(photos_dir(ledger))

    def path(self, name: str) -> Path:
        if not PHOTO_NAME.match(name):
            raise ValueError(f"{name!r} is not a photo's name (64 hex digits)")
        return self.folder / f"{name}.jpg"

    def save(self, jpeg: bytes) -> str:
        """Keep ``jpeg``; returns its name (the same bytes twice are one file). OSError when the
        disk refuses (the caller goes on without the photo)."""
        name = hashlib.sha256(jpeg).hexdigest()
        target = self.path(name)
        if target.exists():
            return name
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o750)
        tmp = target.with_name(target.name + ".partial")
        with open(tmp, "wb") as fh:
            fh.write(jpeg)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        return name

    def read(self, name: str) -> bytes | None:
        """The photo's bytes, or None when there is none (or the file no longer matches its name)."""
        try:
            data = self.path(name).read_bytes()
        except (OSError, ValueError):
            return None
        return data if hashlib.sha256(data).hexdigest() == name else None

    def names(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        return sorted(p.stem for p in self.folder.glob("*.jpg") if PHOTO_NAME.match(p.stem))
