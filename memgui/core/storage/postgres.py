"""A brain in PostgreSQL: the connection, the schema, and the SQL of traces and the journal.

The layout is AgentOS's Postgres one (every key holds `brain_id`, times are BIGINT epoch
milliseconds, embeddings BYTEA, the full-text entry the trace's `_tsv` tsvector under a GIN
index, written with the row) plus memgui's additions as on SQLite: the version, scope id,
expiry, category and embedding status columns, the journal and the links. The facade
(`core/shared_brain.py`) checks arguments and holds the transaction; nothing here does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core.errors import PostgresPasswordRequired, PostgresUnavailable, SchemaTooNew
from memgui.core.model import JournalEntry, TraceFilter
from memgui.core.storage import (
    journal_states,
    postgres_graph,
    postgres_notify,
    postgres_rows,
    postgres_tables,
    store,
)
from memgui.core.storage.engine import PostgresAddress, with_password
from memgui.core.storage.journal_rows import row_to_entry
from memgui.core.storage.json_text import dumps
from memgui.core.storage.postgres_journal import journal
from memgui.core.storage.postgres_schema import SCHEMA
from memgui.core.storage.transaction import WriteBatch

if TYPE_CHECKING:
    import psycopg

SCHEMA_KEY = "memgui_pg_schema"  # brain_meta: the memgui layout a brain id was written in
# 1: traces, links, journal. 2: the triggers that announce changes (postgres_notify);
# 3: AgentOS's knowledge graph tables, the index of a node's trace id and of a link's to_id;
# 4: a trace's journal rows hold what the write changed (`journal_states`; the older rows,
# whole snapshots, are read as they are);
# 5: AgentOS's other tables (`postgres_tables`: documents, conversations, logs …) and the
# graph's REAL columns as DOUBLE PRECISION, so a copy between a file and PostgreSQL loses
# nothing.
# 7: the knowledge graph's tables announce their changes too (`postgres_notify`: a node by
# its id, an edge by its two ends), so the graph window hears another writer's graph edits.
SCHEMA_VERSION = 7
AGENTOS_SCHEMA_VERSION = "2"
# Full text as AgentOS's Postgres brains have it: English stemming (deploy finds deployed).
TEXT_CONFIG = "english"
_SCHEMA_LOCK = 0x6D656D677569  # the advisory lock the DDL runs under ("memgui")

# The columns in the order `store.row_to_snapshot` reads (no rowid on Postgres: 0).
COLUMNS = (
    "0, id, type, scope, scope_id, content, strength, created_at, last_accessed, "
    "retrieval_count, tags, emotions, metadata, deleted, expires_at, category, version, "
    "updated_at, embedding_status"
)
_TSV = f"to_tsvector('{TEXT_CONFIG}', %s)"
_INSERT = (
    "INSERT INTO memory_traces (brain_id, id, type, scope, scope_id, content, embedding, "
    "strength, created_at, last_accessed, retrieval_count, tags, emotions, metadata, deleted, "
    "expires_at, category, version, updated_at, embedding_status, _tsv) VALUES "
    f"(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, {_TSV})"
)
_JOURNAL_COLUMNS = "id, at, actor, batch_id, op, trace_id, before, after"


def connect(
    address: PostgresAddress, password: str | None = None
) -> psycopg.Connection[tuple[Any, ...]]:
    """An autocommit connection (each write opens its own transaction), schema ensured.
    `password`: one the person typed; otherwise libpq finds it (PGPASSWORD, ~/.pgpass)."""
    try:
        import psycopg
    except ImportError as exc:  # an optional dependency: memgui[postgres]
        raise PostgresUnavailable(
            "a PostgreSQL brain needs the psycopg driver: pip install 'memgui[postgres]'"
        ) from exc
    try:
        conn = psycopg.connect(with_password(address.conninfo, password), autocommit=True)
    except psycopg.OperationalError as exc:
        said = str(exc)
        if "no password supplied" in said or "password authentication failed" in said:
            wrong = "password authentication failed" in said
            raise PostgresPasswordRequired(str(address), wrong) from exc
        raise PostgresUnavailable(f"cannot reach the PostgreSQL brain {address}: {exc}") from exc
    try:
        if not _schema_current(conn):
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                if not _schema_current(conn):  # another connection may have made it meanwhile
                    conn.execute(SCHEMA)  # idempotent: every statement IF NOT EXISTS
                    conn.execute(postgres_notify.NOTIFY_SCHEMA)  # (CREATE OR REPLACE)
                    conn.execute(postgres_tables.SCHEMA)
        check_not_too_new(conn, address)
    except BaseException:
        conn.close()
        raise
    return conn


def _schema_current(conn: psycopg.Connection[tuple[Any, ...]]) -> bool:
    """Whether memgui's tables, columns and indexes are all there. Checked before any DDL:
    ALTER TABLE takes the table's exclusive lock even when it adds nothing, and would stop
    (or deadlock with) every writer of a busy shared brain on each open."""
    row = conn.execute(
        "SELECT to_regclass('memgui_journal') IS NOT NULL "
        "AND to_regclass('idx_memgui_journal_link_to') IS NOT NULL "
        "AND to_regclass('idx_memgui_journal_brain') IS NOT NULL "
        "AND to_regclass('idx_memory_traces_tsv') IS NOT NULL "
        "AND to_regclass('idx_memory_traces_created') IS NOT NULL "
        "AND to_regclass('memory_links') IS NOT NULL "
        "AND to_regclass('brain_meta') IS NOT NULL "
        "AND to_regclass('idx_knowledge_edges_brain_target') IS NOT NULL "
        "AND to_regclass('idx_memgui_knowledge_nodes_trace') IS NOT NULL "
        "AND to_regclass('idx_memory_links_to') IS NOT NULL "
        f"AND to_regclass('{postgres_tables.LAST_INDEX}') IS NOT NULL "
        "AND EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = "
        "'memory_traces' AND column_name = 'embedding_status' "
        "AND table_schema = current_schema())"
    ).fetchone()
    return bool(row and row[0]) and postgres_notify.installed(conn)


def check_not_too_new(conn: psycopg.Connection[tuple[Any, ...]], address: PostgresAddress) -> None:
    row = conn.execute(
        "SELECT value FROM brain_meta WHERE brain_id = %s AND key = %s",
        (address.brain_id, SCHEMA_KEY),
    ).fetchone()
    found = int(row[0]) if row is not None and str(row[0]).isdigit() else 0
    if row is not None and (found == 0 or found > SCHEMA_VERSION):
        raise SchemaTooNew(str(address), found, SCHEMA_VERSION)


def mark_brain(conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, now: int) -> None:
    """A brain id's meta rows, on its first write (as on SQLite); a brain marked with an
    older layout is marked with this one, so an older memgui leaves it alone."""
    conn.execute(
        "INSERT INTO brain_meta (brain_id, key, value) VALUES (%s, %s, %s), (%s, %s, %s), "
        "(%s, %s, %s) ON CONFLICT (brain_id, key) DO UPDATE SET value = EXCLUDED.value "
        f"WHERE brain_meta.key = '{SCHEMA_KEY}' AND brain_meta.value ~ '^[0-9]{{1,9}}$' "
        "AND brain_meta.value::int < EXCLUDED.value::int",
        (
            *(brain_id, "schema_version", AGENTOS_SCHEMA_VERSION),
            *(brain_id, "created_at", str(now)),
            *(brain_id, SCHEMA_KEY, str(SCHEMA_VERSION)),
        ),
    )


def brain_ids(conn: psycopg.Connection[tuple[Any, ...]]) -> list[str]:
    rows = conn.execute(
        "SELECT brain_id FROM brain_meta UNION SELECT DISTINCT brain_id FROM memory_traces "
        "ORDER BY 1"
    ).fetchall()
    return [r[0] for r in rows]


# --- one trace -----------------------------------------------------------------------------


def fetch_row(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, trace_id: str, lock: bool = False
) -> tuple[Any, ...] | None:
    """A trace's row; with `lock`, held against other writers until the transaction ends."""
    return conn.execute(
        f"SELECT {COLUMNS} FROM memory_traces WHERE brain_id = %s AND id = %s"
        + (" FOR UPDATE" if lock else ""),
        (brain_id, trace_id),
    ).fetchone()


