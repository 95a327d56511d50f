"""The ledger: an append-only log of table events in SQLite on disk.

Why SQLite and these settings: one file the Pi can back up with the online backup API, WAL so the
dashboard's readers never block the referee's writer, and ``synchronous=FULL`` because with NORMAL a
committed transaction can roll back after a power cut (`python bench/power_cut.py` shows it). An event is acknowledged
only after its COMMIT returned, so "acknowledged" means "on disk".

Append-only is enforced by the schema itself (triggers refuse UPDATE and DELETE), and every event
carries an idempotency key: appending the same key twice returns the first event instead of writing a
second one, so a retried button press or dashboard POST is harmless. Corrections (a misread card, a
chip adjustment, an undo) are new events; the table state is a fold of the log (`table.state`).

Tamper evidence: the triggers stop mistakes, not someone who drops them. So every event also carries
``hash = sha256(previous hash + the event)``. `verify_chain` walks the chain: an edited, deleted or
inserted row breaks it, and a cut tail leaves it short of the highest seq SQLite's AUTOINCREMENT
recorded (``sqlite_sequence``, written with each row at no extra page). The dashboard's History and
`ledger verify` print the head hash, so a host who notes it can later tell a rewritten log too.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from table.backup_files import recovery_hint
from table.contract.json_value import JsonObject
from table.files import fsync_dir
from table.night import StrayWal, night_of, refuse_stray_wal

__all__ = [
    "Event",
    "Ledger",
    "LedgerError",
    "LedgerCorrupt",
    "LedgerWriteError",
    "IdempotencyConflict",
    "Item",
    "SCHEMA_VERSION",
    "chain_hash",
    "night_of",
    "seal_of",
]

SCHEMA_VERSION = 2
#: The ``prev`` of the first event.
GENESIS = "0" * 64

_UPDATE_TRIGGER = """CREATE TRIGGER IF NOT EXISTS events_append_only_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: corrections are new events'); END;"""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    seq  INTEGER PRIMARY KEY AUTOINCREMENT,
    key  TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    data TEXT NOT NULL CHECK (json_valid(data)),
    at   REAL NOT NULL,
    hash TEXT,
    mac  TEXT
);
{update_trigger}
CREATE TRIGGER IF NOT EXISTS events_append_only_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'the ledger is append-only: corrections are new events'); END;
""".replace("{update_trigger}", _UPDATE_TRIGGER)


class LedgerError(Exception):
    """Base class; ``str(err)`` is one line for the host."""


class LedgerCorrupt(LedgerError):
    """The database file failed its check at open; the message names the latest backup."""


class LedgerWriteError(LedgerError):
    """An event could not be written (disk full, I/O error). Nothing of it was written."""


class IdempotencyConflict(LedgerError, ValueError):
    """The key was already used for a different event."""


@dataclass(frozen=True)
class Event:
    """One committed event. `data` is JSON-safe; `seq` orders the log."""

    seq: int
    key: str
    kind: str
    data: JsonObject
    at: float
    hash: str = ""

    def row(self) -> dict[str, str | int | float | None]:
        """A flat row for CSV/JSON export (`data` as a JSON string)."""
        return {"seq": self.seq, "key": self.key, "kind": self.kind, "at": self.at,
                "data": json.dumps(self.data, sort_keys=True, separators=(",", ":"))}


Item = tuple[str, Mapping[str, object], str | None]
"""An event to write: its kind, its data (anything ``json.dumps`` takes) and its idempotency key."""


def _dumps(data: Mapping[str, object]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _lenient_text(raw: bytes) -> str:
    """Text from SQLite, with bytes that are not UTF-8 replaced: a damaged row or SQLite's report
    about one must reach the host as a message (the hash chain then flags the row), not a
    UnicodeDecodeError."""
    return raw.decode("utf-8", errors="replace")


def _connect(path: Path | str, *, uri: bool = False) -> sqlite3.Connection:
    con: sqlite3.Connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False, uri=uri)
    con.text_factory = _lenient_text
    return con


def chain_hash(prev: str, seq: int, key: str, kind: str, data_text: str, at: float) -> str:
    """The hash an event carries: its fields as stored, chained to the event before it."""
    body = json.dumps([prev, seq, key, kind, data_text, at], separators=(",", ":"))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _last(con: sqlite3.Connection) -> tuple[int, str]:
    """``(seq, hash)`` of the last event (``(0, GENESIS)`` when there is none)."""
    row = con.execute("SELECT seq, hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
    return (0, GENESIS) if row is None else (int(row[0]), str(row[1]))


def _high_water(con: sqlite3.Connection) -> int:
    """The highest seq ever written: SQLite's AUTOINCREMENT keeps it in ``sqlite_sequence``, in
    the same transaction as the row, and never lowers it when rows go."""
    row = con.execute("SELECT seq FROM sqlite_sequence WHERE name='events'").fetchone()
    return 0 if row is None else int(row[0])


def _chain_problems(path: Path) -> list[str]:
    """The chain's problems of the ledger at ``path`` (one, when it cannot even be opened)."""
    try:
        with Ledger(path, readonly=True, check=False) as led:
            return led.verify_chain()
    except LedgerError as exc:
        return [str(exc)]


