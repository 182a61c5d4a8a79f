"""Merge dialog: which memory survives, and the merged content, editable before merging."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from memgui.core.errors import InvalidArgument
from memgui.core.model import Trace, check_content
from memgui.ui.models.trace_columns import first_line
from memgui.ui.theme import colours
from memgui.ui.views.field_words import in_field_words


def survivor_of(traces: list[Trace]) -> Trace:
    """The trace the core keeps: the most retrieved, the first given on a tie."""
    return max(traces, key=lambda t: (t.retrieval_count, -traces.index(t)))


def default_content(traces: list[Trace]) -> str:
    """The survivor's text first, then each other text not already contained in it."""
    survivor = survivor_of(traces)
    parts = [survivor.content]
    for trace in traces:
        if trace is not survivor and trace.content not in "\n\n".join(parts):
            parts.append(trace.content)
    return "\n\n".join(parts)


class MergeDialog(QDialog):
    def __init__(self, traces: list[Trace], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Merge {len(traces)} memories")
        survivor = survivor_of(traces)
        intro = QLabel(
            f"The merged memory keeps the id <b>{survivor.id}</b> (the most recalled one); "
            "the others go to the trash. Tags are combined. Edit the merged text below."
        )
        intro.setWordWrap(True)
        listing = QListWidget()
        listing.setAccessibleName("Memories to merge")
        for trace in traces:
            mark = "★ " if trace is survivor else "   "
            listing.addItem(f"{mark}{first_line(trace.content, 90)}  ({trace.retrieval_count}×)")
        listing.setMaximumHeight(110)
        self.content = QPlainTextEdit(default_content(traces))
        self.content.setAccessibleName("Merged content")
        self.content.setTabChangesFocus(True)
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
        layout.addWidget(listing)
        caption = QLabel("Merged &content:")
        caption.setBuddy(self.content)
        layout.addWidget(caption)
        layout.addWidget(self.content, 1)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.resize(560, 420)

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
