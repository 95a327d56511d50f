"""table.recorder: each event is validated and applied once (to a clone, which the live state then
becomes), the live state always equals a replay of the ledger, and a refusal writes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from table.ledger import Ledger
from table.recorder import Recorder
from table.referee import Referee
from table.simulate import DirectTransport, VirtualPlayers, run_night
from table.state import StateError, TableState

SETUP = {"players": ["Ann", "Bea", "Cal", "Dot"], "variant": "three_card", "options": {"deals_per_player": 100},
         "chips": 100, "first_dealer": 0}


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times any table state applied an event."""
    calls = [0]
    apply = TableState.apply

    def counting(state: TableState, event: Any) -> None:
        calls[0] += 1
        apply(state, event)

    monkeypatch.setattr(TableState, "apply", counting)
    return calls


def test_a_night_applies_each_event_once_and_equals_its_replay(tmp_path, counted) -> None:
    with Ledger(tmp_path / "l.db") as ledger:
        referee = Referee(ledger, setup=SETUP)
        state = referee.state  # the live state object: it stays the one the referee holds
        counted[0] = 0
        before = ledger.last_seq()
        run_night(referee, VirtualPlayers(3, revoke_rate=0.1), DirectTransport(referee), max_deals=4)
        written = ledger.last_seq() - before
        assert written > 40 and counted[0] == written  # twice per event before: a clone, then the live state
        assert referee.state is state
        assert state.digest() == TableState.replay(ledger.events()).digest()


def test_a_refused_event_changes_nothing_and_writes_nothing(tmp_path) -> None:
    with Ledger(tmp_path / "l.db") as ledger:
        recorder = Recorder(ledger)
        recorder.commit("game_started", SETUP)
        seq, digest = ledger.last_seq(), recorder.state.digest()
        with pytest.raises(StateError, match="not at the table"):
            recorder.commit_many([("adjust_chips", {"player": "Ann", "delta": 5, "reason": "buy-in"}, None),
                                  ("adjust_chips", {"player": "Zed", "delta": 5, "reason": "buy-in"}, None)])
        assert (ledger.last_seq(), recorder.state.digest()) == (seq, digest)


def test_a_retried_key_is_not_applied_again(tmp_path) -> None:
    with Ledger(tmp_path / "l.db") as ledger:
        recorder = Recorder(ledger)
        recorder.commit("game_started", SETUP)
        first = recorder.commit("adjust_chips", {"player": "Ann", "delta": 5, "reason": "buy-in"}, key="k1")
        again = recorder.commit("adjust_chips", {"player": "Ann", "delta": 5, "reason": "buy-in"}, key="k1")
        assert again.seq == first.seq and recorder.state.chips_in()["Ann"] == 105
        assert recorder.state.digest() == TableState.replay(ledger.events()).digest()


def test_an_event_written_behind_the_recorders_back_keeps_the_ledgers_numbering(tmp_path) -> None:
    """The ledger, not the recorder, numbers events: when they differ (an event the live state
    never saw), the written events are applied with the ledger's numbers, as a replay would."""
    with Ledger(tmp_path / "l.db") as ledger:
        recorder = Recorder(ledger)
        recorder.commit("game_started", SETUP)
        ledger.append("adjust_chips", {"player": "Bea", "delta": 1, "reason": "elsewhere"})
        event = recorder.commit("adjust_chips", {"player": "Ann", "delta": 5, "reason": "buy-in"})
        assert event.seq == 3 and recorder.state.last_seq == 3
        assert recorder.state.chips_in()["Ann"] == 105


def test_a_fold_that_reads_the_writes_time_sees_the_written_time(tmp_path) -> None:
    """A night starts at the time the ledger wrote its ``game_started`` (the Nights page shows
    it): the trial before the write cannot know that time, so that event is applied as written."""
    with Ledger(tmp_path / "l.db") as ledger:
        recorder = Recorder(ledger)
        started = recorder.commit("game_started", SETUP)
        assert started.at > 0 and recorder.state.night_started == started.at
        assert recorder.state.digest() == TableState.replay(ledger.events()).digest()
