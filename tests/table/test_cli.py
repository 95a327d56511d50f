"""table.cli: settings every command must run under."""

from __future__ import annotations

import os

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
