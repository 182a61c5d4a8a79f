"""A hash of every row of one brain in a file: what a lossless copy must keep.

The traces as memgui reads them (an AgentOS file not yet migrated has memgui's columns
derived) with their embedding bytes, by id; the links; the journal in order (its ids are the
file's own); the meta rows but the one naming the file's layout version.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from memgui.core.brain import Brain
from memgui.core.model import Trace
from memgui.core.storage import postgres_tables, schema
from memgui.core.storage.store import select_columns


def _digest(row: Any) -> str:
    return hashlib.sha256(repr(tuple(row)).encode()).hexdigest()


def file_rows(path: Path, brain_id: str) -> dict[str, Any]:
    """{"traces": {id: hash}, "links": [hash…], "journal": [hash…], "meta": {key: value},
    "tables": {AgentOS's other tables: [hash…]}}."""
    brain = Brain.open(path, brain_id, create=False)
    try:
        conn, tables = brain.db.conn, brain.db.tables
        columns = select_columns(brain.db).split(", ", 1)[1]  # no rowid
        traces = {
            row[0]: _digest(row)
            for row in conn.execute(
                f"SELECT {columns}, embedding FROM memory_traces WHERE brain_id = ?", (brain_id,)
            )
        }

        def rows(table: str, columns: str, order: str) -> list[str]:
            if table not in tables:
                return []
            sql = f"SELECT {columns} FROM {table} WHERE brain_id = ? ORDER BY {order}"
            return [_digest(row) for row in conn.execute(sql, (brain_id,))]

        meta = dict(
            conn.execute("SELECT key, value FROM brain_meta WHERE brain_id = ?", (brain_id,))
        )
        meta.pop(schema.SCHEMA_KEY, None)
        return {
            "traces": traces,
            "links": rows(
                "memory_links", "from_id, to_id, kind, created_at", "from_id, to_id, kind"
            ),
            "journal": rows(
                "memgui_journal", "at, actor, batch_id, op, trace_id, before, after", "id"
            ),
            "meta": meta,
            "tables": {
                t.name: rows(t.name, t.column_list, t.order) for t in postgres_tables.TABLES
            },
        }
    finally:
        brain.close()


def linked_brain(path: Path, brain_id: str = "team") -> tuple[Trace, Trace, Trace]:
    """A memgui brain of two traces: linked, the first edited (the edit returned, its batch
    in `changes`), the second (with a scope id and an expiry) forgotten."""
    with Brain.open(path, brain_id, actor="test") as brain:
        a = brain.add("first memory about deployments", tags=["ops"], category="DECISION")
        b = brain.add("second memory", scope="thread", scope_id="t1", ttl_secs=3600)
        brain.link(a.id, b.id, "relates_to")
        edit = brain.update(a.id, {"content": "first memory, edited"})
        brain.forget(b.id)
    return a, b, edit
