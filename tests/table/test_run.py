"""`loo-table run`: one-line refusals at start, the camera thread surviving an unplugged camera,
the watchdog heartbeat, and (with the shipped model) a real start that reports READY=1."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from test_referee import start_deal

from table.cli import main
from table.instance import running_pid
from table.notify import Notifier
from table.referee import CameraStatus
from table.runtime import CameraLoop, Watchdog, default_model_path
from vision.events import VisionEvent
from vision.sources import Backoff, FrameSource, SourceUnavailable

ROOT = Path(__file__).resolve().parents[2]
HAVE_MODEL = default_model_path().is_file()


def write_config(tmp_path: Path, **sections: str) -> Path:
    parts = {
        "state": f'database = "{tmp_path / "state" / "ledger.db"}"\nbackup_dir = "{tmp_path / "state" / "backups"}"',
        "camera": 'source = "synthetic"\nwidth = 640\nheight = 360',
        "web": 'host = "127.0.0.1"\nport = 0\nadmin_pin = "135790"',
    }
    parts.update(sections)
    path = tmp_path / "config.toml"
    path.write_text("\n".join(f"[{k}]\n{v}\n" for k, v in parts.items()))
    return path


def test_malformed_config_is_one_line(tmp_path, capsys):
    cfg = write_config(tmp_path, game='players = ["A", "B"]')
    assert main(["run", "--config", str(cfg), "--mock-pins", "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "game.players: 2 players" in err


def test_missing_model_is_one_line_naming_the_file(tmp_path, capsys):
    cfg = write_config(tmp_path, model=f'path = "{tmp_path / "nothing.onnx"}"')
    assert main(["run", "--config", str(cfg), "--mock-pins", "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "nothing.onnx" in err and "missing" in err


def test_corrupt_model_is_one_line_naming_the_file(tmp_path, capsys):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x01garbage, not a protobuf" * 20)
    (tmp_path / "bad.json").write_text('{"labels": ["AS"], "input": "x"}')
    cfg = write_config(tmp_path, model=f'path = "{bad}"')
    assert main(["run", "--config", str(cfg), "--mock-pins", "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "bad.onnx" in err


def test_corrupt_ledger_names_the_latest_backup(tmp_path, capsys):
    db = tmp_path / "state" / "ledger.db"
    db.parent.mkdir()
    db.write_bytes(b"SQLite format 3\x00" + b"\xee" * 8000)
    cfg = write_config(tmp_path)
    assert main(["run", "--config", str(cfg), "--mock-pins", "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "is corrupt" in err and "no backup found" in err


class FlakySource(FrameSource):
    """A real FrameSource (its own reopen-with-backoff) whose camera can be unplugged."""

    kind = "flaky"

    def __init__(self):
        super().__init__(backoff=Backoff(attempts=2, initial=0.0), sleep=lambda s: None)
        self.unplugged = False

    def _open(self):
        if self.unplugged:
            raise SourceUnavailable("flaky camera: not found")

    def _grab(self):
        if self.unplugged:
            raise SourceUnavailable("flaky camera: unplugged")
        return np.zeros((8, 8, 3), np.uint8), None, None


class ScriptedWatcher:
    """Stands in for TableWatcher (tested by vision): emits the scripted events frame by frame."""

    def __init__(self, events):
        self.events = list(events)

    def process(self, frame):
        return [self.events.pop(0)] if self.events else []


def test_camera_unplugged_mid_deal_keeps_the_game(table):
    start_deal(table)
    table.card("Ann", "KS")
    source = FlakySource()
    watcher = ScriptedWatcher([VisionEvent("card_placed", "seat:1", 50.0, "2C", 0.99),
                               VisionEvent("card_placed", "seat:2", 51.0, "QS", 0.99)])
    loop = CameraLoop(source, watcher, table.ref.submit, retry_s=0.0)
    assert loop.step()  # Bea's card
    table.ref.drain()
    before = table.ref.state.digest()
    source.unplugged = True
    for _ in range(3):
        assert loop.step()  # unplugged: reported once, retried every time
    table.ref.drain()
    snap = table.snap()
    assert snap["status"]["state"] == "fault" and "camera lost" in snap["status"]["message"]
    assert table.outputs.status == "fault"
    assert [a["kind"] for a in snap["alerts"]].count("camera") == 1
    assert table.ref.state.digest() == before  # the game state stays
    source.unplugged = False
    assert loop.step()  # back: the deal resumes with Cal's card
    table.ref.drain()
    assert table.snap()["status"]["state"] == "ready"
    assert [p["card"] for p in table.snap()["trick"]["plays"]] == ["KS", "2C", "QS"]
    assert loop.failures >= 3 and not any(isinstance(i, CameraStatus) for i in list(table.ref.queue.queue))


def test_watchdog_pings_only_while_the_referee_makes_progress(table, tmp_path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "n.sock"))
    sock.settimeout(0.5)
    dog = Watchdog(table.ref, Notifier(str(tmp_path / "n.sock")))
    assert dog.beat()  # the first beat only sends a tick
    table.ref.drain()  # the referee takes it
    assert dog.beat() and sock.recv(100) == b"WATCHDOG=1"
    assert not dog.beat()  # the referee is "stuck": the tick was not processed, no ping
    assert dog.missed == 1 and dog.pings == 1
    sock.close()


@pytest.mark.skipif(not HAVE_MODEL, reason="the shipped card model (models/card_classifier.onnx) is missing")
def test_real_start_reports_ready_then_stops_on_sigterm(tmp_path, capsys):
    cfg = write_config(tmp_path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify.sock"))
    sock.settimeout(60)
    env = dict(os.environ, NOTIFY_SOCKET=str(tmp_path / "notify.sock"), WATCHDOG_USEC="1000000",
               PYTHONPATH=str(ROOT))
    env.pop("WATCHDOG_PID", None)
    proc = subprocess.Popen([sys.executable, "-m", "table", "run", "--config", str(cfg), "--mock-pins",
                             "--quiet"], env=env, cwd=str(tmp_path), stderr=subprocess.PIPE)
    try:
        msgs = []
        while not any(m.startswith("READY=1") for m in msgs):
            msgs.append(sock.recv(4096).decode())
        ready = [m for m in msgs if m.startswith("READY=1")][0]
        port = int(ready.rsplit("port ", 1)[1])
        state = urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=10).read()
        assert b'"phase"' in state
        # the real table learns the deck as the demo does: the snapshot says what it learned, and
        # the host starts "show me the deck" (the hearts) from the Admin page
        assert json.loads(state)["deck_learning"] == {"views": 0, "cards": 0}
        assert _host_shows_the_hearts(port)["deck_tour"]["missing"][0] == "2H"
        deadline = time.monotonic() + 10
        while "WATCHDOG=1" not in msgs and time.monotonic() < deadline:
            msgs.append(sock.recv(4096).decode())
        assert "WATCHDOG=1" in msgs
        # one table per ledger: a second run, a restore and a deck reset all refuse while it runs
        db = tmp_path / "state" / "ledger.db"
        assert running_pid(db) == proc.pid
        capsys.readouterr()
        assert main(["run", "--config", str(cfg), "--mock-pins", "--quiet"]) == 1
        assert f"in use by a running table (pid {proc.pid})" in capsys.readouterr().err
        assert main(["deck", "reset", "--db", str(db)]) == 1
        assert "Admin page" in capsys.readouterr().err
        assert main(["backup", "--db", str(db), "--restore", "latest"]) == 1
        assert f"a table is running on {db} (pid {proc.pid})" in capsys.readouterr().err
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0, proc.stderr.read().decode()[-2000:]
        assert db.is_file() and running_pid(db) is None
    finally:
        if proc.poll() is None:
            proc.kill()
        sock.close()


def _host_shows_the_hearts(port: int) -> dict:
    """Log in on the Admin page over HTTP and start "show me the deck" for the hearts; the state after."""
    import http.cookiejar
    import re

    base = f"http://127.0.0.1:{port}"
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    page = opener.open(f"{base}/admin", timeout=10).read().decode()
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)

    def post(path: str, body: dict, token: str) -> dict:
        req = urllib.request.Request(f"{base}{path}", data=json.dumps(body).encode(), method="POST", headers={
            "Content-Type": "application/json", "Origin": base, "X-CSRF-Token": token})
        return json.loads(opener.open(req, timeout=10).read())

    token = post("/admin/login", {"pin": "135790"}, token)["csrf_token"]
    reply = post("/api/admin/show_deck", {"action": "start", "suit": "H"}, token)
    assert "thirteen hearts" in json.dumps(reply)
    return json.loads(opener.open(f"{base}/api/state", timeout=10).read())


def write_avi(path, frames):
    import cv2

    tmp = path.with_name(path.name + ".writing.avi")
    writer = cv2.VideoWriter(str(tmp), cv2.VideoWriter_fourcc(*"MJPG"), 15.0, frames[0].shape[1::-1])
    for frame in frames:
        writer.write(frame)
    writer.release()
    os.replace(tmp, path)  # the device appears all at once, as a plugged-in camera does


def wait_until(predicate, what, timeout=20.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@pytest.mark.skipif(not HAVE_MODEL, reason="the shipped card model is missing")
def test_missing_camera_at_start_starts_in_fault_and_recovers(tmp_path, capsys):
    """systemd would give up after five quick failures, so a camera missing at boot is no refusal:
    the table starts with the fault on the status LED and the dashboard, and the camera thread
    keeps looking; once frames arrive the fault clears and the deal can go on."""
    import argparse

    from table.commands.run import Controller
    from vision.calibration import save as save_calibration
    from vision.synthetic import SyntheticTable

    scene = SyntheticTable(seed=2, seats=4, size=(640, 360))
    cal = tmp_path / "calibration.json"
    save_calibration(cal, scene.calibration, scene.layout)
    device = tmp_path / "video0.avi"  # not there yet: the camera is not plugged in
    cfg = write_config(tmp_path, camera=f'source = "opencv"\ndevice = "{device}"\nwidth = 640\nheight = 360\n'
                       f'calibration = "{cal}"')
    ctl = Controller(argparse.Namespace(config=str(cfg), mock_pins=True, host="127.0.0.1", port=0,
                                        max_seconds=None, quiet=True))
    try:
        ctl.start()
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "camera not found" in err and "video0.avi" in err
        snap = ctl.referee.snapshot()
        assert snap["status"]["state"] == "fault" and "camera not found" in snap["status"]["message"]
        assert snap["camera"]["ok"] is False and [a["kind"] for a in snap["alerts"]] == ["camera"]
        assert ctl.controls.status.state == "fault"  # the status LED
        ctl.camera.retry_s = 0.1
        write_avi(device, [scene.render([], frame_index=i) for i in range(4)])  # plugged in
        wait_until(lambda: ctl.camera.frames > 3 and ctl.referee.snapshot()["camera"]["ok"], "frames")
        snap = ctl.referee.snapshot()
        assert snap["status"]["state"] == "ready" and not snap["alerts"]
        assert ctl.controls.status.state == "ready"
        ctl.controls.dealer.pin.drive_low()  # the dealer starts the deal
        time.sleep(0.05)
        ctl.controls.dealer.pin.drive_high()
        wait_until(lambda: ctl.referee.snapshot()["phase"] == "turn_up", "the deal to start")
    finally:
        ctl.stop()


@pytest.mark.skipif(not HAVE_MODEL, reason="the shipped card model is missing")
def test_a_camera_config_error_still_refuses(tmp_path, capsys):
    cfg = write_config(tmp_path, camera='source = "replay"')
    assert main(["run", "--config", str(cfg), "--mock-pins", "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("loo-table run: camera:") and "camera.path" in err


def test_the_first_failed_read_is_reported_then_retried_with_backoff(table):
    """No sleeping through the source's own reopen schedule before anyone hears of it."""
    start_deal(table)
    waits = []

    class Unplugged(FrameSource):
        kind = "usb"

        def __init__(self):
            super().__init__(backoff=Backoff(attempts=0), sleep=lambda s: pytest.fail("the source slept"))
            self.unplugged = False

        def _open(self):
            if self.unplugged:
                raise SourceUnavailable("usb camera: /dev/video0 not found")

        def _grab(self):
            if self.unplugged:
                raise SourceUnavailable("usb camera: read failed")
            return np.zeros((8, 8, 3), np.uint8), None, None

    source = Unplugged()
    loop = CameraLoop(source, None, table.ref.submit, retry_s=2.0, retry_initial=0.25, sleep=waits.append)
    assert loop.step() and loop.frames == 1
    source.unplugged = True
    assert loop.step()  # the first failed read
    assert isinstance(table.ref.queue.queue[0], CameraStatus) and waits == [0.25]
    table.ref.drain()
    assert table.snap()["status"]["state"] == "fault" and table.outputs.status == "fault"
    for _ in range(5):
        loop.step()
    assert waits == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0] and table.ref.queue.empty()  # reported once
    source.unplugged = False
    assert loop.step() and loop.frames == 2
    table.ref.drain()
    assert table.snap()["status"]["state"] == "ready"
    source.unplugged = True
    loop.step()
    assert waits[-1] == 0.25  # the backoff starts again after the camera came back


