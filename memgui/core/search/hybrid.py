"""Hybrid search (RRF of the keyword and semantic rankings) and the embedding backfill.

Hybrid = Reciprocal Rank Fusion with k = 60: a trace at 1-based rank r in a ranking scores
1 / (60 + r), a trace found by both rankings sums both, so "2nd in both beats 1st in one".
The fused score is then multiplied once by the trace's (decayed) strength; an added term would
swamp RRF scores, which never exceed 2/61. Ties go to the smaller id.

Backfill embeds pending traces in batches and writes each vector only if the trace still holds
the very text that was embedded, checked in the same transaction as the write: a vector of old
text is never stored over new text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

import apsw

from memgui.core.progress import Cancelled, Job, Progress
from memgui.core.search import vectors
from memgui.core.search.embed import pack_vector, unpack_vector

if TYPE_CHECKING:
    import numpy as np

# numpy loads on first use (~0.1 s): a CLI call that handles no vector never pays it.

RRF_K = 60
OVERSAMPLE = 4  # each leg ranks 4 × limit candidates before fusion
BACKFILL_BATCH = 128

Transaction = Callable[[], AbstractContextManager[Any]]


class Embedder(Protocol):
    model: str

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


@dataclass(frozen=True)
class BackfillReport:
    embedded: int  # vectors written
    stale: int  # embedded text changed (or the trace went away) meanwhile: not written
    remaining: int  # traces of the brain still pending


def rrf_fuse(
    keyword_ids: Sequence[str],
    semantic_ids: Sequence[str],
    k: int = RRF_K,
    strength: Mapping[str, float] | Callable[[str], float | None] | None = None,
) -> list[tuple[str, float]]:
    """Fuse two rankings (best first) into (id, score), best first; tie → id ascending."""
    scores: dict[str, float] = {}
    for ranking in (keyword_ids, semantic_ids):
        for rank, trace_id in enumerate(dict.fromkeys(ranking), start=1):
            scores[trace_id] = scores.get(trace_id, 0.0) + 1.0 / (k + rank)
    if strength is not None:
        weight = strength.get if isinstance(strength, Mapping) else strength
        scores = {tid: score * float(weight(tid) or 0.0) for tid, score in scores.items()}
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


# --- the semantic leg ---------------------------------------------------------------------


def has_embeddings(conn: apsw.Connection, brain_id: str) -> bool:
    """Whether any live trace of the brain has a vector (auto mode picks hybrid then)."""
    row = conn.execute(
        f"SELECT 1 FROM memory_traces WHERE brain_id = ? AND deleted = 0 "
        f"AND {vectors.embedded_sql(conn)} LIMIT 1",
        (brain_id,),
    ).fetchone()
    return row is not None


def query_vector(conn: apsw.Connection, brain_id: str, embedder: Embedder, text: str) -> np.ndarray:
    """The query's vector; EmbeddingModelMismatch when the embedder is not the brain's model."""
    vectors.check_pin(conn, brain_id, embedder.model, None)
    import numpy as np

    vector = np.asarray(embedder.embed([text])[0], dtype=np.float32)
    vectors.check_pin(conn, brain_id, embedder.model, len(vector))
    return vector


def semantic_ranking(
    conn: apsw.Connection,
    brain_id: str,
    query: np.ndarray | Sequence[float],
    n: int,
    where: str | None = None,
    params: Sequence[object] = (),
    mechanism: Literal["matrix", "vec0"] = "matrix",
    exclude_id: str | None = None,
    trash: bool = False,
) -> list[tuple[str, float]]:
    """The n nearest traces as (id, cosine similarity), filtered by `where` before the cut.

    With `trash` (a filter reaching forgotten traces), those are ranked too: no index holds
    them (the matrix and vec0 hold live traces), so their stored vectors are read and
    compared one by one, which the trash's size allows."""
    if trash:
        live = semantic_ranking(conn, brain_id, query, n, where, params, mechanism, exclude_id)
        both = live + _trashed_ranking(conn, brain_id, query, n, where, params, exclude_id)
        return sorted(both, key=lambda hit: -hit[1])[:n]
    if vectors.pinned_model(conn, brain_id)[1] is None:
        return []  # nothing was ever embedded in this brain
    if mechanism == "vec0":
        if exclude_id is not None:
            where, params = f"({where or 't.deleted = 0'}) AND t.id != ?", (*params, exclude_id)
        hits = vectors.knn_vec0(conn, brain_id, query, n, where or "t.deleted = 0", params)
        return [(trace_id, 1.0 - distance) for trace_id, distance in hits]
    exclude_rowid = None
    if exclude_id is not None:
        row = conn.execute(
            "SELECT rowid FROM memory_traces WHERE brain_id = ? AND id = ?", (brain_id, exclude_id)
        ).fetchone()
        exclude_rowid = row[0] if row else None
    from memgui.core.search import vector_cache

    return vector_cache.rank(conn, brain_id, query, n, where, params, exclude_rowid)


