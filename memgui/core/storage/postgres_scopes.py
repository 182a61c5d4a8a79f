"""The SQL that picks a scope's traces and the expired ones in a PostgreSQL brain, as
`core/scopes.py` has it on SQLite; each row comes locked against other writers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core.storage.postgres import COLUMNS

if TYPE_CHECKING:
    import psycopg

# Where a trace names the users it came from (AgentOS turnUserId / contributors), in
# metadata that is JSON text when another program wrote it well.
_META = "(CASE WHEN metadata IS JSON OBJECT THEN metadata::jsonb END)"
_USER_MATCH = (
    f"({_META} ->> 'userId' = %(u)s OR {_META} ->> 'turnUserId' = %(u)s OR "
    f"(jsonb_typeof({_META} -> 'contributors') = 'array' AND {_META} -> 'contributors' ? %(u)s))"
)


def scope_rows(
    conn: psycopg.Connection[tuple[Any, ...]],
    brain_id: str,
    scope: str,
    scope_id: str,
    user_id: str | None = None,
) -> list[tuple[Any, ...]]:
    """The traces of one scope id (forgotten ones too), oldest first; with `user_id`, only
    those that name that user."""
    sql = (
        f"SELECT {COLUMNS} FROM memory_traces WHERE brain_id = %(b)s AND scope = %(s)s "
        "AND scope_id = %(i)s"
    )
    if user_id is not None:
        sql += f" AND {_USER_MATCH}"
    return conn.execute(
        sql + " ORDER BY created_at, id FOR UPDATE",
        {"b": brain_id, "s": scope, "i": scope_id, "u": user_id},
    ).fetchall()


def expired_rows(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, now: int
) -> list[tuple[Any, ...]]:
    """The traces whose time to live has passed (`expires_at < now`, strictly)."""
    return conn.execute(
        f"SELECT {COLUMNS} FROM memory_traces WHERE brain_id = %s AND expires_at IS NOT NULL "
        "AND expires_at < %s ORDER BY created_at, id FOR UPDATE",
        (brain_id, now),
    ).fetchall()


def live_rows(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, lock: bool = False
) -> list[tuple[Any, ...]]:
    """Every live trace of the brain, oldest first (what a consolidation reads); with
    `lock`, held against other writers until the transaction ends."""
    return conn.execute(
        f"SELECT {COLUMNS} FROM memory_traces WHERE brain_id = %s AND deleted = 0 "
        "ORDER BY created_at, id" + (" FOR UPDATE" if lock else ""),
        (brain_id,),
    ).fetchall()
