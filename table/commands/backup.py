"""`loo-table backup`: back the ledger up (SQLite backup API), list backups, or restore one.

The nightly `loo-table-backup.timer` runs `loo-table backup --config /etc/loo-table/config.toml
--keep 7`. Backing up is safe while the table runs; restoring is not: stop the service first.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        metavar="PATH",
        help="config whose [state] database and backup_dir to use (default: the shipped defaults)",
    )
    parser.add_argument("--db", metavar="PATH", help="the ledger database (overrides the config)")
    parser.add_argument("--dest", metavar="DIR", help="backup directory (overrides the config)")
    parser.add_argument(
        "--keep", type=int, default=7, metavar="N", help="keep the newest N backups (default: 7)"
    )
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="list the backups, newest first, and exit")
    what.add_argument(
        "--restore",
        metavar="BACKUP",
        help="replace the ledger with BACKUP (a name from --list, or 'latest'); it must pass integrity_check "
        "and its hash chain; stop the service first",
    )
    parser.add_argument("--another-night", action="store_true",
                        help="with --restore: allow a backup of another night than the ledger's (refused otherwise)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _paths(args: argparse.Namespace) -> tuple[Path, Path]:
    from table.cli import CommandError

    db, dest = args.db, args.dest
    if db is None or dest is None:
        from table.config import ConfigError, load_config

        try:
            config = load_config(args.config)
        except ConfigError as exc:
            raise CommandError(str(exc)) from None
        db = db or config.state.database
        if dest is None:
            # An explicit --db without --dest keeps the backups beside that database.
            dest = config.state.backup_dir if args.db is None else None
    from table.backup import default_backup_dir

    db_path = Path(db)
    return db_path, Path(dest) if dest else default_backup_dir(db_path)


def service_running(unit: str = "loo-table.service") -> bool:
    """True when systemd says the controller is running (a restore under it would be lost).

    Off systemd (a PC, a container) `systemctl is-active` fails or is missing: not running.
    """
    import shutil
    import subprocess

    systemctl = shutil.which("systemctl")
    if systemctl is None:
        return False
    try:
        done = subprocess.run([systemctl, "is-active", "--quiet", unit], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def run(args: argparse.Namespace) -> int:
    from table.backup import BackupError, backup_database, find_backup, list_backups, restore_backup
    from table.cli import CommandError
    from table.instance import running_pid

    db_path, dest = _paths(args)
    if args.keep < 1:
        raise CommandError(f"--keep must be at least 1, got {args.keep}")
    try:
        if args.list:
            backups = list_backups(dest)
            if args.json:
                print(json.dumps([
                    {"path": str(b.path), "created": b.created.isoformat(), "size": b.size} for b in backups
                ]))
            elif not backups:
                print(f"no backups in {dest}")
            else:
                for b in backups:
                    print(b.describe())
            return 0
        if args.restore:
            if service_running():
                raise CommandError("loo-table.service is running; stop it first: sudo systemctl stop loo-table")
            pid = running_pid(db_path)
            if pid is not None:
                raise CommandError(f"a table is running on {db_path} ({f'pid {pid}' if pid else 'another process'}); "
                                   "stop it first, or the restore would be overwritten")
            source = find_backup(dest, args.restore).path
            moved = restore_backup(source, db_path, another_night=args.another_night)
            note = f"; the old ledger is kept as {moved}" if moved else ""
            print(f"restored {db_path} from {source}{note}")
            return 0
        info = backup_database(db_path, dest, keep=args.keep)
    except BackupError as exc:
        raise CommandError(str(exc)) from None
    if args.json:
        print(json.dumps({"path": str(info.path), "created": info.created.isoformat(), "size": info.size}))
    else:
        print(f"backed up {db_path} to {info.describe()}; keeping the newest {args.keep}")
    return 0
