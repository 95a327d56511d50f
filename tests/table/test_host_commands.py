"""The host's commands from a phone never stop the table: a command that cannot apply is refused
with one sentence and changes nothing, the referee thread survives anything, a pause lets the
virtual players wait, and every command says what it did."""

from __future__ import annotations

import pytest

from engine import Card
from table.commands.ledger import verify
from table.contract.service import Refused
from table.demo_table import waiting_notice
from table.ledger import Ledger
from table.referee import Referee
from table.service import TableService
from table.simulate import DirectTransport, Stuck, VirtualPlayers, run_night

PLAYERS = ["Ann", "Bea", "Cal", "Dot"]
ALL_CARDS = [Card.parse(r + s) for s in "CDHS" for r in ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")]


def night(tmp_path, seed=3):
    ledger = Ledger(tmp_path / "ledger.db")
    ref = Referee(ledger, setup={"players": PLAYERS, "variant": "three_card", "options": {}, "chips": 100,
                                 "first_dealer": 0})
    players = VirtualPlayers(seed)
    ref.vet = players.vet
    return ledger, ref, players, DirectTransport(ref)


def play_until_a_card_is_down(ref, players, transport):
    for _ in range(200):
        deal = ref.state.deal
        if deal is not None and deal.phase == "play" and deal.current_trick:
            return
        run_night(ref, players, transport, max_steps=1)
    raise AssertionError("no card was played")


def test_fixing_a_card_with_one_the_player_cannot_hold_is_refused_and_the_night_goes_on(tmp_path):
    ledger, ref, players, transport = night(tmp_path)
    play_until_a_card_is_down(ref, players, transport)
    player, card = ref.state.deal.current_trick[0]
    shadow = players.shadow(ref.state)
    seen = {c for _, c in ref.state.deal.current_trick} | {ref.state.deal.turn_up}
    foreign = next(c for c in ALL_CARDS if c not in shadow.hand(player) and c != card and c not in seen
                   and all(c not in shadow.hand(p) for p in [player]))
    service = TableService(ref)
    before = (ref.state.last_seq, ref.state.digest())
    with pytest.raises(Refused, match=f"{player} does not hold {foreign}") as refused:
        service.command("correct_card", {"trick": 1, "player": player, "card": str(foreign)})
    assert refused.value.rule == "IllegalActionError"  # the engine's class, for the phone to name
    assert (ref.state.last_seq, ref.state.digest()) == before  # nothing written, nothing changed
    run_night(ref, players, transport, max_deals=2)  # the bots follow the deal the table has
    assert len(ref.state.finished) == 2 and verify(ledger)["ok"]
    ledger.close()


def test_a_valid_fix_is_applied_and_says_what_it_corrected(tmp_path):
    ledger, ref, players, transport = night(tmp_path)
    play_until_a_card_is_down(ref, players, transport)
    result = TableService(ref).command("undo", {})
    assert result["ok"] and result["message"].startswith("Undid ") and "'s " in result["message"]
    ledger.close()


def test_the_referee_thread_survives_what_a_phone_sends(tmp_path):
    ledger = Ledger(tmp_path / "ledger.db")
    ref = Referee(ledger, setup={"players": PLAYERS, "variant": "three_card", "options": {}, "chips": 100,
                                 "first_dealer": 0}).start()
    try:
        # a payload the dashboard would never let through (no trick): one sentence, no dead thread
        with pytest.raises(ValueError, match="correct_card"):
            ref.call("correct_card", {"card": "2C", "player": "Ann"})
        assert ref.running

        def broken(_snapshot):
            raise RuntimeError("a listener failed")

        ref.on_change = broken  # even a failure after the command was applied
        assert ref.call("pause", {})["ok"]
        ref.on_change = None
        assert ref.running
        assert ref.call("resume", {})["ok"] and ref.running

        def vet(_trial):
            raise RuntimeError("boom")

        ref.vet = vet
        with pytest.raises(ValueError):
            ref.call("adjust_chips", {"player": "Ann", "delta": 5, "reason": "rebuy"})
        assert ref.running and ref.state.balances["Ann"] == 100
    finally:
        ref.stop()
        ledger.close()


def test_a_long_pause_lets_the_virtual_players_wait(tmp_path):
    """Paused for what the bots count as a minute: they wait instead of raising `Stuck`."""
    ledger, ref, players, transport = night(tmp_path)
    play_until_a_card_is_down(ref, players, transport)
    ref.call("pause", {})
    waits = []

    def wait(seconds):
        waits.append(seconds)
        if sum(waits) >= 60:
            ref.call("resume", {})

    run_night(ref, players, transport, max_deals=1, wait=wait)
    assert sum(waits) >= 60 and len(ref.state.finished) == 1
    ledger.close()


def test_refused_acts_still_end_in_stuck(tmp_path):
    """Waiting is for a pause only: a table that refuses everything is still reported."""
    ledger, ref, players, transport = night(tmp_path)
    ref.fault = "the ledger failed"
    with pytest.raises(Stuck):
        run_night(ref, players, transport, max_deals=1, wait=lambda s: None)
    ledger.close()


def test_with_a_host_at_the_dashboard_the_bots_wait_for_him_instead_of_stuck(tmp_path):
    """The camera was unsure of a card and nobody has answered: every act is held back. With a
    dashboard the host can reach (`on_stuck`), the bots say so once and wait, as people would,
    until he answers; then the deal goes on."""
    from vision.event_types import VisionEvent

    ledger, ref, players, transport = night(tmp_path)
    play_until_a_card_is_down(ref, players, transport)
    (intent,) = players.next_intents(ref.state)
    ref.step(VisionEvent("card_unsure", str(intent.zone), 100.0, intent.card, 0.4))
    assert ref.hold is not None
    told, waits, shown = [], [], []

    def stuck(reason):  # as the demo does: the terminal gets the reason, the dashboard a notice
        told.append(reason)
        ref.step(waiting_notice(reason))

    def wait(seconds):
        waits.append(seconds)
        shown.append([a["message"] for a in ref.snapshot()["alerts"] if a["kind"] == "waiting"])
        if len(waits) == 10:  # the host answers the alert on his phone
            ref.call("correct_card", {"alert_id": ref.hold["id"], "card": intent.card})

    run_night(ref, players, transport, max_deals=1, wait=wait, on_stuck=stuck)
    assert len(told) == 1 and told[0].startswith("the table refused 50 acts in a row")
    assert len(waits) == 10 and ref.state.game_over and len(ref.state.finished) == 1
    # while they waited the dashboard said why, without the acts; the host's answer took it away
    assert shown[0] == ["the demo's players cannot go on (the table refused 50 acts in a row); "
                        "change something on the Admin page or end the night"] and shown == shown[:1] * 10
    assert not [a for a in ref.snapshot()["alerts"] if a["kind"] == "waiting"]
    ledger.close()


def test_the_house_rule_dealer_takes_the_turn_up_set_between_deals_keeps_the_bots_playing(tmp_path):
    """The dealer takes the turn-up and discards face down: the table sees nothing of it, so the
    bots' shadow of the deal does it by itself (it used to crash the demo's bots)."""
    ledger, ref, players, transport = night(tmp_path)
    while not (ref.state.deal is not None and ref.state.deal.is_over):
        run_night(ref, players, transport, max_steps=1)
    TableService(ref).command("update_settings", {"options": {"dealer_takes_turnup": True}})
    run_night(ref, players, transport, max_deals=3)
    assert ref.state.game_over and len(ref.state.finished) == 3
    assert ref.state.game.options.dealer_takes_turnup and ref.state.total_chips() == ref.state.total_in
    ledger.close()


def test_adjusted_chips_and_end_of_night_balance(tmp_path):
    """A rebuy of 20 then End the game: results sum to zero and the rebuy is not a win."""
    ledger, ref, players, transport = night(tmp_path)
    play_until_a_card_is_down(ref, players, transport)
    service = TableService(ref)
    message = service.command("adjust_chips", {"player": "Ann", "delta": 20, "reason": "bought in 20 more"})["message"]
    assert message == "Ann +20 chips (bought in 20 more)."
    run_night(ref, players, transport, max_deals=2)  # ends the game after the second deal
    assert ref.state.game_over
    history, chips_in = service.chip_history(), service.chips_in()
    assert chips_in == {"Ann": 120, "Bea": 100, "Cal": 100, "Dot": 100}
    net = {p: history[p][-1] - chips_in[p] for p in PLAYERS}
    assert sum(net.values()) == 0 and ref.state.pool_now() == 0
    ledger.close()


def test_demo_help_gives_the_full_tables_player_range(capsys):
    from table.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["demo", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "3..8 at the full table" in text and "3..17" not in text


def test_the_chip_value_can_change_during_a_paused_deal(tmp_path):
    ledger, ref, players, transport = night(tmp_path)
    play_until_a_card_is_down(ref, players, transport)
    ref.call("pause", {})
    result = TableService(ref).command("update_settings", {"chip_value": "0.25"})
    assert result["message"] == "Saved chip value." and ref.state.chip_value == "0.25"
    said = TableService(ref).command("update_settings", {"variant": "irish"})["message"]  # waits for the next deal
    assert said.startswith("The new variant applies from the next deal (deal 2)") and ref.state.variant == "three_card"
    ledger.close()


def test_each_command_says_what_it_did():
    from table.describe import describe_events
    from table.ledger import Event

    log = {1: Event(1, None, "deal_started", {"number": 2, "dealer": "Ann"}, ""),
           2: Event(2, None, "action", {"action": "*up:7H"}, ""),
           3: Event(3, None, "action", {"action": "Bea:pass"}, ""),
           4: Event(4, None, "action", {"action": "Cal:10D"}, "")}

    def said(kind, data):
        return describe_events([Event(9, None, kind, data, "")], log.get)

    assert said("undo", {"target": 4}) == "Undid Cal's 10D."
    assert said("undo", {"target": 3}) == "Undid Bea's declaration (pass)."
    assert said("undo", {"target": 1}) == "Undid the start of deal 2."
    assert said("correct", {"target": 2, "card": "7D"}) == "Corrected the turn-up 7H to 7D."
    assert said("adjust_chips", {"player": "Ann", "delta": -1, "reason": "miscount"}) == "Ann -1 chip (miscount)."
    assert said("settings", {"variant": "irish", "options": {}}) == "Saved house rules (Irish Loo)."
    assert said("pause", {}) == "Paused: buttons and cards wait until you resume."
    assert describe_events([], log.get) == ""
