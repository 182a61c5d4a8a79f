"""Small read-only tables of the detail pane: links, graph neighbours, history.

Each holds a short list the core returned for one trace (a few dozen rows at most), so
they keep it in memory; the trace table is the one that pages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import IntEnum
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt

from memgui.core.model import JournalEntry, Neighbour, RelatedSummary
from memgui.ui.models import Index
from memgui.ui.models.trace_columns import format_ms

Row = TypeVar("Row")


class DetailRole(IntEnum):
    ITEM = Qt.ItemDataRole.UserRole + 1  # the core's value object of the row
    ITEM_ID = Qt.ItemDataRole.UserRole + 2  # the id a double-click opens


def header_text(
    headers: Sequence[str], section: int, orientation: Qt.Orientation, role: int
) -> str | None:
    """A model's column header: `headers[section]`, for the display role of the top header."""
    if (
        role == Qt.ItemDataRole.DisplayRole
        and orientation == Qt.Orientation.Horizontal
        and 0 <= section < len(headers)
    ):
        return headers[section]
    return None


class ListTableModel(QAbstractTableModel, Generic[Row]):
    """A table over a Python list; `COLUMNS` maps headers to cell formatters."""

    COLUMNS: Sequence[tuple[str, Callable[[Any], str]]] = ()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._items: list[Row] = []

    def set_items(self, items: Sequence[Row]) -> None:
        self.beginResetModel()
        self._items = list(items)
        self.endResetModel()

    def items(self) -> list[Row]:
        return list(self._items)

    def item_at(self, row: int) -> Row | None:
        return self._items[row] if 0 <= row < len(self._items) else None

    def item_id(self, item: Row) -> str | None:
        return None

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._items)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._items):
            return None
        item = self._items[index.row()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return self.COLUMNS[index.column()][1](item)
        if role == DetailRole.ITEM:
            return item
        if role == DetailRole.ITEM_ID:
            return self.item_id(item)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        return header_text([c[0] for c in self.COLUMNS], section, orientation, role)

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


class LinksModel(ListTableModel[RelatedSummary]):
    COLUMNS = (
        ("Kind", lambda r: r.kind),
        ("Direction", lambda r: "→ to" if r.direction == "out" else "← from"),
        ("Linked", lambda r: format_ms(r.created_at)),
        ("Other memory", lambda r: r.label),
    )

    def item_id(self, item: RelatedSummary) -> str:
        return item.id


class NeighboursModel(ListTableModel[Neighbour]):
    COLUMNS = (
        ("Hop", lambda n: str(n.hop)),
        ("Node type", lambda n: n.node_type),
        ("Edge type", lambda n: n.edge_type),
        ("Label", lambda n: n.label),
    )

    def item_id(self, item: Neighbour) -> str:
        return item.node_id


def named_ids(entries: Sequence[JournalEntry]) -> set[str]:
    """The other traces journal rows name (a link's ends, what a merge absorbed)."""
    found: set[str] = set()
    for entry in entries:
        if entry.op in ("link", "unlink"):
            link = entry.after or entry.before or {}
            found.update(str(link.get(end, "")) for end in ("from_id", "to_id"))
        elif entry.op == "merge":
            merged = ((entry.after or {}).get("metadata") or {}).get("merged_from") or []
            found.update(str(i) for i in merged if isinstance(i, str))
    found.discard("")
    return found


def describe_change(entry: JournalEntry, names: dict[str, str] | None = None) -> str:
    """What a journal row changed, in a few words (fields that differ, or the operation);
    another trace is named by `names` (its title or the start of its text) when known."""
    names = names or {}
    if entry.op in ("link", "unlink"):
        link = entry.after or entry.before or {}
        ends = [str(link.get(end, "")) for end in ("from_id", "to_id")]
        shown = [f"“{names[e]}”" if e in names else e for e in ends]
        return f"{entry.op} {link.get('kind', '')} {shown[0]} → {shown[1]}"
    if entry.before is None:
        return "created" if entry.op == "add" else f"{entry.op}: created"
    if entry.after is None:
        return f"{entry.op}: removed for good"
    ignored = {"version", "updated_at", "metadata"}
    fields = sorted(
        key
        for key in set(entry.before) | set(entry.after)
        if key not in ignored and entry.before.get(key) != entry.after.get(key)
    )
    said = f"{entry.op}: {', '.join(fields)}" if fields else entry.op
    merged = (entry.after.get("metadata") or {}).get("merged_from") if entry.op == "merge" else None
    if isinstance(merged, list):
        others = [names.get(i, i) for i in merged if isinstance(i, str) and i != entry.trace_id]
        if others:
            said += " (absorbed " + ", ".join(f"“{name}”" for name in others) + ")"
    return said


class HistoryModel(ListTableModel[JournalEntry]):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.names: dict[str, str] = {}  # other traces' ids -> what names them
        self.COLUMNS = (
            ("When", lambda e: format_ms(e.at)),
            ("Actor", lambda e: e.actor),
            ("Version", lambda e: str((e.after or {}).get("version", ""))),
            ("What changed", lambda e: describe_change(e, self.names)),
        )

    def set_entries(self, entries: Sequence[JournalEntry], names: dict[str, str]) -> None:
        self.names = dict(names)
        self.set_items(entries)

    def item_id(self, item: JournalEntry) -> str:
        return item.trace_id
