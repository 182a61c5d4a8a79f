"""Right-click menus on the table's rows, the Links tab and the Neighbours tab.

Each offers what the row can do, through the window's own actions (so a menu item is on
or off, and says its keys, exactly as the Edit menu does), and copying the row's text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu, QTableView

if TYPE_CHECKING:
    from memgui.ui.main_window import MainWindow


def _copy(text: str) -> None:
    QGuiApplication.clipboard().setText(text)


def _popup(view: QTableView, menu: QMenu, pos: QPoint) -> None:
    menu.exec(view.viewport().mapToGlobal(pos))


class ContextMenus:
    """Installs the menus on `window`'s views; `last_menu` keeps the one built last."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.last_menu: QMenu | None = None
        self.show_menus = True  # tests build the menus without opening them
        for view, build in (
            (window.table, self.table_menu),
            (window.detail.links.view, self.links_menu),
            (window.detail.neighbours.view, self.neighbours_menu),
        ):
            view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            view.customContextMenuRequested.connect(
                lambda pos, view=view, build=build: self._open(view, build, pos)
            )

    def _open(self, view: QTableView, build: Callable[[int], QMenu], pos: QPoint) -> None:
        index = view.indexAt(pos)
        if index.isValid() and not view.selectionModel().isRowSelected(index.row()):
            view.selectRow(index.row())  # the menu acts on the row under the mouse
        menu = build(index.row() if index.isValid() else -1)
        self.last_menu = menu
        if self.show_menus:
            _popup(view, menu, pos)

    def table_menu(self, row: int) -> QMenu:
        window, a = self.window, self.window.window_actions
        menu = QMenu(window.table)
        trash = window.filter_bar.trash_check.isChecked()
        menu.addAction(a.restore if trash else a.delete)
        menu.addAction(a.purge)
        menu.addSeparator()
        menu.addActions([a.merge, a.add_tag, a.remove_tag, a.add_link])
        menu.addSeparator()
        trace = window.model.trace_at(row) if window.model is not None and row >= 0 else None
        copy_text = menu.addAction("Copy text")
        copy_id = menu.addAction("Copy id")
        for action in (copy_text, copy_id):
            action.setEnabled(trace is not None)
        if trace is not None:
            copy_text.triggered.connect(lambda: _copy(trace.content))
            copy_id.triggered.connect(lambda: _copy(trace.id))
        menu.addSeparator()
        menu.addAction(a.new_memory)
        return menu

    def links_menu(self, row: int) -> QMenu:
        tab = self.window.detail.links
        menu = QMenu(tab.view)
        link = tab.model.item_at(row) if row >= 0 else None
        open_other = menu.addAction("Open the other memory")
        open_other.setEnabled(link is not None)
        remove = menu.addAction("Remove link")
        remove.setEnabled(link is not None and tab.remove_button.isEnabled())
        copy = menu.addAction("Copy the other memory's text")
        copy.setEnabled(link is not None)
        if link is not None:
            open_other.triggered.connect(lambda: tab.open_requested.emit(link.id))
            remove.triggered.connect(lambda: tab.remove_requested.emit(link))
            copy.triggered.connect(lambda: _copy(link.snippet))
        menu.addSeparator()
        add = menu.addAction("Add link…")
        add.setEnabled(tab.add_button.isEnabled())
        add.triggered.connect(tab.add_requested.emit)
        return menu

    def neighbours_menu(self, row: int) -> QMenu:
        tab = self.window.detail.neighbours
        menu = QMenu(tab.view)
        item = tab.model.item_at(row) if row >= 0 else None
        trace_id = tab.model.item_id(item) if item is not None else None
        open_memory = menu.addAction("Open this memory")
        open_memory.setEnabled(trace_id is not None)
        copy = menu.addAction("Copy name")
        copy.setEnabled(item is not None)
        if item is not None:
            if trace_id is not None:
                open_memory.triggered.connect(lambda: tab.open_requested.emit(trace_id))
            copy.triggered.connect(lambda: _copy(tab.model.name(item)))
        return menu
