"""Pieces of the import review page: the plan options bar and the record detail.

`PlanOptionsBar` holds what changes the plan (format, dedup, all ChatGPT branches, a ChatGPT
export's facts, the target scope and scope id) and emits `options_changed` with a fresh
`ImportOptions`; the page re-plans in the background. `RecordDetail` shows the selected
record: its full text, its parsed fields, and beside them, for a duplicate or an update, the
trace already there — or, for a duplicate of an earlier record of the same source, that
record. Its titles elide at their end, with the whole title in the tooltip.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSizePolicy,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from memgui.core.brain import Brain
from memgui.core.io import IMPORT_FORMATS, ImportOptions, ImportPlan, ImportRecord, Verdict
from memgui.core.model import SCOPES
from memgui.ui.views.flow_layout import FlowLayout

AS_IN_SOURCE = "as in the source"
FORMAT_LABELS = {
    "auto": "Detect",
    "sqlite": "AgentOS SQLite",
    "json": "AgentOS JSON",
    "jsonl": "agent-memory JSONL",
    "markdown": "Markdown folder",
    "obsidian": "Obsidian vault",
    "chatgpt": "ChatGPT export",
    "csv": "CSV",
    "gsd": "GSD STATE.md",
}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True, default=_plain)


def _plain(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(bytes(value))} bytes>"
    return repr(value)


def earlier_record(plan: ImportPlan | None, trace_id: str) -> ImportRecord | None:
    """The record of `plan` the commit would write as `trace_id` (a duplicate within the
    source names the id that record will get, which the brain does not hold yet)."""
    if plan is None:
        return None
    for index, resolved in plan.resolved.items():
        if resolved.get("id") == trace_id:
            return plan.records[index]
    for record in plan.records:  # written under the source's own id: no resolved entry
        if record.verdict in (Verdict.NEW, Verdict.UPDATE) and record.fields.get("id") == trace_id:
            return record
    return None


class ElidedLabel(QLabel):
    """A one-line label that elides its end to fit and shows the whole text as its tooltip."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Ignored width: the label never widens its column; it elides instead.
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._full = ""
        self.set_full_text(text)

    def full_text(self) -> str:
        return self._full

    def set_full_text(self, text: str) -> None:
        self._full = text
        self.setToolTip(text)
        self._elide()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        width = max(self.contentsRect().width(), 20)
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, width)
        super().setText(shown)


class ApplyLineEdit(QLineEdit):
    """A line edit whose Return is its own: it finishes the edit and goes no further.

    QLineEdit passes Return on to the dialog, which "clicks" its default button. In the
    review page the edit starts a re-plan and shows the working page, whose Cancel then
    took the same key press and stopped the re-plan it had just started.
    """

    def keyPressEvent(self, event: QKeyEvent) -> None:
        super().keyPressEvent(event)
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            event.accept()


def _together(*widgets: QWidget) -> QWidget:
    """Widgets side by side in one box that a wrapping layout never splits."""
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        row.addWidget(widget)
    return box


