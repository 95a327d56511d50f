"""Shared helpers for the controller tests: a referee on a temporary ledger, driven by hand."""

from __future__ import annotations

import pytest

from table.devices import ButtonEvent
from table.ledger import Ledger
from table.referee import Referee
from vision.events import VisionEvent

PLAYERS = ["Ann", "Bea", "Cal", "Dot"]


class Outputs:
    """Records what the referee asks of the hardware (the MockFactory test covers real pins)."""

    def __init__(self) -> None:
        self.seats: dict[int, str] = {}
        self.status = "off"
        self.alarms = 0

    def show_seats(self, states):
        self.seats = dict(states)

    def show_status(self, state):
        self.status = state

    def alarm(self, beeps=3):
        self.alarms += 1


class Table:
    """A referee plus shorthands: press(seat, gesture), card(seat or zone, card), dealer()."""

    def __init__(self, path, *, players=PLAYERS, variant="three_card", options=None, first_dealer=3,
                 outputs=None, clock=None, key=None):
        self.path = path
        self.ledger = Ledger(path, key=key)
        self.outputs = outputs if outputs is not None else Outputs()
        self.t = 0.0
        kwargs = {"clock": clock} if clock is not None else {}
        self.ref = Referee(self.ledger, outputs=self.outputs, setup={
            "players": list(players), "variant": variant, "options": dict(options or {}),
            "chips": 100, "first_dealer": first_dealer}, **kwargs)
        self.players = list(players)

    def _ts(self):
        self.t += 1.0
        return self.t

    def dealer(self, gesture="press"):
        self.ref.step(ButtonEvent("dealer", gesture, None, self._ts()))

    def press(self, who, gesture="press"):
        seat = who if isinstance(who, int) else self.players.index(who)
        self.ref.step(ButtonEvent("seat", gesture, seat, self._ts()))

    def card(self, where, card, kind="card_placed", top3=()):
        zone = where if isinstance(where, str) and ":" in where or where == "turn_up" else \
            f"seat:{where if isinstance(where, int) else self.players.index(where)}"
        self.ref.step(VisionEvent(kind, zone, self._ts(), card, 0.97 if card else None, tuple(top3)))

    def snap(self):
        return self.ref.snapshot()

    def chips(self):
        return {s["name"]: s["chips"] for s in self.snap()["seats"]}

    def close(self):
        self.ledger.close()


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path / "ledger.db")
    yield t
    t.close()
