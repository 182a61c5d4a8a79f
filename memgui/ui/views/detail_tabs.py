"""The tabs beside the editor: Links, Neighbours, History and Metadata of one trace.

Each tab reads from the core only when it is shown (and again when the trace changes);
the lists are short, so they come in one call each.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from memgui.core.errors import MemguiError
from memgui.core.model import MAX_DEPTH, MAX_NEIGHBOURS, RelatedSummary, Trace
from memgui.ui.models.detail_models import (
    DetailRole,
    HistoryModel,
    LinksModel,
    ListTableModel,
    NeighboursModel,
)
from memgui.ui.models.history_text import absorbed_by_merges, names_for

if TYPE_CHECKING:
    from memgui.core.brain import Brain


def _table(model: ListTableModel[Any], name: str) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setAccessibleName(name)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.verticalHeader().hide()
    header = view.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    # The last column (the text) takes the rest of the width and elides, no side scrolling.
    header.setSectionResizeMode(model.columnCount() - 1, QHeaderView.ResizeMode.Stretch)
    header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    view.setWordWrap(False)
    return view


def _read_only(brain: Brain | None) -> bool:
    """A brain whose file cannot be written: the tabs show it, their buttons change nothing."""
    return brain is not None and brain.read_only


class DetailTab(QWidget):
    """Base: remembers the trace and whether its view is stale."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.brain: Brain | None = None
        self.trace: Trace | None = None
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.hide()

    def show_trace(self, brain: Brain | None, trace: Trace | None) -> None:
        self.brain, self.trace = brain, trace
        # Hidden before the reload, not after: `reload` may show a message of its own.
        self.message.hide()
        try:
            self.reload()
        except MemguiError as exc:
            self.message.setText(str(exc))
            self.message.show()

    def reload(self) -> None:
        raise NotImplementedError


class LinksTab(DetailTab):
    open_requested = Signal(str)  # trace id
    add_requested = Signal()
    remove_requested = Signal(object)  # RelatedSummary

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = LinksModel(self)
        self.view = _table(self.model, "Links")
        self.add_button = QPushButton("Add li&nk…")
        self.add_button.setToolTip("Link this memory to another one, found by search")
        self.remove_button = QPushButton("&Remove link")
        self.open_button = QPushButton("Open o&ther")
        self.open_button.setToolTip("Select the linked memory in the table (or double-click)")
        buttons = QHBoxLayout()
        for button in (self.add_button, self.remove_button, self.open_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.message)
        layout.addWidget(self.view, 1)
        layout.addLayout(buttons)
        self.add_button.clicked.connect(self.add_requested)
        self.remove_button.clicked.connect(self._remove)
        self.open_button.clicked.connect(self._open)
        self.view.doubleClicked.connect(
            lambda index: self.open_requested.emit(index.data(DetailRole.ITEM_ID))
        )
        self.view.selectionModel().selectionChanged.connect(self._enable_buttons)
        self.model.modelReset.connect(self._enable_buttons)

    def reload(self) -> None:
        brain, trace = self.brain, self.trace
        items = brain.related(trace.id, limit=200) if brain and trace else []
        self.model.set_items(items)
        writable = not _read_only(self.brain)
        self.add_button.setEnabled(writable and self.trace is not None and not self.trace.deleted)
        self._enable_buttons()
        if self.trace is not None and not items:
            self.message.setText("This memory has no links to other memories.")
            self.message.show()

    def _enable_buttons(self, *_args: object) -> None:
        chosen = self._selected() is not None
        self.remove_button.setEnabled(chosen and not _read_only(self.brain))
        self.open_button.setEnabled(chosen)

    def _selected(self) -> RelatedSummary | None:
        rows = self.view.selectionModel().selectedRows()
        return self.model.item_at(rows[0].row()) if rows else None

    def _remove(self) -> None:
        item = self._selected()
        if item is not None:
            self.remove_requested.emit(item)

    def _open(self) -> None:
        item = self._selected()
        if item is not None:
            self.open_requested.emit(item.id)


