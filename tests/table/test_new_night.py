"""A new night from the phone: tonight's ledger, photos and learned deck are kept in nights/,
the next night starts at the same path with the players and rules chosen, and a restart finds
the new night (no ledger.db moved by hand, no config players that a ledger ignores)."""

from __future__ import annotations

import pytest

from table.audit import verify
from table.ledger import Ledger
from table.new_night import archive_night, kept_nights
from table.photos import PhotoStore, photos_dir
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


def test_tonight_is_kept_and_the_next_night_begins(table):
    _deal(table)
    table.ref.call("set_zones", {"zones": {"stock": {"x": 600, "y": 600, "width": 120, "height": 120}}})
    photo = PhotoStore.for_ledger(table.path).save(b"\xff\xd8 tonight's photo")
    reply = table.ref.call("new_night", NEXT)
    assert "kept as nights/night-" in reply["message"] and "Eve, Fay, Gus" in reply["message"]
    [kept] = kept_nights(table.path)
    assert PhotoStore(photos_dir(kept)).read(photo) is not None  # the photos went with it
    with Ledger(kept, readonly=True) as old:
        report = verify(old)
        kinds = [e.kind for e in old.iter_events()]
    assert report["ok"], report["problems"]
    assert kinds[0] == "game_started" and "deal_closed" in kinds  # the finished deal was closed first
    st = table.ref.state
    assert st.players == ["Eve", "Fay", "Gus"] and st.variant == "irish" and st.deal_number == 0
    assert st.starting_chips == 40 and st.chip_value == "0.25"
    assert st.zones["stock"]["x"] == 600  # the zones the host drew stay with the table
    assert [e.kind for e in table.ref.ledger.iter_events()] == ["game_started", "zones"]
    assert table.snap()["alerts"] == [] and [s["name"] for s in table.snap()["seats"]] == ["Eve", "Fay", "Gus"]
    table.dealer()  # the new night deals
    assert table.ref.state.deal_number == 1 and table.ref.state.deal_info["dealer"] == "Eve"
    table.ref.ledger.close()
    again = Referee(Ledger(table.path), setup={"players": ["Ann", "Bea", "Cal"], "variant": "three_card",
                                               "options": {}, "chips": 100, "first_dealer": 0})
    assert again.state.players == ["Eve", "Fay", "Gus"]  # a restart finds the new night
    again.ledger.close()


def test_not_in_the_middle_of_a_deal_and_not_a_table_the_rules_refuse(table):
    table.dealer()
    table.card("turn_up", "7H")
    with pytest.raises(Refused, match="a deal is in progress"):
        table.ref.call("new_night", NEXT)
    with pytest.raises(Refused, match="players"):
        table.ref.call("new_night", {"players": ["Eve"], "variant": "irish"})
    assert kept_nights(table.path) == [] and table.ref.state.players == table.players
    for name in table.players:
        table.press(name)
    for name, card in DEAL:
        table.card(name, card)
    with pytest.raises(Refused, match="is for"):  # Irish Loo is for 3 or more: tried before anything moves
        table.ref.call("new_night", {"players": ["Eve", "Fay"], "variant": "irish"})
    assert kept_nights(table.path) == [] and table.ref.state.deal.is_over


def test_two_nights_kept_in_one_second_keep_both(tmp_path):
    import datetime as dt

    now = dt.datetime(2026, 11, 28, 23, 0, tzinfo=dt.UTC)
    for i in range(2):
        with Ledger(tmp_path / "ledger.db") as led:
            led.append("pause", {"i": i})
        archive_night(tmp_path / "ledger.db", now=now)
    kept = kept_nights(tmp_path / "ledger.db")
    assert [p.name for p in kept] == ["night-20261128T230000Z-1.db", "night-20261128T230000Z.db"]
    assert not (tmp_path / "ledger.db").exists()
