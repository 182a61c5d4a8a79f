"""The window on a shared brain in tests: opened by File ▸ Open shared brain…'s job."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

from memgui.ui.main_window import MainWindow
from tests.support.waiting import WAIT_MS
from tests.support.window import Answers, wait_idle


def open_shared_window(
    qtbot, tmp_path: Path, address: str, live: bool = False, **values: str
) -> MainWindow:
    """A shown window on the shared brain at `address`, its questions answered by `Answers`;
    `values` go into its settings first (an Ollama URL…)."""
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    for key, value in values.items():
        settings.setValue(key, value)
    window = MainWindow(settings=settings, live=live)
    qtbot.addWidget(window)
    window.edits.ask = Answers()
    with qtbot.waitSignal(window.shared_brains.connected, timeout=WAIT_MS):
        window.shared_brains.connect_to(address)
    window.show()
    qtbot.waitExposed(window, timeout=WAIT_MS)
    wait_idle(qtbot, window)
    if live:
        qtbot.waitUntil(
            lambda: window.shared_live is not None and window.shared_live.listener is not None,
            timeout=WAIT_MS,
        )
    return window
