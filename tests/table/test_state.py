"""table.state around engine.Game: only the engine's public API moves chips or ends the night."""

from __future__ import annotations

import inspect

from test_referee import REVOKE_DEAL, start_deal

import table.change_queue
import table.chip_book
import table.current_deal
import table.state
from table.state import TableState


def test_state_uses_no_private_field_of_the_engine_game():
    for part in (table.state, table.chip_book, table.change_queue, table.current_deal):
        source = inspect.getsource(part)
        assert "game._" not in source and "_share_residue" not in source and "SLF001" not in source


def test_ending_early_is_the_engines_end_now(table):
    start_deal(table)
    for p, c in REVOKE_DEAL:
        table.card(p, c)
    table.dealer()  # deal 1 closed (pool 3 carried), deal 2 started
    table.ref.call("end_game", {})  # deal 2 abandoned; the engine shares the pool of 3 out
    game = table.ref.state.game
    assert game.is_over and game.pool == 0
    # Game.end_now records what it shared (split from the last dealer's left: Ann 1, Bea 1, Cal 1)
    assert game.ended_early == {"Ann": 1, "Bea": 1, "Cal": 1}
    assert sum(game.balances.values()) == 400
    replayed = TableState.replay(table.ledger.events())
    assert replayed.digest() == table.ref.state.digest() and replayed.game.ended_early == game.ended_early


def test_a_clone_ending_the_night_leaves_the_original_alone(table):
    start_deal(table)
    for p, c in REVOKE_DEAL:
        table.card(p, c)
    table.dealer()
    st = table.ref.state
    digest, pool = st.digest(), st.game.pool
    clone = st.clone()

    class Ev:
        def __init__(self, seq, kind, data):
            self.seq, self.kind, self.data = seq, kind, data

    clone.apply(Ev(st.last_seq + 1, "end_game", {}))
    assert clone.game_over and clone.game.pool == 0
    assert not st.game_over and st.game.pool == pool and st.game.current is not None
    assert st.digest() == digest
