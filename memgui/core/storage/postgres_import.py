"""Writing an import's batch into PostgreSQL: the journal of the batch an import committed into
a staged file of the brain (`core/shared_import.py`), replayed entry by entry in one
transaction, new traces and their journal rows in bulk (`executemany`, which psycopg sends
as one pipeline).

Each entry becomes the same write on the server, journaled alike under a new batch id, so
`revert` of that batch undoes the import there. A trace the import changes must still be at
the version the plan read, else `Conflict` and nothing is written; a row or trace id taken
on the server meanwhile is a `Conflict` too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core.errors import Conflict
from memgui.core.model import JournalEntry
from memgui.core.storage import postgres, postgres_rows, store
from memgui.core.storage.db import Database
from memgui.core.storage.journal_rows import LINK_OPS, ROW_OPS, TABLES, event
from memgui.core.storage.json_text import dumps
from memgui.core.storage.postgres_copy import TRACE_COLUMNS
from memgui.core.storage.postgres_journal import journal
from memgui.core.storage.transaction import WriteBatch

if TYPE_CHECKING:
    import psycopg

_TRACE_INSERT = (
    f"INSERT INTO memory_traces (brain_id, {TRACE_COLUMNS}, _tsv) VALUES "
    f"(%s, {', '.join(['%s'] * 19)}, to_tsvector('{postgres.TEXT_CONFIG}', %s))"
)
_JOURNAL_INSERT = (
    "INSERT INTO memgui_journal (brain_id, at, actor, batch_id, op, trace_id, before, after) "
    "VALUES (%s, (extract(epoch FROM clock_timestamp()) * 1000)::bigint, %s, %s, %s, %s, "
    "%s, %s)"
)


def apply(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    staged: Database,
    entries: list[JournalEntry],
) -> None:
    """Replay `entries` (one batch of the staged file, in order) on the server, inside the
    caller's transaction."""
    added: list[JournalEntry] = []
    for entry in entries:
        if entry.op not in LINK_OPS and entry.op not in ROW_OPS and entry.before is None:
            added.append(entry)  # a new trace: written with the run of them
            continue
        _add_traces(conn, batch, brain_id, staged, added)
        added = []
        if entry.op in LINK_OPS:
            _link(conn, batch, brain_id, entry)
        elif entry.op in ROW_OPS:
            _row(conn, batch, brain_id, staged, entry)
        else:
            _trace_change(conn, batch, brain_id, entry)
    _add_traces(conn, batch, brain_id, staged, added)


def _add_traces(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    staged: Database,
    entries: list[JournalEntry],
) -> None:
    if not entries:
        return
    ids = [e.trace_id for e in entries]
    taken = conn.execute(
        "SELECT id FROM memory_traces WHERE brain_id = %s AND id = ANY(%s) LIMIT 1",
        (brain_id, ids),
    ).fetchone()
    if taken is not None:
        raise Conflict.because(taken[0], f"trace {taken[0]} was added on the server meanwhile")
    vectors = _embeddings(staged, brain_id, ids)
    rows = []
    for entry in entries:
        snap = store.row_to_snapshot((0, *_snapshot_row(entry.after or {})))
        snap["metadata"] = store.prepared_metadata(snap)
        rows.append(
            (
                *(brain_id, snap["id"], snap["type"], snap["scope"], snap["scope_id"]),
                *(snap["content"], snap["strength"], snap["created_at"]),
                *(snap["last_accessed"], snap["retrieval_count"], dumps(snap["tags"])),
                *(dumps(snap["emotions"]), dumps(snap["metadata"]), int(snap["deleted"])),
                *(snap["expires_at"], snap["category"], snap["version"], snap["updated_at"]),
                *(snap["embedding_status"], vectors.get(snap["id"])),
                " ".join([snap["content"], *snap["tags"]]),
            )
        )
    cursor = conn.cursor()
    cursor.executemany(_TRACE_INSERT, rows)
    cursor.executemany(
        _JOURNAL_INSERT,
        [
            (brain_id, batch.actor, batch.batch_id, e.op, e.trace_id, None, dumps(e.after))
            for e in entries
        ],
    )
    batch.events += [event(e.op, e.trace_id, None, e.after) for e in entries]


