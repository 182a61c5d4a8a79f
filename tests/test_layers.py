"""The import direction of DESIGN.md §1: the core never imports Qt, the UI, the CLI or servers."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import ROOT

CORE = ROOT / "memgui" / "core"
FORBIDDEN = ("PySide6", "qasync", "memgui.ui", "memgui.cli", "memgui.server", "shiboken6")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_core_never_imports_qt_or_upper_layers() -> None:
    files = sorted(CORE.rglob("*.py"))
    assert len(files) > 10
    offenders = [
        f"{path.relative_to(CORE.parent.parent)} imports {module}"
        for path in files
        for module in imported_modules(path)
        if any(module == bad or module.startswith(bad + ".") for bad in FORBIDDEN)
    ]
    assert offenders == []


def test_the_check_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from PySide6.QtCore import QObject\nimport memgui.ui.app\n")
    assert {"PySide6.QtCore", "memgui.ui.app"} <= imported_modules(bad)
