"""Admin commands: each valid one reaches the service clean; every bad one is a JSON 4xx that
changes nothing; the admin page offers every house rule with its default."""

# ruff: noqa: F811 (the fixtures imported from web_fakes are test arguments of the same name)

from __future__ import annotations

from dataclasses import fields

import pytest
from web_fakes import ORIGIN, admin, app, client, service  # noqa: F401 (pytest fixtures, used by name)

from engine.options import Options


def post(admin, name, body):
    client, token = admin
    return client.post(f"/api/admin/{name}", json=body, headers={"Origin": ORIGIN, "X-CSRF-Token": token})


@pytest.mark.parametrize("name, body, expected", [
    ("confirm_card", {"alert_id": 5}, {"alert_id": 5}),
    ("correct_card", {"alert_id": 5, "card": "10c"}, {"alert_id": 5, "card": "10C"}),
    ("correct_card", {"trick": 2, "player": " Bea ", "card": "th"}, {"trick": 2, "player": "Bea", "card": "10H"}),
    ("undo", {}, {}),
    ("adjust_chips", {"player": "Ann", "delta": -5, "reason": " bought out "},
     {"player": "Ann", "delta": -5, "reason": "bought out"}),
    ("pause", {}, {}),
    ("resume", {}, {}),
    ("end_game", {}, {}),
    ("update_settings", {"chip_value": "0.25", "starting_chips": 40}, {"chip_value": "0.25", "starting_chips": 40}),
    ("set_zones", {"zones": {"turn_up": {"x": 10, "y": 20.5, "width": 60, "height": 90}}},
     {"zones": {"turn_up": {"x": 10.0, "y": 20.5, "width": 60.0, "height": 90.0}}}),
    ("correct_card", {"zone": " seat:2 ", "card": "qs"}, {"zone": "seat:2", "card": "QS"}),
    ("correct_card", {"zone": "turn_up", "card": "tD"}, {"zone": "turn_up", "card": "10D"}),
    ("claim_flush", {"player": " Bea ", "cards": ["2h", "5H", "9h", "jh", "th"]},
     {"player": "Bea", "cards": ["2H", "5H", "9H", "JH", "10H"]}),
    ("show_pam", {"player": "Cal "}, {"player": "Cal"}),
    ("call_civil", {}, {}),
    ("misdeal", {}, {}),
    ("reset_deck_learning", {}, {}),
    ("show_deck", {"action": "start", "zone": "stock"}, {"action": "start", "zone": "stock"}),
    ("show_deck", {"action": "stop"}, {"action": "stop"}),
])
def test_valid_commands_reach_the_service_clean(admin, service, name, body, expected):
    resp = post(admin, name, body)
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json()["ok"] is True
    assert service.commands == [(name, expected)]


def test_update_settings_checks_options_with_the_engine(admin, service):
    resp = post(admin, "update_settings", {"variant": "five_card", "options": {"club_law": True}})
    assert resp.status_code == 200
    name, payload = service.commands[-1]
    assert payload["variant"] == "five_card" and payload["options"]["club_law"] is True
    assert payload["options"]["hand_size"] == 5 and payload["options"]["ante_amount"] == 5  # full mapping
    assert set(payload["options"]) == {f.name for f in fields(Options)} - {"variant"}


