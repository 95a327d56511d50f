"""A new table, from the first page to a night's first deal settled, on a phone (390x844, the
system Chromium) against `loo-table run` itself as the installer leaves it: no PIN in the config
(and none in any log), a calibration file named that does not exist yet, gpiozero's mock pins
(every button pressed through the mock factory). The set-up wizard step by step: claim at seat
1's button, the PIN, the seats, the camera and its calibration, the deck shown, the house rules,
the start; then a whole deal is played and the page shows it settled. On the way, a button never
pressed, a marker missing and a camera that fails each give a plain sentence. No terminal.

The camera is the synthetic table (`vision.synthetic.SyntheticTable`, the demo's `SceneCamera`,
paced at 20 frames a second) on which the test lays the cards, in place of the synthetic
source's scripted night: `loo-table run` opens it through `vision.sources.open_source` as any
camera, and the shipped card model reads every card. ``LOO_DOCS_SCREENSHOTS=1`` writes the steps
into ``docs/img/``."""

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

from table.demo_table import SceneCamera  # noqa: E402
from vision.sources import SourceUnavailable  # noqa: E402
from web.security import PIN_FILE  # noqa: E402

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
SHOTS = ROOT / "docs" / "img" if os.environ.get("LOO_DOCS_SCREENSHOTS") else ROOT / "artifacts"
HEARTS = ["2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH", "QH", "KH", "AH"]
# Ann deals (the config's first dealer, her ante the pool of 3), trumps hearts; Bea leads. Bea, Ann
# and Dot take a trick each (a chip each), Cal (who played) takes none and is looed: 3 to the pool.
DEAL = [("Bea", "KS"), ("Cal", "2S"), ("Dot", "QS"), ("Ann", "3S"),
        ("Bea", "4D"), ("Cal", "6D"), ("Dot", "9D"), ("Ann", "KD"),
        ("Ann", "8C"), ("Bea", "9C"), ("Cal", "5C"), ("Dot", "10C")]
PLAYERS = ["Ann", "Bea", "Cal", "Dot"]


class TableCamera(SceneCamera):
    """The synthetic table as a camera: paced like one; ``fail`` unplugs it."""

    fail = False

    def _grab(self):
        if self.fail:
            raise SourceUnavailable("no frame from /dev/video0 (the cable is out)")
        image, ts, lores = super()._grab()
        self._pace(ts)
        return image, ts, lores

    def frames(self, count: int = 4, timeout: float = 5.0) -> None:
        """Wait until the camera has shown ``count`` more frames (the cloth as it lies now)."""
        until, deadline = self.n + count, time.monotonic() + timeout
        while self.n < until and time.monotonic() < deadline:
            time.sleep(0.01)


@pytest.fixture
def table(tmp_path, monkeypatch):
    import vision.sources
    from table.commands.run import Controller
    from vision.synthetic import SyntheticTable

    cameras: list[TableCamera] = []
    opened = vision.sources.open_source

    def open_source(config, **inject):
        if config.get("source") != "synthetic":
            return opened(config, **inject)
        cameras.append(TableCamera(SyntheticTable(seed=7, seats=4, size=(1280, 720), noise=False), fps=20.0))
        cameras[-1].backoff = inject.get("backoff", cameras[-1].backoff)  # run's: no reopen schedule inside
        return cameras[-1]

    monkeypatch.setattr(vision.sources, "open_source", open_source)
    # as the installer leaves it: no admin PIN, a calibration file named that does not exist yet
    cal = tmp_path / "state" / "calibration.json"
    cfg = write_config(tmp_path, web='host = "127.0.0.1"\nport = 0',
                       camera=f'source = "synthetic"\nwidth = 1280\nheight = 720\ncalibration = "{cal}"')
    ctl = Controller(argparse.Namespace(config=str(cfg), mock_pins=True, host=None, port=None,
                                        max_seconds=None, quiet=True))
    ctl.start()
    yield ctl, cameras[0], f"http://127.0.0.1:{ctl.web.port}", tmp_path / "state"
    ctl.stop()


def press(ctl, gpio: int) -> None:
    """A finger on a button: gpiozero's mock pin held low past the debounce, then let go."""
    pin = ctl.controls.pin_factory.pin(gpio)
    pin.drive_low()
    time.sleep(0.08)
    pin.drive_high()


def wait_for(what: str, predicate, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"waited {timeout} s for {what}")


def lay(ctl, camera: TableCamera, zone: str, card: str) -> None:
    from vision.synthetic import PlacedCard

    x, y = camera.table.layout.zone(zone).center
    with camera.lock:
        camera.cards[zone] = PlacedCard(card, x, y, 3.0)


