"""What `loo-table ledger verify` checks, as a function the demo's summary and the tests call too:
SQLite's integrity check, the hash chain, every event replayed through the engine, each closed
deal's record re-scored against its stored outcome, and chip conservation.

Here rather than in the command's module so that the game code (``table.demo_table``) need not
import a CLI module.
"""

from __future__ import annotations

import sqlite3
from typing import TypedDict

from engine.records import score_record
from table.ledger import Ledger
from table.seal import SealError, check_heads, load_key
from table.state import StateError, TableState

__all__ = ["Report", "verify"]


class HeadRef(TypedDict):
    seq: int
    hash: str


class Report(TypedDict):
    """What `ledger verify` found (printed, or as JSON with ``--json``): ``ok`` when ``problems``
    is empty, and the figures the host compares with the night."""

    ok: bool
    problems: list[str]
    integrity: str
    events: int
    deals_closed: int
    records_rescored: int
    chips: dict[str, int]
    pool: int
    total_chips: int
    chips_brought: int
    digest: str
    head: HeadRef
    seals: str


def verify(ledger: Ledger, noted: tuple[int, str] | None = None) -> Report:
    """The checks `ledger verify` runs; returns a report with ``ok`` and ``problems``. With the
    service's key readable beside the ledger the seals are checked too (``table.seal``), and the
    head noted beside the ledger and ``noted`` (``EVENT, CODE`` the host kept) must match."""
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