@pytest.mark.skipif(not HAVE_MODEL, reason="the shipped card model is missing")
def test_bad_calibration_file_is_one_line(tmp_path, capsys):
    import cv2

    video = tmp_path / "table.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 5, (320, 240))
    for _ in range(3):
        writer.write(np.full((240, 320, 3), 90, np.uint8))
    writer.release()
    cal = tmp_path / "calibration.json"
    cal.write_text('{"format": "something-else"}')
    cfg = write_config(tmp_path, camera=f'source = "opencv"\ndevice = "{video}"\ncalibration = "{cal}"')
    assert main(["run", "--config", str(cfg), "--mock-pins", "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "camera.calibration" in err and "calibration.json" in err


def test_gpio_without_a_pi_says_use_mock_pins(tmp_path, capsys, monkeypatch):
    if not HAVE_MODEL:
        pytest.skip("the shipped card model is missing")
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    from gpiozero import Device

    monkeypatch.setattr(Device, "pin_factory", None)
    cfg = write_config(tmp_path)
    code = main(["run", "--config", str(cfg), "--quiet"])
    err = capsys.readouterr().err.strip()
    if code == 0:  # pragma: no cover - only on a real Raspberry Pi
        pytest.skip("real GPIO available")
    assert code == 1 and err.count("\n") == 0 and "GPIO:" in err and "--mock-pins" in err
    assert "lgpio:" in err and "native:" in err  # which factories were tried, and why each failed


def test_dashboard_zones_become_the_watchers_layout():
    from table.commands.run import _layout_from_zones
    from vision.geometry import GeometryError, TableLayout

    base = TableLayout.default(4)
    moved = _layout_from_zones({"turn_up": {"x": 250.0, "y": 330.0, "width": 100.0, "height": 120.0}}, base)
    assert moved.zone("turn_up").x == 250.0 and moved.zone("seat:0") == base.zone("seat:0")
    with pytest.raises(GeometryError, match="overlap"):
        _layout_from_zones({"stock": base.zone("turn_up").to_dict()}, base)
    with pytest.raises(GeometryError, match="smaller than a card"):
        _layout_from_zones({"seat:1": {"x": 0, "y": 0, "width": 20, "height": 20}}, base)


def test_a_bug_in_the_camera_thread_is_reported_and_retried(table):
    class Broken:
        calls = 0

        def process(self, frame):
            Broken.calls += 1
            if Broken.calls == 1:
                raise RuntimeError("watcher bug")
            return []

    loop = CameraLoop(FlakySource(), Broken(), table.ref.submit, retry_s=0.0)
    loop.start()
    deadline = time.monotonic() + 5
    while Broken.calls < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    loop.stop()
    loop.join(5)
    assert Broken.calls >= 3 and not loop.is_alive()
    table.ref.drain()
    messages = [a["message"] for a in table.snap()["alerts"] if a["kind"] == "camera"]
    assert messages == [] and table.snap()["status"]["state"] == "ready"  # it recovered
    assert loop.failures == 1


def test_no_watchdog_ping_once_the_camera_thread_died(table, tmp_path):
    dead = {"alive": True}
    dog = Watchdog(table.ref, Notifier(str(tmp_path / "nobody.sock")), alive=lambda: dead["alive"])
    assert dog.beat()
    table.ref.drain()
    dead["alive"] = False
    assert not dog.beat() and dog.missed == 1


class StallingCamera(FrameSource):
    """Delivers `frames` frames, then its read blocks (no error, no frame) until `resume` is set:
    what a Camera Module does when its frontend times out and nothing gives up waiting."""

    kind = "stalling"

    def __init__(self, frames):
        super().__init__(backoff=Backoff(attempts=0), sleep=lambda s: None)
        self.left = frames
        self.stalled = threading.Event()
        self.resume = threading.Event()

    def _open(self):
        pass

    def _grab(self):
        if self.left <= 0:
            self.stalled.set()
            self.resume.wait(30)
            self.left = 10 ** 6
        self.left -= 1
        return np.zeros((8, 8, 3), np.uint8), None, None


def test_a_stalled_camera_is_a_fault_then_no_watchdog_ping_then_recovers(table, tmp_path):
    now = [100.0]
    source = StallingCamera(frames=5)
    loop = CameraLoop(source, None, table.ref.submit, clock=lambda: now[0])
    dog = Watchdog(table.ref, Notifier(str(tmp_path / "nobody.sock")), alive=loop.healthy)

    def beat_at(t):
        now[0] = 100.0 + t
        dog.beat()
        table.ref.drain()  # the referee takes the tick (and any camera status) at once
        return table.snap()

    loop.start()
    try:
        assert source.stalled.wait(10) and loop.frames == 5  # the read of frame 6 never returns
        assert beat_at(0)["status"]["state"] == "ready"
        assert beat_at(1)["status"]["state"] == "ready" and dog.pings == 1
        snap = beat_at(2.5)  # within 3 s: the fault and one alert
        assert snap["status"]["state"] == "fault" and "camera stalled" in snap["status"]["message"]
        assert [a["kind"] for a in snap["alerts"]] == ["camera"] and table.outputs.status == "fault"
        pings = dog.pings
        for t in (4.0, 5.0, 6.0, 30.0):  # no ping once 4 s passed without a frame
            beat_at(t)
        assert dog.pings == pings and dog.missed == 4
        assert [a["kind"] for a in table.snap()["alerts"]] == ["camera"]  # reported once
        source.resume.set()  # frames come back
        wait_until(lambda: loop.frames > 10, "frames after the stall")
        snap = beat_at(31.0)
        assert snap["status"]["state"] == "ready" and snap["camera"]["ok"]
        # the fault is gone; a note of the stall stays, for a host wondering why cards were missed
        assert [a["kind"] for a in snap["alerts"]] == ["camera_stall"] and loop.stalls == 1
        assert "stalled once tonight" in snap["alerts"][0]["message"]
        assert dog.pings == pings + 1  # pinging again
    finally:
        loop.stop()
        source.resume.set()
        loop.join(5)


def test_a_missing_camera_keeps_the_watchdog_pinging(table, tmp_path):
    """Failing reads are retried, not a hang: a restart would not plug the cable back in, and
    restarting every 30 s would use up systemd's start limit (the dashboard would go too)."""
    now = [0.0]

    class Unplugged(FrameSource):
        kind = "usb"

        def __init__(self):
            super().__init__(backoff=Backoff(attempts=0), sleep=lambda s: None)

        def _open(self):
            raise SourceUnavailable("usb camera: /dev/video0 not found")

    loop = CameraLoop(Unplugged(), None, table.ref.submit, clock=lambda: now[0], sleep=lambda s: None)
    loop.is_alive = lambda: True  # its thread's work is done here, one read at a time
    for t in range(1, 20):
        now[0] = float(t)
        loop.step()
        assert loop.healthy()


@pytest.mark.skipif(not HAVE_MODEL, reason="the shipped card model is missing")
def test_web_threads_from_the_config_size_waitress(tmp_path):
    import argparse

    from table.commands.run import Controller
    from web.server import SPARE_THREADS

    cfg = write_config(tmp_path, web='host = "127.0.0.1"\nport = 0\nadmin_pin = "135790"\nthreads = 12')
    ctl = Controller(argparse.Namespace(config=str(cfg), mock_pins=True, host=None, port=None,
                                        max_seconds=None, quiet=True))
    try:
        ctl.start()
        assert ctl.web.server.adj.threads == 12
        assert ctl.web.app.config["MAX_STREAMS"] == 12 - SPARE_THREADS  # streams never take the spares
    finally:
        ctl.stop()


def test_a_seat_button_at_the_table_opens_the_dashboard_login_gate(tmp_path):
    """Issue 49 #3: once the PIN budget is spent, a login needs a seat button pressed at the
    table; the controller feeds its real (mock-pin) seat buttons to the dashboard's gate."""
    import argparse

    from table.commands.run import Controller

    cfg = write_config(tmp_path, web='host = "127.0.0.1"\nport = 0\nadmin_pin = "135790"\nthreads = 12')
    ctl = Controller(argparse.Namespace(config=str(cfg), mock_pins=True, host=None, port=None,
                                        max_seconds=None, quiet=True))
    try:
        ctl.start()
        limiter = ctl.web.app.extensions["loo"].limiter
        assert limiter.presence is ctl.presence and not ctl.presence.take()
        button = ctl.controls.seats[1].button.pin
        button.drive_low()
        time.sleep(0.05)
        button.drive_high()
        wait_until(lambda: ctl.presence.take(), "the press to reach the login gate")
    finally:
        ctl.stop()
    # issue 49 #5: the controller sealed its events and noted the night's last head beside the ledger
    from table.ledger import Ledger
    from table.seal import load_key, noted_head

    db = tmp_path / "state" / "ledger.db"
    with Ledger(db, readonly=True) as led:
        head = noted_head(db)
        assert head is not None and (head.seq, head.hash) == led.head()
        assert led.verify_chain(load_key(db, create=False)) == []
