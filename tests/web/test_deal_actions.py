"""The deal's own admin commands on the pages: Claim flush, Show Pam, Misdeal and "Pam be civil"
appear only when the snapshot says they make sense, post the right payload shape, and the Table
page shows the flush claims and who showed Pam."""

# ruff: noqa: F811 (the fixtures imported from web_fakes are test arguments of the same name)

from __future__ import annotations

import json
import re

import pytest
from web_fakes import ORIGIN, admin, app, client, service  # noqa: F401 (pytest fixtures, used by name)

CONTROLS = {
    "claim": 'id="flush-form"',
    "pam": 'id="pam-form"',
    "misdeal": 'data-command="misdeal"',
    "civil": 'data-command="call_civil"',
}
VALID = {"player": "Bea", "cards": ["2S", "5S", "9S", "JS", "KS"], "valid": True}
FALSE = {"player": "Ann", "cards": ["2S", "5S", "9S", "JS", "KD"], "valid": False}
FIVE_CARD = {"pam": True, "pam_be_civil": "on_call"}


def shown(html: str) -> set[str]:
    return {name for name, marker in CONTROLS.items() if marker in html}


def options_of(html: str, form_id: str) -> list[str]:
    form = re.search(rf'<form id="{form_id}".*?</form>', html, re.S)
    assert form, form_id
    return re.findall(r"<option>([^<]*)</option>", form.group(0))


def partial(admin) -> str:
    return str(admin[0].get("/admin/partial").get_data(as_text=True))


@pytest.mark.parametrize("state, options, expected", [
    # the fake's table: trick 2 under way, nothing to offer
    ({}, {}, set()),
    # a deal dealt but no card played yet: misdeal is possible in every phase before the lead
    ({"phase": "turn_up", "trick": None, "turn_up": None, "trump": None}, {}, {"misdeal"}),
    ({"phase": "declare", "trick": None}, {}, {"misdeal"}),
    ({"phase": "exchange", "trick": None}, {}, {"misdeal"}),
    # the flush window
    ({"phase": "flush", "trick": None}, {}, {"claim", "misdeal"}),
    # a flush has won: Pam may be shown, another stander may still show a flush; no misdeal
    ({"phase": "over", "trick": None, "flush_claims": [VALID]}, {}, {"claim", "pam"}),
    # only a false claim: no Pam to show (play goes on)
    ({"phase": "over", "trick": None, "flush_claims": [FALSE]}, {}, set()),
    ({"phase": "play", "trick": None, "flush_claims": [FALSE]}, {}, {"misdeal"}),
    # between deals and before the night: nothing
    ({"phase": "waiting", "trick": None}, {}, set()),
    ({"phase": "setup", "trick": None}, {}, set()),
    ({"phase": "over", "trick": None}, {}, set()),
    # "Pam be civil": right after the ace of trumps is led, only when the house calls it
    ({"trick": {"number": 1, "plays": [{"player": "Ann", "card": "AH"}]}}, FIVE_CARD, {"civil"}),
    ({"trick": {"number": 1, "plays": [{"player": "Ann", "card": "AH"}]}}, {"pam": True, "pam_be_civil": "automatic"}, set()),
    ({"trick": {"number": 1, "plays": [{"player": "Ann", "card": "AH"}]}}, {"pam": False, "pam_be_civil": "on_call"}, set()),
    ({"trick": {"number": 1, "plays": [{"player": "Ann", "card": "KH"}]}}, FIVE_CARD, set()),
    ({"trick": {"number": 1, "plays": [{"player": "Ann", "card": "AS"}]}}, FIVE_CARD, set()),
    ({"trick": {"number": 1, "plays": [{"player": "Ann", "card": "AH"}, {"player": "Bea", "card": "2H"}]}},
     FIVE_CARD, set()),
])
def test_controls_follow_the_snapshot(admin, service, state, options, expected):
    service.set_options(**options)
    service.set_state(**state)
    html = partial(admin)
    assert shown(html) == expected
    assert shown(admin[0].get("/admin").get_data(as_text=True)) == expected  # the full page too


