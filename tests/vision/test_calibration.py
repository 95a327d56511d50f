"""Calibration on rendered marker images with known geometry; geometry and the file format."""
# ruff: noqa: F811 (the fake_picamera2 fixture imported from picamera2_fake is a test argument of the same name)

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from table.cli import main as cli_main
from vision import calibration as cal
from vision.geometry import Calibration, GeometryError, TableLayout, Zone, homography, order_card_corners
from vision.synthetic import SyntheticTable

PROBES = np.array([[0, 0], [800, 0], [400, 400], [120, 650], [790, 780]], dtype=float)


@pytest.fixture(scope="module")
def scene() -> tuple[SyntheticTable, np.ndarray]:
    # the shipped capture size: at 1280x720 the same table's cards are 61-74 px, under the reader's 88
    table = SyntheticTable(seed=11, seats=5, tilt_deg=15, size=(1920, 1080))
    return table, table.render([], frame_index=0)


def test_markers_recover_the_true_homography(scene) -> None:
    table, image = scene
    got = cal.from_markers(image, (800, 800), marker_mm=50)
    err = np.abs(got.to_image(PROBES) - table.calibration.to_image(PROBES)).max()
    assert err < 1.5, f"{err:.2f} px off"
    assert got.method == "aruco" and got.residual_px < 1.0
    back = got.to_table(got.to_image(PROBES))
    assert np.allclose(back, PROBES, atol=1e-6)


def test_wrong_table_size_shows_in_the_reprojection_error(scene) -> None:
    _, image = scene
    # telling it the markers are 700 mm apart while the sheet says 50 mm markers: no exact fit
    bad = cal.from_markers(image, (700, 800), marker_mm=50)
    good = cal.from_markers(image, (800, 800), marker_mm=50)
    assert bad.residual_px > 2 * good.residual_px


def test_missing_marker_is_a_clear_error(scene) -> None:
    table, image = scene
    covered = image.copy()
    corner = table.calibration.to_image([[800, 800]])[0].astype(int)
    cv2.circle(covered, tuple(int(v) for v in corner), 60, (40, 40, 40), -1)
    with pytest.raises(cal.CalibrationError, match=r"markers \[2\] not found"):
        cal.from_markers(covered, (800, 800))


def test_four_marked_corners(scene) -> None:
    table, _ = scene
    corners = table.calibration.to_image([[0, 0], [800, 0], [800, 800], [0, 800]])
    got = Calibration.from_corners(corners, (800, 800), (1920, 1080))
    assert np.allclose(got.to_image(PROBES), table.calibration.to_image(PROBES), atol=1e-6)
    with pytest.raises(GeometryError, match="four corner points"):
        Calibration.from_corners(corners[:3], (800, 800), (1920, 1080))
    with pytest.raises(GeometryError, match="degenerate|singular"):
        Calibration.from_corners([[0, 0], [1, 1], [2, 2], [3, 3]], (800, 800), (1920, 1080))


def test_checks_report_card_size_and_warn_when_too_small(scene) -> None:
    table, image = scene
    layout = table.layout
    good = cal.check(cal.from_markers(image, (800, 800)), layout)
    assert good.ok and set(good.card_px) == {z.name for z in layout.zones}
    assert all(88 <= px < 130 for px in good.card_px.values())
    # the same view at 1280x720: cards 61-74 px, under the reader's 64x88 crop (what the hardware
    # guide says of the old default size), so calibrate says so
    smaller = np.diag([2 / 3, 2 / 3, 1.0]) @ table.calibration.table_to_image
    poor = cal.check(Calibration(smaller, (1280, 720), (800, 800)), layout)
    assert not poor.ok and "too small" in poor.warnings[0] and "want ≥ 88 px" in poor.warnings[0]
    assert max(poor.card_px.values()) < 80


def test_the_card_size_threshold_is_the_readers_crop_and_the_guides() -> None:
    """calibrate, deploy/camera_geometry.py and docs/hardware.md name one figure: 88 px."""
    import sys
    from pathlib import Path

    from vision.classifier import CANONICAL_SIZE

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "deploy"))
    import camera_geometry

    assert cal.MIN_CARD_PX == CANONICAL_SIZE[1] == camera_geometry.CROP_PX[1] == 88
    guide = (root / "docs" / "hardware.md").read_text()
    assert "at least 88 px" in guide and "calibrate" in guide


