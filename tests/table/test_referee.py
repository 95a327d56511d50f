"""table.referee: one queue in, engine decisions, ledger events, LEDs/buzzer/alerts out."""

from __future__ import annotations

import threading
import time

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from engine.records import score_record
from table.config import parse_config
from table.devices import ButtonEvent, TableControls
from table.ledger import Ledger
from table.referee import CameraStatus, Referee
from table.state import TableState

# Dealer Dot; the first deal is forced (pool 0), so everybody plays. Trumps hearts (7H).
# Bea fails to follow spades in trick 1 and shows 5S in trick 3: a revoke proven in trick 3.
REVOKE_DEAL = [
    ("Ann", "KS"), ("Bea", "2C"), ("Cal", "QS"), ("Dot", "3S"),
    ("Ann", "4D"), ("Bea", "6D"), ("Cal", "9D"), ("Dot", "KD"),
    ("Dot", "8C"), ("Ann", "9C"), ("Bea", "5S"), ("Cal", "10C"),
]


def start_deal(t, turn_up="7H"):
    t.dealer()
    t.card("turn_up", turn_up)
    for p in ["Ann", "Bea", "Cal", "Dot"]:
        t.press(p)


def test_a_whole_deal_from_presses_and_cards(table):
    table.dealer()
    snap = table.snap()
    assert (snap["phase"], snap["deal_number"], snap["pool"]) == ("turn_up", 1, 3)
    assert table.outputs.seats == {3: "on"}  # the dealer turns up
    table.card("turn_up", "7H")
    assert table.snap()["phase"] == "declare"
    assert table.outputs.seats == {0: "on", 1: "blink", 2: "blink", 3: "blink"}
    for p in ["Ann", "Bea", "Cal", "Dot"]:
        table.press(p)
    assert table.snap()["phase"] == "play" and table.outputs.seats == {0: "on"}
    for p, c in REVOKE_DEAL[:3]:
        table.card(p, c)
    assert table.snap()["trick"] == {"number": 1, "plays": [
        {"player": "Ann", "card": "KS"}, {"player": "Bea", "card": "2C"}, {"player": "Cal", "card": "QS"}]}
    for p, c in REVOKE_DEAL[3:]:
        table.card(p, c)
    snap = table.snap()
    assert snap["phase"] == "over"
    assert table.chips() == {"Ann": 101, "Bea": 97, "Cal": 101, "Dot": 98}
    assert snap["pool"] == 3
    table.dealer()  # closes deal 1 (its loo-hand/1 record) and starts deal 2
    st = table.ref.state
    assert st.deal_number == 2 and st.deal_info["dealer"] == "Ann"
    record = st.finished[0]["record"]
    assert record["format"] == "loo-hand/1" and len(record["tricks"]) == 3
    outcome = score_record(record)  # the engine, reading the record back, agrees with the table
    outcome.pop("id")
    ours = dict(st.finished[0]["outcome"])
    ours["revokes"] = [{k: v for k, v in r.items() if k != "card"} for r in ours["revokes"]]
    assert outcome == ours


def test_the_snapshot_says_which_host_commands_the_engine_allows(table):
    table.dealer()
    assert table.snap()["commands"]["misdeal"] is True  # dealt, no card played yet
    start = table.snap()["commands"]
    assert start["claim_flush"] == [] and start["call_civil"] is False
    table.card("turn_up", "7H")
    for p in ["Ann", "Bea", "Cal", "Dot"]:
        table.press(p)
    table.card("Ann", "KS")
    assert table.snap()["commands"]["misdeal"] is False  # a card is on the table


def test_revoke_alert_flash_and_buzzer(table):
    start_deal(table)
    for p, c in REVOKE_DEAL[:10]:
        table.card(p, c)
    assert not [a for a in table.snap()["alerts"] if a["kind"] == "revoke"]
    table.card("Bea", "5S")  # the witness
    revokes = [a for a in table.snap()["alerts"] if a["kind"] == "revoke"]
    assert [a["message"] for a in revokes] == ["Bea revoked in trick 1: held 5S when spades were led"]
    assert revokes[0]["seat"] == "Bea" and not revokes[0]["needs_confirmation"]
    assert table.outputs.alarms == 1
    assert table.outputs.seats[1] == "flash"
    assert table.snap()["status"]["state"] == "attention"
    assert table.ref.stats["revokes_caught"] == 1


