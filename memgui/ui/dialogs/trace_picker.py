"""Pick another trace by searching for it (used to add a link)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from memgui.core.errors import MemguiError
from memgui.core.model import LINK_KINDS, TraceFilter
from memgui.ui.models.trace_columns import first_line

RESULTS = 50


class TracePicker(QDialog):
    def __init__(self, brain: Any, exclude: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Link to another memory")
        self._brain = brain
        self._exclude = exclude
        self.field = QLineEdit()
        self.field.setPlaceholderText("search for the other memory…")
        self.field.setAccessibleName("Search for the other memory")
        self.results = QListWidget()
        self.results.setAccessibleName("Matching memories")
        self.kind = QComboBox()
        self.kind.addItems(list(LINK_KINDS))
        self.kind.setAccessibleName("Link kind")
        self.message = QLabel()
        self.message.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("&Link")
        buttons.accepted.connect(self._accept_if_chosen)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.field)
        layout.addWidget(self.message)
        layout.addWidget(self.results, 1)
        layout.addWidget(QLabel("&Kind:", buddy=self.kind))
        layout.addWidget(self.kind)
        layout.addWidget(buttons)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self._search)
        self.field.textChanged.connect(self._timer.start)
        self.results.itemDoubleClicked.connect(lambda _item: self._accept_if_chosen())
        self.resize(520, 420)

    def _search(self) -> None:
        self.results.clear()
        query = self.field.text().strip()
        if not query:
            return
        try:
            found = self._brain.search(query, TraceFilter(), limit=RESULTS, record_recall=False)
        except MemguiError as exc:
            self.message.setText(str(exc))
            return
        self.message.setText("")
        for trace in found.traces:
            if trace.id == self._exclude:
                continue
            item = QListWidgetItem(first_line(trace.content, 100))
            item.setData(Qt.ItemDataRole.UserRole, trace.id)
            item.setToolTip(trace.id)
            self.results.addItem(item)
        if self.results.count():
            self.results.setCurrentRow(0)

    def choice(self) -> tuple[str, str] | None:
        item = self.results.currentItem()
        if item is None:
            return None
        return item.data(Qt.ItemDataRole.UserRole), self.kind.currentText()

    def _accept_if_chosen(self) -> None:
        if self.choice() is not None:
            self.accept()