def rows_of_ids(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, ids: list[str]
) -> list[tuple[Any, ...]]:
    return conn.execute(
        f"SELECT {COLUMNS} FROM memory_traces WHERE brain_id = %s AND id = ANY(%s)",
        (brain_id, list(ids)),
    ).fetchall()


def _indexed_text(snap: dict[str, Any]) -> str:
    return " ".join([snap["content"], *snap["tags"]])


def insert_trace(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    snap: dict[str, Any],
    op: str = "add",
    embedding: bytes | None = None,
) -> None:
    snap["metadata"] = store.prepared_metadata(snap)
    conn.execute(
        _INSERT,
        (
            *(brain_id, snap["id"], snap["type"], snap["scope"], snap["scope_id"]),
            *(snap["content"], embedding, snap["strength"], snap["created_at"]),
            *(snap["last_accessed"], snap["retrieval_count"], dumps(snap["tags"])),
            *(dumps(snap["emotions"]), dumps(snap["metadata"]), int(snap["deleted"])),
            *(snap["expires_at"], snap["category"], snap["version"], snap["updated_at"]),
            *(snap["embedding_status"], _indexed_text(snap)),
        ),
    )
    journal(conn, batch, brain_id, op, snap["id"], None, journal_states.added(snap))


def update_trace(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    before: dict[str, Any],
    after: dict[str, Any],
    op: str,
) -> None:
    """Write `after` over the row, its full-text entry with it; a new text drops the vector."""
    text_changed = store.prepare_update(before, after)
    conn.execute(
        "UPDATE memory_traces SET type = %s, scope = %s, scope_id = %s, content = %s, "
        "strength = %s, created_at = %s, last_accessed = %s, retrieval_count = %s, tags = %s, "
        "emotions = %s, metadata = %s, deleted = %s, expires_at = %s, category = %s, "
        f"version = %s, updated_at = %s, embedding_status = %s, _tsv = {_TSV}"
        + (", embedding = NULL" if text_changed else "")
        + " WHERE brain_id = %s AND id = %s",
        (
            *(after["type"], after["scope"], after["scope_id"], after["content"]),
            *(after["strength"], after["created_at"], after["last_accessed"]),
            *(after["retrieval_count"], dumps(after["tags"]), dumps(after["emotions"])),
            *(dumps(after["metadata"]), int(after["deleted"]), after["expires_at"]),
            *(after["category"], after["version"], after["updated_at"]),
            *(after["embedding_status"], _indexed_text(after), brain_id, after["id"]),
        ),
    )
    journal(conn, batch, brain_id, op, after["id"], *journal_states.changed_fields(before, after))


