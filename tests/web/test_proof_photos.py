"""The photo that proves it: a revoke, a card out of turn and a host's correction keep the zone
as the camera saw it at that moment, beside the ledger, named by its hash and referenced from the
ledger event; the alert and the History show it; one setting turns it off (the real referee,
camera view, photo store and dashboard)."""

from __future__ import annotations

import hashlib

import cv2
import numpy as np
import pytest
from camera_rig import PLAYERS, CameraTable
from web_fakes import ORIGIN, PIN, csrf_of

from table.config import parse_config
from table.photos import photos_dir
from web import create_app

# Dealer Dot, trumps hearts; Bea fails to follow spades in trick 1 and shows 5S in trick 3.
DEAL = [("Ann", "KS"), ("Bea", "2C"), ("Cal", "QS"), ("Dot", "3S"),
        ("Ann", "4D"), ("Bea", "6D"), ("Cal", "9D"), ("Dot", "KD"),
        ("Dot", "8C"), ("Ann", "9C"), ("Bea", "5S"), ("Cal", "10C")]


@pytest.fixture
def table(tmp_path):
    t = CameraTable(tmp_path, photos=True)
    yield t
    t.close()


def _events(table, kind=None):
    return [e for e in table.ledger.iter_events() if kind is None or e.kind == kind]


def _with_photo(table):
    return [e for e in _events(table) if "photo" in e.data]


def test_a_revoke_keeps_the_photo_of_the_play_that_proved_it(table):
    table.to_play()
    table.play(DEAL[:10])
    assert _with_photo(table) == []  # nothing proven yet: no photo taken
    table.play(DEAL[10:11])  # Bea lays 5S: she held a spade in trick 1
    proof = _with_photo(table)
    assert len(proof) == 1 and proof[0].data["evidence"] == "revoke" and "5S" in proof[0].data["action"]
    name = proof[0].data["photo"]
    path = photos_dir(table.ledger.path) / f"{name}.jpg"
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == name  # named by its hash, as the event says
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    zone = table.scene.layout.zone("seat:1")  # Bea's place, with 5S lying in it
    assert img.shape[:2] == (round((zone.height + 16) * 2), round((zone.width + 16) * 2))
    alert = next(a for a in table.ref.snapshot()["alerts"] if a["kind"] == "revoke")
    assert alert["photo"] == name and alert["seat"] == "Bea"
    summary = table.service.deals()[-1]
    assert summary["revokes"][0]["photo"] == name
    assert [p["why"] for p in summary["photos"]] == ["revoke"]
    table.play(DEAL[11:])
    table.dealer()  # the deal is closed: the History keeps the photo
    assert table.service.deals()[0]["revokes"][0]["photo"] == name


def test_a_card_out_of_turn_keeps_the_moment_it_was_laid(table):
    table.to_play()
    table.lay("seat:2", "QS")  # Cal, while Ann is to lead
    hold = table.ref.hold
    assert hold is not None and hold["kind"] == "out_of_turn"
    name = hold["photo"]
    assert table.store.read(name) is not None
    table.ref.call("confirm_card", {"alert_id": hold["id"]})
    exposed = _with_photo(table)
    assert [(e.data["evidence"], e.data["photo"]) for e in exposed] == [("out_of_turn", name)]
    assert "QS" in exposed[0].data["action"]
    assert table.service.deals()[-1]["photos"] == [{"photo": name, "why": "out_of_turn", "player": "Cal", "card": "QS"}]


def test_a_hosts_correction_keeps_the_zone_as_corrected(table):
    table.to_play()
    table.lay("seat:0", "KS")
    table.ref.call("correct_card", {"trick": 1, "player": "Ann", "card": "KC"})
    fixed = _events(table, "correct")[-1]
    assert fixed.data["evidence"] == "correction" and table.store.read(fixed.data["photo"]) is not None
    table.lay("seat:1", "QC", unsure=(("QC", 0.5), ("QS", 0.3)))
    hold = table.ref.hold
    table.ref.call("correct_card", {"alert_id": hold["id"], "card": "QS"})  # the host says another card
    answered = _events(table, "action")[-1]
    assert answered.data["evidence"] == "correction" and "QS" in answered.data["action"]
    whys = [(p["why"], p["player"], p["card"]) for p in table.service.deals()[-1]["photos"]]
    assert whys == [("correction", "Ann", "KC"), ("correction", "Bea", "QS")]
    table.lay("seat:2", "QD", unsure=(("QD", 0.6), ("QH", 0.2)))
    table.ref.call("confirm_card", {"alert_id": table.ref.hold["id"]})  # confirmed: no correction
    assert "photo" not in _events(table, "action")[-1].data


def test_one_setting_turns_the_photos_off(tmp_path):
    assert parse_config({}).state.photos is True
    assert parse_config({"state": {"photos": False}}).state.photos is False
    with pytest.raises(ValueError, match="state.photos: expected true or false"):
        parse_config({"state": {"photos": "no"}})
    table = CameraTable(tmp_path, photos=False)  # what run does with photos = false
    table.to_play()
    table.play(DEAL)
    table.lay("seat:0", "2H", unsure=(("2H", 0.5),))
    assert _with_photo(table) == []
    assert not photos_dir(table.ledger.path).exists()
    assert all("photo" not in a for a in table.ref.snapshot()["alerts"])
    table.close()


def test_the_alert_and_the_history_show_the_photo_to_everyone(table, tmp_path):
    app = create_app(table.service, config={"STATE_DIR": tmp_path / "web", "ADMIN_PIN": PIN},
                     pictures=table.pictures)
    table.to_play()
    table.play(DEAL[:11])
    name = _with_photo(table)[0].data["photo"]
    client = app.test_client()  # a player's phone: no session
    resp = client.get(f"/photo/{name}.jpg")
    assert resp.status_code == 200 and resp.mimetype == "image/jpeg"
    assert hashlib.sha256(resp.data).hexdigest() == name
    assert "immutable" in resp.headers["Cache-Control"]
    assert client.get("/photo/" + "f" * 64 + ".jpg").status_code == 404
    assert client.get("/photo/..%2Fledger.db.jpg").status_code == 404
    assert f'src="/photo/{name}.jpg"' in client.get("/table/partial").get_data(as_text=True)
    assert f'src="/photo/{name}.jpg"' in client.get("/history").get_data(as_text=True)
    token = csrf_of(client)
    client.post("/admin/login", json={"pin": PIN}, headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert f'src="/photo/{name}.jpg"' in client.get("/admin/partial").get_data(as_text=True)
    assert PLAYERS[1] in client.get("/history").get_data(as_text=True)
