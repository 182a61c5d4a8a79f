"""The vector index of a brain: sqlite-vec's `memory_traces_vec` and the model pin.

The truth is `memory_traces.embedding` (float32 BLOB) with `embedding_status = 1`. The `vec0`
table `memory_traces_vec` indexes those BLOBs by the trace's rowid (one table per file, so all
brains in a file share one dimension) and is kept in step by `sync_rows`, which every write
calls inside its own transaction. Each vector change is also appended to
`memory_traces_vec_log`, which lets the in-memory matrix of `vector_cache` catch up
incrementally, in this process and in others. Every function takes the caller's connection and
runs inside the caller's transaction; none commits on its own.
"""

from __future__ import annotations

import importlib.util
import os
import re
import weakref
from collections.abc import Generator, Iterable, Sequence
from typing import TYPE_CHECKING

import apsw

from memgui.core.errors import MemguiError
from memgui.core.progress import Progress
from memgui.core.search.embed import pack_vector, unpack_vector

if TYPE_CHECKING:
    import numpy as np

VEC_TABLE = "memory_traces_vec"
LOG_TABLE = "memory_traces_vec_log"
MODEL_KEY = "embedding_model"
DIMENSIONS_KEY = "embedding_dimensions"
LOG_KEEP = 100_000  # log rows kept; a reader further behind reloads its matrix whole
# A row counts as embedded when its status says so; AgentOS rows without a status count by BLOB.
EMBEDDED_SQL = "coalesce(embedding_status, embedding IS NOT NULL) = 1 AND embedding IS NOT NULL"
PENDING_SQL = "coalesce(embedding_status, embedding IS NOT NULL) = 0"


def has_status_column(conn: apsw.Connection) -> bool:
    """False for an AgentOS brain not yet migrated: it has no `embedding_status` column."""
    return (
        conn.execute(
            "SELECT 1 FROM pragma_table_info('memory_traces') WHERE name = 'embedding_status'"
        ).fetchone()
        is not None
    )


def embedded_sql(conn: apsw.Connection) -> str:
    """`EMBEDDED_SQL`, or what it means before the migration adds the status (for reads)."""
    return EMBEDDED_SQL if has_status_column(conn) else "embedding IS NOT NULL"


def pending_sql(conn: apsw.Connection) -> str:
    return PENDING_SQL if has_status_column(conn) else "embedding IS NULL"


_loaded: weakref.WeakKeyDictionary[apsw.Connection, bool] = weakref.WeakKeyDictionary()


class VectorIndexUnavailable(MemguiError):
    """sqlite-vec cannot be loaded on this connection."""


class EmbeddingModelMismatch(MemguiError):
    """Vectors of another model or dimension than the brain's pin: refused, nothing written."""

    exit_code = 2

    def __init__(
        self,
        brain_id: str,
        pinned: tuple[str | None, int | None],
        offered: tuple[str | None, int | None],
    ) -> None:
        self.pinned = pinned
        self.offered = offered
        model = offered[0] or pinned[0] or "MODEL"
        # Most often the brain's own model is what was meant: say how to use it first.
        use_pinned = ""
        if pinned[0]:
            use_pinned = f"use the brain's model (`--embed-model {pinned[0]}`), or "
        super().__init__(
            f"brain '{brain_id}' holds embeddings of {_describe(pinned)}, not "
            f"{_describe(offered)}; vectors of two models never mix: {use_pinned}re-embed "
            f"every trace with `memgui embed --rebuild --model {model}`"
        )


def _describe(pin: tuple[str | None, int | None]) -> str:
    model, dims = pin
    return f"{model or 'an unnamed model'} ({dims if dims else '?'} dimensions)"


# --- the extension ------------------------------------------------------------------------


