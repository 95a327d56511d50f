"""The dashboard under real waitress on 127.0.0.1: streams at the cap never starve plain requests."""

from __future__ import annotations

import http.client
import socket
import threading
import time

import pytest
from web_fakes import PIN, FakeService

from web import close_server, create_app, make_server


@pytest.fixture
def live_server(tmp_path):
    service = FakeService()
    app = create_app(service, config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN, "MAX_STREAMS": 3,
                                      "STREAM_WAIT_S": 0.1})
    server = make_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield service, app, server.effective_port, server
    close_server(app, server)
    thread.join(5)
    assert not thread.is_alive()


def open_stream(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/api/stream")
    sock = conn.sock
    resp = conn.getresponse()
    assert resp.readline() == b": open\n"
    return sock, resp


def test_streams_at_the_cap_leave_threads_for_requests(live_server):
    service, app, port, server = live_server
    assert server.adj.threads == 3 + 8
    streams = [open_stream(port) for _ in range(3)]
    assert app.extensions["loo"].streams.open == 3
    over = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    over.request("GET", "/api/stream")
    body = over.getresponse().read().decode()
    assert "event: overloaded" in body  # told to poll, and the connection ends
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    for _ in range(10):
        conn.request("GET", "/api/state")
        resp = conn.getresponse()
        assert resp.status == 200 and resp.read()
    assert time.perf_counter() - t0 < 2.0  # platform-facts: a starved pool made a GET wait 4 s
    service.play("Cal", "2H")
    for sock, resp in streams:
        text = b""
        while b"id: 2\n" not in text:
            text += resp.readline()
        sock.shutdown(socket.SHUT_RDWR)
    deadline = time.monotonic() + 3
    while app.extensions["loo"].streams.open and time.monotonic() < deadline:
        time.sleep(0.05)
    assert app.extensions["loo"].streams.open == 0  # dropped phones give their slots back


def test_a_server_closed_before_its_loop_started_serves_nothing(tmp_path):
    """close_server before the thread runs closes the sockets here; the late run() returns at once."""
    app = create_app(FakeService(), config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN})
    server = make_server(app, "127.0.0.1", 0)
    port = server.effective_port
    close_server(app, server)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    thread.join(2)
    assert not thread.is_alive()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_closing_a_running_server_leaves_other_descriptors_alone(tmp_path):
    """The loop closes its own sockets: a pipe opened by the test keeps working after the close."""
    import os

    app = create_app(FakeService(), config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN})
    server = make_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    read_end, write_end = os.pipe()
    try:
        close_server(app, server)
        assert not thread.is_alive()
        os.write(write_end, b"x")
        assert os.read(read_end, 1) == b"x"
    finally:
        os.close(read_end)
        os.close(write_end)
