"""docs/architecture.md's path of one played card names the code it runs through: every dotted
name it gives (`table.recorder.Recorder.commit`, `vision.events.TableWatcher.process`, …) exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"`((?:engine|vision|table|web)(?:\.[A-Za-z_]\w*)+)")


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_name_on_the_cards_path_exists() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    path = text[text.index("## One played card"):]
    names = sorted(set(NAME.findall(path)))
    assert len(names) >= 10
    assert [n for n in names if not _resolves(n)] == []
