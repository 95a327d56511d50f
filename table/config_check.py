"""What `loo-table run` would refuse in a config that parses: checked without starting the table.

Why: `loo-table pins --config` is the documented way to check a config file, but it only parsed
it; an unknown house rule in ``[game] options``, a model file or calibration file that is not
there passed, and `run` then refused at start (under systemd, a restart loop). These checks are
the ones `run` makes first, with the same one-line messages, and need no camera or GPIO.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from table.config import TableConfig


def config_problems(cfg: TableConfig) -> list[str]:
    """One line per problem `run` would meet with ``cfg`` before it opens the camera or the pins."""
    problems: list[str] = []
    from engine import Options

    try:
        opts = Options.from_dict(cfg.game.variant, dict(cfg.game.options))
        if not opts.players_min <= cfg.seats <= opts.players_max:
            problems.append(f"game.players: {cfg.game.variant} is for {opts.players_min} to "
                            f"{opts.players_max} players, the config names {cfg.seats}")
    except (ValueError, TypeError) as exc:
        problems.append(f"game.options: {exc}")
    for key, value, shipped in (("model.path", cfg.model.path, "card_classifier.onnx"),
                                ("model.detector", cfg.model.detector, "card_detector.onnx")):
        if value.strip().lower() == "off" and key == "model.detector":
            continue
        path = Path(value) if value else _shipped(shipped)
        if not path.is_file():
            problems.append(f"{key}: {path} does not exist" + ("" if value else " (the shipped model is missing: reinstall)"))
    if cfg.camera.calibration:
        from table.runtime import load_calibration

        try:
            load_calibration(cfg.camera.calibration, cfg.seats)
        except ValueError as exc:
            problems.append(str(exc))
    return problems


def _shipped(name: str) -> Path:
    from importlib.resources import files

    return Path(str(files("models") / name))
