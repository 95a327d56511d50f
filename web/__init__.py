"""The Flask dashboard and JSON API, served by waitress inside the controller's process.

``create_app(service, config={"STATE_DIR": ...})`` builds the app (Flask tutorial style: a factory
and blueprints ``table``, ``history``, ``admin``, ``api``, ``live``). The controller also uses
``ensure_admin_pin`` (show the PIN at first start), ``print_qr`` / ``dashboard_url`` (terminal QR),
and ``make_server`` / ``close_server`` / ``recommended_threads`` (waitress sized for the phones).
"""

from __future__ import annotations

import collections
import logging
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from flask import Flask, Response, jsonify, request
from flask.json.provider import DefaultJSONProvider
from werkzeug.exceptions import HTTPException

from table.contract.camera_setup import CameraSetup
from table.contract.claim import TableClaim
from table.contract.pictures import TablePictures
from web.qr import dashboard_url, print_qr
from web.security import (
    PIN_FILE,
    ApiError,
    LoginLimiter,
    TablePresence,
    check_post,
    csrf_token,
    ensure_admin_pin,
    is_admin,
    load_secret_key,
)
from web.server import (
    DEFAULT_CONNECTION_LIMIT,
    DEFAULT_CONNECTIONS_PER_CLIENT,
    DEFAULT_MAX_BODY,
    DEFAULT_MAX_STREAMS,
    close_server,
    make_server,
    recommended_threads,
)
from web.service import TableService
from web.sessions import SessionStore

__all__ = [
    "create_app", "TableService", "ensure_admin_pin", "print_qr", "dashboard_url", "make_server",
    "close_server", "recommended_threads", "DEFAULT_MAX_STREAMS", "TablePresence",
]

log = logging.getLogger("web")

DEFAULTS: dict[str, Any] = {
    "STATE_DIR": None,  # required: the secret key and the PIN hash live here
    "ADMIN_PIN": None,  # from the config; otherwise generated at first start
    "MAX_STREAMS": DEFAULT_MAX_STREAMS,
    "KEEPALIVE_S": 15.0,  # SSE comment interval: under the 30-60 s after which proxies and phones drop a quiet stream
    "STREAM_WAIT_S": 1.0,  # longest changes_since wait, so streams notice shutdown quickly
    "POLL_INTERVAL_MS": 2000,  # the polling fallback's period
    "LOGIN_LIMIT_PER_CLIENT": 5,
    "LOGIN_LIMIT_OVERALL": 20,
    "LOGIN_WINDOW_S": 60.0,  # at most LOGIN_LIMIT_PER_CLIENT tries a minute, then a doubling lock-out
    "LOGIN_BUDGET_WINDOW_S": 300.0,  # LOGIN_LIMIT_OVERALL tries from all addresses in this, then a seat press
    "TABLE_PRESENCE": None,  # web.security.TablePresence the controller feeds with seat-button presses
    "LOGIN_MAX_LOCK_S": 3600.0,
    "ADMIN_SESSION_HOURS": 12,
    "SECURE_COOKIES": False,  # the session cookie's Secure flag: on when served behind HTTPS
    "MAX_CONTENT_LENGTH": DEFAULT_MAX_BODY,  # the largest request body (Flask and waitress refuse more)
    "CONNECTION_LIMIT": DEFAULT_CONNECTION_LIMIT,  # open sockets in all (each a descriptor, no thread)
    "CONNECTIONS_PER_CLIENT": DEFAULT_CONNECTIONS_PER_CLIENT,  # one address's share (a phone opens ~6)
    "STREAMS_PER_CLIENT": 4,  # one address's share of the SSE streams
    "STREAM_MAX_S": 300.0,  # a stream ends after this; the browser reconnects with Last-Event-ID
    "STREAM_BACKLOG_BYTES": 256 * 1024,  # unsent bytes that mark a phone that stopped reading
}


