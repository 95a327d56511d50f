"""Calibrating the camera from the phone while the table runs: from the four markers in the
camera's latest frame, or from four corners tapped on the picture; the figures and the warnings
in plain words; the file saved and the camera reading with it at once (the real calibration code
on frames of the synthetic table, which carries the markers)."""

from __future__ import annotations

import numpy as np
import pytest
from camera_rig import CameraTable
from web_fakes import ORIGIN, PIN, FakeService, csrf_of

from vision.calibration import load
from web import create_app


@pytest.fixture
def rig(tmp_path):
    table = CameraTable(tmp_path)
    app = create_app(table.service, config={"STATE_DIR": tmp_path / "web", "ADMIN_PIN": PIN},
                     pictures=table.pictures, camera_setup=table.calibrator)
    client = app.test_client()
    token = csrf_of(client)
    resp = client.post("/admin/login", json={"pin": PIN}, headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    yield table, client, resp.get_json()["csrf_token"]
    table.close()


def _post(client, token, payload):
    return client.post("/api/admin/calibrate", json=payload, headers={"Origin": ORIGIN, "X-CSRF-Token": token})


def test_the_markers_calibrate_the_running_table(rig, tmp_path):
    table, client, token = rig
    before = table.watcher
    resp = _post(client, token, {"table_mm": [800, 800]})
    assert resp.status_code == 200, resp.get_json()
    report = resp.get_json()
    assert report["markers_found"] == [0, 1, 2, 3] and report["method"] == "aruco"
    assert report["residual_px"] < 2.0
    assert set(report["card_px"]) == {"Ann", "Bea", "Cal", "Dot", "turn-up", "stock"}
    assert report["message"].startswith("Calibrated from the four markers; the camera uses it now")
    assert all("seat:" not in w and "turn_up" not in w for w in report["warnings"])  # the host's words
    cal, layout = load(tmp_path / "calibration.json")
    truth = table.scene.calibration
    centre = [layout.zone("seat:0").center]
    assert np.allclose(cal.to_image(centre), truth.to_image(centre), atol=3.0)  # where the card really lies
    assert table.watcher is not before and table.watcher.calibration.method == "aruco"


def test_four_corners_tapped_on_the_picture(rig, tmp_path):
    table, client, token = rig
    h_w = np.array(table.scene.size, float)
    corners = table.scene.calibration.to_image([[0, 0], [800, 0], [800, 800], [0, 800]]) / h_w
    resp = _post(client, token, {"table_mm": [800, 800], "corners": corners.round(5).tolist()})
    assert resp.status_code == 200, resp.get_json()
    report = resp.get_json()
    assert report["method"] == "corners" and report["markers_found"] == [] and report["residual_px"] == 0
    cal, _ = load(tmp_path / "calibration.json")
    assert np.allclose(cal.to_image([[400, 400]]), table.scene.calibration.to_image([[400, 400]]), atol=1.0)


def test_plain_sentences_when_it_cannot_and_nothing_changes(rig, tmp_path):
    table, client, token = rig
    table.view._frame = None  # a camera that has not given a picture
    resp = _post(client, token, {})
    assert resp.status_code == 400 and resp.get_json()["error"].startswith("There is no picture from the camera yet")
    frame = table.scene.render([])
    x, y = (int(v) for v in table.scene.calibration.to_image([[0, 0]])[0])
    frame[max(0, y - 40):y + 40, max(0, x - 40):x + 40] = 90  # marker 0 covered (a cup on it)
    table.view.offer(frame, table.watcher)
    resp = _post(client, token, {"table_mm": [800, 800]})
    error = resp.get_json()["error"]
    assert resp.status_code == 400 and error.startswith("ArUco markers [0] not found (found [1, 2, 3])") and error.endswith(".")
    assert "Traceback" not in error
    assert not (tmp_path / "calibration.json").exists()
    resp = _post(client, token, {"table_mm": [800, 800], "corners": [[0.1, 0.1], [0.1, 0.1], [0.1, 0.1], [0.1, 0.1]]})
    assert resp.status_code == 400 and "tap the four corners again" in resp.get_json()["error"]
    assert _post(client, token, {"table_mm": [80, 800]}).status_code == 400
    assert _post(client, token, {"corners": [[2, 0]] * 4}).status_code == 400


def test_a_wrong_marker_or_a_mat_turned_round_is_said_in_plain_words(rig, tmp_path):
    import cv2

    table, client, token = rig
    frame = table.scene.render([])
    x, y = (int(v) for v in table.scene.calibration.to_image([[0, 0]])[0])
    seven = cv2.aruco.generateImageMarker(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), 7, 44)
    frame[max(0, y - 40):y + 40, max(0, x - 40):x + 40] = 255  # marker 0 covered by a marker of another sheet
    frame[y - 22:y + 22, x - 22:x + 22] = cv2.cvtColor(seven, cv2.COLOR_GRAY2BGR)
    table.view.offer(frame, table.watcher)
    resp = _post(client, token, {"table_mm": [800, 800]})
    error = resp.get_json()["error"]
    assert resp.status_code == 400 and error.startswith("ArUco markers [0] not found (found [1, 2, 3]); marker 7 "
                                                        "is not one of the mat's (0 to 3): use the markers of the table mat")
    assert error.endswith(".") and "Traceback" not in error and not (tmp_path / "calibration.json").exists()
    # the mat turned round (marker 0 at the bottom right of the picture): calibrated, with a warning
    table.view.offer(np.ascontiguousarray(table.scene.render([])[::-1, ::-1]), table.watcher)
    report = _post(client, token, {"table_mm": [800, 800]}).get_json()
    assert report["markers_found"] == [0, 1, 2, 3]
    assert any(w.startswith("Marker 0 is at the bottom right of the picture, not the top left") for w in report["warnings"])
    table.view.offer(table.scene.render([]), table.watcher)
    report = _post(client, token, {"table_mm": [800, 800]}).get_json()
    assert not any("Marker 0" in w for w in report["warnings"])