def semantic_leg(
    conn: apsw.Connection,
    brain_id: str,
    embedder: Embedder,
    query: str,
    limit: int,
    where: str | None = None,
    params: Sequence[object] = (),
) -> list[str]:
    """Trace ids ranked by meaning, over-sampled to OVERSAMPLE × limit (EmbeddingUnavailable)."""
    vector = query_vector(conn, brain_id, embedder, query)
    hits = semantic_ranking(conn, brain_id, vector, OVERSAMPLE * limit, where, params)
    return [trace_id for trace_id, _ in hits]


def similar_traces(
    conn: apsw.Connection,
    brain_id: str,
    trace_id: str,
    limit: int = 10,
    where: str | None = None,
    params: Sequence[object] = (),
) -> list[tuple[str, float]]:
    """ "Similar memories": nearest neighbours of a trace by its own stored vector."""
    row = conn.execute(
        f"SELECT embedding FROM memory_traces WHERE brain_id = ? AND id = ? "
        f"AND {vectors.embedded_sql(conn)}",
        (brain_id, trace_id),
    ).fetchone()
    vector = unpack_vector(row[0]) if row else None
    if vector is None:
        return []
    return semantic_ranking(conn, brain_id, vector, limit, where, params, exclude_id=trace_id)


def _trashed_ranking(
    conn: apsw.Connection,
    brain_id: str,
    query: np.ndarray | Sequence[float],
    n: int,
    where: str | None,
    params: Sequence[object],
    exclude_id: str | None,
) -> list[tuple[str, float]]:
    import numpy as np

    dimensions = vectors.pinned_model(conn, brain_id)[1]
    rows = list(
        conn.execute(
            "SELECT t.id, t.embedding FROM memory_traces AS t WHERE t.brain_id = ? "
            f"AND t.deleted = 1 AND t.embedding IS NOT NULL AND ({where or '1'})",
            (brain_id, *params),
        )
    )
    ids, matrix = [], []
    for trace_id, blob in rows:
        vector = unpack_vector(blob)
        if trace_id != exclude_id and vector is not None and len(vector) == dimensions:
            ids.append(trace_id)
            matrix.append(vector / (np.linalg.norm(vector) or 1.0))
    if not ids:
        return []
    target = np.asarray(query, dtype=np.float32)
    scores = np.stack(matrix) @ (target / (np.linalg.norm(target) or 1.0))
    best = np.argsort(-scores)[:n]
    return [(ids[i], float(scores[i])) for i in best]


# --- writing vectors ----------------------------------------------------------------------


def _pending(conn: apsw.Connection, brain_id: str, after: int, batch: int) -> list[tuple[Any, ...]]:
    return list(
        conn.execute(
            f"SELECT rowid, content FROM memory_traces WHERE brain_id = ? AND deleted = 0 "
            f"AND {vectors.pending_sql(conn)} AND rowid > ? ORDER BY rowid LIMIT ?",
            (brain_id, after, batch),
        )
    )


def count_pending(conn: apsw.Connection, brain_id: str) -> int:
    return conn.execute(
        f"SELECT count(*) FROM memory_traces WHERE brain_id = ? AND deleted = 0 "
        f"AND {vectors.pending_sql(conn)}",
        (brain_id,),
    ).get


