"""Theirs and mine side by side, when a save finds the trace changed elsewhere.

Nothing is overwritten silently: the person keeps mine (saved on top of theirs), takes
theirs (the edit is dropped), or goes back to edit with theirs as the new base.
"""

from __future__ import annotations

import difflib
import html
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from memgui.core.model import Trace
from memgui.ui.theme import colours

COMPARED = ("type", "category", "scope", "scope_id", "tags", "ttl")


def _line_diff_html(mine: str, theirs: str) -> tuple[str, str]:
    """Both texts as HTML with the lines the other side lacks highlighted."""
    a, b = theirs.splitlines(), mine.splitlines()
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    theirs_out: list[str] = []
    mine_out: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for line in a[i1:i2]:
            theirs_out.append(_line(line, tag != "equal", colours.THEIRS))
        for line in b[j1:j2]:
            mine_out.append(_line(line, tag != "equal", colours.MINE))
    return "".join(theirs_out), "".join(mine_out)


def _line(text: str, changed: bool, color: str) -> str:
    body = html.escape(text) or "&nbsp;"
    if changed:
        return f'<div style="background-color:{color}; color:{colours.BLACK};">{body}</div>'
    return f"<div>{body}</div>"


class ConflictView(QWidget):
    keep_mine = Signal()
    take_theirs = Signal()
    edit_again = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("conflict_view")
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.title.setStyleSheet("font-weight: bold;")
        self.theirs_text = QTextBrowser()
        self.theirs_text.setAccessibleName("Their content")
        self.mine_text = QTextBrowser()
        self.mine_text.setAccessibleName("My content")
        self.fields = QTableWidget(0, 3)
        self.fields.setAccessibleName("Field differences")
        self.fields.setHorizontalHeaderLabels(["Field", "Theirs", "Mine"])
        self.fields.horizontalHeader().setStretchLastSection(True)
        self.fields.verticalHeader().hide()
        self.fields.setMaximumHeight(150)
        self.keep_button = QPushButton("Kee&p mine")
        self.keep_button.setToolTip("Save my version on top of theirs (theirs stays in history)")
        self.theirs_button = QPushButton("Take &theirs")
        self.theirs_button.setToolTip("Drop my edit and show their version")
        self.edit_button = QPushButton("Edit a&gain")
        self.edit_button.setToolTip("Go back to my edit, now based on their version")
        self.keep_button.clicked.connect(self.keep_mine)
        self.theirs_button.clicked.connect(self.take_theirs)
        self.edit_button.clicked.connect(self.edit_again)

        columns = QHBoxLayout()
        for caption, box in (("Theirs", self.theirs_text), ("Mine", self.mine_text)):
            column = QVBoxLayout()
            label = QLabel(f"<b>{caption}</b>")
            label.setBuddy(box)
            column.addWidget(label)
            column.addWidget(box)
            columns.addLayout(column)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.keep_button, self.theirs_button, self.edit_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addLayout(columns, 1)
        layout.addWidget(self.fields)
        layout.addLayout(buttons)

    def show_conflict(self, theirs: Trace, mine: dict[str, Any], actor: str = "") -> None:
        """`mine` holds the editor's values (content, tags, type, … and ttl as shown)."""
        who = f" by {actor}" if actor else ""
        self.title.setText(
            f"This memory changed elsewhere{who} (now version {theirs.version}) while you "
            "edited it. Nothing was saved. Choose what to keep."
        )
        theirs_html, mine_html = _line_diff_html(mine.get("content", ""), theirs.content)
        self.theirs_text.setHtml(theirs_html)
        self.mine_text.setHtml(mine_html)
        theirs_values = {
            "type": theirs.type,
            "category": theirs.category or "",
            "scope": theirs.scope,
            "scope_id": theirs.scope_id,
            "tags": ", ".join(theirs.tags),
            "ttl": mine.get("theirs_ttl", ""),
        }
        rows = []
        for name in COMPARED:
            mine_value = mine.get(name, "")
            if isinstance(mine_value, list | tuple):
                mine_value = ", ".join(mine_value)
            mine_value = "" if mine_value is None else str(mine_value)
            if mine_value != theirs_values[name]:
                rows.append((name, theirs_values[name], mine_value))
        self.fields.setRowCount(len(rows))
        for row, values in enumerate(rows):
            for column, value in enumerate(values):
                self.fields.setItem(row, column, QTableWidgetItem(value))
        self.fields.setVisible(bool(rows))
        self.keep_button.setFocus()
