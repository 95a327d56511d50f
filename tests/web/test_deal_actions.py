"""The deal's own admin commands on the pages: Claim flush, Show Pam, Misdeal and "Pam be civil"
appear only when the snapshot's ``commands`` (the engine's) open them, post the right payload shape, and the Table
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


NONE = {"misdeal": False, "call_civil": False, "replay": False, "claim_flush": [], "show_pam": []}


@pytest.mark.parametrize("commands, expected", [
    ({}, set()),
    ({"misdeal": True}, {"misdeal"}),
    ({"claim_flush": ["Ann", "Bea"], "misdeal": True}, {"claim", "misdeal"}),
    ({"claim_flush": ["Ann"], "show_pam": ["Ann"]}, {"claim", "pam"}),
    ({"call_civil": True}, {"civil"}),
    ({"replay": True}, set()),  # offered on the deal's own page, not among these controls
])
def test_controls_follow_the_engines_commands(admin, service, commands, expected):
    """The page shows what the snapshot's ``commands`` (the engine's ``table_commands()``) open;
    when each applies is the engine's to say (tests/engine/test_table_commands.py)."""
    service.set_state(commands={**NONE, **commands})
    html = partial(admin)
    assert shown(html) == expected
    assert shown(admin[0].get("/admin").get_data(as_text=True)) == expected  # the full page too


def test_flush_form_offers_the_players_the_engine_names(admin, service):
    service.set_state(phase="flush", trick=None, commands={**NONE, "claim_flush": ["Ann", "Bea"]})
    html = partial(admin)
    assert options_of(html, "flush-form") == ["Ann", "Bea"]
    assert html.count('name="card" maxlength="3"') == 5
    service.set_state(phase="over", flush_claims=[VALID],
                      commands={**NONE, "claim_flush": ["Ann"], "show_pam": ["Ann"]})
    html = partial(admin)
    assert options_of(html, "flush-form") == ["Ann"]
    assert options_of(html, "pam-form") == ["Ann"]
    service.set_state(pam_shown=["Ann"], flush_claims=[VALID, FALSE], commands=NONE)
    assert shown(partial(admin)) == set()  # nobody left to claim or show


def test_civil_button_names_the_leader_and_posts_call_civil(admin, service):
    service.set_options(**FIVE_CARD)
    service.set_state(trick={"number": 3, "plays": [{"player": "Cal", "card": "AH"}]},
                      commands={**NONE, "call_civil": True})
    html = partial(admin)
    assert "Cal led the ace of trumps." in html and ">Pam be civil</button>" in html
    client, token = admin
    resp = client.post("/api/admin/call_civil", json={}, headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert resp.status_code == 200 and service.commands[-1] == ("call_civil", {})


def test_misdeal_button_asks_first(admin, service):
    service.set_state(phase="declare", trick=None, commands={**NONE, "misdeal": True})
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
    service.set_state(phase="flush", trick=None, commands={**NONE, "claim_flush": ["Ann", "Bea"]})
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