class PlanOptionsBar(QWidget):
    options_changed = Signal(object)  # ImportOptions

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.format_box = QComboBox()
        self.format_box.setObjectName("format_box")
        for name in ("auto", *IMPORT_FORMATS):
            self.format_box.addItem(FORMAT_LABELS.get(name, name), name)
        self.dedup_check = QCheckBox("Skip duplicates")
        self.dedup_check.setObjectName("dedup_check")
        self.dedup_check.setToolTip("Compare each record with the brain and the source")
        self.branches_check = QCheckBox("All ChatGPT branches")
        self.branches_check.setObjectName("branches_check")
        self.branches_check.setToolTip("Every edit and regeneration, not only the branch seen")
        self.facts_check = QCheckBox("Extract facts")
        self.facts_check.setObjectName("facts_check")
        self.facts_check.setToolTip(
            "Also import the facts an Ollama chat model draws from each new chat "
            "(auto-ingest), reviewed here with the rest"
        )
        self.scope_box = QComboBox()
        self.scope_box.setObjectName("scope_box")
        self.scope_box.addItem(AS_IN_SOURCE, None)
        for scope in SCOPES:
            self.scope_box.addItem(scope, scope)
        self.scope_id_edit = ApplyLineEdit()
        self.scope_id_edit.setObjectName("scope_id_edit")
        self.scope_id_edit.setPlaceholderText("scope id as in the source")
        self.scope_id_edit.setClearButtonEnabled(True)
        # Wraps on a narrow screen (the row is ~840 px wide); each label stays by its field.
        flow = FlowLayout(self, spacing=10)
        for group in (
            (QLabel("Format"), self.format_box),
            (self.dedup_check,),
            (self.branches_check,),
            (self.facts_check,),
            (QLabel("File under scope"), self.scope_box),
            (QLabel("scope id"), self.scope_id_edit),
        ):
            flow.addWidget(_together(*group))
        self._loading = False
        self.format_box.currentIndexChanged.connect(self._emit)
        self.dedup_check.toggled.connect(self._emit)
        self.branches_check.toggled.connect(self._emit)
        self.facts_check.toggled.connect(self._emit)
        self.scope_box.currentIndexChanged.connect(self._emit)
        self.scope_id_edit.editingFinished.connect(self._emit_if_scope_id_changed)
        self._last: ImportOptions | None = None

    def set_options(self, options: ImportOptions, detected: str | None = None) -> None:
        """Show `options` without emitting; `detected` names the format auto picked."""
        self._loading = True
        try:
            self.format_box.setCurrentIndex(max(0, self.format_box.findData(options.format)))
            if detected:
                auto = f"Detect ({FORMAT_LABELS.get(detected, detected)})"
                self.format_box.setItemText(0, auto)
            self.dedup_check.setChecked(options.dedup)
            self.branches_check.setChecked(options.all_branches)
            self.facts_check.setChecked(options.extract_facts)
            chatgpt = "chatgpt" in (options.format, detected)
            facts_group = self.facts_check.parentWidget()
            if facts_group is not None:  # the flow's group that holds it (always, once built)
                facts_group.setVisible(chatgpt or options.extract_facts)
            self.scope_box.setCurrentIndex(max(0, self.scope_box.findData(options.scope)))
            self.scope_id_edit.setText(options.scope_id or "")
            self._last = self.options()
        finally:
            self._loading = False

    def options(self) -> ImportOptions:
        scope_id = self.scope_id_edit.text().strip()
        return ImportOptions(
            format=self.format_box.currentData() or "auto",
            dedup=self.dedup_check.isChecked(),
            all_branches=self.branches_check.isChecked(),
            extract_facts=self.facts_check.isChecked()
            and (self.format_box.currentData() or "auto") in ("auto", "chatgpt"),
            scope=self.scope_box.currentData(),
            scope_id=scope_id or None,
        )

    def _emit_if_scope_id_changed(self) -> None:
        if self._last is None or self.options().scope_id != self._last.scope_id:
            self._emit()

    def _emit(self, *_args: object) -> None:
        if self._loading:
            return
        self._last = self.options()
        self.options_changed.emit(self._last)


