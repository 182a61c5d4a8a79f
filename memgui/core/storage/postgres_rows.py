"""The rows beside traces on PostgreSQL (knowledge nodes and edges, documents, chunks, images,
conversations, messages, feedback), written, changed and reverted as `journal_rows` does in a
file: each write journaled with an op of its kind, the row's columns but its BLOBs in
`before` / `after`, so reverting an import's batch removes or restores them too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core.errors import Conflict
from memgui.core.model import JournalEntry
from memgui.core.storage.journal_rows import TABLES, columns, journal_row
from memgui.core.storage.journal_rows import _json as parsed
from memgui.core.storage.json_text import dumps
from memgui.core.storage.postgres_journal import journal
from memgui.core.storage.transaction import WriteBatch

if TYPE_CHECKING:
    import psycopg

# Rows that other rows name: reverting one of them first needs its dependants gone.
DEPENDANTS = {
    "node": ("knowledge_edges", "source_id = %(id)s OR target_id = %(id)s"),
    "document": ("document_chunks", "document_id = %(id)s"),
    "conversation": ("messages", "conversation_id = %(id)s"),
}


def insert_row(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    op: str,
    row: dict[str, Any],
) -> bool:
    """Insert one row unless its id is taken, and journal it; False when it was there.
    `row`'s JSON columns are values (dumped here), its BLOBs bytes."""
    table, _ordered, json_cols, _blobs = TABLES[op]
    names = [c for c in columns(op) if c in row]
    values = [dumps(row[c]) if c in json_cols else row[c] for c in names]
    marks = ", ".join(["%s"] * (len(names) + 1))
    # feedback's id is an identity column: a row put back keeps its id
    overriding = " OVERRIDING SYSTEM VALUE" if op == "feedback" and "id" in row else ""
    cursor = conn.execute(
        f"INSERT INTO {table} (brain_id, {', '.join(names)}){overriding} VALUES ({marks}) "
        "ON CONFLICT DO NOTHING",
        (brain_id, *values),
    )
    if cursor.rowcount == 0:
        return False
    journal(conn, batch, brain_id, op, row["id"], None, journal_row(op, row))
    return True


def update_row(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    op: str,
    before: dict[str, Any],
    after: dict[str, Any],
) -> None:
    """Set the columns `after` names and journal the change (`before` holds their old values)."""
    table, _ordered, json_cols, _blobs = TABLES[op]
    names = [c for c in after if c != "id"]
    sets = ", ".join(f"{c} = %s" for c in names)
    values = [dumps(after[c]) if c in json_cols else after[c] for c in names]
    conn.execute(
        f"UPDATE {table} SET {sets} WHERE brain_id = %s AND id = %s",
        (*values, brain_id, after["id"]),
    )
    journal(conn, batch, brain_id, op, after["id"], before, after)


def current(
    conn: psycopg.Connection[tuple[Any, ...]],
    brain_id: str,
    op: str,
    row_id: str,
    like: dict[str, Any],
    lock: bool = False,
) -> dict[str, Any] | None:
    """The row as it is now, in the journal's shape, with the columns `like` names."""
    table, _ordered, json_cols, blobs = TABLES[op]
    names = [c for c in columns(op) if c in like and c not in blobs] or ["id"]
    row = conn.execute(
        f"SELECT {', '.join(names)} FROM {table} WHERE brain_id = %s AND id = %s"
        + (" FOR UPDATE" if lock else ""),
        (brain_id, row_id),
    ).fetchone()
    if row is None:
        return None
    return {c: parsed(v) if c in json_cols else v for c, v in zip(names, row, strict=True)}


def undo(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, batch: WriteBatch, entry: JournalEntry
) -> None:
    """The inverse of one journaled row write, journaled in the revert's batch; as in a file
    (`journal_rows.undo`), the row must still be as the batch left it, else `Conflict`."""
    op, row_id = entry.op, entry.trace_id
    table = TABLES[op][0]
    now = current(conn, brain_id, op, row_id, entry.after or entry.before or {}, lock=True)
    if entry.after is not None and now != entry.after:
        why = "no longer exists" if now is None else "changed since the batch"
        raise Conflict.because(row_id, f"{op} {row_id} {why}")
    if entry.after is None and now is not None:
        raise Conflict.because(row_id, f"{op} {row_id} exists again")
    if entry.before is None and entry.after is not None:  # the row was added: remove it
        dependant = DEPENDANTS.get(op)
        if dependant is not None:
            other, where = dependant
            row = conn.execute(
                f"SELECT count(*) FROM {other} WHERE brain_id = %(b)s AND ({where})",
                {"b": brain_id, "id": row_id},
            ).fetchone()
            used = int(row[0]) if row else 0
            if used:
                raise Conflict.because(
                    row_id, f"{op} {row_id} is used by {used} row(s) of {other} written since"
                )
        conn.execute(f"DELETE FROM {table} WHERE brain_id = %s AND id = %s", (brain_id, row_id))
        journal(conn, batch, brain_id, op, row_id, entry.after, None)
    elif entry.before is not None and entry.after is not None:  # changed: restore
        update_row(conn, batch, brain_id, op, dict(entry.after), dict(entry.before, id=row_id))
    elif entry.before is not None:  # removed (a revert's delete): put it back
        if op == "edge":  # its nodes must still be there
            for node_id in (entry.before["source_id"], entry.before["target_id"]):
                if current(conn, brain_id, "node", node_id, {"id": node_id}) is None:
                    raise Conflict.because(row_id, f"node {node_id} of edge {row_id} is gone")
        put_back = dict(entry.before)
        if op == "image":
            put_back.setdefault("data", b"")  # BLOBs are never journaled
        insert_row(conn, batch, brain_id, op, put_back)


def let_go_of_trace(
    conn: psycopg.Connection[tuple[Any, ...]], batch: WriteBatch, brain_id: str, trace_id: str
) -> None:
    """The rows beside a trace being deleted, as a file lets them go
    (`journal_rows.let_go_of_trace`), journaled so a revert puts them back: a document chunk
    forgets its trace, a retrieval feedback row goes (both hold a foreign key to it)."""
    where = (brain_id, trace_id)
    chunks = conn.execute(
        "UPDATE document_chunks SET trace_id = NULL WHERE brain_id = %s AND trace_id = %s "
        "RETURNING id",
        where,
    ).fetchall()
    for (chunk_id,) in sorted(chunks):
        before = {"id": chunk_id, "trace_id": trace_id}
        journal(
            conn, batch, brain_id, "chunk", chunk_id, before, {"id": chunk_id, "trace_id": None}
        )
    feedback = conn.execute(
        "DELETE FROM retrieval_feedback WHERE brain_id = %s AND trace_id = %s "
        "RETURNING id, trace_id, signal, query, created_at",
        where,
    ).fetchall()
    for row_id, row_trace, signal, query, created_at in sorted(feedback):
        row = {"id": row_id, "trace_id": row_trace, "signal": signal, "query": query}
        journal(
            conn, batch, brain_id, "feedback", str(row_id), row | {"created_at": created_at}, None
        )
