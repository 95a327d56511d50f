"""The unsure card's picture: the zone as the camera saw it when the table began to wait, kept
with the hold for the host only, the best guesses as big buttons (Flask's test client against the
real referee and camera view)."""

from __future__ import annotations

import re

import cv2
import numpy as np
import pytest
from camera_rig import CameraTable
from web_fakes import ORIGIN, PIN, csrf_of

from web import create_app

GUESSES = (("8C", 0.52), ("6C", 0.31), ("9C", 0.08))


@pytest.fixture
def rig(tmp_path):
    table = CameraTable(tmp_path)
    app = create_app(table.service, config={"STATE_DIR": tmp_path / "web", "ADMIN_PIN": PIN},
                     pictures=table.pictures)
    yield table, app
    table.close()


def _admin(app):
    client = app.test_client()
    token = csrf_of(client)
    resp = client.post("/admin/login", json={"pin": PIN}, headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert resp.status_code == 200
    return client, resp.get_json()["csrf_token"]


def _hold(table):
    return next(a for a in table.ref.snapshot()["alerts"] if a["needs_confirmation"])


def test_an_unsure_card_keeps_its_zones_picture_for_the_host(rig):
    table, app = rig
    table.to_play()
    table.lay("seat:0", "8C", unsure=GUESSES)
    hold = _hold(table)
    assert hold["kind"] == "unsure" and hold["picture"] is True
    url = f"/admin/alert/{hold['id']}.jpg"
    assert app.test_client().get(url).status_code == 401  # the players' phones never get it
    client, token = _admin(app)
    resp = client.get(url)
    assert resp.status_code == 200 and resp.mimetype == "image/jpeg"
    img = cv2.imdecode(np.frombuffer(resp.data, np.uint8), cv2.IMREAD_COLOR)
    zone = table.scene.layout.zone("seat:0")
    assert img.shape[:2] == (round((zone.height + 16) * 2), round((zone.width + 16) * 2))
    # the card lies in the middle of the picture: brighter than the cloth around it
    h, w = img.shape[:2]
    assert img[h // 2 - 10:h // 2 + 10, w // 2 - 10:w // 2 + 10].mean() > img[:8, :8].mean() + 40

    page = client.get("/admin/partial").get_data(as_text=True)
    assert f'<img class="hold-picture" src="{url}"' in page
    guesses = re.findall(r'<button class="guess[^"]*" data-command="(\w+)"', page)
    assert guesses == ["confirm_card", "correct_card", "correct_card"]  # the best three, big
    assert 'class="pick-card secondary"' in page  # anything else: the card picker
    assert f'data-needs-host="{hold["id"]}"' in page  # what the page's title and buzz watch

    resp = client.post("/api/admin/confirm_card", json={"alert_id": hold["id"]},
                       headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert resp.status_code == 200
    assert client.get(url).status_code == 404  # answered: the picture goes with the hold


def test_a_card_out_of_turn_shows_its_zone_too(rig):
    table, app = rig
    table.to_play()
    table.lay("seat:2", "QS")  # Cal plays while Ann is to lead
    hold = _hold(table)
    assert hold["kind"] == "out_of_turn" and hold["picture"] is True
    client, _ = _admin(app)
    assert client.get(f"/admin/alert/{hold['id']}.jpg").status_code == 200


def test_without_a_camera_or_when_the_picture_fails_the_hold_is_the_same(tmp_path):
    table = CameraTable(tmp_path, camera=False)
    table.to_play()
    table.lay("seat:0", "8C", unsure=GUESSES)
    hold = _hold(table)
    assert "picture" not in hold and hold["top3"][0] == ["8C", 0.52]
    table.close()

    def broken(zone: str) -> bytes:
        raise OSError("camera gone")

    (tmp_path / "b").mkdir()
    table = CameraTable(tmp_path / "b", zone_jpeg=broken)
    table.to_play()
    table.lay("seat:0", "8C", unsure=GUESSES)
    hold = _hold(table)
    assert hold["kind"] == "unsure" and "picture" not in hold
    table.close()