class StreamSlots:
    """Counts open SSE streams against the cap, and each client address's against ``per_client``
    (clients over either are sent to polling)."""

    def __init__(self, cap: int, per_client: int | None = None) -> None:
        self.cap = cap
        self.per_client = cap if per_client is None else per_client
        self.open = 0
        self._by_client: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()

    def acquire(self, client: str = "") -> bool:
        with self._lock:
            if self.open >= self.cap or self._by_client[client] >= self.per_client:
                return False
            self.open += 1
            self._by_client[client] += 1
            return True

    def release(self, client: str = "") -> None:
        with self._lock:
            self.open -= 1
            self._by_client[client] -= 1
            if self._by_client[client] <= 0:
                del self._by_client[client]


@dataclass
class WebState:
    """Per-app state shared by the blueprints (kept in ``app.extensions["loo"]``)."""

    service: TableService
    limiter: LoginLimiter
    streams: StreamSlots
    pictures: TablePictures | None = None  # None: no camera, the picture routes say so
    camera_setup: CameraSetup | None = None  # calibrating from the phone (None: no camera)
    claim: TableClaim | None = None  # a new table claimed at seat 1's button (None: no buttons)
    boot: str = field(default_factory=lambda: secrets.token_hex(4))
    stop: threading.Event = field(default_factory=threading.Event)
    partial_cache: dict[str, tuple[int, str]] = field(default_factory=dict)
    cache_lock: threading.Lock = field(default_factory=threading.Lock)
    #: client address -> when (time.monotonic) it last made a request with an admin session: the
    #: server keeps connections in reserve for these (web.server.ADMIN_RESERVE)
    admin_addresses: dict[str, float] = field(default_factory=dict)

    def fragment(self, key: str, version: int, render: Callable[[], str]) -> str:
        """``render()`` once per (key, version): when a change wakes every phone's stream at once,
        one renders and the others wait a moment for its result instead of all rendering."""
        with self.cache_lock:
            cached = self.partial_cache.get(key)
            if cached is None or cached[0] != version:
                cached = (version, render())
                self.partial_cache[key] = cached
            return cached[1]


def _configure_security(app: Flask, *, claimable: bool = False) -> None:
    state_dir = app.config["STATE_DIR"]
    if not state_dir:
        raise ValueError("create_app needs config STATE_DIR (where the secret key and PIN are kept)")
    state_dir = Path(state_dir)
    app.secret_key = load_secret_key(state_dir)
    # a new table that can be claimed at seat 1 (`web.setup_page`) gets no PIN in a log: the
    # person who presses the button chooses it on the phone
    app.config["LOO_FIRST_RUN"] = bool(claimable and not app.config["ADMIN_PIN"]
                                       and not (state_dir / PIN_FILE).exists())
    if app.config["LOO_FIRST_RUN"]:
        log.warning("a new table: open the dashboard's Admin page and press seat 1's button when it asks")
        app.config["LOO_PIN_HASH"] = ""  # no PIN matches until one is chosen
    else:
        pin = ensure_admin_pin(state_dir, app.config["ADMIN_PIN"])
        if pin.new_pin is not None:
            log.warning("dashboard admin PIN (first start): %s", pin.new_pin)
        app.config["LOO_PIN_HASH"] = pin.path.read_text(encoding="ascii").strip()
    app.extensions["loo_sessions"] = SessionStore(
        state_dir, app.config["LOO_PIN_HASH"], lifetime_s=3600.0 * float(app.config["ADMIN_SESSION_HOURS"]))
    app.config.update(
        SESSION_COOKIE_NAME="loo_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        # off for a LAN without TLS (SameSite + Origin checks carry CSRF defence); `[web] secure_cookies`
        # turns it on behind an HTTPS proxy, so the cookie never travels in clear
        SESSION_COOKIE_SECURE=bool(app.config["SECURE_COOKIES"]),
        PERMANENT_SESSION_LIFETIME=timedelta(hours=int(app.config["ADMIN_SESSION_HOURS"])),
    )


def _error_json(status: int, reason: str, headers: dict[str, str] | None = None) -> Response:
    resp = jsonify(error=reason, status=status)
    resp.status_code = status
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


