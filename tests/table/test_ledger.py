"""table.ledger: append-only SQLite log, idempotency keys, corruption and disk-full behaviour."""

from __future__ import annotations

import sqlite3

import pytest

from table.ledger import IdempotencyConflict, Ledger, LedgerCorrupt, LedgerWriteError


def test_append_and_read_back_in_order(tmp_path):
    with Ledger(tmp_path / "l.db", clock=lambda: 1.5) as led:
        a = led.append("adjust_chips", {"player": "Ann", "delta": 5, "reason": "x"}, key="k1")
        b = led.append("pause", {})
        assert (a.seq, b.seq) == (1, 2) and a.at == 1.5
        assert [e.kind for e in led.events()] == ["adjust_chips", "pause"]
        assert led.events(since=1) == [b]
        assert led.last_seq() == 2
    with Ledger(tmp_path / "l.db") as again:  # on disk, survives reopening
        assert again.events()[0].data == {"delta": 5, "player": "Ann", "reason": "x"}


def test_settings_are_durable(tmp_path):
    led = Ledger(tmp_path / "l.db")
    assert led._con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert led._con.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    led.close()


def test_idempotency_key_returns_the_first_event(tmp_path):
    with Ledger(tmp_path / "l.db") as led:
        first = led.append("play", {"player": "Ann", "card": "AH"}, key="press-7")
        again = led.append("play", {"player": "Ann", "card": "AH"}, key="press-7")
        assert again == first and led.last_seq() == 1
        with pytest.raises(IdempotencyConflict, match="press-7"):
            led.append("play", {"player": "Ann", "card": "KH"}, key="press-7")
        assert led.last_seq() == 1


def test_append_many_is_all_or_nothing(tmp_path):
    with Ledger(tmp_path / "l.db") as led:
        led.append("a", {}, key="dup")
        with pytest.raises(IdempotencyConflict):
            led.append_many([("b", {}, "new"), ("c", {"x": 1}, "dup")])
        assert [e.kind for e in led.events()] == ["a"]
        assert led.get("new") is None


def test_schema_refuses_updates_and_deletes(tmp_path):
    with Ledger(tmp_path / "l.db") as led:
        led.append("a", {"n": 1})
        con = sqlite3.connect(tmp_path / "l.db")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            con.execute("UPDATE events SET data='{}'")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            con.execute("DELETE FROM events")
        con.close()


def test_disk_full_writes_nothing_and_stops_the_ledger(tmp_path):
    led = Ledger(tmp_path / "l.db")
    led.append("a", {"n": 0})
    pages = led._con.execute("PRAGMA page_count").fetchone()[0]
    led._con.execute(f"PRAGMA max_page_count={pages + 2}")  # a disk that is about to fill up
    big = {"blob": "x" * 3000}
    with pytest.raises(LedgerWriteError, match="disk is full"):
        for _ in range(20):
            led.append("big", big)
    written = led.events()
    assert all(e.data in ({"n": 0}, big) for e in written)  # nothing half-written
    with pytest.raises(LedgerWriteError, match="stopped accepting events: the disk is full"):
        led.append("a", {"n": 1})
    led.close()
    with Ledger(tmp_path / "l.db") as again:
        assert again.integrity() == "ok"
        assert again.events() == written


def test_corrupt_database_refuses_with_backup_hint(tmp_path):
    db = tmp_path / "ledger.db"
    with Ledger(db) as led:
        for i in range(50):
            led.append("a", {"i": i, "pad": "y" * 200})
    from table.backup import backup_database

    backup_database(db, tmp_path / "backups")
    raw = bytearray(db.read_bytes())
    raw[4096:4096 + 2048] = b"\xff" * 2048  # scribble over a page
    db.write_bytes(bytes(raw))
    with pytest.raises(LedgerCorrupt) as err:
        Ledger(db, backup_dir=tmp_path / "backups")
    msg = str(err.value)
    assert "\n" not in msg and "is corrupt" in msg
    assert "latest backup" in msg and "backups/ledger-" in msg and "restore" in msg


def test_not_a_database_at_all(tmp_path):
    db = tmp_path / "ledger.db"
    db.write_bytes(b"this is a text file, not SQLite" * 100)
    with pytest.raises(LedgerCorrupt, match="no backup found"):
        Ledger(db, backup_dir=tmp_path / "none")
