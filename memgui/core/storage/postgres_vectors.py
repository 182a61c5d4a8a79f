"""The SQL of vectors on PostgreSQL: the model pin, the rows a matrix is made of and kept in
step with, and the checked write of a new vector.

The truth is `memory_traces.embedding` (float32 little-endian BYTEA, as in a file and as
AgentOS writes it). A row's `xmin` (the transaction that last wrote it) changes at every
write by any program, memgui or AgentOS, so the matrix in memory (`core/shared_vectors.py`)
learns which rows changed since it was read without reading a vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memgui.core.search.vectors import DIMENSIONS_KEY, MODEL_KEY

if TYPE_CHECKING:
    import psycopg

EMBEDDED = "embedding IS NOT NULL"
PENDING = "embedding IS NULL AND deleted = 0"


def pinned_model(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str
) -> tuple[str | None, int | None]:
    rows = dict(
        conn.execute(
            "SELECT key, value FROM brain_meta WHERE brain_id = %s AND key IN (%s, %s)",
            (brain_id, MODEL_KEY, DIMENSIONS_KEY),
        ).fetchall()
    )
    dims = rows.get(DIMENSIONS_KEY)
    return rows.get(MODEL_KEY), int(dims) if dims not in (None, "") else None


def pin_model(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, model: str, dimensions: int
) -> None:
    conn.cursor().executemany(
        "INSERT INTO brain_meta (brain_id, key, value) VALUES (%s, %s, %s) "
        "ON CONFLICT (brain_id, key) DO UPDATE SET value = excluded.value",
        [(brain_id, DIMENSIONS_KEY, str(dimensions)), (brain_id, MODEL_KEY, model)],
    )


def fingerprint(conn: psycopg.Connection[tuple[Any, ...]], brain_id: str) -> tuple[int, int]:
    """(rows, the sum of their last writers' transaction ids): equal while no embedded row
    changed, since a write gives its row the writer's id (a later one; an older transaction
    committing late still changes the sum). A third of the cost of hashing each id with it
    (8 ms against 27 ms at 50,000 rows here)."""
    row = conn.execute(
        "SELECT count(*), coalesce(sum(xmin::text::bigint), 0) "
        f"FROM memory_traces WHERE brain_id = %s AND {EMBEDDED}",
        (brain_id,),
    ).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def row_writers(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str
) -> list[tuple[str, int, int]]:
    """(id, last writer, deleted) of every embedded row: no vector read."""
    return conn.execute(
        "SELECT id, xmin::text::bigint, deleted FROM memory_traces "
        f"WHERE brain_id = %s AND {EMBEDDED}",
        (brain_id,),
    ).fetchall()


def written_after(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, writer: int
) -> list[tuple[str, int, int, bytes]]:
    """(id, last writer, deleted, vector) of the embedded rows a later transaction wrote."""
    rows = conn.execute(
        "SELECT id, xmin::text::bigint, deleted, embedding FROM memory_traces "
        f"WHERE brain_id = %s AND {EMBEDDED} AND xmin::text::bigint > %s",
        (brain_id, writer),
    ).fetchall()
    return [(tid, xmin, deleted, bytes(blob)) for tid, xmin, deleted, blob in rows]


def vectors_of(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, ids: Sequence[str]
) -> list[tuple[str, bytes]]:
    rows = conn.execute(
        f"SELECT id, embedding FROM memory_traces WHERE brain_id = %s AND id = ANY(%s) "
        f"AND {EMBEDDED}",
        (brain_id, list(ids)),
    ).fetchall()
    return [(trace_id, bytes(blob)) for trace_id, blob in rows]


def passing(conn: psycopg.Connection[tuple[Any, ...]], where: tuple[str, list[Any]]) -> set[str]:
    """The ids of the embedded rows a search's filter lets through."""
    sql, params = where
    rows = conn.execute(f"SELECT id FROM memory_traces WHERE {sql} AND {EMBEDDED}", params)
    return {r[0] for r in rows.fetchall()}


