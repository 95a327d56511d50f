"""A new night at the same table, from the host's phone: tonight is closed and kept, the next
begins with the players and rules chosen, and nobody moves ``ledger.db`` by hand.

Kept means moved, whole, into ``nights/`` beside the ledger: ``night-YYYYmmddTHHMMSSZ.db`` (with
its ``-wal`` if SQLite left one: the pair is moved together, so it opens as it was), its photos
(``.photos/``) and the deck the camera learned (``.deck.npz``) beside it under the same name.
`loo-table ledger verify --db nights/night-….db` checks a kept night like any ledger. The ledger's
path does not change, so the service, its lock and the nightly backup go on as before.

What the referee does (`new_night`, on its own thread, as a dashboard command): refuse while
a deal is in progress or the table waits for the host; close a finished deal first (its record is
kept); try the new night's first event on a blank state (a bad choice changes nothing); move the
night's files; open a new ledger at the same path and start the night there, with the table
zones the host drew kept.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

from table.contract.commands import NewNight
from table.ledger import Ledger
from table.photos import photos_dir
from table.state import StateError, TableState

__all__ = ["NIGHTS_DIRNAME", "archive_night", "kept_nights", "night_setup", "said", "swap_ledger"]

NIGHTS_DIRNAME = "nights"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def kept_nights(ledger_path: Path | str) -> list[Path]:
    """The nights kept beside ``ledger_path``, oldest first."""
    folder = Path(ledger_path).parent / NIGHTS_DIRNAME
    return sorted(folder.glob("night-*.db")) if folder.is_dir() else []


def archive_night(ledger_path: Path | str, *, now: dt.datetime | None = None) -> Path:
    """Move the (closed) ledger at ``ledger_path`` and what belongs to it into ``nights/``;
    returns the kept ledger's path. OSError when the files cannot be moved (nothing is lost:
    a move is a rename within one folder tree)."""
    from table.deck_learning import deck_path

    src = Path(ledger_path)
    folder = src.parent / NIGHTS_DIRNAME
    folder.mkdir(parents=True, exist_ok=True, mode=0o750)
    stamp = (now or _now()).astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    target = folder / f"night-{stamp}.db"
    n = 1
    while target.exists():
        target = folder / f"night-{stamp}-{n}.db"
        n += 1
    for suffix in ("-wal", "-shm", ""):  # the database last: a kept night is never half there
        part = Path(f"{src}{suffix}")
        if part.exists():
            os.replace(part, Path(f"{target}{suffix}"))
    for old, new in ((photos_dir(src), photos_dir(target)), (deck_path(src), deck_path(target))):
        if old.exists():
            os.replace(old, new)
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return target


class _First:
    """The new night's first event, tried on a blank state before anything moves."""

    seq = 1
    kind = "game_started"

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data


def night_setup(c: NewNight, chip_value: str) -> dict[str, Any]:
    """The new night's ``game_started`` data, checked on a blank state (StateError names what
    the rules refuse, before anything moves)."""
    setup = {"players": list(c.players), "variant": c.variant, "options": dict(c.options),
             "chips": c.starting_chips, "first_dealer": c.first_dealer,
             "chip_value": c.chip_value or chip_value}
    TableState.replay([]).apply(_First(setup))
    return setup


def swap_ledger(old: Ledger, *, now: dt.datetime | None = None) -> tuple[Ledger, Path]:
    """Close ``old``, keep its night in ``nights/`` and open a new ledger at its path: (the new
    ledger, the kept night). On a failed move the old ledger is opened again and StateError says
    why (nothing changed)."""
    old.close()
    try:
        kept = archive_night(old.path, now=now)
    except OSError as exc:
        reopened = Ledger(old.path, backup_dir=old.backup_dir)
        raise _Unmoved(reopened, f"tonight could not be kept in {old.path.parent / NIGHTS_DIRNAME}: "
                                 f"{exc.strerror or exc}; nothing changed") from None
    return Ledger(old.path, backup_dir=old.backup_dir), kept


class _Unmoved(StateError):
    """The night's files could not be moved; ``ledger`` is the old night's, open again."""

    def __init__(self, ledger: Ledger, message: str) -> None:
        super().__init__(message)
        self.ledger = ledger


def said(c: NewNight, kept: Path, deals: int) -> str:
    """The sentence the host reads."""
    night = "deal" if deals == 1 else "deals"
    return (f"Tonight ({deals} {night}) is kept as {NIGHTS_DIRNAME}/{kept.name}; a new night begins: "
            f"{', '.join(c.players)}, {c.variant.replace('_', '-')} Loo, {c.starting_chips} chips each.")
