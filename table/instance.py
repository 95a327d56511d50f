"""One running table per ledger: an exclusive lock beside the ledger while a table runs on it.

Two controllers on one ledger would each keep the game in memory and append their own events,
and a restore or a deck reset under a running table is overwritten by what it still holds. So
`loo-table run` and the demo hold ``<ledger>.lock`` (an ``fcntl.flock``, with the holder's pid
written in it) for as long as they run, and the commands that must not run beside them ask
:func:`running_pid` first. The kernel drops a flock when its process ends however it ends (a
crash, a power cut, ``kill -9``), so a lock is never left stale and nobody has to delete it.

Example:
    >>> import os
    >>> lock = TableLock(tmp_path / "ledger.db")
    >>> with lock:
    ...     running_pid(tmp_path / "ledger.db") == os.getpid()
    True
    >>> running_pid(tmp_path / "ledger.db") is None
    True
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

__all__ = ["TableInUse", "TableLock", "lock_path", "running_pid"]


class TableInUse(RuntimeError):
    """Another process runs a table on this ledger; ``pid`` is its process id (0: unknown)."""

    def __init__(self, ledger: Path, pid: int) -> None:
        who = f"pid {pid}" if pid else "another process"
        super().__init__(f"{ledger} is in use by a running table ({who})")
        self.pid = pid


def lock_path(ledger: Path | str) -> Path:
    """The lock file of a ledger: ``<ledger>.lock`` beside it."""
    p = Path(ledger)
    return p.with_name(p.name + ".lock")


def _holder(fh: IO[str]) -> int:
    fh.seek(0)
    text = fh.read().strip()
    return int(text) if text.isdigit() else 0


class TableLock:
    """The lock a running table holds on its ledger (a context manager). ``acquire`` raises
    :class:`TableInUse` at once when another process holds it; it never waits."""

    def __init__(self, ledger: Path | str) -> None:
        self.ledger = Path(ledger)
        self.path = lock_path(self.ledger)
        self._fh: IO[str] | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+", encoding="ascii")  # noqa: SIM115 - held open while the table runs
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _holder(fh)
            fh.close()
            raise TableInUse(self.ledger, pid) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        """Let go (the file stays: deleting it could race with another process taking it)."""
        if self._fh is not None:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None

    close = release  # a part the controller closes on the way out

    def __enter__(self) -> TableLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def running_pid(ledger: Path | str) -> int | None:
    """The pid of the table running on ``ledger`` (0 when its pid is unreadable), or None when
    no table runs on it. Asked without waiting and without leaving anything behind."""
    path = lock_path(ledger)
    try:
        fh = open(path, encoding="ascii")  # noqa: SIM115
    except FileNotFoundError:
        return None
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder(fh)
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        return None
