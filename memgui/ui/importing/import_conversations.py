"""The conversations of a chat export under review: title, date, messages and memories.

Shown beside the records table for a plan that holds conversations (a ChatGPT export). A
search field narrows the list by title; choosing a conversation shows only its records in
the table (choosing "All conversations" again shows them all); its check box is the
conversation's own, which its messages and memories follow (`ImportPlanModel`).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from memgui.ui.models.detail_models import header_text
from memgui.ui.models.import_plan_model import ACCEPTABLE, ImportPlanModel, record_flags
from memgui.ui.models.trace_columns import format_ms

Index = QModelIndex | QPersistentModelIndex
HEADERS = ("Conversation", "Date", "Messages", "Memories")
WIDTH = 400  # of the list beside the records table
ConversationRole = Qt.ItemDataRole.UserRole + 1  # its id
SortRole = Qt.ItemDataRole.UserRole + 2


class ConversationsModel(QAbstractTableModel):
    """One row per conversation of the plan the records model holds."""

    def __init__(self, records: ImportPlanModel, parent: Any = None) -> None:
        super().__init__(parent)
        self.records = records
        self._ids: list[str] = []
        records.modelReset.connect(self.reload)
        records.dataChanged.connect(self._records_changed)

    def reload(self) -> None:
        self.beginResetModel()
        self._ids = self.records.chats.conversations if self.records.plan else []
        self.endResetModel()

    def conversation_id(self, row: int) -> str | None:
        return self._ids[row] if 0 <= row < len(self._ids) else None

    def _records_changed(self, *_args: object) -> None:
        if self._ids:  # a tick may have moved any conversation's box: redraw the boxes
            last = self.index(len(self._ids) - 1, 0)
            self.dataChanged.emit(self.index(0, 0), last, [Qt.ItemDataRole.CheckStateRole])

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        return header_text(HEADERS, section, orientation, role)

    def flags(self, index: Index) -> Qt.ItemFlag:
        record = self._record(index.row()) if index.isValid() else None
        return record_flags(index, record, 0)

    def _record(self, row: int) -> Any:
        of = self.conversation_id(row)
        return None if of is None else self.records.record(self.records.chats.row_of[of])

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        of = self.conversation_id(index.row()) if index.isValid() else None
        if of is None:
            return None
        chats, column = self.records.chats, index.column()
        if role in (Qt.ItemDataRole.DisplayRole, SortRole):
            values = (
                chats.titles.get(of, ""),
                format_ms(chats.times.get(of))[:10] if role == Qt.ItemDataRole.DisplayRole
                else chats.times.get(of, 0),
                len(chats.messages.get(of, ())),
                len(chats.memories.get(of, ())),
            )  # fmt: skip
            value = values[column]
            return str(value) if role == Qt.ItemDataRole.DisplayRole else value
        if role == Qt.ItemDataRole.CheckStateRole and column == 0:
            record = self._record(index.row())
            if record is None or record.verdict not in ACCEPTABLE:
                return None
            return Qt.CheckState.Checked if record.accepted else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.ToolTipRole:
            record = self._record(index.row())
            said = f" — {record.verdict}: {record.reason}" if record and record.reason else ""
            return f"{chats.titles.get(of, '')}, {format_ms(chats.times.get(of))}{said}"
        if role == Qt.ItemDataRole.TextAlignmentRole and column >= 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == ConversationRole:
            return of
        return None

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.CheckStateRole or index.column() != 0:
            return False
        of = self.conversation_id(index.row())
        if of is None:
            return False
        checked = Qt.CheckState(value) == Qt.CheckState.Checked
        return self.records.set_accepted([self.records.chats.row_of[of]], checked) > 0


class ConversationList(QWidget):
    """The list, its search field and "All conversations" (see the module docstring)."""

    conversation_chosen = Signal(object)  # its id, or None for all of them

    def __init__(self, records: ImportPlanModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ConversationsModel(records, self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterKeyColumn(0)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setSortRole(SortRole)
        self.search = QLineEdit()
        self.search.setObjectName("conversation_search")
        self.search.setPlaceholderText("Search conversations")
        self.search.setAccessibleName("Search conversations")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._filter)
        self.table = QTableView()
        self.table.setObjectName("conversation_table")
        self.table.setAccessibleName("Conversations")
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setTabKeyNavigation(False)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setSortingEnabled(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column, width in ((1, 84), (2, 66), (3, 66)):
            header.resizeSection(column, width)
        self.table.sortByColumn(1, Qt.SortOrder.DescendingOrder)  # the newest first
        self.table.selectionModel().currentRowChanged.connect(self._chosen)
        self.all_button = QPushButton("All conversations")
        self.all_button.setObjectName("all_conversations")
        self.all_button.clicked.connect(self.show_all)
        self.count = QLabel()
        self.model.modelReset.connect(self._count)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.search)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.count)
        layout.addWidget(self.all_button)

    def _filter(self, text: str) -> None:
        self.proxy.setFilterFixedString(text.strip())
        self._count()

    def _count(self) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        self.count.setText(
            f"{total} conversations" if shown == total else f"{shown} of {total} conversations"
        )

    def _chosen(self, current: QModelIndex, _previous: QModelIndex) -> None:
        of = current.data(ConversationRole) if current.isValid() else None
        self.conversation_chosen.emit(of)

    def choose(self, conversation_id: str) -> bool:
        """Select a conversation by id (its records show in the table); False if not listed."""
        for row in range(self.proxy.rowCount()):
            if self.proxy.index(row, 0).data(ConversationRole) == conversation_id:
                self.table.selectRow(row)
                return True
        return False

    def show_all(self) -> None:
        self.table.selectionModel().clear()
        self.conversation_chosen.emit(None)
