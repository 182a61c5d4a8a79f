"""Keeping both full-text indexes in step with the rows, in batches.

FTS5 writes a new index segment at every commit (about 0.3 ms per index here), which would
dominate a single `add`. So a write only records the row as pending, in the same
transaction; pending rows enter both indexes together when a few have gathered
(`FLUSH_AFTER`), before any search, and when the brain is closed. The pending table keeps
the text each row had when it was last indexed, which an external-content FTS5 table needs
to delete it.

A connection set to index later (`Database.index_later`: the app's, whose writes run on the
GUI thread) never flushes: its writes only mark, its searches match the marked rows in a
TEMP index of their own (`stand_ins.index_unflushed`), and another connection's upkeep
indexes them a small batch at a time (`flush_step`, `background_index`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import apsw
import orjson

from memgui.core.errors import BrainBusy
from memgui.core.search import fts_merge, textindex
from memgui.core.storage import schema
from memgui.core.storage.db import Database

log = logging.getLogger(__name__)

# Few enough that the write which indexes them stays short on a big brain (256 took 90 ms
# of CPU, 250-300 ms on the clock, at 1M traces; 32 take 2-9 ms), enough to spare most adds
# the index segment a commit writes (docs/performance.md, "Writes without stalls").
FLUSH_AFTER = 32

PENDING_TABLE = """
CREATE TABLE IF NOT EXISTS memgui_fts_pending (
  rowid   INTEGER PRIMARY KEY,
  indexed INTEGER NOT NULL,
  content TEXT,
  tags    TEXT
)
"""


def tags_list(raw: str | None) -> list[str]:
    try:
        value = orjson.loads(raw or "[]")
    except orjson.JSONDecodeError:
        try:  # what orjson refuses (a lone surrogate), json may still read
            value = json.loads(raw or "[]")
        except ValueError:
            return []
    return [t for t in value if isinstance(t, str)] if isinstance(value, list) else []


# `indexed` of a pending row: 0 new (in neither index), 1 in both with the text kept here,
# 2 changed by another program, which kept AgentOS's index itself (schema.MEMGUI_TRIGGERS),
# 3 new, on a rowid another program deleted (memgui_fts may still hold that row's words).
NEW, INDEXED, FOREIGN, NEW_ON_FOREIGN = 0, 1, 2, 3
# A new row of this connection on a rowid a trigger marked: its stale entry goes too.
MARK_NEW_SQL = (
    "INSERT INTO memgui_fts_pending(rowid, indexed) VALUES (?, 0) "
    "ON CONFLICT(rowid) DO UPDATE SET indexed = 3 WHERE indexed = 2"
)


def mark_new(db: Database, rowid: int) -> None:
    db.conn.execute(MARK_NEW_SQL, (rowid,))
    db.pending_marks += 1


def mark_changed(db: Database, rowid: int) -> None:
    """Call before the row's text changes or the row goes: remembers what is indexed now
    (after another program's change, its text is what that program indexed)."""
    db.conn.execute(
        "INSERT INTO memgui_fts_pending(rowid, indexed, content, tags) "
        "SELECT rowid, 1, content, tags FROM memory_traces WHERE rowid = ? "
        "ON CONFLICT(rowid) DO UPDATE SET indexed = 1, content = excluded.content, "
        "tags = excluded.tags WHERE indexed = 2",
        (rowid,),
    )
    db.pending_marks += 1


FLUSH_BATCH = 5000  # pending rows read and indexed at a time: a big import's text is not
# all held in memory at once


def flush_in_transaction(db: Database) -> int:
    """Bring both indexes up to date; the caller holds the write transaction.

    Pending rows are taken in rowid order, a batch at a time, with one statement per index
    per batch (`executemany`): a batch's old entries out first, then its current text in.
    Each row is pending once, so the order per row is kept.
    """
    steps = flushing(db)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return int(done.value)


def flush_due(db: Database) -> bool:
    """Whether the write about to commit indexes the marked rows in its own transaction:
    once `FLUSH_AFTER` have gathered, unless the connection indexes later, and at every
    write while another program writes the brain too (see `BrainWrite.__exit__`)."""
    if not db.pending_marks:
        return False
    if db.is_shared():
        return True
    return not db.index_later and db.pending_marks >= FLUSH_AFTER


def _pending_rows(db: Database, after: int, limit: int) -> list[tuple[Any, ...]]:
    """Up to `limit` pending rows past rowid `after`, in rowid order, with their text now;
    marks the brain shared when one was another program's."""
    rows = list(
        db.conn.execute(
            f"SELECT p.rowid, p.indexed, p.content, p.tags, t.content, t.tags, {_TITLE} "
            "FROM memgui_fts_pending p LEFT JOIN memory_traces t ON t.rowid = p.rowid "
            "WHERE p.rowid > ? ORDER BY p.rowid LIMIT ?",
            (after, limit),
        )
    )
    if not db.is_shared() and any(row[1] >= FOREIGN for row in rows):
        db.mark_shared()  # another program wrote: index at every commit from now on
    return rows


def flushing(db: Database, batch: int = FLUSH_BATCH) -> Generator[int, None, int]:
    """`flush_in_transaction` a batch of `batch` rows at a time, yielding how many rows are
    indexed so far after each (an import's progress); returns how many in all."""
    agentos = db.has_agentos_fts
    flushed = 0
    after = -1
    while True:
        rows = _pending_rows(db, after, batch)
        if not rows:
            break
        _index_rows(db, rows, agentos)
        flushed += len(rows)
        after = rows[-1][0]
        if len(rows) < batch:
            break  # that was the last batch: no query for an empty one
        yield flushed
    if flushed:
        db.conn.execute("DELETE FROM memgui_fts_pending")
    if flushed >= batch:
        # A bulk write (an import) merges the segments it wrote before it commits: the
        # upkeep's small steps are for the trickle of single writes.
        for _ in merging(db, agentos=agentos):
            yield flushed
    elif flushed:
        for table in fts_merge.tables(db.conn):
            fts_merge.merge_inline(db.conn, table)
    db.pending_marks = 0
    return flushed


def pending_count(db: Database) -> int:
    """How many rows wait for the full-text indexes (a count of the pending table)."""
    return int(db.conn.execute("SELECT count(*) FROM memgui_fts_pending").get)


_TITLE = schema.TITLE_SQL.format(m="t.metadata")
# A row as memgui_fts is filled from it: rowid, content, tags (JSON), title.
ROW_TEXT_SQL = f"SELECT rowid, content, tags, {_TITLE} FROM memory_traces t"


def _index_rows(db: Database, rows: list[tuple[Any, ...]], agentos: bool) -> None:
    if agentos:
        indexed = [(row[0], row[2], row[3]) for row in rows if row[1] == INDEXED]
        # Another program's rows are in AgentOS's index already: it wrote them there.
        # (NEW_ON_FOREIGN rows are not: that program deleted its row's entry.)
        own = [(r[0], r[4], r[5]) for r in rows if r[4] is not None and r[1] != FOREIGN]
        if indexed or own:  # its setting is left alone when nothing is written to it
            with _agentos_index_unmerged(db):
                db.conn.executemany(
                    "INSERT INTO memory_traces_fts(memory_traces_fts, rowid, content, tags) "
                    "VALUES ('delete', ?, ?, ?)",
                    indexed,
                )
                db.conn.executemany(
                    "INSERT INTO memory_traces_fts(rowid, content, tags) VALUES (?, ?, ?)", own
                )
    gone = [(row[0],) for row in rows if row[1] != NEW]
    if gone:
        db.conn.executemany("DELETE FROM memgui_fts WHERE rowid = ?", gone)
    current = [(r[0], r[4], r[5], r[6]) for r in rows if r[4] is not None]
    texts = list(indexed_text(current))
    db.conn.executemany(INSERT_MEMGUI_FTS, texts)
    if schema.STEMS_TABLE in db.tables:  # schema 9: the same rows, stemmed
        if gone:
            db.conn.executemany(DELETE_STEMS, gone)
        db.conn.executemany(INSERT_STEMS, texts)


AGENTOS_AUTOMERGE = 4  # FTS5's default, which AgentOS's index keeps


@contextmanager
def _agentos_index_unmerged(db: Database) -> Iterator[None]:
    """AgentOS's index merges its segments inside the writes that fill it (FTS5's
    automerge, which AgentOS keeps): at 1M traces that merge made one write in 32 take
    30 ms. Around memgui's writes to it, automerge is 0 and FTS5 writes out what it holds
    before the setting is put back, all in the caller's transaction (a rollback undoes the
    setting too); the upkeep merges that index in steps (`fts_merge.upkeep_tables`).
    AgentOS's own writes go on merging as they always did."""
    conn = db.conn
    row = conn.execute("SELECT v FROM memory_traces_fts_config WHERE k = 'automerge'").fetchone()
    setting = AGENTOS_AUTOMERGE if row is None else row[0]
    if setting == 0:
        yield
        return
    conn.execute("INSERT INTO memory_traces_fts(memory_traces_fts, rank) VALUES ('automerge', 0)")
    yield
    conn.execute("INSERT INTO memory_traces_fts(memory_traces_fts) VALUES ('flush')")
    conn.execute(
        "INSERT INTO memory_traces_fts(memory_traces_fts, rank) VALUES ('automerge', ?)",
        (setting,),
    )


def indexed_rows(db: Database, table: str) -> int:
    """How many rows the FTS5 index `table` holds, read from its averages record (FTS5's
    block 1 of `{table}_data` starts with the row count as a varint): no scan."""
    try:
        row = db.conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    except apsw.SQLError:
        return 0
    if row is None or not row[0]:
        return 0
    count = 0
    for i, byte in enumerate(bytes(row[0][:9])):
        if i == 8:  # SQLite's varint: the ninth byte gives all 8 bits
            return (count << 8) | byte
        count = (count << 7) | (byte & 0x7F)
        if byte < 0x80:
            break
    return count


def has_pending(db: Database) -> bool:
    if "memgui_fts_pending" not in db.tables:
        return False
    with db.lock:
        return db.conn.execute("SELECT EXISTS (SELECT 1 FROM memgui_fts_pending)").get


class Step(NamedTuple):
    rows: int  # indexed (0: none waits)
    held_s: float  # the write lock held, from BEGIN IMMEDIATE to COMMIT
    cpu_s: float  # this thread's CPU meanwhile


def flush_step(db: Database, rows: int, wait_s: float | None = None) -> Step:
    """Index the first `rows` pending rows (in rowid order) in a write transaction of their
    own, so that a writer waiting for the lock waits for a small batch only. `wait_s` for
    another connection's write lock (`BrainBusy`)."""
    if db.readonly or not has_pending(db):
        return Step(0, 0.0, 0.0)
    with db.lock:
        with db.write("index", "index", kind="index", wait_s=wait_s):
            locked, cpu = time.perf_counter(), time.thread_time()
            taken = _pending_rows(db, -1, rows)
            if taken:
                _index_rows(db, taken, db.has_agentos_fts)
                db.conn.execute("DELETE FROM memgui_fts_pending WHERE rowid <= ?", (taken[-1][0],))
        return Step(len(taken), time.perf_counter() - locked, time.thread_time() - cpu)


def flush(db: Database, wait_s: float | None = None) -> int:
    """Flush in a transaction of its own (before a search, at close); `wait_s` for another
    connection's write lock (else `BrainBusy`; the rows stay marked for a later flush)."""
    if db.readonly or not has_pending(db):
        return 0
    with db.write("index", "index", wait_s=wait_s) as _batch:
        return flush_in_transaction(db)


def flush_unless_busy(db: Database) -> bool:
    """Flush before a search unless another connection holds the write lock longer than
    bookkeeping waits (`Database.bookkeeping_wait_s`); False when the rows wait still.
    A connection that indexes later never flushes here: False while any row waits."""
    if db.index_later:
        return not has_pending(db)
    try:
        flush(db, db.bookkeeping_wait_s)
    except BrainBusy as busy:
        log.info("searching with rows not yet indexed: %s", busy)
        return False
    return True


INSERT_MEMGUI_FTS = "INSERT INTO memgui_fts(rowid, content, tags, title) VALUES (?, ?, ?, ?)"
INSERT_STEMS = INSERT_MEMGUI_FTS.replace("memgui_fts", schema.STEMS_TABLE)
DELETE_STEMS = f"DELETE FROM {schema.STEMS_TABLE} WHERE rowid = ?"


def indexed_text(
    rows: Iterable[tuple[Any, ...]],
) -> Iterator[tuple[int, str, str, str]]:
    """(rowid, content, tags, title) rows as memgui_fts holds them: segmented text, tags as
    words. A generator: a whole brain's segmented text is never held at once (a migration)."""
    segment = textindex.segment
    return (
        (r, segment(c or ""), textindex.tags_text(tags_list(t)), segment(title or ""))
        for r, c, t, title in rows
    )


def fill_temp_index(
    db: Database,
    name: str,
    rows: Iterable[tuple[Any, ...]],
    tokenize: str = schema.MEMGUI_TOKENIZE,
) -> None:
    """A TEMP FTS5 table `name` (this connection's alone, in memory; writes nothing to the
    file) holding `rows` (as `ROW_TEXT_SQL` reads them) as memgui_fts (or, with the stems'
    `tokenize`, memgui_stems) would: a stand-in where the brain's index cannot serve."""
    columns = ", ".join(schema.MEMGUI_FTS_COLUMNS)
    db.conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{name} USING fts5({columns}, "
        f"tokenize='{tokenize}')"
    )
    db.conn.execute(f"DELETE FROM {name}")
    db.conn.executemany(
        f"INSERT INTO {name}(rowid, {columns}) VALUES (?, ?, ?, ?)", indexed_text(rows)
    )


def index_all(db: Database) -> None:
    """Fill memgui_fts from every row (migration, rebuild); the AgentOS index is kept, and
    what was pending for it is written first."""
    db.conn.execute(PENDING_TABLE)
    flush_in_transaction(db)
    rebuild_memgui_index(db.conn)


def rebuild_memgui_index(conn: apsw.Connection) -> None:
    """memgui_fts again from every row of `memory_traces` (nothing else is touched)."""
    conn.execute("INSERT INTO memgui_fts(memgui_fts) VALUES ('delete-all')")
    # Read row by row as the index takes them: a big brain's text is never held at once.
    rows = indexed_text(conn.execute(ROW_TEXT_SQL))
    if "title" not in {r[1] for r in conn.execute("PRAGMA table_info(memgui_fts)")}:
        # A copy of a brain of schema 2 (a SQLite export of one not yet migrated).
        conn.executemany(
            "INSERT INTO memgui_fts(rowid, content, tags) VALUES (?, ?, ?)",
            (row[:3] for row in rows),
        )
        return
    # Schema 6's merge settings (a copy's index is a new table: FTS5's defaults), and the
    # segments the rebuild wrote merged before it commits.
    for statement in schema.MEMGUI_FTS_CONFIG:
        conn.execute(statement)
    conn.executemany(INSERT_MEMGUI_FTS, rows)
    fts_merge.merge_all(conn)
    stems = schema.STEMS_TABLE
    if conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (stems,)
    ).fetchone():
        conn.execute(f"INSERT INTO {stems}({stems}) VALUES ('delete-all')")
        fill_stems(conn)