def write_checked(
    conn: apsw.Connection,
    brain_id: str,
    model: str,
    rows: Iterable[tuple[int, str]],
    embeddings: Sequence[Sequence[float]],
    transaction: Transaction | None = None,
) -> tuple[int, int]:
    """Store vectors for (rowid, embedded text) pairs; returns (written, stale).

    In one transaction: the pin is checked (and set on first use), then each vector is written
    only where the row is still live, still pending and still holds exactly the embedded text.
    """
    rows = list(rows)
    dimensions = len(embeddings[0]) if embeddings else 0
    written: list[tuple[int, bytes]] = []
    with (transaction or (lambda: conn))():
        if not rows:
            return 0, 0
        vectors.pin_model(conn, brain_id, model, dimensions)
        vectors.ensure_index(conn, dimensions)
        for (rowid, content), vector in zip(rows, embeddings, strict=True):
            blob = pack_vector(vector)
            conn.execute(
                "UPDATE memory_traces SET embedding = ?, embedding_status = 1 "
                f"WHERE rowid = ? AND brain_id = ? AND deleted = 0 AND content = ? "
                f"AND {vectors.PENDING_SQL}",  # a write: the brain is migrated
                (blob, rowid, brain_id, content),
            )
            if conn.changes() == 1:
                written.append((rowid, blob))
        vectors.index_written(conn, brain_id, written)
    return len(written), len(rows) - len(written)


def backfill(
    conn: apsw.Connection,
    brain_id: str,
    embedder: Embedder,
    batch: int = BACKFILL_BATCH,
    transaction: Transaction | None = None,
    cancel_requested: Callable[[], bool] | None = None,
) -> Job[BackfillReport]:
    """Embed the brain's pending traces, `batch` per Ollama call; yields Progress.

    Each batch commits on its own, so stopping (Cancelled, EmbeddingUnavailable) keeps the
    batches already written. Raises EmbeddingModelMismatch before calling Ollama when the
    embedder's model is not the brain's.
    """
    vectors.check_pin(conn, brain_id, embedder.model, None)
    total = count_pending(conn, brain_id)
    embedded = stale = 0
    yield Progress(0, total, f"embedding {total} traces")
    last = 0
    while rows := _pending(conn, brain_id, last, batch):
        if cancel_requested is not None and cancel_requested():
            raise Cancelled()
        last = rows[-1][0]
        texts = [content for _, content in rows]
        vectors_out = embedder.embed(texts)
        written, skipped = write_checked(
            conn, brain_id, embedder.model, rows, vectors_out, transaction
        )
        embedded += written
        stale += skipped
        yield Progress(embedded + stale, total, f"embedded {embedded} of {total} traces")
    return BackfillReport(embedded, stale, count_pending(conn, brain_id))


def embed_traces(
    conn: apsw.Connection,
    brain_id: str,
    embedder: Embedder,
    trace_ids: Sequence[str],
    transaction: Transaction | None = None,
) -> BackfillReport:
    """Embed these traces now (after an add or edit committed); EmbeddingUnavailable leaves
    them pending for the backfill."""
    vectors.check_pin(conn, brain_id, embedder.model, None)
    marks = ",".join("?" * len(trace_ids))
    rows = list(
        conn.execute(
            f"SELECT rowid, content FROM memory_traces WHERE brain_id = ? AND id IN ({marks}) "
            f"AND deleted = 0 AND {vectors.pending_sql(conn)} ORDER BY rowid",
            (brain_id, *trace_ids),
        )
    )
    if not rows:
        return BackfillReport(0, 0, count_pending(conn, brain_id))
    embeddings = embedder.embed([content for _, content in rows])
    written, stale = write_checked(conn, brain_id, embedder.model, rows, embeddings, transaction)
    return BackfillReport(written, stale, count_pending(conn, brain_id))


def rebuild(
    conn: apsw.Connection,
    brain_id: str,
    embedder: Embedder,
    batch: int = BACKFILL_BATCH,
    transaction: Transaction | None = None,
    cancel_requested: Callable[[], bool] | None = None,
) -> Job[BackfillReport]:
    """`memgui embed --rebuild --model M`: drop every vector and the pin, re-embed all.

    The model is probed first, so a missing model or a down Ollama changes nothing.
    """
    embedder.embed(["dimension probe"])
    with (transaction or (lambda: conn))():
        vectors.clear_embeddings(conn, brain_id)
    return (yield from backfill(conn, brain_id, embedder, batch, transaction, cancel_requested))
