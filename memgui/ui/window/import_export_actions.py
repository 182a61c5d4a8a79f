"""Import and export in the main window, installed by one call: `install_import_export(window)`.

It adds File ▸ Import folder… and File ▸ Export… beside the window's File ▸ Import… (which
opens `import_dialog.run_import_dialog`), makes the whole window a drop target for files and
folders (`import_drop.DropFilter`), and asks, when the window is closed while an import,
export or other long job runs, whether to cancel it (a cancelled commit leaves the brain as
it was). The window attributes used: `actions.import_file`, `session`, `runner`, `model`,
`selected_ids()`, `show_message()`, `show_error()`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

from memgui.ui.importing.import_drop import DropFilter
from memgui.ui.jobs import Job
from memgui.ui.semantic.shared_sweep import SWEEP_JOB

if TYPE_CHECKING:
    from memgui.ui.importing.import_dialog import ImportDialog
    from memgui.ui.main_window import MainWindow

# Jobs that lose nothing when cancelled (the window restarts them, or each step commits
# on its own: a shared brain's TTL sweep, `SWEEP_JOB`): closing never asks about them.
QUIET_JOBS = ("query", "counts", "ollama status", "similar", "embedding", SWEEP_JOB)


def run_import_dialog(window: MainWindow, folder: bool = False) -> None:
    """File ▸ Import… / Import folder…; the import and export windows load when first used
    (with the import engine: a quarter of the window's start-up otherwise)."""
    from memgui.ui.importing.import_dialog import run_import_dialog as run

    run(window, folder=folder)


def open_export(window: MainWindow) -> None:
    from memgui.ui.exporting.export_dialog import open_export as run

    run(window)


class ImportExport(QObject):
    """What `install_import_export` adds to a window; kept as `window.import_export`."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.last_import: ImportDialog | None = None
        self.import_folder = QAction("Import &folder…", window)
        self.import_folder.setStatusTip(
            "Import a Markdown folder, an Obsidian vault or a split ChatGPT export"
        )
        self.import_folder.triggered.connect(lambda: run_import_dialog(window, folder=True))
        self.export = QAction("&Export…", window)
        self.export.setShortcut(QKeySequence("Ctrl+E"))
        self.export.setStatusTip("Export memories as SQLite, JSON, JSONL, Markdown or Obsidian")
        self.export.triggered.connect(lambda: open_export(window))
        self._add_to_file_menu()
        # A read-only brain takes no import: the action follows the window's own Import….
        window.window_actions.import_file.changed.connect(
            lambda: self.import_folder.setEnabled(window.window_actions.import_file.isEnabled())
        )
        self.drops = DropFilter(window, self.import_path)
        window.setAcceptDrops(True)
        window.installEventFilter(self)
        for child in window.findChildren(QWidget):
            if child.acceptDrops():  # editors take text drags; files dropped on them are ours
                child.installEventFilter(self.drops)
        window.installEventFilter(self.drops)

    def _add_to_file_menu(self) -> None:
        anchor = self.window.window_actions.import_file
        for menu in anchor.associatedObjects():
            if isinstance(menu, QMenu):
                actions = menu.actions()
                after = actions.index(anchor) + 1
                if after < len(actions):
                    menu.insertActions(actions[after], [self.import_folder, self.export])
                else:
                    menu.addActions([self.import_folder, self.export])
                return
        self.window.menuBar().addActions([self.import_folder, self.export])

    def import_path(self, path: str | Path) -> ImportDialog | None:
        """Open the import window for `path` (a drop, a command line) and plan it."""
        from memgui.ui.importing.import_dialog import open_import

        self.last_import = open_import(self.window, path)
        return self.last_import

    # --- closing while jobs run ---------------------------------------------------------

    def running_jobs(self) -> list[Job]:
        """Jobs to ask about: not the quiet ones, nor one already cancelled (a plan the
        import window stopped waiting for ends on its own; there is nothing to ask)."""
        return [
            j
            for j in self.window.runner.active_jobs
            if j.name not in QUIET_JOBS and not j.cancel_requested
        ]

    def confirm_close(self, then: str = "close") -> bool:
        """True when the window may close (or open another brain, `then`): no job runs,
        or the person cancels them."""
        jobs = self.running_jobs()
        if not jobs:
            return True
        names = ", ".join(sorted({j.name for j in jobs}))
        answer = QMessageBox.question(
            self.window,
            "Work in progress",
            f"Still running: {names}.\nCancel and {then}? A cancelled import writes nothing.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return False
        for job in jobs:
            job.cancel()
        return True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        closing = watched is self.window and event.type() == QEvent.Type.Close
        # The unsaved edit first: the person may still stay, and then no import is cancelled.
        if closing and not (self.window.edits.settle_unsaved_edit() and self.confirm_close()):
            event.ignore()
            return True
        return False


def install_import_export(window: MainWindow) -> ImportExport:
    """Add import (menu and drops), export and the close-while-running question to `window`."""
    return ImportExport(window)
