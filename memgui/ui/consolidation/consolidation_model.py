"""A consolidation plan as a tree: its steps, their candidates, a merge cluster's members.

Each step row counts its candidates and checks or clears them all; each candidate row is
checked when accepted; a merge cluster's member rows are checked while the member takes
part, and the survivor reads "keep". Column 1 says why each candidate is there. Changing a
check changes the plan itself (`accepted`, `MergeCluster.exclude`): the plan is what
`apply` writes.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from memgui.core.consolidate import (
    CompactCandidate,
    ConsolidationPlan,
    DeriveCandidate,
    MergeCluster,
    PruneCandidate,
    StrengthenCandidate,
)

Index = QModelIndex | QPersistentModelIndex
STEP_TITLES = {
    "prune": "Prune weak memories",
    "merge": "Merge duplicates",
    "strengthen": "Strengthen co-used memories",
    "derive": "Derive insights",
    "compact": "Compact old episodes",
    "reindex": "Re-index",
}
HEADERS = ("Change", "Why")
SNIPPET = 90


class Role(IntEnum):
    Candidate = Qt.ItemDataRole.UserRole + 1  # the plan's candidate object of a row
    Step = Qt.ItemDataRole.UserRole + 2  # the step name of a row
    MemberId = Qt.ItemDataRole.UserRole + 3  # a merge member's trace id


def _short(text: str, width: int = SNIPPET) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


class _Node:
    __slots__ = ("parent", "row", "children", "step", "candidate", "member_id")

    def __init__(
        self,
        parent: _Node | None,
        row: int,
        step: str = "",
        candidate: Any = None,
        member_id: str | None = None,
    ) -> None:
        self.parent = parent
        self.row = row
        self.children: list[_Node] = []
        self.step = step
        self.candidate = candidate
        self.member_id = member_id


class ConsolidationPlanModel(QAbstractItemModel):
    """The plan's tree; `changed` after any check (the dialog recounts)."""

    changed = Signal()

    def __init__(self, plan: ConsolidationPlan | None = None, parent: Any = None) -> None:
        super().__init__(parent)
        self.plan: ConsolidationPlan | None = None
        self._root = _Node(None, 0)
        self.editable = True
        if plan is not None:
            self.set_plan(plan)

    def set_plan(self, plan: ConsolidationPlan | None) -> None:
        self.beginResetModel()
        self.plan = plan
        self._root = _Node(None, 0)
        if plan is not None:
            for step in plan.options.steps:
                node = _Node(self._root, len(self._root.children), step)
                self._root.children.append(node)
                items = self._items(plan, step)
                for i, candidate in enumerate(items):
                    child = _Node(node, i, step, candidate)
                    node.children.append(child)
                    if isinstance(candidate, MergeCluster):
                        child.children = [
                            _Node(child, j, step, candidate, m.trace_id)
                            for j, m in enumerate(candidate.members)
                        ]
        self.endResetModel()

    @staticmethod
    def _items(plan: ConsolidationPlan, step: str) -> list[Any]:
        if step == "reindex":
            return []
        return list(getattr(plan, step))

    def set_editable(self, editable: bool) -> None:
        """An applied plan is shown, no longer changed."""
        self.editable = editable
        if self._root.children:
            last = self.index(self.rowCount() - 1, len(HEADERS) - 1)
            self.dataChanged.emit(self.index(0, 0), last)

    # --- the tree ---------------------------------------------------------------------------

    def _node(self, index: Index) -> _Node:
        node: _Node = index.internalPointer() if index.isValid() else self._root
        return node

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:
        node = self._node(parent)
        if not (0 <= row < len(node.children) and 0 <= column < len(HEADERS)):
            return QModelIndex()
        return self.createIndex(row, column, node.children[row])

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        node = self._node(index).parent
        if node is None or node is self._root:
            return QModelIndex()
        return self.createIndex(node.row, 0, node)

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._node(parent).children)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return len(HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[section]
        return None

    # --- what a row shows ------------------------------------------------------------------

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        node = self._node(index)
        if index.column() == 0 and self.editable and self._checkable(node):
            flags |= Qt.ItemFlag.ItemIsUserCheckable
        return flags

    @staticmethod
    def _checkable(node: _Node) -> bool:
        if node.member_id is not None:
            return node.member_id != node.candidate.survivor_id
        return node.candidate is not None or bool(node.children)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        node = self._node(index)
        if role == Role.Candidate:
            return node.candidate
        if role == Role.Step:
            return node.step
        if role == Role.MemberId:
            return node.member_id
        if role == Qt.ItemDataRole.CheckStateRole and index.column() == 0:
            return self._check_state(node)
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            text = self._text(node, index.column())
            if role == Qt.ItemDataRole.ToolTipRole:
                return self._tip(node) or text
            return text
        return None

    def _check_state(self, node: _Node) -> Qt.CheckState | None:
        checked, unchecked = Qt.CheckState.Checked, Qt.CheckState.Unchecked
        if node.member_id is not None:
            excluded = node.member_id in node.candidate.excluded
            return unchecked if excluded else checked
        if node.candidate is not None:
            return checked if node.candidate.accepted else unchecked
        if not node.children:
            return None
        states = {c.candidate.accepted for c in node.children}
        if states == {True}:
            return checked
        return unchecked if states == {False} else Qt.CheckState.PartiallyChecked

    def _text(self, node: _Node, column: int) -> str:
        plan, c = self.plan, node.candidate
        if node.member_id is not None:
            member = c.member(node.member_id)
            keep = "keep" if node.member_id == c.survivor_id else "merge in"
            return (
                f"{keep}: “{_short(member.content, 70)}”"
                if column == 0
                else (member.evidence if node.member_id != c.survivor_id else "the survivor")
            )
        if c is None:
            if column == 1:
                return self._step_note(node.step)
            count = plan.counts.get(node.step, 0) if plan is not None else 0
            return f"{STEP_TITLES[node.step]} ({count})"
        if column == 1:
            return str(c.why)
        if isinstance(c, PruneCandidate):
            return f"soft-delete “{_short(c.content)}”"
        if isinstance(c, MergeCluster):
            return f"{len(c.merging)} into one: “{_short(c.content)}”"
        if isinstance(c, StrengthenCandidate):
            return f"query “{_short(c.query, 60)}”: {len(c.pairs)} edge(s)"
        if isinstance(c, DeriveCandidate):
            return f"new insight: “{_short(c.insight)}”"
        if isinstance(c, CompactCandidate):
            return f"make semantic: “{_short(c.content)}”"
        return ""

    def _step_note(self, step: str) -> str:
        plan = self.plan
        if plan is None:
            return ""
        if step == "reindex":
            return f"{plan.reindex_pending} rows wait for the full-text indexes"
        notes = [n for n in plan.notes if n.startswith(step)]
        return "; ".join(notes)

    def _tip(self, node: _Node) -> str:
        c = node.candidate
        if node.member_id is not None:
            return c.member(node.member_id).content
        if isinstance(c, PruneCandidate | CompactCandidate):
            return c.content
        if isinstance(c, MergeCluster):
            return c.content
        if isinstance(c, DeriveCandidate):
            return c.insight
        return ""

    # --- checking ----------------------------------------------------------------------------

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.CheckStateRole or index.column() != 0 or not self.editable:
            return False
        node = self._node(index)
        if not self._checkable(node):
            return False
        on = Qt.CheckState(value) == Qt.CheckState.Checked
        if node.member_id is not None:
            node.candidate.exclude(node.member_id, not on)
            self._changed(index.parent())
        elif node.candidate is not None:
            node.candidate.accepted = on
            self._changed(index)
        else:
            for child in node.children:
                child.candidate.accepted = on
            self._changed(index, everything=True)
        return True

    def _changed(self, index: Index, everything: bool = False) -> None:
        """Repaint the row, its step and (for a step or a cluster) its children."""
        last = len(HEADERS) - 1
        rows = [index]
        parent = index.parent()
        while parent.isValid():
            rows.append(parent)
            parent = parent.parent()
        for row in rows:
            first = self.index(row.row(), 0, row.parent())
            self.dataChanged.emit(first, first.siblingAtColumn(last))
        count = self.rowCount(index)
        if count:
            self.dataChanged.emit(self.index(0, 0, index), self.index(count - 1, last, index))
            if everything:
                for i in range(count):
                    child = self.index(i, 0, index)
                    grandchildren = self.rowCount(child)
                    if grandchildren:
                        self.dataChanged.emit(
                            self.index(0, 0, child), self.index(grandchildren - 1, last, child)
                        )
        self.changed.emit()

    def refresh(self, index: QModelIndex) -> None:
        """A candidate's text or survivor changed (the editor): repaint it and its members."""
        if index.isValid():
            self._changed(index.siblingAtColumn(0))
