"""The trace table view: delegates, a column chooser, and remembered widths and choices."""

from __future__ import annotations

from PySide6.QtCore import (
    QAbstractItemModel,
    QByteArray,
    QItemSelectionModel,
    QModelIndex,
    QPoint,
    QSettings,
    Qt,
)
from PySide6.QtGui import QFocusEvent, QKeyEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QTableView, QWidget

from memgui.ui.models.trace_columns import COLUMNS, CONTENT_COLUMN, TITLE_COLUMN, TITLE_POSITION
from memgui.ui.views.delegates import HighlightDelegate

HEADER_STATE_KEY = "trace_table/header_state"
COLUMN_COUNT_KEY = "trace_table/columns"  # how many columns the saved layout knew
HIDDEN_BY_DEFAULT = ("Scope id", "Last accessed", "Expires", "Version")
MOVES = (
    Qt.Key.Key_Home, Qt.Key.Key_End, Qt.Key.Key_Up, Qt.Key.Key_Down,
    Qt.Key.Key_PageUp, Qt.Key.Key_PageDown,
)  # fmt: skip


class TraceTableView(QTableView):
    def __init__(self, settings: QSettings | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._settings = settings
        self.setObjectName("trace_table")
        self.setAccessibleName("Memories")
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        # Tab leaves the table for the editor; the arrow keys move between rows.
        self.setTabKeyNavigation(False)
        self.setSortingEnabled(True)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.verticalHeader().hide()
        # Fixed row heights: the view never asks every row for its size (1M rows).
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.horizontalHeader()
        header.setSectionsMovable(True)
        header.setHighlightSections(False)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._column_menu)
        header.setToolTip("Click to sort; right-click to choose columns")
        # The strength bar is the cell's decoration (strength_bar.py), drawn by Qt's delegate.
        self.highlight_delegate = HighlightDelegate(self)
        # The content column uses the highlighting delegate only while there are words to
        # highlight: a Python paint per row costs GIL hand-offs while a query job runs.
        # A paint of the table costs ~30 ms of the GUI thread (each cell calls into Python):
        # rows appended below a full screen (a query's list after its first page) need the
        # scroll bar's new range, not a repaint. The row count they left, else -1.
        self._appended_unseen = -1

    def setModel(self, model: QAbstractItemModel | None) -> None:
        old = self.model()
        old_selection = self.selectionModel()
        if old is not None:
            old.modelReset.disconnect(self.executeDelayedItemsLayout)
            old.rowsInserted.disconnect(self._on_rows_inserted)
            self.save_state()  # the widths and order chosen for this brain carry to the next
        super().setModel(model)
        if old_selection is not None and old_selection is not self.selectionModel():
            old_selection.deleteLater()  # Qt leaves the old one to whoever made it
        self._appended_unseen = -1
        if model is not None:
            # Lay the new rows out at once: left to Qt's delayed layout, a reset painted the
            # table twice (its first paint came before the layout's).
            model.modelReset.connect(self.executeDelayedItemsLayout)
            model.rowsInserted.connect(self._on_rows_inserted)
        header = self.horizontalHeader()
        for column, spec in enumerate(COLUMNS):
            header.resizeSection(column, spec.width)
            header.setSectionHidden(column, spec.header in HIDDEN_BY_DEFAULT)
        self._show_title_first()
        header.setSortIndicator(7, Qt.SortOrder.DescendingOrder)  # the query's default order
        self.restore_state()

    def _show_title_first(self) -> None:
        header = self.horizontalHeader()
        header.moveSection(header.visualIndex(TITLE_COLUMN), TITLE_POSITION)
        header.resizeSection(TITLE_COLUMN, COLUMNS[TITLE_COLUMN].width)
        header.setSectionHidden(TITLE_COLUMN, False)

    def _on_rows_inserted(self, parent: QModelIndex, first: int, _last: int) -> None:
        last_shown = self.rowAt(self.viewport().height() - 1)
        below = not parent.isValid() and last_shown >= 0 and first > last_shown
        self._appended_unseen = self.model().rowCount() if below else -1

    def doItemsLayout(self) -> None:
        appended, self._appended_unseen = self._appended_unseen, -1
        model = self.model()
        if appended >= 0 and model is not None and model.rowCount() == appended:
            self.updateGeometries()  # the scroll bar's range; the painted rows stay as they are
            return
        super().doItemsLayout()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Ctrl+Tab too moves focus on (Qt hands it to the view, which would swallow it).
        if event.key() in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
            self.focusNextPrevChild(event.key() == Qt.Key.Key_Tab)
            return
        super().keyPressEvent(event)
        if event.key() in MOVES and not event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self._select_current_if_none()

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        if event.reason() != Qt.FocusReason.MouseFocusReason:  # a click selects by itself
            self._select_current_if_none()

    def _select_current_if_none(self) -> None:
        """Qt makes a row current without selecting it (focus reaching an unselected table,
        Home on that row): the actions work on the selection, so it follows the focus."""
        selection = self.selectionModel()
        current = self.currentIndex()
        if selection is None or not current.isValid() or selection.hasSelection():
            return
        selection.setCurrentIndex(
            current,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )

    def set_search_terms(self, query: str) -> None:
        self.highlight_delegate.set_query(query)
        delegate = self.highlight_delegate if self.highlight_delegate.terms else None
        if self.itemDelegateForColumn(CONTENT_COLUMN) is not delegate:
            # None: the view's own delegate again (Qt takes it; the stubs say it may not).
            self.setItemDelegateForColumn(CONTENT_COLUMN, delegate)  # type: ignore[arg-type]
        self.viewport().update()

    # --- column chooser and remembered state -------------------------------------------

    def _column_menu(self, pos: QPoint) -> None:
        menu = self.column_menu()
        menu.exec(self.horizontalHeader().mapToGlobal(pos))

    def column_menu(self) -> QMenu:
        menu = QMenu("Columns", self)
        header = self.horizontalHeader()
        for column, spec in enumerate(COLUMNS):
            action = menu.addAction(spec.header)
            action.setCheckable(True)
            action.setChecked(not header.isSectionHidden(column))
            action.setEnabled(column != CONTENT_COLUMN)  # content always shows
            action.toggled.connect(lambda on, c=column: self.set_column_visible(c, on))
        return menu

    def set_column_visible(self, column: int, visible: bool) -> None:
        self.horizontalHeader().setSectionHidden(column, not visible)
        self.save_state()

    def save_state(self) -> None:
        if self._settings is not None:
            self._settings.setValue(HEADER_STATE_KEY, self.horizontalHeader().saveState())
            self._settings.setValue(COLUMN_COUNT_KEY, len(COLUMNS))

    def restore_state(self) -> None:
        if self._settings is None:
            return
        state = self._settings.value(HEADER_STATE_KEY)
        if isinstance(state, QByteArray | bytes) and state:
            self.horizontalHeader().restoreState(state)
            saved = self._settings.value(COLUMN_COUNT_KEY, 0)
            try:
                known = int(saved) if isinstance(saved, int | str) else 0
            except ValueError:
                known = 0
            if known <= TITLE_COLUMN:  # a layout saved before the title column existed
                self._show_title_first()
