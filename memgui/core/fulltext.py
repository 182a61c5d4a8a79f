"""Keeping both full-text indexes in step with the rows, in batches.

FTS5 writes a new index segment at every commit (about 0.3 ms per index here), which would
dominate a single `add`. So a write only records the row as pending, in the same
transaction; pending rows enter both indexes together when enough have gathered, before
any search, and when the brain is closed. The pending table keeps the text each row had
when it was last indexed, which an external-content FTS5 table needs to delete it.
"""

from __future__ import annotations

import json

from memgui.core import textindex
from memgui.core.db import Database

FLUSH_AFTER = 256

PENDING_TABLE = """
CREATE TABLE IF NOT EXISTS memgui_fts_pending (
  rowid   INTEGER PRIMARY KEY,
  indexed INTEGER NOT NULL,
  content TEXT,
  tags    TEXT
)
"""


def _tags_list(raw: str | None) -> list[str]:
    try:
        value = json.loads(raw or "[]")
    except ValueError:
        return []
    return [t for t in value if isinstance(t, str)] if isinstance(value, list) else []


def mark_new(db: Database, rowid: int) -> None:
    db.conn.execute(
        "INSERT OR IGNORE INTO memgui_fts_pending(rowid, indexed) VALUES (?, 0)", (rowid,)
    )
    db.pending_marks += 1


def mark_changed(db: Database, rowid: int) -> None:
    """Call before the row's text changes or the row goes: remembers what is indexed now."""
    db.conn.execute(
        "INSERT OR IGNORE INTO memgui_fts_pending(rowid, indexed, content, tags) "
        "SELECT rowid, 1, content, tags FROM memory_traces WHERE rowid = ?",
        (rowid,),
    )
    db.pending_marks += 1


def flush_in_transaction(db: Database) -> int:
    """Bring both indexes up to date; the caller holds the write transaction."""
    rows = db.conn.execute(
        "SELECT p.rowid, p.indexed, p.content, p.tags, t.content, t.tags "
        "FROM memgui_fts_pending p LEFT JOIN memory_traces t ON t.rowid = p.rowid"
    ).fetchall()
    if not rows:
        db.pending_marks = 0
        return 0
    agentos = db.has_agentos_fts
    for rowid, indexed, old_content, old_tags, content, tags in rows:
        if indexed:
            if agentos:
                db.conn.execute(
                    "INSERT INTO memory_traces_fts(memory_traces_fts, rowid, content, tags) "
                    "VALUES ('delete', ?, ?, ?)",
                    (rowid, old_content, old_tags),
                )
            db.conn.execute("DELETE FROM memgui_fts WHERE rowid = ?", (rowid,))
        if content is not None:
            if agentos:
                db.conn.execute(
                    "INSERT INTO memory_traces_fts(rowid, content, tags) VALUES (?, ?, ?)",
                    (rowid, content, tags),
                )
            db.conn.execute(
                "INSERT INTO memgui_fts(rowid, content, tags) VALUES (?, ?, ?)",
                (rowid, textindex.segment(content), textindex.tags_text(_tags_list(tags))),
            )
    db.conn.execute("DELETE FROM memgui_fts_pending")
    db.pending_marks = 0
    return len(rows)


def has_pending(db: Database) -> bool:
    if "memgui_fts_pending" not in db.tables:
        return False
    with db.lock:
        return db.conn.execute("SELECT EXISTS (SELECT 1 FROM memgui_fts_pending)").fetchone()[0]


def flush(db: Database) -> int:
    """Flush in a transaction of its own (before a search, at close)."""
    if db.readonly or not has_pending(db):
        return 0
    with db.write("index", "index") as _batch:
        return flush_in_transaction(db)


def index_all(db: Database) -> None:
    """Fill memgui_fts from every row (migration, rebuild); the AgentOS index is kept."""
    db.conn.execute(PENDING_TABLE)
    db.conn.execute("DELETE FROM memgui_fts")
    db.conn.execute("DELETE FROM memgui_fts_pending")
    rows = db.conn.execute("SELECT rowid, content, tags FROM memory_traces").fetchall()
    db.conn.executemany(
        "INSERT INTO memgui_fts(rowid, content, tags) VALUES (?, ?, ?)",
        (
            (r[0], textindex.segment(r[1] or ""), textindex.tags_text(_tags_list(r[2])))
            for r in rows
        ),
    )
