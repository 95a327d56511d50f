"""The five-card commands end to end through Flask's test client over the real controller
(`table.service.TableService` on a referee stepped by hand, SQLite ledger): what the dashboard
offers, what it sends, and what the engine then makes of it."""

from __future__ import annotations

import pytest

from table.devices import ButtonEvent
from table.ledger import Ledger
from table.referee import Referee
from table.service import TableService
from vision.events import VisionEvent
from web import create_app

PIN = "13579"
ORIGIN = "http://localhost"
PLAYERS = ["Ann", "Bea", "Cal", "Dot"]


class Five:
    """A five-card table (Dot deals, "Pam be civil" on call) driven synchronously, as the referee
    thread would be: button gestures and camera events."""

    def __init__(self, path) -> None:
        self.ledger = Ledger(path)
        self.ref = Referee(self.ledger, setup={"players": PLAYERS, "variant": "five_card",
                                               "options": {"pam_be_civil": "on_call"}, "chips": 100,
                                               "first_dealer": 3})
        self.t = 0.0

    def _ts(self) -> float:
        self.t += 1.0
        return self.t

    def dealer(self) -> None:
        self.ref.step(ButtonEvent("dealer", "press", None, self._ts()))

    def press(self, name: str, gesture: str = "press") -> None:
        self.ref.step(ButtonEvent("seat", gesture, PLAYERS.index(name), self._ts()))

    def card(self, zone: str, card: str) -> None:
        self.ref.step(VisionEvent("card_placed", zone, self._ts(), card, 0.97))

    def to_flush_phase(self) -> None:
        """Dot deals, hearts are trumps; everybody plays and stands pat."""
        self.dealer()
        self.card("turn_up", "7H")
        for p in PLAYERS:
            self.press(p)
        for p in PLAYERS:
            self.press(p, "hold")
        assert self.ref.snapshot()["phase"] == "flush"


@pytest.fixture
def five(tmp_path):
    t = Five(tmp_path / "five.db")
    yield t
    t.ledger.close()


@pytest.fixture
def host(five, tmp_path):
    """A logged-in admin client over the real controller; returns (client, post)."""
    app = create_app(TableService(five.ref), config={"STATE_DIR": tmp_path / "web", "ADMIN_PIN": PIN})
    client = app.test_client()
    client.get("/admin")
    with client.session_transaction() as sess:
        token = sess["csrf"]
    resp = client.post("/admin/login", json={"pin": PIN}, headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    token = resp.get_json()["csrf_token"]

    def post(name, body):
        return client.post(f"/api/admin/{name}", json=body, headers={"Origin": ORIGIN, "X-CSRF-Token": token})

    return client, post


def test_flush_claim_and_pam_through_the_dashboard(five, host):
    client, post = host
    five.to_flush_phase()
    page = client.get("/admin/partial").get_data(as_text=True)
    assert 'id="flush-form"' in page and 'id="pam-form"' not in page
    # a false claim (cards typed in lower case): kept as shown cards, the window stays open
    assert post("claim_flush", {"player": " Cal ", "cards": ["2s", "5s", "9s", "qs", "kd"]}).status_code == 200
    snap = five.ref.snapshot()
    assert snap["phase"] == "flush"
    assert snap["flush_claims"] == [{"player": "Cal", "cards": ["2S", "5S", "9S", "QS", "KD"], "valid": False}]
    # a duplicate card is the engine's to refuse: a 400 with its reason, nothing written
    seq = five.ledger.last_seq()
    resp = post("claim_flush", {"player": "Ann", "cards": ["2S", "2S", "9S", "QS", "KS"]})
    assert resp.status_code == 400 and "five different" in resp.get_json()["error"]
    assert five.ledger.last_seq() == seq
    # Ann's real flush wins: the deal is over, Show Pam is offered to Bea and Dot only
    assert post("claim_flush", {"player": "Ann", "cards": ["2C", "5C", "9C", "QC", "KC"]}).status_code == 200
    page = client.get("/admin/partial").get_data(as_text=True)
    assert five.ref.snapshot()["phase"] == "over"
    pam_form = page[page.index('id="pam-form"'):]
    pam_form = pam_form[:pam_form.index("</form>")]
    assert "<option>Bea</option><option>Dot</option>" in pam_form
    assert post("show_pam", {"player": "Bea"}).status_code == 200
    assert five.ref.snapshot()["pam_shown"] == ["Bea"]
    html = client.get("/").get_data(as_text=True)
    assert '<li class="flush-claim valid"><b>Ann</b>' in html and "Pam shown by <b>Bea</b>." in html
    assert '<li class="flush-claim false-claim"><b>Cal</b>' in html


def test_civil_and_misdeal_through_the_dashboard(five, host):
    client, post = host
    five.to_flush_phase()
    assert 'data-command="misdeal"' in client.get("/admin/partial").get_data(as_text=True)
    five.card("seat:0", "AH")  # Ann leads the ace of trumps
    page = client.get("/admin/partial").get_data(as_text=True)
    assert 'data-command="call_civil"' in page and 'data-command="misdeal"' not in page
    assert post("call_civil", {}).status_code == 200
    resp = post("call_civil", {})
    assert resp.status_code == 400 and "already called" in resp.get_json()["error"]
    resp = post("misdeal", {})
    assert resp.status_code == 400 and "before the first card" in resp.get_json()["error"]
    five.card("seat:1", "2H")
    assert 'data-command="call_civil"' not in client.get("/admin/partial").get_data(as_text=True)


def test_entering_a_missed_turn_up_through_the_dashboard(five, host):
    _, post = host
    five.dealer()
    assert five.ref.snapshot()["phase"] == "turn_up"
    assert post("correct_card", {"zone": "turn_up", "card": "7h"}).status_code == 200
    assert five.ref.snapshot()["turn_up"] == "7H"
    assert post("correct_card", {"zone": "turn_up", "card": "8h"}).status_code == 200  # a misread fixed
    assert five.ref.snapshot()["turn_up"] == "8H"
    resp = post("correct_card", {"zone": "seat:3", "card": "2C"})
    assert resp.status_code == 400 and "once everyone has declared" in resp.get_json()["error"]
