"""Right-click menus on the table's rows, links and neighbours; Help's shortcuts and docs."""

from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtGui import QGuiApplication

from memgui.ui.dialogs.help_dialogs import DocsDialog, ShortcutsDialog
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, select_row, wait_idle


def texts(menu) -> list[str]:
    return [a.text().replace("&", "") for a in menu.actions() if not a.isSeparator()]


def right_click(view, row: int) -> None:
    rect = view.visualRect(view.model().index(row, 0))
    view.customContextMenuRequested.emit(QPoint(rect.center()))


def test_a_rows_menu_acts_on_the_row_under_the_mouse(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path)
    window.menus.show_menus = False
    select_row(window, 0)
    right_click(window.table, 2)
    assert window.current_id() == window.model.id_at(2)  # the row clicked is the one chosen
    menu = window.menus.last_menu
    assert "Delete to trash" in texts(menu) and "Copy text" in texts(menu)
    copy = next(a for a in menu.actions() if a.text() == "Copy id")
    copy.trigger()
    assert QGuiApplication.clipboard().text() == window.model.id_at(2)
    delete = next(a for a in menu.actions() if a.text() == "&Delete to trash")
    delete.trigger()
    qtbot.waitUntil(lambda: window.model.rowCount() == 4, timeout=WAIT_MS)
    wait_idle(qtbot, window)

    brain = window.session.brain
    a, b = window.model.id_at(0), window.model.id_at(1)
    brain.link(a, b, "supersedes")
    links = window.detail.links
    window.detail.setCurrentWidget(links)
    select_row(window, 0)
    right_click(links.view, 0)
    assert texts(window.menus.last_menu)[:2] == ["Open the other memory", "Remove link"]
    next(a for a in window.menus.last_menu.actions() if a.text() == "Remove link").trigger()
    assert brain.related(a) == []
    window.close()


def test_help_lists_the_shortcuts_and_shows_the_docs(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path)
    help_menu = next(
        a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "Help"
    )
    assert [a.text().replace("&", "") for a in help_menu.actions() if a.text()][:2] == [
        "Keyboard shortcuts",
        "Documentation",
    ]
    dialog = ShortcutsDialog(window)
    qtbot.addWidget(dialog)
    rows = dict(dialog.rows())
    assert rows["Save"] == "Ctrl+S" and rows["Merge selected"] == "Ctrl+M"
    assert "Keyboard shortcuts" in rows and "Clear the filters" in rows
    docs = DocsDialog(window)
    qtbot.addWidget(docs)
    assert docs.pages.count() >= 2
    assert "The memgui app" in docs.browser.toPlainText()
    window.close()


def test_toolbar_buttons_say_what_they_do_on_an_empty_brain(qtbot, tmp_path):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QToolBar, QToolButton

    window = open_window(qtbot, tmp_path, tmp_path / "empty.sqlite")
    toolbar = window.findChild(QToolBar, "main_toolbar")
    assert toolbar.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonTextUnderIcon
    words = [b.text() for b in toolbar.findChildren(QToolButton) if b.defaultAction() is not None]
    assert {"New", "Save", "Delete", "Restore", "Undo", "Merge", "Trash"} <= set(words)
    assert not window.window_actions.delete.isEnabled()  # off, yet it says what it is
    window.close()
