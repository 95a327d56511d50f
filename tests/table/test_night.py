"""Issue 49 #6 and #8: a ledger knows its night; another night's WAL or backup is refused, one line,
with both files kept; two restores in one second never overwrite a set-aside ledger."""

from __future__ import annotations

import datetime as dt
import shutil
import sqlite3
from pathlib import Path

import pytest

from table.backup import backup_database, restore_backup
from table.cli import main
from table.ledger import Ledger, LedgerError

T0 = dt.datetime(2026, 11, 22, 4, 30, tzinfo=dt.UTC)


def _night_with_wal(folder: Path, rows: int) -> tuple[Path, Path]:
    """A ledger of ``rows`` events left as a killed table leaves it: rows in ``-wal``. Returns the
    ledger and a copy of its WAL (taken while open, as a copy of the folder would)."""
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "ledger.db"
    led = Ledger(db)
    led._con.execute("PRAGMA wal_autocheckpoint=0")
    for i in range(rows):
        led.append("note", {"body": f"{folder.name} {i}"}, key=f"{folder.name}-{i}")
    wal = folder / "saved-wal"
    shutil.copyfile(f"{db}-wal", wal)
    return db, wal


def _count(db: Path) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(con.execute("SELECT count(*) FROM events").fetchone()[0])
    finally:
        con.close()


def test_every_ledger_has_its_own_night(tmp_path):
    with Ledger(tmp_path / "a.db") as a, Ledger(tmp_path / "b.db") as b:
        assert a.night and b.night and a.night != b.night and len(a.night) == 32
        night = a.night
    with Ledger(tmp_path / "a.db") as again:
        assert again.night == night  # kept across opens


def test_another_nights_wal_beside_the_ledger_is_refused_and_both_files_kept(tmp_path, capsys):
    tonight = tmp_path / "tonight"
    db = tonight / "ledger.db"
    with Ledger(db) as led:  # a whole night, checkpointed into the file at close
        for i in range(60):
            led.append("note", {"body": f"tonight {i}"}, key=f"t{i}")
    _other, other_wal = _night_with_wal(tmp_path / "other", rows=12)
    shutil.copyfile(other_wal, f"{db}-wal")  # the stray log, left beside tonight's ledger
    before, wal_before = db.read_bytes(), Path(f"{db}-wal").read_bytes()
    with pytest.raises(LedgerError, match="ledger.db-wal belongs to another night") as err:
        Ledger(db)
    assert "\n" not in str(err.value) and "both files are kept" in str(err.value)
    assert db.read_bytes() == before and Path(f"{db}-wal").read_bytes() == wal_before
    code = main(["ledger", "verify", "--db", str(db)])  # verify says so too, and reads nothing else
    err = capsys.readouterr().err.strip()
    assert code == 1 and "\n" not in err and "belongs to another night" in err
    Path(f"{db}-wal").unlink()
    with Ledger(db) as led:
        assert len(led.events()) == 60 and led.verify_chain() == []


def test_the_nights_own_wal_after_a_kill_is_applied(tmp_path):
    db, wal = _night_with_wal(tmp_path / "n", rows=15)
    saved = tmp_path / "copy.db"
    shutil.copyfile(db, saved)
    shutil.copyfile(wal, f"{saved}-wal")  # the files a SIGKILL leaves
    with Ledger(saved) as led:
        assert len(led.events()) == 15 and led.verify_chain() == []


def test_restore_of_another_nights_backup_is_refused_unless_asked(tmp_path, capsys):
    db = tmp_path / "ledger.db"
    with Ledger(db) as led:
        led.append("note", {"body": "tonight"}, key="t")
    other = tmp_path / "other.db"
    with Ledger(other) as led:
        for i in range(3):
            led.append("note", {"body": "another night"}, key=f"o{i}")
    dest = tmp_path / "backups"
    info = backup_database(other, dest, clock=lambda: T0)
    before = db.read_bytes()
    code = main(["backup", "--db", str(db), "--dest", str(dest), "--restore", info.path.name])
    err = capsys.readouterr().err.strip()
    assert code == 1 and "\n" not in err and "is of another night" in err and "--another-night" in err
    assert db.read_bytes() == before and info.path.exists()
    assert main(["backup", "--db", str(db), "--dest", str(dest), "--restore", info.path.name,
                 "--another-night"]) == 0
    assert _count(db) == 3


def test_two_restores_in_one_second_keep_both_set_aside_ledgers(tmp_path):
    db = tmp_path / "ledger.db"
    with Ledger(db) as led:
        led.append("note", {"body": "one"}, key="a")
    info = backup_database(db, tmp_path / "b", clock=lambda: T0)
    with Ledger(db) as led:
        led.append("note", {"body": "two"}, key="b")
    first = restore_backup(info.path, db, clock=lambda: T0)
    with Ledger(db) as led:
        for key in "cde":
            led.append("note", {"body": key}, key=key)
    second = restore_backup(info.path, db, clock=lambda: T0)  # the same second
    assert first is not None and second is not None and first != second
    assert _count(first) == 2 and _count(second) == 4
    assert second.name.endswith("-2")