def _refuse_stray_wal(path: Path) -> None:
    """``table.night.refuse_stray_wal`` as a ``LedgerError`` (one line; both files untouched)."""
    try:
        refuse_stray_wal(path, _chain_problems)
    except StrayWal as exc:
        raise LedgerError(str(exc)) from None


def _columns(con: sqlite3.Connection) -> set[str]:
    return {str(r[1]) for r in con.execute("PRAGMA table_info(events)")}


def seal_of(key: bytes, digest: str) -> str:
    """An event's seal: HMAC-SHA256 of its chain hash (which covers it and every event before it)
    with the service's key; without the key a rewritten chain cannot be sealed again."""
    return hmac.new(key, digest.encode("ascii", errors="replace"), hashlib.sha256).hexdigest()


def _since_mac(key: bytes, night: str, since: int) -> str:
    return hmac.new(key, f"sealed_since:{night}:{since}".encode("ascii", errors="replace"),
                    hashlib.sha256).hexdigest()


def _sealed_since(con: sqlite3.Connection, key: bytes) -> int | str:
    """The first event that must be sealed, or why the ledger's record of it cannot be trusted."""
    try:
        row = con.execute("SELECT value FROM meta WHERE name='sealed_since'").fetchone()
    except sqlite3.Error as exc:
        return f"its sealing record cannot be read ({exc})"
    if row is None:
        return "it was never sealed with this key (its sealing record is missing: removed, or another table's ledger)"
    since_text, _, mac = str(row[0]).partition(":")
    if since_text.isdigit() and hmac.compare_digest(mac, _since_mac(key, night_of(con) or "", int(since_text))):
        return int(since_text)
    return "its sealing record does not match the key (changed by hand, or another table's ledger)"


def _migrate_v1(con: sqlite3.Connection) -> None:
    """Schema 1 had no hashes: add the column and chain the existing events, in one transaction
    (the update trigger is lifted for exactly that and put back)."""
    con.execute("BEGIN IMMEDIATE")
    try:
        con.execute("ALTER TABLE events ADD COLUMN hash TEXT")
        con.execute("DROP TRIGGER events_append_only_update")
        prev = GENESIS
        for seq, key, kind, data, at in con.execute(
                "SELECT seq, key, kind, data, at FROM events ORDER BY seq").fetchall():
            prev = chain_hash(prev, seq, key, kind, data, at)
            con.execute("UPDATE events SET hash=? WHERE seq=?", (prev, seq))
        con.execute("UPDATE meta SET value=? WHERE name='schema'", (str(SCHEMA_VERSION),))
        con.execute(_UPDATE_TRIGGER)
        con.execute("COMMIT")
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise


def _corrupt_message(path: Path, verdict: str, backup_dir: Path | str | None) -> str:
    try:
        hint = recovery_hint(path, backup_dir)
    except Exception as exc:  # the hint must never hide the real problem
        hint = f"(could not look for backups: {exc})"
    return f"ledger {path} is corrupt ({verdict}); refusing to start; {hint}"


