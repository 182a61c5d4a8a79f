"""An imported conversation's rows (AgentOS `conversations` / `messages`), read on either
engine: its head row and its first messages in order, or no head when it is not there.

A file orders messages written at the same millisecond by their order of insertion
(`rowid`); PostgreSQL keeps no such order, so there they follow their ids. The server's two
reads run in one read-only snapshot, so a conversation never shows messages of another
moment than its head.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import apsw
    import psycopg

HEAD_COLUMNS = "id, title, created_at, updated_at, metadata"
MESSAGE_COLUMNS = "id, role, content, created_at, metadata"
Rows = tuple[tuple[Any, ...] | None, list[tuple[Any, ...]]]


def file_rows(conn: apsw.Connection, brain_id: str, conversation_id: str, limit: int) -> Rows:
    """(head, messages) from a brain file; the caller holds its connection's lock."""
    head = conn.execute(
        f"SELECT {HEAD_COLUMNS} FROM conversations WHERE brain_id = ? AND id = ?",
        (brain_id, conversation_id),
    ).fetchone()
    if head is None:
        return None, []
    messages = conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE brain_id = ? AND conversation_id = ? "
        "ORDER BY created_at, rowid LIMIT ?",
        (brain_id, conversation_id, limit),
    ).fetchall()
    return tuple(head), [tuple(m) for m in messages]


def postgres_rows(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, conversation_id: str, limit: int
) -> Rows:
    """(head, messages) from a shared brain, in one read-only snapshot."""
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        head = conn.execute(
            f"SELECT {HEAD_COLUMNS} FROM conversations WHERE brain_id = %s AND id = %s",
            (brain_id, conversation_id),
        ).fetchone()
        if head is None:
            return None, []
        messages = conn.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages "
            "WHERE brain_id = %s AND conversation_id = %s ORDER BY created_at, id LIMIT %s",
            (brain_id, conversation_id, limit),
        ).fetchall()
    return head, messages
