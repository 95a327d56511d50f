"""The host's night, second pass (issue 48), through the real referee and ledger (no browser):
chip entries checked against what a player holds, undone or changed with a trace in the ledger,
and a restart that replays them to the same night."""

from __future__ import annotations

import pytest

from table.commands.ledger import verify
from table.ledger import Ledger
from table.referee import Referee
from table.service import TableService
from table.simulate import DirectTransport, VirtualPlayers, run_night
from table.state import TableState

PLAYERS = ["Ann", "Bea", "Cal", "Dot"]


def night(tmp_path, seed=3):
    ledger = Ledger(tmp_path / "ledger.db")
    ref = Referee(ledger, setup={"players": PLAYERS, "variant": "three_card", "options": {}, "chips": 100,
                                 "first_dealer": 0})
    players = VirtualPlayers(seed)
    ref.vet = players.vet
    return ledger, ref, players, DirectTransport(ref)


def test_chip_entries_are_bounded_undone_changed_and_replayed(tmp_path):
    ledger, ref, players, transport = night(tmp_path)
    run_night(ref, players, transport, max_steps=6)  # mid-deal: antes are out
    service = TableService(ref)
    held = ref.state.chips()["Bea"]
    before = (ref.state.last_seq, ref.state.digest())
    with pytest.raises(ValueError, match=f"^Bea holds {held} chips, so at most {held} can be taken off, not 5000$"):
        service.command("adjust_chips", {"player": "Bea", "delta": -5000, "reason": "cashed out"})
    assert (ref.state.last_seq, ref.state.digest()) == before
    rebuy = service.command("adjust_chips", {"player": "Ann", "delta": 20, "reason": "bought 20 more chips"})
    cash = service.command("adjust_chips", {"player": "Bea", "delta": -30, "reason": "cashed out 30 chips"})
    log = ref.snapshot()["chip_log"]
    assert [(e["player"], e["delta"]) for e in log] == [("Bea", -30), ("Ann", 20)]
    bea, ann = log[0]["seq"], log[1]["seq"]
    assert service.command("amend_chips", {"target": bea, "delta": 0})["message"] == "Undid Bea's cash-out of 30 chips."
    assert service.command("amend_chips", {"target": ann, "delta": 5})["message"] == "Changed Ann's rebuy of 20 chips to +5."
    with pytest.raises(ValueError, match="already"):
        service.command("amend_chips", {"target": ann, "delta": 5})
    with pytest.raises(ValueError, match="not in tonight's ledger"):
        service.command("amend_chips", {"target": 1, "delta": 0})
    with pytest.raises(ValueError, match="at most"):  # an amendment cannot take off more than is held either
        service.command("amend_chips", {"target": bea, "delta": -5000})
    assert rebuy["message"].startswith("Ann +20") and cash["message"].startswith("Bea -30")
    assert service.chips_in() == {"Ann": 105, "Bea": 100, "Cal": 100, "Dot": 100}
    run_night(ref, players, transport, max_deals=2)
    st = ref.state
    assert sum(st.balances.values()) + st.pool == sum(service.chips_in().values())
    again = TableState.replay(ledger.iter_events())
    assert again.digest() == st.digest() and again.chips_in() == st.chips_in()
    assert verify(ledger)["ok"]
    ledger.close()


def test_undo_after_fixes_restores_each_card_in_turn_and_replays(tmp_path):
    ledger, ref, players, transport = night(tmp_path)
    for _ in range(200):
        deal = ref.state.deal
        if deal is not None and deal.phase == "play" and deal.current_trick:
            break
        run_night(ref, players, transport, max_steps=1)
    service = TableService(ref)
    player, played = ref.state.deal.current_trick[0]
    hand = [c for c in players.shadow(ref.state).hand(player) if c != played]
    service.command("correct_card", {"trick": 1, "player": player, "card": str(hand[0])})
    service.command("correct_card", {"trick": 1, "player": player, "card": str(hand[1])})
    assert service.command("undo", {})["message"] == f"Undid the fix of {player}'s card: back to {hand[0]}."
    assert ref.state.deal.current_trick[0] == (player, hand[0])
    assert service.command("undo", {})["message"] == f"Undid the fix of {player}'s card: back to {played}."
    assert ref.state.deal.current_trick[0] == (player, played)
    assert TableState.replay(ledger.iter_events()).digest() == ref.state.digest()
    assert service.command("undo", {})["message"] == f"Undid {player}'s {played}."  # then the card itself
    assert not ref.state.deal.current_trick
    ledger.close()


