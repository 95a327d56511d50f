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

# without the networking flags Chromium keeps trying to reach the internet.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-quic"]
PIN = "97531"
# counts the live fragment's swaps (live.js fires loo:updated), so an element screenshot is not
# taken while the stream's first fragment replaces the server-rendered one
COUNT_SWAPS = "document.addEventListener('loo:updated', () => { window.__swaps = (window.__swaps || 0) + 1; })"
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
    # the host taps the empty field and the table changes before the first key: the new fragment
    # comes in and the focus (and a phone's keyboard) stays on Ann's field
    fix.locator('input[name="card"]').focus()
    before = admin.locator("#live").get_attribute("data-version")
    ctl.ref.call("pause", {})
    expect(admin.locator("#live")).not_to_have_attribute("data-version", before or "", timeout=2000)
    assert admin.evaluate("document.activeElement.closest('form.fix-form').dataset.player") == "Ann"
    ctl.ref.call("resume", {})
    expect(admin.locator("#live [data-command=pause]")).to_be_visible(timeout=2000)
    fix.locator('input[name="card"]').fill("qc")
    ctl.ref.call("pause", {})  # the table changes while the host is typing...
    admin.wait_for_timeout(500)
    assert fix.locator('input[name="card"]').input_value() == "qc"  # ...and the field is left alone
    ctl.ref.call("resume", {})
    fix.locator("button:not(.pick-card)").click()
    expect(admin.locator("#now-result")).to_contain_text("Corrected Ann's")
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


def await_phase(ctl: Controller, phase: str, timeout: float = 5.0) -> None:
    """Wait for a phase by polling (dashboard commands reach the referee outside `ctl.submitted`)."""
    deadline = time.monotonic() + timeout
    while ctl.ref.snapshot()["phase"] != phase and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ctl.ref.snapshot()["phase"] == phase, ctl.ref.snapshot()