def test_out_of_turn_card_holds_until_confirmed(table):
    start_deal(table)
    table.card("Cal", "QS")  # Ann is to lead
    snap = table.snap()
    alert = snap["alerts"][-1]
    assert alert["kind"] == "out_of_turn" and alert["needs_confirmation"]
    assert "Cal played QS out of turn (Ann is to play)" == alert["message"]
    assert snap["status"]["state"] == "attention"
    seq = table.ledger.last_seq()
    table.card("Ann", "KS")  # arrives during the hold: kept back, nothing written
    assert table.ledger.last_seq() == seq
    with pytest.raises(ValueError, match="not waiting"):
        table.ref.call("confirm_card", {"alert_id": alert["id"] + 100})
    table.ref.call("confirm_card", {"alert_id": alert["id"]})
    table.card("Bea", "2C")
    # Cal's card lay there all along: it counts when Cal's turn comes
    assert [(p["player"], p["card"]) for p in table.snap()["trick"]["plays"]] == [
        ("Ann", "KS"), ("Bea", "2C"), ("Cal", "QS")]
    assert table.ref.state.deal.to_act == "Dot"
    assert "Cal:ooturn:QS" in [str(e.action) for e in table.ref.state.entries]


def test_unsure_card_is_held_and_corrected_on_the_dashboard(table):
    start_deal(table)
    table.card("Ann", None, kind="card_unsure", top3=[("KC", 0.41), ("KS", 0.38), ("QS", 0.1)])
    alert = table.snap()["alerts"][-1]
    assert alert["kind"] == "unsure" and alert["card"] == "KC" and alert["top3"][1] == ["KS", 0.38]
    with pytest.raises(ValueError, match="not a card"):
        table.ref.call("correct_card", {"alert_id": alert["id"], "card": "ZZ"})
    table.ref.call("correct_card", {"alert_id": alert["id"], "card": "KS"})
    assert [str(e.action) for e in table.ref.state.entries][-1] == "Ann:KS"
    assert table.ref.stats["corrections"] == 1
    assert table.snap()["status"]["state"] == "ready"


def test_correcting_a_misread_card_rewrites_the_deal_and_withdraws_a_revoke(table):
    start_deal(table)
    for p, c in REVOKE_DEAL[:11]:
        table.card(p, c)
    assert any(a["kind"] == "revoke" for a in table.snap()["alerts"])
    seq = table.ledger.last_seq()
    # the camera misread Bea's trick-1 card: it was 4S (she followed), so no revoke
    table.ref.call("correct_card", {"card": "4S", "trick": 1, "player": "Bea"})
    assert not any(a["kind"] == "revoke" for a in table.snap()["alerts"])
    ev = table.ledger.events(since=seq)
    assert [e.kind for e in ev] == ["correct"]
    assert table.snap()["trick"]["plays"][0] == {"player": "Dot", "card": "8C"}
    with pytest.raises(ValueError, match="has no card in trick 3"):
        table.ref.call("correct_card", {"card": "4S", "trick": 3, "player": "Cal"})


def test_dealer_hold_undoes_the_last_event(table):
    start_deal(table)
    table.card("Ann", "KS")
    table.dealer("hold")
    assert table.snap()["trick"] is None and table.ref.state.deal.to_act == "Ann"
    assert table.ledger.events()[-1].kind == "undo"
    table.card("Ann", "KH")
    assert table.snap()["trick"]["plays"] == [{"player": "Ann", "card": "KH"}]


def test_refused_declaration_changes_nothing_and_says_why(table):
    table.dealer()
    table.card("turn_up", "7H")
    seq = table.ledger.last_seq()
    table.press("Ann", "hold")  # pass is refused in a forced first deal
    assert table.ledger.last_seq() == seq
    assert "pass" in table.snap()["alerts"][-1]["message"]
    table.press("Bea")  # not Bea's turn: ignored
    assert table.ledger.last_seq() == seq


