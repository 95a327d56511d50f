"""A power cut, simulated below SQLite: an APSW VFS that remembers which writes were synced.

Why a VFS and not SIGKILL: after a killed process the kernel's page cache still holds every write
and reaches the disk, so a kill test passes even with ``synchronous=OFF``. A power cut loses what
was written but not yet synced. This VFS passes every call through to the real file (so SQLite
reads its own writes, as it does through the page cache) and logs each write, truncate and sync.
The disk as a power cut at operation ``k`` would leave it is then rebuilt from the log: every
write synced before ``k`` is there, and of the writes not yet synced none, or (the harsher case)
a random subset, as a drive that reorders its cache might keep.

The ledger under test is the real ``table.ledger.Ledger``, given an APSW connection through its
``connect`` hook; the rebuilt files are then opened with the standard ``sqlite3`` module, as the
controller would after the power came back.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import apsw

from table.ledger import Ledger, LedgerError


@dataclass
class Op:
    """One logged file operation: ``write`` (offset, data), ``truncate`` (size), ``sync`` or ``delete``."""

    kind: str
    path: str
    offset: int = 0
    data: bytes = b""


@dataclass
class Disk:
    """Every operation the VFS saw, in order, and the files as they were before the first one."""

    db: str
    ops: list[Op] = field(default_factory=list)
    initial: dict[str, bytes] = field(default_factory=dict)

    def image(self, cut: int, rng: random.Random | None = None, *, lose_names: bool = False) -> dict[str, bytes]:
        """The files a power cut after ``cut`` operations leaves: synced writes, plus (with ``rng``)
        a random subset of the unsynced ones, applied in order. With ``lose_names`` a file made
        during the night is gone altogether, synced content and all, unless its folder was synced
        (a ``dirsync``) after it was made: a file's name is a write to its folder."""
        durable = {p: bytearray(b) for p, b in self.initial.items()}
        pending: dict[str, list[Op]] = {}
        unnamed: set[str] = set()
        for op in self.ops[:cut]:
            if op.kind == "dirsync":
                unnamed.clear()
                continue
            if op.path not in durable and op.kind != "delete":
                unnamed.add(op.path)
            if op.kind == "sync":
                for w in pending.pop(op.path, []):
                    _apply(durable.setdefault(op.path, bytearray()), w)
            elif op.kind == "delete":
                durable.pop(op.path, None)
                pending.pop(op.path, None)
            else:
                durable.setdefault(op.path, bytearray())  # a created file: its name survives, empty
                pending.setdefault(op.path, []).append(op)
        if rng is not None:
            for path, writes in pending.items():
                for w in writes:
                    if rng.random() < 0.5:
                        _apply(durable[path], w)
        if lose_names:
            for path in unnamed:
                durable.pop(path, None)
        return {p: bytes(b) for p, b in durable.items()}


def _apply(buf: bytearray, op: Op) -> None:
    if op.kind == "truncate":
        del buf[op.offset:]
        return
    end = op.offset + len(op.data)
    if len(buf) < op.offset:
        buf.extend(b"\0" * (op.offset - len(buf)))
    buf[op.offset:end] = op.data


class _File(apsw.VFSFile):  # type: ignore[misc,unused-ignore]  # apsw is typed or not, as mypy finds it
    def __init__(self, vfs: PowerCutVFS, name: Any, flags: list[int]) -> None:
        self.vfs = vfs
        self.path = name.filename() if isinstance(name, apsw.URIFilename) else str(name)
        if self.path not in vfs.disk.initial and Path(self.path).exists():
            vfs.disk.initial[self.path] = Path(self.path).read_bytes()
        super().__init__("", name, flags)

    def xWrite(self, data: bytes, offset: int) -> None:
        super().xWrite(data, offset)
        self.vfs.log(Op("write", self.path, offset, bytes(data)))

    def xTruncate(self, size: int) -> None:
        super().xTruncate(size)
        self.vfs.log(Op("truncate", self.path, size))

    def xSync(self, flags: int) -> None:
        super().xSync(flags)
        self.vfs.log(Op("sync", self.path))


