"""Fixing a refused record of an import plan before it is committed.

The editor shows why the record was refused, its text and its other fields (as JSON). Apply
writes the edits into the record and has it checked again with the core's rules
(`ImportRun.revalidate`): a record that now passes becomes `new` (or a duplicate, when the
brain holds its text already) and the editor closes; one that still fails stays open with
the new reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from memgui.core.io.records import ERROR, REFUSED, TRACE, ImportRecord

EDITABLE_VERDICTS = (REFUSED, ERROR)


def can_edit(record: ImportRecord | None) -> bool:
    """Only trace records can be checked again; other rows follow their trace."""
    return record is not None and record.kind == TRACE and record.verdict in EDITABLE_VERDICTS


def _problem_text(record: ImportRecord) -> str:
    where = f" ({record.problem_field})" if record.problem_field else ""
    return f"{record.verdict.capitalize()}{where}: {record.reason or 'no reason given'}"


class RecordEditor(QDialog):
    """Edit `record` in place; `check(record)` re-validates it and returns it."""

    def __init__(
        self,
        record: ImportRecord,
        check: Callable[[ImportRecord], ImportRecord],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Fix {record.source}")
        self.resize(720, 560)
        self.record = record
        self._check = check
        self.problem = QLabel(_problem_text(record))
        self.problem.setObjectName("problem_label")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #c62828;")
        self.content = QPlainTextEdit(str(record.fields.get("content") or ""))
        self.content.setObjectName("content_edit")
        others = {k: v for k, v in record.fields.items() if k not in ("content", "embedding")}
        self.fields = QPlainTextEdit(json.dumps(others, ensure_ascii=False, indent=2, default=str))
        self.fields.setObjectName("fields_edit")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Apply | QDialogButtonBox.StandardButton.Cancel
        )
        self.apply_button = buttons.button(QDialogButtonBox.StandardButton.Apply)
        self.apply_button.setText("Apply and check again")
        self.apply_button.clicked.connect(self.apply)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.problem)
        layout.addWidget(QLabel("Text"))
        layout.addWidget(self.content, 3)
        layout.addWidget(QLabel("Other fields (JSON object)"))
        layout.addWidget(self.fields, 2)
        layout.addWidget(buttons)

    def _edited_fields(self) -> dict[str, Any] | None:
        try:
            others = json.loads(self.fields.toPlainText() or "{}")
        except json.JSONDecodeError as exc:
            self.problem.setText(f"The other fields are not JSON: {exc.msg} (line {exc.lineno})")
            return None
        if not isinstance(others, dict):
            self.problem.setText("The other fields must be a JSON object ({…}).")
            return None
        fields = dict(others)
        if "embedding" in self.record.fields:
            fields["embedding"] = self.record.fields["embedding"]
        fields["content"] = self.content.toPlainText()
        return fields

    def apply(self) -> bool:
        """Write the edits into the record and check it; True when it now passes."""
        fields = self._edited_fields()
        if fields is None:
            return False
        self.record.fields = fields
        checked = self._check(self.record)
        if checked.verdict in EDITABLE_VERDICTS:
            self.problem.setText(_problem_text(checked))
            return False
        self.accept()
        return True