def has_embeddings(conn: psycopg.Connection[tuple[Any, ...]], brain_id: str) -> bool:
    row = conn.execute(
        f"SELECT 1 FROM memory_traces WHERE brain_id = %s AND deleted = 0 AND {EMBEDDED} LIMIT 1",
        (brain_id,),
    ).fetchone()
    return row is not None


def pending(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, after: str, batch: int
) -> list[tuple[str, str]]:
    """The next `batch` live traces without a vector, by id after `after`."""
    return conn.execute(
        f"SELECT id, content FROM memory_traces WHERE brain_id = %s AND {PENDING} "
        "AND id > %s ORDER BY id LIMIT %s",
        (brain_id, after, batch),
    ).fetchall()


def count_pending(conn: psycopg.Connection[tuple[Any, ...]], brain_id: str) -> int:
    row = conn.execute(
        f"SELECT count(*) FROM memory_traces WHERE brain_id = %s AND {PENDING}", (brain_id,)
    ).fetchone()
    return int(row[0]) if row else 0


def write_checked(
    conn: psycopg.Connection[tuple[Any, ...]],
    brain_id: str,
    rows: Sequence[tuple[str, str]],
    blobs: Sequence[bytes],
) -> int:
    """Each vector written only where its trace is still live, pending and holds exactly
    the text embedded (the caller's transaction); returns how many were written."""
    written = 0
    for (trace_id, content), blob in zip(rows, blobs, strict=True):
        cursor = conn.execute(
            "UPDATE memory_traces SET embedding = %s, embedding_status = 1 "
            f"WHERE brain_id = %s AND id = %s AND content = %s AND {PENDING}",
            (blob, brain_id, trace_id, content),
        )
        written += cursor.rowcount
    return written


def clear(conn: psycopg.Connection[tuple[Any, ...]], brain_id: str) -> int:
    """Forget every vector of the brain and its pinned model (`embed --rebuild`)."""
    cursor = conn.execute(
        "UPDATE memory_traces SET embedding = NULL, embedding_status = 0 "
        "WHERE brain_id = %s AND (embedding IS NOT NULL OR embedding_status != 0)",
        (brain_id,),
    )
    conn.execute(
        "DELETE FROM brain_meta WHERE brain_id = %s AND key IN (%s, %s)",
        (brain_id, MODEL_KEY, DIMENSIONS_KEY),
    )
    return cursor.rowcount


def count_embedded(conn: psycopg.Connection[tuple[Any, ...]], brain_id: str) -> int:
    row = conn.execute(
        f"SELECT count(*) FROM memory_traces WHERE brain_id = %s AND deleted = 0 AND {EMBEDDED}",
        (brain_id,),
    ).fetchone()
    return int(row[0]) if row else 0


def embedded_after(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, after: str, limit: int
) -> list[tuple[str, bytes]]:
    """The next `limit` live traces with a stored vector, by id after `after`."""
    rows = conn.execute(
        f"SELECT id, embedding FROM memory_traces WHERE brain_id = %s AND deleted = 0 "
        f"AND {EMBEDDED} AND id > %s ORDER BY id LIMIT %s",
        (brain_id, after, limit),
    ).fetchall()
    return [(trace_id, bytes(blob)) for trace_id, blob in rows]


def pin_dimensions(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, dimensions: int
) -> None:
    """The dimension alone (vectors found without a model named: `embed --reindex`)."""
    conn.execute(
        "INSERT INTO brain_meta (brain_id, key, value) VALUES (%s, %s, %s) "
        "ON CONFLICT (brain_id, key) DO UPDATE SET value = excluded.value",
        (brain_id, DIMENSIONS_KEY, str(dimensions)),
    )


def make_pending(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, ids: Sequence[str]
) -> None:
    """These traces' vectors dropped: `embed` embeds them again."""
    if ids:
        conn.execute(
            "UPDATE memory_traces SET embedding = NULL, embedding_status = 0 "
            "WHERE brain_id = %s AND id = ANY(%s)",
            (brain_id, list(ids)),
        )
