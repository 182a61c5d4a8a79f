"""Search on a shared brain: by keyword (the `_tsv` column), by meaning (`shared_vectors`),
or both fused (hybrid, `search.hybrid.rrf_fuse`), with the rules of a file's search
(`search/searching.py`, `search/semantic.py`): without an embedder or a vector in the brain,
every mode answers by keyword and says so; an embedder that cannot be reached falls back to
keyword; an embedder of another model than the brain's is refused (auto falls back). The
traces returned are noted as recalled (`postgres_recall`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core import shared_cognitive, shared_hits
from memgui.core.errors import EmbeddingUnavailable, InvalidArgument
from memgui.core.model import SearchResult, TraceFilter
from memgui.core.search import cognitive, hybrid, textindex
from memgui.core.search.searching import check_query
from memgui.core.search.vectors import EmbeddingModelMismatch
from memgui.core.storage import postgres, postgres_vectors, store

if TYPE_CHECKING:
    from memgui.core.shared_brain import SharedBrain

MODES = ("auto", "keyword", "semantic", "hybrid", "cognitive")
Scored = list[tuple[float, dict[str, Any]]]


def search(
    brain: SharedBrain,
    query: str,
    flt: TraceFilter,
    limit: int,
    mode: str,
    expand_links: bool,
    record_recall: bool,
    mood: float | None = None,
) -> SearchResult:
    check_query(query, limit)
    if mode == cognitive.MODE:
        return shared_cognitive.search(brain, query, flt, limit, mood, expand_links, record_recall)
    if mood is not None:
        raise InvalidArgument("mood", f"is for the cognitive mode only (got mode {mode!r})", mood)
    if mode not in MODES:
        raise InvalidArgument("mode", f"must be one of {', '.join(MODES)} (got {mode!r})", mode)
    where = brain.where(flt)
    if not query.strip():
        return SearchResult(hits=(), search_mode="keyword")
    answer = _by_meaning(brain, query, where, flt, limit, mode)
    if answer is None:
        rows = postgres.keyword_rows(brain.conn, where, query, limit)
        answer = [(float(r[-1]), store.row_to_snapshot(r[:-1])) for r in rows], "keyword"
    scored, used = answer
    return shared_hits.finish(brain, query, scored, used, expand_links, record_recall, where)


def _by_meaning(
    brain: SharedBrain,
    query: str,
    where: tuple[str, list[Any]],
    flt: TraceFilter,
    limit: int,
    mode: str,
) -> tuple[Scored, str] | None:
    """(scored best first, mode used), or None for the keyword path."""
    from memgui.core import shared_vectors

    embedder = brain.embedder
    if mode == "keyword" or embedder is None:
        return None
    if not postgres_vectors.has_embeddings(brain.conn, brain.brain_id):
        return None
    if not textindex.words(query):
        return None if mode == "auto" else ([], mode)
    try:
        vector = shared_vectors.query_vector(brain.conn, brain.brain_id, embedder, query)
    except EmbeddingUnavailable:
        return None
    except EmbeddingModelMismatch:
        if mode == "auto":  # auto never fails a search; hybrid and semantic say why
            return None
        raise
    allowed = None if flt == TraceFilter() else postgres_vectors.passing(brain.conn, where)
    want = limit if mode == "semantic" else hybrid.OVERSAMPLE * limit
    key = (brain.address.conninfo, brain.brain_id)
    semantic = shared_vectors.rank(brain.conn, key, vector, want, allowed)
    if mode == "semantic":
        snaps = shared_hits.snapshots(brain, where, [tid for tid, _ in semantic])
        return [(sim, snaps[tid]) for tid, sim in semantic if tid in snaps], "semantic"
    rows = postgres.keyword_rows(brain.conn, where, query, hybrid.OVERSAMPLE * limit)
    keyword = [store.row_to_snapshot(r[:-1]) for r in rows]
    snaps = {s["id"]: s for s in keyword}
    snaps.update(
        shared_hits.snapshots(brain, where, [tid for tid, _ in semantic if tid not in snaps])
    )
    now = brain.now()
    fused = hybrid.rrf_fuse(
        [s["id"] for s in keyword],
        [tid for tid, _ in semantic if tid in snaps],
        strength=lambda tid: _strength(snaps[tid], now) if tid in snaps else 0.0,
    )[:limit]
    return [(score, snaps[tid]) for tid, score in fused], "hybrid"


def _strength(snap: dict[str, Any], now: int) -> float:
    return store.snapshot_to_trace(snap, 0, now).strength
