"""A new table's first run in the browser: no PIN in a log; the dashboard asks for seat 1's
button, and the phone that asked chooses the admin PIN (Flask's test client, the real claim)."""

from __future__ import annotations

import pytest
from web_fakes import ORIGIN, FakeService, csrf_of

from table.claim import SeatClaim
from table.inputs import ButtonEvent
from web import create_app
from web.security import PIN_FILE


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def rig(tmp_path):
    clock = Clock()
    claim = SeatClaim(clock=clock)
    app = create_app(FakeService(), config={"STATE_DIR": tmp_path, "ADMIN_PIN": None}, claim=claim)
    return app, claim, clock, tmp_path


def _token(client) -> str:
    """The session's CSRF token, from whichever page the table shows now (set-up or Admin)."""
    for page in ("/setup", "/admin"):
        client.get(page)
        with client.session_transaction() as sess:
            if "csrf" in sess:
                return str(sess["csrf"])
    return csrf_of(client)


def _post(client, url, body=None):
    return client.post(url, json=body or {}, headers={"Origin": ORIGIN, "X-CSRF-Token": _token(client)})


def press(claim, seat=0):
    claim.saw(ButtonEvent("seat", "press", seat, 0.0))


def test_the_phone_that_asked_claims_the_table_at_seat_one_and_chooses_the_pin(rig):
    app, claim, clock, state = rig
    assert not (state / PIN_FILE).exists()  # no PIN made up, none in any log
    phone = app.test_client()
    resp = phone.get("/admin")
    assert resp.status_code == 303 and resp.headers["Location"].endswith("/setup")
    assert "Set up this table" in phone.get("/setup").get_data(as_text=True)
    started = _post(phone, "/setup/claim").get_json()
    assert started["status"] == "waiting" and started["seconds_left"] == 60
    other = app.test_client()
    assert _post(other, "/setup/claim").get_json()["status"] == "busy"  # one phone at a time
    press(claim, seat=2)  # another seat's button claims nothing
    assert phone.get("/setup/state").get_json()["status"] == "waiting"
    press(claim)
    assert phone.get("/setup/state").get_json()["status"] == "claimed"
    assert _post(other, "/setup/pin", {"pin": "4921", "again": "4921"}).status_code == 400
    resp = _post(phone, "/setup/pin", {"pin": "4921", "again": "4912"})
    assert resp.status_code == 400 and resp.get_json()["error"] == "The two PINs differ: type the same PIN twice."
    resp = _post(phone, "/setup/pin", {"pin": "000000", "again": "000000"})
    assert resp.status_code == 400
    resp = _post(phone, "/setup/pin", {"pin": "4921", "again": "4921"})
    assert resp.status_code == 200 and resp.get_json()["next"] == "/admin/setup/seats"
    assert (state / PIN_FILE).exists()
    page = phone.get("/admin/setup/seats").get_data(as_text=True)
    assert 'aria-current="step"' in page and "Press each seat's button" in page  # logged in: the wizard goes on
    assert phone.get("/setup").status_code == 303  # claimed for good
    assert _post(other, "/setup/claim").status_code == 409
    late = app.test_client()
    assert "login" in late.get("/admin").get_data(as_text=True).lower()
    assert _post(late, "/admin/login", {"pin": "4921"}).status_code == 200


def test_a_button_never_pressed_says_what_to_check(rig):
    app, claim, clock, state = rig
    phone = app.test_client()
    _post(phone, "/setup/claim")
    clock.t += 61
    status = phone.get("/setup/state").get_json()
    assert status["status"] == "expired"
    assert status["message"].startswith("Nobody pressed seat 1's button within 60 seconds")
    assert "wiring" in status["message"]
    press(claim)  # too late: it claims nothing
    assert phone.get("/setup/state").get_json()["status"] == "expired"
    assert _post(phone, "/setup/claim").get_json()["status"] == "waiting"  # start again


def test_a_table_with_a_pin_or_without_buttons_never_asks(tmp_path):
    with_pin = create_app(FakeService(), config={"STATE_DIR": tmp_path / "a", "ADMIN_PIN": "4921"}, claim=SeatClaim())
    assert with_pin.test_client().get("/admin").status_code == 200  # the login form
    no_buttons = create_app(FakeService(), config={"STATE_DIR": tmp_path / "b", "ADMIN_PIN": None})
    assert (tmp_path / "b" / PIN_FILE).exists()  # as before: a PIN is made up and logged
    assert no_buttons.test_client().get("/setup").status_code == 303


