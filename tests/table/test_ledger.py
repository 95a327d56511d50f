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


# -- loo-table ledger verify / export ------------------------------------------------------------


def _played_ledger(tmp_path):
    from conftest import Table
    from test_referee import REVOKE_DEAL, start_deal

    t = Table(tmp_path / "ledger.db")
    start_deal(t)
    for p, c in REVOKE_DEAL:
        t.card(p, c)
    t.dealer()
    t.ref.call("adjust_chips", {"player": "Ann", "delta": 7, "reason": "late buy-in"})
    t.close()
    return tmp_path / "ledger.db"


def test_verify_passes_on_a_played_night(tmp_path, capsys):
    import json

    from table.cli import main

    db = _played_ledger(tmp_path)
    assert main(["ledger", "verify", "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["integrity"] == "ok" and report["records_rescored"] == 1
    assert report["total_chips"] == report["chips_brought"] == 407


def test_verify_catches_an_event_that_does_not_replay(tmp_path, capsys):
    import json

    from table.cli import main

    db = _played_ledger(tmp_path)
    con = sqlite3.connect(db)  # someone wrote behind the referee's back
    con.execute("INSERT INTO events(key, kind, data, at) VALUES ('x', 'action', '{\"action\": \"Ann:ZZ\"}', 0)")
    con.commit()
    con.close()
    assert main(["ledger", "verify", "--db", str(db), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert any("does not replay" in p for p in report["problems"])
    assert any("has no hash" in p for p in report["problems"])  # and it is not part of the chain


def test_verify_catches_a_doctored_outcome(tmp_path, capsys):
    import json

    from table.cli import main
    from table.ledger import Ledger

    db = tmp_path / "l.db"
    src = _played_ledger(tmp_path)
    with Ledger(src) as good, Ledger(db) as bad:
        for e in good.events():
            data = e.data
            if e.kind == "deal_closed":
                data = json.loads(json.dumps(data))
                data["record"]["tricks"][0]["plays"][1][1] = "4S"  # the record no longer matches
            bad.append(e.kind, data, key=e.key)
    assert main(["ledger", "verify", "--db", str(db)]) == 1
    assert "scores differently" in capsys.readouterr().err


def test_export_json_and_csv(tmp_path, capsys):
    import csv
    import io
    import json

    from table.cli import main

    db = _played_ledger(tmp_path)
    assert main(["ledger", "export", "--db", str(db), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["kind"] == "game_started" and rows[-1]["data"]["reason"] == "late buy-in"
    out = tmp_path / "ledger.csv"
    assert main(["ledger", "export", "--db", str(db), "--format", "csv", "-o", str(out)]) == 0
    table = list(csv.DictReader(io.StringIO(out.read_text())))
    assert len(table) == len(rows) and json.loads(table[-1]["data"])["delta"] == 7


def test_missing_ledger_is_one_line(tmp_path, capsys):
    from table.cli import main

    assert main(["ledger", "verify", "--db", str(tmp_path / "nope.db")]) == 1
    assert capsys.readouterr().err.strip().endswith("nope.db: no such ledger")


def test_readonly_ledger_never_writes(tmp_path):
    db = tmp_path / "l.db"
    with Ledger(db) as led:
        led.append("a", {"n": 1})
    before = db.stat().st_mtime_ns
    with Ledger(db, readonly=True) as ro:
        assert [e.data for e in ro.events()] == [{"n": 1}] and ro.integrity() == "ok"
        with pytest.raises(LedgerWriteError, match="read-only"):
            ro.append("b", {})
    assert db.stat().st_mtime_ns == before
    from table.ledger import LedgerError

    with pytest.raises(LedgerError, match="no such file"):
        Ledger(tmp_path / "missing.db", readonly=True)
    assert not (tmp_path / "missing.db").exists()


def test_verify_and_export_leave_the_file_byte_for_byte_unchanged(tmp_path, capsys):
    """`ledger verify` runs beside a live table: it opens the file read-only and writes nothing."""
    import hashlib

    from table.cli import main

    db = _played_ledger(tmp_path)
    folder = sorted(p.name for p in db.parent.iterdir())
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    mtime = db.stat().st_mtime_ns
    assert main(["ledger", "verify", "--db", str(db)]) == 0
    assert main(["ledger", "export", "--db", str(db), "--format", "csv"]) == 0
    capsys.readouterr()
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest and db.stat().st_mtime_ns == mtime
    assert sorted(p.name for p in db.parent.iterdir()) == folder  # no -wal / -shm left behind
    db.chmod(0o444)  # a file it may not write at all still verifies
    try:
        assert main(["ledger", "verify", "--db", str(db)]) == 0
    finally:
        db.chmod(0o644)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest


def test_verify_beside_a_live_table_reads_its_latest_events(tmp_path, capsys):
    import json

    from table.cli import main

    db = _played_ledger(tmp_path)
    with Ledger(db) as live:  # the running table holds the ledger open (its -wal exists)
        live.append("adjust_chips", {"player": "Bea", "delta": 2, "reason": "still in the WAL"})
        assert main(["ledger", "verify", "--db", str(db), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["chips_brought"] == 409 and report["ok"]
        live.append("adjust_chips", {"player": "Bea", "delta": 1, "reason": "after verify"})  # still writable
    assert sorted(p.name for p in db.parent.iterdir()) == ["ledger.db"]


# -- tamper evidence: the hash chain ---------------------------------------------------------------


def _tamper(db, sql_steps):
    """Change the ledger behind the referee's back, the way someone with the sqlite3 shell would."""
    con = sqlite3.connect(db)
    con.execute("DROP TRIGGER events_append_only_update")
    con.execute("DROP TRIGGER events_append_only_delete")
    for sql, args in sql_steps:
        con.execute(sql, args)
    con.commit()
    con.close()


def _forged_tail(db):
    """A row appended with a correctly chained hash (the forger knows the scheme) but no new head."""
    from table.ledger import chain_hash

    con = sqlite3.connect(db)
    seq, digest = con.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    con.close()
    data = '{"delta":50,"player":"Ann","reason":"x"}'
    return [("INSERT INTO events(seq, key, kind, data, at, hash) VALUES (?, ?, ?, ?, ?, ?)",
             (seq + 1, "forged", "adjust_chips", data, 1.0,
              chain_hash(digest, seq + 1, "forged", "adjust_chips", data, 1.0)))]


MUTATIONS = {
    "delete": lambda seq: [("DELETE FROM events WHERE seq=?", (seq,))],
    "edit data": lambda seq: [("UPDATE events SET data=json_set(data, '$.forged', 1) WHERE seq=?", (seq,))],
    "edit time": lambda seq: [("UPDATE events SET at=at+1 WHERE seq=?", (seq,))],
    "insert before": lambda seq: [
        ("UPDATE events SET seq=-seq WHERE seq>=?", (seq,)),
        ("UPDATE events SET seq=1-seq WHERE seq<0", ()),
        ("INSERT INTO events(seq, key, kind, data, at, hash) VALUES (?, 'ins', 'pause', '{}', 1.0, "
         "(SELECT hash FROM events WHERE seq=?))", (seq, seq + 1)),
    ],
    "truncate tail": lambda seq: [("DELETE FROM events WHERE seq>=?", (seq,))],
}


def test_every_kind_of_tampering_at_every_row_is_detected(tmp_path):
    import shutil

    from table.ledger import Ledger

    good = _played_ledger(tmp_path)
    with Ledger(good, readonly=True) as led:
        assert led.verify_chain() == []
        rows = led.last_seq()
    assert rows > 20
    copy = tmp_path / "copy.db"
    detected = 0
    for name, mutation in MUTATIONS.items():
        for seq in range(1, rows + 1):
            shutil.copy(good, copy)
            _tamper(copy, mutation(seq))
            with Ledger(copy, readonly=True) as led:
                assert led.verify_chain(), f"{name} at event {seq} went unnoticed"
            detected += 1
    assert detected == len(MUTATIONS) * rows
    # A forger who knows the scheme can append a row with a correct hash: only the head noted
    # from the History page (or an earlier `ledger verify`) tells, because the head changed.
    with Ledger(good, readonly=True) as led:
        noted = led.head()
    shutil.copy(good, copy)
    _tamper(copy, _forged_tail(copy))
    with Ledger(copy, readonly=True) as led:
        assert led.verify_chain() == [] and led.head() != noted
        assert noted in [(e.seq, e.hash) for e in led.events()]  # the noted head is still in it


def test_rows_cut_from_the_end_stay_visible_after_new_events(tmp_path):
    db = _played_ledger(tmp_path)
    with Ledger(db, readonly=True) as led:
        last = led.last_seq()
    _tamper(db, MUTATIONS["truncate tail"](last - 2))
    with Ledger(db) as led:
        assert "removed from the end" in led.verify_chain()[0]
        led.append("pause", {})  # the table kept running on the cut ledger
        assert led.events()[-1].seq == last + 1
        assert f"event {last - 2}: missing" in led.verify_chain()[0]


@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_ledger_verify_fails_on_tampering_with_one_line(tmp_path, capsys, name):
    from table.cli import main
    from table.ledger import Ledger

    db = _played_ledger(tmp_path)
    with Ledger(db, readonly=True) as led:
        last = led.last_seq()
    _tamper(db, MUTATIONS[name](last - 1))
    assert main(["ledger", "verify", "--db", str(db)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("loo-table ledger: ") and "\n" not in err


def test_head_hash_is_reported_and_survives_reopening(tmp_path, capsys):
    import json

    from table.cli import main

    db = _played_ledger(tmp_path)
    with Ledger(db) as led:
        seq, digest = led.head()
        assert seq == led.last_seq() and led.events()[-1].hash == digest and len(digest) == 64
        nxt = led.append("pause", {})
    assert nxt.seq == seq + 1
    assert main(["ledger", "verify", "--db", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["head"] == {"seq": nxt.seq, "hash": nxt.hash}


def test_a_schema_1_ledger_is_chained_when_opened(tmp_path):
    db = tmp_path / "old.db"
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL, data TEXT NOT NULL CHECK (json_valid(data)), at REAL NOT NULL);
        CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: corrections are new events'); END;
        INSERT INTO meta VALUES ('schema', '1');
        INSERT INTO events(key, kind, data, at) VALUES ('a', 'pause', '{}', 1.0), ('b', 'resume', '{}', 2.0);
    """)
    con.close()
    with Ledger(db, readonly=True) as ro:
        assert "before hash chaining" in ro.verify_chain()[0]
    with Ledger(db) as led:
        assert led.verify_chain() == [] and led.head()[0] == 2
        led.append("pause", {})
        assert led.verify_chain() == []
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            led._con.execute("UPDATE events SET at=0")
