"""Copying a brain from a SQLite file into PostgreSQL, row for row.

Every trace (its embedding BLOB and JSON text as stored, not re-encoded), every link, every
journal row (with its time, actor and batch, so `history` and `revert` go on working on the
copy), the brain's meta rows and every row of AgentOS's other tables (the knowledge graph,
documents, conversations …: `postgres_tables`), in one transaction: a failure leaves the
database as it was. The destination brain id must hold nothing yet. Rows go in by COPY.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from memgui.core.errors import InvalidArgument
from memgui.core.progress import Job, Progress
from memgui.core.storage import postgres, postgres_locks, postgres_tables, reads, schema, store
from memgui.core.storage.db import Database
from memgui.core.storage.engine import PostgresAddress

if TYPE_CHECKING:
    import psycopg

ROWS_PER_STEP = 2_000  # rows inserted between two progress reports (and cancel checks)

# In the order `store.select_columns` reads them (an AgentOS brain not migrated yet has
# memgui's columns derived, as memgui reads it), and the embedding.
TRACE_COLUMNS = (
    "id, type, scope, scope_id, content, strength, created_at, last_accessed, "
    "retrieval_count, tags, emotions, metadata, deleted, expires_at, category, version, "
    "updated_at, embedding_status, embedding"
)
_TRACE_INSERT = (
    f"INSERT INTO memory_traces (brain_id, {TRACE_COLUMNS}, _tsv) VALUES "
    f"(%s, {', '.join(['%s'] * 19)}, to_tsvector('{postgres.TEXT_CONFIG}', %s))"
)
LINK_COLUMNS = "from_id, to_id, kind, created_at"
JOURNAL_COLUMNS = "at, actor, batch_id, op, trace_id, before, after"
# What a SQLite brain's meta rows say of SQLite itself: not carried to Postgres.
_SQLITE_ONLY_META = frozenset({schema.SCHEMA_KEY})


def copy_to_postgres(
    source: Database,
    brain_id: str,
    conn: psycopg.Connection[tuple[Any, ...]],
    destination: PostgresAddress,
) -> Job[int]:
    """A job: copy brain `brain_id` of the SQLite `source` into the empty
    brain `destination`; yields progress by traces copied, returns how many."""
    import psycopg

    total = reads.trace_counts(source, brain_id)[0]
    try:
        done = yield from _copy(source, brain_id, conn, destination, total)
    except psycopg.DataError as exc:  # a value another program stored that Postgres refuses
        raise InvalidArgument(
            "source",
            f"holds a value PostgreSQL refuses ({exc.diag.message_primary or exc}); "
            "nothing was copied",
            str(destination),
        ) from exc
    return done


def _copy(
    source: Database,
    brain_id: str,
    conn: psycopg.Connection[tuple[Any, ...]],
    destination: PostgresAddress,
    total: int,
) -> Job[int]:
    with conn.transaction():
        # Two copies into one brain id at once: the second waits, then finds it taken.
        postgres_locks.hold(conn, destination.brain_id, "copy", str(destination), wait=True)
        postgres_locks.hold_journal_order(conn, destination.brain_id)
        held = postgres.trace_counts(conn, destination.brain_id)[0]
        if held:
            raise InvalidArgument(
                "destination",
                f"must be an empty brain (brain {destination.brain_id!r} already holds "
                f"{held} traces)",
                str(destination),
            )
        done = 0
        yield Progress(done, total, "copying traces")
        select = (
            f"SELECT {store.select_columns(source)}, embedding FROM memory_traces "
            "WHERE brain_id = ? ORDER BY rowid"
        )
        for rows in _chunks(source, select, brain_id) if total else ():
            conn.cursor().executemany(
                _TRACE_INSERT,
                # row[0] is the SQLite rowid, which Postgres has not.
                [(destination.brain_id, *row[1:], _indexed_text(row[5], row[10])) for row in rows],
            )
            done += len(rows)
            yield Progress(done, total, "copying traces")
        _copy_table(source, conn, brain_id, destination.brain_id, "memory_links", LINK_COLUMNS)
        _copy_table(
            source,
            conn,
            brain_id,
            destination.brain_id,
            "memgui_journal",
            JOURNAL_COLUMNS,
            order="id",
        )
        for table in postgres_tables.TABLES:
            yield Progress(done, total, f"copying {table.name}")
            copy_rows_in(source, conn, brain_id, destination.brain_id, table)
        meta = [
            (destination.brain_id, key, value)
            for key, value in source.conn.execute(
                "SELECT key, value FROM brain_meta WHERE brain_id = ?", (brain_id,)
            )
            if key not in _SQLITE_ONLY_META
        ]
        conn.cursor().executemany(
            "INSERT INTO brain_meta (brain_id, key, value) VALUES (%s, %s, %s) "
            "ON CONFLICT (brain_id, key) DO UPDATE SET value = excluded.value",
            meta,
        )
        postgres.mark_brain(conn, destination.brain_id, 0)
    return done


def _indexed_text(content: Any, tags: Any) -> str:
    """The words `_tsv` indexes, as `postgres.insert_trace` makes them: content and tags."""
    try:
        tag_list = json.loads(tags) if isinstance(tags, str) else []
    except ValueError:
        tag_list = []
    words = [t for t in tag_list if isinstance(t, str)] if isinstance(tag_list, list) else []
    return " ".join([str(content), *words])


def _chunks(source: Database, sql: str, brain_id: str) -> Iterator[list[tuple[Any, ...]]]:
    cursor = source.conn.execute(sql, (brain_id,))
    while True:
        rows = [tuple(row) for _, row in zip(range(ROWS_PER_STEP), cursor, strict=False)]
        if not rows:
            return
        yield rows


def copy_rows_in(
    source: Database,
    conn: psycopg.Connection[tuple[Any, ...]],
    brain_id: str,
    to_brain_id: str,
    table: postgres_tables.Table,
) -> None:
    """One of AgentOS's other tables, by COPY (which writes an identity column's values as
    given); the identity's sequence then moves past them, for AgentOS's next row."""
    if table.name not in source.tables:
        return
    select = (
        f"SELECT {table.column_list} FROM {table.name} WHERE brain_id = ? ORDER BY {table.order}"
    )
    with conn.cursor().copy(
        f"COPY {table.name} (brain_id, {table.column_list}) FROM STDIN"
    ) as copy:
        for rows in _chunks(source, select, brain_id):
            for row in rows:
                copy.write_row((to_brain_id, *row))
    if table.identity:
        conn.execute(
            f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
            f"greatest((SELECT max(id) FROM {table.name}), 1))"
        )


def _copy_table(
    source: Database,
    conn: psycopg.Connection[tuple[Any, ...]],
    brain_id: str,
    to_brain_id: str,
    table: str,
    columns: str,
    order: str = "rowid",
) -> None:
    if table not in source.tables:
        return
    select = f"SELECT {columns} FROM {table} WHERE brain_id = ? ORDER BY {order}"
    # By COPY: one statement, so the statement-level triggers (the kept degrees, the
    # change notices) run once for the whole table, not once a row.
    with conn.cursor().copy(f"COPY {table} (brain_id, {columns}) FROM STDIN") as copy:
        for rows in _chunks(source, select, brain_id):
            for row in rows:
                copy.write_row((to_brain_id, *row))
