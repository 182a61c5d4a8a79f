"""New traces written in bulk from rows already built, indexed for search as they go in.

An import builds each new trace's INSERT parameters once (a tuple, `store.row_values` less
the rowid) and hands them here a few thousand at a time: one `executemany` each for the
rows and their journal entries, as `insert_traces` writes them, and the full-text
indexes filled from the same values in the same transaction (`fulltext.index_new`), instead
of marking each row pending and reading it back at the flush. A crash before the commit
leaves neither the rows nor their index entries.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from memgui.core.changes import TRACE
from memgui.core.model import now_ms
from memgui.core.search import fulltext
from memgui.core.storage import journal_rows, schema, store
from memgui.core.storage.db import Database, WriteBatch

# Positions in a row (the INSERT parameters after the rowid).
ID, CONTENT, EMBEDDING, TAGS, VERSION = 1, 5, 6, 11, 17


def insert_rows(
    db: Database,
    batch: WriteBatch,
    brain_id: str,
    rows: list[tuple[Any, ...]],
    texts: list[tuple[list[str], str | None]],
    op: str = "import",
) -> list[int]:
    """Insert new traces as `insert_traces` would and index them; returns their rowids.

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
    explicit = top + len(rows) < MAX_ROWID
    first = top + 1 if explicit else None
    full = [(None if first is None else first + k, *row) for k, row in enumerate(rows)]
    with insert_triggers_paused(db, len(full)):
        conn.executemany(store.INSERT_SQL, full)
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
        rowids = rowids_of(db, brain_id, [{"id": row[ID]} for row in rows])
        conn.executemany(fulltext.MARK_NEW_SQL, [(rowid,) for rowid in rowids])
        db.pending_marks += len(rowids)
    at = now_ms()
    actor, batch_id = batch.actor, batch.batch_id
    added = store.ADDED
    conn.executemany(
        journal_rows.INSERT_SQL,
        [(brain_id, at, actor, batch_id, op, row[ID], None, added % row[VERSION]) for row in rows],
    )
    batch.events += [(TRACE, row[ID], False, True) for row in rows]
    return rowids


MAX_ROWID = 2**63 - 1


def insert_traces(
    db: Database,
    batch: WriteBatch,
    brain_id: str,
    snaps: list[dict[str, Any]],
    op: str = "add",
    embeddings: list[bytes | None] | None = None,
) -> list[int]:
    """Insert many new traces as `insert_trace` would one by one; returns their rowids.

    One `executemany` each for the rows, their full-text marks and their journal entries
    (one statement per row costs ~60 µs a trace). The caller has checked that the ids are
    free, in the same transaction. Embedding BLOBs are stored; entering them in the vector
    index (`vectors.sync_rows`) is the caller's, which may do it once for a whole import.
    """
    if not snaps:
        return []
    if embeddings is None:
        embeddings = [None] * len(snaps)
    top = db.conn.execute("SELECT max(rowid) FROM memory_traces").get or 0
    # The rowids SQLite would choose (max + 1, in order), given explicitly so that no
    # query has to read them back; near the end of the range SQLite picks its own.
    explicit = top + len(snaps) < MAX_ROWID
    rows = [
        store.row_values(top + 1 + offset if explicit else None, brain_id, snap, embedding)
        for offset, (snap, embedding) in enumerate(zip(snaps, embeddings, strict=True))
    ]
    with insert_triggers_paused(db, len(rows)):
        db.conn.executemany(store.INSERT_SQL, rows)
    rowids = [row[0] for row in rows] if explicit else rowids_of(db, brain_id, snaps)
    db.conn.executemany(fulltext.MARK_NEW_SQL, [(rowid,) for rowid in rowids])
    db.pending_marks += len(rowids)
    at = now_ms()
    added = store.ADDED
    db.conn.executemany(
        journal_rows.INSERT_SQL,
        [
            (
                brain_id,
                at,
                batch.actor,
                batch.batch_id,
                op,
                snap["id"],
                None,
                added % snap["version"],
            )
            for snap in snaps
        ],
    )
    batch.events += [(TRACE, snap["id"], False, True) for snap in snaps]
    return rowids


_PAUSE_FROM_ROWS = 500  # fewer rows: the two DDL statements cost more than they save


@contextmanager
def insert_triggers_paused(db: Database, rows: int) -> Iterator[None]:
    """Around a bulk insert of memgui's own rows (which it marks itself) inside the caller's
    transaction: the insert triggers, which only watch other programs' writes, are dropped
    and made again before the transaction ends, so no other connection ever sees them gone.
    A trigger fired per row cost ~13 µs of a ~70 µs import row."""
    names = [n for n in schema.INSERT_TRIGGERS if n in db.triggers]
    if rows < _PAUSE_FROM_ROWS or not names:
        yield
        return
    for name in names:
        db.conn.execute(f"DROP TRIGGER {name}")
    try:
        yield
    finally:
        for name in names:
            db.conn.execute(schema.MEMGUI_TRIGGER_SQL[name])


def rowids_of(db: Database, brain_id: str, snaps: list[dict[str, Any]]) -> list[int]:
    ids = [snap["id"] for snap in snaps]
    found: dict[str, int] = {}
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        found.update(
            db.conn.execute(
                f"SELECT id, rowid FROM memory_traces WHERE brain_id = ? AND id IN ({marks})",
                (brain_id, *part),
            )
        )
    return [found[i] for i in ids]