def test_flush_form_offers_the_standers_who_have_not_claimed(admin, service):
    service.set_state(phase="flush", trick=None)  # Ann and Bea play, Cal passed
    html = partial(admin)
    assert options_of(html, "flush-form") == ["Ann", "Bea"]
    assert html.count('name="card" maxlength="3"') == 5
    service.set_state(phase="over", flush_claims=[VALID])
    html = partial(admin)
    assert options_of(html, "flush-form") == ["Ann"]
    assert options_of(html, "pam-form") == ["Ann"]  # Bea's flush won; Cal's hand is dead
    service.set_state(pam_shown=["Ann"], flush_claims=[VALID, FALSE])
    assert shown(partial(admin)) == set()  # nobody left to claim or show


def test_before_the_declarations_anyone_is_offered(admin, service):
    seats = [dict(s, declaration=None) for s in service.snapshot()["seats"]]
    service.set_state(phase="flush", trick=None, seats=seats)
    assert options_of(partial(admin), "flush-form") == ["Ann", "Bea", "Cal"]


def test_civil_button_names_the_leader_and_posts_call_civil(admin, service):
    service.set_options(**FIVE_CARD)
    service.set_state(trick={"number": 3, "plays": [{"player": "Cal", "card": "AH"}]})
    html = partial(admin)
    assert "Cal led the ace of trumps." in html and ">Pam be civil</button>" in html
    client, token = admin
    resp = client.post("/api/admin/call_civil", json={}, headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert resp.status_code == 200 and service.commands[-1] == ("call_civil", {})


def test_misdeal_button_asks_first(admin, service):
    service.set_state(phase="declare", trick=None)
    html = partial(admin)
    assert re.search(r'data-command="misdeal" class="danger" data-confirm="Call a misdeal\?', html)


def test_the_admin_page_offers_entering_a_missed_card(admin, service):
    client, token = admin
    html = client.get("/admin").get_data(as_text=True)
    form = re.search(r'<form id="missed-form".*?</form>', html, re.S)
    assert form
    zones = re.findall(r'<option value="([^"]+)">', form.group(0))
    assert zones == ["seat:0", "seat:1", "seat:2", "turn_up"]
    resp = client.post("/api/admin/correct_card", json={"zone": "seat:2", "card": "9h"},
                       headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert resp.status_code == 200 and service.commands[-1] == ("correct_card", {"zone": "seat:2", "card": "9H"})
    assert {"player": "Cal", "card": "9H"} in service.snapshot()["trick"]["plays"]


def test_the_admin_script_posts_the_new_shapes():
    """admin.js builds the payloads the validator accepts (the browser test drives the rest)."""
    from pathlib import Path

    js = (Path(__file__).resolve().parents[2] / "web" / "static" / "admin.js").read_text()
    assert '["claim_flush", { player: f.player.value, cards: cs }, true]' in js
    assert '["show_pam", { player: f.player.value }, false]' in js
    assert '["correct_card", { zone: f.zone.value, card: f.card.value.trim() }, true]' in js


def test_claim_flush_and_show_pam_reach_the_table_page(admin, client, service):
    service.set_state(phase="flush", trick=None)
    c, token = admin
    headers = {"Origin": ORIGIN, "X-CSRF-Token": token}
    assert "Flush claims" not in client.get("/").get_data(as_text=True)
    resp = c.post("/api/admin/claim_flush", json={"player": "Ann", "cards": ["2s", "5S", "9S", "JS", "KD"]},
                  headers=headers)
    assert resp.status_code == 200
    resp = c.post("/api/admin/claim_flush", json={"player": "Bea", "cards": ["2H", "5H", "9H", "JH", "KH"]},
                  headers=headers)
    assert resp.status_code == 200
    assert c.post("/api/admin/show_pam", json={"player": "Ann"}, headers=headers).status_code == 200
    html = client.get("/").get_data(as_text=True)
    section = re.search(r'<section class="flushes".*?</section>', html, re.S)
    assert section, html
    claims = re.findall(r'<li class="flush-claim ([a-z-]+)"><b>(\w+)</b>.*?<span class="verdict">([^<]+)<',
                        section.group(0), re.S)
    assert claims == [("false-claim", "Ann", "not a flush"), ("valid", "Bea", "flush")]
    assert section.group(0).count('aria-label="') >= 10  # ten card images
    assert 'aria-label="king of diamonds"' in section.group(0)
    assert "Pam shown by <b>Ann</b>." in section.group(0)
    # the JSON snapshot carries them for API clients
    state = json.loads(client.get("/api/state").get_data(as_text=True))
    assert [c["valid"] for c in state["flush_claims"]] == [False, True] and state["pam_shown"] == ["Ann"]
