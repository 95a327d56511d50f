"""Five-card Loo at the table: flush claims, showing Pam, "Pam be civil" and misdeals, given on the
dashboard's command path and settled by the engine; bad input is refused and changes nothing."""

from __future__ import annotations

import pytest
from conftest import Table
from test_referee import start_deal

from table.state import TableState

FLUSH = ["2S", "5S", "9S", "QS", "KS"]


@pytest.fixture
def five(tmp_path):
    t = Table(tmp_path / "five.db", variant="five_card", options={"pam_be_civil": "on_call"})
    yield t
    t.close()


def to_flush_phase(t, turn_up="7H"):
    """Dot deals; everybody plays and stands pat (hold = done exchanging, 0 cards)."""
    t.dealer()
    t.card("turn_up", turn_up)
    for p in ["Ann", "Bea", "Cal", "Dot"]:
        t.press(p)
    for p in ["Ann", "Bea", "Cal", "Dot"]:
        t.press(p, "hold")
    assert t.snap()["phase"] == "flush"


def frozen(t):
    return t.ledger.last_seq(), t.ref.state.digest()


def test_a_flush_claimed_on_the_dashboard_wins_and_pam_escapes(five):
    to_flush_phase(five)
    five.ref.call("claim_flush", {"player": "Ann", "cards": FLUSH})
    snap = five.snap()
    assert snap["phase"] == "over"  # a valid flush ends the deal before a card is played
    assert snap["flush_claims"] == [{"player": "Ann", "cards": FLUSH, "valid": True}]
    settlement = five.ref.state.settlement()
    assert settlement.flush_winner == "Ann" and {"Bea", "Cal", "Dot"} <= set(settlement.looed)
    five.ref.call("show_pam", {"player": "Bea"})  # Bea holds Pam (JC): she is not looed
    assert five.snap()["pam_shown"] == ["Bea"]
    after = five.ref.state.settlement()
    assert "Bea" not in after.looed and {"Cal", "Dot"} <= set(after.looed)
    assert five.ref.state.total_chips() == five.ref.state.total_in
    five.dealer()  # closes the deal (its record carries the claim) and starts the next
    record = five.ref.state.finished[0]["record"]
    assert "flush" in str(record) and five.ref.state.deal_number == 2
    assert TableState.replay(five.ledger.events()).digest() == five.ref.state.digest()


@pytest.mark.parametrize(("payload", "needle"), [
    ({"player": "Ann", "cards": FLUSH[:4]}, "the 5 cards shown"),
    ({"player": "Ann", "cards": "2S 5S 9S QS KS"}, "the 5 cards shown"),
    ({"player": "Ann", "cards": ["2S", "5S", "9S", "QS", "ZZ"]}, "ZZ"),
    ({"player": "Zed", "cards": FLUSH}, "not at the table"),
    ({"cards": FLUSH}, "player must be a non-empty string"),
    ({"player": "Ann", "cards": ["2S", "5S", "9S", "QS", "7H"]}, "turn-up"),
    ({"player": "Ann", "cards": ["2S", "2S", "9S", "QS", "KS"]}, "five different"),
])
def test_bad_flush_claims_are_refused_and_change_nothing(five, payload, needle):
    to_flush_phase(five)
    before = frozen(five)
    with pytest.raises(ValueError, match=needle):
        five.ref.call("claim_flush", payload)
    assert frozen(five) == before and five.snap()["flush_claims"] == []


def test_pam_and_civil_only_when_the_rules_allow(five):
    to_flush_phase(five)
    before = frozen(five)
    with pytest.raises(ValueError, match="only to escape a flush"):
        five.ref.call("show_pam", {"player": "Bea"})
    with pytest.raises(ValueError, match="player must be a non-empty string"):
        five.ref.call("show_pam", {"player": 3})
    with pytest.raises(ValueError, match="not now"):  # no card led yet
        five.ref.call("call_civil", {})
    assert frozen(five) == before
    five.card("Ann", "AH")  # Ann leads the ace of trumps
    five.ref.call("call_civil", {})
    assert five.ref.state.entries[-1].action.__class__.__name__ == "CallCivil"
    before = frozen(five)
    with pytest.raises(ValueError, match="already called"):
        five.ref.call("call_civil", {})
    assert frozen(five) == before


