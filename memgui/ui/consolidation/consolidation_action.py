"""Edit ▸ Consolidate…: the action, put into the window at start-up.

The dialog and what it runs on (the import's undo commands and their engine) load at the
first use, as File ▸ Import…'s do: the window's start loads no import engine
(tests/ui/test_startup_imports.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memgui.ui.main_window import MainWindow


def _open(window: MainWindow) -> None:
    from memgui.ui.consolidation.consolidation_dialog import open_consolidation

    open_consolidation(window)


def install_consolidation(window: MainWindow) -> None:
    """Edit ▸ Consolidate… (Ctrl+Shift+M), enabled with the window's Merge."""
    from PySide6.QtGui import QAction, QKeySequence
    from PySide6.QtWidgets import QMenu

    action = QAction("&Consolidate…", window)
    action.setObjectName("consolidate")
    action.setShortcut(QKeySequence("Ctrl+Shift+M"))
    tip = "Review and apply a consolidation: prune, merge, strengthen, derive, compact"
    action.setToolTip(tip)
    action.setStatusTip(tip)
    action.triggered.connect(lambda: _open(window))
    # Enabled as File ▸ New memory is: a brain (a file or a shared one) is open and can be
    # written.
    follows = window.window_actions.new_memory
    follows.changed.connect(lambda: action.setEnabled(follows.isEnabled()))
    action.setEnabled(follows.isEnabled())
    anchor = window.window_actions.merge
    for menu in anchor.associatedObjects():
        if isinstance(menu, QMenu):
            actions = menu.actions()
            after = actions.index(anchor) + 1
            if after < len(actions):
                menu.insertAction(actions[after], action)
            else:
                menu.addAction(action)
            break
    window.consolidate_action = action  # type: ignore[attr-defined]
