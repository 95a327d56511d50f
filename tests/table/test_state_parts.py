"""The table state's parts (table.chip_book, table.change_queue, table.current_deal) each own their
state: a clone's part changes without touching the original's, and a malformed event is refused
whole, by the checked readers of table.event_data, before any part changes."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from table.event_data import as_int, as_list, as_object
from table.state import StateError, TableState

PLAYERS = ["Ann", "Bea", "Cal", "Dot"]


@dataclass
class Ev:
    seq: int
    kind: str
    data: dict[str, object] = field(default_factory=dict)


def _started() -> TableState:
    return TableState.replay([Ev(1, "game_started", {"players": PLAYERS, "chips": 100})])


def test_a_clones_chip_book_and_queue_are_its_own() -> None:
    st = _started()
    st.apply(Ev(2, "deal_started", {"number": 1, "dealer": st.dealer_name()}))
    digest = st.digest()
    trial = st.clone()
    trial.apply(Ev(3, "adjust_chips", {"player": "Ann", "delta": 20, "reason": "bought in"}))
    trial.apply(Ev(4, "change_queued", {"kind": "player_joined", "data": {"player": "Eve", "chips": 40}}))
    assert trial.chip_book.pending == {"Ann": 20} and trial.chips_in()["Ann"] == 120 and 4 in trial.queued
    assert st.chip_book is not trial.chip_book and st.change_queue is not trial.change_queue
    assert st.chip_book.pending == {} and st.chips_in()["Ann"] == 100 and not st.queued and not st.chip_log
    assert st.digest() == digest
    st.adopt(trial)  # the live state takes the trial's parts: the events applied once
    assert st.digest() == trial.digest() and st.chip_log[3]["delta"] == 20


def test_a_malformed_event_is_refused_and_changes_nothing() -> None:
    st = _started()
    digest = st.digest()
    for bad in ({"player": "Ann", "delta": [5], "reason": "x"}, {"player": "Ann", "delta": None, "reason": "x"}):
        with pytest.raises(StateError, match="malformed adjust_chips event"):
            st.apply(Ev(2, "adjust_chips", bad))
    with pytest.raises(StateError, match="malformed change_queued event"):
        st.apply(Ev(2, "change_queued", {"kind": "settings", "data": "irish"}))
    assert st.digest() == digest and st.events_applied == 1


def test_the_readers_take_what_int_dict_and_list_took() -> None:
    assert as_int("7") == 7 and as_int(7.0) == 7 and as_int(True) == 1
    assert as_object({"a": 1}) == {"a": 1} and as_list(("Ann", "Bea")) == ["Ann", "Bea"]
    for reader, value in ((as_int, None), (as_object, ["a"]), (as_list, "Ann")):
        with pytest.raises(TypeError):
            reader(value)


def test_the_deal_info_is_refused_before_a_deal_and_kept_after_one() -> None:
    st = _started()
    with pytest.raises(StateError):
        st.deal_info  # noqa: B018 - the property raises
    st.apply(Ev(2, "deal_started", {"number": 1, "dealer": st.dealer_name()}))
    assert st.deal_info["number"] == 1 and st.deal_info["seq"] == 2
    st.apply(Ev(3, "undo", {"target": 2}))  # the deal had not begun: as if never started
    assert st.deal_number == 0 and st.current_deal.info is None
