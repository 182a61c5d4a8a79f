"""What the trace table asks of the core, and the connections its query jobs read on.

`TraceQuery` is what the table shows; `run_query` answers it inline (tests, small tools, and
searches, whose hits come with their traces); the table model's query job reads plain lists
in slices (`Brain.list_id_slices`) on a `ReaderPool` connection.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memgui.core.model import MAX_LIMIT, Trace, TraceFilter
from memgui.ui.models.row_lists import RowMap

if TYPE_CHECKING:
    from memgui.core.brain import Brain


@dataclass(frozen=True)
class TraceQuery:
    """What the table shows: a filter, an optional search, and an order."""

    filter: TraceFilter = field(default_factory=TraceFilter)
    search: str = ""
    order: str = "created_at"
    descending: bool = True
    mode: str = "auto"  # the search mode asked of the core (auto, keyword, semantic, hybrid,
    # cognitive)


@dataclass(frozen=True)
class QueryOutcome:
    ids: list[str]
    traces: dict[str, Trace]  # prefetched rows (search hits come with their traces)
    search_mode: str | None  # None: a plain list, else the core's search mode
    rows: dict[str, int] | RowMap | None = None  # id -> row, built off the GUI thread
    # The cognitive mode: why each result ranks where it does (the score spelled out).
    why: dict[str, str] = field(default_factory=dict)
    # A search's line of each memory around where it matched (the content column shows it).
    snippets: dict[str, str] = field(default_factory=dict)


def run_query(brain: Brain, query: TraceQuery) -> QueryOutcome:
    """Ask the core for the ids of `query` (search never counts as a recall here)."""
    if not query.search:
        ids = brain.list_ids(query.filter, order=query.order, descending=query.descending)
        return QueryOutcome(ids=list(ids), traces={}, search_mode=None)
    result = brain.search(
        query.search, query.filter, limit=MAX_LIMIT, mode=query.mode, record_recall=False
    )
    traces = {hit.trace.id: hit.trace for hit in result.hits}
    why = {hit.trace.id: str(hit.parts["why"]) for hit in result.hits if hit.parts}
    return QueryOutcome(
        ids=[hit.trace.id for hit in result.hits],
        traces=traces,
        search_mode=result.search_mode,
        why=why,
        snippets={hit.trace.id: hit.snippet for hit in result.hits},
    )


def first_page_is_cheap(query: TraceQuery) -> bool:
    """True when the first page is the head of an index: every live trace, in the order of
    an indexed column (a filter or another order may have to scan the brain)."""
    return query.filter == TraceFilter() and query.order in _INDEXED_ORDERS


_INDEXED_ORDERS = frozenset({"created_at", "last_accessed"})  # schema.py's sort indexes


class ReaderPool:
    """Idle reader connections, reused by the next query job: opening one costs 0.1–0.4 s on
    a 1M-trace brain. A job takes one, or opens one when all are busy (a filter change while
    the last list is still being read), and gives it back; after `close`, it is closed."""

    def __init__(self, open_reader: Callable[[], Brain]) -> None:
        self._open = open_reader
        self.idle: list[Brain] = []
        self._lock = threading.Lock()
        self._closed = False

    def take(self) -> Brain:
        with self._lock:
            if self.idle:
                return self.idle.pop()
        return self._open()

    def give_back(self, reader: Brain) -> None:
        with self._lock:
            if not self._closed:
                self.idle.append(reader)
                return
        reader.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            readers, self.idle = self.idle, []
        for reader in readers:
            reader.close()


def read_gently(reader: Brain, ids: list[str], burst: int = 20) -> dict[str, Trace]:
    """`reader.get_many(ids)` a few rows at a time with a pause between: building traces is
    Python that holds the GIL, which a paint on the GUI thread (the import window's review
    page after a commit) would wait for."""
    traces: dict[str, Trace] = {}
    for start in range(0, len(ids), burst):
        traces.update(reader.get_many(ids[start : start + burst]))
        time.sleep(0.001)
    return traces