def test_docs_and_code_agree_on_how_many_players_sit_down():
    """docs/api.md said 2-17 players while the code took 3-16: one figure, the code's."""
    from pathlib import Path

    from engine import Options
    from table.config import MAX_SEATS
    from web.validate import MAX_PLAYERS, MIN_PLAYERS

    api = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    three = Options.for_variant("three_card")
    assert MAX_PLAYERS == MAX_SEATS
    assert f"`players`: {MIN_PLAYERS}–{MAX_PLAYERS} different names" in api
    assert f"{three.players_min}–{three.players_max} for three-card Loo by default" in api
    assert f"({MAX_SEATS} on the default header" in api
    assert "2–17" not in api


def test_a_second_night_in_the_same_ledger_keeps_the_first_and_replays(tmp_path):
    ledger, ref, players, transport = night(tmp_path)
    service = TableService(ref)
    service.command("update_settings", {"currency": "€"})
    with pytest.raises(ValueError, match="the night is not over"):
        service.command("new_night", {})
    run_night(ref, players, transport)  # the whole night, to its end
    assert ref.state.game_over
    first = {p: ref.state.balances[p] - service.chips_in()[p] for p in PLAYERS}
    said = service.command("new_night", {})["message"]
    assert said.startswith("A new night: night 2 for Ann, Bea, Cal, Dot, 100 chips each")
    assert not ref.state.game_over and ref.state.deal_number == 0 and ref.state.currency == "€"
    run_night(ref, players, transport, max_deals=1)
    nights = service.nights()
    assert [n["net"] for n in nights[:1]] == [first] and nights[1]["tonight"] and len(nights) == 2
    again = TableState.replay(ledger.iter_events())
    assert again.digest() == ref.state.digest() and again.nights == ref.state.nights
    assert verify(ledger)["ok"]
    ledger.close()


def test_a_leave_asked_mid_deal_happens_at_its_end_and_the_night_still_adds_up(tmp_path):
    ledger, ref, players, transport = night(tmp_path)
    run_night(ref, players, transport, max_steps=6)  # deal 1 under way
    service = TableService(ref)
    said = service.command("remove_player", {"player": "Bea"})["message"]
    assert said.startswith("Bea leaves with their chips from the next deal (deal 2)")
    with pytest.raises(ValueError, match="already leaving"):
        service.command("remove_player", {"player": "Bea"})
    assert ref.state.players == PLAYERS
    while ref.state.deal_number == 1:
        run_night(ref, players, transport, max_steps=1)
    assert ref.state.players == ["Ann", "Cal", "Dot"]
    took = ref.state.chip_history["Bea"][-1]
    with pytest.raises(ValueError, match="needs at least 3 players: with Cal gone 2 would be left"):
        service.command("remove_player", {"player": "Cal"})
    run_night(ref, players, transport)  # to the end of the night
    st = ref.state
    brought = service.chips_in()
    assert set(brought) == set(PLAYERS)  # Bea's result is kept
    net = {p: (st.balances[p] if p in st.balances else took) - brought[p] for p in PLAYERS}
    assert sum(net.values()) == 0
    assert TableState.replay(ledger.iter_events()).digest() == st.digest()
    assert len({len(v) for v in st.chip_history.values()}) == 1  # equal rows for the scoresheet
    ledger.close()


def test_a_leave_between_deals_says_who_moves_up(tmp_path):
    ledger, ref, players, transport = night(tmp_path)
    service = TableService(ref)
    service.command("add_player", {"player": "Eve", "chips": 100})  # five, before the first deal
    said = service.command("remove_player", {"player": "Bea"})["message"]
    assert said == "Bea leaves with 100 chips (+0 tonight); Cal moves to seat 2, Dot moves to seat 3, Eve moves to seat 4."
    assert ref.state.players == ["Ann", "Cal", "Dot", "Eve"]
    with pytest.raises(ValueError, match="played earlier tonight and left"):
        service.command("add_player", {"player": "Bea", "chips": 50})
    ledger.close()