def sqlite_vec_path() -> str:
    """The extension's file, without its suffix, as `sqlite_vec.loadable_path()` names it,
    found without importing the package (its `__init__` imports numpy, ~0.1 s): beside the
    package's `__init__`, in a frozen build too."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or spec.origin is None:
        raise ImportError("the sqlite-vec package is not installed")
    return os.path.join(os.path.dirname(spec.origin), "vec0")


def load_sqlite_vec(conn: apsw.Connection) -> None:
    """Load sqlite-vec on a connection once; VectorIndexUnavailable when it cannot be."""
    if _loaded.get(conn):
        return
    try:
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec_path())
        conn.enable_load_extension(False)
    except (ImportError, apsw.Error, AttributeError, OSError) as error:
        raise VectorIndexUnavailable(f"sqlite-vec cannot be loaded: {error}") from error
    _loaded[conn] = True


def vec_available(conn: apsw.Connection) -> bool:
    try:
        load_sqlite_vec(conn)
    except VectorIndexUnavailable:
        return False
    return True


def _table_sql(conn: apsw.Connection, name: str) -> str | None:
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    return row[0] if row else None


def index_dimensions(conn: apsw.Connection) -> int | None:
    """The dimension `memory_traces_vec` was created with, or None when it does not exist."""
    sql = _table_sql(conn, VEC_TABLE)
    match = re.search(r"float\[(\d+)\]", sql or "")
    return int(match.group(1)) if match else None


def ensure_index(conn: apsw.Connection, dimensions: int) -> None:
    """Create `memory_traces_vec` for this dimension; a table of another one is refused."""
    load_sqlite_vec(conn)
    existing = index_dimensions(conn)
    if existing is None:
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {VEC_TABLE} USING vec0("
            f"embedding float[{int(dimensions)}] distance_metric=cosine)"
        )
    elif existing != dimensions:
        raise EmbeddingModelMismatch(
            "(every brain in this file)", (None, existing), (None, dimensions)
        )


def drop_index(conn: apsw.Connection) -> None:
    if _table_sql(conn, VEC_TABLE) is not None:
        load_sqlite_vec(conn)
        conn.execute(f"DROP TABLE {VEC_TABLE}")


def ensure_log(conn: apsw.Connection) -> None:
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {LOG_TABLE} (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
        "brain_id TEXT NOT NULL, trace_rowid INTEGER)"
    )


def log_changes(conn: apsw.Connection, brain_id: str, rowids: Iterable[int | None]) -> None:
    """Record changed rowids (None: everything changed) for the matrix caches to replay."""
    ensure_log(conn)
    seq = 0
    for rowid in rowids:
        conn.execute(
            f"INSERT INTO {LOG_TABLE}(brain_id, trace_rowid) VALUES (?, ?)", (brain_id, rowid)
        )
        seq = conn.last_insert_rowid()
    if seq and seq % 1024 == 0:
        conn.execute(f"DELETE FROM {LOG_TABLE} WHERE seq <= ?", (seq - LOG_KEEP,))


# --- the model pin ------------------------------------------------------------------------


def pinned_model(conn: apsw.Connection, brain_id: str) -> tuple[str | None, int | None]:
    """(embedding_model, embedding_dimensions) from brain_meta; None where unset."""
    rows = dict(
        conn.execute(
            "SELECT key, value FROM brain_meta WHERE brain_id = ? AND key IN (?, ?)",
            (brain_id, MODEL_KEY, DIMENSIONS_KEY),
        )
    )
    dims = rows.get(DIMENSIONS_KEY)
    return rows.get(MODEL_KEY), int(dims) if dims not in (None, "") else None


def check_pin(
    conn: apsw.Connection, brain_id: str, model: str | None, dimensions: int | None
) -> None:
    """Refuse a model or dimension other than the pinned one (unset parts are not compared)."""
    check_pinned(brain_id, pinned_model(conn, brain_id), model, dimensions)


def check_pinned(
    brain_id: str,
    pinned: tuple[str | None, int | None],
    model: str | None,
    dimensions: int | None,
) -> None:
    """`check_pin` against a pin already read."""
    model_differs = model is not None and pinned[0] is not None and _base(model) != _base(pinned[0])
    dims_differ = dimensions is not None and pinned[1] is not None and dimensions != pinned[1]
    if model_differs or dims_differ:
        raise EmbeddingModelMismatch(brain_id, pinned, (model, dimensions))


def pin_model(conn: apsw.Connection, brain_id: str, model: str | None, dimensions: int) -> None:
    """Check, then record the model and dimension the brain's vectors come from."""
    check_pin(conn, brain_id, model, dimensions)
    values = [(DIMENSIONS_KEY, str(dimensions))] + ([(MODEL_KEY, model)] if model else [])
    for key, value in values:
        conn.execute(
            "INSERT OR REPLACE INTO brain_meta(brain_id, key, value) VALUES (?, ?, ?)",
            (brain_id, key, value),
        )


