"""A real browser against the real controller: headless Debian Chromium (Playwright, no browser
download) at a phone viewport, a real waitress server on 127.0.0.1, and the controller's own
`table.service.TableService` over a referee thread and a SQLite ledger in a temp dir."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing (apt-get install chromium)"),
]
playwright_api = pytest.importorskip("playwright.sync_api")

from table.devices import ButtonEvent  # noqa: E402
from table.ledger import Ledger  # noqa: E402
from table.referee import Referee  # noqa: E402
from table.service import TableService  # noqa: E402
from vision.events import VisionEvent  # noqa: E402
from web import close_server, create_app, make_server  # noqa: E402

# platform-facts: without the networking flags Chromium keeps trying to reach the internet.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-quic"]
PIN = "97531"
PLAYERS = ["Ann", "Bea", "Cal", "Dot"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
# Dealer Dot, trumps hearts; Bea fails to follow spades in trick 1 and shows 5S in trick 3.
DEAL = [("Ann", "KS"), ("Bea", "2C"), ("Cal", "QS"), ("Dot", "3S"),
        ("Ann", "4D"), ("Bea", "6D"), ("Cal", "9D"), ("Dot", "KD"),
        ("Dot", "8C"), ("Ann", "9C"), ("Bea", "5S"), ("Cal", "10C")]


class Controller:
    """The referee thread fed the way the real table feeds it: button gestures and camera events."""

    def __init__(self, path: Path) -> None:
        self.ledger = Ledger(path)
        self.ref = Referee(self.ledger, setup={"players": PLAYERS, "variant": "three_card", "options": {},
                                               "chips": 100, "first_dealer": 3}).start()
        self.t = 0.0
        self.submitted = self.ref.processed

    def _ts(self) -> float:
        self.t += 1.0
        self.submitted += 1
        return self.t

    def dealer(self) -> None:
        self.ref.submit(ButtonEvent("dealer", "press", None, self._ts()))

    def press(self, name: str) -> None:
        self.ref.submit(ButtonEvent("seat", "press", PLAYERS.index(name), self._ts()))

    def card(self, zone: str, card: str) -> None:
        self.ref.submit(VisionEvent("card_placed", zone, self._ts(), card, 0.97))

    def play(self, name: str, card: str) -> None:
        self.card(f"seat:{PLAYERS.index(name)}", card)

    def settle(self) -> None:
        """Wait until the referee thread has processed everything submitted so far."""
        deadline = time.monotonic() + 5
        while self.ref.processed < self.submitted and time.monotonic() < deadline:
            time.sleep(0.01)
        with self.ref.lock:  # the step that counted last has finished too
            assert self.ref.processed >= self.submitted

    def close(self) -> None:
        self.ref.stop()
        self.ledger.close()


@pytest.fixture
def served(tmp_path):
    ctl = Controller(tmp_path / "ledger.db")
    app = create_app(TableService(ctl.ref), config={"STATE_DIR": tmp_path / "web", "ADMIN_PIN": PIN})
    server = make_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield ctl, f"http://127.0.0.1:{server.effective_port}"
    close_server(app, server)
    thread.join(5)
    ctl.close()


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def test_phone_sees_the_table_live_and_the_admin_corrects_a_card(served, browser):
    ctl, base = served
    expect = playwright_api.expect
    ctl.dealer()
    ctl.card("turn_up", "7H")
    for name in PLAYERS:
        ctl.press(name)
    wait_phase(ctl, "play")

    phone = browser.new_context(viewport={"width": 360, "height": 740}, device_scale_factor=2,
                                is_mobile=True, has_touch=True)
    page = phone.new_page()
    page.goto(base + "/")
    for name in PLAYERS:
        expect(page.locator(f'.seat:has-text("{name}") .chips')).to_contain_text("100" if name != "Dot" else "97")
    expect(page.locator("#live-status")).to_have_text("live")
    page.evaluate("window.__noReload = true")

    # a trick played through the controller appears without a reload within a second
    for name, card in DEAL[:4]:
        ctl.play(name, card)
        expect(page.locator(f'#trick-plays [data-card="{card}"]')).to_be_visible(timeout=1000)
    for name, card in DEAL[4:]:
        ctl.play(name, card)
    ctl.settle()
    expect(page.locator(".alert-revoke")).to_contain_text("Bea revoked in trick 1", timeout=1000)
    expect(page.locator('.seat:has-text("Cal") .chips')).to_contain_text("101", timeout=1000)
    assert page.evaluate("window.__noReload") is True
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "table-phone-360.png"), full_page=True)

    # the admin logs in (another phone), corrects Ann's trick-3 card, and the chips follow
    host = browser.new_context(viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True)
    admin = host.new_page()
    admin.goto(base + "/admin")
    admin.fill('input[name="pin"]', PIN)
    admin.click("text=Log in")
    expect(admin.locator("h2", has_text="House rules")).to_be_visible()
    fix = admin.locator('form.fix-form[data-player="Ann"]')
    fix.locator('input[name="card"]').fill("qc")
    ctl.ref.call("pause", {})  # the table changes while the host is typing...
    admin.wait_for_timeout(500)
    assert fix.locator('input[name="card"]').input_value() == "qc"  # ...and the field is left alone
    ctl.ref.call("resume", {})
    fix.locator("button").click()
    expect(admin.locator("#admin-message")).to_contain_text("correct", ignore_case=True)
    expect(admin.locator('[data-chips-of="Ann"]')).to_have_text("102", timeout=1000)
    expect(page.locator('.seat:has-text("Ann") .chips')).to_contain_text("102", timeout=1000)
    expect(page.locator('.seat:has-text("Cal") .chips')).to_contain_text("97", timeout=1000)
    assert page.evaluate("window.__noReload") is True

    # a POST without the CSRF token is refused, even from the logged-in admin's own page
    status = admin.evaluate("""() => fetch('/api/admin/pause', {method: 'POST',
        headers: {'Content-Type': 'application/json'}, body: '{}'}).then(r => r.status)""")
    assert status == 403
    assert ctl.ref.snapshot()["status"]["state"] != "paused"
    ok = admin.evaluate("""() => fetch('/api/admin/pause', {method: 'POST', headers: {'Content-Type':
        'application/json', 'X-CSRF-Token': document.querySelector('meta[name=csrf-token]').content},
        body: '{}'}).then(r => r.status)""")
    assert ok == 200
    admin.screenshot(path=str(ARTIFACTS / "admin-phone-360.png"), full_page=True)
    expect(page.locator(".banner-paused")).to_be_visible(timeout=1000)
    page.screenshot(path=str(ARTIFACTS / "table-phone-360-paused.png"), full_page=True)
    dark = browser.new_context(viewport={"width": 360, "height": 740}, color_scheme="dark").new_page()
    dark.goto(base + "/history")
    expect(dark.locator("svg.chart polyline")).to_have_count(4)
    dark.screenshot(path=str(ARTIFACTS / "history-phone-360-dark.png"), full_page=True)


def wait_phase(ctl: Controller, phase: str) -> None:
    ctl.settle()
    assert ctl.ref.snapshot()["phase"] == phase, ctl.ref.snapshot()


def test_over_the_stream_cap_the_page_polls_and_still_updates(browser, tmp_path):
    from web_fakes import FakeService

    service = FakeService()
    app = create_app(service, config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN, "MAX_STREAMS": 0,
                                      "POLL_INTERVAL_MS": 300})
    server = make_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        page = browser.new_context(viewport={"width": 360, "height": 740}).new_page()
        statuses: list[int] = []
        page.on("response", lambda r: statuses.append(r.status) if "/table/partial" in r.url else None)
        page.goto(f"http://127.0.0.1:{server.effective_port}/")
        expect = playwright_api.expect
        expect(page.locator("#live-status")).to_contain_text("polling")
        page.wait_for_timeout(1000)
        assert 304 in statuses  # unchanged table: the ETag makes each poll an empty 304
        page.evaluate("window.__noReload = true")
        service.play("Cal", "QH")
        expect(page.locator('#trick-plays [data-card="QH"]')).to_be_visible(timeout=2000)
        assert page.evaluate("window.__noReload") is True
    finally:
        close_server(app, server)
        thread.join(5)
