"""Copying a brain from PostgreSQL into a new SQLite file, row for row.

The mirror of `postgres_copy`: every trace (its embedding bytes and JSON text as stored),
link, journal row (time, actor and batch kept, so `history` and `revert` go on working in the
file), meta row and row of AgentOS's other tables (`postgres_tables`) of one brain id, read
in one repeatable-read snapshot of the server, so a copy taken while others write is one
moment of the brain. The derived data (both full-text
indexes) is built from the copied rows; the vector index is built on first use, as for any
file. `core/engines.py` makes the file under a temporary name and links it into place.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from memgui.core.progress import Job, Progress
from memgui.core.search import fulltext
from memgui.core.storage import postgres, postgres_tables
from memgui.core.storage.db import Database
from memgui.core.storage.engine import PostgresAddress
from memgui.core.storage.postgres_copy import (
    JOURNAL_COLUMNS,
    LINK_COLUMNS,
    ROWS_PER_STEP,
    TRACE_COLUMNS,
)

if TYPE_CHECKING:
    import psycopg

# What a Postgres brain's meta rows say of the Postgres layout: not carried to a file.
_POSTGRES_ONLY_META = frozenset({postgres.SCHEMA_KEY})


def copy_into_file(
    conn: psycopg.Connection[tuple[Any, ...]], source: PostgresAddress, db: Database
) -> Job[int]:
    """A job: copy the PostgreSQL brain `source` into the new, empty brain file `db`, in one
    write transaction of the file and one read snapshot of the server; yields progress,
    returns how many traces it copied."""
    brain_id = source.brain_id
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        total = postgres.trace_counts(conn, brain_id)[0]
        done = 0
        yield Progress(done, total, "copying traces")
        with db.write("copy", "copy a shared brain into a file", kind="import"):
            marks = ", ".join(["?"] * (TRACE_COLUMNS.count(",") + 2))
            insert = f"INSERT INTO memory_traces (brain_id, {TRACE_COLUMNS}) VALUES ({marks})"
            select = (
                f"SELECT {TRACE_COLUMNS} FROM memory_traces WHERE brain_id = %s "
                "ORDER BY created_at, id"
            )
            for rows in _chunks(conn, select, brain_id):
                db.conn.executemany(insert, [(brain_id, *_plain(row)) for row in rows])
                done += len(rows)
                yield Progress(done, total, "copying traces")
            for table, columns in (
                ("memory_links", LINK_COLUMNS),
                ("memgui_journal", JOURNAL_COLUMNS),
            ):
                yield Progress(done, total, f"copying {table}")
                _copy_table(conn, db, brain_id, table, columns)
            for other in postgres_tables.TABLES:
                yield Progress(done, total, f"copying {other.name}")
                _copy_other(conn, db, brain_id, other)
            meta = conn.execute(
                "SELECT key, value FROM brain_meta WHERE brain_id = %s ORDER BY key", (brain_id,)
            ).fetchall()
            db.conn.executemany(
                "INSERT OR REPLACE INTO brain_meta (brain_id, key, value) VALUES (?, ?, ?)",
                [(brain_id, k, v) for k, v in meta if k not in _POSTGRES_ONLY_META],
            )
            yield Progress(done, total, "building the full-text indexes")
            _rebuild_fulltext(db)
    return done


def _rebuild_fulltext(db: Database) -> None:
    """Both full-text indexes from the rows, and nothing left waiting for them."""
    if "memory_traces_fts" in db.tables:
        db.conn.execute("INSERT INTO memory_traces_fts(memory_traces_fts) VALUES ('rebuild')")
    fulltext.rebuild_memgui_index(db.conn)
    db.conn.execute("DELETE FROM memgui_fts_pending")


def _plain(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A row as apsw binds it: BYTEA arrives as a memoryview."""
    return tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)


def _chunks(
    conn: psycopg.Connection[tuple[Any, ...]], sql: str, brain_id: str
) -> Iterator[list[tuple[Any, ...]]]:
    with conn.cursor(name="memgui_copy") as cursor:  # server side: a big brain is never held
        cursor.execute(sql, (brain_id,))
        while rows := cursor.fetchmany(ROWS_PER_STEP):
            yield rows


def _copy_other(
    conn: psycopg.Connection[tuple[Any, ...]],
    db: Database,
    brain_id: str,
    table: postgres_tables.Table,
) -> None:
    marks = ", ".join(["?"] * (len(table.columns) + 1))
    insert = f"INSERT INTO {table.name} (brain_id, {table.column_list}) VALUES ({marks})"
    select = (
        f"SELECT {table.column_list} FROM {table.name} WHERE brain_id = %s ORDER BY {table.order}"
    )
    for rows in _chunks(conn, select, brain_id):
        db.conn.executemany(insert, [(brain_id, *_plain(row)) for row in rows])


def _copy_table(
    conn: psycopg.Connection[tuple[Any, ...]], db: Database, brain_id: str, table: str, columns: str
) -> None:
    marks = ", ".join(["?"] * (columns.count(",") + 2))
    insert = f"INSERT INTO {table} (brain_id, {columns}) VALUES ({marks})"
    order = "id" if table == "memgui_journal" else "from_id, to_id, kind"
    select = f"SELECT {columns} FROM {table} WHERE brain_id = %s ORDER BY {order}"
    for rows in _chunks(conn, select, brain_id):
        db.conn.executemany(insert, [(brain_id, *row) for row in rows])
