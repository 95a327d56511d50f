"""`loo-table ledger verify|export`: check the ledger end to end, or write it out as JSON or CSV."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from table.audit import verify
from table.cli import CommandError

if TYPE_CHECKING:
    from table.ledger import Ledger

__all__ = ["add_arguments", "run", "verify"]  # verify: table.audit, importable from here too


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    verify = sub.add_parser("verify", help="integrity check, full replay through the engine, chip conservation",
                            description="Check the ledger: SQLite integrity_check, a full replay of every "
                            "event through the engine, every deal's stored outcome re-scored from its "
                            "loo-hand/1 record, and chip conservation. Exit 1 with one line if anything fails.")
    export = sub.add_parser("export", help="write every event as JSON or CSV",
                            description="Write every ledger event, oldest first.")
    for p in (verify, export):
        p.add_argument("--config", metavar="PATH", help="config file naming the database (state.database)")
        p.add_argument("--db", metavar="PATH", help="the ledger database (overrides --config)")
    verify.add_argument("--json", action="store_true", help="print the report as JSON")
    verify.add_argument("--noted", metavar="EVENT:CODE",
                        help="the ledger's seal as the End of night page showed it (e.g. 412:3f9c0a1b2c3d4e5f): "
                        "the events up to it must be the ones sealed then (needs the key: run as the table's user)")
    export.add_argument("--format", choices=("json", "csv"), default="json")
    export.add_argument("--output", "-o", metavar="FILE", help="write here instead of standard output")


def _paths(args: argparse.Namespace) -> tuple[Path, str | None]:
    from table.config import ConfigError, load_config

    if args.db:
        return Path(args.db), None
    try:
        cfg = load_config(args.config)
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    return Path(cfg.state.database), cfg.state.backup_dir


def _open(args: argparse.Namespace) -> Ledger:
    from table.ledger import Ledger, LedgerError

    path, backups = _paths(args)
    if not path.is_file():
        raise CommandError(f"{path}: no such ledger")
    try:
        return Ledger(path, backup_dir=backups, readonly=True)
    except LedgerError as exc:
        raise CommandError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    ledger = _open(args)
    try:
        if args.action == "verify":
            from table.seal import parse_noted

            try:
                noted = parse_noted(args.noted) if args.noted else None
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            report = verify(ledger, noted)
            if args.json:
                print(json.dumps(report, indent=1))
            else:
                print(f"{ledger.path}: {report['events']} events, {report['deals_closed']} deals closed, "
                      f"{report['records_rescored']} records re-scored, integrity {report['integrity']}, "
                      f"chips {report['total_chips']} of {report['chips_brought']} brought, "
                      f"head {report['head']['seq']}:{report['head']['hash'][:16]}, seals {report['seals']}")
            if not report["ok"]:
                raise CommandError(report["problems"][0] + (f" (and {len(report['problems']) - 1} more)"
                                                             if len(report["problems"]) > 1 else ""))
            return 0
        out = open(args.output, "w", encoding="utf-8", newline="") if args.output else sys.stdout
        try:
            if args.format == "json":
                rows = [{"seq": e.seq, "key": e.key, "kind": e.kind, "at": e.at, "data": e.data}
                        for e in ledger.iter_events()]
                json.dump(rows, out, indent=1)
                out.write("\n")
            else:
                writer = csv.DictWriter(out, fieldnames=["seq", "key", "kind", "at", "data"])
                writer.writeheader()
                for e in ledger.iter_events():
                    writer.writerow(e.row())
        finally:
            if out is not sys.stdout:
                out.close()
        return 0
    finally:
        ledger.close()
