"""A late joiner through the real controller: the referee checks the join against the engine, the
ledger keeps it across a restart, the results still sum to zero, and a seat without a button
plays from the dashboard."""

from __future__ import annotations

import pytest

from table.ledger import Ledger
from table.referee import Referee
from table.service import TableService
from table.simulate import DirectTransport, VirtualPlayers, run_night
from web import create_app

PLAYERS = ["Ann", "Bea", "Cal", "Dot"]
SETUP = {"players": PLAYERS, "variant": "three_card", "options": {}, "chips": 100, "first_dealer": 0,
         "chip_value": "0.10"}


@pytest.fixture
def night(tmp_path):
    ledger = Ledger(tmp_path / "ledger.db")
    ref = Referee(ledger, setup=SETUP)
    bots = VirtualPlayers(11)
    ref.vet = bots.vet
    yield ref, bots, DirectTransport(ref), TableService(ref), tmp_path
    ledger.close()


def between_deals(ref, bots, transport) -> None:
    """Play until a deal is over (its last trick played; the dealer's next press would close it
    and start the next): the moment a newcomer sits down."""
    while not (ref.state.deal is not None and ref.state.deal.is_over):
        run_night(ref, bots, transport, max_steps=1)


def test_a_joiner_sits_down_plays_and_the_night_still_sums_to_zero(night):
    ref, bots, transport, service, tmp = night
    between_deals(ref, bots, transport)
    total = ref.state.total_chips()
    answer = service.command("add_player", {"player": "Eve", "chips": 60})
    assert answer["message"] == ("Eve joins with 60 chips in seat 5, between Dot and Ann, "
                                 "and is dealt in from the next deal.")
    assert ref.state.players == [*PLAYERS, "Eve"] and ref.state.total_chips() == total + 60
    seat = ref.snapshot()["seats"][4]
    assert (seat["index"], seat["name"], seat["chips"], seat["button"]) == (4, "Eve", 60, True)
    assert service.chips_in()["Eve"] == 60
    deals_before = len(ref.state.finished)
    run_night(ref, bots, transport, max_deals=deals_before + 6)
    assert ref.state.game_over
    assert any("Eve" in f["record"]["players"] for f in ref.state.finished)
    assert all(len(v) == len(ref.state.chip_history["Ann"]) for v in ref.state.chip_history.values())
    app = create_app(service, config={"STATE_DIR": tmp / "web", "ADMIN_PIN": "000000"})
    result = app.test_client().get("/api/settlement").get_json()
    net = {r["player"]: r["chips"] for r in result["net"]}
    assert result["in_pool"] == 0 and sum(net.values()) == 0
    assert net == {p: ref.state.balances[p] - service.chips_in()[p] for p in [*PLAYERS, "Eve"]}
    paid = dict.fromkeys(net, 0)
    for t in result["transfers"]:
        paid[t["from"]] -= t["chips"]
        paid[t["to"]] += t["chips"]
    assert paid == net


def test_a_join_in_the_middle_of_a_deal_waits_for_the_next_deal(night):
    ref, bots, transport, service, _ = night
    run_night(ref, bots, transport, max_steps=4)
    assert ref.state.deal is not None and not ref.state.deal.is_over
    said = service.command("add_player", {"player": "Eve", "chips": 50})["message"]
    assert said.startswith("Eve joins with 50 chips from the next deal (deal 2): asked while deal 1 is played")
    assert ref.state.players == PLAYERS  # the deal in play keeps its players
    with pytest.raises(ValueError, match="'Eve' is already at the table or waiting to join"):
        service.command("add_player", {"player": "eve", "chips": 50})
    while ref.state.deal_number == 1:  # ... until the dealer's press: deal 1 closed, Eve seated, deal 2
        run_night(ref, bots, transport, max_steps=1)
    assert ref.state.players == [*PLAYERS, "Eve"] and ref.state.deal_number == 2 and not ref.state.queued