def unpin_model(conn: apsw.Connection, brain_id: str) -> None:
    conn.execute(
        "DELETE FROM brain_meta WHERE brain_id = ? AND key IN (?, ?)",
        (brain_id, MODEL_KEY, DIMENSIONS_KEY),
    )


def _base(model: str) -> str:
    return model.removesuffix(":latest")


# --- keeping the index in step ------------------------------------------------------------


def write_embedding(
    conn: apsw.Connection, brain_id: str, rowid: int, vector: Sequence[float] | np.ndarray
) -> None:
    """Store a checked vector in the row and the index (the caller checked pin and freshness)."""
    conn.execute(
        "UPDATE memory_traces SET embedding = ?, embedding_status = 1 WHERE rowid = ?",
        (pack_vector(vector), rowid),
    )
    sync_rows(conn, brain_id, [rowid])


def index_written(conn: apsw.Connection, brain_id: str, written: list[tuple[int, bytes]]) -> None:
    """Index vectors just written to live rows of the pinned dimension, as (rowid, BLOB).

    What `sync_rows` does for such rows, without reading each BLOB back: the backfill knows
    them. Call it inside the write transaction, after `ensure_index`.
    """
    if not written:
        return
    conn.executemany(f"DELETE FROM {VEC_TABLE} WHERE rowid = ?", ((r,) for r, _ in written))
    conn.executemany(f"INSERT INTO {VEC_TABLE}(rowid, embedding) VALUES (?, ?)", written)
    log_changes(conn, brain_id, [rowid for rowid, _ in written])


def sync_rows(conn: apsw.Connection, brain_id: str, rowids: Iterable[int]) -> None:
    """Make the index agree with these rows as they are now (or are gone).

    Call it inside the write transaction after any add, content change, forget, restore,
    purge, expiry or import. A live, embedded row is (re)indexed from its BLOB; anything else
    leaves the index. A BLOB whose dimension differs from the pin is marked pending, so a
    backfill re-embeds it with the brain's model instead of mixing two models.
    """
    rowids = [int(r) for r in rowids]
    if not rowids:
        return
    pin_dims = pinned_model(conn, brain_id)[1]
    has_index = index_dimensions(conn) is not None
    if has_index:
        load_sqlite_vec(conn)
    for rowid in rowids:
        row = conn.execute(
            f"SELECT embedding, deleted, {EMBEDDED_SQL} FROM memory_traces "
            "WHERE rowid = ? AND brain_id = ?",
            (rowid, brain_id),
        ).fetchone()
        vector = unpack_vector(row[0]) if row and row[2] and not row[1] else None
        if vector is not None and pin_dims is not None and len(vector) != pin_dims:
            conn.execute("UPDATE memory_traces SET embedding_status = 0 WHERE rowid = ?", (rowid,))
            vector = None
        if has_index:
            conn.execute(f"DELETE FROM {VEC_TABLE} WHERE rowid = ?", (rowid,))
        if vector is not None:
            if not has_index:
                ensure_index(conn, len(vector))
                has_index = True
            if pin_dims is None:
                pin_model(conn, brain_id, None, len(vector))
                pin_dims = len(vector)
            conn.execute(
                f"INSERT INTO {VEC_TABLE}(rowid, embedding) VALUES (?, ?)",
                (rowid, pack_vector(vector)),
            )
    log_changes(conn, brain_id, rowids)


def drop_rows(conn: apsw.Connection, brain_id: str, rowids: list[int]) -> None:
    """`sync_rows` for rows that just left the index (forgotten, text unchanged): no row,
    pin or BLOB to read, since nothing of theirs is indexed again."""
    if index_dimensions(conn) is not None:
        load_sqlite_vec(conn)
        conn.executemany(f"DELETE FROM {VEC_TABLE} WHERE rowid = ?", ((r,) for r in rowids))
    log_changes(conn, brain_id, rowids)