class RecordDetail(QTabWidget):
    """The selected record: text (with the existing trace beside it) and fields."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.record_text = self._text_box("record_text")
        self.record_text.setPlaceholderText("(no text)")
        self.existing_text = self._text_box("existing_text")
        # One line each, so both texts start level; the whole title is in the tooltip.
        self.existing_title = ElidedLabel()
        self.existing_title.setObjectName("existing_title")
        self.record_title = ElidedLabel("This record")
        self.record_title.setObjectName("record_title")
        existing = QWidget()
        column = QVBoxLayout(existing)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.existing_title)
        column.addWidget(self.existing_text)
        mine = QWidget()
        column = QVBoxLayout(mine)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.record_title)
        column.addWidget(self.record_text)
        self.side_by_side = QSplitter(Qt.Orientation.Horizontal)
        self.side_by_side.addWidget(mine)
        self.side_by_side.addWidget(existing)
        self.side_by_side.setStretchFactor(0, 1)
        self.side_by_side.setStretchFactor(1, 1)
        self.existing_pane = existing
        # The whole reason, however long: the table cuts it, the title elides it.
        self.reason_label = QLabel()
        self.reason_label.setObjectName("reason_label")
        self.reason_label.setWordWrap(True)
        self.reason_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        text_tab = QWidget()
        text_column = QVBoxLayout(text_tab)
        text_column.setContentsMargins(0, 0, 0, 0)
        text_column.addWidget(self.reason_label)
        text_column.addWidget(self.side_by_side, 1)
        self.fields_text = self._text_box("fields_text")
        self.addTab(text_tab, "Text")
        self.addTab(self.fields_text, "Fields")
        self.show_record(None, None)

    @staticmethod
    def _text_box(name: str) -> QPlainTextEdit:
        box = QPlainTextEdit()
        box.setObjectName(name)
        box.setReadOnly(True)
        return box

    def show_record(
        self, record: ImportRecord | None, brain: Brain | None, plan: ImportPlan | None = None
    ) -> None:
        if record is None:
            self.record_text.setPlainText("")
            self.fields_text.setPlainText("")
            self.existing_pane.hide()
            self.reason_label.hide()
            return
        field = f" ({record.problem_field})" if record.problem_field else ""
        self.reason_label.setText(f"Why{field}: {record.reason}" if record.reason else "")
        self.reason_label.setVisible(bool(record.reason))
        content = record.fields.get("content")
        text = content if isinstance(content, str) else _json(record.fields)
        title = f"This record — {record.verdict}"
        if record.reason:
            field = f" ({record.problem_field})" if record.problem_field else ""
            title += f"{field}: {record.reason}"
        self.record_title.set_full_text(title)
        self.record_text.setPlainText(text)
        described = {
            "source": record.source,
            "kind": record.kind,
            "verdict": record.verdict,
            "reason": record.reason or None,
            "field": record.problem_field,
            "value": record.value,
            "existing_id": record.existing_id,
            "fields": {k: v for k, v in record.fields.items() if k != "content"},
            "links": record.links or None,
        }
        self.fields_text.setPlainText(_json({k: v for k, v in described.items() if v is not None}))
        self._show_existing(record, brain, plan)

    def _show_existing(
        self, record: ImportRecord, brain: Brain | None, plan: ImportPlan | None
    ) -> None:
        if record.verdict not in (Verdict.DUPLICATE, Verdict.UPDATE) or not record.existing_id:
            self.existing_pane.hide()
            return
        trace = brain.get_many([record.existing_id]).get(record.existing_id) if brain else None
        self.existing_pane.show()
        if trace is None:
            earlier = earlier_record(plan, record.existing_id)
            if earlier is not None:
                self.existing_title.set_full_text(f"Same as record {earlier.source} of this import")
                content = earlier.fields.get("content")
                self.existing_text.setPlainText(content if isinstance(content, str) else "")
                return
            self.existing_title.set_full_text(f"Not in the brain yet: {record.existing_id}")
            self.existing_text.setPlainText("(a row of this import or of another table)")
            return
        state = " — in the trash" if trace.deleted else ""
        named = f"“{trace.label}” ({trace.id})"
        self.existing_title.set_full_text(f"Already in the brain: {named}{state}")
        about = {
            "type": trace.type,
            "scope": trace.scope,
            "scope_id": trace.scope_id,
            "category": trace.category,
            "tags": list(trace.tags),
        }
        self.existing_text.setPlainText(f"{trace.content}\n\n—\n{_json(about)}")
