"""Issue 49 #5: the keyed chain and the noted head. Someone with the ledger file but not the key
rewrites the chain, cuts its tail (lowering sqlite_sequence) or appends a back-dated event with
a correct hash; `ledger verify` (run with the key beside the ledger) catches each, one line."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from conftest import Table
from test_referee import REVOKE_DEAL, start_deal

from table.cli import main
from table.ledger import Ledger, chain_hash
from table.seal import KEY_FILE, HeadNotary, code, heads_path, load_key, noted_head


def _sealed_night(folder):
    """A played night written with the service's key, its head noted as `loo-table run` does."""
    folder.mkdir()
    db = folder / "ledger.db"
    t = Table(db, key=load_key(db, create=True))
    start_deal(t)
    for p, c in REVOKE_DEAL:
        t.card(p, c)
    t.dealer()
    t.ref.call("adjust_chips", {"player": "Ann", "delta": 7, "reason": "late buy-in"})
    head = HeadNotary(t.ledger).note()
    t.close()
    assert head is not None
    return db, head


def _rechain(con, since):
    """What a forger who knows the scheme does after a change: recompute every hash from ``since``."""
    prev = con.execute("SELECT hash FROM events WHERE seq=?", (since - 1,)).fetchone()
    prev = prev[0] if prev else "0" * 64
    for seq, key, kind, data, at in con.execute(
            "SELECT seq, key, kind, data, at FROM events WHERE seq>=? ORDER BY seq", (since,)).fetchall():
        prev = chain_hash(prev, seq, key, kind, data, at)
        con.execute("UPDATE events SET hash=? WHERE seq=?", (prev, seq))


def _forge(db, change):
    con = sqlite3.connect(db)
    con.execute("DROP TRIGGER events_append_only_update")
    con.execute("DROP TRIGGER events_append_only_delete")
    change(con)
    con.commit()
    con.close()


def rewrite(con):
    """Edit the buy-in's reason and amount and recompute the chain (seals left as they were)."""
    seq = con.execute("SELECT seq FROM events WHERE kind='adjust_chips'").fetchone()[0]
    con.execute("UPDATE events SET data=json_set(data, '$.reason', 'gift', '$.delta', 70) WHERE seq=?", (seq,))
    _rechain(con, seq)


def rewrite_unsealed(con):
    """The same, and every seal blanked, as if the ledger were from before sealing."""
    rewrite(con)
    con.execute("UPDATE events SET mac=NULL")


def truncate(con):
    """Delete the last 5 events and lower sqlite_sequence: the chain is a clean prefix."""
    last = con.execute("SELECT max(seq) FROM events").fetchone()[0]
    con.execute("DELETE FROM events WHERE seq>?", (last - 5,))
    con.execute("UPDATE sqlite_sequence SET seq=? WHERE name='events'", (last - 5,))


def back_dated(con):
    """Append "Dan +300" dated at the start of the night, correctly chained."""
    seq, prev, at = con.execute("SELECT seq, hash, at FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    first_at = con.execute("SELECT at FROM events WHERE seq=1").fetchone()[0]
    data = '{"delta":300,"player":"Dan","reason":"bought in"}'
    digest = chain_hash(prev, seq + 1, "late", "adjust_chips", data, first_at)
    con.execute("INSERT INTO events(seq, key, kind, data, at, hash) VALUES (?, 'late', 'adjust_chips', ?, ?, ?)",
                (seq + 1, data, first_at, digest))


def _verify(capsys, db, *extra):
    code_ = main(["ledger", "verify", "--db", str(db), *extra])
    captured = capsys.readouterr()
    return code_, captured.out, captured.err.strip()


def test_an_untouched_sealed_night_verifies_with_its_noted_code(tmp_path, capsys):
    db, head = _sealed_night(tmp_path / "n")
    assert (db.parent / KEY_FILE).stat().st_mode & 0o777 == 0o600
    assert noted_head(db) == head
    status, out, err = _verify(capsys, db, "--noted", f"{head.seq}:{code(head.seal)}")
    assert status == 0 and "seals checked" in out, err
    with Ledger(db, readonly=True) as led:
        assert led.verify_chain(load_key(db, create=False)) == []


@pytest.mark.parametrize("change", [rewrite, rewrite_unsealed, truncate, back_dated])
def test_each_forgery_without_the_key_is_caught(tmp_path, capsys, change):
    db, head = _sealed_night(tmp_path / "n")
    with Ledger(db, readonly=True) as led:
        assert led.verify_chain() == []
    _forge(db, change)
    with Ledger(db, readonly=True) as led:
        assert led.verify_chain() == []  # the public chain alone is fooled, as the issue found
    status, _out, err = _verify(capsys, db)
    assert status == 1 and "\n" not in err and err.startswith("loo-table ledger: "), err
    # the head file beside the ledger removed as well: the code the host kept still tells
    heads_path(db).unlink()
    status, _out, err = _verify(capsys, db, "--noted", f"{head.seq}:{code(head.seal)}")
    assert status == 1 and "\n" not in err, err


def test_a_forgery_is_caught_by_the_noted_code_even_if_the_seals_look_fine(tmp_path, capsys):
    """Truncation keeps every remaining seal valid: only a head noted outside the ledger shows it."""
    db, head = _sealed_night(tmp_path / "n")
    _forge(db, truncate)
    heads_path(db).unlink()
    status, _out, err = _verify(capsys, db)
    assert status == 0  # nothing in or beside the ledger is left to tell
    status, _out, err = _verify(capsys, db, "--noted", f"{head.seq}:{code(head.seal)}")
    assert status == 1 and "events were removed from the end" in err


def test_another_key_or_none_is_reported(tmp_path, capsys):
    db, head = _sealed_night(tmp_path / "n")
    copy = tmp_path / "elsewhere" / "ledger.db"
    copy.parent.mkdir()
    shutil.copy(db, copy)
    status, out, _err = _verify(capsys, copy)
    assert status == 0 and "seals not checked (no ledger.key" in out
    status, _out, err = _verify(capsys, copy, "--noted", f"{head.seq}:{code(head.seal)}")
    assert status == 1 and "--noted needs the ledger's key" in err
    (copy.parent / KEY_FILE).write_text("ab" * 32 + "\n")  # another table's key
    status, _out, err = _verify(capsys, copy)
    assert status == 1 and "does not match the key" in err
    status, _out, err = _verify(capsys, db, "--noted", "412:zz")
    assert status == 1 and "expected EVENT:CODE" in err


def test_the_service_shows_the_seal_for_the_end_of_the_night(tmp_path):
    from table.service import TableService

    db = tmp_path / "ledger.db"
    t = Table(db, key=load_key(db, create=True))
    start_deal(t)
    head = TableService(t.ref).ledger_head()
    seq, digest = t.ledger.head()
    assert head["seq"] == seq and head["hash"] == digest and head["seal"] == code(t.ledger.seal(seq))
    t.close()
