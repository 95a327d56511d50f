"""The host's night through the real controller behind the dashboard (no browser): a rebuy then
End the game gives results that sum to zero and a who-pays-whom list."""

from __future__ import annotations

import pytest

from table.ledger import Ledger
from table.referee import Referee
from table.service import TableService
from table.simulate import DirectTransport, VirtualPlayers, run_night
from web import create_app

PLAYERS = ["Ann", "Bea", "Cal", "Dot"]


@pytest.fixture
def night(tmp_path):
    ledger = Ledger(tmp_path / "ledger.db")
    ref = Referee(ledger, setup={"players": PLAYERS, "variant": "three_card", "options": {}, "chips": 100,
                                 "first_dealer": 0, "chip_value": "0.10"})
    players = VirtualPlayers(5)
    ref.vet = players.vet
    service = TableService(ref)
    app = create_app(service, config={"STATE_DIR": tmp_path / "web", "ADMIN_PIN": "000000"})
    yield ref, players, DirectTransport(ref), service, app.test_client()
    ledger.close()


def test_a_rebuy_then_end_of_night_balances(night):
    ref, players, transport, service, client = night
    run_night(ref, players, transport, max_deals=None, max_steps=6)
    service.command("adjust_chips", {"player": "Ann", "delta": 20, "reason": "bought in 20 more"})
    run_night(ref, players, transport, max_deals=2)
    assert ref.state.game_over
    result = client.get("/api/settlement").get_json()
    net = {r["player"]: r["chips"] for r in result["net"]}
    assert result["in_pool"] == 0 and sum(net.values()) == 0
    assert net["Ann"] == ref.state.balances["Ann"] - 120  # the rebuy is paid in, not won
    paid = {p: 0 for p in PLAYERS}
    for t in result["transfers"]:
        paid[t["from"]] -= t["chips"]
        paid[t["to"]] += t["chips"]
    assert paid == net  # the transfers settle exactly the results shown
    page = client.get("/end").get_data(as_text=True)
    assert "still in the pool" not in page and "Who pays whom" in page


def test_every_house_rule_has_a_plain_sentence_and_every_choice_words():
    from dataclasses import fields

    from engine.options import CHOICES, Options
    from web.rules_text import CHOICE_WORDS, GROUPS, RULES

    names = {f.name for f in fields(Options)} - {"variant"}
    assert set(RULES) == names
    assert all(r.sentence.endswith(".") and r.group in dict(GROUPS) for r in RULES.values())
    assert all(r.needs in ("", *names) for r in RULES.values())
    assert {v for values in CHOICES.values() for v in values} <= set(CHOICE_WORDS)


def test_cards_money_and_the_phone_address_read_right():
    from decimal import Decimal

    from web.cards import card_text
    from web.qr import phone_url
    from web.settle import money

    assert card_text("Bea revoked in trick 1: held 7C when 10D was led") == \
        "Bea revoked in trick 1: held 7\u2663 when 10\u2666 was led"
    assert money(-7, Decimal("0")) == "0.00" and money(-7, Decimal("0.10")) == "-0.70"
    assert phone_url("http://pi.local:8000/") == "http://pi.local:8000/"
    assert phone_url("http://127.0.0.1:8000/").endswith(":8000/")


def test_without_javascript_the_forms_post_and_say_what_happened(night):
    from web_fakes import ORIGIN, csrf_of

    ref, players, transport, service, client = night
    token = csrf_of(client)
    resp = client.post("/admin/login", data={"pin": "000000", "csrf_token": token}, headers={"Origin": ORIGIN})
    assert resp.status_code == 303
    html = client.get("/admin").get_data(as_text=True)
    assert "__loo_csrf__" not in html  # the live fragment carries this session's own token
    token = html.split('name="csrf-token" content="')[1].split('"')[0]
    resp = client.post("/admin/do/adjust_chips", data={"csrf_token": token, "player": "Bea", "step": "rebuy",
                                                      "delta": "20", "reason": ""}, headers={"Origin": ORIGIN})
    assert resp.status_code == 303 and resp.headers["Location"].endswith("/admin#now")
    assert "Bea +20 chips (bought 20 more chips)." in client.get("/admin").get_data(as_text=True)
    resp = client.post("/admin/do/adjust_chips", data={"csrf_token": token, "player": "Zed", "delta": "5",
                                                      "reason": "x"}, headers={"Origin": ORIGIN})
    page = client.get("/admin").get_data(as_text=True)
    assert "Refused:" in page and "Nothing was changed." in page
    assert service.chips_in()["Bea"] == 120
    assert client.post("/admin/do/claim_flush", data={"csrf_token": token},
                       headers={"Origin": ORIGIN}).status_code == 404  # five cards: the script's job


def test_an_alert_is_said_once(client_fake):
    """The camera's fault is an alert; the status banner points to it instead of repeating it."""
    service, client = client_fake
    message = "the camera is not delivering pictures; check its cable (the game waits)"
    service.set_state(status={"state": "fault", "message": message},
                      alerts=[{"id": 9, "kind": "camera", "seat": None, "message": message, "needs_confirmation": False}])
    html = client.get("/table/partial").get_data(as_text=True)
    assert html.count("check its cable") == 1 and "see the alert below" in html
    service.set_state(status={"state": "paused", "message": "the game is paused"}, alerts=[])
    html = client.get("/table/partial").get_data(as_text=True)
    assert "Paused by the host." in html and "the game is paused" not in html


@pytest.fixture
def client_fake(tmp_path):
    from web_fakes import FakeService

    service = FakeService()
    app = create_app(service, config={"STATE_DIR": tmp_path / "web", "ADMIN_PIN": "000000"})
    return service, app.test_client()


