"""The records of an import plan as a table, and the verdict filter over it.

`ImportPlanModel` shows one row per planned record (source, verdict, reason, the content's
first line) with a check box that says whether the commit writes it. Only `new` and `update`
records can be accepted; the others are written by nobody and show no box. The display
text of each row is computed the first time a view asks and kept, so `data()` stays a
lookup even for a plan of tens of thousands of records.

A conversation's messages and the memories made of it follow its check box: un-ticking a
new conversation un-ticks them (a message written without it would end as an error, and a
memory would point at a chat that is not there), ticking the conversation ticks them again,
ticking a message ticks its conversation, and ticking a memory ticks its conversation and
the conversation's messages (its Conversation tab shows them).

`PlanFilterProxy` hides the verdicts switched off in the review page, and the records of
other conversations while one conversation is chosen. It filters with a regular expression
on `FilterRole` (the verdict and the record's conversation), matched in C++: when every
verdict and conversation is shown the expression is empty and no row is asked at all.
"""

from __future__ import annotations

import re
from enum import IntEnum
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QByteArray,
    QModelIndex,
    QModelRoleData,
    QModelRoleDataSpan,
    QRegularExpression,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QBrush, QColor

from memgui.core.io import VERDICTS, ImportPlan, ImportRecord, RecordKind, Verdict
from memgui.ui.models import Index
from memgui.ui.models.detail_models import header_text
from memgui.ui.models.plan_chats import PlanChats
from memgui.ui.theme import colours

ACCEPTABLE = (Verdict.NEW, Verdict.UPDATE)
_CHAT_KINDS = frozenset({RecordKind.CONVERSATION, RecordKind.MESSAGE, RecordKind.TRACE})
CHAT_FORMATS = frozenset({"chatgpt", "json", "sqlite"})  # plans that may hold conversations
ALL_VERDICTS = (*VERDICTS, Verdict.SKIPPED)  # the order of the review page's toggles
FIRST_LINE_CHARS = 160
VERDICT_COLOURS = colours.VERDICTS


_BRUSHES: dict[str, QBrush] = {}


def _brush(verdict: str) -> QBrush:
    brush = _BRUSHES.get(verdict)
    if brush is None:
        brush = _BRUSHES[verdict] = QBrush(QColor(VERDICT_COLOURS.get(verdict, colours.BLACK)))
    return brush


def warm_up() -> None:
    """Make the verdicts' brushes (off the GUI thread: `heap.preload`): PySide6 creates the
    enums of QBrush's gradients, 7–13 ms, on the first QBrush made."""
    for verdict in ALL_VERDICTS:
        _brush(verdict)


class PlanRole(IntEnum):
    RecordRole = Qt.ItemDataRole.UserRole + 1
    RecordIndexRole = Qt.ItemDataRole.UserRole + 2
    VerdictRole = Qt.ItemDataRole.UserRole + 3
    AcceptedRole = Qt.ItemDataRole.UserRole + 4
    KindRole = Qt.ItemDataRole.UserRole + 5
    FilterRole = Qt.ItemDataRole.UserRole + 6  # "verdict\x1fconversation id" (see the proxy)


class Column(IntEnum):
    SOURCE = 0
    KIND = 1
    VERDICT = 2
    REASON = 3
    CONTENT = 4


HEADERS = ("Source", "Kind", "Verdict", "Reason", "Content")


def first_line(record: ImportRecord) -> str:
    """The line a person recognises the record by: its text, title, label or ends."""
    fields = record.fields
    if record.kind == RecordKind.CONVERSATION:
        text = str(fields.get("title") or "")
    elif record.kind == RecordKind.NODE:
        text = str(fields.get("label") or "")
    elif record.kind == RecordKind.EDGE:
        text = f"{fields.get('source_id', '?')} → {fields.get('target_id', '?')}"
    else:
        content = fields.get("content")
        text = content if isinstance(content, str) else ""
    if record.kind == RecordKind.MESSAGE and fields.get("role"):
        text = f"{fields['role']}: {text}"
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:FIRST_LINE_CHARS]
    return ""


def short_source(source: str, plan_source: str) -> str:
    """A record's source without what every record of the import shares.

    A folder's records are named relative to it already; a file's records repeat the file
    (`conversations.json#<id>/<node>`), so only the part after it is shown.
    """
    shown = source
    if source.startswith(plan_source) and len(source) > len(plan_source):
        shown = source[len(plan_source) :].lstrip("#:") or source
    else:
        base = str(Path(plan_source).parent) + "/"
        shown = source[len(base) :] if source.startswith(base) else source
    return shown


