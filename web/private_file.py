"""The dashboard's secrets on disk (the session key, the PIN's hash, the open admin sessions).

Written here rather than with ``table.files.write_private`` because the web layer imports nothing
of ``table`` but its contract (``tests/vision/test_labels.py``)."""

from __future__ import annotations

import os
from pathlib import Path


def write_private(path: Path, text: str) -> None:
    """Write a 0600 file atomically (a power cut leaves the old file or the new one), making its
    folder first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