def test_a_false_flush_claim_is_recorded_as_shown_cards(five):
    to_flush_phase(five)
    five.ref.call("claim_flush", {"player": "Cal", "cards": ["2S", "5S", "9S", "QS", "KD"]})
    snap = five.snap()
    assert snap["flush_claims"] == [{"player": "Cal", "cards": ["2S", "5S", "9S", "QS", "KD"], "valid": False}]
    assert snap["phase"] == "flush"  # no flush won: the play goes on


def test_misdeal_on_the_dashboard_is_settled_by_the_misdeal_option(table):
    with pytest.raises(ValueError, match="no deal in progress"):
        table.ref.call("misdeal", {})
    table.dealer()
    table.card("turn_up", "7H")
    table.press("Ann")
    table.ref.call("misdeal", {})
    st = table.ref.state
    assert table.snap()["phase"] == "over" and st.settlement().kind == "misdeal"
    assert st.total_chips() == st.total_in
    table.dealer()  # loo_and_redeal: the same dealer deals again, no new ante
    assert st.deal_number == 2 and st.deal_info["dealer"] == "Dot" and st.deal_info["redeal"]
    assert TableState.replay(table.ledger.events()).digest() == st.digest()


def test_no_misdeal_once_a_card_is_played(table):
    start_deal(table)
    table.card("Ann", "KS")
    before = frozen(table)
    with pytest.raises(ValueError, match="before the first card"):
        table.ref.call("misdeal", {})
    assert frozen(table) == before


def test_a_misdeal_releases_a_hold(table):
    table.dealer()
    table.card("turn_up", None, kind="card_unsure", top3=[("7H", 0.4)])
    assert table.ref.hold is not None and table.snap()["status"]["state"] == "attention"
    table.ref.call("misdeal", {})
    assert table.ref.hold is None and not [a for a in table.snap()["alerts"] if a["needs_confirmation"]]
    assert table.snap()["phase"] == "over"


def test_the_service_offers_the_new_commands(table):
    from table.service import COMMANDS, TableService

    assert {"claim_flush", "show_pam", "call_civil", "misdeal"} <= set(COMMANDS)
    table.dealer()
    assert TableService(table.ref).command("misdeal", {})["ok"]


def _night(tmp_path, variant, seed, deals):
    from table.commands.ledger import verify
    from table.ledger import Ledger
    from table.referee import Referee
    from table.simulate import DirectTransport, VirtualPlayers, run_night

    ledger = Ledger(tmp_path / f"{variant}-{seed}.db")
    ref = Referee(ledger, setup={"players": ["Ann", "Bea", "Cal", "Dot"], "variant": variant, "options": {},
                                 "chips": 100, "first_dealer": 0})
    run_night(ref, VirtualPlayers(seed, revoke_rate=0.15), DirectTransport(ref), max_deals=deals)
    actions = [e.data["action"] for e in ledger.events() if e.kind == "action"]
    report = verify(ledger)
    ledger.close()
    return ref, actions, report


def test_virtual_players_claim_their_flush_and_show_pam(tmp_path):
    """Seed 77: Ann is dealt a heart flush, stands pat and shows it; Cal holds Pam and shows it."""
    ref, actions, report = _night(tmp_path, "five_card", 77, 1)
    claims = [a for a in actions if ":flush:" in a]
    assert claims and any(a.endswith(":pam") for a in actions), actions  # Ann's hearts, Cal's Pam
    assert report["ok"], report["problems"]
    assert ref.state.finished[0]["outcome"]["flush_winner"] == claims[0].split(":")[0]


def test_virtual_players_exchange_by_presses(tmp_path):
    """Irish Loo: the table records only how many cards each stander exchanged (press per card,
    hold when done); the bots' own hands stay true, so the night plays out and verifies."""
    ref, actions, report = _night(tmp_path, "irish", 1, 3)
    exchanges = [a for a in actions if ":x" in a]
    assert exchanges and all(a.split(":x")[1].isdigit() for a in exchanges)  # counts, never cards
    assert any(not a.endswith(":x0") for a in exchanges)
    assert report["ok"] and len(ref.state.finished) == 3, report["problems"]