def reindex(
    conn: apsw.Connection, brain_id: str, chunk: int = 2000
) -> Generator[Progress, None, int]:
    """Rebuild this brain's part of `memory_traces_vec` from the BLOBs (`--reindex`).

    A generator for one write transaction: yields progress, returns the number indexed.
    Vectors whose dimension differs from the pin (or from the first one seen) become pending.
    """
    load_sqlite_vec(conn)
    total = conn.execute(
        f"SELECT count(*) FROM memory_traces WHERE brain_id = ? AND deleted = 0 AND {EMBEDDED_SQL}",
        (brain_id,),
    ).get
    yield Progress(0, total, "rebuilding the vector index")
    if index_dimensions(conn) is not None:
        conn.execute(
            f"DELETE FROM {VEC_TABLE} WHERE rowid IN "
            "(SELECT rowid FROM memory_traces WHERE brain_id = ?)",
            (brain_id,),
        )
    pin_dims = pinned_model(conn, brain_id)[1]
    done = indexed = 0
    last = 0
    while True:
        rows = list(
            conn.execute(
                f"SELECT rowid, embedding FROM memory_traces WHERE brain_id = ? AND deleted = 0 "
                f"AND {EMBEDDED_SQL} AND rowid > ? ORDER BY rowid LIMIT ?",
                (brain_id, last, chunk),
            )
        )
        if not rows:
            break
        for rowid, blob in rows:
            vector = unpack_vector(blob)
            if vector is not None and pin_dims is None:
                pin_model(conn, brain_id, None, len(vector))
                pin_dims = len(vector)
            if vector is None or len(vector) != pin_dims:
                conn.execute(
                    "UPDATE memory_traces SET embedding_status = 0 WHERE rowid = ?", (rowid,)
                )
                continue
            ensure_index(conn, pin_dims)
            conn.execute(
                f"INSERT INTO {VEC_TABLE}(rowid, embedding) VALUES (?, ?)",
                (rowid, pack_vector(vector)),
            )
            indexed += 1
        last = rows[-1][0]
        done += len(rows)
        yield Progress(done, total, "rebuilding the vector index")
    log_changes(conn, brain_id, [None])
    return indexed


def clear_embeddings(conn: apsw.Connection, brain_id: str) -> int:
    """Forget every vector of the brain and its pin (before re-embedding with another model)."""
    if index_dimensions(conn) is not None:
        load_sqlite_vec(conn)
        conn.execute(
            f"DELETE FROM {VEC_TABLE} WHERE rowid IN "
            "(SELECT rowid FROM memory_traces WHERE brain_id = ?)",
            (brain_id,),
        )
        if conn.execute(f"SELECT count(*) FROM {VEC_TABLE}").get == 0:
            drop_index(conn)  # the next model may have another dimension
    conn.execute(
        "UPDATE memory_traces SET embedding = NULL, embedding_status = 0 WHERE brain_id = ?",
        (brain_id,),
    )
    cleared = conn.changes()
    unpin_model(conn, brain_id)
    log_changes(conn, brain_id, [None])
    return cleared


def knn_vec0(
    conn: apsw.Connection,
    brain_id: str,
    query: Sequence[float] | np.ndarray,
    k: int,
    where: str = "t.deleted = 0",
    params: Sequence[object] = (),
) -> list[tuple[str, float]]:
    """(trace id, cosine distance) of the k nearest by sqlite-vec, filtered before the cut."""
    if index_dimensions(conn) is None:
        return []
    load_sqlite_vec(conn)
    rows = conn.execute(
        f"SELECT t.id, v.distance FROM {VEC_TABLE} AS v JOIN memory_traces AS t "
        "ON t.rowid = v.rowid WHERE v.embedding MATCH ? AND k = ? AND v.rowid IN "
        f"(SELECT t.rowid FROM memory_traces AS t WHERE t.brain_id = ? AND ({where})) "
        "ORDER BY v.distance, t.id",
        (pack_vector(query), int(k), brain_id, *params),
    )
    return [(trace_id, float(distance)) for trace_id, distance in rows]