def test_pause_keeps_cards_back_until_resume(table):
    start_deal(table)
    table.ref.call("pause", {})
    assert table.snap()["status"]["state"] == "paused"
    table.card("Ann", "KS")
    assert table.snap()["trick"] is None
    table.ref.call("resume", {})
    assert table.snap()["trick"]["plays"] == [{"player": "Ann", "card": "KS"}]


def test_camera_loss_keeps_the_game_and_recovers(table):
    start_deal(table)
    table.card("Ann", "KS")
    before = table.ref.state.digest()
    table.ref.step(CameraStatus(False, "camera unplugged; retrying"))
    snap = table.snap()
    assert snap["status"] == {"state": "fault", "message": "camera unplugged; retrying"}
    assert snap["alerts"][-1]["kind"] == "camera" and table.outputs.status == "fault"
    assert table.ref.state.digest() == before
    table.ref.step(CameraStatus(True))
    table.card("Bea", "2C")
    assert table.snap()["status"]["state"] == "ready"
    assert not [a for a in table.snap()["alerts"] if a["kind"] == "camera"]
    assert len(table.snap()["trick"]["plays"]) == 2


def test_a_card_seen_twice_is_played_once(table):
    start_deal(table)
    table.card("Ann", "KS")
    table.card("Ann", "KS")
    table.card("Bea", "KS")  # the same card dragged through Bea's zone while gathering
    assert len(table.ref.state.entries) == 6  # turn-up, 4 declarations, one play


def test_restart_replays_to_the_same_state(tmp_path):
    from conftest import Table

    t = Table(tmp_path / "l.db")
    start_deal(t)
    for p, c in REVOKE_DEAL[:11]:
        t.card(p, c)
    digest, snap = t.ref.state.digest(), t.snap()
    t.close()
    again = Referee(Ledger(tmp_path / "l.db"))
    assert again.state.digest() == digest == TableState.replay(again.ledger.events()).digest()
    snap2 = again.snapshot()
    for key in ("phase", "pool", "trick", "deal_number", "turn_up"):
        assert snap2[key] == snap[key]
    assert [dict(s, light=None) for s in snap2["seats"]] == [dict(s, light=None) for s in snap["seats"]]
    assert [a["message"] for a in snap2["alerts"] if a["kind"] == "revoke"] == [
        "Bea revoked in trick 1: held 5S when spades were led"]
    again.ledger.close()


def test_ledger_failure_stops_the_referee(table):
    start_deal(table)
    con = table.ledger._con
    pages = con.execute("PRAGMA page_count").fetchone()[0]
    con.execute(f"PRAGMA max_page_count={pages}")
    with pytest.raises(ValueError, match="not written"):  # the ledger's file fills up
        for _ in range(500):
            table.ref.call("adjust_chips", {"player": "Ann", "delta": 5, "reason": "x" * 200})
    snap = table.snap()
    assert snap["status"]["state"] == "fault" and "disk is full" in snap["status"]["message"]
    before = table.ref.state.digest()
    table.card("Ann", "KS")  # not accepted any more
    assert table.ref.state.digest() == before
    with pytest.raises(ValueError, match="stopped accepting"):
        table.ref.call("pause", {})


def test_leds_on_real_mock_pins(tmp_path):
    from conftest import Table

    factory = MockFactory(pin_class=MockPWMPin)
    cfg = parse_config({})
    controls = TableControls.from_config(cfg.pins, 4, pin_factory=factory)
    try:
        t = Table(tmp_path / "l.db", outputs=controls)
        t.dealer()
        t.card("turn_up", "7H")
        assert factory.pin(cfg.pins.seat_leds[0]).state  # Ann declares first: lit
        assert controls.seats[1].light == "blink" and controls.seats[0].light == "on"
        assert controls.status.state == "ready"
        for p in ["Ann", "Bea", "Cal", "Dot"]:
            t.press(p)
        assert [s.light for s in controls.seats] == ["on", "off", "off", "off"]
        t.close()
    finally:
        controls.close()
        factory.reset()


