"""The table in the field: a Pi camera that stalls mid-night comes back in-process with the
dashboard up; a weak power supply or a hot Pi is an alert with its plain cause."""

# ruff: noqa: F811 (the fake_picamera2 fixture imported from picamera2_fake is a test argument of the same name)

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from table.health import (
    UNDER_VOLTAGE_NOW,
    UNDER_VOLTAGE_SINCE_BOOT,
    HealthMonitor,
    HealthStatus,
    default_checks,
    descriptor_message,
    power_message,
    read_throttled,
)
from table.runtime import default_model_path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "vision"))
from picamera2_fake import FakePicamera2, fake_picamera2  # noqa: E402,F401 - the Pi camera stand-in, its fixture

HAVE_MODEL = default_model_path().is_file()


def write_config(tmp_path: Path, camera: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[state]\ndatabase = "{tmp_path / "state" / "ledger.db"}"\nbackup_dir = "{tmp_path / "state" / "backups"}"\n'
        f"[camera]\n{camera}\n"
        '[web]\nhost = "127.0.0.1"\nport = 0\nadmin_pin = "135790"\n')
    return path


def wait_until(predicate, what, timeout=20.0):  # noqa: ANN001, ANN201
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@pytest.mark.skipif(not HAVE_MODEL, reason="the shipped card model is missing")
def test_a_stalled_pi_camera_recovers_in_process_with_the_dashboard_up(tmp_path, fake_picamera2) -> None:
    """The frontend times out after 20 frames. Within 10 s the camera is stopped (its pending
    capture cancelled), opened again and delivering, in the same process: the dashboard answered
    all along, showed the stall while it lasted, and keeps a note of it; the watchdog never stopped."""
    from table.commands.run import Controller
    from vision.calibration import save as save_calibration
    from vision.synthetic import SyntheticTable

    scene = SyntheticTable(seed=2, seats=4, size=(640, 360))
    cal = tmp_path / "calibration.json"
    save_calibration(cal, scene.calibration, scene.layout)
    FakePicamera2.image = scene.render([], frame_index=0)
    FakePicamera2.frame_interval = 0.03
    FakePicamera2.stalls = [20]
    cfg = write_config(tmp_path, f'source = "picamera2"\nwidth = 640\nheight = 360\ncalibration = "{cal}"')
    ctl = Controller(argparse.Namespace(config=str(cfg), mock_pins=True, host="127.0.0.1", port=0,
                                        max_seconds=None, quiet=True))
    main_loop = threading.Thread(target=lambda: ctl.loop(), daemon=True)
    try:
        ctl.start()
        main_loop.start()
        url = f"http://127.0.0.1:{ctl.web.port}/api/state"
        first = FakePicamera2.instances[0]
        wait_until(lambda: first.frames >= 20, "the stall")
        stalled_at = time.monotonic()
        pings = ctl.watchdog.pings
        seen: list[dict] = []
        while time.monotonic() - stalled_at < 10:
            seen.append(json.loads(urllib.request.urlopen(url, timeout=5).read()))  # the dashboard is up
            if len(FakePicamera2.instances) > 1 and seen[-1]["camera"]["ok"] and ctl.camera.frames > 25:
                break
            time.sleep(0.05)
        recovered = time.monotonic() - stalled_at
        assert recovered < 10, "no pictures within 10 s of the stall"
        stalls = [s for s in seen if not s["camera"]["ok"]]
        assert stalls and "camera stalled" in stalls[0]["status"]["message"]
        assert [a["kind"] for a in stalls[0]["alerts"]] == ["camera"]  # the alert, while it lasted
        assert first.closed and first.cancelled == 1  # its queued capture cancelled, then stopped
        assert ctl.camera.is_alive() and ctl.camera.stalls == 1
        wait_until(lambda: ctl.watchdog.pings > pings + 1, "watchdog pings after the stall")
        wait_until(lambda: any(a["kind"] == "camera_stall" for a in ctl.referee.snapshot()["alerts"]),
                   "the stall note")
        snap = json.loads(urllib.request.urlopen(url, timeout=5).read())
        assert snap["status"]["state"] == "ready" and snap["camera"]["ok"]
        note = [a for a in snap["alerts"] if a["kind"] == "camera_stall"][0]["message"]
        assert "stalled once tonight" in note and "ribbon" in note
    finally:
        ctl.stop_event.set()
        main_loop.join(5)
        ctl.stop()


