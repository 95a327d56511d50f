"""Ledger backups with SQLite's online backup API: take, rotate, list, verify, restore.

Why the backup API and never a file copy: the controller keeps the ledger open in WAL mode, so the
committed state is spread over ``ledger.db`` and ``ledger.db-wal``; copying the files while a write
is in flight can capture a torn page. ``sqlite3.Connection.backup`` copies a consistent snapshot
page by page while the table keeps running.

Each backup is written to a ``.partial`` file, checked with ``PRAGMA integrity_check``, flushed to
disk, and only then renamed to ``ledger-YYYYmmddTHHMMSSZ.db``: a power cut mid-backup leaves at most
a stray ``.partial`` (removed by the next run) and never a half-written file that looks complete.
Backups live by default in ``backups/`` next to the ledger (``/var/lib/loo-table/backups`` on the Pi).

The photos that prove a revoke, a card out of turn or a correction (`table.photos`, beside the
ledger) go with each backup: ``ledger-STAMP.photos/`` beside ``ledger-STAMP.db``, hard links where
the file system allows (a photo never changes: it is named by its hash), complete before the
backup's database appears. Rotating removes a backup's photos with it; restoring brings them back.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

from table.backup_files import (  # the folder's names, re-exported from here too
    _STAMP,
    BACKUP_DIRNAME,
    BackupInfo,
    _created_from_name,
    default_backup_dir,
    latest_backup,
    list_backups,
    recovery_hint,
    restore_command,
)
from table.files import fsync_dir
from table.ledger import Ledger, LedgerError
from table.photos import photos_dir

__all__ = ["BACKUP_DIRNAME", "DEFAULT_KEEP", "BackupError", "BackupInfo", "backup_database", "backup_photos", "check_database",
           "default_backup_dir", "find_backup", "latest_backup", "list_backups", "recovery_hint",
           "restore_backup", "restore_command", "rotate"]

DEFAULT_KEEP = 7


class BackupError(Exception):
    """A backup or restore that could not be done; the message is one line naming the file."""


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def check_database(path: Path | str) -> str:
    """Return ``"ok"`` or SQLite's first complaint about the file (never raises for corruption)."""
    path = Path(path)
    if not path.is_file():
        return "file not found"
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        con.text_factory = lambda raw: raw.decode("utf-8", errors="replace")  # SQLite may quote bad bytes
        try:
            rows = con.execute("PRAGMA integrity_check").fetchall()
        finally:
            con.close()
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        return str(exc)
    return "ok" if rows == [("ok",)] else "; ".join(str(r[0]) for r in rows[:3])


def backup_photos(backup: Path | str) -> Path:
    """Where a backup's photos are: ``ledger-STAMP.photos`` beside ``ledger-STAMP.db``."""
    return Path(backup).with_suffix(".photos")


def _copy_photos(source: Path, target: Path) -> None:
    """Every photo of ``source`` into ``target`` (made), linked where possible, else copied."""
    target.mkdir(parents=True, exist_ok=True, mode=0o750)
    for photo in sorted(source.glob("*.jpg")):
        dest = target / photo.name
        if dest.exists():
            continue
        try:
            os.link(photo, dest)
        except OSError:  # another file system (a backup folder on a USB stick): a copy
            shutil.copy2(photo, dest)


def rotate(backup_dir: Path | str, keep: int = DEFAULT_KEEP) -> list[Path]:
    """Delete all but the newest ``keep`` backups, their photos with them (and stray ``.partial``
    files and photos no backup has); return what went."""
    if keep < 1:
        raise BackupError(f"keep must be at least 1, got {keep}")
    backup_dir = Path(backup_dir)
    removed: list[Path] = []
    for info in list_backups(backup_dir)[keep:]:
        info.path.unlink()
        removed.append(info.path)
    if backup_dir.is_dir():
        for stray in backup_dir.glob("ledger-*.db.partial"):
            stray.unlink()
            removed.append(stray)
        kept = {backup_photos(info.path).name for info in list_backups(backup_dir)}
        for folder in backup_dir.glob("ledger-*.photos*"):
            if folder.is_dir() and folder.name not in kept:
                shutil.rmtree(folder)
                removed.append(folder)
    return removed


def _target_name(backup_dir: Path, now: dt.datetime) -> Path:
    stamp = now.astimezone(dt.UTC).strftime(_STAMP)
    target = backup_dir / f"ledger-{stamp}.db"
    seq = 1
    while target.exists():
        target = backup_dir / f"ledger-{stamp}-{seq}.db"
        seq += 1
    return target


