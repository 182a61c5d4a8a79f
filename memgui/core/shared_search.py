"""Search on a shared brain: by keyword (the `_tsv` column), by meaning (`shared_vectors`),
or both fused (hybrid, `search.hybrid.rrf_fuse`), with the rules of a file's search
(`search/searching.py`, `search/semantic.py`): without an embedder or a vector in the brain,
every mode answers by keyword and says so; an embedder that cannot be reached falls back to
keyword; an embedder of another model than the brain's is refused (auto falls back). The
traces returned are noted as recalled (`postgres_recall`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core import links
from memgui.core.errors import EmbeddingUnavailable, InvalidArgument, NotOnPostgres
from memgui.core.model import SearchHit, SearchResult, TraceFilter
from memgui.core.search import hybrid, textindex
from memgui.core.search.searching import check_query
from memgui.core.search.vectors import EmbeddingModelMismatch
from memgui.core.storage import postgres, postgres_recall, postgres_vectors, store

if TYPE_CHECKING:
    from memgui.core.shared_brain import SharedBrain

MODES = ("auto", "keyword", "semantic", "hybrid")
Scored = list[tuple[float, dict[str, Any]]]


def search(
    brain: SharedBrain,
    query: str,
    flt: TraceFilter,
    limit: int,
    mode: str,
    expand_links: bool,
    record_recall: bool,
) -> SearchResult:
    check_query(query, limit)
    if mode == "cognitive":
        raise NotOnPostgres("search by 'cognitive'")
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
    now = brain.now()
    if record_recall and scored:
        ids = [snap["id"] for _, snap in scored]
        recalled = postgres_recall.note_recalls(brain.conn, brain.brain_id, where, ids, now)
        # One another writer holds just now is returned as read, its recall not noted.
        scored = [(score, recalled.get(s["id"], s)) for score, s in scored]
    hits = tuple(
        SearchHit(
            trace,
            score,
            tuple(brain.related(trace.id, links.MAX_RELATED)) if expand_links else (),
            query,
        )
        for score, snap in scored
        for trace in (store.snapshot_to_trace(snap, 0, now),)
    )
    return SearchResult(hits=hits, search_mode=used)


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
        snaps = _snapshots(brain, where, [tid for tid, _ in semantic])
        return [(sim, snaps[tid]) for tid, sim in semantic if tid in snaps], "semantic"
    rows = postgres.keyword_rows(brain.conn, where, query, hybrid.OVERSAMPLE * limit)
    keyword = [store.row_to_snapshot(r[:-1]) for r in rows]
    snaps = {s["id"]: s for s in keyword}
    snaps.update(_snapshots(brain, where, [tid for tid, _ in semantic if tid not in snaps]))
    now = brain.now()
    fused = hybrid.rrf_fuse(
        [s["id"] for s in keyword],
        [tid for tid, _ in semantic if tid in snaps],
        strength=lambda tid: _strength(snaps[tid], now) if tid in snaps else 0.0,
    )[:limit]
    return [(score, snaps[tid]) for tid, score in fused], "hybrid"


def _strength(snap: dict[str, Any], now: int) -> float:
    return store.snapshot_to_trace(snap, 0, now).strength


def _snapshots(
    brain: SharedBrain, where: tuple[str, list[Any]], ids: list[str]
) -> dict[str, dict[str, Any]]:
    """The rows of `ids` that pass the search's filter now, by id (a trace forgotten since
    the matrix was read is left out)."""
    if not ids:
        return {}
    sql, params = where
    rows = brain.conn.execute(
        f"SELECT {postgres.COLUMNS} FROM memory_traces WHERE {sql} AND id = ANY(%s)",
        (*params, ids),
    ).fetchall()
    return {snap["id"]: snap for snap in map(store.row_to_snapshot, rows)}