def test_without_javascript_rules_players_and_zones_post_too(night):
    from web_fakes import ORIGIN, csrf_of

    from engine.options import Options

    ref, players, transport, service, client = night
    token = csrf_of(client)
    client.post("/admin/login", data={"pin": "000000", "csrf_token": token}, headers={"Origin": ORIGIN})
    html = client.get("/admin").get_data(as_text=True)
    token = html.split('name="csrf-token" content="')[1].split('"')[0]
    # what a browser sends for the rules form: every switch that is on, every other field's value
    form = {"csrf_token": token, "form": "rules"}
    for name, value in Options.defaults("three_card").items():
        if name in ("variant", "hand_size"):
            continue
        if value is True or name == "club_law":
            form[name] = "on"
        elif value is not False:
            form[name] = "" if value is None else str(value)
    assert client.post("/admin/do/update_settings", data=form, headers={"Origin": ORIGIN}).status_code == 303
    assert ref.state.options.get("club_law") is True
    assert "Saved house rules (three-card Loo)." in client.get("/admin").get_data(as_text=True)
    assert Options.from_dict("three_card", ref.state.options).must_head is True  # a switch left on stays on
    resp = client.post("/admin/do/update_settings", data={"csrf_token": token, "form": "game", "chip_value": "0.20",
                                                         "players": "Ann\nBea\nCal\nDot"}, headers={"Origin": ORIGIN})
    assert resp.status_code == 303 and ref.state.chip_value == "0.20"
    zones = {"csrf_token": token, "turn_up.x": "10", "turn_up.y": "20", "turn_up.width": "60", "turn_up.height": "90"}
    assert client.post("/admin/do/set_zones", data=zones, headers={"Origin": ORIGIN}).status_code == 303
    assert ref.state.zones == {"turn_up": {"x": 10.0, "y": 20.0, "width": 60.0, "height": 90.0}}


def test_a_revoke_reads_as_one_sentence_with_its_proof(client_fake):
    from engine import Card
    from engine.outcome import Revoke

    service, client = client_fake
    lead = Revoke("Ann", 2, "lead_highest_trump", Card.parse("9D"), Card.parse("JS"), 3)
    assert "a higher trump" not in lead.describe()  # 9D is no trump: the sentence says what was owed
    service.set_state(alerts=[{"id": 3, "kind": "revoke", "seat": "Bea", "card": "2H", "needs_confirmation": False,
                               "message": "Bea revoked in trick 1: held 7C when clubs were led",
                               "evidence": "witness 7C seen in trick 3"}])
    html = client.get("/table/partial").get_data(as_text=True)
    assert "Revoke:</b>\nBea revoked in trick 1: held 7\u2663 when clubs were led (7\u2663 seen in trick 3 proves it)." in html
    assert "witness" not in html and "7C" not in html


def test_without_javascript_a_newcomer_joins_and_plays_from_the_page(night):
    from web_fakes import ORIGIN, csrf_of

    ref, players, transport, service, client = night
    ref.buttons = 4  # the header wires four seats: the newcomer's has no button
    token = csrf_of(client)
    client.post("/admin/login", data={"pin": "000000", "csrf_token": token}, headers={"Origin": ORIGIN})
    html = client.get("/admin").get_data(as_text=True)
    assert 'id="join-form"' in html and "next free seat, between Dot and Ann" in html
    token = html.split('name="csrf-token" content="')[1].split('"')[0]
    run_night(ref, players, transport, max_steps=3)  # a deal in progress: the join waits for the next deal
    resp = client.post("/admin/do/add_player", data={"csrf_token": token, "player": "Eve", "chips": "40"},
                       headers={"Origin": ORIGIN})
    assert resp.status_code == 303
    page = client.get("/admin").get_data(as_text=True)
    assert "Eve joins with 40 chips from the next deal (deal 2)" in page and "From the next deal" in page
    assert ref.state.players == PLAYERS
    queued = next(iter(ref.state.queued))  # ... and the host calls it off, from the page too
    client.post("/admin/do/cancel_change", data={"csrf_token": token, "id": str(queued)}, headers={"Origin": ORIGIN})
    assert "Cancelled: Eve joins with 40 chips will not happen." in client.get("/admin").get_data(as_text=True)
    assert not ref.state.queued
    while not ref.state.deal.is_over:
        run_night(ref, players, transport, max_steps=1)
    client.post("/admin/do/add_player", data={"csrf_token": token, "player": "Eve", "chips": "40"},
                headers={"Origin": ORIGIN})
    page = client.get("/admin").get_data(as_text=True)
    assert "Eve joins with 40 chips in seat 5, between Dot and Ann" in page
    assert service.chips_in()["Eve"] == 40 and client.get("/api/state").get_json()["seats"][4]["name"] == "Eve"
    while not (ref.state.deal is not None and ref.state.deal.phase == "declare" and ref.state.deal.to_act == "Eve"):
        run_night(ref, players, transport, max_steps=1)
    live = client.get("/admin/partial").get_data(as_text=True)
    assert "<b>Eve</b> has no seat button: it is their turn to declare." in live
    assert 'name="gesture" value="hold"' in live and ">Take the miss</button>" in live
    client.post("/admin/do/seat_button", data={"csrf_token": token, "player": "Eve", "gesture": "hold"},
                headers={"Origin": ORIGIN})
    assert ref.state.deal.declarations["Eve"] in ("pass", "defend_miss")
    assert "has no seat button" not in client.get("/admin/partial").get_data(as_text=True)
