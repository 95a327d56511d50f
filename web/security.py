"""Admin PIN, persistent secret key, login rate limit, CSRF token and same-origin checks.

Reading the dashboard is public on the LAN; every change needs the admin session. The pieces are
small enough to write here rather than add Flask-WTF and Flask-Limiter for one token compare and one
sliding window (two dependencies on a Pi for about sixty lines).
"""

from __future__ import annotations

import hmac
import math
import os
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from flask import current_app, request, session
from werkzeug.security import check_password_hash, generate_password_hash

from web.private_file import write_private
from web.sessions import SessionStore

PIN_FILE = "admin-pin.hash"
SECRET_FILE = "flask-secret.key"
PIN_DIGITS = 6
# The hash only keeps the PIN out of the file in clear: a 6-digit PIN falls to any offline search
# whatever the cost factor, so what protects it is the 0600 file and the login rate limit. A modest
# pbkdf2 cost keeps each login check at a few milliseconds on a Pi (scrypt would want 32 MiB).
_PIN_HASH_METHOD = "pbkdf2:sha256:10000"


class ApiError(Exception):
    """A refused request: becomes a JSON ``{"error": reason}`` with ``status`` (always 4xx)."""

    def __init__(self, status: int, reason: str, *, headers: dict[str, str] | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.headers = headers or {}


def load_secret_key(state_dir: str | os.PathLike[str]) -> bytes:
    """The Flask secret key, created once in the state directory so sessions survive a restart."""
    path = Path(state_dir) / SECRET_FILE
    if path.exists():
        text = path.read_text(encoding="ascii", errors="replace").strip()
        try:
            if len(text) >= 64:
                return bytes.fromhex(text)
        except ValueError:
            pass  # a damaged key file: make a new key (admins log in again), never refuse to start
    key = secrets.token_bytes(32)
    write_private(path, key.hex() + "\n")
    return key


@dataclass(frozen=True)
class AdminPin:
    """Where the PIN hash lives and, only when this call created it, the PIN to show once."""

    path: Path
    new_pin: str | None
    from_config: bool


def ensure_admin_pin(state_dir: str | os.PathLike[str], pin: str | None = None) -> AdminPin:
    """Make sure an admin PIN exists; the controller calls this at start and prints ``new_pin``.

    With ``pin`` (from the config) that PIN is stored (hashed) and used. Without one, an existing
    hash is kept; at the very first start a random six-digit PIN is generated and returned so the
    controller can show it in the terminal and the journal. Delete the file to get a new PIN.
    """
    path = Path(state_dir) / PIN_FILE
    if pin is not None:
        validate_pin_format(pin)
        if not (path.exists() and check_password_hash(path.read_text(encoding="ascii", errors="replace").strip(), pin)):
            write_private(path, generate_password_hash(pin, method=_PIN_HASH_METHOD) + "\n")
        return AdminPin(path, None, True)
    if path.exists() and _looks_like_hash(path.read_text(encoding="ascii", errors="replace").strip()):
        return AdminPin(path, None, False)
    new = "".join(secrets.choice("0123456789") for _ in range(PIN_DIGITS))
    write_private(path, generate_password_hash(new, method=_PIN_HASH_METHOD) + "\n")
    return AdminPin(path, new, False)


def _looks_like_hash(text: str) -> bool:
    """A werkzeug hash ``method$salt$hash``; anything else (a damaged file) means a new PIN."""
    return text.count("$") == 2 and text.split("$", 1)[0].startswith(("pbkdf2:", "scrypt:"))


def validate_pin_format(pin: object) -> str:
    """A PIN is 4 to 12 digits (typed on a phone's number pad)."""
    if not isinstance(pin, str) or not pin.isascii() or not pin.isdigit() or not 4 <= len(pin) <= 12:
        raise ValueError("the admin PIN must be 4 to 12 digits")
    return pin


def check_pin(pin_hash: str, attempt: str) -> bool:
    return check_password_hash(pin_hash, attempt)


@dataclass
class _Client:
    tries: deque[float] = field(default_factory=deque)  # admitted tries not yet cleared by a success
    locked_until: float = 0.0
    strikes: int = 0  # lock-outs so far: each one doubles the next
    last: float = 0.0


class TablePresence:
    """Seat-button presses at the table: once the dashboard's PIN budget is spent, a login needs
    one, so a guesser on the Wi-Fi gets nothing more while the host, at the table, always can.

    The controller calls ``pressed()`` for every seat-button gesture (the referee ignores a press
    out of turn, so any seat's button will do); each press admits ``tries_per_press`` PIN tries in
    the next ``window_s`` seconds.
    """

    def __init__(self, *, window_s: float = 60.0, tries_per_press: int = 3,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self.tries_per_press = tries_per_press
        self._clock = clock
        self._lock = threading.Lock()
        self._at: float | None = None
        self._left = 0

    def pressed(self, *_event: object) -> None:
        """A seat button was pressed (takes and ignores the button event, to sit in a sink chain)."""
        with self._lock:
            self._at = self._clock()
            self._left = self.tries_per_press

    def take(self) -> bool:
        """Use one try that a recent press admitted; False when there is none."""
        with self._lock:
            if self._at is None or self._left <= 0 or self._clock() - self._at > self.window_s:
                return False
            self._left -= 1
            return True


@dataclass(frozen=True)
class Refusal:
    """Why a login is not even checked: ``wait`` seconds (``Retry-After``) and a sentence."""

    wait: int
    reason: str


class LoginLimiter:
    """PIN tries, bounded per client address and for the whole server.

    Per address: at most ``per_client`` tries in ``window_s``, then a lock-out that doubles each
    time (capped at ``max_lock_s``). For the whole server, addresses new or old alike: at most
    ``overall`` tries in ``budget_window_s``; past that, a try is admitted only when a seat button
    was pressed at the table (``TablePresence``), so guessing from many addresses is bounded too
    and the host is never locked out. ``check`` decides and counts in one step under the lock, so a
    burst of parallel requests gets no more tries than a slow one; a success clears the client's
    own record (never the server's budget).
    """

    def __init__(self, *, per_client: int = 5, overall: int = 20, window_s: float = 60.0,
                 budget_window_s: float = 300.0, max_lock_s: float = 3600.0,
                 presence: TablePresence | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_client = per_client
        self.overall = overall
        self.window_s = window_s
        self.budget_window_s = budget_window_s
        self.max_lock_s = max_lock_s
        self.presence = presence or TablePresence(clock=clock)
        self._clock = clock
        self._lock = threading.Lock()
        self._clients: dict[str, _Client] = {}
        self._all: deque[float] = deque()

    def _trim(self, q: deque[float], now: float, window: float) -> None:
        while q and q[0] <= now - window:
            q.popleft()

    def attempt(self, client: str, *, known: bool = False) -> int:
        """0 and the try counted, or the seconds ``client`` must wait (nothing counted)."""
        refusal = self.check(client, known=known)
        return 0 if refusal is None else refusal.wait

    def check(self, client: str, *, known: bool = False) -> Refusal | None:
        """None and the try counted, or why not (nothing counted). ``known``: the address held an
        admin session tonight (the host's phone): only its own per-address limit applies to it,
        so a flood from elsewhere that spent the server's budget, and took the tries a seat press
        admits, never keeps the host's own phone out."""
        now = self._clock()
        with self._lock:
            self._trim(self._all, now, self.budget_window_s)
            c = self._clients.get(client)
            if c is not None:
                self._trim(c.tries, now, self.window_s)
                if c.locked_until > now:
                    wait = max(1, math.ceil(c.locked_until - now))
                    return Refusal(wait, f"too many wrong PINs: try again in {wait} s")
                if c.strikes and now - c.last > self.max_lock_s:
                    c.strikes = 0  # a long quiet spell forgives the earlier lock-outs
            if not known and len(self._all) >= self.overall and not self.presence.take():
                wait = max(1, math.ceil(self._all[0] + self.budget_window_s - now))
                return Refusal(wait, "too many PIN tries on this dashboard: press any seat button at the "
                                     f"table, then log in within {self.presence.window_s:g} s")
            if c is None and len(self._clients) >= 4096:
                self._forget(now)
            c = self._clients.setdefault(client, _Client())
            c.tries.append(now)
            c.last = now
            self._all.append(now)
            if len(c.tries) >= self.per_client:
                c.locked_until = now + min(self.max_lock_s, self.window_s * 2 ** c.strikes)
                c.strikes += 1
                c.tries.clear()
            return None

    def _forget(self, now: float) -> None:
        """Drop clients with nothing left to remember (a flood of addresses cannot grow the table)."""
        for name in [n for n, c in self._clients.items()
                     if c.locked_until <= now and not c.tries and now - c.last > self.max_lock_s]:
            del self._clients[name]

    def succeeded(self, client: str) -> None:
        """The try was the right PIN: forget the client's record."""
        with self._lock:
            self._clients.pop(client, None)


def csrf_token() -> str:
    """The session's CSRF token (created on first use; every page embeds it)."""
    token = session.get("csrf")
    if not isinstance(token, str):
        token = secrets.token_urlsafe(32)
        session["csrf"] = token
    return token


def _same_origin(origin: str) -> bool:
    parts = urlsplit(origin)
    return (parts.scheme, parts.netloc.lower()) == (request.scheme, request.host.lower())


def check_post() -> None:
    """Every POST: a same-origin ``Origin`` header and the session's CSRF token (header or form)."""
    origin = request.headers.get("Origin")
    if not origin or origin == "null":
        raise ApiError(403, "missing Origin header: POSTs must come from the dashboard's own pages")
    if not _same_origin(origin):
        raise ApiError(403, f"cross-origin POST refused (Origin {origin!r})")
    sent = request.headers.get("X-CSRF-Token") or request.form.get("csrf_token", "")
    expected = session.get("csrf")
    if not isinstance(expected, str) or not sent or not hmac.compare_digest(sent, expected):
        raise ApiError(403, "missing or wrong CSRF token: reload the page and try again")


def _sessions() -> SessionStore:
    store: SessionStore = current_app.extensions["loo_sessions"]
    return store


def is_admin() -> bool:
    """This request carries an admin session the server still holds (server-side, ``web.sessions``)."""
    return session.get("admin") is True and _sessions().valid(session.get("sid"))


def open_admin_session() -> str:
    """A fresh session (no fixation) with its own id and CSRF token, valid until its own logout."""
    session.clear()
    session.permanent = True
    session["admin"] = True
    session["sid"] = _sessions().open()
    session["csrf"] = secrets.token_urlsafe(32)
    return str(session["csrf"])


def end_session(*, everywhere: bool = False) -> int:
    """Logout: this request's own admin session ends (never another's); with ``everywhere`` (only
    from an admin session) every admin session ends. Returns how many ended."""
    store = _sessions()
    ended = 0
    if is_admin():
        ended = store.revoke_all() if everywhere else int(store.revoke(session.get("sid")))
    session.clear()
    return ended


F = TypeVar("F", bound=Callable[..., Any])


def admin_required(view: F) -> F:
    """Refuse with 401 unless the admin session is open (after the POST checks)."""

    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not is_admin():
            raise ApiError(401, "admin login required")
        return view(*args, **kwargs)

    return wrapped  # type: ignore[return-value]


def client_address() -> str:
    return request.remote_addr or "unknown"


def pin_hash() -> str:
    """The PIN hash the app was configured with (read at app creation)."""
    return str(current_app.config["LOO_PIN_HASH"])
