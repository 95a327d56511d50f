"""`loo-table identify`: JSON lines per image, fixture photos read right, clean failures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from table.cli import main

ROOT = Path(__file__).resolve().parents[2]
CARDS = ROOT / "tests" / "data" / "cards"
TRUTH = json.loads((CARDS / "truth.json").read_text())
PHOTOS = sorted(n for n in TRUTH if n.startswith("photo_"))


def _lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_reads_every_fixture_photo(capsys: pytest.CaptureFixture[str]) -> None:
    """Every card is found; each is read right or comes out unsure with the right first guess."""
    assert main(["identify", *(str(CARDS / n) for n in PHOTOS)]) == 0
    lines = _lines(capsys.readouterr().out)
    assert [Path(line["image"]).name for line in lines] == PHOTOS
    confident = total = 0
    for line in lines:
        want = sorted(TRUTH[Path(line["image"]).name])
        got = sorted("back" if c.get("face_down") else (c["card"] or c["top3"][0][0]) for c in line["cards"])
        assert got == want, line
        for c in line["cards"]:
            total += 1
            confident += c["card"] is not None or bool(c.get("face_down"))
    assert confident >= total // 2


def test_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["identify", str(CARDS / "photo_wood_as_kc_2h.jpg"), "--threshold", "0.999999", "--margin", "0.99"]) == 0
    (line,) = _lines(capsys.readouterr().out)
    assert set(line) == {"image", "cards"}
    assert len(line["cards"]) == 3
    for card in line["cards"]:
        assert 0.0 <= card["confidence"] <= 1.0
        assert len(card["corners"]) == 4 and all(len(p) == 2 for p in card["corners"])
        xs, ys = [p[0] for p in card["corners"]], [p[1] for p in card["corners"]]
        x0, y0, x1, y1 = card["box"]  # what shows: here three cards lying apart, each whole
        assert (x0, y0) == (pytest.approx(max(0, min(xs)), abs=0.2), pytest.approx(max(0, min(ys)), abs=0.2))
        assert (x1, y1) == (pytest.approx(max(xs), abs=0.2), pytest.approx(max(ys), abs=0.2))
        assert "under" not in card
        if card["card"] is None and not card.get("face_down"):
            # unsure: the three best guesses, best first
            assert len(card["top3"]) == 3
            probs = [p for _, p in card["top3"]]
            assert probs == sorted(probs, reverse=True)
        else:
            assert "top3" not in card


def test_unreadable_images_exit_2_after_the_rest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.jpg"
    junk.write_text("not a picture")
    good = CARDS / "photo_light_qh.jpg"
    cut = tmp_path / "half-copied.jpg"
    cut.write_bytes(good.read_bytes()[:4000])
    status = main(["identify", str(junk), str(good), str(tmp_path / "missing.png"), str(cut)])
    out, err = capsys.readouterr()
    assert status == 2
    assert [Path(x["image"]).name for x in _lines(out)] == ["photo_light_qh.jpg"]
    errors = err.strip().splitlines()
    assert len(errors) == 3 and all(e.startswith("error: ") for e in errors)
    assert "junk.jpg: not an image" in errors[0]
    assert "missing.png: no such file" in errors[1]
    assert "half-copied.jpg: truncated JPEG" in errors[2]


def test_broken_model_is_one_line_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = tmp_path / "broken.onnx"
    model.write_bytes(b"\x08\x07garbage")
    shutil.copy(ROOT / "models" / "card_classifier.json", model.with_suffix(".json"))
    status = main(["identify", "--model", str(model), str(CARDS / "photo_light_qh.jpg")])
    err = capsys.readouterr().err
    assert status == 1
    assert err.count("\n") == 1 and "broken.onnx" in err


def test_help_is_instant(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["identify", "--help"])
    assert exc.value.code == 0
    assert "IMAGE" in capsys.readouterr().out