def test_the_referee_thread_takes_presses_from_gpiozero_and_commands_from_elsewhere(tmp_path):
    from conftest import Table

    factory = MockFactory()
    cfg = parse_config({})
    t = Table(tmp_path / "l.db")
    controls = TableControls.from_config(cfg.pins, 4, on_event=t.ref.submit, double_press=False,
                                         pwm=False, pin_factory=factory)
    t.ref.outputs = controls
    t.ref.start()
    try:
        pin = factory.pin(cfg.pins.dealer_button)
        pin.drive_low()
        time.sleep(0.05)  # a press outlasts the 20 ms debounce
        pin.drive_high()
        deadline = time.monotonic() + 3
        while t.ref.state.deal_number != 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert t.ref.state.deal_number == 1
        result: dict = {}
        th = threading.Thread(target=lambda: result.update(t.ref.call("pause", {})))
        th.start()
        th.join(3)
        assert result["ok"] and t.ref.state.paused
    finally:
        t.ref.stop()
        controls.close()
        factory.reset()
        t.close()


def test_button_event_from_unknown_seat_is_ignored(table):
    table.dealer()
    table.ref.step(ButtonEvent("seat", "press", 9, 1.0))
    assert table.snap()["phase"] == "turn_up"


def test_adjust_chips_during_a_deal_counts_after_it(table):
    start_deal(table)
    table.ref.call("adjust_chips", {"player": "Cal", "delta": 20, "reason": "bought in"})
    assert table.chips()["Cal"] == 120
    for p, c in REVOKE_DEAL:
        table.card(p, c)
    table.dealer()  # close deal 1, start deal 2
    st = table.ref.state
    assert st.balances["Cal"] == 101 + 20 and st.total_in == 420
    assert st.total_chips() == 420


def test_undoing_the_deal_start_gives_the_ante_back(table):
    table.dealer()
    assert table.chips()["Dot"] == 97
    table.dealer("hold")
    snap = table.snap()
    assert snap["phase"] == "waiting" and snap["deal_number"] == 0 and table.chips()["Dot"] == 100
    table.dealer()
    assert table.snap()["deal_number"] == 1


def test_ending_the_game_mid_deal_abandons_it(table):
    start_deal(table)
    table.card("Ann", "KS")
    table.ref.call("end_game", {})
    snap = table.snap()
    assert snap["game_over"] and snap["deal_number"] == 0 and table.chips() == dict.fromkeys(
        ["Ann", "Bea", "Cal", "Dot"], 100)
    table.dealer()  # no new deal after the end
    assert table.snap()["deal_number"] == 0 and table.snap()["alerts"][-1]["kind"] == "game_over"


def test_a_retried_button_event_is_applied_once(table):
    table.dealer()
    table.card("turn_up", "7H")
    ev = ButtonEvent("seat", "press", 0, 123.0)
    table.ref.step(ev)
    seq = table.ledger.last_seq()
    table.ref.step(ev)  # the same gesture delivered twice (same timestamp, same key)
    assert table.ledger.last_seq() == seq
    assert table.ref.state.deal.to_act == "Bea"


def test_defended_miss_and_take_miss_by_gestures(tmp_path):
    from conftest import Table

    t = Table(tmp_path / "l.db")
    # deal 1 (forced) played out quickly so that deal 2 is not forced
    start_deal(t)
    for p, c in REVOKE_DEAL:
        t.card(p, c)
    t.dealer()  # deal 2: dealer Ann, eldest Bea; the pool is not the ante alone
    assert t.ref.state.deal_info["dealer"] == "Ann"
    t.card("turn_up", "2S")
    t.press("Bea", "double")  # takes the miss
    t.press("Cal", "hold")  # passes
    t.press("Dot", "hold")  # passes
    decl = t.ref.state.deal.declarations
    assert decl == {"Bea": "take_miss", "Cal": "pass", "Dot": "pass"}
    t.press("Ann")  # the dealer plays against the miss-taker
    assert t.ref.state.deal.phase == "play"
    t.close()


def test_irish_exchange_by_presses(tmp_path):
    from conftest import Table

    t = Table(tmp_path / "l.db", variant="irish", options={"club_law": False})
    t.dealer()
    t.card("turn_up", "7H")
    for p in ["Ann", "Bea", "Cal", "Dot"]:
        t.press(p)
    assert t.ref.state.deal.phase == "exchange"
    t.press("Ann")
    t.press("Ann")
    t.press("Ann", "hold")  # two cards exchanged, done
    t.press("Bea", "hold")  # stands pat
    entries = [str(e.action) for e in t.ref.state.entries]
    assert entries[-2:] == ["Ann:x2", "Bea:x0"]
    t.close()


