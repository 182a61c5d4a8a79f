"""Help ▸ Keyboard shortcuts and Help ▸ Documentation.

The shortcuts are read from the window's own actions (so the list is what the keys do now)
plus the keys that belong to one field or view; the documentation is the `docs/` pages of
memgui's source, shown as they are written.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMainWindow,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

import memgui

DOCS_DIR = Path(memgui.__file__).resolve().parent.parent / "docs"
DOC_PAGES = (
    ("The app", "app.md"),
    ("Importing and exporting in the app", "import-export-app.md"),
    ("The command line", "cli.md"),
    ("Agents: MCP and REST", "agents.md"),
    ("Import and export formats", "import-export.md"),
)
# Keys of one field or view, which no menu shows.
FIELD_KEYS = (
    ("Search at once", "Enter (in the search field)"),
    ("Back to the table from the search field", "Esc"),
    ("Clear the filters", "Esc (in the filter bar)"),
    ("Move between memories", "↑ ↓ Home End Page Up/Down (in the table)"),
    ("Open a linked or neighbouring memory", "Enter or double-click (Links, Neighbours)"),
    ("Add a tag", "Enter or comma (in the add-tag field)"),
    ("Remove the last tag", "Backspace (in the empty add-tag field)"),
    ("Remove a tag", "Delete or Space (on its chip)"),
    ("Undo typing / the last save", "Ctrl+Z (in a field: its text first)"),
    ("Next tab of the memory's pane", "Ctrl+Tab"),
    ("A menu of what a row can do", "right-click (table, Links, Neighbours, import review)"),
)


def action_shortcuts(window: QMainWindow) -> list[tuple[str, str]]:
    """(what, keys) of every menu action of `window` that has keys, in menu order."""
    found: list[tuple[str, str]] = []
    seen: set[int] = set()

    def walk(menu: QMenu) -> None:
        for action in menu.actions():
            sub = action.menu()
            if isinstance(sub, QMenu):
                walk(sub)
                continue
            keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts()]
            if keys and id(action) not in seen:
                seen.add(id(action))
                found.append((action.text().replace("&", "").rstrip("…"), ", ".join(keys)))

    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            walk(menu)
    return found


class ShortcutsDialog(QDialog):
    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        rows = action_shortcuts(window) + list(FIELD_KEYS)
        self.table = QTableWidget(len(rows), 2)
        self.table.setObjectName("shortcuts_table")
        self.table.setHorizontalHeaderLabels(["What", "Keys"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for row, (what, keys) in enumerate(rows):
            self.table.setItem(row, 0, QTableWidgetItem(what))
            self.table.setItem(row, 1, QTableWidgetItem(keys))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(620, 560)

    def rows(self) -> list[tuple[str, str]]:
        return [(self._text(r, 0), self._text(r, 1)) for r in range(self.table.rowCount())]

    def _text(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text() if item is not None else ""


class DocsDialog(QDialog):
    """memgui's documentation pages, read from its `docs/` folder."""

    def __init__(self, parent: QWidget | None = None, docs_dir: Path = DOCS_DIR) -> None:
        super().__init__(parent)
        self.setWindowTitle("memgui documentation")
        self.docs_dir = docs_dir
        self.pages = QComboBox()
        self.pages.setAccessibleName("Page")
        for title, name in DOC_PAGES:
            if (docs_dir / name).is_file():
                self.pages.addItem(title, name)
        self.browser = QTextBrowser()
        self.browser.setObjectName("docs_browser")
        self.browser.setOpenExternalLinks(True)
        self.browser.setSearchPaths([str(docs_dir)])
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.pages)
        layout.addWidget(self.browser, 1)
        layout.addWidget(buttons)
        self.pages.currentIndexChanged.connect(lambda _i: self.show_page(self.pages.currentData()))
        self.resize(820, 700)
        if self.pages.count():
            self.show_page(self.pages.currentData())
        else:
            self.browser.setMarkdown(
                "The documentation pages are in the `docs` folder of memgui's source "
                f"({docs_dir} is not there in this installation). Help ▸ Keyboard shortcuts "
                "lists the keys."
            )

    def show_page(self, name: str) -> None:
        self.browser.setMarkdown((self.docs_dir / name).read_text(encoding="utf-8"))


def install_help(window: QMainWindow, about: QAction) -> tuple[QAction, QAction]:
    """Help ▸ Keyboard shortcuts (F1) and Documentation, before About."""
    shortcuts = QAction("&Keyboard shortcuts", window)
    shortcuts.setShortcut(QKeySequence("F1"))
    shortcuts.setStatusTip("Every key memgui knows")
    shortcuts.triggered.connect(lambda: ShortcutsDialog(window).exec())
    docs = QAction("&Documentation", window)
    docs.setStatusTip("memgui's documentation pages")
    docs.triggered.connect(lambda: DocsDialog(window).exec())
    menus = [m for m in about.associatedObjects() if isinstance(m, QMenu)]
    if menus:
        menus[0].insertActions(about, [shortcuts, docs])
        menus[0].insertSeparator(about)
    return shortcuts, docs
