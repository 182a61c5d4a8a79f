"""What the trace table shows in each cell: the roles a paint asks for, answered fast.

A paint asks each visible cell for several roles; every call from C++ into Python takes the
GIL, which a query job running Python in a worker holds in bursts. So `multiData` answers a
cell's roles in one call from one cache lookup, and `data()` sticks to int comparisons and
dict lookups. Mixed into `TraceTableModel`, which holds `_ids`, `_cache` and `trace_at`.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QByteArray,
    QModelRoleData,
    QModelRoleDataSpan,
    Qt,
)
from PySide6.QtGui import QColor, QFont

from memgui.core.model import Trace
from memgui.ui.models import Index
from memgui.ui.models.trace_columns import (
    COLUMNS,
    CONTENT_COLUMN,
    NUMERIC_COLUMNS,
    STRENGTH_COLUMN,
    TITLE_COLUMN,
    TraceRole,
)
from memgui.ui.views.strength_bar import strength_bar

GONE = object()  # cache marker: the id was in the list but the trace no longer exists


class TraceCells(QAbstractTableModel):
    """The cell-answering half of `TraceTableModel` (see the module's docstring)."""

    _ids: list[str]
    _cache: dict[str, Any]
    _why: dict[str, str]  # a cognitive search's "why this result", by id (tooltips)
    _snippets: dict[str, str]  # a search's line around the match, shown as the content

    def trace_at(self, row: int) -> Trace | None:
        """The trace of `row`, fetching its page on a miss (the model's)."""
        raise NotImplementedError

    def multiData(self, index: Index, roleDataSpan: QModelRoleDataSpan | QModelRoleData) -> None:
        """All the roles a delegate asks for one cell, in one call from C++.

        Each call from C++ into Python takes the GIL; while a query job runs Python in a
        worker, every take can wait for it. One call per cell instead of seven kept a
        paint under a 1M-id query job from stretching to 100–300 ms. The roles a paint asks
        for are answered here from one cache lookup (through `data()` they cost a fifth of
        the paint).
        """
        row, column = index.row(), index.column()
        if not 0 <= row < len(self._ids):
            return
        trace = self._cache.get(self._ids[row])
        if trace is None:
            trace = self.trace_at(row)
        if trace is GONE:
            trace = None
        value: Any
        for item in roleDataSpan:  # type: ignore[union-attr]  # a span iterates (not in the stubs)
            role = item.role()
            if role == _DISPLAY:
                if trace is not None:
                    value = self._display(trace, column)
                else:
                    value = "(removed)" if column == CONTENT_COLUMN else None
            elif role == _ALIGNMENT:
                value = _RIGHT if column in NUMERIC_COLUMNS else None
            elif role == _FOREGROUND:
                value = _GREY if trace is not None and trace.deleted else None
            elif role == _FONT:
                untitled = column == TITLE_COLUMN and trace is not None and trace.title is None
                value = _italic() if untitled else None
            elif role == _DECORATION:
                on_bar = trace is not None and column == STRENGTH_COLUMN
                value = strength_bar(trace.strength) if on_bar and trace is not None else None
            elif role in _ANSWERED_ROLES:
                value = self.data(index, role)
            else:
                continue  # never set: stays empty
            # A delegate reuses its span from cell to cell: an unanswered role is cleared,
            # or the last cell's value (a right alignment, a strength bar) would show here.
            if value is None:
                item.clearData()
            else:
                item.setData(value)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # The paint path: plain int comparisons and dict lookups only (no enum arithmetic).
        # A view asks ~7 roles per cell; the ones never answered leave first.
        role = int(role)
        if role not in _ANSWERED_ROLES:
            return None
        row = index.row()
        if row < 0 or row >= len(self._ids):
            return None
        if role == _DISPLAY:
            trace = self._cache.get(self._ids[row])
            if trace is None:
                trace = self.trace_at(row)
            if trace is GONE or trace is None:
                return "(removed)" if index.column() == CONTENT_COLUMN else None
            return self._display(trace, index.column())
        if role == _ALIGNMENT:
            return _RIGHT if index.column() in NUMERIC_COLUMNS else None
        if role == _TRACE_ID:
            return self._ids[row]
        if role == _DECORATION:  # the strength bar, drawn by Qt (no Python delegate)
            if index.column() != STRENGTH_COLUMN:
                return None
            trace = self.trace_at(row)
            return strength_bar(trace.strength) if trace is not None else None
        if role not in _ROLES_NEEDING_TRACE:
            return None
        trace = self.trace_at(row)
        if trace is None:
            return None
        if role == _FOREGROUND:
            return _GREY if trace.deleted else None
        if role == _FONT:
            return _italic() if index.column() == TITLE_COLUMN and trace.title is None else None
        if role == _STRENGTH:
            return trace.strength
        if role == _TRACE:
            return trace
        if role == _SORT_KEY:
            return COLUMNS[index.column()].sort_key(trace)
        return _tooltip(trace, index.column(), self._why)  # the tooltip role

    def _display(self, trace: Trace, column: int) -> str:
        if column == CONTENT_COLUMN and self._snippets:
            found = self._snippets.get(trace.id)
            if found is not None:
                return found
        return _DISPLAYS[column](trace)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section].header
        if role == Qt.ItemDataRole.ToolTipRole:
            return COLUMNS[section].tooltip
        return None

    # flags() is QAbstractTableModel's own (enabled, selectable, no children): a Python
    # override cost one more call per painted cell.

    def roleNames(self) -> dict[int, QByteArray]:
        names = super().roleNames()
        for role in TraceRole:
            names[int(role)] = QByteArray(role.name.lower().encode())
        return names


_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
_DECORATION = int(Qt.ItemDataRole.DecorationRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_FONT = int(Qt.ItemDataRole.FontRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_TRACE_ID = int(TraceRole.TRACE_ID)
_TRACE = int(TraceRole.TRACE)
_STRENGTH = int(TraceRole.STRENGTH)
_SORT_KEY = int(TraceRole.SORT_KEY)
_RIGHT = int(Qt.AlignmentFlag.AlignRight.value | Qt.AlignmentFlag.AlignVCenter.value)
_GREY = QColor(Qt.GlobalColor.gray)
_ITALIC: list[QFont] = []  # made on first use: a QFont wants the application first


def _italic() -> QFont:
    if not _ITALIC:
        font = QFont()
        font.setItalic(True)
        _ITALIC.append(font)
    return _ITALIC[0]


_DISPLAYS = tuple(column.display for column in COLUMNS)
_ROLES_NEEDING_TRACE = frozenset(
    {_DISPLAY, _TOOLTIP, _FOREGROUND, _FONT, _TRACE, _STRENGTH, _SORT_KEY}
)
CHANGED_ROLES = sorted(_ROLES_NEEDING_TRACE | {_DECORATION})
_ANSWERED_ROLES = _ROLES_NEEDING_TRACE | {_ALIGNMENT, _TRACE_ID, _DECORATION}


def _tooltip(trace: Trace, column: int, why: dict[str, str]) -> str | None:
    if column == TITLE_COLUMN:
        return trace.title or "No title: named by the start of its text"
    if column != CONTENT_COLUMN:
        return None
    text = trace.content
    text = text if len(text) <= 600 else text[:600] + "…"
    reason = why.get(trace.id)
    return f"{text}\n\nWhy this result: {reason}" if reason else text
