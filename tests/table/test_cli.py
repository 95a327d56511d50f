"""table.cli: settings every command must run under."""

from __future__ import annotations

import os

import pytest

from table import cli


def test_onnxruntime_telemetry_is_off_before_any_command_runs(tmp_path, monkeypatch):
    (tmp_path / "probe_command.py").write_text(
        "import os\n"
        "AT_IMPORT = os.environ.get('ORT_DISABLE_TELEMETRY')\n"
        "def add_arguments(parser):\n    pass\n"
        "def run(args):\n    return 0 if AT_IMPORT == '1' else 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(cli.COMMANDS, "probe", ("probe_command", "test probe"))
    monkeypatch.delenv("ORT_DISABLE_TELEMETRY", raising=False)
    assert cli.main(["probe"]) == 0  # set before the command's module was even imported
    assert os.environ["ORT_DISABLE_TELEMETRY"] == "1"


def test_an_explicit_telemetry_setting_is_kept(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ORT_DISABLE_TELEMETRY", "0")
    assert cli.main(["pins"]) == 0
    capsys.readouterr()
    assert os.environ["ORT_DISABLE_TELEMETRY"] == "0"


def test_train_evaluate_only_without_a_trained_model_stops_before_rendering(tmp_path, capsys):
    """`train --evaluate-only` on a folder with no trained model says so at once: it used to
    render every deck's artwork first (minutes) and only then find the model missing."""
    pytest.importorskip("torch")
    out = tmp_path / "empty"
    out.mkdir()
    assert cli.main(["train", "--evaluate-only", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"loo-table train: --evaluate-only needs {out / 'card_classifier.fp32.onnx'} from an earlier run"]
    assert list(out.iterdir()) == []  # nothing rendered, nothing written
