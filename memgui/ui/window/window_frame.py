"""The main window's frame: the search and filter bars over the table, the detail pane
beside it, the welcome page, the status bar's labels, and its messages.

`MainWindow` (`ui/main_window.py`) builds on it; what the window does with a brain is there.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from memgui.ui.actions import WindowActions
from memgui.ui.models.trace_table_model import TraceTableModel
from memgui.ui.views.detail_pane import DetailPane
from memgui.ui.views.filter_bar import FilterBar
from memgui.ui.views.search_bar import SearchBar
from memgui.ui.views.trace_table_view import TraceTableView
from memgui.ui.views.welcome_page import WelcomePage
from memgui.ui.window.brain_tips import READ_ONLY_TIP


class WindowFrame(QMainWindow):
    """The widgets of the window, built once (`_build_central`, `_build_status_bar`)."""

    settings: QSettings
    window_actions: WindowActions
    model: TraceTableModel | None

    # --- layout -------------------------------------------------------------------------

    def _build_central(self) -> None:
        self.search_bar = SearchBar()
        self.filter_bar = FilterBar()
        self.table = TraceTableView(self.settings)
        self.detail = DetailPane()
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(6, 6, 0, 6)
        column.addWidget(self.search_bar)
        column.addWidget(self.filter_bar)
        column.addWidget(self.table, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([840, 440])
        self.welcome = WelcomePage()
        self.pages = QStackedWidget()
        self.pages.addWidget(self.welcome)
        self.pages.addWidget(self.splitter)
        self.setCentralWidget(self.pages)
        for action in (self.window_actions.delete, self.window_actions.purge):
            # Del acts on the table only, never on the text being typed in the editor.
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.table.addAction(action)
        # Esc in the search field goes back to the table; the default (window) context made
        # Esc anywhere do it, so the filter bar's Esc never cleared and the editor lost focus.
        back = QShortcut(QKeySequence("Escape"), self.search_bar.field, self.table.setFocus)
        back.setContext(Qt.ShortcutContext.WidgetShortcut)
        self._set_tab_order()

    def _set_tab_order(self) -> None:
        """Tab follows the screen: search, filters, table, then the editor top to bottom."""
        s, f, e = self.search_bar, self.filter_bar, self.detail.editor
        chain = (
            s.field,
            s.mode_box,
            f.type_box,
            f.scope_box,
            f.category_box,
            f.scope_id_edit,
            f.tag_edit,
            f.trash_check,
            self.table,
            e.content,
            e.tags.field,  # tag chips insert themselves just before it (tag_editor.py)
            e.type_box,
            e.category_box,
            e.scope_box,
            e.scope_id_edit,
            e.ttl_edit,
            e.revert_button,
            e.save_button,
            self.detail.tabBar(),
        )
        for first, second in zip(chain, chain[1:], strict=False):
            self.setTabOrder(first, second)

    def _build_status_bar(self) -> None:
        self.counts_label = QLabel()
        self.counts_label.setObjectName("counts_label")
        self.job_label = QLabel()
        self.job_label.setObjectName("job_label")
        self.read_only_label = QLabel("Read-only")
        self.read_only_label.setObjectName("read_only_label")
        self.read_only_label.setToolTip(READ_ONLY_TIP)
        self.read_only_label.hide()
        self.statusBar().addPermanentWidget(self.read_only_label)
        self.triggers_label = QLabel("Foreign triggers")  # shown when the brain has some
        self.triggers_label.setObjectName("triggers_label")
        self.triggers_label.hide()
        self.statusBar().addPermanentWidget(self.triggers_label)
        self.statusBar().addPermanentWidget(self.job_label)
        self.statusBar().addPermanentWidget(self.counts_label)

    def _show_table_if_rows(self) -> None:
        if self.model is not None and self.model.rowCount() > 0:
            self.pages.setCurrentWidget(self.splitter)

    def show_message(self, text: str, timeout_ms: int = 6000) -> None:
        self.statusBar().showMessage(text, timeout_ms)

    def show_error(self, text: str) -> None:
        self.statusBar().showMessage(text, 12_000)

    def focus_search(self) -> None:
        self.pages.setCurrentWidget(self.splitter)
        self.search_bar.field.setFocus()
        self.search_bar.field.selectAll()

    def _fill_columns_menu(self) -> None:
        self.window_actions.columns_menu.clear()
        for action in self.table.column_menu().actions():
            self.window_actions.columns_menu.addAction(action)

    def _about(self) -> None:
        QMessageBox.about(
            self, "About memgui", "memgui — browse, search and edit what AI agents remember."
        )
