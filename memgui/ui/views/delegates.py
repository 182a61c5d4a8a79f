"""Painting of the trace table: search words highlighted in content (the strength bar is
`strength_bar.py`)."""

from __future__ import annotations

import html
import re

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from memgui.ui.models import Index
from memgui.ui.theme import colours

_FTS_OPERATORS = {"AND", "OR", "NOT", "NEAR"}
_WORD = re.compile(r"[^\s\"'()*:^+{}\[\],]+")


def query_terms(query: str) -> list[str]:
    """The words of a search query worth highlighting (FTS5 operators and syntax dropped)."""
    words = [w for w in _WORD.findall(query) if w not in _FTS_OPERATORS]
    words = [w.split(":", 1)[-1] for w in words]
    return sorted({w for w in words if w}, key=len, reverse=True)


def highlight_html(text: str, terms: list[str], color: str = colours.HIGHLIGHT) -> str:
    """`text` as HTML with every occurrence of a term (case-insensitive) highlighted."""
    if not terms:
        return html.escape(text)
    pattern = re.compile("|".join(re.escape(t) for t in terms), re.IGNORECASE)
    parts: list[str] = []
    last = 0
    for match in pattern.finditer(text):
        parts.append(html.escape(text[last : match.start()]))
        parts.append(
            f'<span style="background-color:{color}; color:{colours.BLACK};">'
            f"{html.escape(match.group(0))}</span>"
        )
        last = match.end()
    parts.append(html.escape(text[last:]))
    return "".join(parts)


class HighlightDelegate(QStyledItemDelegate):
    """Shows the content column with the current search words highlighted."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.terms: list[str] = []

    def set_query(self, query: str) -> None:
        self.terms = query_terms(query)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        if not self.terms:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text = opt.text
        opt.text = ""
        style = opt.widget.style() if opt.widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        text_rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, opt.widget)
        text = opt.fontMetrics.elidedText(text, Qt.TextElideMode.ElideRight, text_rect.width() - 4)
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultFont(opt.font)
        selected = opt.state & QStyle.StateFlag.State_Selected
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        color = opt.palette.color(role).name()
        doc.setHtml(
            f'<span style="color:{color}; white-space:pre;">'
            f"{highlight_html(text, self.terms)}</span>"
        )
        painter.save()
        painter.setClipRect(text_rect)
        top = text_rect.top() + (text_rect.height() - doc.size().height()) / 2
        painter.translate(text_rect.left() + 2, top)
        doc.drawContents(painter)
        painter.restore()
