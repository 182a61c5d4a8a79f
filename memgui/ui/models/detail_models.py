"""Small read-only tables of the detail pane: links, graph neighbours, history.

Each holds a short list the core returned for one trace (a few dozen rows at most), so
they keep it in memory; the trace table is the one that pages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import IntEnum
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt

from memgui.core.model import JournalEntry, Neighbour, RelatedSummary, Trace
from memgui.ui.models import Index
from memgui.ui.models.history_text import change_details, describe_change
from memgui.ui.models.memory_names import name_of
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


SYMMETRIC_KINDS = ("relates_to",)


def link_direction(link: RelatedSummary) -> str:
    """How the link reads from the shown memory: a symmetric kind goes both ways."""
    if link.stored_kind in SYMMETRIC_KINDS:
        return "↔ both ways"
    return "→ to" if link.direction == "out" else "← from"


class LinksModel(ListTableModel[RelatedSummary]):
    COLUMNS = (
        ("Kind", lambda r: r.kind),
        ("Direction", lambda r: link_direction(r)),
        ("Linked", lambda r: format_ms(r.created_at)),
        ("Other memory", lambda r: r.label),
    )

    def item_id(self, item: RelatedSummary) -> str:
        return item.id


class NeighboursModel(ListTableModel[Neighbour]):
    """Knowledge-graph neighbours: memories by their name and type, concepts by label, and
    for a node two hops away the concept it was reached through."""

    COLUMNS = (
        ("Hop", lambda n: str(n.hop)),
        ("Kind", lambda n: n.node_type),  # replaced by `kind`, which knows the memories
        ("Name", lambda n: n.label),  # replaced by `name`
        ("Through", lambda n: f"{n.edge_type} {n.via}".strip()),
    )

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.memories: dict[str, Trace] = {}  # the memories the nodes stand for, by id

    def set_neighbours(self, items: Sequence[Neighbour], memories: dict[str, Trace]) -> None:
        self.memories = memories
        self.set_items(items)

    def memory_of(self, item: Neighbour) -> Trace | None:
        return self.memories.get(item.trace_id) if item.trace_id else None

    def kind(self, item: Neighbour) -> str:
        memory = self.memory_of(item)
        return f"memory · {memory.type}" if memory is not None else item.node_type

    def name(self, item: Neighbour) -> str:
        memory = self.memory_of(item)
        return name_of(memory) if memory is not None else item.label

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        shown = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)
        if index.isValid() and index.column() in (1, 2) and role in shown:
            item = self.item_at(index.row())
            if item is not None:
                return self.kind(item) if index.column() == 1 else self.name(item)
        return super().data(index, role)

    def item_id(self, item: Neighbour) -> str | None:
        """The memory a double-click opens (a concept node opens none)."""
        return item.trace_id if self.memory_of(item) is not None else None


class HistoryModel(ListTableModel[JournalEntry]):
    """The journal rows of one memory; what each changed names the other memories (the
    other end of a link, what a merge took in), looked up when the rows are set."""

    COLUMNS = (
        ("When", lambda e: format_ms(e.at)),
        ("Actor", lambda e: e.actor),
        ("Version", lambda e: str((e.after or {}).get("version", ""))),
        ("What changed", lambda e: ""),  # by `describe`, which knows the names
    )

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.names: dict[str, str] = {}
        self.absorbed: dict[str, list[str]] = {}
        self.shown = ""  # the memory whose history this is

    def set_history(
        self,
        shown: str,
        entries: Sequence[JournalEntry],
        names: dict[str, str],
        absorbed: dict[str, list[str]],
    ) -> None:
        self.shown, self.names, self.absorbed = shown, names, absorbed
        self.set_items(entries)

    def describe(self, entry: JournalEntry) -> str:
        return describe_change(entry, self.names, self.absorbed, self.shown)

    def details(self, entry: JournalEntry) -> str:
        return change_details(entry, self.names, self.absorbed, self.shown)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if index.isValid() and index.column() == len(self.COLUMNS) - 1:
            entry = self.item_at(index.row())
            if entry is not None and role in (
                Qt.ItemDataRole.DisplayRole,
                Qt.ItemDataRole.ToolTipRole,
            ):
                return self.describe(entry)
        return super().data(index, role)

    def item_id(self, item: JournalEntry) -> str:
        return item.trace_id
