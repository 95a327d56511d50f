"""Serving the dashboard with waitress, sized for a full table of phones.

Every open Server-Sent-Events stream holds one waitress thread for as long as the page is open
(with 4 threads, six open streams starved plain GETs for 4 s). So the pool is the stream
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
#: Once half the connections are taken, one address's share shrinks to this: 17 addresses of 32
#: half-open connections each filled the server before; now they leave room for everyone else.
BUSY_SHARE_PER_CLIENT = 8
#: Connections beyond ``connection_limit`` kept for addresses that held an admin session (the host's
#: phone): whatever guests open, the host gets in.
ADMIN_RESERVE = 32
#: New connections a second from addresses without an admin session, all of them together (a
#: burst of ``GUEST_CONNECTION_BURST``, a whole table of phones opening their pages at once):
#: phones keep their connections open, so a table needs a few a second; a
#: flood of fresh connections (a PIN guesser, one request each) is closed at accept, before a byte
#: is parsed, and costs the deal almost nothing.
GUEST_CONNECTIONS_PER_S = 100.0
GUEST_CONNECTION_BURST = 400.0
#: A connection gets this long to send a whole request's headers (from its first byte, or from the
#: connect when it sends none). A phone needs well under a second; a socket that trickles one
#: header line a second to hold a slot is closed. Idle keep-alive connections keep ``channel_timeout``.
HEADER_TIMEOUT_S = 5.0
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
        # how often idle and slow channels are looked for: often, so the header deadline holds
        "cleanup_interval": 1,
        # refused from the Content-Length header with 413, before a byte of the body is read: the
        # waitress default (1 GiB, spooled to temp files) let three uploads fill the ledger's disk
        "max_request_body_size": int(app.config.get("MAX_CONTENT_LENGTH") or DEFAULT_MAX_BODY),
        "max_request_header_size": 16 * 1024,
        # keep reading a channel while its app runs, so a phone that went away is noticed at once
        # (environ["waitress.client_disconnected"]) and its stream slot and thread come back
        "channel_request_lookahead": 1,
        "ident": "loo-table",
        # poll(), not select(): select cannot watch a descriptor numbered 1024 or more, and the
        # connection limit plus the admin reserve, the ledger and the camera come close to that
        "asyncore_use_poll": True,
    }


def make_server(app: Flask, host: str = "127.0.0.1", port: int = 8000, **overrides: Any) -> Any:
    """A waitress server for ``app`` (call ``.run()`` in a thread, ``close_server(app, server)`` to stop).

    ``port=0`` picks a free port: read it back from ``server.effective_port``.
    """
    import waitress  # type: ignore[import-untyped]  # no stubs published; typed as Any here

    options = waitress_options(app) | overrides
    limit = int(options["connection_limit"])
    # waitress stops accepting at its own limit; ours (in the channel class) decides who is let in
    # below it, so the admin reserve sits between the two
    options["connection_limit"] = limit + ADMIN_RESERVE
    server = waitress.create_server(app, host=host, port=port, **options)
    admins: dict[str, float] = app.extensions["loo"].admin_addresses
    rate = float(app.config.get("GUEST_CONNECTIONS_PER_S", GUEST_CONNECTIONS_PER_S))
    server.channel_class = _channel_class(
        int(app.config.get("CONNECTIONS_PER_CLIENT", DEFAULT_CONNECTIONS_PER_CLIENT)), limit, admins,
        _Rate(rate, float(app.config.get("GUEST_CONNECTION_BURST", GUEST_CONNECTION_BURST))))
    server.loo_clients = collections.Counter()
    server.loo_header_timeout = float(app.config.get("HEADER_TIMEOUT_S", HEADER_TIMEOUT_S))
    server.maintenance = _maintenance(server)
    server.loo_loop = _LoopGuard(server)
    server.run = server.loo_loop.run
    return server


def admit(mine: int, total: int, *, per_client: int, limit: int, admin: bool) -> bool:
    """Whether a new connection from an address holding ``mine`` of the ``total`` open ones is let in.

    Every address may hold ``per_client``; once half of ``limit`` is taken, only
    ``BUSY_SHARE_PER_CLIENT`` (a fair share: many addresses cannot crowd out the rest); at ``limit``
    only an address that held an admin session in the last hours, into ``ADMIN_RESERVE``.
    """
    if admin:
        return mine < per_client and total < limit + ADMIN_RESERVE
    if total >= limit:
        return False
    share = per_client if total < limit // 2 else min(per_client, BUSY_SHARE_PER_CLIENT)
    return mine < share


class _Rate:
    """A token bucket: ``take()`` is True while fewer than ``rate`` a second (``burst`` at once) were
    taken. Used on the server's loop thread only, so it needs no lock."""

    def __init__(self, rate: float, burst: float) -> None:
        import time

        self.rate, self.burst, self.tokens = rate, burst, burst
        self.clock = time.monotonic
        self.at = self.clock()

    def take(self) -> bool:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


def _channel_class(per_client: int, limit: int, admins: dict[str, float], guests: _Rate) -> type:
    """waitress's channel, admitting a connection by ``admit`` (the address's share, the total,
    the admin reserve), and noting when a request's headers began (``_maintenance`` closes a
    connection that has taken longer than the header timeout).

    waitress has a server-wide connection limit only: one phone holding that many half-sent
    requests would leave nobody answered. A refused connection is closed at once, unanswered.
    Channels are made and closed on the server's loop thread, so the counter needs no lock.
    """
    import time

    from waitress.channel import HTTPChannel  # type: ignore[import-untyped]

    class LimitedChannel(HTTPChannel):  # type: ignore[misc]
        def __init__(self, server: Any, sock: Any, addr: Any, adj: Any, map: Any = None) -> None:
            self.loo_client = addr[0] if isinstance(addr, tuple) and addr else str(addr)
            self.loo_counted = False
            self.loo_request_since: float | None = time.monotonic()  # the headers' clock starts at connect
            clients = server.loo_clients
            mine, total = clients[self.loo_client], sum(clients.values())
            seen = admins.get(self.loo_client)
            admin = seen is not None and time.monotonic() - seen < ADMIN_MEMORY_S
            refused = not admit(mine, total, per_client=per_client, limit=limit, admin=admin) or (
                not admin and not guests.take())
            super().__init__(server, sock, addr, adj, map)
            if refused:
                self.handle_close()

        def received(self, data: bytes) -> Any:
            if self.request is None and self.loo_request_since is None:
                self.loo_request_since = time.monotonic()  # a new request's first bytes
            result = super().received(data)
            if self.request is None:
                self.loo_request_since = None  # no request half-received: nothing to time
            return result

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


#: How long an address that held an admin session keeps its place in the admin reserve.
ADMIN_MEMORY_S = 12 * 3600.0


def _maintenance(server: Any) -> Any:
    """waitress's idle sweep, plus: a connection whose request headers have taken longer than
    ``server.loo_header_timeout`` (from connect or from its first byte) is closed."""
    import time

    idle_sweep = server.maintenance

    def maintenance(now: float) -> None:
        idle_sweep(now)
        cutoff = time.monotonic() - server.loo_header_timeout
        for channel in list(server.active_channels.values()):
            since = getattr(channel, "loo_request_since", None)
            if since is not None and since < cutoff and not channel.requests:
                channel.will_close = True

    return maintenance


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
