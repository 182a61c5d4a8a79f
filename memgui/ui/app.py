"""Start the app: `memgui` (the default brain) or `memgui PATH`."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from memgui import APP_ID
from memgui.core.shared_brain import is_postgres_address
from memgui.ui import heap
from memgui.ui.main_window import MainWindow
from memgui.ui.theme.icons import icon
from memgui.ui.theme.palette import follow_system
from memgui.ui.window.brain_files import default_brain_path

APP_NAME = "memgui"


def application(argv: list[str] | None = None) -> QApplication:
    """The running QApplication, created on first use (light/dark follow the system)."""
    app = QApplication.instance()
    if app is None:
        QGuiApplication.setApplicationName(APP_NAME)
        QGuiApplication.setOrganizationName(APP_NAME)
        QGuiApplication.setDesktopFileName(APP_ID)  # the .desktop file: its icon and name
        app = QApplication(argv if argv is not None else sys.argv[:1])
        # Fusion draws the system's light or dark colour scheme the same way everywhere.
        app.setStyle("Fusion")
        follow_system(app)
        app.setWindowIcon(icon("memgui"))
    return app  # type: ignore[return-value]


def create_window(
    brain_path: str | None,
    brain_id: str | None,
    settings: QSettings | None = None,
    live: bool = True,
) -> MainWindow:
    """A window showing `brain_path` (default: the user's brain, created on first run); a
    `postgresql://…?brain_id=` address is a shared brain, connected to in a job."""
    window = MainWindow(settings=settings, live=live)
    if brain_path and is_postgres_address(brain_path):
        window.shared_brains.connect_to(brain_path)
        return window
    path = Path(brain_path).expanduser() if brain_path else default_brain_path()
    window.files.open_path(path, brain_id)
    return window


def run_app(brain_path: str | None, brain_id: str | None) -> int:
    """Open the window and run the event loop; returns the exit code."""
    app = application()
    window = create_window(brain_path, brain_id)
    window.show()
    heap.settle()  # before the event loop: one collection now, none this long later
    QTimer.singleShot(heap.PRELOAD_AFTER_MS, heap.preload)
    return int(app.exec())
