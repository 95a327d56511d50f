"""The backup folder as the ledger sees it: backup names, listing them, and the line a host reads
when the ledger will not open (the latest backup and the command that restores it).

Kept apart from ``table.backup`` (which takes and restores backups, and checks a backup's hash
chain with ``table.ledger``) so that ``table.ledger`` can name a backup without importing the
module that imports it: the two files no longer import each other.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BACKUP_DIRNAME", "BackupInfo", "default_backup_dir", "latest_backup", "list_backups",
           "recovery_hint", "restore_command"]

BACKUP_DIRNAME = "backups"
_NAME = re.compile(r"^ledger-(\d{8}T\d{6}Z)(?:-(\d+))?\.db$")
_STAMP = "%Y%m%dT%H%M%SZ"

@dataclass(frozen=True)
class BackupInfo:
    """One finished backup file; ``created`` comes from its name (UTC), not from the file's mtime."""

    path: Path
    created: dt.datetime
    size: int

    def describe(self) -> str:
        return f"{self.path} ({self.created:%Y-%m-%d %H:%M:%S} UTC, {self.size} bytes)"


def default_backup_dir(db_path: Path | str) -> Path:
    """``backups/`` beside the ledger: inside the service's StateDirectory, so systemd lets us write."""
    return Path(db_path).resolve().parent / BACKUP_DIRNAME

def list_backups(backup_dir: Path | str) -> list[BackupInfo]:
    """Finished backups in ``backup_dir``, newest first (``.partial`` files are not backups)."""
    backup_dir = Path(backup_dir)
    if not backup_dir.is_dir():
        return []
    found: list[tuple[dt.datetime, int, BackupInfo]] = []
    for entry in backup_dir.iterdir():
        m = _NAME.match(entry.name)
        if not m or not entry.is_file():
            continue
        created = dt.datetime.strptime(m.group(1), _STAMP).replace(tzinfo=dt.UTC)
        seq = int(m.group(2) or 0)
        found.append((created, seq, BackupInfo(entry, created, entry.stat().st_size)))
    found.sort(key=lambda t: (t[0], t[1]), reverse=True)
    return [info for _, _, info in found]


def latest_backup(backup_dir: Path | str) -> BackupInfo | None:
    backups = list_backups(backup_dir)
    return backups[0] if backups else None

def _created_from_name(path: Path) -> dt.datetime:
    m = _NAME.match(path.name)
    assert m, path
    return dt.datetime.strptime(m.group(1), _STAMP).replace(tzinfo=dt.UTC)


def restore_command(backup: Path | str, *, config: str = "/etc/loo-table/config.toml") -> str:
    """The shell commands a host types to restore ``backup`` on an installed Pi."""
    return (
        "sudo systemctl stop loo-table && "
        f"sudo -u loo-table /opt/loo-table/venv/bin/loo-table backup --config {config} "
        f"--restore {backup} && sudo systemctl start loo-table"
    )


def recovery_hint(
    db_path: Path | str, backup_dir: Path | str | None = None, *, config: str = "/etc/loo-table/config.toml"
) -> str:
    """One line for a corrupt ledger at start: the latest backup and how to restore it.

    The controller prints this when it refuses to start, so the host is never left guessing.
    """
    backups = list_backups(backup_dir if backup_dir is not None else default_backup_dir(db_path))
    if not backups:
        return f"no backup found in {backup_dir or default_backup_dir(db_path)}; move {db_path} aside to start a new ledger"
    return f"latest backup {backups[0].describe()}; restore with: {restore_command(backups[0].path, config=config)}"
