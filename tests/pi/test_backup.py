"""table.backup and `loo-table backup`: consistent online backups, rotation, listing, restore."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from table.backup import (
    BackupError,
    backup_database,
    check_database,
    latest_backup,
    list_backups,
    recovery_hint,
    restore_backup,
    rotate,
)
from table.cli import main as cli_main
from table.ledger import Ledger

T0 = dt.datetime(2026, 11, 22, 4, 30, tzinfo=dt.UTC)


def clock_from(start: dt.datetime, step: dt.timedelta = dt.timedelta(days=1)) -> Iterator[dt.datetime]:
    t = start
    while True:
        yield t
        t += step


def make_ledger(path: Path, rows: int = 50) -> Ledger:
    """A ledger like the controller's, left OPEN with its rows still in the -wal file."""
    led = Ledger(path)
    led._con.execute("PRAGMA wal_autocheckpoint=0")
    for i in range(rows):
        led.append("note", {"body": f"event {i}"}, key=f"k{i}")
    return led


def count(path: Path) -> int:
    con = sqlite3.connect(path)
    try:
        return int(con.execute("SELECT count(*) FROM events").fetchone()[0])
    finally:
        con.close()


def test_backup_captures_rows_still_in_the_wal(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    writer = make_ledger(db, rows=50)
    assert (tmp_path / "ledger.db-wal").stat().st_size > 0  # the rows are not in ledger.db yet
    info = backup_database(db, tmp_path / "backups", clock=lambda: T0)
    writer.close()
    assert info.path.name == "ledger-20261122T043000Z.db"
    assert count(info.path) == 50
    assert check_database(info.path) == "ok"
    # The copy is a single self-contained file (rollback journal), not a WAL database.
    con = sqlite3.connect(info.path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    con.close()
    assert sorted(p.name for p in (tmp_path / "backups").iterdir()) == [info.path.name]


def test_rotation_keeps_the_newest_seven(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    make_ledger(db, rows=3).close()
    ticks = clock_from(T0)
    dest = tmp_path / "backups"
    (dest).mkdir()
    (dest / "ledger-20261101T000000Z.db.partial").write_bytes(b"torn")  # a power cut mid-backup
    (dest / "notes.txt").write_text("not ours")
    made = [backup_database(db, dest, keep=7, clock=lambda: next(ticks)).path for _ in range(9)]
    names = [b.path.name for b in list_backups(dest)]
    assert names == [p.name for p in reversed(made[2:])]  # newest first, the two oldest gone
    assert not list(dest.glob("*.partial"))
    assert (dest / "notes.txt").exists()
    assert latest_backup(dest) is not None and latest_backup(dest).path == made[-1]  # type: ignore[union-attr]


def test_two_backups_in_one_second_do_not_collide(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    make_ledger(db, rows=1).close()
    a = backup_database(db, tmp_path / "b", clock=lambda: T0)
    b = backup_database(db, tmp_path / "b", clock=lambda: T0)
    assert a.path != b.path and a.path.exists() and b.path.exists()
    assert list_backups(tmp_path / "b")[0].path == b.path


def test_rotate_rejects_keep_zero(tmp_path: Path) -> None:
    with pytest.raises(BackupError, match="keep"):
        rotate(tmp_path, keep=0)


def test_missing_ledger_is_named(tmp_path: Path) -> None:
    with pytest.raises(BackupError, match="ledger.db"):
        backup_database(tmp_path / "ledger.db", tmp_path / "b")


def test_corrupt_ledger_leaves_no_backup(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    with pytest.raises(BackupError, match=str(db)):
        backup_database(db, tmp_path / "b")
    assert list(Path(tmp_path / "b").iterdir()) == []


def test_restore_replaces_ledger_and_keeps_the_old_one(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    make_ledger(db, rows=10).close()
    info = backup_database(db, tmp_path / "b", clock=lambda: T0)
    with Ledger(db) as later:
        later.append("note", {"body": "after the backup"}, key="late")
    moved = restore_backup(info.path, db, clock=lambda: T0)
    assert count(db) == 10
    assert moved is not None and count(moved) == 11
    assert check_database(db) == "ok"


def test_bad_backup_leaves_the_ledger_untouched(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    make_ledger(db, rows=4).close()
    bad = tmp_path / "ledger-20261122T043000Z.db"
    bad.write_bytes(b"not a database at all" * 100)
    before = db.read_bytes()
    with pytest.raises(BackupError, match="not usable"):
        restore_backup(bad, db)
    assert db.read_bytes() == before


def test_recovery_hint_names_latest_backup_and_command(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    assert "no backup found" in recovery_hint(db, tmp_path / "b")
    make_ledger(db, rows=2).close()
    ticks = clock_from(T0)
    for _ in range(3):
        last = backup_database(db, tmp_path / "b", clock=lambda: next(ticks))
    hint = recovery_hint(db, tmp_path / "b")
    assert "\n" not in hint
    assert str(last.path) in hint
    assert "systemctl stop loo-table" in hint and f"--restore {last.path}" in hint


def test_check_database_reports_garbage(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"\x00" * 100 + b"garbage" * 500)
    assert check_database(junk) != "ok"
    assert check_database(tmp_path / "absent.db") == "file not found"


# --- the CLI ------------------------------------------------------------------------------------


def test_cli_backup_list_restore(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "state" / "ledger.db"
    db.parent.mkdir()
    make_ledger(db, rows=5).close()
    assert cli_main(["backup", "--db", str(db), "--keep", "2", "--json"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert Path(made["path"]).parent == db.parent / "backups"
    assert cli_main(["backup", "--db", str(db), "--list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [b["path"] for b in listed] == [made["path"]]
    db.unlink()
    Path(str(db) + "-wal").unlink(missing_ok=True)
    assert cli_main(["backup", "--db", str(db), "--restore", "latest"]) == 0
    assert "restored" in capsys.readouterr().out
    assert count(db) == 5


def test_cli_uses_the_config_state_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "ledger.db"
    make_ledger(db, rows=1).close()
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[state]\ndatabase = "{db}"\nbackup_dir = "{tmp_path / "nightly"}"\n')
    assert cli_main(["backup", "--config", str(cfg)]) == 0
    assert "backed up" in capsys.readouterr().out
    assert len(list_backups(tmp_path / "nightly")) == 1


def test_cli_failures_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("[state]\ndatabse = 'typo'\n")
    assert cli_main(["backup", "--config", str(cfg)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "state.databse" in err
    assert cli_main(["backup", "--db", str(tmp_path / "none.db")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "none.db" in err


def test_help_is_instant_and_complete() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "table", "backup", "--help"], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0
    for flag in ("--keep", "--list", "--restore", "--config"):
        assert flag in out.stdout


def test_backup_while_the_controller_writes(tmp_path: Path) -> None:
    """The nightly backup runs while a game may be on: each copy is a clean prefix of the log."""
    import threading
    import time

    from table.ledger import Ledger

    db = tmp_path / "ledger.db"
    ledger = Ledger(db)
    ledger.append("note", {"i": -1}, key="first")
    stop = threading.Event()
    written: list[int] = []

    def writer() -> None:
        i = 0
        while not stop.is_set():
            ledger.append("note", {"i": i}, key=f"n{i}")
            written.append(i)
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    ticks = clock_from(T0, dt.timedelta(hours=1))
    try:
        backups = []
        while len(backups) < 3:
            if len(written) > 20 * (len(backups) + 1):
                backups.append(backup_database(db, tmp_path / "b", clock=lambda: next(ticks)))
            time.sleep(0.005)
    finally:
        stop.set()
        thread.join()
        ledger.close()
    sizes = []
    for info in backups:
        assert check_database(info.path) == "ok"
        con = sqlite3.connect(f"file:{info.path}?mode=ro", uri=True)
        rows = con.execute("SELECT seq, data FROM events ORDER BY seq").fetchall()
        con.close()
        seqs = [seq for seq, _ in rows]
        values = [json.loads(data)["i"] for _, data in rows]
        assert seqs == list(range(1, len(seqs) + 1))  # no gaps: a consistent snapshot
        assert values == list(range(-1, len(values) - 1))
        sizes.append(len(seqs))
    assert sizes == sorted(sizes) and sizes[-1] > 20


def test_restore_refuses_while_the_service_runs(tmp_path: Path) -> None:
    """With systemd saying loo-table.service is active, a restore would be overwritten: refuse."""
    db = tmp_path / "ledger.db"
    make_ledger(db, rows=3).close()
    backup_database(db, tmp_path / "backups", clock=lambda: T0)
    stubs = tmp_path / "bin"
    stubs.mkdir()
    (stubs / "systemctl").write_text('#!/bin/sh\n[ "$1 $2 $3" = "is-active --quiet loo-table.service" ]\n')
    (stubs / "systemctl").chmod(0o755)
    root = Path(__file__).resolve().parents[2]
    env = {"PATH": f"{stubs}:/usr/bin:/bin", "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-m", "table", "backup", "--db", str(db), "--restore", "latest"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 1
    assert out.stderr.strip() == (
        "loo-table backup: loo-table.service is running; stop it first: sudo systemctl stop loo-table")
    assert not list(tmp_path.glob("ledger.db.replaced-*"))


# --- restore refuses what it should not take --------------------------------------------------------


def _damage_a_row(path: Path) -> None:
    """Change one byte of one event's data in place: the page stays well-formed (integrity_check
    passes), only the hash chain shows it."""
    raw = bytearray(path.read_bytes())
    at = raw.find(b"event 3")
    assert at > 0
    raw[at + 6] = ord("8")
    path.write_bytes(bytes(raw))


def test_restore_refuses_a_backup_whose_rows_were_changed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "ledger.db"
    make_ledger(db, rows=6).close()
    info = backup_database(db, tmp_path / "b", clock=lambda: T0)
    _damage_a_row(info.path)
    assert check_database(info.path) == "ok"  # SQLite's own check sees nothing wrong
    before = db.read_bytes()
    assert cli_main(["backup", "--db", str(db), "--dest", str(tmp_path / "b"), "--restore", "latest"]) == 1
    err = capsys.readouterr().err.strip()
    assert "not usable" in err and "hash does not match" in err and "\n" not in err
    assert db.read_bytes() == before


def test_restore_takes_only_names_from_the_backup_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "ledger.db"
    make_ledger(db, rows=3).close()
    info = backup_database(db, tmp_path / "b", clock=lambda: T0)
    stray = tmp_path / "elsewhere.db"
    stray.write_bytes(info.path.read_bytes())
    (tmp_path / "b" / "notes.db").write_bytes(info.path.read_bytes())
    for name in (str(stray), "notes.db", "../ledger.db", info.path.name + ".partial"):
        assert cli_main(["backup", "--db", str(db), "--dest", str(tmp_path / "b"), "--restore", name]) == 1
        err = capsys.readouterr().err.strip()
        assert "is not a backup in" in err and info.path.name in err
    assert cli_main(["backup", "--db", str(db), "--dest", str(tmp_path / "b"), "--restore", info.path.name]) == 0


def test_restore_leaves_no_wal_or_shm_beside_the_new_ledger(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    live = make_ledger(db, rows=4)
    info = backup_database(db, tmp_path / "b", clock=lambda: T0)
    live.append("note", {"body": "only in the old WAL"}, key="late")
    import shutil

    for suffix in ("-wal", "-shm"):  # a stopped table that left its -wal and -shm (a kill)
        shutil.copy(f"{db}{suffix}", tmp_path / f"keep{suffix}")
    live.close()
    for suffix in ("-wal", "-shm"):
        shutil.copy(tmp_path / f"keep{suffix}", f"{db}{suffix}")
    restore_backup(info.path, db, clock=lambda: T0)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ledger.db")) == [
        "ledger.db", "ledger.db.replaced-20261122T043000Z", "ledger.db.replaced-20261122T043000Z-shm",
        "ledger.db.replaced-20261122T043000Z-wal"]
    with Ledger(db) as led:
        assert [e.key for e in led.events()] == ["k0", "k1", "k2", "k3"] and led.verify_chain() == []
