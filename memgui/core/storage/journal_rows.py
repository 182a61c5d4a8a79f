"""Journal rows: one `memgui_journal` row per change, and the rows beside traces written,
removed and reverted with theirs.

An import writes knowledge nodes and edges, documents, chunks, images, conversations and
messages in the same transaction as its traces. Each such write is journaled in the import's
batch with an op naming the row's kind (`node`, `edge`, `conversation`, …), the row id in
`trace_id`, and the row's columns (without BLOBs) in `before` / `after`, so `revert(batch)`
removes or restores them too: `journal._undo` hands these ops to `undo` here. A trace deleted
takes the AgentOS rows that name it along, journaled the same way (`let_go_of_trace`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from memgui.core.changes import EDGE, LINK, NODE, ROW, TRACE, Event, LinkKey
from memgui.core.errors import Conflict
from memgui.core.model import JournalEntry, now_ms
from memgui.core.storage.db import WriteBatch
from memgui.core.storage.json_text import dumps

if TYPE_CHECKING:
    from memgui.core.model import JournalEntry
    from memgui.core.storage.db import Database

# op -> (table, columns in order, JSON columns, BLOB columns)
TABLES: dict[str, tuple[str, tuple[str, ...], frozenset[str], frozenset[str]]] = {
    "node": (
        "knowledge_nodes",
        ("id", "type", "label", "properties", "embedding", "confidence", "source", "created_at"),
        frozenset({"properties", "source"}),
        frozenset({"embedding"}),
    ),
    "edge": (
        "knowledge_edges",
        ("id", "source_id", "target_id", "type", "weight", "bidirectional", "metadata"),
        frozenset({"metadata"}),
        frozenset(),
    ),
    "document": (
        "documents",
        ("id", "path", "format", "title", "content_hash", "chunk_count", "metadata"),
        frozenset({"metadata"}),
        frozenset(),
    ),
    "chunk": (
        "document_chunks",
        ("id", "document_id", "trace_id", "content", "chunk_index", "page_number", "embedding"),
        frozenset(),
        frozenset({"embedding"}),
    ),
    "image": (
        "document_images",
        ("id", "document_id", "chunk_id", "data", "mime_type", "caption", "page_number"),
        frozenset(),
        frozenset({"data", "embedding"}),
    ),
    "conversation": (
        "conversations",
        ("id", "title", "created_at", "updated_at", "metadata"),
        frozenset({"metadata"}),
        frozenset(),
    ),
    "message": (
        "messages",
        ("id", "conversation_id", "role", "content", "created_at", "metadata"),
        frozenset({"metadata"}),
        frozenset(),
    ),
    # AgentOS's feedback on a trace's retrieval: journaled when a purge removes it.
    "feedback": (
        "retrieval_feedback",
        ("id", "trace_id", "signal", "query", "created_at"),
        frozenset(),
        frozenset(),
    ),
}
# Columns some tables have beyond the ordered ones above.
EXTRA = {
    "edge": ("created_at",),
    "document": ("ingested_at",),
    "image": ("embedding",),
}
ROW_OPS = frozenset(TABLES)
LINK_OPS = frozenset({"link", "unlink"})
# Any other op is a trace's (`review`: the mark of what a person reviewed, in brain_meta).
_CATEGORIES = {op: NODE if op == "node" else EDGE if op == "edge" else ROW for op in TABLES}
_CATEGORIES["review"] = ROW
# Rows that other rows name: reverting one of them first needs its dependants gone.
DEPENDANTS = {
    "node": ("knowledge_edges", "source_id = ?2 OR target_id = ?2"),
    "document": ("document_chunks", "document_id = ?2"),
    "conversation": ("messages", "conversation_id = ?2"),
}


def row_to_entry(row: Sequence[Any]) -> JournalEntry:
    """A journal row (id, at, actor, batch_id, op, trace_id, before, after), on either engine."""
    return JournalEntry(
        row[0],
        row[1],
        row[2],
        row[3],
        row[4],
        row[5],
        _state(row[6]) if row[6] else None,
        _state(row[7]) if row[7] else None,
    )


# orjson reads an integer past 64 bits as a float; such text is read by json, which keeps it.
_LONG_NUMBER = re.compile(r"\d{19}")


def _state(text: str) -> Any:
    """A before/after JSON text as json reads it (orjson for the text it reads the same)."""
    if _LONG_NUMBER.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:  # NaN, lone surrogates: json reads them
            pass
    return json.loads(text)


INSERT_SQL = (
    "INSERT INTO memgui_journal (brain_id, at, actor, batch_id, op, trace_id, before, after) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def journal(
    db: Database,
    batch: WriteBatch,
    brain_id: str,
    op: str,
    trace_id: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> None:
    """One journal row: `op` on `trace_id` (a trace's id, or another row's), before and after;
    noted on the batch as what it changed."""
    db.conn.execute(
        INSERT_SQL,
        (
            brain_id,
            now_ms(),
            batch.actor,
            batch.batch_id,
            op,
            trace_id,
            dumps(before) if before is not None else None,
            dumps(after) if after is not None else None,
        ),
    )
    batch.events.append(event(op, trace_id, before, after))


def event(
    op: str, row_id: str, before: dict[str, Any] | None, after: dict[str, Any] | None
) -> Event:
    """What one journal row changed, as `WriteBatch.events` keeps it."""
    if op in LINK_OPS:
        link = after or before or {}
        key: Any = LinkKey(link["from_id"], link["to_id"], link["kind"])
        return (LINK, key, before is not None, after is not None)
    category = _CATEGORIES.get(op, TRACE)
    key = (op, row_id) if category == ROW else row_id
    return (category, key, before is not None, after is not None)


def columns(op: str) -> tuple[str, ...]:
    return TABLES[op][1] + EXTRA.get(op, ())


def insert_row(db: Any, batch: WriteBatch, brain_id: str, op: str, row: dict[str, Any]) -> bool:
    """INSERT OR IGNORE one row and journal it; False when a row of that id was there."""
    table, _ordered, json_cols, _blobs = TABLES[op]
    names = [c for c in columns(op) if c in row]
    values = [dumps(row[c]) if c in json_cols else row[c] for c in names]
    marks = ", ".join("?" * (len(names) + 1))
    db.conn.execute(
        f"INSERT OR IGNORE INTO {table} (brain_id, {', '.join(names)}) VALUES ({marks})",
        (brain_id, *values),
    )
    if db.conn.changes() == 0:
        return False
    journal(db, batch, brain_id, op, row["id"], None, journal_row(op, row))
    return True


def insert_new_rows(
    db: Any, batch: WriteBatch, brain_id: str, op: str, rows: list[dict[str, Any]]
) -> None:
    """Many rows known to be new (checked in this transaction), in two statements.

    Every row must name the same columns. Journaled like `insert_row`, in bulk: an Obsidian
    vault's wikilinks add thousands of nodes and edges.
    """
    if not rows:
        return
    table, _ordered, json_cols, _blobs = TABLES[op]
    names = [c for c in columns(op) if c in rows[0]]
    marks = ", ".join("?" * (len(names) + 1))
    db.conn.executemany(
        f"INSERT INTO {table} (brain_id, {', '.join(names)}) VALUES ({marks})",
        [(brain_id, *(dumps(row[c]) if c in json_cols else row[c] for c in names)) for row in rows],
    )
    entry = (brain_id, now_ms(), batch.actor, batch.batch_id, op)
    db.conn.executemany(
        "INSERT INTO memgui_journal (brain_id, at, actor, batch_id, op, trace_id, before, after) "
        "VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
        [(*entry, row["id"], dumps(journal_row(op, row))) for row in rows],
    )
    category = _CATEGORIES[op]
    batch.events += [
        (category, (op, row["id"]) if category == ROW else row["id"], False, True) for row in rows
    ]


def delete_rows(
    db: Any, batch: WriteBatch, brain_id: str, op: str, where: str, params: tuple[Any, ...]
) -> int:
    """Delete the rows of `op`'s table that `where` picks (`?2`… are `params`), each one
    journaled as removed so that a revert puts it back. Returns how many went."""
    table, _ordered, json_cols, blobs = TABLES[op]
    if table not in db.tables:
        return 0
    names = [c for c in columns(op) if c not in blobs]
    found = list(
        db.conn.execute(
            f"SELECT {', '.join(names)} FROM {table} WHERE brain_id = ?1 AND ({where})",
            (brain_id, *params),
        )
    )
    for values in found:
        row = {c: _json(v) if c in json_cols else v for c, v in zip(names, values, strict=True)}
        journal(db, batch, brain_id, op, row["id"], row, None)
    if found:
        db.conn.execute(
            f"DELETE FROM {table} WHERE brain_id = ?1 AND ({where})", (brain_id, *params)
        )
    return len(found)


def let_go_of_trace(db: Database, batch: WriteBatch, brain_id: str, trace_id: str) -> None:
    """The AgentOS rows that name a trace being deleted, journaled so a revert puts them
    back: a document chunk forgets its trace (`chunk`), a retrieval feedback row goes
    (`feedback`; both tables hold a foreign key to the trace), and so does its
    knowledge-graph copy (`edge`, `node`)."""
    where = (brain_id, trace_id)
    chunks = list(
        db.conn.execute("SELECT id FROM document_chunks WHERE brain_id = ? AND trace_id = ?", where)
    )
    for (chunk_id,) in chunks:
        before = {"id": chunk_id, "trace_id": trace_id}
        journal(db, batch, brain_id, "chunk", chunk_id, before, {"id": chunk_id, "trace_id": None})
    if chunks:
        db.conn.execute(
            "UPDATE document_chunks SET trace_id = NULL WHERE brain_id = ? AND trace_id = ?", where
        )
    feedback = list(
        db.conn.execute(
            "SELECT id, trace_id, signal, query, created_at FROM retrieval_feedback "
            "WHERE brain_id = ? AND trace_id = ?",
            where,
        )
    )
    for row_id, row_trace, signal, query, created_at in feedback:
        row = {"id": row_id, "trace_id": row_trace, "signal": signal, "query": query}
        journal(
            db, batch, brain_id, "feedback", str(row_id), row | {"created_at": created_at}, None
        )
    if feedback:
        db.conn.execute("DELETE FROM retrieval_feedback WHERE brain_id = ? AND trace_id = ?", where)
    # The trace's knowledge-graph copy goes with it (seed 000, memory_delete): AgentOS's
    # memory_graph node, whose id is the trace's, and every edge naming the trace; so no node
    # stands for a trace the brain no longer holds. Edges first: a revert puts the node back
    # before them.
    delete_rows(db, batch, brain_id, "edge", "source_id = ?2 OR target_id = ?2", where[1:])
    delete_rows(db, batch, brain_id, "node", "id = ?2", where[1:])


def journal_row(op: str, row: dict[str, Any]) -> dict[str, Any]:
    """The row as the journal keeps it: every column but the BLOBs."""
    blobs = TABLES[op][3]
    return {c: row[c] for c in columns(op) if c in row and c not in blobs}


def update_row(
    db: Any,
    batch: WriteBatch,
    brain_id: str,
    op: str,
    before: dict[str, Any],
    after: dict[str, Any],
) -> None:
    """Set the columns `after` names and journal the change (`before` holds their old values)."""
    table, _ordered, json_cols, _blobs = TABLES[op]
    names = [c for c in after if c != "id"]
    sets = ", ".join(f"{c} = ?" for c in names)
    values = [dumps(after[c]) if c in json_cols else after[c] for c in names]
    db.conn.execute(
        f"UPDATE {table} SET {sets} WHERE brain_id = ? AND id = ?",
        (*values, brain_id, after["id"]),
    )
    journal(db, batch, brain_id, op, after["id"], before, after)


def undo(db: Any, bid: str, batch: WriteBatch, entry: JournalEntry) -> None:
    """The inverse of one journaled row write, itself journaled in the revert's batch.

    As with traces, the row must still be as the batch left it, else `Conflict`.
    """
    op = entry.op
    table = TABLES[op][0]
    row_id = entry.trace_id
    current = _current(db, bid, op, row_id, entry.after or entry.before or {})
    if entry.after is not None and current != entry.after:
        why = "no longer exists" if current is None else "changed since the batch"
        raise Conflict.because(row_id, f"{op} {row_id} {why}")
    if entry.after is None and current is not None:
        raise Conflict.because(row_id, f"{op} {row_id} exists again")
    if entry.before is None and entry.after is not None:  # the row was added: remove it
        dependant = DEPENDANTS.get(op)
        if dependant is not None:
            other, where = dependant
            used = db.conn.execute(
                f"SELECT count(*) FROM {other} WHERE brain_id = ?1 AND ({where})", (bid, row_id)
            ).get
            if used:
                raise Conflict.because(
                    row_id, f"{op} {row_id} is used by {used} row(s) of {other} written since"
                )
        db.conn.execute(f"DELETE FROM {table} WHERE brain_id = ? AND id = ?", (bid, row_id))
        journal(db, batch, bid, op, row_id, entry.after, None)
    elif entry.before is not None and entry.after is not None:  # changed: restore
        update_row(db, batch, bid, op, dict(entry.after), dict(entry.before, id=row_id))
    elif entry.before is not None:  # removed (a revert's delete): put it back
        if op == "edge":  # its nodes must still be there
            for node_id in (entry.before["source_id"], entry.before["target_id"]):
                if _current(db, bid, "node", node_id, {"id": node_id}) is None:
                    raise Conflict.because(row_id, f"node {node_id} of edge {row_id} is gone")
        insert_row(db, batch, bid, op, _with_blobs(op, dict(entry.before)))


def _current(
    db: Any, brain_id: str, op: str, row_id: str, like: dict[str, Any]
) -> dict[str, Any] | None:
    """The row as it is now, in the journal's shape, with the columns `like` names."""
    table, _ordered, json_cols, blobs = TABLES[op]
    names = [c for c in columns(op) if c in like and c not in blobs] or ["id"]
    row = db.conn.execute(
        f"SELECT {', '.join(names)} FROM {table} WHERE brain_id = ? AND id = ?",
        (brain_id, row_id),
    ).fetchone()
    if row is None:
        return None
    return {c: _json(v) if c in json_cols else v for c, v in zip(names, row, strict=True)}


def _json(value: Any) -> Any:
    try:
        return json.loads(value)
    except (TypeError, ValueError):  # not JSON (written by another program): compare as is
        return value


def _with_blobs(op: str, row: dict[str, Any]) -> dict[str, Any]:
    """A row put back from the journal: BLOB columns it needs are empty (never journaled)."""
    if op == "image":
        row.setdefault("data", b"")
    return row
