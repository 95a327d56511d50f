"""Live updates: Server-Sent Events with ``Last-Event-ID`` resume and a cap on open streams.

Each event is ``id: <version>`` / ``event: state`` / ``data: <snapshot JSON>``. The dashboard's
own pages ask for ``?view=table`` (or ``?view=admin``) instead and get ``event: html`` carrying the
page's live fragment, rendered once per version however many phones listen, so a change costs no
extra request per phone. A reconnecting browser sends ``Last-Event-ID`` and gets only what it
missed. Over the cap a client gets one ``overloaded`` event telling it to poll ``/api/state`` (or
the page fragment) with ETags instead, so streams never starve the threads that serve pages.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from flask import Blueprint, Response, current_app, request

from web import WebState, web_state
from web.security import ApiError, client_address, csrf_token, is_admin

bp = Blueprint("live", __name__, url_prefix="/api")

HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def frame(item: Mapping[str, Any]) -> str:
    data = json.dumps(item["data"], separators=(",", ":"))
    return f"id: {int(item['id'])}\nevent: {item.get('event', 'state')}\ndata: {data}\n\n"


def html_frame(version: int, html: str) -> str:
    """An ``html`` event: one ``data:`` line per line of the fragment (the browser joins them)."""
    lines = html.replace("\r", "").split("\n")
    return f"id: {version}\nevent: html\n" + "".join(f"data: {line}\n" for line in lines) + "\n"


class EventStream:
    """The response body of one stream; ``close()`` (called by the WSGI server even when the body
    was never iterated) gives the stream's slot back."""

    def __init__(self, state: WebState, last_id: int | None, *, keepalive_s: float, wait_s: float,
                 retry_ms: int, gone: Callable[[], bool] | None = None,
                 render: Callable[[dict[str, Any]], str] | None = None, client: str = "",
                 max_s: float = float("inf"), backlog_bytes: int | None = None) -> None:
        self.state = state
        self.client = client
        self.ends_at = time.monotonic() + max_s
        self.backlog_bytes = backlog_bytes
        self.render = render
        self.gone = gone or (lambda: False)
        self.last_id = last_id
        self.keepalive_s = keepalive_s
        self.wait_s = wait_s
        self.retry_ms = retry_ms
        self._closed = False

    def __iter__(self) -> Iterator[bytes]:
        return (chunk.encode() for chunk in self._events())

    def _events(self) -> Iterator[str]:
        service = self.state.service
        yield ": open\n\n"  # headers and a first byte go out at once: the browser's EventSource opens
        yield f"retry: {self.retry_ms}\n\n"
        snap = service.snapshot()
        current = int(snap.get("version", 0))
        if self.last_id is None or self.last_id > current:
            # a new client, or an id from before the controller restarted (versions start again)
            last = current
            yield self._frame({"id": last, "event": "state", "data": snap})
        else:
            last = self.last_id
        quiet_since = time.monotonic()
        while (not self.state.stop.is_set() and not self._closed and not self.gone()
               and time.monotonic() < self.ends_at and not self._stalled()):
            left = self.keepalive_s - (time.monotonic() - quiet_since)
            changes = service.changes_since(last, max(0.0, min(self.wait_s, left)))
            if changes:
                for item in changes:
                    if int(item["id"]) > last:
                        last = int(item["id"])
                        yield self._frame(item)
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= self.keepalive_s:
                yield ": keep-alive\n\n"
                quiet_since = time.monotonic()

    def _stalled(self) -> bool:
        """The phone stopped reading: what we wrote piles up unsent in waitress's buffer (found
        through the channel behind ``waitress.client_disconnected``). Ending the stream frees its
        thread and slot; the idle connection is then closed after waitress's channel timeout,
        which never applies while a request still runs."""
        channel = getattr(self.gone, "__self__", None)
        pending = getattr(channel, "total_outbufs_len", 0)
        return self.backlog_bytes is not None and isinstance(pending, int) and pending > self.backlog_bytes

    def _frame(self, item: Mapping[str, Any]) -> str:
        if self.render is None:
            return frame(item)
        return html_frame(int(item["id"]), self.render(item["data"]))

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.state.streams.release(self.client)


def _last_event_id() -> int | None:
    raw = request.headers.get("Last-Event-ID") or request.args.get("last_event_id")
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        return None  # an id we never sent: start afresh with the full snapshot
    return value if value >= 0 else None


def _renderer(view: str | None) -> Callable[[dict[str, Any]], str] | None:
    """For ``?view=``: a function rendering that page's live fragment (in an app context, since the
    stream's body runs after the request is over)."""
    if view is None:
        return None
    from web.admin_page import personal, render_admin_partial
    from web.table_page import render_table_partial

    views = {"table": render_table_partial, "admin": render_admin_partial}
    if view not in views:
        raise ApiError(400, f"unknown view {view!r}; views: table, admin")
    if view == "admin" and not is_admin():
        raise ApiError(401, "admin login required")
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    fragment = views[view]
    token = csrf_token() if view == "admin" else ""  # the stream's own session, read now

    def render(snapshot: dict[str, Any]) -> str:
        with app.app_context():
            html = fragment(snapshot)
        return personal(html, token) if token else html

    return render


@bp.get("/stream")
def stream() -> Response:
    state = web_state()
    cfg = current_app.config
    poll_ms = int(cfg["POLL_INTERVAL_MS"])
    render = _renderer(request.args.get("view"))
    client = client_address()
    if state.stop.is_set() or not state.streams.acquire(client):
        told = (f"retry: {poll_ms}\nevent: overloaded\n"
                f"data: {json.dumps({'poll_interval_ms': poll_ms, 'open_streams': state.streams.open})}\n\n")
        return Response(told, mimetype="text/event-stream", headers=HEADERS)
    body = EventStream(state, _last_event_id(), keepalive_s=float(cfg["KEEPALIVE_S"]),
                       wait_s=float(cfg["STREAM_WAIT_S"]), retry_ms=min(poll_ms, 3000),
                       gone=request.environ.get("waitress.client_disconnected"), render=render,
                       client=client, max_s=float(cfg["STREAM_MAX_S"]),
                       backlog_bytes=int(cfg["STREAM_BACKLOG_BYTES"]))
    return Response(body, mimetype="text/event-stream", headers=HEADERS, direct_passthrough=True)
