"""The `cognitive` search mode on a shared brain: AgentOS's composite score with a file's
rules and weights (`search/cognitive.py`, which says what each part is), each hit with its
parts and why.

The similarity leg is the cosine of the query's vector and the trace's (the matrix of
`shared_vectors`) when the brain has vectors and the embedder answers with its model; else
the trace's `ts_rank` relative to the best keyword match. The graph leg spreads activation
from the nodes the query names, a wave of nodes per statement
(`storage/postgres_cognitive.py`). Only the returned traces are noted as recalled.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from memgui.core import shared_hits, shared_vectors
from memgui.core.errors import EmbeddingUnavailable
from memgui.core.model import SearchResult, TraceFilter
from memgui.core.search import cognitive, textindex
from memgui.core.search.vectors import EmbeddingModelMismatch
from memgui.core.storage import postgres, postgres_cognitive, postgres_vectors, store

if TYPE_CHECKING:
    from memgui.core.shared_brain import SharedBrain


def search(
    brain: SharedBrain,
    query: str,
    flt: TraceFilter,
    limit: int,
    mood: float | None,
    expand_links: bool,
    record_recall: bool,
) -> SearchResult:
    """The best `limit` traces by the composite score (query and limit checked)."""
    mood = cognitive.check_mood(mood)
    where = brain.where(flt)
    if not textindex.words(query):
        return SearchResult(hits=(), search_mode=cognitive.MODE)
    pool = 2 * limit
    similarity = _by_vector(brain, query, flt, where, pool)
    source = "vector"
    if similarity is None:
        similarity, source = _by_keyword(brain, query, where, pool), "keyword"
    snaps = shared_hits.snapshots(brain, where, list(similarity))
    activation = _activation(brain, query)
    now = brain.now()
    ranked: list[tuple[float, dict[str, Any], dict[str, float]]] = []
    for trace_id, snap in snaps.items():
        parts = cognitive.score_parts(snap, similarity[trace_id], activation, mood, now)
        total = sum(cognitive.WEIGHTS[k] * parts[k] for k in cognitive.WEIGHTS)
        ranked.append((max(0.0, min(1.0, total)), snap, parts))
    ranked.sort(key=lambda r: (-r[0], r[1]["id"]))
    ranked = ranked[:limit]
    result = shared_hits.finish(
        brain,
        query,
        [(score, snap) for score, snap, _ in ranked],
        cognitive.MODE,
        expand_links,
        record_recall,
        where,
    )
    parts_of = {
        snap["id"]: dict(parts, similaritySource=source, why=cognitive.why(parts, score))
        for score, snap, parts in ranked
    }
    hits = tuple(replace(hit, parts=parts_of[hit.trace.id]) for hit in result.hits)
    return SearchResult(hits=hits, search_mode=cognitive.MODE)


def _by_vector(
    brain: SharedBrain,
    query: str,
    flt: TraceFilter,
    where: tuple[str, list[Any]],
    pool: int,
) -> dict[str, float] | None:
    """trace id -> cosine of the nearest traces, or None when meaning cannot be searched
    (no embedder, no vectors, the embedder down or of another model than the brain's)."""
    embedder = brain.embedder
    if embedder is None or not postgres_vectors.has_embeddings(brain.conn, brain.brain_id):
        return None
    try:
        vector = shared_vectors.query_vector(brain.conn, brain.brain_id, embedder, query)
    except (EmbeddingUnavailable, EmbeddingModelMismatch):
        return None
    allowed = None if flt == TraceFilter() else postgres_vectors.passing(brain.conn, where)
    key = (brain.address.conninfo, brain.brain_id)
    return dict(shared_vectors.rank(brain.conn, key, vector, pool, allowed))


def _by_keyword(
    brain: SharedBrain, query: str, where: tuple[str, list[Any]], pool: int
) -> dict[str, float]:
    """trace id -> `ts_rank` relative to the best match: the similarity without vectors."""
    rows = postgres.keyword_rows(brain.conn, where, query, pool)
    ranks = {store.row_to_snapshot(r[:-1])["id"]: float(r[-1]) for r in rows}
    best = max(ranks.values(), default=0.0)
    return {tid: (rank / best if best > 0 else 0.0) for tid, rank in ranks.items()}


def _activation(brain: SharedBrain, query: str) -> dict[str, float]:
    phrases = cognitive.query_phrases(query)
    if not phrases:
        return {}
    conn, bid = brain.conn, brain.brain_id

    def spread() -> dict[str, float]:
        return cognitive.spread(
            phrases,
            postgres_cognitive.named_nodes(conn, bid, phrases),
            lambda wave: postgres_cognitive.neighbours_of(conn, bid, wave),
            lambda nodes: postgres_cognitive.labels_of(conn, bid, nodes),
        )

    if conn.info.transaction_status.name != "IDLE":
        return spread()  # inside the caller's transaction (a batch): its snapshot
    with conn.transaction():  # one snapshot of the graph for the whole spread
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        return spread()
