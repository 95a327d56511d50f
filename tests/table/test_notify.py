"""table.notify: sd_notify datagrams to a socket in a temporary directory (and the abstract namespace)."""

from __future__ import annotations

import os
import socket

from table.notify import Notifier


def _listen(address: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.settimeout(2)
    return sock


def test_ready_watchdog_status_arrive_as_single_datagrams(tmp_path):
    path = str(tmp_path / "notify.sock")
    sock = _listen(path)
    n = Notifier(path)
    assert n.ready("camera, model, ledger and web up")
    assert sock.recv(4096) == b"READY=1\nSTATUS=camera, model, ledger and web up"
    assert n.watchdog()
    assert sock.recv(4096) == b"WATCHDOG=1"
    assert n.status("camera unplugged")
    assert sock.recv(4096) == b"STATUS=camera unplugged"
    sock.close()


def test_abstract_namespace_address():
    name = f"loo-table-test-{os.getpid()}"
    sock = _listen("\0" + name)
    assert Notifier("@" + name).watchdog()
    assert sock.recv(100) == b"WATCHDOG=1"
    sock.close()


def test_reads_notify_socket_and_is_a_noop_without_it(tmp_path, monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert not Notifier().ready() and not Notifier().enabled
    path = str(tmp_path / "n.sock")
    sock = _listen(path)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    assert Notifier().stopping()
    assert sock.recv(100) == b"STOPPING=1"
    sock.close()


def test_a_dead_socket_never_raises(tmp_path):
    assert Notifier(str(tmp_path / "nobody-listens.sock")).watchdog() is False


def test_watchdog_interval(monkeypatch):
    monkeypatch.setenv("WATCHDOG_USEC", "20000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert Notifier("x").watchdog_interval() == 10.0
    monkeypatch.setenv("WATCHDOG_PID", "1")
    assert Notifier("x").watchdog_interval() is None
