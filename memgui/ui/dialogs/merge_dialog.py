"""Merge dialog: which memory survives (the person picks; the most recalled by default), and
the merged content, editable before merging."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from memgui.core.errors import InvalidArgument
from memgui.core.model import Trace, check_content, summary_of
from memgui.ui.theme import colours
from memgui.ui.views.field_words import in_field_words


def survivor_of(traces: list[Trace]) -> Trace:
    """The trace the core keeps by default: the most retrieved, the first given on a tie."""
    return max(traces, key=lambda t: (t.retrieval_count, -traces.index(t)))


def default_content(traces: list[Trace], survivor: Trace | None = None) -> str:
    """The survivor's text first, then each other text not already contained in it."""
    survivor = survivor or survivor_of(traces)
    parts = [survivor.content]
    for trace in traces:
        if trace is not survivor and trace.content not in "\n\n".join(parts):
            parts.append(trace.content)
    return "\n\n".join(parts)


def _describe(trace: Trace, default: Trace) -> str:
    """Its title and the start of its text (two chats of one conversation share a title)."""
    recalled = f"recalled {trace.retrieval_count}×"
    if trace is default:
        recalled += ", the most recalled"
    start = summary_of(trace.content, 60)
    named = f"{trace.title} — {start}" if trace.title else start
    return f"{named}  ({recalled})"


class MergeDialog(QDialog):
    def __init__(self, traces: list[Trace], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Merge {len(traces)} memories")
        self.traces = list(traces)
        default = survivor_of(self.traces)
        intro = QLabel(
            "Choose the memory to <b>keep</b>: it keeps its id and title and takes the "
            "others' tags, links and knowledge-graph neighbours; the others go to the trash. "
            "Edit the merged text below."
        )
        intro.setWordWrap(True)
        self.listing = QListWidget()
        self.listing.setObjectName("merge_survivor")
        self.listing.setAccessibleName("Memory to keep")
        for trace in self.traces:
            item = QListWidgetItem(_describe(trace, default))
            item.setData(Qt.ItemDataRole.UserRole, trace.id)
            item.setToolTip(f"{trace.id}\n{trace.content[:300]}")
            self.listing.addItem(item)
        self.listing.setMaximumHeight(120)
        self.listing.setCurrentRow(self.traces.index(default))
        self._offered = default_content(self.traces, default)  # the text the dialog wrote
        self.content = QPlainTextEdit(self._offered)
        self.content.setAccessibleName("Merged content")
        self.content.setTabChangesFocus(True)
        self.listing.currentRowChanged.connect(self._survivor_changed)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("&Merge")
        buttons.accepted.connect(self._accept_if_valid)
        buttons.rejected.connect(self.reject)
        self.error = QLabel()
        self.error.setStyleSheet(f"color: {colours.ERROR};")
        self.error.hide()
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        keep = QLabel("&Keep:")
        keep.setBuddy(self.listing)
        layout.addWidget(keep)
        layout.addWidget(self.listing)
        caption = QLabel("Merged &content:")
        caption.setBuddy(self.content)
        layout.addWidget(caption)
        layout.addWidget(self.content, 1)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.resize(640, 460)

    def survivor(self) -> Trace:
        return self.traces[max(0, self.listing.currentRow())]

    def survivor_id(self) -> str:
        return self.survivor().id

    def _survivor_changed(self, _row: int) -> None:
        # The text the dialog offered starts with the survivor's: it follows the choice,
        # unless the person has written their own.
        if self.content.toPlainText() == self._offered:
            self._offered = default_content(self.traces, self.survivor())
            self.content.setPlainText(self._offered)

    def merged_content(self) -> str:
        return self.content.toPlainText()

    def _accept_if_valid(self) -> None:
        try:
            check_content(self.merged_content())  # the core's own rule and message
        except InvalidArgument as exc:
            self.error.setText(in_field_words(exc, "Merged content"))
            self.error.show()
            return
        self.accept()
