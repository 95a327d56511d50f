"""Serving the dashboard with waitress, sized for a full table of phones.

Every open Server-Sent-Events stream holds one waitress thread for as long as the page is open
(platform-facts: with 4 threads, six streams starved plain GETs for 4 s). So the pool is the stream
cap plus a few threads kept free for page loads, polling and admin POSTs; clients beyond the cap are
told to poll instead of holding a thread.
"""

from __future__ import annotations

import collections
import threading
from typing import Any

from flask import Flask

#: Default cap on concurrent SSE streams: 17 seats (the most Loo allows) with a second device each,
#: plus spectators, with room to spare.
DEFAULT_MAX_STREAMS = 64
#: Threads kept free of streams for page loads, the polling fallback and admin POSTs.
SPARE_THREADS = 8
#: Open sockets in all (a file descriptor each, no thread), and one client address's share.
DEFAULT_CONNECTION_LIMIT = 512
DEFAULT_CONNECTIONS_PER_CLIENT = 32
#: The largest request body: every admin command fits in a few kilobytes.
DEFAULT_MAX_BODY = 64 * 1024


def recommended_threads(max_streams: int = DEFAULT_MAX_STREAMS) -> int:
    """waitress ``threads`` for ``max_streams`` open streams plus the spare threads."""
    if max_streams < 0:
        raise ValueError("max_streams must be ≥ 0")
    return max_streams + SPARE_THREADS


def waitress_options(app: Flask) -> dict[str, Any]:
    """Keyword arguments for ``waitress.create_server`` / ``serve`` matching ``app``'s stream cap."""
    streams = int(app.config["MAX_STREAMS"])
    return {
        "threads": recommended_threads(streams),
        # Open sockets cost a descriptor each, not a thread: room for every stream, the phones told
        # to poll, and a flood of half-sent requests (each client's share is capped in _channel_class)
        "connection_limit": max(int(app.config.get("CONNECTION_LIMIT", DEFAULT_CONNECTION_LIMIT)), 2 * streams + 4 * SPARE_THREADS),
        # streams send a comment every KEEPALIVE_S, so idle-looking channels are really dead; a
        # connection that never finishes its request is closed as soon as that, too
        "channel_timeout": max(30, 2 * int(app.config["KEEPALIVE_S"])),
        "cleanup_interval": 10,
        # refused from the Content-Length header with 413, before a byte of the body is read: the
        # waitress default (1 GiB, spooled to temp files) let three uploads fill the ledger's disk
        "max_request_body_size": int(app.config.get("MAX_CONTENT_LENGTH") or DEFAULT_MAX_BODY),
        "max_request_header_size": 16 * 1024,
        # keep reading a channel while its app runs, so a phone that went away is noticed at once
        # (environ["waitress.client_disconnected"]) and its stream slot and thread come back
        "channel_request_lookahead": 1,
        "ident": "loo-table",
    }


def make_server(app: Flask, host: str = "127.0.0.1", port: int = 8000, **overrides: Any) -> Any:
    """A waitress server for ``app`` (call ``.run()`` in a thread, ``close_server(app, server)`` to stop).

    ``port=0`` picks a free port: read it back from ``server.effective_port``.
    """
    import waitress  # type: ignore[import-untyped]  # no stubs published; typed as Any here

    options = waitress_options(app) | overrides
    server = waitress.create_server(app, host=host, port=port, **options)
    server.channel_class = _channel_class(
        int(app.config.get("CONNECTIONS_PER_CLIENT", DEFAULT_CONNECTIONS_PER_CLIENT)))
    server.loo_clients = collections.Counter()
    server.loo_loop = _LoopGuard(server)
    server.run = server.loo_loop.run
    return server


def _channel_class(per_client: int) -> type:
    """waitress's channel, refusing a client address's connections beyond ``per_client``.

    waitress has a server-wide connection limit only: one phone holding that many half-sent
    requests would leave nobody answered. A refused connection is closed at once, unanswered.
    Channels are made and closed on the server's loop thread, so the counter needs no lock.
    """
    from waitress.channel import HTTPChannel  # type: ignore[import-untyped]

    class LimitedChannel(HTTPChannel):  # type: ignore[misc]
        def __init__(self, server: Any, sock: Any, addr: Any, adj: Any, map: Any = None) -> None:
            self.loo_client = addr[0] if isinstance(addr, tuple) and addr else str(addr)
            self.loo_counted = False
            super().__init__(server, sock, addr, adj, map)
            if server.loo_clients[self.loo_client] > per_client:
                self.handle_close()

        def add_channel(self, map: Any = None) -> None:
            super().add_channel(map)
            if not self.loo_counted:
                self.loo_counted = True
                self.server.loo_clients[self.loo_client] += 1

        def del_channel(self, map: Any = None) -> None:
            super().del_channel(map)
            if self.loo_counted:
                self.loo_counted = False
                clients = self.server.loo_clients
                clients[self.loo_client] -= 1
                if clients[self.loo_client] <= 0:
                    del clients[self.loo_client]

    return LimitedChannel


class _LoopGuard:
    """Who may close the server's sockets: the loop's own thread while it runs, anyone once it has not.

    Closing a socket under a running select() from another thread can close a descriptor number that
    has meanwhile been reused (by the next server's pipe, say), so ``close_server`` hands the closing to
    the loop thread when there is one and waits for it, and closes them itself only when there is none.
    """

    def __init__(self, server: Any) -> None:
        self.server = server
        self.lock = threading.Lock()
        self.running = False
        self.closed = False
        self.ended = threading.Event()

    def run(self) -> None:
        with self.lock:
            if self.closed:  # closed before the thread got here: nothing to serve
                self.ended.set()
                return
            self.running = True
        try:
            type(self.server).run(self.server)
        finally:
            self.ended.set()

    def close(self, timeout: float) -> None:
        from waitress import wasyncore

        with self.lock:
            self.closed = True
            running = self.running
        if running:
            try:
                self.server.trigger.pull_trigger(lambda: wasyncore.close_all(self.server._map))
            except OSError:  # the loop lost its trigger already and cannot be woken: close from here
                wasyncore.close_all(self.server._map)
            if not self.ended.wait(timeout):
                raise RuntimeError(f"the waitress loop did not stop within {timeout} s")
        else:
            wasyncore.close_all(self.server._map)


def close_server(app: Flask, server: Any, *, timeout: float = 5.0) -> None:
    """Stop: end the open streams (they hold threads), let the worker threads finish, then close every
    socket of the server's loop so ``server.run()`` returns (raises ``RuntimeError`` if it does not
    within ``timeout`` seconds)."""
    app.extensions["loo"].stop.set()
    server.task_dispatcher.shutdown(timeout=timeout)
    server.loo_loop.close(timeout)
