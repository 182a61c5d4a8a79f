"""The trace table: an ordered id list from the core's query, rows fetched in pages.

As in Anki's browser, the model holds only the ids of the current query; `data()` looks the
row up in a cache and, on a miss, fetches the page around it with one `get_many` (a primary
key lookup of `PAGE_SIZE` rows, cheap at any brain size). Sorting and filtering re-run the
query. With a `JobRunner` the query itself (which grows with the brain) runs off the GUI
thread on its own connection; without one it runs inline (tests, small tools).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, Qt, Signal, Slot
from PySide6.QtGui import QColor

from memgui.core.errors import MemguiError
from memgui.core.model import MAX_LIMIT, Changes, Trace, TraceFilter
from memgui.core.progress import Progress
from memgui.ui.models.trace_columns import (
    COLUMNS,
    CONTENT_COLUMN,
    NUMERIC_COLUMNS,
    TraceRole,
    matches,
)

PAGE_SIZE = 200
MAX_CACHED_ROWS = 20_000  # beyond this the cache starts over (a long scroll through 1M rows)
REFRESH_ALL_ABOVE = 500  # a change this big (an import) simply re-runs the query
_GONE = object()  # cache marker: the id was in the list but the trace no longer exists


@dataclass(frozen=True)
class TraceQuery:
    """What the table shows: a filter, an optional search, and an order."""

    filter: TraceFilter = field(default_factory=TraceFilter)
    search: str = ""
    order: str = "created_at"
    descending: bool = True


@dataclass(frozen=True)
class QueryOutcome:
    ids: list[str]
    traces: dict[str, Trace]  # prefetched rows (search hits come with their traces)
    search_mode: str | None  # None: a plain list, else the core's search mode


def run_query(brain: Any, query: TraceQuery) -> QueryOutcome:
    """Ask the core for the ids of `query` (search never counts as a recall here)."""
    if not query.search:
        ids = brain.list_ids(query.filter, order=query.order, descending=query.descending)
        return QueryOutcome(ids=list(ids), traces={}, search_mode=None)
    result = brain.search(query.search, query.filter, limit=MAX_LIMIT, record_recall=False)
    traces = {hit.trace.id: hit.trace for hit in result.hits}
    return QueryOutcome(
        ids=[hit.trace.id for hit in result.hits], traces=traces, search_mode=result.search_mode
    )


class TraceTableModel(QAbstractTableModel):
    query_started = Signal()
    query_finished = Signal(object)  # QueryOutcome
    query_failed = Signal(str)  # the core's message (a bad search query)
    # Emitted by the query job in its worker; queued to `_apply_first_page` here.
    _first_page_read = Signal(int, object)

    def __init__(
        self,
        brain: Any,
        parent: QObject | None = None,
        runner: Any = None,
        open_reader: Callable[[], Any] | None = None,
    ) -> None:
        """`runner` (a JobRunner) and `open_reader` (a function opening a second Brain on
        the same file, closed after use) move the query off the GUI thread when both are
        given."""
        super().__init__(parent)
        self._brain = brain
        self._runner = runner
        self._open_reader = open_reader
        self._query = TraceQuery()
        self._ids: list[str] = []
        self._rows: dict[str, int] | None = None  # id -> row, built on first need
        self._cache: dict[str, Any] = {}
        self._search_mode: str | None = None
        self._generation = 0
        self._busy = False
        self._sort_column: int | None = None
        self._shown_query: TraceQuery | None = None  # the query whose full answer is shown
        self._first_page_read.connect(self._apply_first_page, Qt.ConnectionType.QueuedConnection)

    # --- queries ------------------------------------------------------------------------

    @property
    def query(self) -> TraceQuery:
        return self._query

    @property
    def search_mode(self) -> str | None:
        return self._search_mode

    @property
    def busy(self) -> bool:
        return self._busy

    def set_filter(self, value: TraceFilter) -> None:
        self.set_query(replace(self._query, filter=value))

    def set_search(self, text: str) -> None:
        self.set_query(replace(self._query, search=text.strip()))

    def refresh(self) -> None:
        """Re-run the current query (rows keep their cache until the answer arrives)."""
        self.set_query(self._query)

    def set_query(self, query: TraceQuery) -> None:
        self._query = query
        self._generation += 1
        generation = self._generation
        self._busy = True
        self.query_started.emit()
        if self._runner is None or self._open_reader is None:
            try:
                outcome = run_query(self._brain, query)
            except MemguiError as exc:
                self._fail(generation, exc)
            else:
                self._apply(generation, outcome)
            return
        # A new list (not a refresh of the one on screen) shows its first page at once; the
        # full id list, which grows with the brain, follows.
        first_page = not query.search and query != self._shown_query
        job = self._runner.start("query", lambda: self._query_job(query, generation, first_page))
        job.finished.connect(lambda outcome: self._apply(generation, outcome))
        job.failed.connect(lambda exc: self._fail(generation, exc))

    def _query_job(self, query: TraceQuery, generation: int, first_page: bool):
        reader = self._open_reader()
        try:
            if first_page:
                traces = reader.list(
                    query.filter,
                    limit=min(PAGE_SIZE, MAX_LIMIT),
                    order=query.order,
                    descending=query.descending,
                )
                self._first_page_read.emit(generation, traces)
            yield Progress(0, None, "querying")
            return run_query(reader, query)
        finally:
            reader.close()

    @Slot(int, object)
    def _apply_first_page(self, generation: int, traces: list[Trace]) -> None:
        if generation != self._generation or not self._busy:
            return  # a newer query was asked, or the full answer came first
        self.beginResetModel()
        self._ids = [t.id for t in traces]
        self._rows = None
        self._cache = {t.id: t for t in traces}
        self._search_mode = None
        self.endResetModel()

    def _fail(self, generation: int, exc: BaseException) -> None:
        if generation != self._generation:
            return
        self._busy = False
        self.query_failed.emit(str(exc))

    def _apply(self, generation: int, outcome: QueryOutcome) -> None:
        if generation != self._generation:
            return  # an older query answered after a newer one was asked
        self.beginResetModel()
        self._ids = outcome.ids
        self._rows = None
        self._cache = dict(outcome.traces)
        self._search_mode = outcome.search_mode
        if outcome.search_mode is not None and self._sort_column is not None:
            self._sort_in_memory()
        self._busy = False
        self._shown_query = self._query
        self.endResetModel()
        self.query_finished.emit(outcome)

    # --- sorting ------------------------------------------------------------------------

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if not 0 <= column < len(COLUMNS):
            return
        self._sort_column = column
        descending = order == Qt.SortOrder.DescendingOrder
        if self._query.search:
            # Search results (≤ 200, all cached) are ordered by score; a column sort
            # reorders them in memory instead of asking the core again.
            self._query = replace(self._query, order=COLUMNS[column].order, descending=descending)
            self.layoutAboutToBeChanged.emit()
            self._sort_in_memory()
            self._rows = None
            self.layoutChanged.emit()
            return
        wanted = replace(self._query, order=COLUMNS[column].order, descending=descending)
        if wanted != self._query:  # a view restoring its sort indicator asks for the same
            self.set_query(wanted)

    def _sort_in_memory(self) -> None:
        column = COLUMNS[self._sort_column or 0]
        known = [i for i in self._ids if isinstance(self._cache.get(i), Trace)]
        unknown = [i for i in self._ids if not isinstance(self._cache.get(i), Trace)]
        known.sort(key=lambda i: column.sort_key(self._cache[i]), reverse=self._query.descending)
        self._ids = known + unknown

    # --- rows ---------------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def id_at(self, row: int) -> str | None:
        return self._ids[row] if 0 <= row < len(self._ids) else None

    def ids(self) -> list[str]:
        return list(self._ids)

    def row_of(self, trace_id: str) -> int:
        """The row showing `trace_id`, or -1."""
        if self._rows is None:
            self._rows = {tid: row for row, tid in enumerate(self._ids)}
        return self._rows.get(trace_id, -1)

    def trace_at(self, row: int) -> Trace | None:
        trace_id = self.id_at(row)
        if trace_id is None:
            return None
        cached = self._cache.get(trace_id)
        if cached is None:
            self._fetch_page(row)
            cached = self._cache.get(trace_id)
        return cached if isinstance(cached, Trace) else None

    def _fetch_page(self, row: int) -> None:
        if len(self._cache) > MAX_CACHED_ROWS:
            self._cache.clear()
        start = row - row % PAGE_SIZE
        page = [i for i in self._ids[start : start + PAGE_SIZE] if i not in self._cache]
        found = self._brain.get_many(page) if page else {}
        for trace_id in page:
            self._cache[trace_id] = found.get(trace_id, _GONE)

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # The paint path: plain int comparisons and dict lookups only (no enum arithmetic).
        row = index.row()
        if row < 0 or row >= len(self._ids):
            return None
        role = int(role)
        if role == _DISPLAY:
            trace = self._cache.get(self._ids[row])
            if trace is None:
                trace = self.trace_at(row)
            if trace is _GONE or trace is None:
                return "(removed)" if index.column() == CONTENT_COLUMN else None
            return _DISPLAYS[index.column()](trace)
        if role == _ALIGNMENT:
            return _RIGHT if index.column() in NUMERIC_COLUMNS else None
        if role == _TRACE_ID:
            return self._ids[row]
        if role not in _ROLES_NEEDING_TRACE:
            return None
        trace = self.trace_at(row)
        if trace is None:
            return None
        if role == _FOREGROUND:
            return _GREY if trace.deleted else None
        if role == _STRENGTH:
            return trace.strength
        if role == _TRACE:
            return trace
        if role == _SORT_KEY:
            return COLUMNS[index.column()].sort_key(trace)
        return _tooltip(trace, index.column())  # the tooltip role

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

    def flags(self, index: QModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def roleNames(self) -> dict[int, bytes]:
        names = super().roleNames()
        for role in TraceRole:
            names[int(role)] = role.name.lower().encode()
        return names

    # --- changes ------------------------------------------------------------------------

    def apply_changes(self, changes: Changes, _initiator: object = None) -> None:
        """Refresh the rows `changes` names; re-run the query if rows come or go."""
        if changes.kind == "reset" or len(changes.traces) > REFRESH_ALL_ABOVE:
            self.refresh()
            return
        if not changes.traces:
            return
        fresh = self._brain.get_many(sorted(changes.traces))
        requery = False
        last_column = len(COLUMNS) - 1
        for trace_id in changes.traces:
            trace = fresh.get(trace_id)
            row = self.row_of(trace_id)
            belongs = trace is not None and matches(trace, self._query.filter)
            if row < 0:
                requery = requery or belongs
                continue
            if not belongs:
                requery = True
                continue
            self._cache[trace_id] = trace
            self.dataChanged.emit(self.index(row, 0), self.index(row, last_column), _CHANGED_ROLES)
        if requery:
            self.refresh()


_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_TRACE_ID = int(TraceRole.TRACE_ID)
_TRACE = int(TraceRole.TRACE)
_STRENGTH = int(TraceRole.STRENGTH)
_SORT_KEY = int(TraceRole.SORT_KEY)
_RIGHT = int(Qt.AlignmentFlag.AlignRight.value | Qt.AlignmentFlag.AlignVCenter.value)
_GREY = QColor(Qt.GlobalColor.gray)
_DISPLAYS = tuple(column.display for column in COLUMNS)
_ROLES_NEEDING_TRACE = frozenset({_DISPLAY, _TOOLTIP, _FOREGROUND, _TRACE, _STRENGTH, _SORT_KEY})
_CHANGED_ROLES = sorted(_ROLES_NEEDING_TRACE)


def _tooltip(trace: Trace, column: int) -> str | None:
    if column != CONTENT_COLUMN:
        return None
    text = trace.content
    return text if len(text) <= 600 else text[:600] + "…"
