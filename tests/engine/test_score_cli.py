"""`loo-table score FILE`: output format, error lines, exit status (docs/hand-record.md)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.records import OUTCOME_KEYS, load_records
from table.cli import main

VECTORS_PATH = Path(__file__).resolve().parents[1] / "data" / "vectors.json"
VECTORS = {v["id"]: v for v in load_records(VECTORS_PATH.read_text())}


def score(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], list[str]]:
    status = main(["score", *args])
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err.splitlines()


def write(tmp_path: Path, value: Any, name: str = "records.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return str(path)


def test_one_record_gives_one_line_in_key_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = score(capsys, write(tmp_path, VECTORS["TC06"]))
    assert status == 0 and err == []
    assert len(out) == 1
    got = json.loads(out[0])
    assert list(got) == [k for k in OUTCOME_KEYS if k in got]
    assert got["id"] == "TC06"
    assert got["balances_after"] == {"A": 83, "B": 77, "C": 74}
    assert "\n" not in out[0]


def test_bad_records_get_error_lines_and_the_rest_are_scored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = copy.deepcopy(VECTORS["TC01"])
    broken["id"] = "BROKEN"
    broken["tricks"][1]["plays"][2] = ["D", "XX"]
    unnamed = copy.deepcopy(VECTORS["TC01"])
    del unnamed["id"]
    unnamed["dealer"] = "Zed"
    records = [VECTORS["TC01"], broken, VECTORS["FC01"], unnamed, VECTORS["EG01"]]
    status, out, err = score(capsys, write(tmp_path, records))
    assert status == 2
    assert [json.loads(line)["id"] for line in out] == ["TC01", "FC01", "EG01"]
    assert len(err) == 2
    assert err[0].startswith("error: BROKEN: ") and "'XX' is not a card" in err[0]
    assert err[1].startswith("error: #4: ") and "'Zed' is not at the table" in err[1]


def test_vectors_object_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = {"schema": "x", "vectors": [VECTORS["TC10"], VECTORS["MD01"]]}
    status, out, _ = score(capsys, write(tmp_path, doc))
    assert status == 0
    assert [json.loads(line)["pool_after"] for line in out] == [0, 12]


def test_end_of_game_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = score(capsys, write(tmp_path, VECTORS["EG01"]))
    assert status == 0
    assert json.loads(out[0]) == {"id": "EG01", "game_ends_after_deal": 4}


def test_missing_file_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = score(capsys, str(tmp_path / "nope.json"))
    assert status == 1 and out == []
    assert len(err) == 1 and "cannot read" in err[0] and "nope.json" in err[0]


def test_not_json_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "junk.json"
    path.write_text("{ this is not json", encoding="utf-8")
    status, out, err = score(capsys, str(path))
    assert status == 1 and out == []
    assert len(err) == 1 and "not JSON" in err[0]


def test_not_utf8_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    status, _, err = score(capsys, str(path))
    assert status == 1 and len(err) == 1


def test_wrong_top_level_shape_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = score(capsys, write(tmp_path, 42))
    assert status == 1 and len(err) == 1 and "expected a record" in err[0]


def test_empty_list_scores_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = score(capsys, write(tmp_path, []))
    assert (status, out, err) == (0, [], [])


def test_stdin_via_subprocess() -> None:
    """The real console entry point, reading `-` from standard input."""
    records = [VECTORS["TC01"], {"variant": "three_card", "id": "NOPE"}]
    proc = subprocess.run(
        [sys.executable, "-m", "table", "score", "-"],
        input=json.dumps(records), capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2
    assert [json.loads(line)["id"] for line in proc.stdout.splitlines()] == ["TC01"]
    assert proc.stderr.splitlines() == ["error: NOPE: the record has no 'players' (seat names in clockwise order)"]


def test_help_names_the_argument(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["score", "--help"])
    assert info.value.code == 0
    assert "FILE" in capsys.readouterr().out
