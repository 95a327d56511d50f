"""The host's phone (390x844, the system Chromium) when the table waits on the host: the tab's
title and a buzz within a second of the hold, the sound when it is turned on, the unsure card's
picture and its best guesses as big buttons; and the camera view reloading each second.
``LOO_DOCS_SCREENSHOTS=1`` writes the views into ``docs/img/``."""

# ruff: noqa: F811 (the browser fixture imported from test_browser is a test argument of the same name)

from __future__ import annotations

import os
import threading
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

from camera_rig import CameraTable  # noqa: E402

from web import close_server, create_app, make_server  # noqa: E402

PIN = "97531"
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "img" if os.environ.get("LOO_DOCS_SCREENSHOTS") else ROOT / "artifacts"
# navigator.vibrate and Web Audio recorded instead of felt and heard (a headless browser has neither)
RECORD = """
window.__buzz = []; window.__beeps = 0;
navigator.vibrate = function (p) { window.__buzz.push(p); return true; };
window.AudioContext = function () {
  this.state = 'running'; this.currentTime = 0; this.destination = {};
  this.resume = function () {};
  this.createGain = function () { return { gain: { setValueAtTime: function () {}, exponentialRampToValueAtTime: function () {} },
                                           connect: function (d) { return d; } }; };
  this.createOscillator = function () { return { frequency: {}, connect: function (d) { return d; },
                                                 start: function () { window.__beeps += 1; }, stop: function () {} }; };
};
"""


@pytest.fixture
def served(tmp_path):
    table = CameraTable(tmp_path)
    table.ref.start()
    app = create_app(table.service, config={"STATE_DIR": tmp_path / "web", "ADMIN_PIN": PIN},
                     pictures=table.pictures, camera_setup=table.calibrator)
    server = make_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield table, f"http://127.0.0.1:{server.effective_port}"
    close_server(app, server)
    thread.join(5)
    table.close()


