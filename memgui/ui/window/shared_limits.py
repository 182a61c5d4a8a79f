"""What the window does not offer on a shared brain yet, and why.

A shared brain (PostgreSQL) serves the table, the editor with its undo, keyword, semantic
and hybrid search, the history, the links, the neighbours, a chat's conversation, merging,
the review of agent activity, import and export, the graph window and the consolidation
window (`core/shared_brain.py`, `core/shared_import.py`, `core/engines.py`); the similar
memories and the cognitive search, which the core serves there too, the window does not ask
of a shared brain yet. On a shared brain those are disabled, each with a tooltip saying
why, rather than asked and failing; on a file they are as they were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItemModel

if TYPE_CHECKING:
    from memgui.ui.main_window import MainWindow

WHY = {
    "similar": "Not in the window on a shared brain yet: memgui similar lists them there",
    "cognitive": "Not in the window on a shared brain yet: memgui search --mode cognitive "
    "runs there; keyword, semantic and hybrid search work here",
}
SHARED_MODES = ("auto", "keyword", "semantic", "hybrid")  # what a shared brain searches by


class SharedLimits:
    """Applied after the window sets its actions' states (`apply`), on every change."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self._shown_shared = False  # the tabs and search modes are set for a shared brain
        box = window.search_bar.mode_box
        role = Qt.ItemDataRole.ToolTipRole
        self._mode_tips = [str(box.itemData(row, role) or "") for row in range(box.count())]

    @property
    def shared(self) -> bool:
        session = self.window.session
        return session is not None and session.shared

    def apply(self) -> None:
        shared = self.shared
        if shared != self._shown_shared:
            self._shown_shared = shared
            self._tabs(shared)
            self._modes(shared)

    def _tabs(self, shared: bool) -> None:
        pane = self.window.detail
        for tab, key in ((pane.similar, "similar"),):
            index = pane.indexOf(tab)
            if shared and pane.currentWidget() is tab:
                pane.setCurrentWidget(pane.editor)
            pane.setTabEnabled(index, not shared)
            pane.setTabToolTip(index, WHY[key] if shared else "")

    def _modes(self, shared: bool) -> None:
        box = self.window.search_bar.mode_box
        model = box.model()
        if not isinstance(model, QStandardItemModel):
            return
        for row in range(box.count()):
            item = model.item(row)
            if box.itemData(row) in SHARED_MODES:
                continue
            item.setEnabled(not shared)
            item.setToolTip(WHY["cognitive"] if shared else self._mode_tips[row])
        if shared and box.currentData() not in SHARED_MODES:
            box.setCurrentIndex(box.findData("auto"))
