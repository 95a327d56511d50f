"""The controller stays in small pieces: no class in table/ over 400 lines, and nothing outside a
class reaches into the referee's private methods."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


PROJECT = ("engine", "vision", "table", "web")


def _classes() -> dict[str, tuple[Path, ast.ClassDef]]:
    """Every class of the project by name (names are unique enough for this count)."""
    found: dict[str, tuple[Path, ast.ClassDef]] = {}
    for package in PROJECT:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    found.setdefault(node.name, (path, node))
    return found


def _lines_with_bases(name: str, classes: dict[str, tuple[Path, ast.ClassDef]], seen: set[str]) -> int:
    """A class's own lines plus those of every project class it inherits from: a class split into
    a chain of mixins is still one object of all their lines."""
    if name in seen or name not in classes:
        return 0
    seen.add(name)
    node = classes[name][1]
    assert node.end_lineno is not None
    own = node.end_lineno - node.lineno + 1
    bases = [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in node.bases]
    return own + sum(_lines_with_bases(b, classes, seen) for b in bases)


# issue 51: the table state was the last class split into mixins (`_Chips`, `_Queue`, `_Fixes`,
# 657 lines with its bases); it is composed of parts now (table.chip_book, table.change_queue,
# table.current_deal), so no class of table/ is exempt from the count.


def test_no_class_in_table_counted_with_its_project_bases_is_over_400_lines() -> None:
    classes = _classes()
    big = []
    for name, (path, _) in classes.items():
        if path.is_relative_to(ROOT / "table"):
            lines = _lines_with_bases(name, classes, set())
            if lines > 400:
                big.append(f"{path.relative_to(ROOT)}:{name} ({lines} lines with its bases)")
    assert not big


def test_the_count_takes_in_the_bases() -> None:
    code = "class A:\n    x = 1\n    y = 2\n\n\nclass B(A):\n    z = 3\n"
    tree = ast.parse(code)
    classes = {n.name: (ROOT / "table" / "x.py", n) for n in tree.body if isinstance(n, ast.ClassDef)}
    assert _lines_with_bases("B", classes, set()) == 2 + 3


PLAIN_VALUES = {"TypedDict", "Protocol", "NamedTuple", "Enum", "Exception", "ValueError", "RuntimeError"}


def test_no_class_in_table_declares_state_it_does_not_initialise() -> None:
    """A mixin that only annotates attributes (``state: TableState``) and leaves them to whoever
    inherits it holds state it does not own: every class in table/ that declares instance
    attributes has an ``__init__`` (or is a dataclass, a TypedDict, a Protocol, an exception)."""
    offenders = []
    for path in (ROOT / "table").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                     for b in node.bases}
            decorated = any("dataclass" in ast.dump(d) for d in node.decorator_list)
            declared = [s for s in node.body if isinstance(s, ast.AnnAssign) and s.value is None]
            has_init = any(isinstance(s, ast.FunctionDef) and s.name == "__init__" for s in node.body)
            if declared and not has_init and not decorated and not bases & PLAIN_VALUES:
                offenders.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert offenders == []


def test_the_table_state_holds_its_parts_instead_of_inheriting_them() -> None:
    """The state's parts are classes of their own that it holds, not bases: TableState inherits
    no project class, and the mixins it was once split into do not come back."""
    classes = _classes()
    node = classes["TableState"][1]
    assert [b for b in node.bases if not (isinstance(b, ast.Name) and b.id == "object")] == []
    assert not {"_Chips", "_Queue", "_Fixes"} & set(classes)
    held = {"ChipBook", "ChangeQueue", "CurrentDeal"}
    init = next(s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__")
    built = {c.func.id for c in ast.walk(init) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
    assert held <= built and held <= set(classes)


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
