"""Reading a file the user named, within a memory bound, never waiting on a pipe; writing one durably.

Why: ``Path.read_text`` on a FIFO waits forever for a writer, on ``/dev/zero`` reads until memory
runs out, and on a 4 GB file loads 4 GB. A command that reads a config, a records file or a photo
opens it without blocking, checks that it is a regular file and no larger than the command's
limit, and only then reads (at most that limit, whatever the file grows to meanwhile).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


class FileRefused(ValueError):
    """A file that is not read; ``str()`` is one line naming it and why."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "named pipe (FIFO)"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"), (stat.S_ISDIR, "folder")):
        if test(mode):
            return name
    return "special file"


def read_limited(path: str | Path, limit: int) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit`` of them), or ``FileRefused`` for a
    FIFO, a device, a folder or a file over ``limit``; ``OSError`` when it cannot be opened."""
    # O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(f"{path}: is a {_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise FileRefused(f"{path}: {info.st_size:,} bytes is more than the {limit:,} this command reads")
        os.set_blocking(fd, True)
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise FileRefused(f"{path}: grew past the {limit:,} bytes this command reads while it was read")
        return data
    finally:
        os.close(fd)


def fsync_dir(folder: Path) -> None:
    """Make ``folder``'s entries durable: a file created, renamed or replaced in it survives a power
    cut only once the folder itself is synced, not just the file."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_private(path: Path, text: str) -> None:
    """A 0600 file replaced atomically and durably (file and folder synced): a power cut leaves the
    old file or the new one, never half of one, and never loses the new one once this returns."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)
