"""`loo-table ledger verify|export`: check the ledger end to end, or write it out as JSON or CSV."""

from __future__ import annotations

import argparse
import csv
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from table.cli import CommandError


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


def _open(args: argparse.Namespace) -> Any:
    from table.ledger import Ledger, LedgerError

    path, backups = _paths(args)
    if not path.is_file():
        raise CommandError(f"{path}: no such ledger")
    try:
        return Ledger(path, backup_dir=backups, readonly=True)
    except LedgerError as exc:
        raise CommandError(str(exc)) from None


def verify(ledger: Any, noted: tuple[int, str] | None = None) -> dict[str, Any]:
    """The checks `ledger verify` runs; returns a report with ``ok`` and ``problems``."""
    from engine.records import score_record
    from table.seal import SealError, check_heads, load_key
    from table.state import StateError, TableState

    problems: list[str] = []
    integrity = ledger.integrity()
    if integrity != "ok":
        problems.append(f"integrity_check: {integrity}")
    try:
        key = load_key(ledger.path, create=False)
        seals = "checked" if key is not None else "not checked (no ledger.key beside the ledger)"
    except SealError as exc:
        key, seals = None, f"not checked ({exc})"
    if noted is not None and key is None:
        problems.append(f"--noted needs the ledger's key: seals {seals}")
    problems.extend(ledger.verify_chain(key))
    if not problems:
        problems.extend(check_heads(ledger, key, noted))
    head_seq, head_hash = ledger.head()
    state = TableState()
    events = 0
    keys: set[str] = set()
    try:
        for event in ledger.iter_events():
            events += 1
            if event.key in keys:
                problems.append(f"event {event.seq}: duplicate key {event.key}")
            keys.add(event.key)
            try:
                state.apply(event)
            except StateError as exc:
                problems.append(f"event {event.seq} ({event.kind}) does not replay: {exc}")
                break
    except (ValueError, sqlite3.Error) as exc:  # a damaged row: bad UTF-8 or JSON, a wrong type
        problems.append(f"event after {events} read: cannot be read ({exc})")
    rescored = 0
    for deal in state.finished:
        try:
            outcome = score_record(deal["record"])
        except ValueError as exc:
            problems.append(f"deal {deal['number']}: its record does not score: {exc}")
            continue
        outcome.pop("id", None)
        stored = dict(deal["outcome"])
        stored["revokes"] = [{k: v for k, v in r.items() if k != "card"} for r in stored.get("revokes", [])]
        if outcome != stored:
            problems.append(f"deal {deal['number']}: the record scores differently from the stored outcome")
        rescored += 1
    total = state.total_chips() if state.started else 0
    if state.started and total != state.total_in:
        problems.append(f"chips not conserved: {total} on the table, {state.total_in} brought")
    return {
        "ok": not problems, "problems": problems, "integrity": integrity, "events": events,
        "deals_closed": len(state.finished), "records_rescored": rescored,
        "chips": state.chips() if state.started else {}, "pool": state.pool_now() if state.started else 0,
        "total_chips": total, "chips_brought": state.total_in, "digest": state.digest(),
        "head": {"seq": head_seq, "hash": head_hash}, "seals": seals,
    }


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
