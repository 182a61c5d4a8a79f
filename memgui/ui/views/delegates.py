"""Painting of the trace table: a strength bar, and search words highlighted in content."""

from __future__ import annotations

import html
import re

from PySide6.QtCore import QModelIndex, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from memgui.ui.models.trace_columns import TraceRole

_FTS_OPERATORS = {"AND", "OR", "NOT", "NEAR"}
_WORD = re.compile(r"[^\s\"'()*:^+{}\[\],]+")


def query_terms(query: str) -> list[str]:
    """The words of a search query worth highlighting (FTS5 operators and syntax dropped)."""
    words = [w for w in _WORD.findall(query) if w not in _FTS_OPERATORS]
    words = [w.split(":", 1)[-1] for w in words]
    return sorted({w for w in words if w}, key=len, reverse=True)


def highlight_html(text: str, terms: list[str], color: str = "#ffe08a") -> str:
    """`text` as HTML with every occurrence of a term (case-insensitive) highlighted."""
    if not terms:
        return html.escape(text)
    pattern = re.compile("|".join(re.escape(t) for t in terms), re.IGNORECASE)
    parts: list[str] = []
    last = 0
    for match in pattern.finditer(text):
        parts.append(html.escape(text[last : match.start()]))
        parts.append(
            f'<span style="background-color:{color}; color:#000000;">'
            f"{html.escape(match.group(0))}</span>"
        )
        last = match.end()
    parts.append(html.escape(text[last:]))
    return "".join(parts)


class StrengthDelegate(QStyledItemDelegate):
    """Paints the current strength (0–1) as a small bar with the number beside it."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        value = index.data(TraceRole.STRENGTH)
        if value is None:
            super().paint(painter, option, index)
            return
        style = option.widget.style() if option.widget else QApplication.style()
        style.drawPrimitive(
            QStyle.PrimitiveElement.PE_PanelItemViewItem, option, painter, option.widget
        )
        rect = option.rect.adjusted(4, 0, -4, 0)
        bar_width = max(10, rect.width() - 34)
        bar = QRect(rect.left(), rect.center().y() - 3, bar_width, 7)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(option.palette.color(QPalette.ColorRole.Mid))
        painter.drawRoundedRect(QRectF(bar), 3, 3)
        filled = QRectF(
            bar.left(), bar.top(), bar.width() * max(0.0, min(1.0, value)), bar.height()
        )
        painter.setBrush(_strength_color(value))
        painter.drawRoundedRect(filled, 3, 3)
        selected = option.state & QStyle.StateFlag.State_Selected
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        painter.setPen(option.palette.color(role))
        text_rect = QRect(
            bar.right() + 4, rect.top(), rect.right() - bar.right() - 4, rect.height()
        )
        painter.drawText(
            text_rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, f"{value:.2f}"
        )
        painter.restore()


def _strength_color(value: float) -> QColor:
    if value >= 0.6:
        return QColor("#3c9d5d")
    if value >= 0.3:
        return QColor("#d19a2a")
    return QColor("#c0504d")


class HighlightDelegate(QStyledItemDelegate):
    """Shows the content column with the current search words highlighted."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.terms: list[str] = []

    def set_query(self, query: str) -> None:
        self.terms = query_terms(query)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        if not self.terms:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text = opt.text
        opt.text = ""
        style = opt.widget.style() if opt.widget else QApplication.style()
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