def within(page, script: str, want: object, seconds: float) -> float:
    """Poll ``script`` until it gives ``want``; how long it took (the page's CSP forbids the string
    evaluation `wait_for_function` polls with)."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if page.evaluate(script) == want:
            return time.monotonic() - start
        time.sleep(0.02)
    raise AssertionError(f"{script} did not become {want!r} within {seconds} s: {page.evaluate(script)!r}")


def test_the_hosts_phone_buzzes_and_its_title_changes_within_a_second_of_a_hold(served, browser):
    table, base = served
    table.to_play()
    table.ref.sync()
    ctx = browser.new_context(**PHONE)
    ctx.add_init_script(RECORD)
    page = ctx.new_page()
    page.goto(base + "/admin")
    page.fill('input[name="pin"]', PIN)
    page.click("text=Log in")
    expect(page.locator("#live-status, #admin-status").first).to_be_visible()
    title = page.title()
    assert not title.startswith("\u26a0")
    page.wait_for_timeout(300)  # the live stream is open

    table.lay("seat:0", "8C", unsure=(("8C", 0.52), ("6C", 0.31), ("9C", 0.08)))
    table.ref.sync()  # the hold is published: from here the phone has one second
    took = within(page, "document.title.startsWith('\u26a0')", True, 1.0)
    assert page.evaluate("window.__buzz") == [[300, 120, 300]]
    assert page.evaluate("window.__beeps") == 0  # the sound is off until the host turns it on
    assert took < 1.0

    picture = page.locator("img.hold-picture")
    expect(picture).to_be_visible()
    assert page.evaluate("document.querySelector('img.hold-picture').naturalWidth") > 100
    for button in page.locator("button.guess").all():
        box = button.bounding_box()
        assert box is not None and box["height"] >= 44 and box["width"] >= 44  # a thumb's target
    assert page.locator("button.guess").count() == 3
    (SHOTS).mkdir(parents=True, exist_ok=True)
    page.locator("#now").screenshot(path=str(SHOTS / "admin-phone-unsure-card.png"))

    hold = page.locator("[data-needs-host]")
    hold.locator("button.pick-card").click()  # none of the guesses: the card picker (issue 48's)
    expect(page.locator("#card-picker")).to_be_visible()
    page.locator('#card-picker [data-suit="C"]').click()
    page.locator('#card-picker [data-rank="10"]').click()
    assert hold.locator('input[name="card"]').input_value() == "10C"
    hold.locator("form.correct-form button", has_text="Correct").click()
    within(page, "document.title.startsWith('\u26a0')", False, 2.0)
    assert page.title() == title
    assert table.ref.hold is None and "10C" in str(list(table.ledger.iter_events())[-1].data)

    page.check("#hold-sound")  # the host turns the sound on: a sample beep, then one per hold
    assert page.evaluate("window.__beeps") == 2
    table.lay("seat:1", "QS", unsure=(("QS", 0.5), ("QC", 0.3)))
    table.ref.sync()
    within(page, "document.title.startsWith('\u26a0')", True, 1.0)
    assert page.evaluate("window.__beeps") == 4
    assert len(page.evaluate("window.__buzz")) == 2
    ctx.close()


def test_the_camera_view_reloads_each_second_for_the_host_only(served, browser):
    table, base = served
    ctx = browser.new_context(**PHONE)
    page = ctx.new_page()
    page.goto(base + "/admin")
    page.fill('input[name="pin"]', PIN)
    page.click("text=Log in")
    img = page.locator("#camera-view")
    expect(img).to_be_visible()
    first = img.get_attribute("src")
    page.wait_for_timeout(1100)
    table.frame()  # the camera's next frame
    page.wait_for_timeout(1300)
    assert img.get_attribute("src") != first  # asked again (about once a second)
    assert page.evaluate("document.getElementById('camera-view').naturalWidth") == 960
    assert table.view.rendered >= 2
    page.locator("#camera").screenshot(path=str(SHOTS / "admin-phone-camera-view.png"))
    player = browser.new_context(**PHONE).new_page()
    player.goto(base + "/")
    assert player.locator("#camera-view").count() == 0
    status = player.evaluate("() => fetch('/admin/camera.jpg').then(r => r.status)")
    assert status == 401
    player.goto(base + "/how")  # Help: how to play with the referee, the table's own mat in it
    expect(player.locator(".mat-preview img")).to_be_visible()
    within(player, "document.querySelector('.mat-preview img').complete", True, 5.0)  # visible before it loads
    assert player.evaluate("document.querySelector('.mat-preview img').naturalWidth") > 0
    player.screenshot(path=str(SHOTS / "help-phone.png"), full_page=False)
    ctx.close()


def test_the_host_calibrates_the_camera_on_the_phone(served, browser):
    table, base = served
    page = browser.new_context(**PHONE).new_page()
    page.goto(base + "/admin")
    page.fill('input[name="pin"]', PIN)
    page.click("text=Log in")
    page.locator("#calibrate summary").click()
    page.locator("#calibrate-form button", has_text="Find the markers").click()
    report = page.locator("#calibration-report")
    expect(report).to_be_visible(timeout=5000)
    expect(page.locator("#calibrate-form .result")).to_contain_text("Calibrated from the four markers")
    expect(report).to_contain_text("Markers found0, 1, 2, 3")
    expect(report.locator("td", has_text="Ann")).to_be_visible()
    page.locator("#calibrate").screenshot(path=str(SHOTS / "admin-phone-calibrate.png"))

    page.locator("#tap-corners").click()  # no markers? tap the table's four corners on the picture
    expect(page.locator("#calibrate-form .result")).to_contain_text("top left")
    img = page.locator("#camera-view")
    img.scroll_into_view_if_needed()
    box = img.bounding_box()
    w, h = table.scene.size
    for x, y in table.scene.calibration.to_image([[0, 0], [800, 0], [800, 800], [0, 800]]):
        page.mouse.click(box["x"] + x / w * box["width"], box["y"] + y / h * box["height"])
    expect(page.locator("#calibrate-form .result")).to_contain_text("Calibrated from the four corners you tapped")
    assert table.watcher.calibration.method == "corners"
    expect(page.locator(".taps .tap")).to_have_count(4)


def test_a_camera_that_gives_no_picture_is_a_sentence_on_the_page(served, browser):
    table, base = served
    table.view._frame = None  # the camera has not given a picture (unplugged at start)
    table.view._made = None
    page = browser.new_context(**PHONE).new_page()
    page.goto(base + "/admin")
    page.fill('input[name="pin"]', PIN)
    page.click("text=Log in")
    expect(page.locator("#camera-note")).to_contain_text("No picture from the camera just now", timeout=3000)
    page.locator("#calibrate summary").click()
    page.locator("#calibrate-form button", has_text="Find the markers").click()
    expect(page.locator("#calibrate-form .result")).to_have_text(
        "There is no picture from the camera yet: check that it is plugged in, then try again.")
    table.frame()  # it comes back: the picture returns by itself
    expect(page.locator("#camera-note")).to_contain_text("Green: a card read", timeout=5000)
