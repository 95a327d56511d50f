"""Every rule vector of tests/data/vectors.json through the `loo-table score` code path.

`loo-table score` is `load_records` + `score_record` per record; these tests call exactly those,
compare every expected field, and once run the real command over the whole file.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from engine.records import OUTCOME_KEYS, load_records, parse_record, score_record
from table.cli import main

VECTORS_PATH = Path(__file__).resolve().parents[1] / "data" / "vectors.json"
VECTORS: list[dict[str, Any]] = load_records(VECTORS_PATH.read_text(encoding="utf-8"))


def _expected(v: dict[str, Any]) -> dict[str, Any]:
    return {k: x for k, x in v["expected"].items() if k != "notes"}


def test_the_file_holds_all_forty_vectors() -> None:
    assert len(VECTORS) == 40
    assert len({v["id"] for v in VECTORS}) == 40


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_vector_scores_as_expected(v: dict[str, Any]) -> None:
    out = score_record(v)
    assert out["id"] == v["id"]
    for key, want in _expected(v).items():
        assert key in out, f"{v['id']}: outcome has no {key!r}"
        assert out[key] == want, f"{v['id']} {key}: {out[key]!r} != {want!r}"


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_outcome_keys_are_exactly_the_documented_ones_in_order(v: dict[str, Any]) -> None:
    out = score_record(v)
    if v.get("kind") == "end_of_game":
        assert list(out) == ["id", "game_ends_after_deal"]
        return
    keys = list(out)
    assert keys == [k for k in OUTCOME_KEYS if k in keys]
    assert set(OUTCOME_KEYS) - set(keys) <= {"shares"}
    assert ("shares" in out) == bool(v.get("tricks"))
    for revoke in out["revokes"]:
        assert list(revoke) == ["player", "trick", "rule", "witness", "detected_in_trick"]
    if "total_chips" in out:
        assert sum(out["balances_after"].values()) + out["pool_after"] == out["total_chips"]


@pytest.mark.parametrize("v", VECTORS, ids=[v["id"] for v in VECTORS])
def test_record_round_trips_through_its_canonical_form(v: dict[str, Any]) -> None:
    canonical = parse_record(v).to_dict()
    assert parse_record(canonical).to_dict() == canonical
    assert score_record(canonical) == score_record(v)


def test_loo_table_score_over_the_vectors_file() -> None:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["score", str(VECTORS_PATH)])
    assert status == 0, err.getvalue()
    assert err.getvalue() == ""
    lines = out.getvalue().splitlines()
    assert len(lines) == len(VECTORS)
    for line, v in zip(lines, VECTORS, strict=True):
        got = json.loads(line)
        assert got["id"] == v["id"]
        for key, want in _expected(v).items():
            assert got[key] == want, f"{v['id']} {key}"
