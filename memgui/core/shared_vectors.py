"""Search by meaning on a shared brain: a numpy matrix of the brain's vectors in memory, as
for a file (`search/vector_cache.py`), kept in step with the server, and the backfill.

The matrix holds every embedded row of the brain (forgotten ones too, marked), normalised.
Before each search one aggregate over the rows' ids and last writers (`xmin`, which any
program's write changes) tells whether anything changed; if so, the rows' (id, writer)
pairs are read, no vector, and only the vectors of rows written since are fetched. A first
search reads them all. pgvector was measured against it (docs/performance.md, "Shared
brains on PostgreSQL") and is not used.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memgui.core.errors import InvalidArgument
from memgui.core.progress import Cancelled, Job, Progress
from memgui.core.search.embed import pack_vector, unpack_vector
from memgui.core.search.hybrid import BACKFILL_BATCH, BackfillReport, Embedder
from memgui.core.search.vectors import check_pinned
from memgui.core.storage import postgres_vectors as sql

if TYPE_CHECKING:
    import numpy as np
    import psycopg

Conn = Any  # psycopg.Connection[tuple[Any, ...]]


@dataclass
class _Matrix:
    fingerprint: tuple[int, int] = (0, 0)
    writers: dict[str, int] = field(default_factory=dict)  # every embedded row: id -> xmin
    index: dict[str, int] = field(default_factory=dict)  # id -> its row in `vectors`
    ids: list[str] = field(default_factory=list)
    vectors: Any = None  # np.ndarray (rows, dims), normalised
    deleted: Any = None  # np.ndarray of bool
    lock: threading.Lock = field(default_factory=threading.Lock)


_cache: dict[tuple[str, str], _Matrix] = {}
_cache_lock = threading.Lock()


def _normalised(vector: np.ndarray) -> np.ndarray:
    import numpy as np

    norm = float(np.linalg.norm(vector))
    return (vector / (norm or 1.0)).astype(np.float32, copy=False)


def refresh(conn: psycopg.Connection[tuple[Any, ...]], key: tuple[str, str], dims: int) -> _Matrix:
    """The brain's matrix, caught up with the server (see the module's doc): untouched when
    no embedded row changed; the rows written since patched in place, or appended, when the
    rows a later transaction wrote account for the whole change (the usual case: a search's
    recalls, an edit, an add); else read again, vectors only where a row's writer changed."""
    entry = _entry(key)
    with entry.lock:
        _catch_up(conn, key[1], entry, dims)
        return entry


def rows_of(
    conn: psycopg.Connection[tuple[Any, ...]], key: tuple[str, str], dims: int, ids: list[str]
) -> tuple[dict[str, int], np.ndarray]:
    """The vectors of `ids` as the caller's transaction sees them (its snapshot: the matrix
    is caught up with what it reads), copied out under the matrix's lock: id -> its row, and
    the rows (normalised). Ids without a vector of the brain's dimension are left out."""
    entry = _entry(key)
    with entry.lock:
        _catch_up(conn, key[1], entry, dims)
        found = [(tid, entry.index[tid]) for tid in ids if tid in entry.index]
        rows = entry.vectors[[row for _, row in found]]  # a copy: later refreshes patch in place
    return {tid: n for n, (tid, _) in enumerate(found)}, rows


def _entry(key: tuple[str, str]) -> _Matrix:
    with _cache_lock:
        return _cache.setdefault(key, _Matrix())


def _catch_up(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, entry: _Matrix, dims: int
) -> None:
    now = sql.fingerprint(conn, brain_id)
    if entry.vectors is not None:
        if now == entry.fingerprint:
            return
        if _caught_up_by_newer(conn, brain_id, entry, now, dims):
            return
    _reload(conn, brain_id, entry, dims)
    entry.fingerprint = now


def _caught_up_by_newer(
    conn: psycopg.Connection[tuple[Any, ...]],
    brain_id: str,
    entry: _Matrix,
    now: tuple[int, int],
    dims: int,
) -> bool:
    import numpy as np

    newer = sql.written_after(conn, brain_id, max(entry.writers.values(), default=0))
    writers = dict(entry.writers)
    writers.update((tid, xmin) for tid, xmin, _, _ in newer)
    if (len(writers), sum(writers.values())) != now:
        return False  # a delete, or an older transaction committing late: read again
    added_ids, added = [], []
    for tid, _, gone, blob in newer:
        vector = unpack_vector(blob)
        if vector is None or len(vector) != dims:
            if tid in entry.index:
                entry.deleted[entry.index[tid]] = True  # no longer rankable
            continue
        if tid in entry.index:
            entry.vectors[entry.index[tid]] = _normalised(vector)
            entry.deleted[entry.index[tid]] = bool(gone)
        else:
            added_ids.append(tid)
            added.append((_normalised(vector), bool(gone)))
    if added:
        entry.index.update((tid, len(entry.ids) + i) for i, tid in enumerate(added_ids))
        entry.ids = entry.ids + added_ids
        entry.vectors = np.vstack([entry.vectors, np.stack([v for v, _ in added])])
        entry.deleted = np.concatenate([entry.deleted, [gone for _, gone in added]])
    entry.writers, entry.fingerprint = writers, now
    return True


