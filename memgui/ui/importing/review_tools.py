"""Parts of the import review that help with many records at once: the reason column cut at
its end, the list of what was not read, what the format makes of the source, and which
records were refused for the same reason (the core's `fix_alike` fixes them the way the
person fixed one).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from memgui.core.io import ImportPlan, ImportRecord, RecordKind
from memgui.ui.importing.import_record_editor import (
    EDITABLE_VERDICTS,
    raw_source,
    text_to_start_from,
)

# What reading the source as each format makes of it (the review shows the one chosen).
FORMAT_EFFECTS = {
    "markdown": "Read as Markdown notes: each note's text is a memory and its front matter "
    "its fields; [[wikilinks]] and #tags stay in the text as written.",
    "obsidian": "Read as an Obsidian vault: as Markdown, and [[wikilinks]] become links "
    "between the memories, #tags join their tags, and embeds are listed as not read.",
    "chatgpt": "Read as a ChatGPT export: each conversation and its messages (the branch "
    "shown in ChatGPT; All ChatGPT branches adds every edit and regeneration).",
    "csv": "Read as CSV: one memory per row, its text from the content column.",
    "json": "Read as an AgentOS JSON export: its memories, links and knowledge graph.",
    "jsonl": "Read as agent-memory JSONL (v1, strictly): one memory per line.",
    "sqlite": "Read as a brain file: its memories, links and knowledge graph.",
    "gsd": "Read as a GSD STATE.md: its decisions, tasks and notes as memories.",
}


class FormatNote(QWidget):
    """What the chosen format makes of the source, and a better one to try when the plan
    suggests it (notes with [[wikilinks]] but no .obsidian folder: an Obsidian vault)."""

    format_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.effect = QLabel()
        self.effect.setObjectName("format_effect")
        self.effect.setWordWrap(True)
        self.suggestion = QLabel()
        self.suggestion.setObjectName("format_suggestion")
        self.suggestion.setWordWrap(True)
        self.try_button = QPushButton()
        self.try_button.setObjectName("try_format")
        self._suggested = ""
        self.try_button.clicked.connect(lambda: self.format_chosen.emit(self._suggested))
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.suggestion, 1)
        row.addWidget(self.try_button)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.effect)
        column.addLayout(row)

    def show_plan(self, plan: ImportPlan) -> None:
        self.effect.setText(FORMAT_EFFECTS.get(plan.format, ""))
        self._suggested = plan.suggested_format or ""
        if self._suggested == "obsidian":
            self.suggestion.setText(
                "These notes link to one another with [[wikilinks]], as an Obsidian vault's "
                "do, though the folder has no .obsidian folder."
            )
            self.try_button.setText("Read it as an Obsidian vault")
        self.suggestion.setVisible(bool(self._suggested))
        self.try_button.setVisible(bool(self._suggested))


class EndElideDelegate(QStyledItemDelegate):
    """Cuts a cell's text at its end (a reason's start says what went wrong); the whole
    text is the cell's tooltip and in the record's detail."""

    def initStyleOption(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideRight


class NotReadDialog(QDialog):
    """What an import left unread (images, other files, embeds), as a list to scroll."""

    def __init__(self, records: list[ImportRecord], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Not read: {len(records)}")
        intro = QLabel(
            f"{len(records)} files or parts of the source are not imported: memgui reads "
            "text only. They are listed here, and in the refusal report."
        )
        intro.setWordWrap(True)
        self.table = QTableWidget(len(records), 2)
        self.table.setObjectName("not_read_table")
        self.table.setHorizontalHeaderLabels(["Source", "Why not"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for row, record in enumerate(records):
            for column, text in enumerate((record.source, record.reason)):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.table.setItem(row, column, item)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(0, 380)
        header.setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(760, 480)


def same_cause(plan: ImportPlan | None, row: int) -> list[int]:
    """The other memory records refused (or in error) for exactly the reason `row` was."""
    if plan is None or not 0 <= row < len(plan.records):
        return []
    first = plan.records[row]
    if first.verdict not in EDITABLE_VERDICTS or first.kind != RecordKind.TRACE:
        return []
    return [
        i
        for i, record in enumerate(plan.records)
        if i != row
        and record.kind == RecordKind.TRACE
        and record.verdict == first.verdict
        and record.reason == first.reason
        and record.problem_field == first.problem_field
    ]


def note_text(record: ImportRecord, root: str | Path | None) -> str:
    """The text a note the reader read none of is fixed with: after its front matter, or
    the whole note when it holds nothing else (a template); '' when it cannot be read."""
    raw = raw_source(record, root)
    return text_to_start_from(raw) if raw else ""