@pytest.mark.parametrize("name, body, reason", [
    ("confirm_card", {}, "alert_id is required"),
    ("show_deck", {"action": "go"}, "action must be start or stop"),
    ("show_deck", {"action": "start", "zone": "table"}, "use seat:0"),
    ("reset_deck_learning", {"all": True}, "unexpected field(s): all"),
    ("confirm_card", {"alert_id": "5"}, "whole number"),
    ("confirm_card", {"alert_id": True}, "whole number"),
    ("confirm_card", {"alert_id": 5, "extra": 1}, "unexpected field(s): extra"),
    ("correct_card", {"alert_id": 5, "card": "1H"}, "is not a card"),
    ("correct_card", {"alert_id": 5, "card": 7}, "must be a string"),
    ("correct_card", {"card": "AS"}, "needs alert_id, zone, or trick and player"),
    ("correct_card", {"card": "AS", "alert_id": 1, "trick": 1, "player": "Ann"}, "only one of"),
    ("correct_card", {"card": "AS", "zone": "seat:1", "player": "Ann"}, "only one of"),
    ("correct_card", {"card": "AS", "zone": "seat:1", "alert_id": 3}, "only one of"),
    ("correct_card", {"card": "AS", "zone": "stock"}, "seat:0 … seat:16 or turn_up"),
    ("correct_card", {"card": "AS", "zone": "seat:17"}, "seat:0 … seat:16 or turn_up"),
    ("correct_card", {"card": "AS", "zone": 2}, "seat:0 … seat:16 or turn_up"),
    ("correct_card", {"card": "XS", "zone": "turn_up"}, "is not a card"),
    ("claim_flush", {"player": "Bea", "cards": ["2H", "5H", "9H", "JH"]}, "list of the 5 cards"),
    ("claim_flush", {"player": "Bea", "cards": ["2H", "5H", "9H", "JH", "KH", "AH"]}, "list of the 5 cards"),
    ("claim_flush", {"player": "Bea", "cards": "2H 5H 9H JH KH"}, "list of the 5 cards"),
    ("claim_flush", {"player": "Bea", "cards": ["2H", "5H", "9H", "JH", "1H"]}, "is not a card"),
    ("claim_flush", {"player": "Bea", "cards": ["2H", "5H", "9H", "JH", None]}, "must be a string"),
    ("claim_flush", {"cards": ["2H", "5H", "9H", "JH", "KH"]}, "player must be a non-empty string"),
    ("claim_flush", {"player": "Bea", "cards": ["2H", "5H", "9H", "JH", "KH"], "pam": True}, "unexpected field(s): pam"),
    ("show_pam", {}, "player must be a non-empty string"),
    ("show_pam", {"player": "Bea", "card": "JC"}, "unexpected field(s): card"),
    ("show_pam", {"player": "B" * 25}, "longer than 24"),
    ("call_civil", {"player": "Ann"}, "unexpected field(s): player"),
    ("misdeal", {"why": "dealer dropped a card"}, "unexpected field(s): why"),
    ("correct_card", {"card": "AS", "trick": 9, "player": "Ann"}, "between 1 and 5"),
    ("undo", {"all": True}, "unexpected field"),
    ("adjust_chips", {"player": "Ann", "delta": 0, "reason": "x"}, "must not be 0"),
    ("adjust_chips", {"player": "Ann", "delta": 2.5, "reason": "x"}, "whole number"),
    ("adjust_chips", {"player": "Ann", "delta": 5}, "reason must be a non-empty string"),
    ("adjust_chips", {"player": "Ann", "delta": 5, "reason": "x" * 201}, "longer than 200"),
    ("adjust_chips", {"player": "", "delta": 5, "reason": "x"}, "player must be a non-empty"),
    ("adjust_chips", {"player": "Ann", "delta": 10**9, "reason": "x"}, "between"),
    ("update_settings", {}, "nothing to change"),
    ("update_settings", {"players": ["Ann", "ann", "Cal"]}, "must be different"),
    ("update_settings", {"players": ["Ann"]}, "2 to 8 players"),
    ("update_settings", {"players": "Ann,Bea"}, "list of names"),
    ("update_settings", {"players": ["Ann", "Bea", "MISS"]}, "reserved"),
    ("update_settings", {"players": ["Ann", "Bea\n", "B\x07"]}, "control characters"),
    ("update_settings", {"variant": "poker"}, "variant must be one of"),
    ("update_settings", {"options": {"must_head": "yes"}}, "must_head"),
    ("update_settings", {"options": {"no_such_rule": 1}}, "unknown option 'no_such_rule'"),
    ("update_settings", {"options": {"loo_mode": "mixed"}}, "loo_cap"),
    ("update_settings", {"options": []}, "options must be an object"),
    ("update_settings", {"chip_value": "ten"}, "not a number"),
    ("update_settings", {"chip_value": "0.00001"}, "at most 4 decimals"),
    ("update_settings", {"starting_chips": 0}, "between 1 and"),
    ("set_zones", {"zones": {}}, "zones must be an object"),
    ("set_zones", {"zones": {"seat:99": {"x": 0, "y": 0, "width": 1, "height": 1}}}, "zone name"),
    ("set_zones", {"zones": {"seat:17": {"x": 0, "y": 0, "width": 1, "height": 1}}}, "zone name"),
    ("set_zones", {"zones": {"stock": {"x": 0, "y": 0, "width": 0, "height": 1}}}, "between 1 and 5000"),
    ("set_zones", {"zones": {"stock": {"x": 0, "y": 0, "width": 10}}}, "exactly x, y, width and height"),
    ("set_zones", {"zones": {"stock": {"x": "0", "y": 0, "width": 1, "height": 1}}}, "must be a number"),
    ("set_zones", {"zones": {"stock": {"x": float("nan"), "y": 0, "width": 1, "height": 1}}}, "must be a number"),
])
def test_bad_payloads_get_400_with_reason_and_change_nothing(admin, service, name, body, reason):
    before = service.snapshot()
    resp = post(admin, name, body)
    assert resp.status_code == 400, resp.get_json()
    assert reason in resp.get_json()["error"]
    assert service.commands == [] and service.snapshot() == before


def test_service_refusal_is_400_and_nothing_changes(admin, service):
    service.refuse = "cannot undo: nothing to undo in this deal"
    resp = post(admin, "undo", {})
    assert resp.status_code == 400 and resp.get_json()["error"] == "cannot undo: nothing to undo in this deal"
    assert service.commands == []


def test_service_value_error_for_unknown_player(admin, service):
    resp = post(admin, "adjust_chips", {"player": "Zed", "delta": 5, "reason": "buy-in"})
    assert resp.status_code == 400 and "no player 'Zed'" in resp.get_json()["error"]


