"""The semantic and hybrid search modes of a Brain, plugged in as `brain.semantic`.

`memgui.core.search` asks `brain.semantic.search(...)` first for the modes auto, hybrid and
semantic; None sends it down the keyword path (reported as "keyword"). That happens when
Ollama is unreachable or the brain has no vectors yet, so whether Ollama is up never changes
what a query can find by keyword.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from memgui.core import decay
from memgui.core.errors import EmbeddingUnavailable
from memgui.core.model import TraceFilter
from memgui.core.progress import Job
from memgui.core.search import hybrid, searching, textindex, vectors
from memgui.core.search.keyword import KeywordHit

if TYPE_CHECKING:
    from memgui.core.brain import Brain

Scored = list[tuple[float, int, dict[str, Any]]]

_LEGS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memgui-keyword-leg")


class MeaningSearch(Protocol):
    """What a brain asks of its search by meaning (`Brain.semantic`): `SemanticSearch` over
    an embedder, or any stand-in with the same three calls."""

    def search(
        self, brain: Brain, query: str, flt: TraceFilter, limit: int, mode: str
    ) -> tuple[Scored, str] | None: ...

    def backfill(self, brain: Brain, batch: int = ...) -> Job[hybrid.BackfillReport]: ...

    def embed_now(self, brain: Brain, trace_ids: list[str]) -> int: ...


def _holds(lock: threading.RLock) -> bool:
    return lock._is_owned()  # type: ignore[attr-defined]


class SemanticSearch:
    """Search by meaning for one embedder; one instance may serve several brains."""

    def __init__(self, embedder: hybrid.Embedder) -> None:
        self.embedder = embedder

    def search(
        self, brain: Brain, query: str, flt: TraceFilter, limit: int, mode: str
    ) -> tuple[Scored, str] | None:
        """(scored rows best first, mode used), or None to run the keyword path instead.

        In hybrid mode the keyword leg runs on a worker thread while this one embeds the
        query and multiplies the matrix: SQLite, the HTTP wait and numpy all release the GIL,
        so on two cores the legs overlap instead of adding up.
        """
        db = brain.db
        with db.lock:
            if not hybrid.has_embeddings(db.conn, brain.brain_id):
                return None
            pinned = vectors.pinned_model(db.conn, brain.brain_id)
        if not textindex.words(query):
            if mode == "auto":
                return None  # nothing to rank: the keyword path answers, and says "keyword"
            return [], mode
        from memgui.core.search import vector_cache  # numpy: loaded only once vectors are searched

        where: str | None = None
        params: list[Any] = []
        if flt != TraceFilter():  # live traces only need no SQL: the matrix holds just those
            where, params = searching.filter_sql(db, brain.brain_id, flt)
        caught_up = None
        keyword_leg: Future[list[KeywordHit]] | None = None
        # A caller inside a transaction holds the connection's lock: the worker would wait
        # for it forever, so the legs run one after the other there.
        if mode != "semantic" and not _holds(db.lock):
            if where is None and pinned[1] is not None:
                with db.lock:  # catch the matrix up now, so the product needs no SQL
                    caught_up = vector_cache.refresh(db.conn, brain.brain_id, pinned[1])
            keyword_leg = _LEGS.submit(
                searching.keyword_ranking, brain, query, flt, hybrid.OVERSAMPLE * limit
            )
        try:
            try:
                # The pin read above, not re-read: the worker may hold the connection.
                vectors.check_pinned(brain.brain_id, pinned, self.embedder.model, None)
                query_vector = self.embedder.embed([query])[0]
                model = self.embedder.model  # named again: the message names both models
                vectors.check_pinned(brain.brain_id, pinned, model, len(query_vector))
            except EmbeddingUnavailable:
                return self._keyword_only(brain, keyword_leg, limit, flt)
            except vectors.EmbeddingModelMismatch:
                if mode == "auto":  # auto never fails a search; hybrid and semantic say why
                    return self._keyword_only(brain, keyword_leg, limit, flt)
                raise
            want = limit if mode == "semantic" else hybrid.OVERSAMPLE * limit
            if caught_up is not None:
                semantic = vector_cache.rank(
                    db.conn, brain.brain_id, query_vector, want, caught_up=caught_up
                )
            else:
                with db.lock:
                    semantic = hybrid.semantic_ranking(
                        db.conn, brain.brain_id, query_vector, want, where, params,
                        trash=flt.deleted or flt.include_deleted,
                    )  # fmt: skip
            if keyword_leg is not None:
                hits = keyword_leg.result()
            elif mode != "semantic":
                hits = searching.keyword_ranking(brain, query, flt, hybrid.OVERSAMPLE * limit)
            else:
                hits = []
            with db.lock:
                return self._finish(brain, semantic, hits, where, limit, mode, flt)
        finally:
            if keyword_leg is not None:
                wait([keyword_leg])  # never leave the worker on the connection

    def _keyword_only(
        self,
        brain: Brain,
        keyword_leg: Future[list[KeywordHit]] | None,
        limit: int,
        flt: TraceFilter,
    ) -> tuple[Scored, str] | None:
        """Keyword mode's answer when meaning cannot be searched: the leg already running
        gives it (None, without one or when it ranked too few to be exact: the caller runs
        the keyword path)."""
        if keyword_leg is None:
            return None
        hits = keyword_leg.result()
        if not searching.holds_the_best(hits, limit, hybrid.OVERSAMPLE * limit):
            return None
        return searching.keyword_scored(brain, hits, limit, flt), "keyword"

    def _finish(
        self,
        brain: Brain,
        semantic: list[tuple[str, float]],
        hits: list[KeywordHit],
        where: str | None,
        limit: int,
        mode: str,
        flt: TraceFilter,
    ) -> tuple[Scored, str]:
        # Guard against a matrix that missed a write: a trace deleted or edited since
        # (vector cleared) never ranks by meaning. Only narrow columns are read here.
        current = _narrow(brain, [trace_id for trace_id, _ in semantic])
        semantic = [
            (tid, sim)
            for tid, sim in semantic
            if tid in current
            and current[tid].embedded
            and (where is not None or not current[tid].deleted)
        ]
        if mode == "semantic":
            top = semantic[:limit]
            snaps = searching.snapshots_by_rowid(
                brain, [(current[t].rowid, t) for t, _ in top], flt
            )
            scored = [
                (sim, current[tid].rowid, snaps[current[tid].rowid])
                for tid, sim in top
                if current[tid].rowid in snaps
            ]
            return scored, "semantic"
        keyword = [h.id for h in hits]
        semantic_ids = [trace_id for trace_id, _ in semantic]
        strengths = {tid: row.strength for tid, row in current.items()}
        rowids = {tid: row.rowid for tid, row in current.items()}
        for h in hits:
            strengths[h.id] = h.strength
            rowids[h.id] = h.rowid
        fused = hybrid.rrf_fuse(keyword, semantic_ids, strength=strengths.get)[:limit]
        snaps = searching.snapshots_by_rowid(brain, [(rowids[tid], tid) for tid, _ in fused], flt)
        scored = [
            (score, rowids[tid], snaps[rowids[tid]]) for tid, score in fused if rowids[tid] in snaps
        ]
        return scored, "hybrid"

    def backfill(
        self, brain: Brain, batch: int = hybrid.BACKFILL_BATCH
    ) -> Job[hybrid.BackfillReport]:
        """Embed the brain's pending traces (a job; see `hybrid.backfill`)."""
        return hybrid.backfill(
            brain.db.conn,
            brain.brain_id,
            self.embedder,
            batch,
            transaction=lambda: brain.write("embed", kind="embed", actor="sweep"),
        )

    def embed_now(self, brain: Brain, trace_ids: list[str]) -> int:
        """Embed just-written traces; Ollama down leaves them pending, never fails the write."""
        try:
            report = hybrid.embed_traces(
                brain.db.conn,
                brain.brain_id,
                self.embedder,
                trace_ids,
                transaction=lambda: brain.write("embed", kind="embed", actor="sweep"),
            )
        except (EmbeddingUnavailable, vectors.EmbeddingModelMismatch):
            return 0
        return report.embedded


class _Narrow(NamedTuple):
    rowid: int
    embedded: bool
    deleted: bool
    strength: float  # current, decayed


def _narrow(brain: Brain, trace_ids: list[str]) -> dict[str, _Narrow]:
    """What ranking needs of each trace, without reading its text, tags or metadata."""
    out: dict[str, _Narrow] = {}
    if not trace_ids:
        return out
    now = brain.now()
    for start in range(0, len(trace_ids), 500):
        chunk = trace_ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows = brain.db.conn.execute(
            "SELECT id, rowid, embedding_status, deleted, strength, created_at, last_accessed, "
            "category, CASE WHEN json_valid(metadata) THEN "
            "json_extract(metadata, '$.decay.stability') END FROM memory_traces "
            f"WHERE brain_id = ? AND id IN ({marks})",
            (brain.brain_id, *chunk),
        )
        for tid, rowid, status, deleted, stored, created, accessed, cat, stability in rows:
            meta = {"decay": {"stability": stability}} if stability is not None else {}
            current = decay.current_strength(stored or 0.0, created or 0, accessed, meta, cat, now)
            out[tid] = _Narrow(rowid, status == 1, bool(deleted), current)
    return out
