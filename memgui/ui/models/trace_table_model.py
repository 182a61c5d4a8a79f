"""The trace table: an ordered id list from the core's query, rows fetched in pages.

As in Anki's browser, the model holds only the ids of the current query; `data()` looks the
row up in a cache and, on a miss, fetches the rows around it with one `get_many` (a primary
key lookup of `PAGE_SIZE` rows, cheap at any brain size). Sorting and filtering re-run the
query. With a `JobRunner` the query itself (which grows with the brain) runs off the GUI
thread on its own connection; without one it runs inline (tests, small tools).

A new list costs the GUI thread one model reset: the job first sends the list's first page
(an indexed `LIMIT`, painted at once), then the whole id list with its id → row map built in
the worker; the rest of the rows are *inserted* after the first page, so the view keeps its
scroll position, selection and painted rows, and nothing on the GUI thread grows with the
list. (Two resets per query, and an O(n) map rebuilt for each selection restore, stalled the
window for 70–350 ms at 100k traces.)
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QModelIndex,
    QObject,
    Qt,
    Signal,
    Slot,
)

from memgui.core.errors import MemguiError
from memgui.core.model import MAX_LIMIT, Changes, Trace, TraceFilter
from memgui.core.progress import Progress, gc_paused
from memgui.ui.change_bus import EXTERNAL
from memgui.ui.models import Index
from memgui.ui.models.row_lists import RowMap, discard_later, gather_slices, row_map
from memgui.ui.models.trace_cells import CHANGED_ROLES, GONE, TraceCells
from memgui.ui.models.trace_columns import (
    COLUMNS,
    matches,
)
from memgui.ui.models.trace_queries import (
    QueryOutcome,
    ReaderPool,
    TraceQuery,
    first_page_is_cheap,
    read_gently,
    run_query,
)

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.ui.jobs import JobRunner

PAGE_SIZE = 120  # rows fetched around a missing row: a screenful and some to scroll into
FIRST_PAGE = 200  # rows the query job sends ahead of the full id list
MAX_CACHED_ROWS = 20_000  # beyond this the cache starts over (a long scroll through 1M rows)
REFRESH_ALL_ABOVE = 500  # a change this big (an import) simply re-runs the query


class TraceTableModel(TraceCells):
    query_started = Signal()
    query_finished = Signal(object)  # QueryOutcome
    query_failed = Signal(str)  # the core's message (a bad search query)
    # Emitted by the query job in its worker; queued to `_apply_first_page` here.
    _first_page_read = Signal(int, object)

    def __init__(
        self,
        brain: Brain,
        parent: QObject | None = None,
        runner: JobRunner | None = None,
        open_reader: Callable[[], Brain] | None = None,
    ) -> None:
        """`runner` (a JobRunner) and `open_reader` (a function opening a second Brain on
        the same file, closed after use) move the query off the GUI thread when both are
        given."""
        super().__init__(parent)
        self._brain = brain
        self._runner = runner
        self._readers = ReaderPool(open_reader) if open_reader is not None else None
        self._query = TraceQuery()
        self._ids: list[str] = []
        self._rows: dict[str, int] | RowMap | None = None  # id -> row, built on first need
        self._cache: dict[str, Any] = {}
        self._snippets: dict[str, str] = {}  # a search's lines around the match, by id
        self._search_mode: str | None = None
        self._why: dict[str, str] = {}  # a cognitive search's "why this result", by id
        self._generation = 0
        self._busy = False
        self._sort_column: int | None = None
        self._first_page_of: int | None = None  # the generation whose first page is shown
        self._shown_query: TraceQuery | None = None  # the query whose full answer is shown
        self._fetched_from = 0  # the first row of the last page read for a paint
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

    def set_search_mode(self, mode: str) -> None:
        """Ask for another search mode; re-runs only while a search is shown."""
        wanted = replace(self._query, mode=mode)
        if self._query.search:
            self.set_query(wanted)
        else:
            self._query = wanted

    def refresh(self) -> None:
        """Re-run the current query (rows keep their cache until the answer arrives)."""
        self.set_query(self._query)

    def set_query(self, query: TraceQuery) -> None:
        self._query = query
        self._generation += 1
        generation = self._generation
        self._busy = True
        self.query_started.emit()
        if self._runner is None or self._readers is None:
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
        if first_page and not self._readers.idle and first_page_is_cheap(query):
            # No reader is open yet (opening one costs 0.1–0.4 s on a 1M-trace brain): read
            # the first page on this connection, an indexed LIMIT that does not grow with
            # the brain (~10 ms at 1M), and leave only the full list to the job.
            try:
                traces = self._brain.list_traces(
                    query.filter, limit=FIRST_PAGE, order=query.order, descending=query.descending
                )
            except MemguiError as exc:
                self._fail(generation, exc)
                return
            self._apply_first_page(generation, traces)
            first_page = False
        # A refresh (an import, a change elsewhere) reads the rows on screen in the job too:
        # fetched by the paint, they cost the GUI thread 20–40 ms on long notes.
        shown_from = None if first_page else self._fetched_from
        readers = self._readers
        job = self._runner.start(
            "query", lambda: self._query_job(readers, query, generation, first_page, shown_from)
        )
        job.finished.connect(lambda outcome: self._apply(generation, outcome))
        job.failed.connect(lambda exc: self._fail(generation, exc))

    def _query_job(
        self,
        readers: ReaderPool,
        query: TraceQuery,
        generation: int,
        first_page: bool,
        shown_from: int | None,
    ) -> Generator[Progress, None, QueryOutcome]:
        reader = readers.take()
        try:
            if first_page:
                page = reader.list_traces(
                    query.filter,
                    limit=min(FIRST_PAGE, MAX_LIMIT),
                    order=query.order,
                    descending=query.descending,
                )
                self._first_page_read.emit(generation, page)
            yield Progress(0, None, "querying")
            # A million new ids made the collector walk the whole heap, GIL held, several
            # times: 250–640 ms frozen windows. They form no cycles.
            with gc_paused():
                if query.search:
                    outcome = run_query(reader, query)
                    return replace(outcome, rows=row_map(outcome.ids))
                # SQLite builds the list without the GIL, a slice is taken at a time.
                slices = reader.list_id_slices(
                    query.filter, order=query.order, descending=query.descending, size=5_000
                )
                ids, rows = gather_slices(slices)
                shown = ids[shown_from : shown_from + PAGE_SIZE] if shown_from is not None else []
                traces = read_gently(reader, shown)
        finally:
            readers.give_back(reader)
        return QueryOutcome(ids=ids, traces=traces, search_mode=None, rows=rows)

    def close_readers(self) -> None:
        """Close the idle reader connections (call after the job runner has stopped)."""
        if self._readers is not None:
            self._readers.close()

    @Slot(int, object)
    def _apply_first_page(self, generation: int, traces: list[Trace]) -> None:
        if generation != self._generation or not self._busy:
            return  # a newer query was asked, or the full answer came first
        self.beginResetModel()
        discard_later(self._ids, self._rows, self._cache)
        self._ids = [t.id for t in traces]
        self._rows = None
        self._cache = {t.id: t for t in traces}
        self._snippets = {}
        self._search_mode = None
        self._why = {}
        self._first_page_of = generation
        self.endResetModel()

    def _fail(self, generation: int, exc: BaseException) -> None:
        if generation != self._generation:
            return
        self._busy = False
        self._first_page_of = None
        self.query_failed.emit(str(exc))

    def _apply(self, generation: int, outcome: QueryOutcome) -> None:
        if generation != self._generation:
            return  # an older query answered after a newer one was asked
        shown = len(self._ids)
        if self._first_page_of == generation and outcome.ids[:shown] == self._ids:
            self._append_rest(outcome)
        else:
            self.beginResetModel()
            discard_later(self._ids, self._rows, self._cache)
            self._ids = outcome.ids
            self._rows = outcome.rows
            self._cache = dict(outcome.traces)
            self._snippets = outcome.snippets
            self._search_mode = outcome.search_mode
            self._why = outcome.why
            if outcome.search_mode is not None and self._sort_column is not None:
                self._sort_in_memory()
            self._finish_query()
            self.endResetModel()
        self.query_finished.emit(outcome)

    def _append_rest(self, outcome: QueryOutcome) -> None:
        """The full list starts with the first page on screen: insert the rest after it."""
        shown = len(self._ids)
        rest = len(outcome.ids) - shown
        if rest > 0:
            self.beginInsertRows(QModelIndex(), shown, shown + rest - 1)
        self._ids = outcome.ids
        self._rows = outcome.rows
        self._cache.update(outcome.traces)
        self._finish_query()
        if rest > 0:
            self.endInsertRows()

    def _finish_query(self) -> None:
        self._busy = False
        self._first_page_of = None
        self._shown_query = self._query

    # --- sorting ------------------------------------------------------------------------

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if not 0 <= column < len(COLUMNS):
            return
        self._sort_column = column
        descending = order == Qt.SortOrder.DescendingOrder
        if self._query.search:
            # Search results (≤ 200, all cached) are ordered by score; a column sort
            # reorders them in memory instead of asking the core again.
            order_key = COLUMNS[column].order or self._query.order
            self._query = replace(self._query, order=order_key, descending=descending)
            self.layoutAboutToBeChanged.emit()
            self._sort_in_memory()
            self.layoutChanged.emit()
            return
        if not COLUMNS[column].order:
            return  # a column the core cannot order by (embedding status) sorts search results only
        wanted = replace(self._query, order=COLUMNS[column].order, descending=descending)
        if wanted != self._query:  # a view restoring its sort indicator asks for the same
            self.set_query(wanted)

    def _sort_in_memory(self) -> None:
        column = COLUMNS[self._sort_column or 0]
        known = [i for i in self._ids if isinstance(self._cache.get(i), Trace)]
        unknown = [i for i in self._ids if not isinstance(self._cache.get(i), Trace)]
        known.sort(key=lambda i: column.sort_key(self._cache[i]), reverse=self._query.descending)
        self._ids = known + unknown
        self._rows = None  # the id -> row map was of the order before

    # --- rows ---------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._ids)

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def why_of(self, trace_id: str | None) -> str | None:
        """Why a cognitive search ranked this result where it is (None in other lists)."""
        return self._why.get(trace_id) if trace_id is not None else None

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
        # A view paints top-down, so the first miss is near the top of the screen: fetch a
        # few rows above it (scrolling up) and a screenful below, in one primary-key read.
        start = max(0, row - PAGE_SIZE // 4)
        self._fetched_from = start
        page = [i for i in self._ids[start : start + PAGE_SIZE] if i not in self._cache]
        found = self._brain.get_many(page) if page else {}
        for trace_id in page:
            self._cache[trace_id] = found.get(trace_id, GONE)

    # --- changes ------------------------------------------------------------------------

    def apply_changes(self, changes: Changes, initiator: object = None) -> None:
        """Refresh the rows `changes` names; re-run the query if rows come or go."""
        if changes.kind == "reset" or len(changes.traces) > REFRESH_ALL_ABOVE:
            self.refresh()
            return
        if not changes.traces:
            return
        fresh = self._brain.get_many(sorted(changes.traces))
        requery = False
        last_column = len(COLUMNS) - 1
        # A search's hits can only be known by running it again: another process's edit may
        # have made a trace stop (or start) matching its words. (This window's own edit of a
        # hit keeps its row: the person is working on it.)
        searching = bool(self._query.search) and initiator == EXTERNAL
        for trace_id in changes.traces:
            trace = fresh.get(trace_id)
            row = self.row_of(trace_id)
            belongs = trace is not None and matches(trace, self._query.filter)
            if searching and (row >= 0 or belongs):
                requery = True
                continue
            if row < 0:
                requery = requery or belongs
                continue
            if not belongs:
                requery = True
                continue
            self._cache[trace_id] = trace
            self._snippets.pop(trace_id, None)  # a line of the old text
            self.dataChanged.emit(self.index(row, 0), self.index(row, last_column), CHANGED_ROLES)
        if requery:
            self.refresh()