def _snapshot_row(snap: dict[str, Any]) -> tuple[Any, ...]:
    """A journaled snapshot as a row in `postgres.COLUMNS`' order (rowid left out), so it
    is read back exactly as a stored row is."""
    return (
        *(snap["id"], snap["type"], snap["scope"], snap.get("scope_id", "")),
        *(snap["content"], snap["strength"], snap["created_at"], snap.get("last_accessed")),
        *(snap.get("retrieval_count", 0), dumps(snap.get("tags", []))),
        *(dumps(snap.get("emotions", {})), dumps(snap.get("metadata", {}))),
        *(int(bool(snap.get("deleted"))), snap.get("expires_at"), snap.get("category")),
        *(snap.get("version", 0), snap.get("updated_at"), snap.get("embedding_status", 0)),
    )


def _embeddings(staged: Database, brain_id: str, ids: list[str]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for trace_id, blob in staged.conn.execute(
            f"SELECT id, embedding FROM memory_traces WHERE brain_id = ? AND id IN ({marks}) "
            "AND embedding IS NOT NULL",
            (brain_id, *chunk),
        ):
            out[trace_id] = bytes(blob)
    return out


def _trace_change(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    entry: JournalEntry,
) -> None:
    """A trace the import changed (tags merged into it, say): still at the plan's version."""
    row = postgres.fetch_row(conn, brain_id, entry.trace_id, lock=True)
    before, after = entry.before or {}, entry.after
    if row is None:
        raise Conflict.because(entry.trace_id, f"trace {entry.trace_id} is gone from the server")
    current = store.row_to_snapshot(row)
    if current["version"] != before.get("version"):
        raise Conflict.because(
            entry.trace_id,
            f"trace {entry.trace_id} changed on the server since the import was planned "
            f"(version {current['version']}, planned on {before.get('version')})",
        )
    if after is None:
        postgres.delete_trace(conn, batch, brain_id, current, entry.op)
        return
    snap = store.row_to_snapshot((0, *_snapshot_row(after)))
    postgres.update_trace(conn, batch, brain_id, current, snap, entry.op)


def _link(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    entry: JournalEntry,
) -> None:
    link = entry.after or entry.before or {}
    key = (brain_id, link["from_id"], link["to_id"], link["kind"])
    if entry.after is not None:
        cursor = conn.execute(
            "INSERT INTO memory_links (brain_id, from_id, to_id, kind, created_at) "
            "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (*key, link["created_at"]),
        )
    else:
        cursor = conn.execute(
            "DELETE FROM memory_links WHERE brain_id = %s AND from_id = %s AND to_id = %s "
            "AND kind = %s",
            key,
        )
    if cursor.rowcount:
        journal(conn, batch, brain_id, entry.op, entry.trace_id, entry.before, entry.after)


def _row(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    staged: Database,
    entry: JournalEntry,
) -> None:
    """A node, edge, document, chunk, image, conversation or message row."""
    if entry.before is None and entry.after is not None:
        row = dict(entry.after)
        blobs = TABLES[entry.op][3]
        if blobs:  # never journaled: read from the staged file
            table = TABLES[entry.op][0]
            names = sorted(blobs)
            found = staged.conn.execute(
                f"SELECT {', '.join(names)} FROM {table} WHERE brain_id = ? AND id = ?",
                (brain_id, entry.trace_id),
            ).fetchone()
            if found is not None:
                row.update(zip(names, found, strict=True))
        if not postgres_rows.insert_row(conn, batch, brain_id, entry.op, row):
            raise Conflict.because(
                entry.trace_id, f"{entry.op} {entry.trace_id} was added on the server meanwhile"
            )
        return
    now = postgres_rows.current(
        conn, brain_id, entry.op, entry.trace_id, entry.before or {}, lock=True
    )
    if now != entry.before:
        raise Conflict.because(
            entry.trace_id, f"{entry.op} {entry.trace_id} changed on the server meanwhile"
        )
    if entry.after is not None and entry.before is not None:
        after = dict(entry.after, id=entry.trace_id)
        postgres_rows.update_row(conn, batch, brain_id, entry.op, dict(entry.before), after)
