"""The shape of the code, checked: DESIGN.md §1's import directions and the rules beside them.

import-linter (`make test` runs `lint-imports`; contracts in pyproject.toml) checks the
layers on the whole import graph. These tests read the source themselves, so the rules hold
in a plain `pytest` run too, and check what a contract cannot say: the exact list of core
modules the UI may use, no import cycle inside the core, no SQL in the facade, and no test
module borrowing from another.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.support.paths import ROOT, TESTS

MEMGUI = ROOT / "memgui"
CORE = MEMGUI / "core"
FORBIDDEN_IN_CORE = ("PySide6", "qasync", "memgui.ui", "memgui.cli", "memgui.server", "shiboken6")
# The core modules the UI may import; everything else of the core it reaches through them.
UI_PUBLIC = (
    "memgui.core.brain",
    "memgui.core.shared_brain",
    "memgui.core.shared_import",
    "memgui.core.engines",
    "memgui.core.model",
    "memgui.core.errors",
    "memgui.core.progress",
    "memgui.core.io",
    "memgui.core.search.embed",
    "memgui.core.sample_brain",
    "memgui.core.graph_view",
    "memgui.core.activity",
    "memgui.core.maintenance",
    "memgui.core.consolidate",
    "memgui.core.llm",
    "memgui.core.ingest_config",
)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports(path: Path, *, type_checking: bool = True) -> Iterator[tuple[str, int]]:
    """(module, line) of every absolute import in the file, in functions too; a name imported
    from a package that is itself a module counts as that module."""

    def walk(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
        for child in ast.iter_child_nodes(node):
            guarded = isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)
            if guarded and not type_checking:
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child
            yield from walk(child)

    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif node.module and node.level == 0:
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                yield (child if is_module(child) else node.module), node.lineno


def within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_core_never_imports_qt_or_upper_layers() -> None:
    files = sorted(CORE.rglob("*.py"))
    assert len(files) > 10
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in files
        for module, line in imports(path)
        if within(module, FORBIDDEN_IN_CORE)
    ]
    assert offenders == []


def test_the_ui_uses_only_the_public_modules_of_the_core() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted((MEMGUI / "ui").rglob("*.py"))
        for module, line in imports(path)
        if within(module, ("memgui.core",)) and module not in UI_PUBLIC
    ]
    assert offenders == []


def core_graph() -> dict[str, set[str]]:
    """Module → the core modules it imports when it runs (at load or in a function)."""
    return {
        module_name(path): {
            module
            for module, _ in imports(path, type_checking=False)
            if within(module, ("memgui.core",)) and module != module_name(path)
        }
        for path in CORE.rglob("*.py")
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_inside_the_core() -> None:
    # Imports inside functions count: deferring one is no way around a cycle.
    graph = core_graph()
    assert len(graph) > 50
    assert cycles(graph) == []


def test_the_facade_holds_no_sql() -> None:
    source = (CORE / "brain.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    sql = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and any(word in node.value.upper() for word in ("SELECT ", "INSERT ", "UPDATE ", "DELETE "))
    ]
    assert sql == []
    assert ".conn." not in source and "execute(" not in source


def test_no_test_module_imports_from_another_test_module_or_a_conftest() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sorted(TESTS.rglob("*.py"))
        if "fixtures" not in path.relative_to(TESTS).parts
        for module, line in imports(path)
        if module.startswith("tests.")
        and (module.rsplit(".", 1)[-1].startswith("test_") or module.endswith(".conftest"))
    ]
    assert offenders == []


def test_the_checks_see_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from PySide6.QtCore import QObject\nimport memgui.ui.app\n"
        "def later():\n    from tests.cli.test_cli import run_cli\n"
        "if TYPE_CHECKING:\n    from memgui.core.storage import store\n"
    )
    found = {module for module, _ in imports(bad)}
    assert {"PySide6.QtCore", "memgui.ui.app", "tests.cli.test_cli"} <= found
    assert "memgui.core.storage.store" in found
    assert "memgui.core.storage.store" not in {m for m, _ in imports(bad, type_checking=False)}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
