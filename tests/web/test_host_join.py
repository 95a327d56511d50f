"""The host's night on a phone (390x844), two more flows: a newcomer joins between deals (and,
at a seat without a button, declares from the Admin page), and the night's result is shared as a
picture. Same harness as `test_host_phone.py` (the real controller, seeded bots, waitress, the
system Chromium); ``LOO_DOCS_SCREENSHOTS=1`` writes the views into ``docs/img/``."""

# ruff: noqa: F811 (the browser fixture imported from test_browser is a test argument of the same name)

from __future__ import annotations

import json
import os

import pytest
from test_browser import CHROMIUM, browser  # noqa: F401 (browser: a fixture)
from test_host_phone import PHONE, PLAYERS, SHOTS, login, night, shot  # noqa: F401 (night: a fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing (apt-get install chromium)"),
]
playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect


def test_a_newcomer_joins_between_deals_and_declares_from_the_page(night, browser):
    n, base = night
    n.ref.buttons = 4  # the header wires four seats: the fifth has no button
    n.act(3)  # deal 1 under way
    admin = login(browser, base)
    form = admin.locator("#join-form")
    expect(admin.locator("#join")).to_contain_text("the next free seat, between Dot and Ann")
    form.locator('input[name="player"]').fill("Eve")
    form.locator('input[name="chips"]').fill("40")
    form.locator("button").click()
    expect(form.locator(".result-ok")).to_contain_text("Eve joins with 40 chips from the next deal (deal 2)")
    assert n.ref.state.players == PLAYERS  # asked during deal 1: it waits for deal 2
    n.service.command("cancel_change", {"id": next(iter(n.ref.state.queued))})  # called off after all

    n.until(lambda st: st.deal is not None and st.deal.is_over)
    form.locator('input[name="player"]').fill("Eve")
    form.locator('input[name="chips"]').fill("40")
    form.locator("button").click()
    said = admin.locator("#join-form .result-ok")  # the page reloads with the new seat in every list
    expect(said).to_contain_text("Eve joins with 40 chips in seat 5, between Dot and Ann, and is dealt in "
                                 "from the next deal; seat 5 has no button, so Eve declares on this page")
    expect(admin.locator('[data-chips-of="Eve"]')).to_have_text("40")
    expect(admin.locator('#adjust-form select[name="player"] option', has_text="Eve")).to_have_count(1)
    assert n.service.chips_in()["Eve"] == 40 and n.ref.state.players == [*PLAYERS, "Eve"]
    admin.evaluate("document.getElementById('join-h').scrollIntoView()")
    shot(admin, "admin-phone-join")

    n.until(lambda st: st.deal is not None and st.deal.phase == "declare" and st.deal.to_act == "Eve")
    box = admin.locator(".seat-buttons")
    expect(box).to_contain_text("Eve has no seat button: it is their turn to declare.", timeout=3000)
    admin.evaluate("document.getElementById('now-h').scrollIntoView()")
    shot(admin, "admin-phone-seat-button")
    box.locator("button", has_text="Play").click()
    expect(admin.locator("#now-result.result-ok")).to_contain_text("Recorded Eve's declaration (play).")
    assert n.ref.state.deal.declarations["Eve"] == "play"
    expect(admin.locator(".seat-buttons")).to_have_count(0, timeout=3000)


def test_the_nights_result_as_a_picture_to_share(night, browser):
    import cv2
    import numpy as np

    n, base = night
    n.until(lambda st: st.deal is not None and st.deal.is_over)
    n.ref.call("end_game", {})
    page = browser.new_context(**PHONE, accept_downloads=True).new_page()
    page.goto(base + "/end")
    expect(page.locator("#share-picture")).to_be_visible()
    with page.expect_download() as info:  # headless Chromium shares no files: the picture downloads
        page.locator("#share-picture").click()
    download = info.value
    assert download.suggested_filename == "loo-night.png"
    expect(page.locator("#share-result")).to_contain_text("Saved the picture (loo-night.png)")
    png = np.frombuffer(open(download.path(), "rb").read(), np.uint8)
    image = cv2.imdecode(png, cv2.IMREAD_COLOR)
    assert image is not None and image.shape[1] == 720
    lines = json.loads(page.locator("#share-canvas").get_attribute("data-lines"))
    api = page.request.get(base + "/api/settlement").json()
    want = ["Loo night: final results"]
    want += [f"{r['player']}: {r['chips']:+d} chips ({r['money']})" for r in api["net"]]
    if api["transfers"]:
        want.append("Who pays whom:")
        want += [f"{t['from']} pays {t['to']} {t['chips']} chips = {t['money']}" for t in api["transfers"]]
    assert lines == want  # the picture says the result the page shows
    rows = 1 + len(api["net"]) + (len(api["transfers"]) + 1 if api["transfers"] else 0)
    assert image.shape[0] >= 48 * rows
    ink = (image.min(axis=2) < 100).sum(axis=1)  # dark pixels per line of the picture: text
    inked_bands = sum(1 for i in range(0, image.shape[0] - 24, 48) if ink[i:i + 48].sum() > 200)
    assert inked_bands >= rows, (inked_bands, rows)  # every row of the result carries text
    red_or_green = ((image[:, :, 2] > 150) & (image[:, :, 1] < 80)) | ((image[:, :, 1] > 90) & (image[:, :, 2] < 40))
    assert red_or_green.sum() > 100  # wins and losses in colour
    if os.environ.get("LOO_DOCS_SCREENSHOTS"):
        SHOTS.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(SHOTS / "end-share-picture.png"), image)
