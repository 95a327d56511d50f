"""One card notation: vision's labels are the engine's card text; vision's plain types load
without OpenCV; zones are values; and the packages keep their layering."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from engine import DECK, Card
from vision.event_types import STOCK, TURN_UP, VisionEvent, ZoneId
from vision.labels import BACK, FACES, LABELS, canonical_label

ROOT = Path(__file__).resolve().parents[2]


def test_vision_faces_are_the_engines_cards_in_the_same_order() -> None:
    assert list(FACES) == [str(c) for c in DECK]
    assert LABELS == (*FACES, BACK)
    assert all(str(Card.parse(label)) == label for label in FACES)


@pytest.mark.parametrize("text, label", [
    ("qh", "QH"), ("10h", "10H"), ("Th", "10H"), (" AS ", "AS"), ("Back", "back"),
    ("1H", None), ("QX", None), ("", None), ("10", None),
])
def test_canonical_label(text: str, label: str | None) -> None:
    assert canonical_label(text) == label


def test_the_classifier_synthesis_enrolment_and_web_share_the_notation() -> None:
    from vision import classifier, enroll, synthetic
    from web.cards import normalize_card

    assert classifier.LABELS is LABELS and synthetic.FACES is FACES
    assert enroll.guide_order() == LABELS
    assert enroll.label_from_filename(Path("th_front.jpg")) == "10H"
    assert [normalize_card(label.lower()) for label in FACES] == list(FACES)


def test_zones_are_values() -> None:
    assert ZoneId.parse("seat:2") == ZoneId.of_seat(2) and ZoneId.of_seat(2).seat == 2
    assert str(ZoneId.of_seat(7)) == "seat:7" and ZoneId.parse("turn_up") is not TURN_UP
    assert ZoneId.parse("turn_up") == TURN_UP and ZoneId.parse("stock") == STOCK
    assert not TURN_UP.is_seat and ZoneId.of_seat(0).is_seat
    assert ZoneId.seat_of("seat:3") == 3 and ZoneId.seat_of("turn_up") is None
    for bad in ("seat:", "seat:x", "seat:-1", "table", ""):
        assert ZoneId.seat_of(bad) is None
        with pytest.raises(ValueError, match="unknown zone"):
            ZoneId.parse(bad)


def test_event_types_load_without_opencv_or_numpy() -> None:
    code = ("import sys; import vision.event_types, vision.labels; "
            "bad = [m for m in ('cv2', 'numpy', 'onnxruntime') if m in sys.modules]; "
            "print(', '.join(bad)); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    from vision import events

    assert events.VisionEvent is VisionEvent  # re-exported where the watcher makes them


def _imports(package: str) -> set[str]:
    found: set[str] = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package, forbidden", [
    ("engine", {"vision", "table", "web", "models"}),
    ("vision", {"engine", "table", "web", "models"}),
    ("web", {"models"}),
])
def test_layering(package: str, forbidden: set[str]) -> None:
    assert not _imports(package) & forbidden


def _full_imports(package: str) -> set[str]:
    found: set[str] = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
    return found


def test_web_uses_only_the_contract_of_table_and_the_contract_no_web() -> None:
    """The dashboard's contract (snapshot, commands, payload checks, service protocol) lives in
    table.contract: web imports it and nothing else of table; it imports no web and no Flask."""
    assert {m for m in _full_imports("web") if m.split(".")[0] == "table"} <= {
        "table.contract", "table.contract.snapshot", "table.contract.commands", "table.contract.payloads",
        "table.contract.service", "table.contract.values", "table.contract.pictures",
        "table.contract.camera_setup", "table.contract.claim"}
    contract = _full_imports("table/contract")
    # the standard library and engine only: no Flask, no web, nothing to install
    assert {m.split(".")[0] for m in contract} - {"engine", "table", "__future__"} <= set(sys.stdlib_module_names)
    assert {m for m in contract if m.startswith("table.")} <= {f"table.contract.{n}" for n in (
        "snapshot", "commands", "payloads", "service", "values", "pictures", "camera_setup", "claim", "json_value")}


def test_importing_the_referee_loads_no_flask() -> None:
    code = "import sys, table.referee, table.service; print('flask' in sys.modules, any(m.startswith('web') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.stdout.split() == ["False", "False"], done.stdout + done.stderr


def test_classifier_and_enrolment_no_longer_import_each_other_both_ways() -> None:
    enroll_src = (ROOT / "vision" / "enroll.py").read_text(encoding="utf-8")
    assert "vision.classifier" not in enroll_src