def swapped(page, timeout: float = 5.0) -> None:
    """Wait for the live fragment's first swap (polled from here: the page's CSP forbids the
    string evaluation `wait_for_function` polls with)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate("window.__swaps || 0") and time.monotonic() < deadline:
        page.wait_for_timeout(20)
    assert page.evaluate("window.__swaps || 0") >= 1


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
        for context in browser.contexts:  # their pages' streams would reconnect while the server stops
            context.close()
        close_server(app, server)
        thread.join(5)


def test_admin_calls_a_misdeal_and_enters_cards_the_camera_missed(served, browser):
    """Real controller: Misdeal before any card (with its confirm dialog), then a new deal whose
    turn-up and first card the host enters by hand; both phones follow without a reload."""
    ctl, base = served
    expect = playwright_api.expect
    ctl.dealer()
    wait_phase(ctl, "turn_up")
    viewport = {"width": 360, "height": 740}
    page = browser.new_context(viewport=viewport, is_mobile=True, has_touch=True).new_page()
    page.goto(base + "/")
    admin = browser.new_context(viewport=viewport, is_mobile=True, has_touch=True).new_page()
    admin.goto(base + "/admin")
    admin.fill('input[name="pin"]', PIN)
    admin.click("text=Log in")
    page.evaluate("window.__noReload = true")
    admin.evaluate("window.__noReload = true")

    misdeal = admin.locator('button[data-command="misdeal"]')
    expect(misdeal).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    admin.screenshot(path=str(ARTIFACTS / "admin-phone-360-misdeal.png"), full_page=True)
    dialogs: list[str] = []
    admin.on("dialog", lambda d: (dialogs.append(d.message), d.accept()))
    misdeal.click()
    expect(admin.locator("#now-result")).to_contain_text("misdeal", ignore_case=True)
    assert dialogs and dialogs[0].startswith("Call a misdeal?")
    await_phase(ctl, "over")
    expect(misdeal).to_have_count(0, timeout=1000)
    expect(page.locator(".summary")).to_contain_text("over", timeout=1000)

    # the next deal: the camera missed the turn-up; the host enters it
    ctl.dealer()
    await_phase(ctl, "turn_up")
    missed = admin.locator("#missed-form")
    missed.locator('select[name="zone"]').select_option("turn_up")
    missed.locator('input[name="card"]').fill("7h")
    missed.locator("button:not(.pick-card)").click()
    expect(page.locator('.trump [aria-label="7 of hearts"]')).to_be_visible(timeout=1000)
    for name in PLAYERS:
        ctl.press(name)
    await_phase(ctl, "play")
    leader = next(s for s in ctl.ref.snapshot()["seats"] if s["to_act"])
    expect(misdeal).to_be_visible(timeout=1000)  # no card played yet
    missed.locator('select[name="zone"]').select_option(f"seat:{leader['index']}")
    missed.locator('input[name="card"]').fill("KS")
    missed.locator("button:not(.pick-card)").click()
    expect(page.locator('#trick-plays [data-card="KS"]')).to_be_visible(timeout=1000)
    expect(misdeal).to_have_count(0, timeout=1000)  # a card is down: no misdeal any more
    assert ctl.ref.snapshot()["trick"]["plays"] == [{"player": leader["name"], "card": "KS"}]
    # a card already on the table cannot be entered twice: a clear refusal, nothing changes
    missed.locator('input[name="card"]').fill("KS")
    missed.locator("button:not(.pick-card)").click()
    expect(missed.locator(".result.result-fault")).to_contain_text("already on the table")
    assert page.evaluate("window.__noReload") is True and admin.evaluate("window.__noReload") is True


def test_flush_pam_and_civil_controls_at_phone_width(browser, tmp_path):
    """The five-card controls in a real browser over the in-memory table: the claim form posts five
    canonical cards, Show Pam and "Pam be civil" appear live, the Table page lists the claims."""
    from web_fakes import FakeService

    service = FakeService()
    service.set_options(pam=True, pam_be_civil="on_call")
    none = {"misdeal": False, "call_civil": False, "replay": False, "claim_flush": [], "show_pam": []}
    service.set_state(variant="five_card", phase="flush", trick=None,
                      commands={**none, "claim_flush": ["Ann", "Bea"]})  # as the engine says
    app = create_app(service, config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN})
    server = make_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    expect = playwright_api.expect
    base = f"http://127.0.0.1:{server.effective_port}"
    try:
        viewport = {"width": 360, "height": 740}
        admin = browser.new_context(viewport=viewport, is_mobile=True, has_touch=True,
                                    device_scale_factor=2).new_page()
        admin.add_init_script(COUNT_SWAPS)
        admin.goto(base + "/admin")
        admin.fill('input[name="pin"]', PIN)
        admin.click("text=Log in")
        swapped(admin)  # the stream's first fragment is in place
        form = admin.locator("#flush-form")
        expect(form).to_be_visible()
        # every card field fits the phone: five side by side, no sideways scrolling
        boxes = admin.evaluate("""() => Array.from(document.querySelectorAll('#flush-form input[name=card]'))
            .map(e => { const r = e.getBoundingClientRect(); return [r.left, r.right, r.top, r.height]; })""")
        assert len(boxes) == 5 and all(0 <= b[0] and b[1] <= 360 and b[3] >= 44 for b in boxes), boxes
        assert len({round(b[2]) for b in boxes}) == 1  # one row
        assert admin.evaluate("document.documentElement.scrollWidth") <= 360
        ARTIFACTS.mkdir(exist_ok=True)
        form.screenshot(path=str(ARTIFACTS / "admin-phone-360-flush.png"))
        form.locator('select[name="player"]').select_option("Bea")
        for i, card in enumerate(["2h", "5H", "9h", "jh", "th"]):
            form.locator('input[name="card"]').nth(i).fill(card)
        form.locator("button:not(.pick-card)").click()
        expect(admin.locator("#now-result")).to_contain_text("claim_flush done")
        assert service.commands[-1] == ("claim_flush", {"player": "Bea", "cards": ["2H", "5H", "9H", "JH", "10H"]})
        pam = admin.locator("#pam-form")
        expect(pam).to_be_visible(timeout=3000)  # the fake settled the flush: phase over
        pam.locator("button").click()
        expect(admin.locator("#now-result")).to_contain_text("show_pam done")
        assert service.commands[-1] == ("show_pam", {"player": "Ann"})

        table = browser.new_context(viewport=viewport, is_mobile=True, has_touch=True,
                                    device_scale_factor=2).new_page()
        table.add_init_script(COUNT_SWAPS)
        table.goto(base + "/")
        swapped(table)
        expect(table.locator(".flush-claim.valid")).to_contain_text("Bea")
        expect(table.locator(".pam-shown")).to_contain_text("Ann")
        assert table.evaluate("document.documentElement.scrollWidth") <= 360
        table.locator(".flushes").screenshot(path=str(ARTIFACTS / "table-phone-360-flush.png"))

        # the next deal: the ace of trumps is led and the house calls "Pam be civil"
        service.set_state(phase="play", trick={"number": 1, "plays": [{"player": "Cal", "card": "AH"}]},
                          commands={**none, "call_civil": True})
        civil = admin.locator('button[data-command="call_civil"]')
        expect(civil).to_be_visible(timeout=3000)
        civil.click()
        expect(admin.locator("#now-result")).to_contain_text("call_civil done")
        assert service.commands[-1] == ("call_civil", {})
        admin.screenshot(path=str(ARTIFACTS / "admin-phone-360-civil.png"), full_page=True)
    finally:
        for context in browser.contexts:  # their pages' streams would reconnect while the server stops
            context.close()
        close_server(app, server)
        thread.join(5)