def delete_trace(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    before: dict[str, Any],
    op: str,
) -> None:
    """Hard delete: the row, its links, the document chunks and feedback naming it and its
    knowledge-graph copy, each journaled."""
    links = conn.execute(
        "DELETE FROM memory_links WHERE brain_id = %s AND (from_id = %s OR to_id = %s) "
        "RETURNING from_id, to_id, kind, created_at",
        (brain_id, before["id"], before["id"]),
    ).fetchall()
    for from_id, to_id, kind, created_at in links:
        link = {"from_id": from_id, "to_id": to_id, "kind": kind, "created_at": created_at}
        journal(conn, batch, brain_id, "unlink", from_id, link, None)
    postgres_rows.let_go_of_trace(conn, batch, brain_id, before["id"])
    postgres_graph.let_go_of_trace(conn, batch, brain_id, before["id"])
    conn.execute(
        "DELETE FROM memory_traces WHERE brain_id = %s AND id = %s", (brain_id, before["id"])
    )
    journal(conn, batch, brain_id, op, before["id"], before, None)


# --- many traces ---------------------------------------------------------------------------


def where_sql(brain_id: str, flt: TraceFilter) -> tuple[str, list[Any]]:
    """The WHERE of a filter (checked by the caller), as `search/filters.py` has it on SQLite."""
    clauses = ["brain_id = %s"]
    params: list[Any] = [brain_id]
    if flt.deleted:
        clauses.append("deleted != 0")
    elif not flt.include_deleted:
        clauses.append("deleted = 0")
    for name in ("type", "scope", "scope_id", "category"):
        value = getattr(flt, name)
        if value is not None:
            clauses.append(f"{name} = %s")
            params.append(value)
    if flt.tag is not None:
        clauses.append("(CASE WHEN tags IS JSON ARRAY THEN tags::jsonb ELSE '[]' END) ? %s")
        params.append(flt.tag)
    return " AND ".join(clauses), params


def listed_rows(
    conn: psycopg.Connection[tuple[Any, ...]],
    where: tuple[str, list[Any]],
    order_by: str,
    limit: int | None,
    offset: int,
) -> list[tuple[Any, ...]]:
    sql, params = where
    return conn.execute(
        f"SELECT {COLUMNS} FROM memory_traces WHERE {sql} ORDER BY {order_by} LIMIT %s OFFSET %s",
        (*params, limit, offset),
    ).fetchall()


