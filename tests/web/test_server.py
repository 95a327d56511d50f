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
    assert time.perf_counter() - t0 < 2.0  # a starved pool made a GET wait 4 s
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


def _server(tmp_path, **config):
    service = FakeService()
    app = create_app(service, config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN, "STREAM_WAIT_S": 0.05,
                                      **config})
    server = make_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    return service, app, server, thread


def _stop(app, server, thread):
    close_server(app, server)
    thread.join(5)


def _until(condition, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    return condition()


def _get_state(port, source="127.0.0.1"):
    sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    with sock:
        sock.sendall(b"GET /api/state HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data.split(b"\r\n", 1)[0]


def _spooled_files():
    import os

    fds = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            pass
    return [f for f in fds if f.endswith("(deleted)")]


def test_an_upload_over_the_limit_is_refused_from_its_headers(tmp_path):
    _, app, server, thread = _server(tmp_path)
    try:
        before = _spooled_files()
        sock = socket.create_connection(("127.0.0.1", server.effective_port), timeout=5)
        with sock:
            sock.sendall(b"POST /admin/login HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n")
            answer = sock.recv(65536)  # no byte of the body was sent: the headers alone are refused
        assert answer.startswith(b"HTTP/1.1 413 ")
        assert _spooled_files() == before  # nothing was written to a temp file
    finally:
        _stop(app, server, thread)


def test_one_address_cannot_take_every_connection(tmp_path):
    _, app, server, thread = _server(tmp_path, CONNECTIONS_PER_CLIENT=5)
    port = server.effective_port
    held = []
    try:
        for _ in range(12):  # half-sent requests, never finished
            sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.2", 0))
            sock.sendall(b"GET /api/state HTTP/1.1\r\nHost: local")
            held.append(sock)

        def refused(sock: socket.socket) -> bool:
            sock.settimeout(0.05)
            try:
                return sock.recv(1) == b""
            except TimeoutError:
                return False
            except OSError:
                return True

        assert _until(lambda: sum(refused(s) for s in held) == 7)  # beyond its 5, closed unanswered
        assert server.loo_clients["127.0.0.2"] == 5
        assert _get_state(port, "127.0.0.3") == b"HTTP/1.1 200 OK"  # everybody else is answered
    finally:
        for sock in held:
            sock.close()
        _stop(app, server, thread)
    assert _until(lambda: not server.loo_clients)


def test_half_open_flood_and_full_streams_leave_the_state_answered(tmp_path):
    """The shape of the load test (bench/web_flood.py), small: streams at the cap, streams told to
    poll, 165 half-open connections from several addresses, and /api/state still answered."""
    _, app, server, thread = _server(tmp_path, MAX_STREAMS=8)
    port = server.effective_port
    held = []
    try:
        for i in range(165):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5,
                                            source_address=(f"127.0.1.{i % 11 + 1}", 0))
            sock.sendall(b"GET /api/state HTTP/1.1\r\nHo")
            held.append(sock)
        for i in range(12):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5,
                                            source_address=(f"127.0.2.{i % 4 + 1}", 0))
            sock.sendall(b"GET /api/stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
            held.append(sock)
        assert _until(lambda: app.extensions["loo"].streams.open == 8)
        assert all(_get_state(port, "127.0.3.1") == b"HTTP/1.1 200 OK" for _ in range(20))
    finally:
        for sock in held:
            sock.close()
        _stop(app, server, thread)


def test_a_phone_that_stops_reading_is_dropped(tmp_path):
    service, app, server, thread = _server(tmp_path, STREAM_BACKLOG_BYTES=64 * 1024, KEEPALIVE_S=0.2)
    try:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a phone whose buffer is full
        sock.connect(("127.0.0.1", int(server.effective_port)))
        sock.sendall(b"GET /api/stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert _until(lambda: app.extensions["loo"].streams.open == 1)
        for i in range(200):  # big changes the phone never reads
            service.set_state(note="x" * 20_000 + str(i))
            if app.extensions["loo"].streams.open == 0:
                break
            time.sleep(0.01)
        assert _until(lambda: app.extensions["loo"].streams.open == 0)  # its slot and thread are back
        sock.close()
    finally:
        _stop(app, server, thread)


def test_a_stream_ends_after_its_lifetime_and_the_slot_comes_back(tmp_path):
    _, app, server, thread = _server(tmp_path, STREAM_MAX_S=0.3)
    try:
        sock, resp = open_stream(server.effective_port)
        assert app.extensions["loo"].streams.open == 1
        assert b"retry:" in resp.read()  # the body ends: EventSource reconnects with Last-Event-ID
        assert _until(lambda: app.extensions["loo"].streams.open == 0)
        sock.close()
    finally:
        _stop(app, server, thread)


def test_each_address_gets_a_bounded_share_of_the_streams(tmp_path):
    _, app, server, thread = _server(tmp_path, STREAMS_PER_CLIENT=2, MAX_STREAMS=10)
    try:
        first = [open_stream(server.effective_port) for _ in range(2)]
        over = http.client.HTTPConnection("127.0.0.1", server.effective_port, timeout=5)
        over.request("GET", "/api/stream")
        assert "event: overloaded" in over.getresponse().read().decode()
        assert app.extensions["loo"].streams.open == 2
        for sock, _ in first:
            sock.close()
    finally:
        _stop(app, server, thread)