def test_the_host_only_and_a_table_without_a_camera(rig, tmp_path):
    table, client, token = rig
    anon = create_app(table.service, config={"STATE_DIR": tmp_path / "web2", "ADMIN_PIN": PIN},
                      camera_setup=table.calibrator).test_client()
    t = csrf_of(anon)
    resp = anon.post("/api/admin/calibrate", json={}, headers={"Origin": ORIGIN, "X-CSRF-Token": t})
    assert resp.status_code == 401
    bare = create_app(FakeService(), config={"STATE_DIR": tmp_path / "web3", "ADMIN_PIN": PIN}).test_client()
    t = csrf_of(bare)
    t = bare.post("/admin/login", json={"pin": PIN}, headers={"Origin": ORIGIN, "X-CSRF-Token": t}).get_json()["csrf_token"]
    resp = bare.post("/api/admin/calibrate", json={}, headers={"Origin": ORIGIN, "X-CSRF-Token": t})
    assert resp.status_code == 404 and resp.get_json()["error"] == "this table has no camera to calibrate"
    page = client.get("/admin").get_data(as_text=True)
    assert 'id="calibrate-form"' in page and "calibrate.js" in page


def test_the_running_camera_is_locked_where_it_settled_and_the_lock_is_kept(rig, tmp_path):
    table, client, token = rig
    calls = []

    def lock():
        calls.append(1)
        return {"AeEnable": False, "ExposureTime": 16543, "AnalogueGain": 1.83}

    table.calibrator.lock = lock
    report = _post(client, token, {"table_mm": [800, 800]}).get_json()
    assert report["locked"] == ["AeEnable", "AnalogueGain", "ExposureTime"] and calls == [1]
    assert report["camera"].startswith("Exposure, white balance and focus are locked where they are now")
    from vision.calibration import load_camera_controls

    assert load_camera_controls(tmp_path / "calibration.json")["ExposureTime"] == 16543
    report = _post(client, token, {"table_mm": [800, 800], "lock": False}).get_json()
    assert report["locked"] == [] and calls == [1] and "left as they were" in report["camera"]
    assert load_camera_controls(tmp_path / "calibration.json")["ExposureTime"] == 16543  # kept

    def broken():
        raise OSError("the camera stopped")

    table.calibrator.lock = broken
    report = _post(client, token, {"table_mm": [800, 800]}).get_json()
    assert report["markers_found"] == [0, 1, 2, 3] and "could not be locked (the camera stopped)" in report["camera"]
    assert _post(client, token, {"lock": "yes"}).status_code == 400