def test_a_bug_in_one_item_does_not_stop_the_referee(table, monkeypatch):
    def boom(ev):
        raise RuntimeError("simulated bug")

    start_deal(table)
    monkeypatch.setattr(table.ref.inputs, "_vision", boom)
    table.card("Ann", "KS")  # hits the bug
    assert table.snap()["alerts"][-1]["kind"] == "error"
    monkeypatch.undo()
    table.card("Ann", "KS")
    assert table.snap()["trick"]["plays"] == [{"player": "Ann", "card": "KS"}]


def test_state_clone_is_independent(table):
    from table.state import TableState

    start_deal(table)
    for p, c in REVOKE_DEAL:
        table.card(p, c)
    st = table.ref.state
    digest = st.digest()
    clone = st.clone()

    class Ev:
        def __init__(self, seq, kind, data):
            self.seq, self.kind, self.data = seq, kind, data

    clone.apply(Ev(st.last_seq + 1, "deal_closed", {"number": 1}))
    clone.apply(Ev(st.last_seq + 2, "deal_started", {"number": 2, "dealer": "Ann"}))
    clone.apply(Ev(st.last_seq + 3, "adjust_chips", {"player": "Bea", "delta": 3, "reason": "x"}))
    assert st.digest() == digest and st.deal.is_over and not st.finished
    assert clone.deal_number == 2 and len(clone.finished) == 1
    assert TableState.replay(table.ledger.events()).digest() == digest


def test_undoing_an_out_of_turn_confirmation_forgets_the_card(table):
    start_deal(table)
    table.card("Cal", "QS")
    table.ref.call("confirm_card", {"alert_id": table.snap()["alerts"][-1]["id"]})
    assert table.ref.pending_plays
    table.ref.call("undo", {})
    assert not table.ref.pending_plays
    table.card("Ann", "KS")
    table.card("Bea", "2C")
    assert table.ref.state.deal.to_act == "Cal"  # nothing was played for Cal


def test_presses_after_a_restart_are_not_taken_for_old_ones(tmp_path):
    """Button timestamps restart with the process (a reboot resets the monotonic clock): a new
    press that shares seat, gesture and timestamp with one from before must still count."""
    from conftest import Table

    t = Table(tmp_path / "l.db")
    start_deal(t)
    pressed = {e.key for e in t.ledger.events() if e.key.startswith("button:")}
    for p, c in REVOKE_DEAL:
        t.card(p, c)
    t.close()

    again = Table(tmp_path / "l.db")  # its clock starts from zero again
    again.dealer()  # deal 2: dealer Ann, eldest Bea
    again.card("turn_up", "2D")
    assert again.ref.state.deal.to_act == "Bea"
    again.t = 3.0  # Bea's next press gets the timestamp her press of deal 1 had
    seq = again.ledger.last_seq()
    again.press("Bea")
    assert again.ledger.last_seq() == seq + 1
    assert again.ref.state.deal.to_act == "Cal"
    assert not pressed & {e.key for e in again.ledger.events()[-1:]}
    again.close()


def test_a_known_card_never_played_makes_the_referee_ask_the_host(tmp_path):
    """§10.5: Dot took the turn-up 7H; the camera reads his last card as 8C. The play is refused
    (no revoke is built on 7H), the host sees why, and the right card then counts."""
    from conftest import Table

    t = Table(tmp_path / "turnup.db", options={"dealer_takes_turnup": True})
    try:
        start_deal(t)
        for p, c in REVOKE_DEAL[:8]:  # Dot won trick 2 and leads trick 3 with his last card
            t.card(p, c)
        t.card("Dot", "8C")
        refused = [a["message"] for a in t.snap()["alerts"] if a["kind"] == "refused"]
        assert refused and "Dot cannot play 8C: he is known to hold 7H" in refused[-1]
        assert t.snap()["trick"]["number"] == 2  # nothing was played
        t.ref.call("correct_card", {"card": "7H", "zone": "seat:3"})
        assert t.snap()["trick"]["plays"] == [{"player": "Dot", "card": "7H"}]
    finally:
        t.close()