def _reload(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, entry: _Matrix, dims: int
) -> None:
    import numpy as np

    rows = sql.row_writers(conn, brain_id)
    changed = [tid for tid, xmin, _ in rows if entry.writers.get(tid) != xmin]
    fetched = {tid: unpack_vector(blob) for tid, blob in sql.vectors_of(conn, brain_id, changed)}
    ids, vectors, deleted = [], [], []
    for tid, _, gone in rows:
        vector: Any = None  # gone meanwhile, unless found below
        if tid in fetched:
            got = fetched[tid]
            vector = _normalised(got) if got is not None else None
        elif tid in entry.index:
            vector = entry.vectors[entry.index[tid]]
        if vector is None or len(vector) != dims:
            continue  # not of the brain's dimension: never ranked
        ids.append(tid)
        vectors.append(vector)
        deleted.append(bool(gone))
    entry.vectors = np.vstack(vectors) if ids else np.zeros((0, dims), dtype=np.float32)
    entry.ids, entry.deleted = ids, np.asarray(deleted, dtype=bool)
    entry.index = {tid: i for i, tid in enumerate(ids)}
    entry.writers = {tid: xmin for tid, xmin, _ in rows}


def forget_cache(brain_id: str | None = None) -> None:
    """Drop the matrices in memory: every one, or those of one brain id (on any server)."""
    with _cache_lock:
        for key in [k for k in _cache if brain_id is None or k[1] == brain_id]:
            del _cache[key]


def rank(
    conn: psycopg.Connection[tuple[Any, ...]],
    key: tuple[str, str],
    query: Sequence[float],
    limit: int,
    allowed: set[str] | None,
) -> list[tuple[str, float]]:
    """The `limit` nearest traces as (id, cosine similarity), best first, tie → id; only
    live ones, or only `allowed` ones (a filter's ids) when given. A cosine of zero or less
    shares no meaning with the query: not a neighbour."""
    import numpy as np

    q = np.asarray(query, dtype=np.float32)
    norm = float(np.linalg.norm(q))
    if limit <= 0 or norm == 0.0:
        return []
    entry = refresh(conn, key, len(q))
    with entry.lock:
        scores = entry.vectors @ (q / norm)
        if allowed is None:
            scores[entry.deleted] = -np.inf
        else:
            keep = np.fromiter((tid in allowed for tid in entry.ids), bool, len(entry.ids))
            scores[~keep] = -np.inf
        ids = entry.ids
    take = min(len(scores), limit)
    if take == 0:
        return []
    top = np.argpartition(-scores, take - 1)[:take] if take < len(scores) else np.arange(take)
    found = [(ids[i], float(scores[i])) for i in top if scores[i] > 0.0]
    found.sort(key=lambda hit: (-hit[1], hit[0]))
    return found


def query_vector(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, embedder: Embedder, text: str
) -> list[float]:
    """The query's vector; EmbeddingModelMismatch when the embedder is not the brain's."""
    pinned = sql.pinned_model(conn, brain_id)
    check_pinned(brain_id, pinned, embedder.model, None)
    vector = embedder.embed([text])[0]
    check_pinned(brain_id, pinned, embedder.model, len(vector))
    return vector


def backfill(
    conn: psycopg.Connection[tuple[Any, ...]],
    brain_id: str,
    embedder: Embedder,
    batch: int = BACKFILL_BATCH,
    cancel_requested: Callable[[], bool] | None = None,
) -> Job[BackfillReport]:
    """A job: embed the brain's live traces without a vector, `batch` per call of the
    embedder, each batch one transaction (stopping keeps those written). A vector is written
    only where its trace still holds the text embedded; the model is pinned on the first."""
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= 10_000:
        raise InvalidArgument("batch", f"must be an integer from 1 to 10000 (got {batch!r})")
    check_pinned(brain_id, sql.pinned_model(conn, brain_id), embedder.model, None)
    total = sql.count_pending(conn, brain_id)
    embedded = stale = 0
    yield Progress(0, total, f"embedding {total} traces")
    last = ""
    while rows := sql.pending(conn, brain_id, last, batch):
        if cancel_requested is not None and cancel_requested():
            raise Cancelled()
        last = rows[-1][0]
        vectors = embedder.embed([content for _, content in rows])
        dims = len(vectors[0])
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"embed:{brain_id}",))
            check_pinned(brain_id, sql.pinned_model(conn, brain_id), embedder.model, dims)
            sql.pin_model(conn, brain_id, embedder.model, dims)
            written = sql.write_checked(conn, brain_id, rows, [pack_vector(v) for v in vectors])
        embedded += written
        stale += len(rows) - written
        yield Progress(embedded + stale, total, f"embedded {embedded} of {total} traces")
    return BackfillReport(embedded, stale, sql.count_pending(conn, brain_id))


def reindex(
    conn: psycopg.Connection[tuple[Any, ...]],
    brain_id: str,
    chunk: int = 2000,
    cancel_requested: Callable[[], bool] | None = None,
) -> Job[int]:
    """Check every live stored vector against the pinned dimension, in the caller's
    transaction, `chunk` rows a step: one that does not fit (or cannot be read) becomes
    pending; the dimension is pinned from the first vector when none is. The number of
    vectors that fit."""
    if isinstance(chunk, bool) or not isinstance(chunk, int) or not 1 <= chunk <= 100_000:
        raise InvalidArgument("chunk", f"must be an integer from 1 to 100000 (got {chunk!r})")
    total = sql.count_embedded(conn, brain_id)
    yield Progress(0, total, "checking the stored vectors")
    dims = sql.pinned_model(conn, brain_id)[1]
    done = indexed = 0
    last = ""
    while rows := sql.embedded_after(conn, brain_id, last, chunk):
        if cancel_requested is not None and cancel_requested():
            raise Cancelled()
        misfits = []
        for trace_id, blob in rows:
            vector = unpack_vector(blob)
            if vector is not None and dims is None:
                dims = len(vector)
                sql.pin_dimensions(conn, brain_id, dims)
            if vector is None or len(vector) != dims:
                misfits.append(trace_id)
            else:
                indexed += 1
        sql.make_pending(conn, brain_id, misfits)
        last = rows[-1][0]
        done += len(rows)
        yield Progress(done, total, f"checked {done} of {total} stored vectors")
    return indexed