def _register_errors(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def api_error(err: ApiError) -> Response:
        return _error_json(err.status, err.reason, err.headers)

    @app.errorhandler(HTTPException)
    def http_error(err: HTTPException) -> Any:
        wants_json = request.path.startswith("/api/") or request.method == "POST" or (
            request.accept_mimetypes.best == "application/json"
        )
        if wants_json:
            return _error_json(err.code or 500, err.description or err.name)
        return err

    @app.errorhandler(Exception)
    def unexpected(err: Exception) -> Response:  # a bug: log it, answer JSON, keep serving
        log.exception("unexpected error on %s %s", request.method, request.path)
        return _error_json(500, f"internal error: {type(err).__name__}")


class _LimitedJSON(DefaultJSONProvider):
    """Request bodies are parsed with a nesting limit (``web.validate.loads_limited``)."""

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        import json

        from web.validate import loads_limited

        return loads_limited(s, lambda text: json.loads(text, **kwargs))


def create_app(service: TableService, *, config: dict[str, Any] | None = None,
               pictures: TablePictures | None = None, camera_setup: CameraSetup | None = None,
               claim: TableClaim | None = None) -> Flask:
    """The dashboard for ``service``. ``config`` needs ``STATE_DIR``; see ``DEFAULTS`` for the rest.
    ``pictures``: the camera view and the photos (`table.contract.pictures`), ``camera_setup``:
    calibrating from the phone (`table.contract.camera_setup`); None without a camera. ``claim``:
    with no PIN yet, the table is claimed by pressing seat 1's button (`web.setup_page`)."""
    app = Flask(__name__)
    app.json = _LimitedJSON(app)
    app.config.from_mapping(DEFAULTS)
    app.config.update(config or {})
    app.config["DEBUG"] = False  # never: the debugger would be a remote shell on the LAN
    app.debug = False
    _configure_security(app, claimable=claim is not None)
    app.extensions["loo"] = WebState(
        service=service,
        limiter=LoginLimiter(
            per_client=int(app.config["LOGIN_LIMIT_PER_CLIENT"]),
            overall=int(app.config["LOGIN_LIMIT_OVERALL"]),
            window_s=float(app.config["LOGIN_WINDOW_S"]),
            budget_window_s=float(app.config["LOGIN_BUDGET_WINDOW_S"]),
            max_lock_s=float(app.config["LOGIN_MAX_LOCK_S"]),
            presence=app.config["TABLE_PRESENCE"],
        ),
        streams=StreamSlots(int(app.config["MAX_STREAMS"]), int(app.config["STREAMS_PER_CLIENT"])),
        pictures=pictures,
        camera_setup=camera_setup,
        claim=claim,
    )

    from web.load import install as install_load_gate

    # the heavy pages and exports: rationed per address, bounded, cached per version (web/load.py)
    app.extensions["loo_load"] = install_load_gate(app)

    @app.before_request
    def _post_checks() -> None:
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            check_post()

    @app.context_processor
    def _globals() -> dict[str, Any]:
        return {"csrf_token": csrf_token, "is_admin": is_admin}

    @app.after_request
    def _note_admin_address(resp: Response) -> Response:
        from flask import session

        if session.get("admin") is True and is_admin():
            import time

            seen = app.extensions["loo"].admin_addresses
            if len(seen) < 256 or request.remote_addr in seen:
                seen[request.remote_addr or "unknown"] = time.monotonic()
        return resp

    @app.after_request
    def _headers(resp: Response) -> Response:
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("X-Frame-Options", "DENY")
        resp.headers.setdefault("Referrer-Policy", "same-origin")
        resp.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
            "script-src 'self'; connect-src 'self'; frame-ancestors 'none'; form-action 'self'",
        )
        return resp

    _register_errors(app)

    from web import (
        admin_page,
        api,
        camera_page,
        history_page,
        how_page,
        live,
        nights_page,
        setup_page,
        table_page,
    )
    from web.cards import card_image, card_text, evidence_markup

    app.jinja_env.globals.update(card_svg=card_image, evidence=evidence_markup)
    app.jinja_env.filters["cards"] = card_text
    app.register_blueprint(table_page.bp)
    app.register_blueprint(history_page.bp)
    app.register_blueprint(nights_page.bp)
    app.register_blueprint(admin_page.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(live.bp)
    app.register_blueprint(camera_page.bp)
    app.register_blueprint(how_page.bp)
    app.register_blueprint(setup_page.bp)
    return app


def web_state() -> WebState:
    """The running app's shared state (inside a request)."""
    from flask import current_app

    state: WebState = current_app.extensions["loo"]
    return state
