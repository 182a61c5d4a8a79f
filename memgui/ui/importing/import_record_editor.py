"""Fixing a refused record of an import plan before it is committed.

The editor shows why the record was refused, its text and its other fields (as JSON). Apply
writes the edits into the record and has it checked again with the core's rules
(`ImportRun.check_record`: a job, so the brain's lookups never run on the GUI thread; Apply
waits, greyed, meanwhile): a record that now passes becomes `new` (or a duplicate, when the
brain holds its text already) and the editor closes; one that still fails stays open with
the new reason. A record the reader could not turn into text (a note whose front matter is
not valid YAML) shows the source as written, with the body after its front matter as the
text to start from, so the person sees what to fix.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from memgui.core.io import ImportRecord, RecordKind, Verdict
from memgui.ui.theme import colours

EDITABLE_VERDICTS = (Verdict.REFUSED, Verdict.ERROR)


def can_edit(record: ImportRecord | None) -> bool:
    """Only trace records can be checked again; other rows follow their trace."""
    return (
        record is not None
        and record.kind == RecordKind.TRACE
        and record.verdict in EDITABLE_VERDICTS
    )


def why_not_editable(record: ImportRecord | None) -> str:
    """Why "Fix record…" is off for `record` ("" when it can be fixed)."""
    if record is None:
        return "Select a refused or error record to fix it."
    if record.verdict not in EDITABLE_VERDICTS:
        return f"Only refused or error records need fixing (this one is {record.verdict})."
    if record.kind != RecordKind.TRACE:
        return (
            f"A {record.kind} record cannot be fixed here: only memories (traces) can be "
            "checked again. Fix it in the source and import again."
        )
    return ""


_LINE = re.compile(r":(\d+)$")
_FENCE = re.compile(r"^---[ \t]*$", re.MULTILINE)


def raw_source(record: ImportRecord, root: str | Path | None) -> str | None:
    """What the source holds for `record` as written: the note's file under a folder
    source, else the record's line of a file source; None when it cannot be read."""
    if root is None:
        return None
    root = Path(root)
    metadata = record.fields.get("metadata")
    named = metadata.get("source_file") if isinstance(metadata, dict) else None
    line = _LINE.search(record.source)
    relative = named if isinstance(named, str) else _LINE.sub("", record.source)
    try:
        if root.is_dir():
            return (root / relative).read_text(encoding="utf-8", errors="replace")
        if line is not None and root.is_file():
            lines = root.read_text(encoding="utf-8", errors="replace").splitlines()
            number = int(line.group(1))
            return lines[number - 1] if 0 < number <= len(lines) else None
    except OSError:
        return None
    return None


def body_after_front_matter(text: str) -> str:
    """The note's text after a `---` block that opens it (the text to start a fix from)."""
    if not text.startswith("---"):
        return text
    fences = list(_FENCE.finditer(text))
    return text[fences[1].end() :].lstrip("\n") if len(fences) > 1 else text


def text_to_start_from(raw: str) -> str:
    """What a fix of a note the reader could not read starts from: the text after its front
    matter, or — a template holds nothing else — the whole note as written."""
    body = body_after_front_matter(raw)
    return body if body.strip() else raw


def _plan_root(parent: QWidget | None) -> str | None:
    # The import window opens the editor without the plan's root; it holds the run.
    plan = getattr(getattr(parent, "run", None), "plan", None)
    return getattr(plan, "source", None)


def _problem_text(record: ImportRecord) -> str:
    where = f" ({record.problem_field})" if record.problem_field else ""
    return f"{record.verdict.capitalize()}{where}: {record.reason or 'no reason given'}"


def _where(record: ImportRecord) -> str:
    return f" — the problem: {record.value}" if isinstance(record.value, str) else ""


# check(record, done, failed): checks the record again, then calls done(record) or
# failed(why) (later, from a job, or at once); what it returns (the job) is not used.
Check = Callable[[ImportRecord, Callable[[ImportRecord], None], Callable[[str], None]], object]


class RecordEditor(QDialog):
    """Edit `record` in place; `check` re-validates it (see `Check`)."""

    # Apply has run: True when the record now passes (the editor then closes), False when it
    # stays open saying why.
    applied = Signal(bool)

    def __init__(
        self,
        record: ImportRecord,
        check: Check,
        parent: QWidget | None = None,
        source_root: str | Path | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Fix {record.source}")
        self.resize(720, 560)
        self.record = record
        self._check = check
        self.problem = QLabel(_problem_text(record))
        self.problem.setObjectName("problem_label")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(f"color: {colours.REFUSED};")
        text = str(record.fields.get("content") or "")
        raw = None if text else raw_source(record, source_root or _plan_root(parent))
        # Nothing was read as text: show the source as written, start from its body.
        self.raw = QPlainTextEdit(raw or "")
        self.raw.setObjectName("raw_source")
        self.raw.setReadOnly(True)
        self.raw_label = QLabel(f"As written in {record.source}" + _where(record))
        self.content = QPlainTextEdit(text_to_start_from(raw) if raw else text)
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
        if raw:
            layout.addWidget(self.raw_label)
            layout.addWidget(self.raw, 2)
        layout.addWidget(QLabel("Text"))
        layout.addWidget(self.content, 3)
        layout.addWidget(QLabel("Other fields (JSON object)"))
        layout.addWidget(self.fields, 2)
        layout.addWidget(buttons)

    def note_alike(self, others: int) -> None:
        """Say that Apply fixes `others` more records refused for the same reason."""
        self.apply_button.setText(f"Apply to this and {others} like it")
        self.problem.setText(
            self.problem.text() + f"\n\nApply fixes this record, then the {others} others "
            "refused for the same reason the same way: your changes to the other fields, "
            "and each one's own text where none was read."
        )

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

    def apply(self) -> None:
        """Write the edits into the record and have it checked; `applied` says how it went."""
        fields = self._edited_fields()
        if fields is None:
            self.applied.emit(False)
            return
        self.record.fields = fields
        self.apply_button.setEnabled(False)
        self.problem.setText("Checking the record again…")
        self._check(self.record, self._checked, self._not_checked)

    def _checked(self, checked: ImportRecord) -> None:
        self.apply_button.setEnabled(True)
        if checked.verdict in EDITABLE_VERDICTS:
            self.problem.setText(_problem_text(checked))
            self.applied.emit(False)
            return
        self.accept()
        self.applied.emit(True)

    def _not_checked(self, why: str) -> None:
        self.apply_button.setEnabled(True)
        self.problem.setText(f"Could not check the record: {why}")
        self.applied.emit(False)
