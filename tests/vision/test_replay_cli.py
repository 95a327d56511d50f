"""`loo-table replay`: the JSON-lines schema on a recording generated from the synthetic table
(one short deal, calibrated from the markers in its first frame), and clean failures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from table.cli import main as cli_main
from vision.events import EVENT_KINDS
from vision.sources.replay import write_recording
from vision.synthetic import night

MODEL = Path(__file__).resolve().parents[2] / "models" / "card_classifier.onnx"
CARD = re.compile(r"^(10|[2-9JQKA])[CDHS]$")


@pytest.fixture(scope="module")
def recording(tmp_path_factory) -> tuple[Path, list]:
    if not MODEL.is_file():
        pytest.skip("models/card_classifier.onnx not built yet")
    frames = list(night(seed=4, deals=1, seats=3, tricks=1))
    folder = tmp_path_factory.mktemp("rec")
    write_recording(folder, [f.image for f in frames], [f.truth.timestamp for f in frames], ext=".jpg")
    truth = [zc for f in frames for zc in f.truth.came_to_rest]
    return folder, truth


def test_replay_prints_one_json_event_per_line(recording, capsys) -> None:
    folder, truth = recording
    assert cli_main(["replay", str(folder), "--seats", "3"]) == 0
    captured = capsys.readouterr()
    lines = [line for line in captured.out.splitlines() if line.strip()]
    events = [json.loads(line) for line in lines]
    assert events, "no events"
    for e in events:
        assert e["kind"] in EVENT_KINDS
        assert isinstance(e["zone"], str) and re.match(r"^(seat:\d|turn_up|stock)$", e["zone"])
        assert isinstance(e["timestamp"], float | int) and isinstance(e["frame"], int)
        if "card" in e:
            assert CARD.match(e["card"])
        if e["kind"] == "card_placed":
            assert 0.0 < e["confidence"] <= 1.0
        if e["kind"] == "card_unsure":
            assert len(e["top3"]) == 3 and all(isinstance(p, float) for _, p in e["top3"])
    frames = [e["frame"] for e in events]
    assert frames == sorted(frames)
    placed = {(e["zone"], e["card"]) for e in events if e["kind"] == "card_placed"}
    unsure = {e["zone"] for e in events if e["kind"] == "card_unsure"}
    faces = [(z, c) for z, c in truth if c != "back"]
    # every card played is either read right or flagged unsure; nothing else is accepted
    assert all(zc in placed or zc[0] in unsure for zc in faces)
    assert placed <= set(faces)
    assert any(e["kind"] == "card_face_down" and e["zone"] == "stock" for e in events)
    assert re.search(r"replay: \d+ frames, \d+ events", captured.err)


def test_replay_with_a_calibration_file(recording, tmp_path, capsys) -> None:
    folder, _ = recording
    cal = tmp_path / "cal.json"
    first = sorted(folder.glob("*.jpg"))[0]
    assert cli_main(["calibrate", "--image", str(first), "--seats", "3", "--output", str(cal)]) == 0
    capsys.readouterr()
    assert cli_main(["replay", str(folder), "--calibration", str(cal), "--quiet"]) == 0
    out = capsys.readouterr()
    assert out.err == "" and all(json.loads(line)["kind"] in EVENT_KINDS for line in out.out.splitlines())


def test_replay_failures_are_one_line(tmp_path, capsys) -> None:
    assert cli_main(["replay", str(tmp_path / "missing")]) == 1
    assert "no such file" in capsys.readouterr().err
    import numpy as np

    write_recording(tmp_path / "blank", [np.full((72, 128, 3), 50, np.uint8)] * 2)
    if MODEL.is_file():
        assert cli_main(["replay", str(tmp_path / "blank")]) == 1
        err = capsys.readouterr().err
        assert err.startswith("loo-table replay: calibration:") and err.count("\n") == 1
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    (tmp_path / "bad.json").write_text(json.dumps({"labels": ["AS", "back"]}))
    assert cli_main(["replay", str(tmp_path / "blank"), "--model", str(bad)]) == 1
    assert "bad.onnx" in capsys.readouterr().err


RECORDINGS = Path(__file__).resolve().parents[1] / "data" / "recordings"


def test_replay_of_a_committed_recording_prints_its_expected_event(capsys) -> None:
    """`loo-table replay tests/data/recordings/slide.mp4` reads the table with the recording's own
    layout.json (it printed nothing with the default layout), and `--layout` names one."""
    if not MODEL.is_file():
        pytest.skip("models/card_classifier.onnx not built yet")
    expected = json.loads((RECORDINGS / "expected.json").read_text())["slide"]["events"]
    for extra in ([], ["--layout", str(RECORDINGS / "layout.json")]):
        assert cli_main(["replay", str(RECORDINGS / "slide.mp4"), "--quiet", *extra]) == 0
        got = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert [[e["kind"], e["zone"], e.get("card")] for e in got] == expected


def test_replay_with_a_layout_that_is_not_one_is_one_line(tmp_path, capsys) -> None:
    if not MODEL.is_file():
        pytest.skip("models/card_classifier.onnx not built yet")
    bad = tmp_path / "layout.json"
    bad.write_text("{}")
    assert cli_main(["replay", str(RECORDINGS / "slide.mp4"), "--layout", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"loo-table replay: {bad}: not a table layout") and err.count("\n") == 1
