"""The SQL of links between traces in a PostgreSQL brain, as `core/links.py` and the link
part of `core/journal.py` have it on SQLite. A link row is journaled under its first trace."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core.storage.postgres_journal import journal
from memgui.core.storage.transaction import WriteBatch

if TYPE_CHECKING:
    import psycopg

_KEY = "brain_id = %s AND from_id = %s AND to_id = %s AND kind = %s"


def created_at(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, a: str, b: str, kind: str
) -> int | None:
    """When the link was made, or None when there is no such link (locked until the
    transaction ends, so a link and its check never part)."""
    row = conn.execute(
        f"SELECT created_at FROM memory_links WHERE {_KEY} FOR UPDATE", (brain_id, a, b, kind)
    ).fetchone()
    return int(row[0]) if row is not None else None


def insert(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    link: dict[str, Any],
) -> None:
    """A link row (`from_id`, `to_id`, `kind`, `created_at`), journaled as `link`."""
    conn.execute(
        "INSERT INTO memory_links (brain_id, from_id, to_id, kind, created_at) "
        "VALUES (%s, %s, %s, %s, %s)",
        (brain_id, link["from_id"], link["to_id"], link["kind"], link["created_at"]),
    )
    journal(conn, batch, brain_id, "link", link["from_id"], None, link)


def delete(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    link: dict[str, Any],
) -> None:
    """Remove a link row, journaled as `unlink`."""
    conn.execute(
        f"DELETE FROM memory_links WHERE {_KEY}",
        (brain_id, link["from_id"], link["to_id"], link["kind"]),
    )
    journal(conn, batch, brain_id, "unlink", link["from_id"], link, None)


def has_links(conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, trace_id: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM memory_links WHERE brain_id = %s AND (from_id = %s OR to_id = %s) LIMIT 1",
        (brain_id, trace_id, trace_id),
    ).fetchone()
    return row is not None


def changed_since(
    conn: psycopg.Connection[tuple[Any, ...]],
    brain_id: str,
    entry_id: int,
    batch_ids: tuple[str, str],
    link: dict[str, Any],
) -> bool:
    """A later batch (not one of `batch_ids`) linked or unlinked the same pair."""
    row = conn.execute(
        "SELECT 1 FROM memgui_journal WHERE brain_id = %s AND trace_id = %s AND id > %s "
        "AND batch_id NOT IN (%s, %s) AND op IN ('link', 'unlink') "
        "AND coalesce(after, before)::jsonb ->> 'to_id' = %s "
        "AND coalesce(after, before)::jsonb ->> 'kind' = %s LIMIT 1",
        (brain_id, link["from_id"], entry_id, *batch_ids, link["to_id"], link["kind"]),
    ).fetchone()
    return row is not None


def related_rows(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, trace_id: str, limit: int
) -> list[tuple[Any, ...]]:
    """(from_id, to_id, kind, created_at, content, metadata) of a trace's links to live traces,
    newest first."""
    return conn.execute(
        "SELECT l.from_id, l.to_id, l.kind, l.created_at, t.content, t.metadata "
        "FROM memory_links l "
        "JOIN memory_traces t ON t.brain_id = l.brain_id AND t.deleted = 0 AND "
        "t.id = CASE WHEN l.from_id = %(t)s THEN l.to_id ELSE l.from_id END "
        "WHERE l.brain_id = %(b)s AND (l.from_id = %(t)s OR l.to_id = %(t)s) "
        "ORDER BY l.created_at DESC, l.from_id DESC, l.to_id DESC, l.kind DESC LIMIT %(n)s",
        {"t": trace_id, "b": brain_id, "n": limit},
    ).fetchall()


def links_of(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, trace_id: str
) -> list[tuple[Any, ...]]:
    """(from_id, to_id, kind, created_at) of a trace's links, oldest first, locked."""
    return conn.execute(
        "SELECT from_id, to_id, kind, created_at FROM memory_links WHERE brain_id = %(b)s "
        "AND (from_id = %(t)s OR to_id = %(t)s) ORDER BY created_at, from_id, to_id, kind "
        "FOR UPDATE",
        {"b": brain_id, "t": trace_id},
    ).fetchall()
