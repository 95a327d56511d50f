"""The camera view's route: the host's session only, a JPEG the Admin page reloads each second,
and nothing of it on the players' pages (hands and faces are in the camera's view)."""

from __future__ import annotations

import pytest
from web_fakes import ORIGIN, PIN, FakeService, csrf_of

from table.camera_view import CameraView
from table.pictures import TablePictures
from vision.geometry import TableLayout
from vision.synthetic import SyntheticTable
from web import create_app


class Watcher:
    """What the view needs of the watcher: its layout, calibration and readings."""

    def __init__(self, table: SyntheticTable) -> None:
        self.layout: TableLayout = table.layout
        self.calibration = table.calibration

    def contents(self):
        return {"seat:0": {"faces": ["7H"], "face_down": 0, "unsure": 0, "obstructed": False}}


@pytest.fixture
def rig(tmp_path):
    table = SyntheticTable(seed=1, seats=3, size=(640, 360))
    view = CameraView(names=lambda: ["Ann", "Bea", "Cal"])
    app = create_app(FakeService(), config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN},
                     pictures=TablePictures(view))
    return app, view, table


def _login(client) -> None:
    token = csrf_of(client)
    resp = client.post("/admin/login", json={"pin": PIN}, headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert resp.status_code == 200


def test_401_without_the_hosts_session(rig):
    app, view, table = rig
    view.offer(table.render([]), Watcher(table))
    resp = app.test_client().get("/admin/camera.jpg")
    assert resp.status_code == 401
    assert resp.get_json()["error"] == "admin login required"


def test_the_host_gets_a_jpeg_not_cached_by_anyone(rig):
    app, view, table = rig
    client = app.test_client()
    _login(client)
    resp = client.get("/admin/camera.jpg")
    assert resp.status_code == 404 and "no picture" in resp.get_json()["error"]
    view.offer(table.render([]), Watcher(table))
    resp = client.get("/admin/camera.jpg")
    assert resp.status_code == 200 and resp.mimetype == "image/jpeg"
    assert resp.data[:2] == b"\xff\xd8"
    assert resp.headers["Cache-Control"] == "no-store, private"
    again = client.get("/admin/camera.jpg", headers={"If-None-Match": resp.headers["ETag"]})
    assert again.status_code == 304  # the same second's picture: nothing sent twice


def test_the_admin_page_shows_it_and_the_table_page_does_not(rig):
    app, view, table = rig
    client = app.test_client()
    assert "camera.jpg" not in client.get("/").get_data(as_text=True)
    assert "camera.jpg" not in client.get("/admin").get_data(as_text=True)  # the login form
    _login(client)
    page = client.get("/admin").get_data(as_text=True)
    assert 'id="camera-view"' in page and "/admin/camera.jpg" in page and "camera.js" in page


def test_without_a_camera_the_route_says_so(tmp_path):
    app = create_app(FakeService(), config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN})
    client = app.test_client()
    _login(client)
    resp = client.get("/admin/camera.jpg")
    assert resp.status_code == 404
    assert client.get("/photo/" + "0" * 64 + ".jpg").status_code == 404
