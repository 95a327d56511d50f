"""The snapshot has one shape (web.snapshot): the controller's referee publishes it and the
dashboard tests' in-memory service (web_fakes.FakeService) keeps to it, nested parts included."""

from __future__ import annotations

from typing import Any

import pytest
from web_fakes import FakeService

from table.devices import ButtonEvent
from table.ledger import Ledger
from table.referee import Referee
from vision.event_types import VisionEvent
from web.snapshot import Alert, Commands, Seat, Snapshot, Status, Trick


def conforms(value: dict[str, Any], shape: Any, where: str) -> None:
    keys = set(value)
    assert shape.__required_keys__ <= keys, f"{where}: missing {shape.__required_keys__ - keys}"
    extra = keys - shape.__required_keys__ - shape.__optional_keys__
    assert not extra, f"{where}: keys the shape does not name: {extra}"


def conforms_deeply(snap: dict[str, Any]) -> None:
    conforms(snap, Snapshot, "snapshot")
    conforms(snap["status"], Status, "status")
    for seat in snap["seats"]:
        conforms(seat, Seat, "seat")
    if snap["trick"] is not None:
        conforms(snap["trick"], Trick, "trick")
    for alert in snap["alerts"]:
        conforms(alert, Alert, f"alert {alert.get('kind')}")
    if "commands" in snap:
        conforms(snap["commands"], Commands, "commands")


def test_the_fake_service_keeps_to_the_snapshot_shape() -> None:
    conforms_deeply(dict(FakeService().snapshot()))


@pytest.fixture
def referee(tmp_path):
    ledger = Ledger(tmp_path / "ledger.db")
    ref = Referee(ledger, setup={"players": ["Ann", "Bea", "Cal"], "variant": "three_card",
                                 "options": {}, "chips": 50, "first_dealer": 2})
    yield ref
    ledger.close()


def test_the_referee_publishes_the_snapshot_shape_in_every_phase(referee) -> None:
    conforms_deeply(dict(referee.snapshot()))
    referee.step(ButtonEvent("dealer", "press", None, 1.0))
    referee.step(VisionEvent("card_placed", "turn_up", 2.0, "7H", 0.99))
    for seat in range(3):
        referee.step(ButtonEvent("seat", "press", seat, 3.0 + seat))
    referee.step(VisionEvent("card_unsure", "seat:0", 7.0, None, None, (("KS", 0.5), ("KC", 0.4))))
    snap = dict(referee.snapshot())
    assert snap["phase"] == "play" and any(a["kind"] == "unsure" for a in snap["alerts"])
    conforms_deeply(snap)
    referee.call("confirm_card", {"alert_id": snap["alerts"][-1]["id"]})
    snap = dict(referee.snapshot())
    assert snap["trick"] is not None
    conforms_deeply(snap)
