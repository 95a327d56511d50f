"""`loo-table run` gives the dashboard its camera: the view of the synthetic camera, the mat, and
a calibration made from the phone that the running camera thread uses at once (no restart)."""

from __future__ import annotations

import argparse
import time

import pytest
from test_run import HAVE_MODEL, write_config

from table.contract.camera_setup import CalibrateRequest
from vision.calibration import load


@pytest.mark.skipif(not HAVE_MODEL, reason="the shipped card model is missing")
def test_the_running_table_is_calibrated_from_the_phone(tmp_path):
    from table.commands.run import Controller

    cfg = write_config(tmp_path, camera='source = "synthetic"\nwidth = 1280\nheight = 720')
    ctl = Controller(argparse.Namespace(config=str(cfg), mock_pins=True, host=None, port=None,
                                        max_seconds=None, quiet=True))
    try:
        ctl.start()
        deadline = time.monotonic() + 20
        while ctl.view.latest()[0] is None and time.monotonic() < deadline:
            time.sleep(0.05)
        pictures = ctl.web.app.extensions["loo"].pictures
        view = pictures.camera_view()
        assert view is not None and view.jpeg[:2] == b"\xff\xd8"
        assert ">Ann</text>" in pictures.table_mat()
        before = ctl.camera.watcher
        report = ctl.calibrator.calibrate(CalibrateRequest((800.0, 800.0)))
        assert report["markers_found"] == [0, 1, 2, 3] and report["residual_px"] < 2.0, report
        assert ctl.camera.watcher is not before and ctl.camera.watcher.calibration.method == "aruco"
        saved, layout = load(tmp_path / "state" / "calibration.json")
        assert saved.method == "aruco" and len(layout.seats) == len(ctl.referee.state.players)
    finally:
        ctl.stop()


@pytest.mark.skipif(not HAVE_MODEL, reason="the shipped card model is missing")
def test_a_folder_of_photos_of_a_real_table_stands_in_for_the_camera(tmp_path):
    """`source = "photos"`: real photos (tests/data's bicycle-9a) as the camera's frames; the new
    table starts uncalibrated, the host sees the picture and calibrates by four corners."""
    from pathlib import Path

    from table.commands.run import Controller

    photos = Path(__file__).resolve().parents[1] / "data" / "photos" / "bicycle-9a"
    cal = tmp_path / "state" / "calibration.json"
    cfg = write_config(tmp_path, camera=f'source = "photos"\ndevice = "{photos}"\nfps = 5\ncalibration = "{cal}"')
    ctl = Controller(argparse.Namespace(config=str(cfg), mock_pins=True, host=None, port=None,
                                        max_seconds=None, quiet=True))
    try:
        ctl.start()
        assert ctl.source.describe() == f"photos {photos}"
        deadline = time.monotonic() + 20
        while ctl.view.latest()[0] is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ctl.camera.watcher is None and ctl.view.picture() is not None
        assert any(a["kind"] == "camera_setup" for a in ctl.referee.snapshot()["alerts"])
        report = ctl.calibrator.calibrate(CalibrateRequest((800.0, 800.0), corners=(
            (0.05, 0.05), (0.95, 0.05), (0.95, 0.95), (0.05, 0.95))))
        assert report["method"] == "corners" and cal.is_file()
        frames = ctl.camera.frames
        deadline = time.monotonic() + 10
        while ctl.camera.frames < frames + 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ctl.camera.watcher is not None and ctl.camera.watcher.stats["frames"] >= 1  # reading now
        ctl.referee.sync()
        assert not any(a["kind"] == "camera_setup" for a in ctl.referee.snapshot()["alerts"])
    finally:
        ctl.stop()
