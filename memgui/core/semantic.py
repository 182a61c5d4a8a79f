"""The semantic and hybrid search modes of a Brain, plugged in as `brain.semantic`.

`memgui.core.search` asks `brain.semantic.search(...)` first for the modes auto, hybrid and
semantic; None sends it down the keyword path (reported as "keyword"). That happens when
Ollama is unreachable or the brain has no vectors yet, so whether Ollama is up never changes
what a query can find by keyword.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core import decay, hybrid, search, store, textindex, vectors
from memgui.core.errors import EmbeddingUnavailable
from memgui.core.model import TraceFilter
from memgui.core.progress import Job

if TYPE_CHECKING:
    from memgui.core.brain import Brain

Scored = list[tuple[float, int, dict[str, Any]]]


class SemanticSearch:
    """Search by meaning for one embedder; one instance may serve several brains."""

    def __init__(self, embedder: hybrid.Embedder) -> None:
        self.embedder = embedder

    def search(
        self, brain: Brain, query: str, flt: TraceFilter, limit: int, mode: str
    ) -> tuple[Scored, str] | None:
        """(scored rows best first, mode used), or None to run the keyword path instead."""
        db = brain.db
        with db.lock:
            if not hybrid.has_embeddings(db.conn, brain.brain_id):
                return None
        if not textindex.words(query):
            return [], "semantic" if mode == "semantic" else "hybrid"
        try:
            with db.lock:
                vectors.check_pin(db.conn, brain.brain_id, self.embedder.model, None)
            query_vector = self.embedder.embed([query])[0]
            with db.lock:
                vectors.check_pin(db.conn, brain.brain_id, None, len(query_vector))
        except EmbeddingUnavailable:
            return None
        except vectors.EmbeddingModelMismatch:
            if mode == "auto":
                return None  # auto never fails a search; hybrid and semantic say why
            raise
        where: str | None = None
        params: list[Any] = []
        if flt != TraceFilter():  # live traces only need no SQL: the matrix holds just those
            where, params = search.filter_sql(db, brain.brain_id, flt)
        with db.lock:
            want = limit if mode == "semantic" else hybrid.OVERSAMPLE * limit
            semantic = hybrid.semantic_ranking(
                db.conn, brain.brain_id, query_vector, want, where, params
            )
            # Guard against a matrix that missed a write: a trace deleted or edited since
            # (vector cleared) never ranks by meaning.
            current = self._rows(brain, [trace_id for trace_id, _ in semantic])
            semantic = [
                (tid, sim)
                for tid, sim in semantic
                if tid in current
                and current[tid][1]["embedding_status"] == 1
                and (where is not None or not current[tid][1]["deleted"])
            ]
            if mode == "semantic":
                rows = self._rows(brain, [trace_id for trace_id, _ in semantic])
                scored = [(sim, rows[tid][0], rows[tid][1]) for tid, sim in semantic if tid in rows]
                return scored, "semantic"
        keyword = [
            store.row_to_snapshot(row)["id"]
            for row, _ in search.keyword_candidates(brain, query, flt, hybrid.OVERSAMPLE * limit)
        ]
        semantic_ids = [trace_id for trace_id, _ in semantic]
        with db.lock:
            rows = self._rows(brain, list(dict.fromkeys(keyword + semantic_ids)))
        now = brain.now()
        strengths = {
            tid: decay.current_strength(
                snap["strength"],
                snap["created_at"],
                snap["last_accessed"],
                snap["metadata"],
                snap["category"],
                now,
            )
            for tid, (_, snap) in rows.items()
        }
        fused = hybrid.rrf_fuse(keyword, semantic_ids, strength=strengths.get)
        scored = [(score, rows[tid][0], rows[tid][1]) for tid, score in fused if tid in rows]
        return scored[:limit], "hybrid"

    @staticmethod
    def _rows(brain: Brain, trace_ids: list[str]) -> dict[str, tuple[int, dict[str, Any]]]:
        out = {}
        for trace_id in trace_ids:
            row = store.fetch_row(brain.db, brain.brain_id, trace_id)
            if row is not None:
                out[trace_id] = (row[0], store.row_to_snapshot(row))
        return out

    def backfill(self, brain: Brain, batch: int = hybrid.BACKFILL_BATCH) -> Job:
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