def backup_database(
    db_path: Path | str,
    backup_dir: Path | str | None = None,
    *,
    keep: int = DEFAULT_KEEP,
    clock: Callable[[], dt.datetime] = _utcnow,
) -> BackupInfo:
    """Take one consistent backup of the ledger, verify it, then keep only the newest ``keep``."""
    db_path = Path(db_path)
    if not db_path.is_file():
        raise BackupError(f"no ledger to back up at {db_path}")
    target_dir = Path(backup_dir) if backup_dir is not None else default_backup_dir(db_path)
    target_dir.mkdir(parents=True, exist_ok=True, mode=0o750)
    target = _target_name(target_dir, clock())
    partial = target.with_name(target.name + ".partial")
    try:
        src = sqlite3.connect(db_path)
        try:
            dst = sqlite3.connect(partial)
            try:
                src.backup(dst)
                # The copy is a plain rollback-journal file: one file, nothing to lose beside it.
                dst.execute("PRAGMA journal_mode=DELETE")
                verdict = dst.execute("PRAGMA integrity_check").fetchall()
            finally:
                dst.close()
        finally:
            src.close()
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        partial.unlink(missing_ok=True)
        raise BackupError(f"cannot back up {db_path}: {exc}") from exc
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise BackupError(f"cannot write backup {partial}: {exc.strerror or exc}") from exc
    if verdict != [("ok",)]:
        partial.unlink(missing_ok=True)
        raise BackupError(f"backup of {db_path} failed its integrity check: {verdict[0][0]}")
    with open(partial, "rb+") as fh:
        os.fsync(fh.fileno())
    photos = photos_dir(db_path)
    if photos.is_dir():  # the photos first: a backup that shows is a backup with its photos
        building = backup_photos(target).with_name(backup_photos(target).name + ".partial")
        try:
            _copy_photos(photos, building)
            os.replace(building, backup_photos(target))
        except OSError as exc:
            partial.unlink(missing_ok=True)
            shutil.rmtree(building, ignore_errors=True)
            raise BackupError(f"cannot copy the photos {photos} into {target_dir}: {exc.strerror or exc}") from exc
    os.replace(partial, target)
    fsync_dir(target_dir)
    rotate(target_dir, keep)
    return BackupInfo(target, _created_from_name(target), target.stat().st_size)


def _set_aside_name(db_path: Path, stamp: str) -> Path:
    """``<ledger>.replaced-<stamp>``, or with ``-2``, ``-3``... when a restore in the same second
    already used it (one of those files, its WAL included, is never overwritten)."""
    n = 1
    while True:
        moved = db_path.with_name(f"{db_path.name}.replaced-{stamp}" + (f"-{n}" if n > 1 else ""))
        if not any(Path(f"{moved}{s}").exists() for s in ("", "-wal", "-shm")):
            return moved
        n += 1


def restore_backup(
    backup: Path | str, db_path: Path | str, *, clock: Callable[[], dt.datetime] = _utcnow,
    another_night: bool = False,
) -> Path | None:
    """Replace the ledger with ``backup``; the old files are moved aside, never deleted.

    Run only while the controller is stopped. Returns where the old ledger was moved (None when
    there was none). The backup is checked first, so a bad backup leaves the ledger untouched; a
    backup of another night than the ledger's is refused unless ``another_night``.
    """
    from table.night import night_of_file

    backup, db_path = Path(backup), Path(db_path)
    verdict = check_database(backup)
    if verdict == "ok":
        verdict = _check_chain(backup)
    if verdict != "ok":
        raise BackupError(f"backup {backup} is not usable: {verdict}")
    if not another_night and db_path.exists():
        ours, theirs = night_of_file(db_path), night_of_file(backup)
        if ours is not None and theirs != ours:
            raise BackupError(f"backup {backup} is of another night ({theirs or 'none recorded'}, the ledger "
                              f"{db_path} is night {ours}); nothing was changed; add --another-night to "
                              "replace this night with it")
    moved: Path | None = None
    if db_path.exists():
        moved = _set_aside_name(db_path, clock().astimezone(dt.UTC).strftime(_STAMP))
        for suffix in ("", "-wal", "-shm"):
            old = Path(str(db_path) + suffix)
            if old.exists():
                os.replace(old, Path(str(moved) + suffix))
    else:
        db_path.parent.mkdir(parents=True, exist_ok=True)
    partial = db_path.with_name(db_path.name + ".restoring")
    src = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
    try:
        dst = sqlite3.connect(partial)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()
    with open(partial, "rb+") as fh:
        os.fsync(fh.fileno())
    for suffix in ("-wal", "-shm"):  # a WAL left beside the new file would be replayed into it
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    os.replace(partial, db_path)
    fsync_dir(db_path.parent)
    if backup_photos(backup).is_dir():  # the backup's photos join those beside the ledger
        _copy_photos(backup_photos(backup), photos_dir(db_path))
    return moved


def _check_chain(path: Path) -> str:
    """``"ok"`` or the first break in the backup's hash chain: ``integrity_check`` sees a damaged
    page, not a row whose bytes changed."""
    try:
        with Ledger(path, readonly=True, check=False) as led:
            problems = led.verify_chain()
    except LedgerError as exc:
        return str(exc)
    return problems[0] if problems else "ok"


def find_backup(backup_dir: Path | str, name: str) -> BackupInfo:
    """The backup called ``name`` (or ``latest``) among ``list_backups``: a restore takes only a
    finished backup from the folder, never an arbitrary path or a ``.partial`` file."""
    backups = list_backups(backup_dir)
    if not backups:
        raise BackupError(f"no backups in {backup_dir}")
    if name == "latest":
        return backups[0]
    for info in backups:
        if name in (info.path.name, str(info.path)):
            return info
    raise BackupError(f"{name} is not a backup in {backup_dir}; choose a name from --list "
                      f"(newest: {backups[0].path.name}) or 'latest'")
