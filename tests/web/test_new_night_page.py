"""A new night from the Admin page: the form (without JavaScript) and the JSON command, against
the real referee on a SQLite ledger."""

from __future__ import annotations

import pytest
from camera_rig import CameraTable
from web_fakes import ORIGIN, PIN, csrf_of

from web import create_app


@pytest.fixture
def rig(tmp_path):
    table = CameraTable(tmp_path)
    app = create_app(table.service, config={"STATE_DIR": tmp_path / "web", "ADMIN_PIN": PIN},
                     pictures=table.pictures)
    client = app.test_client()
    token = csrf_of(client)
    resp = client.post("/admin/login", json={"pin": PIN}, headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    yield table, client, resp.get_json()["csrf_token"]
    table.close()


def test_the_form_starts_the_next_night_with_the_players_and_rules_chosen(rig):
    table, client, token = rig
    table.ref.call("update_settings", {"variant": "three_card", "options": {"club_law": True}})
    page = client.get("/admin").get_data(as_text=True)
    assert 'id="new-night-form"' in page and "Ann\nBea\nCal\nDot</textarea>" in page
    assert "The night is not over yet: end the game first." in page
    table.ref.call("end_game", {})
    resp = client.post("/admin/do/new_night", headers={"Origin": ORIGIN}, data={
        "csrf_token": token, "players": "Ann\nBea\nCal\nEve\n", "variant": "three_card",
        "starting_chips": "60", "chip_value": "0.50", "keep_rules": "1"})
    assert resp.status_code == 303
    page = client.get("/admin").get_data(as_text=True)
    assert "A new night: night 2 for Ann, Bea, Cal, Eve, 60 chips each" in page
    st = table.ref.state
    assert st.players == ["Ann", "Bea", "Cal", "Eve"] and st.starting_chips == 60 and st.chip_value == "0.50"
    assert st.options.get("club_law") is True  # tonight's house rules were kept
    assert len(st.nights) == 1


def test_refused_while_the_night_is_on_with_the_reason_and_nothing_changed(rig):
    table, client, token = rig
    table.to_play()
    resp = client.post("/api/admin/new_night", json={"players": ["Eve", "Fay", "Gus"], "variant": "irish"},
                       headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert resp.status_code == 400 and "end the game first" in resp.get_json()["error"]
    resp = client.post("/api/admin/new_night", json={"players": ["Eve", "Fay"], "variant": "loo"},
                       headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert resp.status_code == 400 and "variant must be one of" in resp.get_json()["error"]
    assert table.ref.state.deal_number == 1 and table.ref.state.nights == []


def test_the_admin_page_names_the_seat_whose_button_was_pressed(rig):
    table, client, token = rig
    table.press("Cal")
    page = client.get("/admin/partial").get_data(as_text=True)
    assert "Seat 3's button works: Cal sits there; its light flashes." in page
    assert "press each seat's button" in client.get("/admin").get_data(as_text=True)
