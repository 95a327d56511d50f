"""`loo-table pins`: the wiring table printed for a config."""

from __future__ import annotations

import json

from table.cli import main


def test_pins_json_lists_every_device_once(capsys):
    assert main(["pins", "--all-seats", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 21
    assert {"gpio": 20, "physical": 38, "device": "dealer button"} in rows
    assert [r["physical"] for r in rows] == sorted(r["physical"] for r in rows)


def test_pins_uses_the_player_count_of_the_config(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[game]\nplayers = ["A", "B", "C", "D", "E"]\n')
    assert main(["pins", "--config", str(cfg), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "| GPIO7 | 26 | seat 4 button |" in out and "seat 5" not in out


def test_pins_bad_config_is_one_line_and_exit_1(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[pins]\nbuzzer = 3\n")
    assert main(["pins", "--config", str(cfg)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "pins.buzzer: GPIO3" in err
