"""The panel beside the plan: the chosen candidate in full, its survivor and its text.

A merge cluster's survivor is picked here ("Keep") and its merged text edited; a derived
insight's text too. An edit changes the plan (`MergeCluster.set_content`, `choose_survivor`,
`DeriveCandidate.set_insight`); empty text is refused under the field and `problem` says so
until it is fixed, so the dialog cannot apply it.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from memgui.core.consolidate import DeriveCandidate, MergeCluster
from memgui.core.errors import InvalidArgument
from memgui.ui.theme import colours


class CandidateDetail(QWidget):
    """Shows one candidate; `edited` after its survivor or text changed."""

    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.candidate: Any = None
        self.problem = ""
        self.title = QLabel("Pick a change to see it in full.")
        self.title.setWordWrap(True)
        self.why = QLabel()
        self.why.setWordWrap(True)
        self.why.setObjectName("candidate_why")
        self.survivor = QComboBox()
        self.survivor.setObjectName("merge_survivor")
        self.survivor.setAccessibleName("Memory to keep")
        self.survivor.setToolTip("The memory the others are merged into (it keeps its id)")
        self.text = QPlainTextEdit()
        self.text.setObjectName("candidate_text")
        self.text.setAccessibleName("Text after the change")
        self.error = QLabel()
        self.error.setStyleSheet(f"color: {colours.ERROR};")
        self.error.setWordWrap(True)
        self.error.hide()
        form = QFormLayout()
        form.addRow("&Keep:", self.survivor)
        self.keep_label = form.labelForField(self.survivor)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.why)
        layout.addLayout(form)
        self.text_label = QLabel("&Text:")
        self.text_label.setBuddy(self.text)
        layout.addWidget(self.text_label)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.error)
        self.survivor.currentIndexChanged.connect(self._on_survivor)
        self.text.textChanged.connect(self._on_text)
        self._showing = False
        self.show_candidate(None, editable=False)

    def show_candidate(self, candidate: Any, editable: bool, member_id: str | None = None) -> None:
        self._showing = True
        try:
            self.candidate = candidate
            self.problem = ""
            self.error.hide()
            merge = isinstance(candidate, MergeCluster)
            self.survivor.clear()
            for widget in (self.survivor, self.keep_label):
                widget.setVisible(merge)
            if candidate is None:
                self.title.setText("Pick a change to see it in full.")
                self.why.setText("")
                self.text.setPlainText("")
                self.text.setReadOnly(True)
                return
            self.why.setText(str(candidate.why))
            if merge:
                self.title.setText(f"Merge {len(candidate.merging)} memories into one")
                for m in candidate.members:
                    where = f"{m.scope}:{m.scope_id}" if m.scope_id else m.scope
                    tags = f" · tags {', '.join(m.tags)}" if m.tags else ""
                    self.survivor.addItem(
                        f"{m.trace_id} · {where} · {m.retrieval_count} retrievals{tags}",
                        m.trace_id,
                    )
                self.survivor.setCurrentIndex(self.survivor.findData(candidate.survivor_id))
                if member_id is not None and member_id != candidate.survivor_id:
                    member = candidate.member(member_id)
                    self.why.setText(f"{member.trace_id}: {member.evidence}\n{candidate.why}")
                self.text.setPlainText(candidate.content)
            elif isinstance(candidate, DeriveCandidate):
                self.title.setText(f"A new insight from {len(candidate.member_ids)} memories")
                self.text.setPlainText(candidate.insight)
            else:
                self.title.setText(getattr(candidate, "trace_id", "") or str(candidate.key))
                self.text.setPlainText(getattr(candidate, "content", "") or "")
            writable = editable and isinstance(candidate, MergeCluster | DeriveCandidate)
            self.text.setReadOnly(not writable)
            self.survivor.setEnabled(editable)
        finally:
            self._showing = False

    def _on_survivor(self, _index: int) -> None:
        cluster = self.candidate
        if self._showing or not isinstance(cluster, MergeCluster):
            return
        trace_id = self.survivor.currentData()
        if trace_id is None or trace_id == cluster.survivor_id:
            return
        cluster.choose_survivor(trace_id)
        self._showing = True
        try:
            self.text.setPlainText(cluster.content)
        finally:
            self._showing = False
        self.edited.emit()

    def _on_text(self) -> None:
        if self._showing or self.text.isReadOnly():
            return
        text = self.text.toPlainText()
        try:
            if isinstance(self.candidate, MergeCluster):
                self.candidate.set_content(text)
            elif isinstance(self.candidate, DeriveCandidate):
                self.candidate.set_insight(text)
        except InvalidArgument as error:
            self.problem = str(error)
            self.error.setText(
                f"{error.problem[0].upper()}{error.problem[1:]}: the text is kept as it was."
            )
            self.error.show()
        else:
            self.problem = ""
            self.error.hide()
        self.edited.emit()
