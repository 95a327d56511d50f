"""Serving the dashboard with waitress, sized for a full table of phones.

Every open Server-Sent-Events stream holds one waitress thread for as long as the page is open
(platform-facts: with 4 threads, six streams starved plain GETs for 4 s). So the pool is the stream
cap plus a few threads kept free for page loads, polling and admin POSTs; clients beyond the cap are
told to poll instead of holding a thread.
"""

from __future__ import annotations

from typing import Any

from flask import Flask

#: Default cap on concurrent SSE streams: 17 seats (the most Loo allows) with a second device each,
#: plus spectators, with room to spare.
DEFAULT_MAX_STREAMS = 64
#: Threads kept free of streams for page loads, the polling fallback and admin POSTs.
SPARE_THREADS = 8


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
        # every stream is a connection; leave room for the pollers and keep-alive page loads
        "connection_limit": max(100, 2 * streams + 4 * SPARE_THREADS),
        # streams send a comment every KEEPALIVE_S, so idle-looking channels are really dead
        "channel_timeout": max(60, 4 * int(app.config["KEEPALIVE_S"])),
        # keep reading a channel while its app runs, so a phone that went away is noticed at once
        # (environ["waitress.client_disconnected"]) and its stream slot and thread come back
        "channel_request_lookahead": 1,
        "ident": "loo-table",
    }


def make_server(app: Flask, host: str = "127.0.0.1", port: int = 8000, **overrides: Any) -> Any:
    """A waitress server for ``app`` (call ``.run()`` in a thread, ``close_server(server)`` to stop).

    ``port=0`` picks a free port: read it back from ``server.effective_port``.
    """
    import waitress  # type: ignore[import-untyped]  # no stubs published; typed as Any here

    options = waitress_options(app) | overrides
    return waitress.create_server(app, host=host, port=port, **options)


def close_server(app: Flask, server: Any) -> None:
    """Stop: end the open streams (they hold threads), let the worker threads finish, then close every
    socket of the server's loop so ``server.run()`` returns."""
    import time

    from waitress import wasyncore

    app.extensions["loo"].stop.set()
    server.task_dispatcher.shutdown(timeout=5)
    # Close the sockets on the loop's own thread (closing them under its select() raises EBADF there);
    # if no loop is running, the thunk never runs and they are closed here after a short wait.
    server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
    deadline = time.monotonic() + 1.0
    while server._map and time.monotonic() < deadline:
        time.sleep(0.01)
    if server._map:
        wasyncore.close_all(server._map)
