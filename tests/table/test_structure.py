"""The controller stays in small pieces: no class in table/ over 400 lines, and nothing outside a
class reaches into the referee's private methods."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_class_in_table_is_over_400_lines() -> None:
    big = []
    for path in (ROOT / "table").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > 400:
                    big.append(f"{path.relative_to(ROOT)}:{node.name} ({lines} lines)")
    assert not big


def test_nothing_calls_the_referees_private_methods_from_outside() -> None:
    calls = re.compile(r"\breferee\._[a-z]\w*\(")
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "table").rglob("*.py")
                 if calls.search(p.read_text(encoding="utf-8"))]
    assert not offenders