def test_unknown_command_and_non_json_body(admin):
    client, token = admin
    assert post(admin, "format_disk", {}).status_code == 404
    resp = client.post("/api/admin/pause", data="pause!", content_type="text/plain",
                       headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert resp.status_code == 400 and "must be JSON" in resp.get_json()["error"]
    resp = client.post("/api/admin/pause", data="{bad json", content_type="application/json",
                       headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert resp.status_code == 400
    resp = post(admin, "pause", [1, 2])
    assert resp.status_code == 400 and "JSON object" in resp.get_json()["error"]


def test_oversized_body_is_413_json(admin):
    resp = post(admin, "adjust_chips", {"player": "Ann", "delta": 1, "reason": "x" * 70000})
    assert resp.status_code == 413 and resp.is_json


def test_get_on_a_post_route_is_405_json(client):
    resp = client.get("/api/admin/pause")
    assert resp.status_code == 405 and resp.is_json


def test_admin_page_offers_every_option_with_its_default(admin):
    client, _ = admin
    html = client.get("/admin").get_data(as_text=True)
    for f in fields(Options):
        if f.name != "variant":
            assert f'name="{f.name}"' in html, f.name
    assert 'name="ante_amount"' in html and 'data-default=\'3\'' in html
    assert 'id="opt-must_undertrump" name="must_undertrump" data-kind="bool" data-default=\'false\'' in html
    assert "Usual: the dealer plays him." in html  # three-card's lone_stander default, in words
    for section in ("Chips", "Players and game", "Table zones", "Undo last event", "End the game", "Pause"):
        assert section in html
    assert 'data-command="confirm_card" data-payload=\'{"alert_id": 5}\'' in html


def test_correcting_a_card_moves_chips_on_the_admin_partial(admin, service):
    client, _ = admin
    assert 'data-chips-of="Ann">47<' in client.get("/admin/partial").get_data(as_text=True)
    assert post(admin, "correct_card", {"alert_id": 5, "card": "6C"}).status_code == 200
    assert 'data-chips-of="Ann">46<' in client.get("/admin/partial").get_data(as_text=True)


def test_admin_partial_etag(admin, service):
    client, _ = admin
    first = client.get("/admin/partial")
    etag = first.headers["ETag"]
    assert client.get("/admin/partial", headers={"If-None-Match": etag}).status_code == 304
    service.play("Cal", "9H")
    assert client.get("/admin/partial", headers={"If-None-Match": etag}).status_code == 200


def test_a_service_bug_is_a_json_500_and_the_server_keeps_serving(admin, service, monkeypatch):
    def broken(command):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(service, "command", broken)
    resp = post(admin, "pause", {})
    assert resp.status_code == 500 and resp.get_json()["error"] == "internal error: RuntimeError"
    assert "disk on fire" not in resp.get_data(as_text=True)
    assert admin[0].get("/api/state").status_code == 200


def test_every_rule_default_is_an_attribute_that_parses_as_json(admin):
    """The rules form's script reads ``data-default`` with JSON.parse: an attribute rendered as
    ``data-default=""lowest_card""`` made Save house rules throw and send nothing."""
    import json
    from html.parser import HTMLParser

    client, _ = admin
    defaults: dict[str, str] = {}

    class Defaults(HTMLParser):
        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if "data-default" in a:
                defaults[str(a["name"])] = str(a["data-default"])

    Defaults().feed(client.get("/admin").get_data(as_text=True))
    expected = Options.defaults("three_card")
    assert set(defaults) == {f.name for f in fields(Options)} - {"variant"}
    for name, text in defaults.items():
        assert json.loads(text) == expected[name], name


def test_the_deck_section_and_show_me_the_deck_on_the_live_part(admin, service):
    client, token = admin
    html = client.get("/admin").get_data(as_text=True)
    assert 'id="show-deck-form"' in html and "Forget what the camera learned of the deck" in html
    with service._cond:
        service._state["deck_learning"] = {"views": 7, "cards": 5}
        service._state["deck_tour"] = {"zone": "stock", "shown": ["2C", "3C"], "missing": ["4C"] * 50, "suit": None}
        service._bump()
    html = client.get("/admin").get_data(as_text=True)
    assert "7 views of 5 cards" in html and 'id="show-deck-form"' not in html  # a tour is on
    live = client.get("/admin/partial").get_data(as_text=True)
    assert "Showing the deck in the stock" in live and "<b>2</b> of 52 enrolled" in live
    with service._cond:  # one suit laid out: its thirteen
        service._state["deck_tour"] = {"zone": "stock", "shown": ["2C", "3C"], "missing": ["4C"] * 11, "suit": "C"}
        service._bump()
    assert "<b>2</b> of 13 clubs enrolled" in client.get("/admin/partial").get_data(as_text=True)
    assert 'id="deck-missing"' in live and "Done showing the deck" in live
    # without JavaScript: the form posts, the page comes back with the service's sentence
    resp = client.post("/admin/do/show_deck", data={"csrf_token": token, "action": "stop"},
                       headers={"Origin": ORIGIN})
    assert resp.status_code == 303 and service.commands[-1] == ("show_deck", {"action": "stop"})