def fill_stems(conn: apsw.Connection) -> int:
    """memgui_stems from every row of `memory_traces` (schema 9's merge settings set, its
    segments merged at the end); how many rows it took."""
    for statement in schema.MEMGUI_STEMS_CONFIG:
        conn.execute(statement)
    taken = 0
    for done in fill_stems_steps(conn):
        taken = done
    fts_merge.merge_all(conn, schema.STEMS_TABLE)
    return taken


STEMS_FILL_BATCH = 50_000  # rows a step of the stemmed index's fill (its progress)


def fill_stems_steps(conn: apsw.Connection, after: int = -1) -> Iterator[int]:
    """Index the rows past rowid `after` in memgui_stems, `STEMS_FILL_BATCH` at a time,
    yielding how many so far (the migration logs its progress)."""
    taken = 0
    while True:
        rows = list(
            conn.execute(f"{ROW_TEXT_SQL} WHERE rowid > ? ORDER BY rowid LIMIT ?",
                         (after, STEMS_FILL_BATCH))
        )  # fmt: skip
        if not rows:
            return
        conn.executemany(INSERT_STEMS, indexed_text(rows))
        taken += len(rows)
        after = rows[-1][0]
        yield taken


# --- a bulk insert's rows, indexed as they are written (an import) ---------------------------


