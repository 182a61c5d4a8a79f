"""The Agent activity tree: unreviewed changes grouped by actor, then by batch, newest first.

Top level: runs of consecutive batches by one actor ("mcp:claude-code · 3 batches"). Under
each, its batches; a batch of one change shows that change itself, a bigger one has its
changes as children, read a page at a time when it is expanded (`fetchMore`). Batches are
read a page at a time too, as the view scrolls: every read is a bounded core query
(`Brain.unreviewed_batches`, `Brain.batch_changes`), so a brain with a huge journal costs
what one screen costs. `refresh()` adds what arrived since, drops what someone marked
reviewed meanwhile (in this window or another) and re-reads what each shown change's memory
is like now.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from enum import IntEnum
from typing import Any, TypeVar

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from memgui.core.activity import ActivityBatch, ReviewMark
from memgui.core.brain import Brain
from memgui.core.model import JournalEntry
from memgui.ui.activity import activity_text as text
from memgui.ui.activity.activity_nodes import (
    STATE_COLOURS,
    BatchNode,
    ChangeNode,
    GroupNode,
    Node,
    cell_text,
    renumber,
)
from memgui.ui.models.detail_models import header_text

BATCH_PAGE = 50  # batches read per page
CHANGE_PAGE = 200  # changes of one batch read per page
NEWER_AT_ONCE = 200  # more new batches than this since the last look: read the list again

COLUMNS = ("When", "Who", "What", "Now")
WHEN, WHO, WHAT, NOW = range(4)
AnyIndex = QModelIndex | QPersistentModelIndex
N = TypeVar("N", bound=Node)


class ActivityRole(IntEnum):
    KIND = Qt.ItemDataRole.UserRole + 1  # "group", "batch" or "change"
    BATCH_ID = Qt.ItemDataRole.UserRole + 2
    ENTRY = Qt.ItemDataRole.UserRole + 3  # the JournalEntry of a change (a batch of one: its)
    TRACE_ID = Qt.ItemDataRole.UserRole + 4  # the memory a change is about, or None
    STATE = Qt.ItemDataRole.UserRole + 5  # what it is like now (core.activity's words)


class ActivityModel(QAbstractItemModel):
    def __init__(
        self,
        brain: Brain,
        exclude: Callable[[], Collection[str]] = frozenset,
        parent: QObject | None = None,
    ) -> None:
        """`exclude` names the batches this window wrote itself (never listed)."""
        super().__init__(parent)
        self._brain = brain
        self._exclude = exclude
        self._groups: list[GroupNode] = []
        self._nodes: dict[int, Node] = {}
        self._next_key = 1
        self._next_before: int | None = None
        self._mark = ReviewMark()
        self._labels: dict[str, str] = {}  # what names a linked memory, by id (link rows)
        self.reload()

    # --- reading ---------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the list again from the newest change."""
        self.beginResetModel()
        self._groups, self._nodes = [], {}
        self._mark = self._brain.review_mark()
        self._next_before = None
        self._append(self._read_batches(None))
        self.endResetModel()

    def _read_batches(self, before: int | None, after: int = 0) -> list[ActivityBatch]:
        page = self._brain.unreviewed_batches(
            before=before, limit=BATCH_PAGE, exclude=self._exclude(), after=after
        )
        if after == 0:
            self._next_before = page.next_before
        return page.batches

    def _key(self) -> int:
        key, self._next_key = self._next_key, self._next_key + 1
        return key

    def _keep(self, node: N) -> N:
        self._nodes[node.key] = node
        return node

    def _batch_node(self, group: GroupNode, batch: ActivityBatch) -> BatchNode:
        node = self._keep(BatchNode(self._key(), group, batch))
        if node.single:
            self._load_changes(node, limit=1)
            node.complete = True
        return node

    def _load_changes(
        self, node: BatchNode, limit: int = CHANGE_PAGE, notify: bool = False
    ) -> None:
        """The next page of a batch's changes (inserted as rows with `notify`)."""
        after = node.changes[-1].entry.id if node.changes else 0
        entries = self._brain.batch_changes(node.batch.batch_id, after_id=after, limit=limit)
        node.complete = len(entries) < limit
        if not entries:
            return
        states = self._read_about(entries)
        start = len(node.changes)
        if notify:
            self.beginInsertRows(self._index_of(node), start, start + len(entries) - 1)
        for entry in entries:
            state = states.get(entry.id, "")
            node.changes.append(self._keep(ChangeNode(self._key(), node, entry, state)))
        renumber(node.changes)
        if notify:
            self.endInsertRows()

    def _read_about(self, entries: list[JournalEntry]) -> dict[int, str]:
        """What each change's memory is like now, and the text of the memories links join."""
        ends = {
            e for entry in entries if entry.op in ("link", "unlink") for e in text.link_ends(entry)
        }
        wanted = [e for e in ends if e and e not in self._labels]
        if wanted:
            found = self._brain.get_many(wanted)
            self._labels.update((i, t.label) for i, t in found.items())
        return self._brain.change_states(entries)

    def _append(self, batches: Iterable[ActivityBatch], notify: bool = False) -> None:
        """Older batches, at the end (joining the last group when the actor goes on)."""
        for batch in batches:
            last = self._groups[-1] if self._groups else None
            if last is not None and last.actor == batch.actor:
                if notify:
                    row = len(last.batches)
                    self.beginInsertRows(self._index_of(last), row, row)
                last.batches.append(self._batch_node(last, batch))
                renumber(last.batches)
            else:
                if notify:
                    self.beginInsertRows(QModelIndex(), len(self._groups), len(self._groups))
                group = self._keep(GroupNode(self._key(), batch.actor))
                group.batches.append(self._batch_node(group, batch))
                self._groups.append(group)
                renumber(self._groups)
            if notify:
                self.endInsertRows()

    def _prepend(self, batches: list[ActivityBatch]) -> None:
        """Newer batches (newest first), at the top."""
        for batch in reversed(batches):
            first = self._groups[0] if self._groups else None
            if first is not None and first.actor == batch.actor:
                self.beginInsertRows(self._index_of(first), 0, 0)
                first.batches.insert(0, self._batch_node(first, batch))
                renumber(first.batches)
            else:
                self.beginInsertRows(QModelIndex(), 0, 0)
                group = self._keep(GroupNode(self._key(), batch.actor))
                group.batches.append(self._batch_node(group, batch))
                self._groups.insert(0, group)
                renumber(self._groups)
            self.endInsertRows()

    def refresh(self, touched: Collection[str] | None = None) -> None:
        """Show what changed since the last look, in place where it can; `touched` names the
        memories changed meanwhile (None: any), whose changes' Now is read again."""
        mark = self._brain.review_mark()
        if self._went_back(mark):
            self.reload()  # a review taken back: batches come back between the shown ones
            return
        self._mark = mark
        self._drop_reviewed()
        newest = self.newest_id()
        if newest:
            page = self._brain.unreviewed_batches(
                limit=NEWER_AT_ONCE, exclude=self._exclude(), after=newest
            )
            if page.next_before is not None:
                self.reload()
                return
            self._prepend(page.batches)
        else:
            self.reload()
            return
        self._restate(touched)

    def _went_back(self, mark: ReviewMark) -> bool:
        if mark.through < self._mark.through:
            return True
        return any(
            b not in mark.batches and span[1] > mark.through
            for b, span in self._mark.batches.items()
        )

    def _drop_reviewed(self) -> None:
        exclude = set(self._exclude())
        for group in list(self._groups):
            for node in list(group.batches):
                b = node.batch
                if self._mark.reviewed(b.batch_id, b.last_id) or b.batch_id in exclude:
                    self._remove(node)

    def _remove(self, node: BatchNode) -> None:
        group = node.group
        if len(group.batches) == 1:
            self.beginRemoveRows(QModelIndex(), group.row, group.row)
            self._groups.remove(group)
            renumber(self._groups)
            self._forget(group)
        else:
            self.beginRemoveRows(self._index_of(group), node.row, node.row)
            group.batches.remove(node)
            renumber(group.batches)
            self._forget_batch(node)
        self.endRemoveRows()
        # Two groups of one actor now side by side stay two: they are still two runs.

    def _forget(self, group: GroupNode) -> None:
        self._nodes.pop(group.key, None)
        for node in group.batches:
            self._forget_batch(node)

    def _forget_batch(self, node: BatchNode) -> None:
        self._nodes.pop(node.key, None)
        for change in node.changes:
            self._nodes.pop(change.key, None)

    def _restate(self, touched: Collection[str] | None) -> None:
        """Read again what each shown change of a `touched` memory is like now."""
        changes = [
            c
            for g in self._groups
            for b in g.batches
            for c in b.changes
            if touched is None or _about(c.entry) & set(touched)
        ]
        if not changes:
            return
        states = self._brain.change_states([c.entry for c in changes])
        for change in changes:
            state = states.get(change.entry.id, "")
            if state != change.state:
                change.state = state
                node = change.parent if change.parent.single else change
                index = self._index_of(node, NOW)
                self.dataChanged.emit(
                    index,
                    index,
                    [
                        Qt.ItemDataRole.DisplayRole,
                        Qt.ItemDataRole.ForegroundRole,
                        ActivityRole.STATE,
                    ],
                )

    # --- what the view asks ----------------------------------------------------------------

    def newest_id(self) -> int:
        """The last journal id of the newest batch shown (0: none shown)."""
        if not self._groups:
            return 0
        return self._groups[0].batches[0].batch.last_id

    def batch_count(self) -> int:
        return sum(len(g.batches) for g in self._groups)

    def shown_batches(self) -> list[ActivityBatch]:
        return [b.batch for g in self._groups for b in g.batches]

    def batch_ids_of(self, index: AnyIndex) -> list[str]:
        """The batches an index stands for: a group's all, a batch's or a change's own."""
        node = self._node(index)
        if isinstance(node, GroupNode):
            return [b.batch.batch_id for b in node.batches]
        if isinstance(node, BatchNode):
            return [node.batch.batch_id]
        if isinstance(node, ChangeNode):
            return [node.parent.batch.batch_id]
        return []

    def entry_of(self, index: AnyIndex) -> JournalEntry | None:
        """The change an index stands for (a batch of one change: that one)."""
        node = self._node(index)
        if isinstance(node, ChangeNode):
            return node.entry
        if isinstance(node, BatchNode) and node.single and node.changes:
            return node.changes[0].entry
        return None

    def state_of(self, index: AnyIndex) -> str:
        node = self._node(index)
        if isinstance(node, BatchNode) and node.single and node.changes:
            node = node.changes[0]
        return node.state if isinstance(node, ChangeNode) else ""

    def _node(self, index: AnyIndex) -> Node | None:
        if not index.isValid():
            return None
        return self._nodes.get(index.internalId())

    def _index_of(self, node: Node, column: int = 0) -> QModelIndex:
        return self.createIndex(node.row, column, node.key)

    # --- QAbstractItemModel ------------------------------------------------------------------

    def index(self, row: int, column: int, parent: AnyIndex = QModelIndex()) -> QModelIndex:
        if column < 0 or column >= len(COLUMNS) or row < 0:
            return QModelIndex()
        if not parent.isValid():
            children: list[Any] = self._groups
        else:
            node = self._node(parent)
            if parent.column() != 0:
                return QModelIndex()
            if isinstance(node, GroupNode):
                children = node.batches
            elif isinstance(node, BatchNode) and not node.single:
                children = node.changes
            else:
                return QModelIndex()
        if row >= len(children):
            return QModelIndex()
        return self.createIndex(row, column, children[row].key)

    def parent(self, index: AnyIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        node = self._node(index)
        if isinstance(node, BatchNode):
            return self._index_of(node.group)
        if isinstance(node, ChangeNode):
            return self._index_of(node.parent)
        return QModelIndex()

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        if not parent.isValid():
            return len(self._groups)
        if parent.column() != 0:
            return 0
        node = self._node(parent)
        if isinstance(node, GroupNode):
            return len(node.batches)
        if isinstance(node, BatchNode) and not node.single:
            return len(node.changes)
        return 0

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return len(COLUMNS)

    def hasChildren(self, parent: AnyIndex = QModelIndex()) -> bool:
        if not parent.isValid():
            return bool(self._groups)
        if parent.column() != 0:
            return False
        node = self._node(parent)
        return isinstance(node, GroupNode) or (isinstance(node, BatchNode) and not node.single)

    def canFetchMore(self, parent: AnyIndex) -> bool:
        if not parent.isValid():
            return self._next_before is not None
        node = self._node(parent)
        return isinstance(node, BatchNode) and not node.complete

    def fetchMore(self, parent: AnyIndex) -> None:
        if not parent.isValid():
            if self._next_before is not None:
                self._append(self._read_batches(self._next_before), notify=True)
            return
        node = self._node(parent)
        if isinstance(node, BatchNode) and not node.complete:
            self._load_changes(node, notify=True)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        return header_text(COLUMNS, section, orientation, role)

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        node = self._node(index)
        if node is None:
            return None
        column = index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return cell_text(node, column, self._labels)
        if role == Qt.ItemDataRole.FontRole and isinstance(node, GroupNode):
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and column == NOW:
            colour = STATE_COLOURS.get(self.state_of(index))
            return QBrush(QColor(colour)) if colour else None
        if role == ActivityRole.KIND:
            return {GroupNode: "group", BatchNode: "batch", ChangeNode: "change"}[type(node)]
        if role == ActivityRole.BATCH_ID:
            ids = self.batch_ids_of(index)
            return ids[0] if len(ids) == 1 else None
        if role == ActivityRole.ENTRY:
            return self.entry_of(index)
        if role == ActivityRole.TRACE_ID:
            entry = self.entry_of(index)
            return text.trace_of(entry) if entry is not None else None
        if role == ActivityRole.STATE:
            return self.state_of(index)
        return None


def _about(entry: JournalEntry) -> set[str]:
    """The memories a change touched: its trace, or a link's two ends."""
    if entry.op in ("link", "unlink"):
        return set(text.link_ends(entry))
    return {entry.trace_id}
