"""A new night from the phone with the players and rules chosen: once tonight is over, the next
night starts in the same ledger (tonight kept for the Nights page, photos and all), and a restart
finds the new night (no ledger.db moved by hand, no config players that a ledger ignores)."""

from __future__ import annotations

import pytest

from table.ledger import Ledger
from table.photos import PhotoStore
from table.referee import Referee, Refused

# Dealer Dot, trumps hearts: a whole deal of four players.
DEAL = [("Ann", "KS"), ("Bea", "2C"), ("Cal", "QS"), ("Dot", "3S"),
        ("Ann", "4D"), ("Bea", "6D"), ("Cal", "9D"), ("Dot", "KD"),
        ("Dot", "8C"), ("Ann", "9C"), ("Bea", "5S"), ("Cal", "10C")]
NEXT = {"players": ["Eve", "Fay", "Gus"], "variant": "irish", "starting_chips": 40, "chip_value": "0.25"}


def _deal(table) -> None:
    table.dealer()
    table.card("turn_up", "7H")
    for name in table.players:
        table.press(name)
    for name, card in DEAL:
        table.card(name, card)
    assert table.ref.state.deal.is_over


def test_the_next_night_starts_with_the_players_and_rules_chosen(table):
    _deal(table)
    table.ref.call("set_zones", {"zones": {"stock": {"x": 600, "y": 600, "width": 120, "height": 120}}})
    photo = PhotoStore.for_ledger(table.path).save(b"\xff\xd8 tonight's photo")
    with pytest.raises(Refused, match="end the game first"):
        table.ref.call("new_night", NEXT)
    table.ref.call("end_game", {})
    reply = table.ref.call("new_night", NEXT)
    assert reply["message"].startswith("A new night: night 2 for Eve, Fay, Gus, 40 chips each")
    st = table.ref.state
    assert st.players == ["Eve", "Fay", "Gus"] and st.variant == "irish" and st.deal_number == 0
    assert st.starting_chips == 40 and st.chip_value == "0.25"
    assert st.zones["stock"]["x"] == 600  # the zones the host drew stay with the table
    assert [n["players"] for n in st.nights] == [["Ann", "Bea", "Cal", "Dot"]]  # tonight is kept
    assert PhotoStore.for_ledger(table.path).read(photo) is not None  # and its photos
    table.dealer()
    assert table.ref.state.deal_number == 1 and table.ref.state.deal_info["dealer"] == "Eve"
    table.ledger.close()
    again = Referee(Ledger(table.path), setup={"players": ["Ann", "Bea", "Cal"], "variant": "three_card",
                                               "options": {}, "chips": 100, "first_dealer": 0})
    assert again.state.players == ["Eve", "Fay", "Gus"] and len(again.state.nights) == 1  # a restart finds it
    again.ledger.close()


def test_rules_kept_or_chosen_and_a_table_the_rules_refuse(table):
    table.ref.call("update_settings", {"variant": "three_card", "options": {"club_law": True}})
    table.ref.call("end_game", {})
    with pytest.raises(Refused, match="players"):
        table.ref.call("new_night", {"players": ["Eve"]})
    with pytest.raises(Refused, match="options need the variant"):
        table.ref.call("new_night", {"options": {"club_law": False}})
    with pytest.raises(Refused, match="is for|at least|players"):  # Irish Loo is for 3 or more
        table.ref.call("new_night", {"players": ["Eve", "Fay"], "variant": "irish"})
    assert table.ref.state.game_over and len(table.ref.state.nights) == 0  # nothing changed
    table.ref.call("new_night", {"players": ["Ann", "Bea", "Cal", "Eve"], "first_dealer": 2})
    st = table.ref.state
    assert st.players == ["Ann", "Bea", "Cal", "Eve"] and st.options.get("club_law") is True
    assert st.dealer_name() == "Cal"


def test_a_change_still_waiting_when_the_night_ends_is_called_off_in_the_ledger(table):
    """A join asked during the night's last deal waits for a next deal that never comes: a new
    night calls it off in the same write, says so, and does not carry it into the next night."""
    table.dealer()
    table.card("turn_up", "7H")
    for name in table.players:
        table.press(name)
    for name, card in DEAL[:4]:
        table.card(name, card)
    assert "from the next deal" in table.ref.call("add_player", {"player": "Eve", "chips": 50})["message"]
    for name, card in DEAL[4:]:
        table.card(name, card)
    table.ref.call("end_game", {})
    asked = next(iter(table.ref.state.queued))
    with pytest.raises(Refused):
        table.ref.call("new_night", {"players": ["Eve"]})
    assert list(table.ref.state.queued) == [asked]  # a refused new night calls nothing off
    reply = table.ref.call("new_night", {})
    assert reply["message"].endswith("Not carried over (asked for a next deal that never came): "
                                     "Eve joins with 50 chips.")
    assert not table.ref.state.queued and "Eve" not in table.ref.state.players
    kinds = [(e.kind, e.data.get("target")) for e in table.ledger.events()][-2:]
    assert kinds == [("change_cancelled", asked), ("game_started", None)]
