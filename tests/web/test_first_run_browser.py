"""A new table, from the first page to a calibrated camera, on a phone (390x844, the system
Chromium) against `loo-table run` itself as the installer leaves it: no PIN in the config (and
none in any log), a calibration file named that does not exist yet; the synthetic camera and
gpiozero's mock pins (seat 1's button pressed through the mock factory). No terminal.
``LOO_DOCS_SCREENSHOTS=1`` writes the views into ``docs/img/``."""

# ruff: noqa: F811 (the browser fixture imported from test_browser is a test argument of the same name)

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import pytest
from test_browser import CHROMIUM, browser  # noqa: F401 (browser: a fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing (apt-get install chromium)"),
]
playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "table"))
from test_run import HAVE_MODEL, write_config  # noqa: E402

from web.security import PIN_FILE  # noqa: E402

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
SHOTS = ROOT / "docs" / "img" if os.environ.get("LOO_DOCS_SCREENSHOTS") else ROOT / "artifacts"


@pytest.fixture
def table(tmp_path):
    from table.commands.run import Controller

    # as the installer leaves it: no admin PIN, a calibration file named that does not exist yet
    cal = tmp_path / "state" / "calibration.json"
    cfg = write_config(tmp_path, web='host = "127.0.0.1"\nport = 0',
                       camera=f'source = "synthetic"\nwidth = 1280\nheight = 720\ncalibration = "{cal}"')
    ctl = Controller(argparse.Namespace(config=str(cfg), mock_pins=True, host=None, port=None,
                                        max_seconds=None, quiet=True))
    ctl.start()
    yield ctl, f"http://127.0.0.1:{ctl.web.port}", tmp_path / "state"
    ctl.stop()


def press(ctl, gpio: int) -> None:
    """A finger on a button: gpiozero's mock pin held low past the debounce, then let go."""
    pin = ctl.controls.pin_factory.pin(gpio)
    pin.drive_low()
    time.sleep(0.08)
    pin.drive_high()


def press_seat_one(ctl) -> None:
    press(ctl, ctl.cfg.pins.seat_buttons[0])


@pytest.mark.skipif(not HAVE_MODEL, reason="the shipped card model is missing")
def test_a_new_table_is_claimed_calibrated_named_and_started_on_the_phone(table, browser):
    ctl, base, state = table
    assert not (state / PIN_FILE).exists()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_context(**PHONE).new_page()
    page.goto(base + "/admin")
    expect(page.locator("h1")).to_have_text("Set up this table")
    page.locator("#claim-form button").click()
    expect(page.locator("#claim-status")).to_contain_text("Press the button at seat 1 now")
    page.screenshot(path=str(SHOTS / "setup-phone-claim.png"), full_page=True)
    press_seat_one(ctl)
    expect(page.locator("#pin")).to_be_visible(timeout=3000)
    expect(page.locator("#claim-status")).to_contain_text("the table is yours")
    page.fill('#pin-form input[name="pin"]', "4921")
    page.fill('#pin-form input[name="again"]', "4912")
    page.locator("#pin-form button").click()
    expect(page.locator("#claim-status")).to_contain_text("The two PINs differ")
    page.fill('#pin-form input[name="again"]', "4921")
    page.locator("#pin-form button").click()
    page.wait_for_url("**/admin#camera")
    assert (state / PIN_FILE).exists()
    expect(page.locator("#camera-view")).to_be_visible()
    assert ctl.camera.watcher is None  # not calibrated: the camera's picture, no zones, no cards read
    expect(page.locator("#live .alert-camera_setup")).to_contain_text("not calibrated yet")
    page.locator("#calibrate summary").click()
    page.locator("#calibrate-form button", has_text="Find the markers").click()
    expect(page.locator("#calibrate-form .result")).to_contain_text("Calibrated from the four markers", timeout=10000)
    expect(page.locator("#calibration-report")).to_contain_text("Markers found0, 1, 2, 3")
    assert ctl.camera.watcher.calibration.method == "aruco"
    assert (state / "calibration.json").is_file()  # where the config names it: the next start uses it
    expect(page.locator("#live .alert-camera_setup")).to_have_count(0, timeout=3000)
    page.wait_for_timeout(1200)  # the camera view's next picture, drawn with the new zones
    page.locator("#camera").screenshot(path=str(SHOTS / "admin-phone-calibrated.png"))

    # the seats: each button says which seat it is (its light flashes), the names follow that order
    press(ctl, ctl.cfg.pins.seat_buttons[2])
    expect(page.locator("#seat-check")).to_have_text("Seat 3's button works: Cal sits there; its light flashes.",
                                                     timeout=3000)
    assert ctl.controls.seats[2].light == "flash"  # the real SeatControls on the mock pins
    # the house rules, then the night starts at the dealer's button
    page.locator("#opt-club_law").check()
    page.locator("#rules-form button", has_text="Save house rules").click()
    expect(page.locator("#rules-form .result")).to_be_visible()
    assert ctl.referee.state.options.get("club_law") is True
    press(ctl, ctl.cfg.pins.dealer_button)
    expect(page.locator("#live .now-line")).to_contain_text("Deal 1", timeout=3000)
    assert ctl.referee.state.deal_number == 1 and ctl.referee.snapshot()["seat_check"] is None
