"""Naming the seats: between deals a seat's button only says which seat it is (its light
flashes, the Admin page names it), so the host checks the wiring and the seat order."""

from __future__ import annotations

from conftest import Table

from table.alerts import FLASH_SECONDS
from table.referee import Tick


def test_a_press_between_deals_names_the_seat_and_flashes_its_light(tmp_path):
    now = [100.0]
    table = Table(tmp_path / "ledger.db", clock=lambda: now[0])
    table.press(2)
    snap = table.snap()
    assert snap["seat_check"] == {"seat": 2, "player": "Cal"}
    assert table.outputs.seats == {2: "flash"}
    assert table.ref.state.deal_number == 0 and list(table.ledger.iter_events())[-1].kind == "game_started"
    table.press(0)
    assert table.snap()["seat_check"] == {"seat": 0, "player": "Ann"}
    now[0] += FLASH_SECONDS + 0.1
    table.ref.step(Tick(now[0]))
    assert table.outputs.seats == {}  # the flash is over
    table.close()


def test_a_wired_seat_nobody_sits_at_and_the_deal_ends_it(table):
    table.press(6)  # a wired seat beyond the players
    assert table.snap()["seat_check"] == {"seat": 6, "player": None}
    table.dealer()
    assert table.snap()["seat_check"] is None
    table.card("turn_up", "7H")
    table.press("Ann")  # during the deal a press is a declaration again
    assert table.ref.state.deal.declarations == {"Ann": "play"}