class NeighboursTab(DetailTab):
    open_requested = Signal(str)  # the trace id of a memory neighbour

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = NeighboursModel(self)
        self.view = _table(self.model, "Knowledge-graph neighbours")
        self.view.setToolTip("Enter or a double-click opens a memory")
        self.depth_box = QSpinBox()
        self.depth_box.setRange(1, MAX_DEPTH)
        self.depth_box.setAccessibleName("Depth")
        self.depth_box.setToolTip("How many hops through the knowledge graph")
        caption = QLabel("De&pth")
        caption.setBuddy(self.depth_box)
        # The concepts the memory hangs off: its nodes one hop away.
        self.hangs_off = QLabel()
        self.hangs_off.setObjectName("hangs_off")
        self.hangs_off.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(caption)
        row.addWidget(self.depth_box)
        row.addWidget(self.hangs_off, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.message)
        layout.addWidget(self.view, 1)
        self.depth_box.valueChanged.connect(lambda _v: self.show_trace(self.brain, self.trace))
        self.view.activated.connect(self._open)  # Enter, and a double-click

    def reload(self) -> None:
        brain, trace = self.brain, self.trace
        found, more = (
            brain.neighbours_and_more(trace.id, self.depth_box.value(), MAX_NEIGHBOURS)
            if brain and trace
            else ([], False)
        )
        ids = sorted({n.trace_id for n in found if n.trace_id})
        self.model.set_neighbours(found, brain.get_many(ids) if brain and ids else {})
        concepts = [n.label for n in found if n.hop == 1 and self.model.memory_of(n) is None]
        self.hangs_off.setText(f"Hangs off: {', '.join(concepts)}" if concepts else "")
        if self.trace is not None and not found:
            self.message.setText("No knowledge-graph nodes are connected to this memory.")
            self.message.show()
        elif more:
            self.message.setText(
                f"The {MAX_NEIGHBOURS} nearest nodes are shown; the graph holds more."
            )
            self.message.show()

    def _open(self, index: Any) -> None:
        item = self.model.item_at(index.row())
        if item is None:
            return
        trace_id = self.model.item_id(item)
        if trace_id is not None:
            self.open_requested.emit(trace_id)
            return
        self.message.setText(
            f"“{item.label}” is a concept ({item.node_type}), not a memory: the memories "
            "linked to it are one hop further (Depth)."
        )
        self.message.show()


class HistoryTab(DetailTab):
    restore_requested = Signal(object)  # JournalEntry whose state to bring back

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = HistoryModel(self)
        self.view = _table(self.model, "History")
        # What the chosen row changed, in full: restoring a version is never blind.
        self.details = QTextBrowser()
        self.details.setObjectName("history_details")
        self.details.setAccessibleName("What this change did")
        self.details.setPlaceholderText("Choose a row to see what it changed")
        self.restore_button = QPushButton("&Restore this version")
        self.restore_button.setToolTip("Bring the memory back to the state after the chosen row")
        self.restore_button.clicked.connect(self._restore)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.restore_button)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.view)
        split.addWidget(self.details)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self.message)
        layout.addWidget(split, 1)
        layout.addLayout(buttons)
        self.view.selectionModel().currentRowChanged.connect(self._show_details)
        self.model.modelReset.connect(lambda: self._show_details(self.view.currentIndex()))

    def reload(self) -> None:
        brain, trace = self.brain, self.trace
        entries = list(reversed(brain.history(trace.id))) if brain and trace else []
        shown = trace.id if trace else ""
        if brain is not None:
            names = names_for(entries, brain.get_many, shown)
            absorbed = absorbed_by_merges(entries, brain.batch_entries)
        else:
            names, absorbed = {}, {}
        self.model.set_history(shown, entries, names, absorbed)  # newest first
        self.restore_button.setEnabled(not _read_only(self.brain))

    def _show_details(self, index: Any) -> None:
        entry = self.model.item_at(index.row()) if index.isValid() else None
        self.details.setHtml(self.model.details(entry) if entry is not None else "")

    def _restore(self) -> None:
        rows = self.view.selectionModel().selectedRows()
        entry = self.model.item_at(rows[0].row()) if rows else None
        if entry is not None and entry.after is not None and entry.op not in ("link", "unlink"):
            self.restore_requested.emit(entry)


class MetadataTab(DetailTab):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setAccessibleName("Metadata")
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)

    def reload(self) -> None:
        trace = self.trace
        if trace is None:
            self.text.setPlainText("")
            return
        shown = {
            "id": trace.id,
            "embedding_status": "current" if trace.embedding_status == 1 else "pending",
            "stored_strength": trace.stored_strength,
            "updated_at": trace.updated_at,
            "emotions": trace.emotions,
            "metadata": trace.metadata,
        }
        self.text.setPlainText(json.dumps(shown, indent=2, ensure_ascii=False, default=str))
