"""Game-night faults (issue 7), each against the real controller code, on the installed layout.

The installed layout is systemd's: the ledger in the StateDirectory (`/var/lib/loo-table/ledger.db`,
here `tmp_path/var/lib/loo-table/ledger.db`), backups in `backups/` beside it, the config in
`/etc/loo-table/config.toml` naming both.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import http.client
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from table.backup import backup_database
from table.ledger import Ledger, LedgerCorrupt, LedgerWriteError


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    d = tmp_path / "var" / "lib" / "loo-table"
    d.mkdir(parents=True)
    return d


# --- ledger database corrupt at start -----------------------------------------------------------


def corrupt(path: Path) -> None:
    """Overwrite the middle of the file (where the events' pages are) with garbage, as a bad SD card does."""
    data = bytearray(path.read_bytes())
    assert len(data) >= 4096 * 3
    data[4096:len(data) - 100] = b"\xa5" * (len(data) - 100 - 4096)
    path.write_bytes(bytes(data))


def filled_ledger(path: Path, events: int = 200) -> list[str]:
    with Ledger(path) as ledger:
        for i in range(events):
            ledger.append("adjust_chips", {"player": "Ann", "delta": 1, "reason": f"r{i}" * 10}, key=f"k{i}")
    return [f"k{i}" for i in range(events)]


def test_corrupt_ledger_refuses_and_names_the_latest_backup(state_dir: Path) -> None:
    db = state_dir / "ledger.db"
    filled_ledger(db)
    t = dt.datetime(2026, 11, 20, 4, 30, tzinfo=dt.UTC)
    backup_database(db, state_dir / "backups", clock=lambda: t)
    newest = backup_database(db, state_dir / "backups", clock=lambda: t + dt.timedelta(days=1))
    corrupt(db)
    with pytest.raises(LedgerCorrupt) as err:
        Ledger(db, backup_dir=state_dir / "backups")
    message = str(err.value)
    assert "\n" not in message
    assert str(db) in message and "corrupt" in message
    assert str(newest.path) in message  # the latest, not the older one
    assert f"--restore {newest.path}" in message and "systemctl stop loo-table" in message
    # Following the printed instructions brings the table back with the backed-up events.
    from table.backup import restore_backup

    restore_backup(newest.path, db)
    with Ledger(db, backup_dir=state_dir / "backups") as ledger:
        assert ledger.integrity() == "ok"
        assert len(ledger.events()) == 200


def test_corrupt_ledger_without_backups_says_so(state_dir: Path) -> None:
    db = state_dir / "ledger.db"
    filled_ledger(db)
    corrupt(db)
    with pytest.raises(LedgerCorrupt, match="no backup found"):
        Ledger(db, backup_dir=state_dir / "backups")


# --- disk full while writing --------------------------------------------------------------------


@contextlib.contextmanager
def tiny_filesystem(where: Path, size_kb: int) -> Iterator[Path]:
    """A real full disk: a tmpfs of `size_kb` (needs root and CAP_SYS_ADMIN, else the test skips)."""
    where.mkdir(parents=True, exist_ok=True)
    mount = shutil.which("mount")
    if mount is None or os.geteuid() != 0:
        pytest.skip("a tiny tmpfs needs root (mount); the max_page_count variant still runs")
    done = subprocess.run([mount, "-t", "tmpfs", "-o", f"size={size_kb}k,mode=0755", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill_until_refused(ledger: Ledger) -> tuple[list[str], LedgerWriteError]:
    acknowledged: list[str] = []
    for i in range(100_000):
        try:
            ledger.append("note", {"text": f"event {i} " + "x" * 900}, key=f"e{i}")
        except LedgerWriteError as exc:
            return acknowledged, exc
        acknowledged.append(f"e{i}")
    raise AssertionError("the disk never filled")


def check_nothing_half_written(db: Path, acknowledged: list[str], refused_key: str) -> None:
    with Ledger(db) as reopened:
        assert reopened.integrity() == "ok"
        keys = [e.key for e in reopened.events()]
    assert keys == acknowledged  # every acknowledged event, in order, and nothing else
    assert refused_key not in keys


def test_disk_full_on_a_real_tiny_filesystem(tmp_path: Path) -> None:
    mnt = tmp_path / "var" / "lib" / "loo-table"
    with tiny_filesystem(mnt, 320):
        db = mnt / "ledger.db"
        ledger = Ledger(db)
        acknowledged, exc = fill_until_refused(ledger)
        assert len(acknowledged) > 10
        assert "disk is full" in str(exc) and str(db) in str(exc)
        assert ledger.failed is not None and "disk is full" in ledger.failed
        # It stops accepting events (even small ones) and says why, rather than failing one by one.
        with pytest.raises(LedgerWriteError, match="stopped accepting events: the disk is full"):
            ledger.append("note", {"text": "tiny"}, key="after")
        ledger.close()
        subprocess.run(["mount", "-o", "remount,size=4m", str(mnt)], check=True)
        check_nothing_half_written(db, acknowledged, f"e{len(acknowledged)}")


def test_disk_full_simulated_with_max_page_count(state_dir: Path) -> None:
    """The same on any machine: SQLite's max_page_count makes the file 'full' (SQLITE_FULL)."""
    db = state_dir / "ledger.db"
    ledger = Ledger(db)
    pages = ledger._con.execute("PRAGMA page_count").fetchone()[0]
    ledger._con.execute(f"PRAGMA max_page_count={pages + 40}")  # the only private access: no public knob
    acknowledged, exc = fill_until_refused(ledger)
    assert len(acknowledged) > 10
    assert "disk is full" in str(exc)
    with pytest.raises(LedgerWriteError, match="stopped accepting events"):
        ledger.append("note", {"text": "tiny"}, key="after")
    ledger.close()
    check_nothing_half_written(db, acknowledged, f"e{len(acknowledged)}")


# --- malformed config -----------------------------------------------------------------------------


def installed_config(root: Path, overrides: dict[str, dict[str, str]] | None = None, *, tail: str = "") -> Path:
    """/etc/loo-table/config.toml of an installed Pi, re-rooted under `root` (synthetic camera).

    `overrides` sets raw TOML values per section (replacing the defaults below); `tail` is appended.
    """
    state = root / "var" / "lib" / "loo-table"
    state.mkdir(parents=True, exist_ok=True)
    etc = root / "etc" / "loo-table"
    etc.mkdir(parents=True, exist_ok=True)
    sections: dict[str, dict[str, str]] = {
        "state": {"database": f'"{state / "ledger.db"}"', "backup_dir": f'"{state / "backups"}"'},
        "camera": {"source": '"synthetic"', "width": "640", "height": "360"},
        "web": {"host": '"127.0.0.1"', "port": "0", "admin_pin": '"135790"'},
    }
    for name, values in (overrides or {}).items():
        sections.setdefault(name, {}).update(values)
    text = "".join(
        f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in values.items()) for name, values in sections.items()
    )
    cfg = etc / "config.toml"
    cfg.write_text(text + tail)
    return cfg


BAD_CONFIGS: list[tuple[dict[str, dict[str, str]], str, str]] = [
    ({"game": {"variant": '"four_card"'}}, "", "game.variant"),
    ({"game": {"chips": "-5"}}, "", "game.chips"),
    ({"game": {"players": '["Ann", "Ann", "Bea"]'}}, "", "game.players"),
    ({"game": {"varient": '"irish"'}}, "", "game.varient"),
    ({"pins": {"buzzer": "2"}}, "", "GPIO2"),
    ({"pins": {"buzzer": "4"}}, "", "GPIO4"),  # already seat 0's LED
    ({"pins": {"dealer_button": "40"}}, "", "GPIO40"),
    ({"camera": {"source": '"webcam"'}}, "", "camera.source"),
    ({"camera": {"fps": "0"}}, "", "camera.fps"),
    ({"model": {"threads": '"two"'}}, "", "model.threads"),
    ({"web": {"port": '"eighty"'}}, "", "web.port"),
    ({"web": {"admin_pin": '"12ab"'}}, "", "web.admin_pin"),
    ({"stat": {"database": '"x"'}}, "", "stat"),
    ({}, "[game\n", "not valid TOML"),
]


@pytest.mark.parametrize(("overrides", "tail", "needle"), BAD_CONFIGS, ids=[n for *_, n in BAD_CONFIGS])
def test_malformed_config_is_one_line_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], overrides: dict[str, dict[str, str]], tail: str,
    needle: str,
) -> None:
    from table.cli import main

    cfg = installed_config(tmp_path, overrides, tail=tail)
    assert main(["run", "--config", str(cfg), "--mock-pins", "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert err.startswith("loo-table run: ") and needle in err, err
    assert str(cfg) in err  # which file
    # Refused before anything was touched: no ledger, no PIN file in the state directory.
    assert list((tmp_path / "var" / "lib" / "loo-table").iterdir()) == []


# --- camera unplugged mid-deal -------------------------------------------------------------------

HAVE_MODEL = importlib.util.find_spec("models") is not None and (
    Path(importlib.util.find_spec("models").origin or "").parent / "card_classifier.onnx"  # type: ignore[union-attr]
).is_file()


def write_video(path: Path, frames: list[Any]) -> None:
    """An MJPG .avi standing in for a USB camera's device node (OpenCV opens either by path)."""
    import cv2

    tmp = path.with_name(path.name + ".writing.avi")
    h, w = frames[0].shape[:2]
    writer = cv2.VideoWriter(str(tmp), cv2.VideoWriter_fourcc(*"MJPG"), 15.0, (w, h))
    assert writer.isOpened()
    for frame in frames:
        writer.write(frame)
    writer.release()
    os.replace(tmp, path)  # the "device" appears all at once, as a plugged-in camera does


def wait_for(predicate: Any, timeout: float = 15.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def api_state(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/state", timeout=10) as resp:
        return dict(json.loads(resp.read()))


@pytest.mark.skipif(not HAVE_MODEL, reason="the shipped card model (models/card_classifier.onnx) is missing")
def test_camera_unplugged_mid_deal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`loo-table run`'s own Controller with a USB-style camera that disappears and comes back.

    Real parts: the config, the ledger in the state directory, the card model, MockFactory pins
    through the real TableControls, OpenCV reading frames of the synthetic table, TableWatcher, the
    referee thread, the camera thread and waitress. The camera is not plugged in at boot: the
    service starts anyway, in the camera-fault state. The controller's own retry schedule is used
    (the first failed read is reported at once); only the camera thread's longest retry interval is
    shortened (0.2 s instead of 2 s) so the test takes seconds.
    """
    from table.commands.run import Controller
    from vision.calibration import save as save_calibration
    from vision.synthetic import PlacedCard, SyntheticTable

    scene = SyntheticTable(seed=3, seats=4, size=(1280, 720))
    cx, cy = scene.layout.zone("turn_up").center
    empty = [scene.render([], frame_index=i) for i in range(6)]
    with_card = [scene.render([PlacedCard("KS", cx, cy, 5.0)], frame_index=i) for i in range(12)]
    calibration = tmp_path / "etc" / "loo-table" / "calibration.json"
    calibration.parent.mkdir(parents=True)
    save_calibration(calibration, scene.calibration, scene.layout)  # what `loo-table calibrate` writes
    camera = tmp_path / "dev" / "video0.avi"
    camera.parent.mkdir()  # no camera yet: it is plugged in after the service started
    cfg = installed_config(tmp_path, {"camera": {
        "source": '"opencv"', "device": f'"{camera}"', "width": "1280", "height": "720",
        "calibration": f'"{calibration}"', "stable_s": "0.0"}})
    monkeypatch.chdir(tmp_path / "var" / "lib" / "loo-table")  # WorkingDirectory=
    ctl = Controller(argparse.Namespace(config=str(cfg), mock_pins=True, host="127.0.0.1", port=0,
                                        max_seconds=None, quiet=True))
    try:
        ctl.start()  # not refused: systemd would give up after five quick restarts
        ref, port = ctl.referee, ctl.web.port
        ctl.camera.retry_s = 0.2  # the camera thread's longest retry interval (2 s in service)
        snap = api_state(port)
        assert snap["status"]["state"] == "fault" and "camera not found" in snap["status"]["message"]
        assert ctl.controls.status.state == "fault"
        write_video(camera, empty)  # plugged in
        wait_for(lambda: ctl.camera.frames > 10, what="frames from the camera")
        wait_for(lambda: api_state(port)["status"]["state"] == "ready", what="the fault to clear")
        # The dealer presses the real (mock-pin) button: deal 1 starts and waits for the turn-up.
        ctl.controls.dealer.pin.drive_low()
        time.sleep(0.05)
        ctl.controls.dealer.pin.drive_high()
        wait_for(lambda: api_state(port)["phase"] == "turn_up", what="the deal to start")
        before = ref.state.digest()

        camera.rename(camera.with_name("unplugged.avi"))  # the cable comes out
        wait_for(lambda: api_state(port)["status"]["state"] == "fault", what="the fault on the dashboard")
        snap = api_state(port)
        assert "camera lost" in snap["status"]["message"]
        assert [a["kind"] for a in snap["alerts"]].count("camera") == 1
        assert ctl.controls.status.state == "fault"  # the status LED (red, blinking)
        failures = ctl.camera.failures
        wait_for(lambda: ctl.camera.failures > failures, what="the source to retry")
        assert ref.state.digest() == before and snap["phase"] == "turn_up"  # the game state stays

        write_video(camera, with_card)  # plugged back in, the turn-up card now on the table
        wait_for(lambda: api_state(port)["turn_up"] == "KS", what="the deal to resume")
        snap = api_state(port)
        assert snap["status"]["state"] == "ready" and snap["phase"] == "declare"
        assert not [a for a in snap["alerts"] if a["kind"] == "camera"]
        assert ctl.controls.status.state == "ready"
    finally:
        ctl.stop()


# --- model file missing or corrupt ----------------------------------------------------------------


def shipped_model() -> Path:
    from table.runtime import default_model_path

    return default_model_path()


@pytest.mark.skipif(not HAVE_MODEL, reason="the shipped card model (models/card_classifier.onnx) is missing")
@pytest.mark.parametrize("damage", ["missing", "empty", "truncated", "bit_rot"])
def test_bad_model_refuses_to_start_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    """What an SD card does to a model file: gone, zero bytes, cut short, or scribbled over."""
    import socket

    from table.cli import main

    original = shipped_model()
    model = tmp_path / "opt" / "loo-table" / "card_classifier.onnx"
    model.parent.mkdir(parents=True)
    for sidecar in original.parent.glob(original.stem + ".json"):
        shutil.copy(sidecar, model.with_suffix(".json"))  # the labels file stays intact
    data = original.read_bytes()
    if damage == "empty":
        model.write_bytes(b"")
    elif damage == "truncated":
        model.write_bytes(data[: len(data) // 2])
    elif damage == "bit_rot":
        rotten = bytearray(data)
        rotten[64:4096] = bytes(4096 - 64)
        model.write_bytes(bytes(rotten))
    cfg = installed_config(tmp_path, {"model": {"path": f'"{model}"'}})
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify.sock"))
    sock.setblocking(False)
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "notify.sock"))
    try:
        assert main(["run", "--config", str(cfg), "--mock-pins", "--quiet"]) == 1
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0, err
        assert str(model) in err, err
        messages = []
        with contextlib.suppress(BlockingIOError):
            while True:
                messages.append(sock.recv(4096).decode())
        assert not any(m.startswith("READY=1") for m in messages)  # systemd never hears "ready"
    finally:
        sock.close()


# --- disk full while the referee writes -----------------------------------------------------------


class RecordingOutputs:
    """What the referee shows on the status LED (the MockFactory run of the same is test_camera...)."""

    def __init__(self) -> None:
        self.status = "off"

    def show_seats(self, states: Any) -> None:
        pass

    def show_status(self, state: str) -> None:
        self.status = state

    def alarm(self, beeps: int = 3) -> None:
        pass


class _Full(Exception):
    pass


@pytest.mark.parametrize("how", ["tmpfs", "max_page_count"])
def test_disk_full_stops_the_referee_and_says_why(tmp_path: Path, how: str) -> None:
    from table.referee import Referee
    from table.simulate import DirectTransport, VirtualPlayers, run_night
    from table.state import TableState

    state_dir = tmp_path / "var" / "lib" / "loo-table"
    with contextlib.ExitStack() as stack:
        if how == "tmpfs":
            stack.enter_context(tiny_filesystem(state_dir, 400))
        else:
            state_dir.mkdir(parents=True)
        db = state_dir / "ledger.db"
        ledger = Ledger(db, backup_dir=state_dir / "backups")
        if how == "max_page_count":
            pages = ledger._con.execute("PRAGMA page_count").fetchone()[0]
            ledger._con.execute(f"PRAGMA max_page_count={pages + 10}")
        outputs = RecordingOutputs()
        referee = Referee(ledger, outputs=outputs, setup={
            "players": ["Ann", "Bea", "Cal", "Dot"], "variant": "three_card",
            "options": {"deals_per_player": 100}, "chips": 100, "first_dealer": 0})
        acked: list[tuple[int, str]] = [(referee.state.last_seq, referee.state.digest())]

        def on_step(_intent: object) -> None:
            if referee.state.last_seq != acked[-1][0]:
                acked.append((referee.state.last_seq, referee.state.digest()))
            if referee.fault is not None:
                raise _Full

        players = VirtualPlayers(7)
        transport = DirectTransport(referee)
        with pytest.raises(_Full):
            run_night(referee, players, transport, on_step=on_step)
        assert len(acked) > 20  # the night had been going for a while

        # It says why, on the dashboard's status and on the status LED.
        status = referee.snapshot()["status"]
        assert status["state"] == "fault" and "disk is full" in status["message"]
        assert str(db) in status["message"]
        assert outputs.status == "fault"
        # It accepts nothing more: button presses and cards change nothing, commands are refused.
        frozen = (referee.state.last_seq, referee.state.digest())
        for intent in players.next_intents(referee.state)[:5]:
            transport.deliver(intent)
        with pytest.raises(ValueError, match="disk is full"):
            referee.call("adjust_chips", {"player": "Ann", "delta": 5, "reason": "after the disk filled"})
        assert (referee.state.last_seq, referee.state.digest()) == frozen == acked[-1]
        ledger.close()

        if how == "tmpfs":  # the host frees space
            subprocess.run(["mount", "-o", "remount,size=8m", str(state_dir)], check=True)
        # Restart: the log holds every acknowledged event and nothing half-written.
        with Ledger(db) as reopened:
            assert reopened.integrity() == "ok"
            events = reopened.events()
        replayed = TableState.replay(events)
        assert (replayed.last_seq, replayed.digest()) == acked[-1]


# --- killed at any moment: a clean restart of the installed service --------------------------------

ROOT = Path(__file__).resolve().parents[2]
PIN = "135790"


class Dashboard:
    """An admin on a phone: logs in with the PIN, then adjusts chips (one ledger event per POST)."""

    def __init__(self, port: int) -> None:
        import http.cookiejar

        self.base = f"http://127.0.0.1:{port}"
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        self.csrf = ""

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        req = urllib.request.Request(self.base + path, data=json.dumps(body).encode(), method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json", "Origin": self.base,
            "X-CSRF-Token": self.csrf})
        with self.opener.open(req, timeout=10) as resp:
            return dict(json.loads(resp.read()))

    def login(self) -> None:
        import re

        try:  # the login page sets the session's CSRF token and carries it
            with self.opener.open(self.base + "/admin", timeout=10) as resp:
                page = resp.read().decode()
        except urllib.error.HTTPError as exc:  # served with 401 until logged in
            page = exc.read().decode()
        match = re.search(r'name="csrf[-_]token" (?:content|value)="([^"]+)"', page)
        assert match, "no CSRF token on the login page"
        self.csrf = match.group(1)
        self.csrf = self.post("/admin/login", {"pin": PIN})["csrf_token"]

    def adjust(self, reason: str) -> None:
        assert self.post("/api/admin/adjust_chips", {"player": "Ann", "delta": 1, "reason": reason})["ok"]


class Service:
    """`loo-table run` started the way systemd starts it: the config from /etc/loo-table, the state
    directory as working directory, NOTIFY_SOCKET for READY=1."""

    def __init__(self, root: Path, cfg: Path) -> None:
        import socket

        self.sock_path = root / "notify.sock"
        self.sock_path.unlink(missing_ok=True)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(self.sock_path))
        env = dict(os.environ, NOTIFY_SOCKET=str(self.sock_path), PYTHONPATH=str(ROOT))
        for line in (ROOT / "systemd" / "loo-table.service").read_text().splitlines():
            if line.startswith("Environment="):  # the unit's environment, as systemd sets it
                env.update(item.split("=", 1) for item in line[len("Environment="):].split())
        env.pop("WATCHDOG_USEC", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "table", "run", "--config", str(cfg), "--mock-pins", "--quiet"],
            cwd=root / "var" / "lib" / "loo-table", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.started = time.monotonic()

    def ready(self, timeout: float = 60.0) -> int:
        """Wait for READY=1; return the dashboard port from its STATUS text."""
        self.sock.settimeout(timeout)
        while True:
            try:
                msg = self.sock.recv(4096).decode()
            except TimeoutError:
                raise AssertionError(f"no READY=1: {self.stderr()}") from None
            if msg.startswith("READY=1"):
                return int(msg.rsplit("port ", 1)[1])

    def stderr(self) -> str:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        return (self.proc.stderr.read() if self.proc.stderr else b"").decode()[-2000:]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()
        self.sock.close()


def adjustments_in_log(db: Path) -> list[str]:
    import sqlite3

    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "events" not in tables:  # killed before its first start wrote the schema: no table at all
            assert "meta" not in tables, f"half a schema: {sorted(tables)}"
            return []
        rows = con.execute("SELECT data FROM events WHERE kind = 'adjust_chips' ORDER BY seq").fetchall()
    finally:
        con.close()
    return [json.loads(r[0])["reason"] for r in rows]


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_MODEL, reason="the shipped card model (models/card_classifier.onnx) is missing")
def test_killed_at_any_moment_restarts_cleanly(tmp_path: Path) -> None:
    """SIGKILL (what the watchdog or a power cut does) during start-up and mid-write, then restart.

    tests/table/test_crash.py kills the referee 50 times on a simulated night; this runs the whole
    installed service (config, StateDirectory, admin PIN and session key files, waitress, camera
    thread) and kills it while it starts and while the dashboard is writing events.
    """
    import random
    import threading

    rng = random.Random(7)
    cfg = installed_config(tmp_path)
    db = tmp_path / "var" / "lib" / "loo-table" / "ledger.db"
    acknowledged: list[str] = []
    for run_no, moment in enumerate(["start-up", "writing", "start-up", "writing"]):
        service = Service(tmp_path, cfg)
        try:
            if moment == "start-up":  # somewhere between exec and READY=1
                time.sleep(rng.uniform(0.2, 2.2))
            else:
                dash = Dashboard(service.ready())
                dash.login()
                killed = threading.Event()
                proc = service.proc

                def kill(proc: subprocess.Popen[bytes] = proc, killed: threading.Event = killed) -> None:
                    killed.set()  # set first: any failure after this may be the kill's doing
                    proc.kill()

                timer = threading.Timer(rng.uniform(0.1, 0.6), kill)
                timer.start()
                try:
                    for i in range(10_000):
                        dash.adjust(f"run {run_no} post {i}")
                        acknowledged.append(f"run {run_no} post {i}")
                except (OSError, http.client.HTTPException) as exc:
                    # The connection dies with the process: a reset, a refused connection, or a
                    # response cut short (IncompleteRead, RemoteDisconnected). Before the kill, a
                    # failure would be a real bug.
                    assert killed.is_set(), f"the dashboard failed before the kill: {exc!r}"
                finally:
                    timer.cancel()
            service.proc.kill()
            service.proc.wait(30)
        finally:
            service.close()
        if db.exists():
            logged = adjustments_in_log(db)  # integrity ok after every kill
            assert set(acknowledged) <= set(logged), "an acknowledged event was lost"
    assert len(acknowledged) > 5

    # The restart after the last kill is clean: ready, same PIN, every event, chips add up.
    service = Service(tmp_path, cfg)
    try:
        port = service.ready()
        dash = Dashboard(port)
        dash.login()  # the PIN file survived being killed mid-start
        dash.adjust("after the kills")
        logged = adjustments_in_log(db)
        assert set(acknowledged) | {"after the kills"} <= set(logged)
        ann = next(s for s in api_state(port)["seats"] if s["name"] == "Ann")
        assert ann["chips"] == 100 + len(logged)  # the restarted state is the fold of the whole log
        service.proc.terminate()
        assert service.proc.wait(60) == 0, service.stderr()
    finally:
        service.close()
    verify = subprocess.run([sys.executable, "-m", "table", "ledger", "verify", "--config", str(cfg)],
                            capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert verify.returncode == 0, verify.stdout + verify.stderr
