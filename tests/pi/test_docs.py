"""docs/hardware.md stays true: its wiring table and camera arithmetic are regenerated and compared."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARDWARE = ROOT / "docs" / "hardware.md"
sys.path.insert(0, str(ROOT / "deploy"))
import camera_geometry  # noqa: E402


def block(name: str) -> str:
    text = HARDWARE.read_text()
    match = re.search(rf"<!-- {name}:begin[^\n]*-->\n(.*?)\n<!-- {name}:end -->", text, re.S)
    assert match, f"docs/hardware.md has no {name}:begin/end block"
    return match.group(1)


def test_wiring_table_matches_the_default_pin_map() -> None:
    from table.commands.pins import render, wiring_rows
    from table.config import load_config

    config = load_config(None)
    expected = render(wiring_rows(config, len(config.pins.seat_leds)), "markdown")
    assert block("pins") == expected, (
        "docs/hardware.md is stale: paste `loo-table pins --all-seats --format markdown` between the pins markers"
    )


def test_wiring_table_lists_every_device_once() -> None:
    rows = [line for line in block("pins").splitlines() if re.match(r"\| GPIO\d+ \|", line)]
    devices = [line.split("|")[3].strip() for line in rows]
    assert len(devices) == len(set(devices)) == 8 * 2 + 5
    assert {"buzzer", "dealer button", "status LED red"} <= set(devices)


def test_camera_geometry_runs_in_the_doc_are_current(capsys: pytest.CaptureFixture[str]) -> None:
    lines = block("geometry").strip("`\n").removeprefix("text\n").splitlines()
    runs: list[tuple[list[str], list[str]]] = []
    for line in lines:
        if line.startswith("$ "):
            runs.append((shlex.split(line[2:])[2:], []))
        else:
            runs[-1][1].append(line)
    assert len(runs) >= 3
    for args, shown in runs:
        camera_geometry.main(args)
        assert capsys.readouterr().out.strip().splitlines() == shown, f"stale output for {args}"


def test_camera_height_arithmetic() -> None:
    # 1000 mm deep at V = 41 degrees: 1000 / (2 tan 20.5) = 1337 mm; the width needs only 770 mm.
    h = camera_geometry.height_mm(900, 900, 50, 66.0, 41.0)
    assert round(h) == 1337
    assert round(camera_geometry.height_mm(900, 0, 50, 66.0, 179.0)) == 770


def test_camera_geometry_cli_help() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "deploy" / "camera_geometry.py"), "--help"],
        capture_output=True, text=True, timeout=30,
    )
    assert out.returncode == 0 and "--table" in out.stdout and "--lens" in out.stdout


@pytest.mark.parametrize("resolution", [(1280, 720), (1920, 1080), (2304, 1296), (4608, 2592)])
def test_the_geometry_uses_the_sensor_mode_the_camera_source_asks_for(resolution: tuple[int, int]) -> None:
    from vision.sources.picamera2 import sensor_request
    from vision.sources.sensor_modes import IMX708_MODES

    _, _, label = camera_geometry.view("cm3", resolution, 15.0)
    asked = sensor_request(IMX708_MODES, resolution, 15.0)["output_size"]
    assert label.startswith("{}x{} (the whole sensor)".format(*asked))


def test_the_cropped_mode_sees_two_thirds_at_the_documented_height() -> None:
    """What picamera2 alone would do at 1280x720 (the 1536x864 mode): 1158 x 667 mm at 1337 mm."""
    row = camera_geometry.heights_table([1337], "cm3", (1280, 720), 15.0, (1536, 864)).splitlines()[-1]
    assert "1158 x  667" in row


def test_the_shipped_capture_size_reads_cards_at_the_documented_mount() -> None:
    """The guide's 900 mm table under a Camera Module 3 at the height it works out: the shipped
    [camera] size must give cards at least the reader's 64 x 88 px (1280x720 gave 45 x 63)."""
    from table.config import load_config

    cfg = load_config(None)
    text = camera_geometry.report(900, 900, 50, "cm3", (cfg.camera.width, cfg.camera.height), float(cfg.camera.fps))
    assert "enough for the card reader" in text, text
    shipped = (ROOT / "table" / "default_config.toml").read_text()
    assert f"width = {cfg.camera.width}\nheight = {cfg.camera.height}" in shipped


def test_the_pins_command_gives_the_guides_resistors() -> None:
    """`loo-table pins` once said every LED takes 330 ohm, where the guide gives the status LED's
    green and blue legs 47 ohm (330 ohm there makes amber look red)."""
    from table.commands.pins import RESISTORS, render, wiring_rows
    from table.config import load_config

    text = render(wiring_rows(load_config(None)), "text")
    assert RESISTORS in text and "Every LED needs a series resistor (330 ohm)" not in text
    guide = HARDWARE.read_text()
    assert "330 Ω for red, yellow or green LEDs; 150 Ω for blue or white" in guide
    assert "330 Ω (red), 47 Ω (green), 47 Ω (blue)" in guide
    assert "each seat LED 330 ohm (150 ohm for a blue or white one)" in RESISTORS
    assert "330 ohm on red, 47 ohm on green and on blue" in RESISTORS
    config = (ROOT / "table" / "default_config.toml").read_text()
    assert "330 ohm on red, 47 ohm on green and blue" in config


def test_pins_warns_when_spi_holds_the_maps_pins(tmp_path, monkeypatch, capsys) -> None:
    from table import pin_claims
    from table.cli import main

    monkeypatch.setattr(pin_claims, "DEV", tmp_path)
    assert main(["pins", "--all-seats"]) == 0
    assert "warning" not in capsys.readouterr().err  # SPI off: nothing to say
    (tmp_path / "spidev0.0").touch()
    assert main(["pins", "--all-seats"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: seat 3 button is GPIO8 (header pin 24), SPI0 CE0") and "do_spi 1" in err