def count(conn: psycopg.Connection[tuple[Any, ...]], where: tuple[str, list[Any]]) -> int:
    sql, params = where
    row = conn.execute(f"SELECT count(*) FROM memory_traces WHERE {sql}", params).fetchone()
    return int(row[0]) if row else 0


def keyword_rows(
    conn: psycopg.Connection[tuple[Any, ...]],
    where: tuple[str, list[Any]],
    query: str,
    limit: int,
) -> list[tuple[Any, ...]]:
    """The rows whose `_tsv` matches `query` (web search syntax: words, "phrase", or, -not),
    best `ts_rank` first, each with its rank last."""
    sql, params = where
    return conn.execute(
        f"SELECT {COLUMNS}, ts_rank(_tsv, q) AS rank FROM memory_traces, "
        f"websearch_to_tsquery('{TEXT_CONFIG}', %s) AS q "
        f"WHERE {sql} AND _tsv @@ q ORDER BY rank DESC, created_at DESC, id LIMIT %s",
        (query, *params, limit),
    ).fetchall()


# --- the journal ---------------------------------------------------------------------------


def batch_entries(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, batch_id: str
) -> list[JournalEntry]:
    rows = conn.execute(
        f"SELECT {_JOURNAL_COLUMNS} FROM memgui_journal WHERE brain_id = %s AND batch_id = %s "
        "ORDER BY id",
        (brain_id, batch_id),
    ).fetchall()
    return _whole(conn, brain_id, [row_to_entry(r) for r in rows])


def batch_page(
    conn: psycopg.Connection[tuple[Any, ...]],
    brain_id: str,
    batch_id: str,
    after_id: int,
    limit: int,
) -> list[JournalEntry]:
    """A batch's rows after journal id `after_id`, in order, at most `limit`, made whole."""
    rows = conn.execute(
        f"SELECT {_JOURNAL_COLUMNS} FROM memgui_journal WHERE brain_id = %s AND batch_id = %s "
        "AND id > %s ORDER BY id LIMIT %s",
        (brain_id, batch_id, after_id, limit),
    ).fetchall()
    return _whole(conn, brain_id, [row_to_entry(r) for r in rows])


def trace_history(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, trace_id: str
) -> list[JournalEntry]:
    """A trace's journal rows, oldest first. As on SQLite, a link row is filed under its
    first trace, and the second finds it through an index on the link's to_id."""
    rows = conn.execute(
        f"SELECT {_JOURNAL_COLUMNS} FROM memgui_journal WHERE brain_id = %(b)s "
        "AND trace_id = %(t)s "
        f"UNION ALL SELECT {_JOURNAL_COLUMNS} FROM memgui_journal WHERE brain_id = %(b)s "
        "AND op IN ('link', 'unlink') "
        "AND coalesce(after, before)::jsonb ->> 'to_id' = %(t)s AND trace_id != %(t)s "
        "ORDER BY id",
        {"b": brain_id, "t": trace_id},
    ).fetchall()
    return _whole(conn, brain_id, [row_to_entry(r) for r in rows])


def _whole(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, entries: list[JournalEntry]
) -> list[JournalEntry]:
    """Changed-fields rows made whole, as on SQLite (`journal.whole_states`)."""

    def later_rows(trace_ids: list[str], after_id: int) -> list[JournalEntry]:
        found = conn.execute(
            f"SELECT {_JOURNAL_COLUMNS} FROM memgui_journal WHERE brain_id = %s "
            "AND trace_id = ANY(%s) AND id > %s ORDER BY id",
            (brain_id, trace_ids, after_id),
        ).fetchall()
        return [row_to_entry(r) for r in found]

    def currents(trace_ids: list[str]) -> dict[str, dict[str, Any]]:
        found = conn.execute(
            f"SELECT {COLUMNS} FROM memory_traces WHERE brain_id = %s AND id = ANY(%s)",
            (brain_id, trace_ids),
        ).fetchall()
        return {row[1]: store.row_to_snapshot(row) for row in found}

    return journal_states.expand(entries, later_rows, currents)


def trace_counts(conn: psycopg.Connection[tuple[Any, ...]], brain_id: str) -> tuple[int, int]:
    row = conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE deleted != 0) FROM memory_traces "
        "WHERE brain_id = %s",
        (brain_id,),
    ).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)
