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


def _table_modules() -> dict[str, Path]:
    found = {}
    for path in (ROOT / "table").rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def _imports_of(path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of table/ that ``path`` imports, at the top or inside a function."""
    deps: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                deps.add(full if full in modules else node.module)
        elif isinstance(node, ast.Import):
            deps.update(alias.name for alias in node.names)
    return {d for d in deps if d in modules and d != "table"}


def test_no_two_files_in_table_import_each_other_round_a_cycle() -> None:
    """Arrows one way inside table/ too: table.ledger names backups through table.backup_files,
    so table.backup (which opens ledgers) and table.ledger no longer import each other."""
    modules = _table_modules()
    graph = {name: _imports_of(path, modules) - {name} for name, path in modules.items()}
    cycles = []
    for start in graph:  # a cycle through start: start reaches itself
        seen, todo = set(), list(graph[start])
        while todo:
            node = todo.pop()
            if node == start:
                cycles.append(start)
                break
            if node not in seen:
                seen.add(node)
                todo.extend(graph[node])
    assert cycles == []


def test_the_game_code_imports_no_command_line_module() -> None:
    """table.commands.* are the CLI's leaves: the game (the demo included) imports none of them."""
    modules = _table_modules()
    offenders = sorted(f"{name} -> {dep}" for name, path in modules.items()
                       if not name.startswith("table.commands") and name != "table.cli"
                       for dep in _imports_of(path, modules) if dep.startswith("table.commands"))
    assert offenders == []