@pytest.mark.parametrize(("payload", "match"), [
    ({"player": "bea", "chips": 50}, "'Bea' is already at the table"),
    ({"player": "Eve", "chips": 0}, "chips must be between 1 and"),
    ({"player": "MISS", "chips": 5}, "reserved for the miss"),
    ({"player": "", "chips": 5}, "player must be a non-empty string"),
])
def test_bad_joiners_are_refused_with_one_sentence(night, payload, match):
    ref, _, _, service, _ = night
    seq = ref.state.last_seq
    with pytest.raises(ValueError, match=match):
        service.command("add_player", payload)
    assert ref.state.last_seq == seq and ref.state.players == PLAYERS


def test_the_table_seats_at_most_eight(night):
    ref, _, _, service, _ = night
    for name in ("Eve", "Fay", "Gus", "Hal"):
        service.command("add_player", {"player": name, "chips": 10})
    with pytest.raises(ValueError, match="^the table is full: it seats at most 8 players$"):
        service.command("add_player", {"player": "Ivy", "chips": 10})
    assert len(ref.state.players) == 8


def test_a_finished_deal_is_closed_before_the_join(night):
    ref, bots, transport, service, _ = night
    between_deals(ref, bots, transport)
    service.command("add_player", {"player": "Eve", "chips": 30})
    assert ref.state.deal is None and len(ref.state.finished) == 1
    assert "Eve" not in ref.state.finished[0]["record"]["players"]


def test_a_restart_after_a_join_restores_the_same_seats_and_balances(tmp_path):
    ledger = Ledger(tmp_path / "ledger.db")
    ref = Referee(ledger, setup=SETUP)
    bots, transport = VirtualPlayers(4), DirectTransport(ref)
    ref.vet = bots.vet
    between_deals(ref, bots, transport)
    ref.call("add_player", {"player": "Eve", "chips": 75})
    ref.call("adjust_chips", {"player": "Eve", "delta": 25, "reason": "bought 25 more chips"})
    run_night(ref, bots, transport, max_steps=40)  # into a later deal, Eve dealt in
    before = (ref.state.players, ref.state.chips(), ref.state.digest(), TableService(ref).chips_in())
    ledger.close()

    again = Referee(Ledger(tmp_path / "ledger.db"), setup=SETUP)  # the setup applies to a new ledger only
    after = (again.state.players, again.state.chips(), again.state.digest(), TableService(again).chips_in())
    assert after == before and after[3]["Eve"] == 100
    records = [f["record"] for f in again.state.finished]
    from engine.game import Game

    assert list(Game.replay(records).players) == list(again.state.game.players)
    run_night(again, bots, DirectTransport(again), max_deals=len(again.state.finished) + 3)  # plays on
    again.ledger.close()


def test_a_seat_without_a_button_declares_from_the_dashboard(night):
    ref, bots, transport, service, _ = night
    ref.buttons = 4  # the header wires four seats
    between_deals(ref, bots, transport)
    message = service.command("add_player", {"player": "Eve", "chips": 50})["message"]
    assert message.endswith("seat 5 has no button, so Eve declares on this page when it is their turn.")
    assert [s["button"] for s in ref.snapshot()["seats"]] == [True] * 4 + [False]
    while not (ref.state.deal is not None and ref.state.deal.phase == "declare"
               and ref.state.deal.to_act == "Eve"):
        who = ref.state.deal.to_act if ref.state.deal is not None else None
        if who is not None and who != "Eve" and ref.state.deal.phase == "declare":
            with pytest.raises(ValueError, match="^it is not Eve's turn$"):
                service.command("seat_button", {"player": "Eve", "gesture": "press"})
        run_night(ref, bots, transport, max_steps=1)
    service.command("seat_button", {"player": "Eve", "gesture": "press"})
    assert ref.state.deal.declarations["Eve"] == "play"
    with pytest.raises(ValueError, match="gesture must be one of press, hold, double"):
        service.command("seat_button", {"player": "Eve", "gesture": "tap"})