def index_new(db: Database, rows: list[tuple[int, str, str, list[str], str | None]]) -> None:
    """Enter rows this connection has just inserted, in ascending rowid order, straight into
    the full-text indexes, in the caller's transaction: what the flush of their pending
    marks would write, without the marks and without reading the rows back.

    `rows`: (rowid, content, tags as the row's JSON, tags, title). A rowid the pending table
    names already (another program's row deleted there: memgui_fts may still hold its
    words) is marked as `mark_new` marks it instead, and the flush indexes it.
    """
    if not rows:
        return
    conn = db.conn
    held = {
        rowid
        for (rowid,) in conn.execute(
            "SELECT rowid FROM memgui_fts_pending WHERE rowid BETWEEN ? AND ?",
            (rows[0][0], rows[-1][0]),
        )
    }
    if held:
        marked = [(row[0],) for row in rows if row[0] in held]
        conn.executemany(MARK_NEW_SQL, marked)
        db.pending_marks += len(marked)
        rows = [row for row in rows if row[0] not in held]
    if db.has_agentos_fts:
        conn.executemany(
            "INSERT INTO memory_traces_fts(rowid, content, tags) VALUES (?, ?, ?)",
            [row[:3] for row in rows],
        )
    segment, tags_text = textindex.segment, textindex.tags_text
    texts = [(r, segment(c), tags_text(tags), segment(t or "")) for r, c, _, tags, t in rows]
    conn.executemany(INSERT_MEMGUI_FTS, texts)
    if schema.STEMS_TABLE in db.tables:  # schema 9: the same rows, stemmed
        conn.executemany(INSERT_STEMS, texts)


def merging(db: Database, agentos: bool = False) -> Iterator[None]:
    """Merge the segments a bulk write left (as `flushing` does after a big flush), a step
    at a time, inside the caller's transaction; yields after each step. With `agentos`,
    AgentOS's index too (a flush fills it without merging: `_agentos_index_unmerged`)."""
    chosen = fts_merge.upkeep_tables if agentos else fts_merge.tables
    for table in chosen(db.conn):
        # AgentOS's index merges as AgentOS merges it: never lifted.
        yield from fts_merge.bulk_steps(db.conn, table, lift=table != fts_merge.AGENTOS_TABLE)
