"""models.report turns metrics.json into the model card's tables (figures are pasted, never retyped)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.report import main

_ROW = {"n": 20, "top1": 0.95, "confidently_wrong": 0.0005, "unsure": 0.125, "accuracy_when_sure": 0.999}


def _metrics() -> dict[str, object]:
    result = {"decks": {"deck-b": dict(_ROW, top1=0.9), "deck-a": dict(_ROW)}, "all": dict(_ROW, n=40),
              "not_a_card": {"n": 10, "accepted_as_card": 0.0}, "latency_ms_per_crop_1thread": 0.5,
              "onnx_bytes": 280000, "confused": [{"true": "9H", "read": "10H", "count": 3}]}
    return {"shipped": "int8", "threshold": 0.8, "margin": 0.0, "parameters": 1234, "total_seconds": 600,
            "train_seconds": 540, "machine": "test box", "device": "cpu", "results": {"int8": result}}


def test_tables_carry_the_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "metrics.json").write_text(json.dumps(_metrics()))
    assert main(["--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| deck-a | int8 | 20 | 95.00 % | 0.05 % | 12.5 % |" in out
    assert out.index("| deck-a ") < out.index("| deck-b ")  # sorted by deck
    assert "| deck-b | int8 | 20 | 90.00 % |" in out
    assert "**all held-out** | int8 | 40 |" in out and "9H→10H ×3" in out
    assert "enrolled" not in out  # no enroll_metrics.json, no enrolment table


def test_missing_metrics_is_one_line_and_nonzero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: cannot read")


def test_an_ensemble_lists_each_member_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    metrics = _metrics()
    metrics["members"] = [
        {"settings": {"rounds": "10"}, "parameters": 617, "train_seconds": 1200, "total_seconds": 1300,
         "held_out": {"fp32": dict(_ROW), "int8": dict(_ROW, top1=0.98)}},
        {"settings": {}, "parameters": 617, "train_seconds": 600, "total_seconds": 700,
         "held_out": {"fp32": dict(_ROW, top1=0.97)}},
    ]
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    assert main(["--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| rounds=10 | 617 | 20 min | 98.00 % | 0.050 % | 12.5 % |" in out  # int8 figures where there are some
    assert "| (shared config) | 617 | 10 min | 97.00 % |" in out
