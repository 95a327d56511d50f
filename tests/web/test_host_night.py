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
