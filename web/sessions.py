"""Admin sessions kept on the server: the cookie carries a random id, the server the list of ids.

Why: a signed cookie checked against one shared key can only be ended all together, so a logout
had to end every admin session, and a guest (who gets a CSRF token from the login page) could log
the host out with one POST. Here each login gets its own id; a logout revokes that id only, and
only the session holding it can send it. The store keeps ``sha256(id)`` (never the id itself) and
its expiry in a 0600 file in the state directory, so a restart keeps the host logged in, a copy of
the file logs nobody in, and a changed PIN (the file is tagged with a fingerprint of the PIN hash)
ends every session.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path

from web.private_file import write_private

SESSIONS_FILE = "admin-sessions.json"
#: At most this many admin sessions at once (a table has one host and maybe a co-host or two);
#: the oldest is ended when a login would pass it, so the file stays small whatever happens.
MAX_SESSIONS = 32


def _digest(sid: str) -> str:
    return hashlib.sha256(sid.encode("utf-8", errors="replace")).hexdigest()


class SessionStore:
    """The open admin sessions: ``open()`` makes one, ``valid(sid)`` checks one, ``revoke(sid)``
    ends one, ``revoke_all()`` ends every one. Thread-safe; every change is written through."""

    def __init__(self, state_dir: str | os.PathLike[str], pin_hash: str, *, lifetime_s: float,
                 clock: Callable[[], float] = time.time, cap: int = MAX_SESSIONS) -> None:
        self.path = Path(state_dir) / SESSIONS_FILE
        self.lifetime_s = lifetime_s
        self.cap = cap
        self._clock = clock
        self._pin = hashlib.sha256(pin_hash.encode("ascii", errors="replace")).hexdigest()[:32]
        self._lock = threading.Lock()
        self._stamp: int | None = None
        self._sessions: dict[str, float] = self._load()

    def _mtime(self) -> int | None:
        try:
            return self.path.stat().st_mtime_ns
        except OSError:
            return None

    def _load(self) -> dict[str, float]:
        """The saved sessions, or none when the file is missing, damaged or from another PIN."""
        self._stamp = self._mtime()
        try:
            raw = json.loads(self.path.read_text(encoding="ascii"))
        except (OSError, ValueError):
            return {}
        if not isinstance(raw, dict) or raw.get("pin") != self._pin or not isinstance(raw.get("sessions"), dict):
            return {}
        now = self._clock()
        return {k: float(v) for k, v in raw["sessions"].items()
                if isinstance(k, str) and len(k) == 64 and isinstance(v, (int, float)) and v > now}

    def _save(self) -> None:
        write_private(self.path, json.dumps({"pin": self._pin, "sessions": self._sessions}) + "\n")
        self._stamp = self._mtime()

    def open(self) -> str:
        """A new session id (the cookie's), valid for ``lifetime_s`` or until revoked."""
        sid = secrets.token_urlsafe(32)
        now = self._clock()
        with self._lock:
            self._sessions = {k: v for k, v in self._sessions.items() if v > now}
            while len(self._sessions) >= self.cap:
                del self._sessions[min(self._sessions, key=self._sessions.__getitem__)]
            self._sessions[_digest(sid)] = now + self.lifetime_s
            self._save()
        return sid

    def valid(self, sid: object) -> bool:
        if not isinstance(sid, str) or not sid:
            return False
        digest = _digest(sid)
        with self._lock:
            expiry = self._sessions.get(digest)
            if expiry is None and self._mtime() != self._stamp:  # written by another process since
                self._sessions = self._load()
                expiry = self._sessions.get(digest)
        return expiry is not None and expiry > self._clock()

    def revoke(self, sid: object) -> bool:
        """End one session; False when it was not open (nothing changed)."""
        if not isinstance(sid, str):
            return False
        with self._lock:
            if self._sessions.pop(_digest(sid), None) is None:
                return False
            self._save()
            return True

    def revoke_all(self) -> int:
        """End every session (the host's "log out every phone"); how many were open."""
        with self._lock:
            count = len(self._sessions)
            self._sessions = {}
            self._save()
            return count

    def __len__(self) -> int:
        now = self._clock()
        with self._lock:
            return sum(1 for v in self._sessions.values() if v > now)