def record_flags(index: Index, record: ImportRecord | None, box_column: int) -> Qt.ItemFlag:
    """A cell of a record's row: selectable, with a check box in `box_column` when the
    commit could write the record."""
    if not index.isValid():
        return Qt.ItemFlag.NoItemFlags
    flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
    if index.column() == box_column and record is not None and record.verdict in ACCEPTABLE:
        flags |= Qt.ItemFlag.ItemIsUserCheckable
    return flags


class ImportPlanModel(QAbstractTableModel):
    """One row per record of `plan.records`, in the plan's order."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.plan: ImportPlan | None = None
        self._rows: dict[int, tuple[str, str, str]] = {}  # row -> (source, reason, first line)
        self._chats: PlanChats | None = None
        self.committed = False  # the verdicts of written records then read "imported"

    def set_committed(self, committed: bool) -> None:
        if committed != self.committed:
            self.committed = committed
            self.refresh_all()

    def shown_verdict(self, row: int, record: ImportRecord) -> str:
        if self.committed and self.plan is not None and row in self.plan.written:
            return "imported"
        return record.verdict

    def set_plan(self, plan: ImportPlan | None) -> None:
        self.beginResetModel()
        self.committed = False
        self.plan = plan
        self._rows = {}
        self._chats = None
        self.endResetModel()

    def record(self, row: int) -> ImportRecord | None:
        if self.plan is None or not 0 <= row < len(self.plan.records):
            return None
        return self.plan.records[row]

    def refresh_all(self) -> None:
        """Every record may have changed (a commit re-checks them): redraw, keep the rows."""
        self._rows = {}
        if self.rowCount():
            last = self.index(self.rowCount() - 1, len(Column) - 1)
            self.dataChanged.emit(self.index(0, 0), last)

    def record_changed(self, row: int) -> None:
        """A record was edited or re-validated: show its new verdict and text."""
        self._rows.pop(row, None)
        last = len(Column) - 1
        self.dataChanged.emit(self.index(row, 0), self.index(row, last))

    def set_accepted(self, rows: list[int], accepted: bool) -> int:
        """Accept or un-accept `rows` (those that can be) and the rows that go with them
        (a conversation's messages); returns how many changed."""
        changed: list[int] = []
        for row in self._with_conversations(rows, accepted):
            record = self.record(row)
            if record is None or record.verdict not in ACCEPTABLE or record.accepted == accepted:
                continue
            record.accepted = accepted
            changed.append(row)
        if changed:
            # One signal for the span, not one per row: "un-accept shown" may touch thousands.
            roles = [Qt.ItemDataRole.CheckStateRole, PlanRole.AcceptedRole]
            first = self.index(min(changed), Column.SOURCE)
            self.dataChanged.emit(first, self.index(max(changed), Column.SOURCE), roles)
        return len(changed)

    @property
    def chats(self) -> PlanChats:
        """The plan's conversations and their records (built on first use)."""
        if self._chats is None:
            plan = self.plan
            self._chats = PlanChats.of(plan if plan and plan.format in CHAT_FORMATS else None)
        return self._chats

    def _with_conversations(self, rows: list[int], accepted: bool) -> list[int]:
        """`rows`, plus what goes with a chat's records among them (see the module)."""
        records = [(row, self.record(row)) for row in rows]
        if not any(r is not None and r.kind in _CHAT_KINDS for _row, r in records):
            return rows
        chats = self.chats
        extra: list[int] = []
        for row, record in records:
            of = chats.of_row.get(row)
            if of is None or record is None or record.verdict not in ACCEPTABLE:
                continue
            if record.kind == RecordKind.CONVERSATION:
                extra += chats.messages.get(of, ())
                extra += chats.memories.get(of, ())
            elif accepted and of in chats.row_of:
                extra.append(chats.row_of[of])
                if record.kind == RecordKind.TRACE:
                    extra += chats.messages.get(of, ())
        return list(dict.fromkeys([*rows, *extra]))

    # --- Qt model ---------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        if parent.isValid() or self.plan is None:
            return 0
        return len(self.plan.records)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(Column)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        return header_text(HEADERS, section, orientation, role)

    def flags(self, index: Index) -> Qt.ItemFlag:
        record = self.record(index.row()) if index.isValid() else None
        return record_flags(index, record, Column.SOURCE)

    def _texts(self, row: int, record: ImportRecord) -> tuple[str, str, str]:
        cached = self._rows.get(row)
        if cached is None:
            assert self.plan is not None
            named = self.chats.source(row, record.kind) if record.kind in _CHAT_KINDS else None
            cached = (
                named or short_source(record.source, self.plan.source),
                record.reason,
                first_line(record),
            )
            self._rows[row] = cached
        return cached

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        record = self.record(index.row()) if index.isValid() else None
        if record is None:
            return None
        return self._value(record, index.row(), index.column(), role)

    def multiData(self, index: Index, roleDataSpan: QModelRoleDataSpan | QModelRoleData) -> None:
        """All the roles a paint asks for one cell, in one call from C++ (each call into
        Python takes the GIL, which the commit's worker holds in bursts)."""
        record = self.record(index.row()) if index.isValid() else None
        row, column = index.row(), index.column()
        for item in roleDataSpan:  # type: ignore[union-attr]  # a span iterates (not in the stubs)
            value = None if record is None else self._value(record, row, column, item.role())
            # The span is reused from cell to cell: an unanswered role is cleared.
            if value is None:
                item.clearData()
            else:
                item.setData(value)

    def _value(self, record: ImportRecord, row: int, column: int, role: int) -> Any:
        if role == Qt.ItemDataRole.DisplayRole:
            if column == Column.KIND:
                return record.kind
            if column == Column.VERDICT:
                return self.shown_verdict(row, record)
            source, reason, line = self._texts(row, record)
            return (source, None, None, reason, line)[column]
        if role == PlanRole.VerdictRole:
            return record.verdict
        if role == Qt.ItemDataRole.CheckStateRole and column == Column.SOURCE:
            if record.verdict not in ACCEPTABLE:
                return None
            return Qt.CheckState.Checked if record.accepted else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.ForegroundRole and column == Column.VERDICT:
            return _brush(record.verdict)  # "imported" keeps its verdict's colour
        if role == Qt.ItemDataRole.ToolTipRole and column in (Column.SOURCE, Column.REASON):
            return record.source if column == Column.SOURCE else record.reason or None
        if role == PlanRole.RecordRole:
            return record
        if role == PlanRole.RecordIndexRole:
            return row
        if role == PlanRole.AcceptedRole:
            return record.accepted and record.verdict in ACCEPTABLE
        if role == PlanRole.KindRole:
            return record.kind
        if role == PlanRole.FilterRole:
            return f"{record.verdict}\x1f{self.chats.of_row.get(row, '')}"
        return None

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.CheckStateRole or index.column() != Column.SOURCE:
            return False
        checked = Qt.CheckState(value) == Qt.CheckState.Checked
        return self.set_accepted([index.row()], checked) > 0

    def roleNames(self) -> dict[int, QByteArray]:
        names = super().roleNames()
        for role in PlanRole:
            names[int(role)] = QByteArray(role.name[0].lower().encode() + role.name[1:].encode())
        return names


class PlanFilterProxy(QSortFilterProxyModel):
    """Shows the records whose verdict is switched on (all of them at first)."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._shown: set[str] = set(ALL_VERDICTS)
        self._conversation: str | None = None
        self.setFilterRole(PlanRole.FilterRole)

    def multiData(self, index: Index, roleDataSpan: QModelRoleDataSpan | QModelRoleData) -> None:
        # Qt's proxy asks the source one role at a time; pass the whole span on instead.
        self.sourceModel().multiData(self.mapToSource(index), roleDataSpan)

    @property
    def shown_verdicts(self) -> set[str]:
        return set(self._shown)

    def set_verdict_shown(self, verdict: str, shown: bool) -> None:
        changed = set(self._shown)
        (changed.add if shown else changed.discard)(verdict)
        self.set_shown_verdicts(changed)

    def set_shown_verdicts(self, verdicts: set[str]) -> None:
        self._shown = set(verdicts)
        self._refilter()

    @property
    def conversation(self) -> str | None:
        return self._conversation

    def set_conversation(self, conversation_id: str | None) -> None:
        """Show only the records of this conversation (None: of every one)."""
        self._conversation = conversation_id
        self._refilter()

    def _refilter(self) -> None:
        if self._shown >= set(ALL_VERDICTS) and self._conversation is None:
            pattern = ""  # everything shown: no row needs looking at
        else:
            alternatives = "|".join(re.escape(v) for v in sorted(self._shown)) or "(?!)"
            chat = ".*" if self._conversation is None else re.escape(self._conversation)
            pattern = f"^({alternatives})\x1f{chat}$"
        self.setFilterRegularExpression(QRegularExpression(pattern))

    def source_rows(self) -> list[int]:
        """The plan rows the proxy shows, in view order."""
        return [self.mapToSource(self.index(r, 0)).row() for r in range(self.rowCount())]