class PowerCutVFS(apsw.VFS):  # type: ignore[misc,unused-ignore]  # as above
    """Registered under ``name``; logs every write, truncate, sync and delete into ``disk``."""

    def __init__(self, db: Path, name: str = "powercut") -> None:
        self.name = name
        self.disk = Disk(str(db))
        super().__init__(name, "")

    def log(self, op: Op) -> None:
        self.disk.ops.append(op)

    def xOpen(self, name: Any, flags: list[int]) -> _File:
        return _File(self, name, flags)

    def xDelete(self, filename: str, syncdir: bool) -> None:
        super().xDelete(filename, syncdir)
        self.log(Op("delete", str(filename)))


class ApswConnection:
    """The slice of ``sqlite3.Connection`` that ``Ledger`` uses, over an APSW connection.

    Exclusive locking keeps the WAL index in heap memory (no ``-shm`` file: only the database and
    its WAL matter after a cut); a small autocheckpoint makes checkpoints, the riskiest moments,
    happen many times in a short run.
    """

    def __init__(self, path: Path, vfs: str, *, autocheckpoint: int | None = 8, exclusive: bool = True) -> None:
        """``exclusive=False, autocheckpoint=None``: the controller's own settings (normal locking
        with a ``-shm`` file, SQLite's default checkpoint every 1,000 pages)."""
        self.con = apsw.Connection(str(path), vfs=vfs)
        if exclusive:
            self.con.execute("PRAGMA locking_mode=EXCLUSIVE")
        if autocheckpoint is not None:
            self.con.execute(f"PRAGMA wal_autocheckpoint={autocheckpoint}")

    def execute(self, sql: str, args: Iterable[Any] = ()) -> Any:
        return self.con.execute(sql, tuple(args))

    def executescript(self, script: str) -> None:
        self.con.execute(script)

    @property
    def in_transaction(self) -> bool:
        return not self.con.getautocommit()

    def close(self) -> None:
        self.con.close()


@dataclass(frozen=True)
class CutResult:
    cut: int
    torn: bool
    acknowledged: int
    lost: int
    opened: bool
    problem: str


#: How the ledger's connection is set up: the harness's harsh default (exclusive locking, a
#: checkpoint every 8 pages, so checkpoints happen often) or the controller's own.
SETTINGS: dict[str, dict[str, Any]] = {
    "harsh": {"exclusive": True, "autocheckpoint": 8},
    "production": {"exclusive": False, "autocheckpoint": None},
}


def _ledger(vfs: PowerCutVFS, settings: str, clock: Callable[[], float], sync_dir: bool = True) -> Ledger:
    def dirsync(folder: Path) -> None:
        import os

        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        vfs.log(Op("dirsync", str(folder)))

    def connect(path: Path) -> sqlite3.Connection:
        # the slice of sqlite3.Connection the ledger uses, over APSW (see ApswConnection)
        return cast(sqlite3.Connection, ApswConnection(path, vfs.name, **SETTINGS[settings]))

    return Ledger(vfs.disk.db, connect=connect, clock=clock,
                  sync_dir=dirsync if sync_dir else (lambda _folder: None))


def run_night(vfs: PowerCutVFS, events: int, *, seed: int = 0,
              tweak: Callable[[Ledger], None] | None = None, settings: str = "harsh",
              sync_dir: bool = True) -> list[tuple[int, str]]:
    """Append ``events`` events (singly and in batches) to a new ledger through the VFS; return
    ``(ops done when the append returned, key)`` for every acknowledged event."""
    rng = random.Random(seed)
    acked: list[tuple[int, str]] = []
    led = _ledger(vfs, settings, lambda: 1000.0 + len(acked), sync_dir)
    if tweak is not None:
        tweak(led)
    n = 0
    while n < events:
        batch = [(f"k{n + i}", {"i": n + i, "pad": "x" * rng.randrange(10, 1500)}) for i in
                 range(min(events - n, rng.choice((1, 1, 1, 3))))]
        led.append_many([("adjust_chips", data, key) for key, data in batch])
        acked.extend((len(vfs.disk.ops), key) for key, _ in batch)
        n += len(batch)
    led.close()
    return acked


