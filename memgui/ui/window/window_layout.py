"""The main window's size and its table/detail split, as the person left them (QSettings)."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtWidgets import QMainWindow, QSplitter

GEOMETRY_KEY = "window/geometry"
SPLITTER_KEY = "window/splitter"


def _state(value: object) -> QByteArray | bytes | None:
    # A settings file edited by hand may hold anything under these keys.
    return value if isinstance(value, QByteArray | bytes) and value else None


class WindowLayout:
    def __init__(self, window: QMainWindow, splitter: QSplitter, settings: QSettings) -> None:
        self.window, self.splitter, self.settings = window, splitter, settings
        self._split: QByteArray | bytes | None = None

    def restore(self) -> None:
        geometry = _state(self.settings.value(GEOMETRY_KEY))
        if geometry is not None:
            self.window.restoreGeometry(geometry)
        self._split = _state(self.settings.value(SPLITTER_KEY))
        self.restore_split()

    def restore_split(self, *_args: object) -> None:
        """Once the table and the detail pane are on screen with the window's size (call it
        when they may have appeared): before, the split would be scaled to the size they
        had then."""
        if self._split is not None and self.splitter.isVisible():
            self.splitter.restoreState(self._split)
            self._split = None

    def save(self) -> None:
        self.settings.setValue(GEOMETRY_KEY, self.window.saveGeometry())
        self.settings.setValue(SPLITTER_KEY, self.splitter.saveState())