def _wizard_table(tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from camera_rig import CameraTable

    table = CameraTable(tmp_path)
    app = create_app(table.service, config={"STATE_DIR": tmp_path / "web", "ADMIN_PIN": "4921"},
                     pictures=table.pictures)
    client = app.test_client()
    _post(client, "/admin/login", {"pin": "4921"})
    return table, app, client


STEP_SECTIONS = {"seats": ("now", "game"), "camera": ("now", "camera"), "deck": ("now", "deck"),
                 "rules": ("rules",), "start": ("now", "start")}


def test_the_set_up_wizard_goes_step_by_step_and_every_step_opens_again_from_the_admin_page(tmp_path):
    import re

    table, app, client = _wizard_table(tmp_path)
    page = client.get("/admin").get_data(as_text=True)
    assert "Before the first deal" in page and 'id="wizard-open"' in page
    for step in ("pin", "seats", "camera", "deck", "rules", "start"):  # the indicator: each step a link
        assert f'href="/admin/setup/{step}"' in page
    assert re.search(r'class="step done"[^>]*data-step="camera"', page)  # calibrated: ticked
    assert not re.search(r'class="step done"[^>]*data-step="deck"', page)
    order = ["seats", "camera", "deck", "rules", "start"]
    for i, step in enumerate(order):
        page = client.get(f"/admin/setup/{step}").get_data(as_text=True)
        assert re.search(rf'data-step="{step}"><a href="/admin/setup/{step}" aria-current="step"', page)
        shown = set(re.findall(r'<section id="([a-z]+)"(?! hidden)', page))
        assert shown == set(STEP_SECTIONS[step]), (step, shown)
        after = order[i + 1] if i + 1 < len(order) else None
        assert (f'id="wizard-next" href="/admin/setup/{after}"' if after else 'id="wizard-next" href="/admin"') in page
        back = "pin" if i == 0 else order[i - 1]
        assert f'id="wizard-back" href="/admin/setup/{back}"' in page
    # a plain form post from a step comes back to that step
    token = _token(client)
    resp = client.post("/admin/do/update_settings", data={"csrf_token": token, "form": "rules", "back": "rules"},
                       headers={"Origin": ORIGIN})
    assert resp.status_code == 303 and resp.headers["Location"].endswith("/admin/setup/rules")
    assert client.get("/admin/setup/nowhere").status_code == 404
    assert app.test_client().get("/admin/setup/camera").status_code == 303  # the host only
    table.to_play()
    page = client.get("/admin").get_data(as_text=True)
    assert "Before the first deal" not in page and "Set-up, step by step" in page  # still there, folded
    assert re.search(r'class="step done"[^>]*data-step="start"', page)
    table.close()


def test_the_pin_step_done_again_changes_the_pin(tmp_path):
    table, app, client = _wizard_table(tmp_path)
    page = client.get("/admin/setup/pin").get_data(as_text=True)
    assert "Change the admin PIN" in page and 'name="current"' in page
    resp = _post(client, "/setup/pin", {"current": "1111", "pin": "2468", "again": "2468"})
    assert resp.status_code == 400 and resp.get_json()["error"] == "The current PIN is wrong: nothing was changed."
    other = app.test_client()
    _post(other, "/admin/login", {"pin": "4921"})
    assert "Set up this table" in other.get("/admin/setup/rules").get_data(as_text=True)
    resp = _post(client, "/setup/pin", {"current": "4921", "pin": "2468", "again": "2468"})
    assert resp.status_code == 200 and resp.get_json()["message"].startswith("The new PIN is kept")
    assert client.get("/admin/setup/rules").status_code == 200  # this phone stays logged in
    assert other.get("/admin/setup/rules").status_code == 303  # the others log in again
    assert _post(app.test_client(), "/admin/login", {"pin": "2468"}).status_code == 200
    assert _post(app.test_client(), "/setup/pin", {"current": "2468", "pin": "1357", "again": "1357"}).status_code == 409
    table.close()