def pick_up(camera: TableCamera, *zones: str) -> None:
    with camera.lock:
        for zone in zones or list(camera.cards):
            camera.cards.pop(zone, None)
    camera.frames(4)  # the camera sees the cloth empty before the next card


def played(ctl) -> int:
    deal = ctl.referee.state.deal
    return 0 if deal is None else sum(len(t) for t in deal.tricks) + len(deal.current_trick)


def shot(page, name: str, *, full: bool = True) -> None:
    """The page from its top (the whole page, or what the phone's screen shows)."""
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(SHOTS / name), full_page=full)


@pytest.mark.skipif(not HAVE_MODEL, reason="the shipped card model is missing")
def test_the_wizard_sets_up_a_new_table_on_the_phone_and_its_first_deal_is_played(table, browser):
    ctl, camera, base, state = table
    assert not (state / PIN_FILE).exists()
    SHOTS.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    page = browser.new_context(**PHONE).new_page()
    page.goto(base + "/admin")

    # 1. claim: the button never pressed says what to check; pressed, the table is this phone's
    expect(page.locator("h1")).to_have_text("Set up this table")
    expect(page.locator('.wizard-steps [aria-current="step"]')).to_contain_text("Claim")
    page.locator("#claim-form button").click()
    expect(page.locator("#claim-status")).to_contain_text("Press the button at seat 1 now")
    shot(page, "setup-phone-claim.png")
    clock = ctl.claim.clock
    ctl.claim.clock = lambda: clock() + 61  # a minute goes by and nobody presses
    expect(page.locator("#claim-status")).to_contain_text("Nobody pressed seat 1's button within 60 seconds")
    shot(page, "wizard-claim-not-pressed.png")
    ctl.claim.clock = clock
    page.locator("#claim-form button").click()
    expect(page.locator("#claim-status")).to_contain_text("Press the button at seat 1 now")
    press(ctl, ctl.cfg.pins.seat_buttons[0])

    # 2. the PIN, typed twice
    expect(page.locator("#pin")).to_be_visible(timeout=3000)
    expect(page.locator("#claim-status")).to_contain_text("the table is yours")
    expect(page.locator('.wizard-steps [aria-current="step"]')).to_contain_text("PIN")
    page.fill('#pin-form input[name="pin"]', "4921")
    page.fill('#pin-form input[name="again"]', "4912")
    page.locator("#pin-form button").click()
    expect(page.locator("#claim-status")).to_contain_text("The two PINs differ")
    shot(page, "wizard-pin.png")
    page.fill('#pin-form input[name="again"]', "4921")
    page.locator("#pin-form button").click()

    # 3. the seats: each button says which seat it is (its light flashes), the names follow that order
    page.wait_for_url("**/admin/setup/seats")
    assert (state / PIN_FILE).exists()
    expect(page.locator('.wizard-steps [aria-current="step"]')).to_contain_text("Seats")
    expect(page.locator("#camera")).to_be_hidden()  # one step at a time
    press(ctl, ctl.cfg.pins.seat_buttons[2])
    expect(page.locator("#seat-check")).to_have_text("Seat 3's button works: Cal sits there; its light flashes.",
                                                     timeout=3000)
    assert ctl.controls.seats[2].light == "flash"  # the real SeatControls on the mock pins
    shot(page, "wizard-seats.png")
    page.locator("#wizard-next").click()

    # 4. the camera: its picture, a marker missing said in words, then calibrated from the markers
    page.wait_for_url("**/admin/setup/camera")
    expect(page.locator("#camera-view")).to_be_visible()
    assert ctl.camera.watcher is None  # not calibrated: the camera's picture, no zones, no cards read
    expect(page.locator("#live .alert-camera_setup")).to_contain_text("not calibrated yet")
    from vision.synthetic import PlacedCard

    with camera.lock:  # a card left on marker 0
        camera.cards["cup"] = PlacedCard("back", 0.0, 0.0, 0.0)
    camera.frames(2)
    page.locator("#calibrate summary").click()
    page.locator("#calibrate-form button", has_text="Find the markers").click()
    result = page.locator("#calibrate-form .result")
    expect(result).to_contain_text("ArUco markers [0] not found (found [1, 2, 3])", timeout=10000)
    assert "Traceback" not in result.inner_text()
    shot(page, "wizard-camera-marker-missing.png")
    pick_up(camera, "cup")
    page.locator("#calibrate-form button", has_text="Find the markers").click()
    expect(result).to_contain_text("Calibrated from the four markers", timeout=10000)
    expect(page.locator("#calibration-report")).to_contain_text("Markers found0, 1, 2, 3")
    assert ctl.camera.watcher.calibration.method == "aruco"
    assert (state / "calibration.json").is_file()  # where the config names it: the next start uses it
    expect(page.locator("#live .alert-camera_setup")).to_have_count(0, timeout=3000)
    picture = page.locator("#camera-view")
    for _ in range(2):  # the camera view's next picture, drawn with the new zones
        expect(picture).not_to_have_attribute("src", picture.get_attribute("src") or "", timeout=5000)
    shot(page, "wizard-camera.png")
    page.locator("#wizard-next").click()

    # 5. the deck: the host lays the hearts out one by one in the turn-up place
    page.wait_for_url("**/admin/setup/deck")
    page.select_option("#show-deck-form select[name=suit]", "H")
    page.locator("#show-deck-form button").click()
    expect(page.locator("#live .deck-tour")).to_contain_text("Showing the deck in the turn-up place", timeout=3000)
    for card in HEARTS:
        lay(ctl, camera, "turn_up", card)
        wait_for(f"{card} enrolled", lambda card=card: card in ctl.referee.tour.shown)
        pick_up(camera, "turn_up")
    expect(page.locator("#live .deck-tour")).to_contain_text("The whole deck is enrolled", timeout=3000)
    shot(page, "wizard-deck.png")
    page.locator("#live .deck-tour button", has_text="Done showing the deck").click()
    page.wait_for_url("**/admin/setup/deck")  # the live part's plain form comes back to the step
    expect(page.locator(".banner-ok")).to_contain_text("Deck shown: 13 cards enrolled, the whole deck.")
    expect(page.locator("#live .deck-tour")).to_have_count(0)
    assert ctl.referee.snapshot()["deck_learning"]["cards"] == 13
    expect(page.locator('.wizard-steps .done[data-step="deck"]')).to_have_count(1)
    page.locator("#wizard-next").click()

    # 6. the house rules
    page.wait_for_url("**/admin/setup/rules")
    page.locator("#opt-club_law").check()
    page.locator("#rules-form button", has_text="Save house rules").click()
    expect(page.locator("#rules-form .result")).to_be_visible()
    assert ctl.referee.state.options.get("club_law") is True
    shot(page, "wizard-rules.png", full=False)
    page.locator("#wizard-next").click()

    # 7. the start: the dealer's button, then a whole deal through the camera and the seat buttons
    page.wait_for_url("**/admin/setup/start")
    expect(page.locator("#start")).to_contain_text("Ann deals first")
    shot(page, "wizard-start.png")
    press(ctl, ctl.cfg.pins.dealer_button)
    expect(page.locator("#live .now-line")).to_contain_text("Deal 1", timeout=3000)
    assert ctl.referee.snapshot()["seat_check"] is None
    lay(ctl, camera, "turn_up", "7H")
    expect(page.locator("#live .now-line")).to_contain_text("Trumps", timeout=5000)
    assert ctl.referee.snapshot()["turn_up"] == "7H"
    for name in ["Bea", "Cal", "Dot", "Ann"]:  # each plays: a press of the seat's button
        press(ctl, ctl.cfg.pins.seat_buttons[PLAYERS.index(name)])
        wait_for(f"{name}'s declaration", lambda name=name: next(
            s for s in ctl.referee.snapshot()["seats"] if s["name"] == name).get("declaration") == "play", 5)
    wait_for("the play", lambda: ctl.referee.snapshot()["phase"] == "play", 5)
    for i, (name, card) in enumerate(DEAL):
        before = played(ctl)
        lay(ctl, camera, f"seat:{PLAYERS.index(name)}", card)
        wait_for(f"{name}'s {card}", lambda before=before: played(ctl) > before)
        assert ctl.referee.hold is None, ctl.referee.hold
        if i % 4 == 3:  # the trick is swept off the cloth
            pick_up(camera, *(f"seat:{n}" for n in range(4)))
    deal = ctl.referee.state.deal
    assert deal.is_over and [(p, str(c)) for t in deal.tricks for p, c in t] == DEAL  # each card read right
    # settled: the pool shared by the three tricks' winners, the looed player pays the next pool
    chips = {"Ann": 98, "Bea": 101, "Cal": 97, "Dot": 101}
    for name, n in chips.items():
        expect(page.locator(f'#live [data-chips-of="{name}"]')).to_have_text(str(n), timeout=3000)
    expect(page.locator("#live .now-line")).to_contain_text("Pool 3")
    assert sum(s["chips"] for s in ctl.referee.snapshot()["seats"]) + ctl.referee.snapshot()["pool"] == 400
    walk = time.monotonic() - started
    shot(page, "wizard-first-deal-settled.png")

    # a camera that fails: the page says so in a sentence, the game waits
    camera.fail = True
    expect(page.locator("#live")).to_contain_text("camera lost", timeout=5000)
    assert "Traceback" not in page.locator("#live").inner_text()
    shot(page, "wizard-camera-failed.png")
    camera.fail = False
    print(f"the wizard and the first deal on the phone: {walk:.1f} s")