def check_cut(disk: Disk, acked: list[tuple[int, str]], cut: int, workdir: Path, *, torn: bool,
              lose_names: bool = False, marker: Callable[[Any], str] = lambda e: str(e.key)) -> CutResult:
    """Rebuild the disk at ``cut``, open it with the standard sqlite3 module, count the losses
    (an acknowledged event is found by ``marker(event)``: its key, or the reason an HTTP command gave)."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    image = disk.image(cut, random.Random(cut) if torn else None, lose_names=lose_names)
    for path, data in image.items():
        (workdir / Path(path).name).write_bytes(data)
    db_name = workdir / Path(disk.db).name  # missing before the first sync: a new ledger, as at first start
    expected = {key for at, key in acked if at <= cut}
    try:
        with Ledger(db_name) as led:
            problems = led.verify_chain()
            if led.integrity() != "ok":
                problems.insert(0, led.integrity())
            found = {marker(e) for e in led.iter_events()}
    except LedgerError as exc:
        return CutResult(cut, torn, len(expected), len(expected), False, str(exc))
    return CutResult(cut, torn, len(expected), len(expected - found), True, "; ".join(problems))


def power_cuts(tmp: Path, *, events: int = 120, cuts: int = 320, seed: int = 7,
               tweak: Callable[[Ledger], None] | None = None, name: str = "powercut",
               settings: str = "harsh", lose_names: bool = False, sync_dir: bool = True,
               night: Callable[[PowerCutVFS], list[tuple[int, str]]] | None = None,
               marker: Callable[[Any], str] = lambda e: str(e.key)) -> list[CutResult]:
    """One logged night, then ``cuts`` power cuts spread evenly over its operations (every other
    one keeps a random subset of the unsynced writes; with ``lose_names`` the names of files made
    since the folder was last synced are lost too). ``night(vfs)`` replaces the plain appends."""
    folder = tmp / "night"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    vfs = PowerCutVFS(folder / "ledger.db", name)
    try:
        acked = night(vfs) if night is not None else run_night(
            vfs, events, seed=seed, tweak=tweak, settings=settings, sync_dir=sync_dir)
    finally:
        vfs.unregister()
    total = len(vfs.disk.ops)
    points = sorted({round(i * total / (cuts - 1)) for i in range(cuts)})
    return [check_cut(vfs.disk, acked, cut, tmp / "cut", torn=bool(i % 2), lose_names=lose_names, marker=marker)
            for i, cut in enumerate(points)]


def http_night(vfs: PowerCutVFS, commands: int, state_dir: Path) -> list[tuple[int, str]]:
    """The controller's own path: ``commands`` chip adjustments POSTed to the dashboard (login,
    CSRF, the referee's queue, the ledger with production settings through the VFS); returns
    ``(ops done when the 200 answer came back, the command's reason)`` for every answered one."""
    from table.referee import Referee
    from table.service import TableService
    from web import create_app

    led = _ledger(vfs, "production", __import__("time").time)
    ref = Referee(led, setup={"players": ["Ann", "Bea", "Cal"], "variant": "three_card", "options": {},
                              "chips": 50, "first_dealer": 0}).start()
    acked: list[tuple[int, str]] = []
    try:
        app = create_app(TableService(ref), config={"STATE_DIR": state_dir, "ADMIN_PIN": "135790"})
        client = app.test_client()
        client.get("/admin")
        with client.session_transaction() as sess:
            token = str(sess["csrf"])
        origin = {"Origin": "http://localhost"}
        answer = client.post("/admin/login", json={"pin": "135790"}, headers={**origin, "X-CSRF-Token": token})
        token = answer.get_json()["csrf_token"]
        for i in range(commands):
            reason = f"http {i}"
            resp = client.post("/api/admin/adjust_chips", json={"player": "Ann", "delta": 1, "reason": reason},
                               headers={**origin, "X-CSRF-Token": token})
            if resp.status_code == 200:
                acked.append((len(vfs.disk.ops), reason))
    finally:
        ref.stop()
        led.close()
    return acked