def test_file_round_trip_and_bad_files(tmp_path, scene) -> None:
    table, image = scene
    c = cal.from_markers(image, (800, 800))
    path = cal.save(tmp_path / "cal.json", c, table.layout)
    c2, layout2 = cal.load(path)
    assert np.allclose(c2.table_to_image, c.table_to_image) and layout2 == table.layout
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(cal.CalibrationError, match="unreadable"):
        cal.load(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text(json.dumps({"format": "x"}))
    with pytest.raises(cal.CalibrationError, match="not a loo-table-calibration/1"):
        cal.load(tmp_path / "other.json")
    with pytest.raises(cal.CalibrationError, match="no such calibration file"):
        cal.load(tmp_path / "missing.json")


def test_layout_defaults_serialise_and_reject_overlaps() -> None:
    for seats in range(2, 9):
        layout = TableLayout.default(seats)
        assert [z.name for z in layout.seats] == [f"seat:{i}" for i in range(seats)]
        assert TableLayout.from_dict(json.loads(json.dumps(layout.to_dict()))) == layout
    with pytest.raises(GeometryError, match="overlap"):
        TableLayout(800, 800, (Zone("a", 0, 0, 100, 100), Zone("b", 50, 50, 100, 100)))
    with pytest.raises(GeometryError, match="smaller than a card"):
        Zone("tiny", 0, 0, 30, 30)
    with pytest.raises(GeometryError, match="zone: malformed"):
        Zone.from_dict({"name": "x"})


def test_a_new_seat_gets_a_zone_and_the_host_s_zones_stay_put() -> None:
    four = TableLayout.default(4)
    moved = Zone("seat:1", 0.0, 300.0, 120.0, 120.0)  # the host dragged seat 1 to the table's edge
    layout = TableLayout(800, 800, tuple(moved if z.name == "seat:1" else z for z in four.zones))
    five = layout.with_seats(5)
    assert [z.name for z in five.seats] == [f"seat:{i}" for i in range(5)]
    assert five.zone("seat:1") == moved and five.zone("turn_up") == four.zone("turn_up")
    assert all(five.zone(z.name) == z for z in layout.zones)
    # where the default spot for a seat is free it goes there; it never overlaps (TableLayout checks)
    default5 = TableLayout.default(5)
    refilled = TableLayout(800, 800, tuple(z for z in default5.zones if z.name != "seat:4")).with_seats(5)
    assert set(refilled.zones) == set(default5.zones)
    # a spot that is taken: the nearest free one
    blocker = Zone("seat:1", *TableLayout.default(5).zone("seat:4").center, 120.0, 120.0)
    crowded = TableLayout(800, 800, tuple(blocker if z.name == "seat:1" else z for z in four.zones))
    placed = crowded.with_seats(5).zone("seat:4")
    ideal = TableLayout.default(5).zone("seat:4")
    assert placed != ideal and np.hypot(placed.x - ideal.x, placed.y - ideal.y) <= 130
    assert crowded.with_seats(4) == crowded  # nobody new: nothing changes
    with pytest.raises(GeometryError, match="no room"):
        TableLayout(260, 260, (Zone("seat:0", 0, 0, 130, 130), Zone("seat:1", 130, 130, 130, 130),
                               Zone("turn_up", 130, 0, 130, 130), Zone("stock", 0, 130, 130, 130))).with_seats(3)


def test_homography_and_corner_order() -> None:
    src = np.array([[0, 0], [10, 0], [10, 20], [0, 20], [5, 5]], dtype=float)
    h_true = np.array([[2, 0.1, 5], [0.05, 1.5, 7], [0.001, 0.0005, 1]])
    dst = (np.hstack([src, np.ones((5, 1))]) @ h_true.T)
    dst = dst[:, :2] / dst[:, 2:]
    assert np.allclose(homography(src, dst), h_true / h_true[2, 2], atol=1e-8)
    # a landscape rectangle given in any order comes out portrait, clockwise from the top left
    pts = order_card_corners([[0, 0], [88, 0], [88, 63], [0, 63]][::-1])
    assert np.linalg.norm(pts[1] - pts[0]) == pytest.approx(63)
    assert np.linalg.norm(pts[2] - pts[1]) == pytest.approx(88)


def test_marker_sheet_is_an_svg_with_four_markers() -> None:
    svg = cal.marker_sheet_svg()
    assert svg.startswith("<?xml") and svg.count("<g transform") == 4 and "id 3: bottom left" in svg
    from importlib.resources import files

    shipped = files("vision") / "assets" / "aruco_markers.svg"
    assert shipped.read_text(encoding="utf-8") == svg  # the committed sheet is the generated one


def test_calibrate_command_writes_the_file(tmp_path, scene, capsys) -> None:
    _, image = scene
    img = tmp_path / "table.png"
    cv2.imwrite(str(img), image)
    out = tmp_path / "cal.json"
    assert cli_main(["calibrate", "--image", str(img), "--seats", "5", "--output", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["markers_found"] == [0, 1, 2, 3] and report["written"] == str(out)
    c, layout = cal.load(out)
    assert len(layout.seats) == 5
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((720, 1280, 3), 90, np.uint8))
    assert cli_main(["calibrate", "--image", str(blank), "--seats", "5", "--output", str(out)]) == 1
    assert "not found" in capsys.readouterr().err


from picamera2_fake import FakePicamera2, fake_picamera2  # noqa: E402,F401 - the Pi camera stand-in, its fixture


def test_calibrate_locks_the_pi_camera_and_run_applies_it(tmp_path, scene, capsys, fake_picamera2) -> None:
    """Exposure, white balance and focus run automatic while the picture settles, their settled
    values go into the calibration file, and the source `loo-table run` builds starts with them."""
    from vision.calibration import load_camera_controls

    _, image = scene
    FakePicamera2.image = image
    FakePicamera2.metadata = {"ExposureTime": 16543, "AnalogueGain": 1.83, "ColourGains": (2.01, 1.72),
                              "LensPosition": 0.75}
    h, w = image.shape[:2]
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[camera]\nsource = "picamera2"\nwidth = {w}\nheight = {h}\nfps = 15\n')
    out = tmp_path / "cal.json"
    assert cli_main(["calibrate", "--config", str(cfg), "--seats", "5", "--output", str(out), "--json",
                     "--settle", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    locked = {"AeEnable": False, "ExposureTime": 16543, "AnalogueGain": 1.83, "AwbEnable": False,
              "ColourGains": [2.01, 1.72], "AfMode": 0, "LensPosition": 0.75}
    assert report["ok"] and report["camera_controls"] == locked
    settling = FakePicamera2.instances[0]
    assert settling.configuration_calls[0]["controls"] == {"FrameRate": 15.0, "AeEnable": True,
                                                           "AwbEnable": True, "AfMode": 2}
    assert settling.captures == 15  # one second of frames at 15 fps before the values are taken
    assert load_camera_controls(out) == locked
    # `loo-table run`'s camera start (table/commands/run.py) with the config naming that file
    import argparse

    from table.commands.run import Controller
    from table.config import load_config
    from table.runtime import load_calibration

    cfg.write_text(cfg.read_text() + f'calibration = "{out}"\n')
    source, _, _ = Controller(argparse.Namespace(mock_pins=True))._camera(load_config(cfg), load_calibration)
    source.read()
    source.close()
    assert FakePicamera2.instances[1].configuration_calls[0]["controls"] == {
        "FrameRate": 15.0, **locked, "ColourGains": (2.01, 1.72)}


def test_calibrate_from_a_photo_or_with_no_lock_stores_no_controls(tmp_path, scene, capsys) -> None:
    from vision.calibration import load_camera_controls

    _, image = scene
    img = tmp_path / "table.png"
    cv2.imwrite(str(img), image)
    out = tmp_path / "cal.json"
    assert cli_main(["calibrate", "--image", str(img), "--seats", "5", "--output", str(out)]) == 0
    assert "camera controls: automatic" in capsys.readouterr().out
    assert load_camera_controls(out) == {} and "camera_controls" not in json.loads(out.read_text())


def test_calibrate_locks_a_usb_camera_and_run_applies_it(tmp_path, scene, capsys, monkeypatch) -> None:
    """A USB camera named by its stable /dev/v4l path: exposure, white balance and focus settle
    automatic, are locked through OpenCV's V4L2 properties, stored, and applied by `run`."""
    import argparse

    from test_sources import V4L2Capture

    from table.commands.run import Controller
    from table.config import load_config
    from table.runtime import load_calibration
    from vision.calibration import load_camera_controls

    _, image = scene
    made: list[V4L2Capture] = []

    def capture(device):  # noqa: ANN001, ANN202
        made.append(V4L2Capture(image=image))
        return made[-1]

    monkeypatch.setattr(cv2, "VideoCapture", capture)
    h, w = image.shape[:2]
    device = "/dev/v4l/by-id/usb-046d_HD_Pro_Webcam_C920-video-index0"
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[camera]\nsource = "opencv"\ndevice = "{device}"\nwidth = {w}\nheight = {h}\nfps = 15\n')
    out = tmp_path / "cal.json"
    assert cli_main(["calibrate", "--config", str(cfg), "--seats", "5", "--output", str(out), "--json",
                     "--settle", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    settled = made[0]
    assert settled.props[cv2.CAP_PROP_FOURCC] == cv2.VideoWriter_fourcc(*"MJPG")  # a camera, by its v4l name
    locked = {"CAP_PROP_AUTO_EXPOSURE": 1.0, "CAP_PROP_EXPOSURE": 100.0 + 7 * 15, "CAP_PROP_AUTO_WB": 0.0,
              "CAP_PROP_WB_TEMPERATURE": 4000.0 + 50 * 15, "CAP_PROP_AUTOFOCUS": 0.0, "CAP_PROP_FOCUS": 5.0 * 15}
    assert report["ok"] and report["camera_controls"] == locked  # where 15 frames of automatic left them
    assert load_camera_controls(out) == locked
    cfg.write_text(cfg.read_text() + f'calibration = "{out}"\n')
    source, _, _ = Controller(argparse.Namespace(mock_pins=True))._camera(load_config(cfg), load_calibration)
    for _ in range(3):
        source.read()
    source.close()
    running = made[-1]
    assert running.props[cv2.CAP_PROP_EXPOSURE] == locked["CAP_PROP_EXPOSURE"]  # held: no hunting
    assert running.props[cv2.CAP_PROP_FOCUS] == locked["CAP_PROP_FOCUS"] and source.missed == []
