"""Which night a ledger file, a write-ahead log beside it or a backup belongs to.

Why: SQLite applies whatever ``ledger.db-wal`` lies beside ``ledger.db`` at the first open, and a
WAL names no database: another night's WAL left there (a copy made with the wrong files, a restore
done by hand) replaced a 1,543-event night with another night's 220 events, and the hash chain
was intact, so ``verify`` said ok. The ledger records its night (a random id, ``meta.night``,
made with the file); before the writer opens the file, the WAL is tried on copies of the files and
refused when it would change the night or break the chain. Nothing is moved or deleted: the host
decides which file to keep.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path

#: A WAL header is 32 bytes; a file no longer than that holds no frames and changes nothing.
WAL_HEADER = 32


class StrayWal(Exception):
    """A WAL beside the ledger that is not this night's; ``str()`` is one line for the host."""


def night_of(con: sqlite3.Connection) -> str | None:
    """The ``night`` recorded in the ledger's meta table (None when absent or unreadable)."""
    try:
        row = con.execute("SELECT value FROM meta WHERE name='night'").fetchone()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])


def _night(path: Path, chain_problems: Callable[[Path], list[str]]) -> tuple[str | None, list[str]]:
    """The night recorded in the ledger at ``path`` (read as SQLite would, WAL included) and its
    chain's problems."""
    try:
        con = sqlite3.connect(path)
        try:
            night = night_of(con)
        finally:
            con.close()
        return night, chain_problems(path)
    except (sqlite3.Error, ValueError) as exc:
        return None, [str(exc).splitlines()[0] if str(exc) else type(exc).__name__]


def refuse_stray_wal(db: Path, chain_problems: Callable[[Path], list[str]]) -> None:
    """Raise ``StrayWal`` (one line) when ``db``'s WAL belongs to another night or does not
    continue its chain (``chain_problems(path)``: the problems of the ledger at ``path``).

    Run before a writer opens ``db`` (at start, with the table stopped). The ledger alone and the
    ledger with its WAL are each read from a private copy, so neither real file is touched.
    """
    wal = Path(f"{db}-wal")
    try:
        if not wal.is_file() or wal.stat().st_size <= WAL_HEADER:
            return
    except OSError:
        return
    with tempfile.TemporaryDirectory(prefix="loo-night-") as tmp:
        alone = Path(tmp) / "alone" / db.name
        both = Path(tmp) / "both" / db.name
        alone.parent.mkdir()
        both.parent.mkdir()
        shutil.copyfile(db, alone)
        shutil.copyfile(db, both)
        shutil.copyfile(wal, Path(f"{both}-wal"))
        night, problems = _night(alone, chain_problems)
        with_wal, wal_problems = _night(both, chain_problems)
    if night is None:
        return  # a ledger from before nights were recorded, or one SQLite must judge itself
    keep = f"both files are kept: move {wal} aside to open the ledger as it is, or the ledger aside to keep the log's night"
    if with_wal != night:
        raise StrayWal(f"ledger {db}: {wal.name} belongs to another night "
                          f"({with_wal or 'none recorded'}, the ledger is night {night}); refusing to apply it; {keep}")
    if wal_problems and not problems:
        raise StrayWal(f"ledger {db}: {wal.name} does not continue this ledger ({wal_problems[0]}); "
                          f"refusing to apply it; {keep}")


def night_of_file(path: Path | str) -> str | None:
    """The night recorded in a ledger or backup file, read-only (None when absent or unreadable)."""
    try:
        con = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        return night_of(con)
    finally:
        con.close()