# -- the power supply and the Pi's temperature -------------------------------------------------------
def test_throttling_bits_in_plain_words(tmp_path) -> None:
    path = tmp_path / "get_throttled"
    path.write_text("50005\n")  # under-voltage now and since boot, throttled now and since boot
    assert read_throttled([path], run=None) == 0x50005
    assert power_message(0x50005).startswith("the power supply is too weak")
    assert "phone charger" in power_message(UNDER_VOLTAGE_NOW)
    assert "since the Pi started" in power_message(UNDER_VOLTAGE_SINCE_BOOT)
    assert power_message(0x4).startswith("the Pi is too hot")  # throttled, enough voltage: heat
    assert power_message(0x40000).startswith("the Pi got too hot")
    assert power_message(0) == ""
    # vcgencmd when the firmware file is not there; nothing at all off a Pi
    assert read_throttled([tmp_path / "none"], run=lambda args: "throttled=0x10000\n") == 0x10000
    assert read_throttled([tmp_path / "none"], run=None) is None
    glob_path = tmp_path / "soc@107c000000" / "soc@107c000000:firmware"
    glob_path.mkdir(parents=True)
    (glob_path / "get_throttled").write_text("0\n")
    assert read_throttled([str(tmp_path / "soc*" / "soc*:firmware" / "get_throttled")], run=None) == 0


def test_a_weak_power_supply_is_a_dashboard_alert_until_it_is_fixed(tmp_path, table) -> None:
    path = tmp_path / "get_throttled"
    path.write_text("0\n")
    now = [0.0]
    monitor = HealthMonitor(table.ref.submit, default_checks([path], run=None), every=5.0, clock=lambda: now[0])
    monitor.poll()
    table.ref.drain()
    assert table.snap()["alerts"] == []  # all well: nothing said
    path.write_text("50005\n")  # a phone charger under load
    now[0] = 2.0
    monitor.poll()  # not yet: every 5 s
    assert table.ref.queue.empty()
    now[0] = 5.0
    monitor.poll()
    table.ref.drain()
    alerts = table.snap()["alerts"]
    assert [a["kind"] for a in alerts] == ["power"] and "power supply is too weak" in alerts[0]["message"]
    now[0] = 10.0
    monitor.poll()  # the same again: no new item, the same alert
    assert table.ref.queue.empty()
    path.write_text("0\n")  # a proper supply, after a reboot
    now[0] = 15.0
    monitor.poll()
    table.ref.drain()
    assert table.snap()["alerts"] == []


def test_off_a_pi_the_power_check_says_nothing(table) -> None:
    monitor = HealthMonitor(table.ref.submit, default_checks(["/nonexistent/get_throttled"], run=None))
    monitor.poll()
    assert table.ref.queue.empty()


def test_running_out_of_files_is_an_alert(tmp_path, table) -> None:
    fds = tmp_path / "fd"
    fds.mkdir()
    for i in range(850):
        (fds / str(i)).touch()
    message = descriptor_message(fds, limit=1024)
    assert message and "850 of its 1024 files" in message
    assert descriptor_message(fds, limit=4096) == ""
    assert descriptor_message(tmp_path / "nope") is None
    table.ref.step(HealthStatus("files", message))
    assert [a["kind"] for a in table.snap()["alerts"]] == ["files"]
    table.ref.step(HealthStatus("files", ""))
    assert table.snap()["alerts"] == []


# -- SPI and seat pins ---------------------------------------------------------------------------------
class _Referee:
    """What Controller._pins asks of the referee: the game's players and where presses go."""

    def __init__(self, players: list[str]) -> None:
        self.state = argparse.Namespace(players=players)
        self.events: list = []

    def submit(self, item) -> None:  # noqa: ANN001
        self.events.append(item)


def _controller(players: list[str]):  # noqa: ANN202
    from table.commands.run import Controller

    ctl = Controller(argparse.Namespace(mock_pins=True))
    ctl.referee = _Referee(players)
    return ctl


