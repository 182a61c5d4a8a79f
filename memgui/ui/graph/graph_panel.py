"""The graph view's side panel: its filters, and the legend of what colour, size and marks mean."""

from __future__ import annotations

from PySide6.QtCore import QDate, QDateTime, QRectF, QSize, Qt, QTime, Signal
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import (
    QCheckBox,
    QDateEdit,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from memgui.core.graph_view import PRUNE_THRESHOLD
from memgui.ui.graph import encodings
from memgui.ui.graph.encodings import LegendEntry
from memgui.ui.graph.graph_filters import GraphFilter
from memgui.ui.theme import colours


class CheckList(QListWidget):
    """Values to show, each with a box; new values arrive checked, choices are kept."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self.setMaximumHeight(110)

    def set_values(self, values: list[str]) -> None:
        unchecked = self.unchecked()
        self.blockSignals(True)
        self.clear()
        for value in values:
            item = QListWidgetItem(value)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            state = Qt.CheckState.Unchecked if value in unchecked else Qt.CheckState.Checked
            item.setCheckState(state)
            self.addItem(item)
        self.blockSignals(False)

    def unchecked(self) -> set[str]:
        return {
            self.item(r).text()
            for r in range(self.count())
            if self.item(r).checkState() != Qt.CheckState.Checked
        }

    def chosen(self) -> frozenset[str] | None:
        """The checked values, or None when all are (no filter)."""
        if not self.unchecked():
            return None
        return frozenset(
            self.item(r).text()
            for r in range(self.count())
            if self.item(r).checkState() == Qt.CheckState.Checked
        )


class DateRange(QWidget):
    def __init__(self, label: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.check = QCheckBox(label)
        self.start, self.end = QDateEdit(), QDateEdit()
        today = QDate.currentDate()
        for edit, date in ((self.start, today.addYears(-1)), (self.end, today)):
            edit.setCalendarPopup(True)
            edit.setDate(date)
            edit.setEnabled(False)
        self.check.toggled.connect(self.start.setEnabled)
        self.check.toggled.connect(self.end.setEnabled)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.check)
        row = QHBoxLayout()
        row.addWidget(self.start)
        row.addWidget(self.end)
        column.addLayout(row)

    def bounds(self) -> tuple[int | None, int | None]:
        if not self.check.isChecked():
            return None, None
        start = QDateTime(self.start.date(), QTime(0, 0)).toMSecsSinceEpoch()
        end = QDateTime(self.end.date(), QTime(23, 59, 59, 999)).toMSecsSinceEpoch()
        return start, end


class FilterPanel(QWidget):
    filter_changed = Signal(object)  # GraphFilter

    def __init__(self, hub_degree: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hub_degree = hub_degree
        self.types = CheckList("graph_types")
        self.scopes = CheckList("graph_scopes")
        self.kinds = CheckList("graph_kinds")
        self.tag = QLineEdit()
        self.tag.setPlaceholderText("exact tag")
        self.min_strength, self.max_strength = QDoubleSpinBox(), QDoubleSpinBox()
        for box, value in ((self.min_strength, 0.0), (self.max_strength, 1.0)):
            box.setRange(0.0, 1.0)
            box.setSingleStep(0.05)
            box.setValue(value)
        self.created = DateRange("Created")
        self.accessed = DateRange("Accessed")
        self.hide_hubs = QSpinBox()
        self.hide_hubs.setRange(0, 100)
        self.hide_hubs.setToolTip(f"Hide this many of the busiest hubs (above {hub_degree} links)")
        form = QFormLayout(self)
        form.addRow("Types", self.types)
        form.addRow("Scopes", self.scopes)
        form.addRow("Edges", self.kinds)
        form.addRow("Tag", self.tag)
        strength = QHBoxLayout()
        strength.addWidget(self.min_strength)
        strength.addWidget(self.max_strength)
        form.addRow("Strength", strength)
        form.addRow(self.created)
        form.addRow(self.accessed)
        form.addRow("Hide top hubs", self.hide_hubs)
        for checks in (self.types, self.scopes, self.kinds):
            checks.itemChanged.connect(self._emit)
        self.tag.textChanged.connect(self._emit)
        for spin in (self.min_strength, self.max_strength):
            spin.valueChanged.connect(self._emit)
        self.hide_hubs.valueChanged.connect(self._emit)
        for dates in (self.created, self.accessed):
            dates.check.toggled.connect(self._emit)
            dates.start.dateChanged.connect(self._emit)
            dates.end.dateChanged.connect(self._emit)

    def set_choices(self, types: list[str], scopes: list[str], kinds: list[str]) -> None:
        self.types.set_values(types)
        self.scopes.set_values(scopes)
        self.kinds.set_values(kinds)

    def current(self) -> GraphFilter:
        created, accessed = self.created.bounds(), self.accessed.bounds()
        return GraphFilter(
            types=self.types.chosen(),
            scopes=self.scopes.chosen(),
            tag=self.tag.text().strip(),
            hidden_kinds=frozenset(self.kinds.unchecked()),
            min_strength=self.min_strength.value(),
            max_strength=self.max_strength.value(),
            created_from=created[0],
            created_to=created[1],
            accessed_from=accessed[0],
            accessed_to=accessed[1],
            hide_top_hubs=self.hide_hubs.value(),
            hub_degree=self.hub_degree,
        )

    def _emit(self, *_args: object) -> None:
        self.filter_changed.emit(self.current())


class Legend(QWidget):
    """Colours of the values shown, and what size, opacity and marks say."""

    ROW = 18

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graph_legend")
        self.entries: list[LegendEntry] = []
        self.by = "type"

    def set_entries(self, entries: list[LegendEntry], by: str) -> None:
        self.entries, self.by = entries, by
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(220, self.ROW * (len(self.entries) + 7) + 8)

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        text = self.palette().text().color()
        y = 4.0
        painter.setPen(text)
        painter.drawText(QRectF(4, y, 220, self.ROW), f"Colour: {self.by}")
        y += self.ROW
        for entry in self.entries:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(entry.colour)
            painter.drawEllipse(QRectF(8, y + 4, 10, 10))
            painter.setPen(text)
            painter.drawText(QRectF(26, y, 200, self.ROW), entry.text)
            y += self.ROW
        notes = (
            ("size", "size: how often it was recalled"),
            ("alpha", "faint: decayed strength"),
            ("dash", f"dashed: strength < {PRUNE_THRESHOLD:g}"),
            ("strike", "struck: superseded"),
            ("hub", "dark badge: a hub and its links"),
        )
        for mark, words in notes:
            self._mark(painter, mark, y)
            painter.setPen(text)
            painter.drawText(QRectF(26, y, 200, self.ROW), words)
            y += self.ROW
        painter.end()

    def _mark(self, painter: QPainter, mark: str, y: float) -> None:
        grey = QColor(colours.GRAPH_PALETTE[0])
        middle = y + self.ROW / 2
        if mark == "size":
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(grey)
            painter.drawEllipse(QRectF(6, middle - 3, 6, 6))
            painter.drawEllipse(QRectF(12, middle - 5, 10, 10))
        elif mark == "alpha":
            faint = QColor(grey)
            faint.setAlphaF(encodings.alpha_of(0))
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(faint)
            painter.drawEllipse(QRectF(8, middle - 5, 10, 10))
        elif mark == "dash":
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QPen(QColor(colours.GRAPH_HUB), 1.2, Qt.PenStyle.DashLine))
            painter.drawEllipse(QRectF(7, middle - 6, 12, 12))
        elif mark == "strike":
            painter.setPen(QPen(QColor(colours.GRAPH_MARK), 2.0))
            painter.drawLine(7, int(middle + 5), 19, int(middle - 5))
        else:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(colours.GRAPH_HUB))
            painter.drawRoundedRect(QRectF(4, middle - 6, 18, 12), 6, 6)
