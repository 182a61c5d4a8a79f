"""Pick another trace by searching for it (used to add a link).

The search runs as a job on a reader connection of its own when the window gives it a job
runner: a search can grow with the brain, and the GUI thread never waits on one. Answers to
older queries than the last one typed are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING

import shiboken6
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
from memgui.core.model import LINK_KINDS, SearchResult, TraceFilter
from memgui.core.progress import Progress
from memgui.ui.jobs import JobRunner
from memgui.ui.models.trace_columns import first_line
from memgui.ui.models.trace_queries import ReaderPool

if TYPE_CHECKING:
    from memgui.core.brain import Brain

RESULTS = 50
SEARCH_JOB = "link search"


def _search_job(readers: ReaderPool, query: str) -> Generator[Progress, None, SearchResult]:
    reader = readers.take()
    try:
        yield Progress(0, 1, f"searching for {query!r}")
        return reader.search(query, TraceFilter(), limit=RESULTS, record_recall=False)
    finally:
        readers.give_back(reader)


class TracePicker(QDialog):
    def __init__(
        self,
        brain: Brain,
        exclude: str,
        parent: QWidget | None = None,
        runner: JobRunner | None = None,
        open_reader: Callable[[], Brain] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Link to another memory")
        self._brain = brain
        self._exclude = exclude
        self._runner = runner
        # Searches reuse their connections; closing the dialog closes them (a job still
        # running closes its own when it gives it back).
        self._readers = ReaderPool(open_reader) if open_reader is not None else None
        self.finished.connect(lambda _result: self.close_readers())
        self._asked = 0  # number of the latest query; answers to older ones are dropped
        self.searching = False
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
        caption = QLabel("&Kind:")
        caption.setBuddy(self.kind)
        layout.addWidget(caption)
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
        self._asked += 1
        query = self.field.text().strip()
        if not query:
            self.results.clear()
            self.message.setText("")
            self.searching = False
            return
        if self._runner is None or self._readers is None:
            try:
                found = self._brain.search(query, TraceFilter(), limit=RESULTS, record_recall=False)
            except MemguiError as exc:
                self._show_error(exc)
                return
            self._show(found)
            return
        asked, readers = self._asked, self._readers
        self.searching = True
        self.message.setText("Searching…")
        job = self._runner.start(SEARCH_JOB, lambda: _search_job(readers, query))
        job.finished.connect(lambda found: self._answer(asked, found))
        job.failed.connect(lambda exc: self._answer(asked, exc))

    def close_readers(self) -> None:
        if self._readers is not None:
            self._readers.close()

    def _answer(self, asked: int, outcome: SearchResult | BaseException) -> None:
        if not shiboken6.isValid(self.results):
            return  # the dialog was closed and deleted while the search ran
        if asked != self._asked:
            return  # an older query's answer: a newer one is on its way
        self.searching = False
        if isinstance(outcome, BaseException):
            self._show_error(outcome)
        else:
            self._show(outcome)

    def _show_error(self, exc: BaseException) -> None:
        self.results.clear()
        self.message.setText(str(exc))

    def _show(self, found: SearchResult) -> None:
        self.results.clear()
        self.message.setText("" if found.traces else "No memory matches.")
        for trace in found.traces:
            if trace.id == self._exclude:
                continue
            text = first_line(trace.content, 100)
            item = QListWidgetItem(f"{trace.title} — {text}" if trace.title else text)
            item.setData(Qt.ItemDataRole.UserRole, trace.id)
            item.setToolTip(f"{trace.id}\n{trace.content[:300]}")
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
