"""The photos that prove go with the backups: each backup carries the ledger's photos, rotating a
backup away prunes its photos, and a restore brings them back beside the ledger."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest

from table.backup import backup_database, backup_photos, list_backups, restore_backup, rotate
from table.ledger import Ledger
from table.photos import PhotoStore, photos_dir

T0 = dt.datetime(2026, 11, 22, 4, 30, tzinfo=dt.UTC)


def clock(start: dt.datetime = T0):
    times = iter(start + dt.timedelta(days=i) for i in range(100))
    return lambda: next(times)


@pytest.fixture
def night(tmp_path):
    db = tmp_path / "ledger.db"
    led = Ledger(db)
    led.append("pause", {})
    store = PhotoStore.for_ledger(db)
    names = [store.save(b"\xff\xd8 photo of a revoke"), store.save(b"\xff\xd8 photo of a correction")]
    yield db, store, names
    led.close()


def test_each_backup_carries_the_ledgers_photos(night, tmp_path):
    db, store, names = night
    info = backup_database(db, tmp_path / "backups", clock=clock())
    kept = backup_photos(info.path)
    assert kept.name == info.path.stem + ".photos"
    assert sorted(p.stem for p in kept.glob("*.jpg")) == sorted(names)
    for name in names:
        assert hashlib.sha256((kept / f"{name}.jpg").read_bytes()).hexdigest() == name
    assert store.save(b"\xff\xd8 photo of a revoke") == names[0]  # the same bytes: the same one file


def test_rotating_a_backup_away_prunes_its_photos(night, tmp_path):
    db, store, names = night
    tick = clock()
    first = backup_database(db, tmp_path / "backups", keep=2, clock=tick)
    newer = store.save(b"\xff\xd8 a later photo")
    second = backup_database(db, tmp_path / "backups", keep=2, clock=tick)
    assert newer not in {p.stem for p in backup_photos(first.path).glob("*.jpg")}
    assert newer in {p.stem for p in backup_photos(second.path).glob("*.jpg")}
    third = backup_database(db, tmp_path / "backups", keep=2, clock=tick)  # the first goes
    assert [i.path for i in list_backups(tmp_path / "backups")] == [third.path, second.path]
    assert not backup_photos(first.path).exists()
    assert backup_photos(second.path).is_dir() and backup_photos(third.path).is_dir()
    (tmp_path / "backups" / "ledger-20261101T000000Z.photos.partial").mkdir()  # a cut backup's
    removed = rotate(tmp_path / "backups", keep=1)
    assert backup_photos(second.path) in removed and not backup_photos(second.path).exists()
    assert not (tmp_path / "backups" / "ledger-20261101T000000Z.photos.partial").exists()
    assert sorted(p.stem for p in backup_photos(third.path).glob("*.jpg")) == sorted([*names, newer])


def test_a_restore_brings_the_photos_back(night, tmp_path):
    db, store, names = night
    info = backup_database(db, tmp_path / "backups", clock=clock())
    for name in names:
        store.path(name).unlink()
    restored = tmp_path / "restored" / "ledger.db"
    restore_backup(info.path, restored, clock=clock())
    again = PhotoStore(photos_dir(restored))
    assert [again.read(n) is not None for n in names] == [True, True]


def test_a_ledger_without_photos_backs_up_as_before(tmp_path):
    db = tmp_path / "ledger.db"
    with Ledger(db) as led:
        led.append("pause", {})
    info = backup_database(db, tmp_path / "backups", clock=clock())
    assert not backup_photos(info.path).exists()
    assert PhotoStore.for_ledger(db).read("0" * 64) is None
    with pytest.raises(ValueError, match="not a photo's name"):
        PhotoStore.for_ledger(db).path("../ledger")
