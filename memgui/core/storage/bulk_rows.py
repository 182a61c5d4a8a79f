"""New traces written in bulk from rows already built, indexed for search as they go in.

An import builds each new trace's INSERT parameters once (a tuple, `store._row_values` less
the rowid) and hands them here a few thousand at a time: one `executemany` each for the
rows and their journal entries, as `store.insert_traces` writes them, and the full-text
indexes filled from the same values in the same transaction (`fulltext.index_new`), instead
of marking each row pending and reading it back at the flush. A crash before the commit
leaves neither the rows nor their index entries.
"""

from __future__ import annotations

from typing import Any

from memgui.core.changes import TRACE
from memgui.core.model import now_ms
from memgui.core.search import fulltext
from memgui.core.storage import store
from memgui.core.storage.db import Database, WriteBatch

# Positions in a row (the INSERT parameters after the rowid).
ID, CONTENT, EMBEDDING, TAGS, VERSION = 1, 5, 6, 11, 17

JOURNAL_SQL = (
    "INSERT INTO memgui_journal (brain_id, at, actor, batch_id, op, trace_id, before, after) "
    "VALUES (?, ?, ?, ?, ?, ?, NULL, ?)"
)


def insert_rows(
    db: Database,
    batch: WriteBatch,
    brain_id: str,
    rows: list[tuple[Any, ...]],
    texts: list[tuple[list[str], str | None]],
    op: str = "import",
) -> list[int]:
    """Insert new traces as `store.insert_traces` would and index them; returns their rowids.

    `rows`: each trace's INSERT parameters after the rowid; `texts`: each one's tags (as a
    list) and title, for memgui's full-text indexes. The caller has checked that the ids are
    free, in the same transaction. Vectors are the caller's, as for `insert_traces`.
    """
    if not rows:
        return []
    conn = db.conn
    top = conn.execute("SELECT max(rowid) FROM memory_traces").get or 0
    # The rowids SQLite would choose (max + 1, in order), given explicitly so that no
    # query has to read them back; near the end of the range SQLite picks its own.
    explicit = top + len(rows) < store._MAX_ROWID
    first = top + 1 if explicit else None
    full = [(None if first is None else first + k, *row) for k, row in enumerate(rows)]
    with store._insert_triggers_paused(db, len(full)):
        conn.executemany(store._INSERT_SQL, full)
    if first is not None:
        rowids = list(range(first, first + len(rows)))
        fulltext.index_new(
            db,
            [
                (rowid, row[CONTENT], row[TAGS], tags, title)
                for rowid, row, (tags, title) in zip(rowids, rows, texts, strict=True)
            ],
        )
    else:
        rowids = store._rowids_of(db, brain_id, [{"id": row[ID]} for row in rows])
        conn.executemany(fulltext.MARK_NEW_SQL, [(rowid,) for rowid in rowids])
        db.pending_marks += len(rowids)
    at = now_ms()
    actor, batch_id = batch.actor, batch.batch_id
    added = store._ADDED
    conn.executemany(
        JOURNAL_SQL,
        [(brain_id, at, actor, batch_id, op, row[ID], added % row[VERSION]) for row in rows],
    )
    batch.events += [(TRACE, row[ID], False, True) for row in rows]
    return rowids