def _spi_on(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    from table import pin_claims

    (tmp_path / "spidev0.0").touch()
    (tmp_path / "spidev0.1").touch()
    monkeypatch.setattr(pin_claims, "DEV", tmp_path)


def test_spi_on_and_a_players_button_on_its_pins_is_refused_in_plain_words(tmp_path, monkeypatch) -> None:
    """Seat 3's button is GPIO8, SPI0's CE0: with SPI on the kernel holds it and lgpio would only
    say "GPIO busy". The refusal names the pin, its header position, SPI and what to do."""
    from table.cli import CommandError
    from table.config import load_config

    _spi_on(tmp_path, monkeypatch)
    cfg = load_config(None)
    ctl = _controller(["Ann", "Bea", "Cal", "Dot"])
    with pytest.raises(CommandError) as err:
        ctl._pins(cfg)
    text = str(err.value)
    assert text.count("\n") == 0
    assert "seat 3 button is GPIO8 (header pin 24), SPI0 CE0 (SPI is on" in text
    assert "raspi-config nonint do_spi 1" in text and "dtparam=spi=on" in text


def test_with_spi_on_only_the_seats_whose_pins_are_free_are_opened_and_the_log_says_why(
        tmp_path, monkeypatch, capsys) -> None:
    from table.config import load_config

    _spi_on(tmp_path, monkeypatch)
    ctl = _controller(["Ann", "Bea", "Cal"])  # seats 0-2: their pins are free
    controls = ctl._pins(load_config(None))
    try:
        assert len(controls.seats) == 3  # not the 8 wired: seat 3's button is SPI0's
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "seats 3 to 7 are not opened" in err and "GPIO8" in err
        assert ctl.pin_notes and "Admin page's seat button" in ctl.pin_notes[0]
    finally:
        controls.close()


def test_without_spi_every_wired_seat_is_opened(tmp_path, monkeypatch) -> None:
    from table import pin_claims
    from table.config import load_config

    monkeypatch.setattr(pin_claims, "DEV", tmp_path)  # no spidev: SPI is off
    ctl = _controller(["Ann", "Bea", "Cal"])
    controls = ctl._pins(load_config(None))
    try:
        assert len(controls.seats) == 8 and ctl.pin_notes == []
    finally:
        controls.close()


def _busy_factory(busy: set[int]):  # noqa: ANN202
    """A MockFactory whose pins in ``busy`` fail as lgpio fails for a pin a driver holds."""
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    class error(Exception):  # noqa: N801 - lgpio's name
        pass

    class BusyPin(MockPWMPin):
        def __init__(self, factory, info):  # noqa: ANN001
            if info.name in {f"GPIO{n}" for n in busy}:
                raise error("'GPIO busy'")
            super().__init__(factory, info)

    return MockFactory(pin_class=BusyPin)


def test_a_busy_pin_nobody_predicted_is_explained(tmp_path, monkeypatch, capsys) -> None:
    """Held by a driver /dev does not show (a HAT's overlay): a late joiner's seat is dropped with
    the reason; a player's seat refuses with it."""
    from gpiozero.pins import mock

    from table import pin_claims
    from table.cli import CommandError
    from table.config import load_config

    monkeypatch.setattr(pin_claims, "DEV", tmp_path)
    factory = _busy_factory({9})  # seat 5's button
    monkeypatch.setattr(mock, "MockFactory", lambda pin_class=None: factory)
    ctl = _controller(["Ann", "Bea", "Cal", "Dot"])
    controls = ctl._pins(load_config(None))
    try:
        assert len(controls.seats) == 4
        note = ctl.pin_notes[0]
        assert note.startswith("seats 4 to 7 are not opened") and "GPIO busy" in note and "held by another driver" in note
    finally:
        controls.close()
    factory = _busy_factory({9})
    ctl = _controller(["Ann", "Bea", "Cal", "Dot", "Eve", "Fay"])  # seat 5 plays
    with pytest.raises(CommandError, match="GPIO busy.*held by another driver"):
        ctl._pins(load_config(None))


def test_a_camera_that_cannot_be_stopped_stops_the_watchdog(table) -> None:
    """The last resort: a stalled camera that would not even stop (the source says it is wedged)
    is a fault on the dashboard and stops the pings, so systemd restarts the service."""
    from table.runtime import CameraLoop

    class Wedged:
        wedged = "picamera2 camera 0: the stalled camera did not stop within 8 s; restarting the service to free it"

    loop = CameraLoop(Wedged(), None, table.ref.submit)
    loop.is_alive = lambda: True  # type: ignore[method-assign]
    assert loop.healthy() is False
    table.ref.drain()
    snap = table.snap()
    assert snap["status"]["state"] == "fault" and "camera stuck" in snap["status"]["message"]
    assert [a["kind"] for a in snap["alerts"]] == ["camera"]