class Ledger:
    """The append-only event log in one SQLite file.

    >>> ledger = Ledger(tmp_path / "ledger.db")
    >>> ev = ledger.append("adjust_chips", {"player": "Ann", "delta": 5, "reason": "bought in"})
    >>> [e.kind for e in ledger.events()]
    ['adjust_chips']

    Thread-safe: one lock serialises writers; readers use their own short-lived connections so the
    dashboard never waits on the referee (WAL).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        backup_dir: str | Path | None = None,
        clock: Callable[[], float] = time.time,
        check: bool = True,
        readonly: bool = False,
        connect: Callable[[Path], sqlite3.Connection] | None = None,
        key: bytes | None = None,
        sync_dir: Callable[[Path], None] | None = None,
    ) -> None:
        """``connect(path)`` opens the writer's connection (default: ``sqlite3``; the power-cut test
        passes one over a VFS that drops unsynced writes, as gpiozero takes a pin factory).

        ``key`` (``table.seal.load_key``: a file only the service reads) seals every event written:
        ``mac = HMAC-SHA256(key, hash)``, so a chain rewritten without the key fails `verify_chain`
        given the key.

        ``sync_dir(folder)`` makes the folder's entries durable (default: fsync the folder); it runs
        once the ledger and its WAL exist, so a power cut cannot lose a new file's name while its
        synced content is kept (the power-cut test passes one that logs it)."""
        self.path = Path(path)
        self._key = key
        self.backup_dir = backup_dir
        self._clock = clock
        self._lock = threading.Lock()
        self._failed: str | None = "opened read-only" if readonly else None
        self._ro_uri = self.path.resolve().as_uri() + "?mode=ro"
        self._cols = "seq, key, kind, data, at, hash"
        if readonly:  # `ledger verify` / `export` beside a running table: never write, never create
            if not self.path.is_file():
                raise LedgerError(f"ledger {self.path}: no such file")
            if check:
                from table.instance import running_pid

                if running_pid(self.path) is None:  # a live table's own WAL is the night's, mid-write
                    _refuse_stray_wal(self.path)
            if not any(Path(f"{self.path}{s}").exists() for s in ("-wal", "-shm")):
                # Nobody has the ledger open (a live table keeps its -wal): read it as immutable, or
                # SQLite would leave -wal/-shm files behind, owned by whoever ran `verify` (root),
                # which the service's own user could then not open.
                self._ro_uri += "&immutable=1"
            try:
                self._con = _connect(self._ro_uri, uri=True)
                rows = self._con.execute("PRAGMA quick_check").fetchall() if check else [("ok",)]
                self._con.execute("SELECT COUNT(*) FROM events").fetchone()
            except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # SQLite may quote a bad byte
                raise LedgerCorrupt(_corrupt_message(self.path, str(exc), backup_dir)) from None
            if rows != [("ok",)]:
                self._con.close()
                raise LedgerCorrupt(_corrupt_message(self.path, "; ".join(str(r[0]) for r in rows[:2]),
                                                     backup_dir))
            columns = {r[1] for r in self._con.execute("PRAGMA table_info(events)")}
            if "hash" not in columns:  # a schema-1 ledger, read as it is
                self._cols = self._cols.replace("hash", "NULL")
            return
        existed = self.path.exists() and self.path.stat().st_size > 0
        if not existed:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif check:
            _refuse_stray_wal(self.path)  # before SQLite opens it: an open applies whatever WAL lies there
        try:
            self._con = (connect or _connect)(self.path)
            if existed and check:
                rows = self._con.execute("PRAGMA quick_check").fetchall()
                if rows != [("ok",)]:
                    verdict = "; ".join(str(r[0]) for r in rows[:2])
                    self._con.close()
                    raise LedgerCorrupt(_corrupt_message(self.path, verdict, backup_dir))
            self._con.execute("PRAGMA journal_mode=WAL")
            self._con.execute("PRAGMA synchronous=FULL")
            self._con.execute("PRAGMA foreign_keys=ON")
            # one transaction: a kill while a new ledger is set up leaves all of the schema or none
            # the night's identity is made with the file (and added to a ledger from before it had
            # one): a WAL or a restore from another night is told apart by it
            self._con.executescript(f"BEGIN IMMEDIATE;\n{_SCHEMA}\nINSERT OR IGNORE INTO meta(name, value) "
                                    f"VALUES ('schema', '{SCHEMA_VERSION}');\nINSERT OR IGNORE INTO meta(name, value) "
                                    f"VALUES ('night', '{uuid.uuid4().hex}');\nCOMMIT;")
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            if isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc):
                raise LedgerError(f"ledger {self.path}: cannot open ({exc})") from None
            raise LedgerCorrupt(_corrupt_message(self.path, str(exc), backup_dir)) from None
        try:  # the file and its -wal may have just been made: their names must survive a power cut
            (sync_dir or fsync_dir)(self.path.parent)
        except OSError as exc:
            raise LedgerError(f"ledger {self.path}: cannot sync its folder ({exc.strerror or exc})") from None
        version = self._con.execute("SELECT value FROM meta WHERE name='schema'").fetchone()[0]
        if int(version) == 1:
            _migrate_v1(self._con)
            version = SCHEMA_VERSION
        if int(version) != SCHEMA_VERSION:
            raise LedgerError(f"ledger {self.path}: schema {version}, this loo-table reads {SCHEMA_VERSION}")
        if "mac" not in _columns(self._con):
            self._con.execute("ALTER TABLE events ADD COLUMN mac TEXT")  # sealing came later: old rows stay unsealed
        if key is not None:
            self._mark_sealed()

    def _mark_sealed(self) -> None:
        """Record, sealed, from which event on this ledger is sealed (the next one, the first time a
        key opens it): `verify_chain` then requires a seal on every event from there, so blanking
        the seals does not pass for a ledger from before sealing."""
        assert self._key is not None
        con = self._con
        con.execute("BEGIN IMMEDIATE")
        try:
            if con.execute("SELECT 1 FROM meta WHERE name='sealed_since'").fetchone() is None:
                since = max(_last(con)[0], _high_water(con)) + 1
                night = night_of(con) or ""
                con.execute("INSERT INTO meta(name, value) VALUES ('sealed_since', ?)",
                            (f"{since}:{_since_mac(self._key, night, since)}",))
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise

    # -- writing -----------------------------------------------------------------------------------
    @property
    def failed(self) -> str | None:
        """Why the ledger stopped accepting events (a write failed), else None."""
        return self._failed

    def append(self, kind: str, data: Mapping[str, object] | None = None, *, key: str | None = None) -> Event:
        """Write one event and return it once it is committed (on disk).

        With a `key` already in the log, the existing event is returned (same kind and data) or
        IdempotencyConflict raised (different content); nothing is written either way.
        """
        return self.append_many([(kind, data or {}, key)])[0]

    def append_many(self, items: Iterable[Item]) -> list[Event]:
        """Write several events in ONE transaction: all of them are committed, or none."""
        prepared = []
        for kind, data, key in items:
            if not kind or not isinstance(kind, str):
                raise ValueError("an event needs a kind")
            prepared.append((kind, _dumps(data), key or f"{kind}:{uuid.uuid4().hex}"))
        with self._lock:
            if self._failed is not None:
                raise LedgerWriteError(f"the ledger stopped accepting events: {self._failed}")
            con = self._con
            out: list[Event] = []
            try:
                con.execute("BEGIN IMMEDIATE")
                try:
                    head_seq, prev = _last(con)
                    # past every seq ever written: rows cut from the end stay a visible gap
                    head_seq = max(head_seq, _high_water(con))
                    for kind, text, key in prepared:
                        row = con.execute("SELECT seq, kind, data, at, hash FROM events WHERE key=?",
                                          (key,)).fetchone()
                        if row is not None:
                            if row[1] != kind or row[2] != text:
                                raise IdempotencyConflict(
                                    f"key {key!r} was already used for another event (seq {row[0]})"
                                )
                            out.append(Event(row[0], key, row[1], json.loads(row[2]), row[3], row[4] or ""))
                            continue
                        at = float(self._clock())
                        head_seq += 1
                        prev = chain_hash(prev, head_seq, key, kind, text, at)
                        mac = seal_of(self._key, prev) if self._key is not None else None
                        con.execute("INSERT INTO events(seq, key, kind, data, at, hash, mac) "
                                    "VALUES (?, ?, ?, ?, ?, ?, ?)", (head_seq, key, kind, text, at, prev, mac))
                        out.append(Event(head_seq, key, kind, json.loads(text), at, prev))
                    con.execute("COMMIT")
                except BaseException:
                    if con.in_transaction:
                        con.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                # Disk full, I/O error, read-only file system: SQLite rolled the transaction back,
                # so nothing half-written exists. Stop accepting events until restarted.
                reason = f"{exc} ({self.path})"
                if isinstance(exc, sqlite3.OperationalError) and "full" in str(exc):
                    reason = f"the disk is full; free space and restart ({self.path})"
                self._failed = reason
                raise LedgerWriteError(f"the event was not written: {reason}") from None
            return out

    # -- reading -----------------------------------------------------------------------------------
    def _reader(self) -> sqlite3.Connection:
        return _connect(self._ro_uri, uri=True)

    def events(self, since: int = 0, *, until: int | None = None) -> list[Event]:
        """Committed events with seq > `since` (and <= `until`), oldest first."""
        return list(self.iter_events(since, until=until))

    def iter_events(self, since: int = 0, *, until: int | None = None) -> Iterator[Event]:
        con = self._reader()
        try:
            sql = f"SELECT {self._cols} FROM events WHERE seq > ?"
            args: list[int] = [since]
            if until is not None:
                sql += " AND seq <= ?"
                args.append(until)
            for seq, key, kind, data, at, digest in con.execute(sql + " ORDER BY seq", args):
                yield Event(seq, key, kind, json.loads(data), at, digest or "")
        finally:
            con.close()

    def get(self, key: str) -> Event | None:
        con = self._reader()
        try:
            row = con.execute(f"SELECT {self._cols} FROM events WHERE key=?", (key,)).fetchone()
        finally:
            con.close()
        return None if row is None else Event(row[0], row[1], row[2], json.loads(row[3]), row[4], row[5] or "")

    def last_seq(self) -> int:
        con = self._reader()
        try:
            return int(con.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])
        finally:
            con.close()

    def head(self) -> tuple[int, str]:
        """``(seq, hash)`` of the last event (``(0, GENESIS)`` when empty): the value to note."""
        con = self._reader()
        try:
            return _last(con)
        finally:
            con.close()

    @property
    def night(self) -> str | None:
        """The night's identity (32 hex digits, made with the file), None for a ledger from before."""
        con = self._reader()
        try:
            return night_of(con)
        finally:
            con.close()

    def verify_chain(self, key: bytes | None = None) -> list[str]:
        """Walk the hash chain from the first event to the recorded head; one line per problem.

        With ``key`` every event from the ledger's sealed record of where sealing began (``meta
        sealed_since``, itself sealed) must carry a matching seal: a chain rewritten, an event
        inserted or appended without the key fails.
        Reads the raw rows (never ``json.loads``), so a damaged row is reported, not raised.
        """
        con = self._reader()
        try:
            try:
                high = _high_water(con)
            except sqlite3.Error as exc:
                return [f"the ledger's sequence record is unreadable ({exc})"]
            problems: list[str] = []
            prev, expected = GENESIS, 1
            since: int | None = None
            if key is not None:
                found = _sealed_since(con, key)
                if isinstance(found, str):
                    return [f"the ledger's seals cannot be trusted: {found}"]
                since = found
            mac_col = "mac" if "mac" in _columns(con) else "NULL"
            for seq, key_, kind, data, at, digest, mac in con.execute(
                    f"SELECT {self._cols}, {mac_col} FROM events ORDER BY seq"):
                if seq != expected:
                    problems.append(f"event {expected}: missing (the next row is {seq})")
                    break
                if not isinstance(at, float) or not all(isinstance(v, str) for v in (key_, kind, data)):
                    problems.append(f"event {seq}: a field has the wrong type")
                    break
                if digest is None:
                    problems.append(f"event {seq} has no hash: a ledger from before hash chaining "
                                    "(start the table once to chain it)")
                    break
                if digest != chain_hash(prev, seq, key_, kind, data, at):
                    problems.append(f"event {seq}: its hash does not match its content and the chain "
                                    "before it (edited, inserted or reordered)")
                    break
                if key is not None and since is not None and seq >= since:
                    if mac is None:
                        problems.append(f"event {seq} is not sealed: written without the table's key "
                                        "(inserted, appended or rewritten by hand)")
                        break
                    if not hmac.compare_digest(str(mac), seal_of(key, digest)):
                        problems.append(f"event {seq}: its seal does not match (the chain was rewritten "
                                        "without the table's key, or the key is another table's)")
                        break
                prev, expected = digest, expected + 1
            last = expected - 1
            if not problems and last != high:
                problems.append(f"the chain ends at event {last} but event {high} was written"
                                + (" (events were removed from the end)" if high > last else ""))
            return problems
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            return [f"the events cannot be read: {exc}"]
        finally:
            con.close()

    def seal(self, seq: int) -> str | None:
        """The seal stored with event ``seq`` (None when unsealed or absent)."""
        con = self._reader()
        try:
            if "mac" not in _columns(con):
                return None
            row = con.execute("SELECT mac FROM events WHERE seq=?", (seq,)).fetchone()
        finally:
            con.close()
        return None if row is None or row[0] is None else str(row[0])

    def hash_at(self, seq: int) -> str | None:
        """The chain hash of event ``seq`` (None when there is no such event)."""
        con = self._reader()
        try:
            row = con.execute("SELECT hash FROM events WHERE seq=?", (seq,)).fetchone()
        finally:
            con.close()
        return None if row is None or row[0] is None else str(row[0])

    def require_intact(self) -> None:
        """Raise ``LedgerCorrupt`` (naming the latest backup) when the hash chain is broken: a
        damaged row would otherwise fail the replay at every start, a crash loop under systemd."""
        problems = self.verify_chain()
        if problems:
            raise LedgerCorrupt(_corrupt_message(self.path, problems[0], self.backup_dir))

    def integrity(self) -> str:
        """``"ok"`` or SQLite's complaints (PRAGMA integrity_check)."""
        with self._lock:
            rows = self._con.execute("PRAGMA integrity_check").fetchall()
        return "ok" if rows == [("ok",)] else "; ".join(str(r[0]) for r in rows[:5])

    def close(self) -> None:
        with self._lock:
            try:
                self._con.close()
            except sqlite3.Error:
                pass

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
