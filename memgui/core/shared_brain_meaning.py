"""Search and search by meaning on a shared brain: the calls `SharedBrain` takes in from
here (`shared_search.py`, `shared_vectors.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core import shared_search, shared_vectors
from memgui.core.errors import InvalidArgument, NotOnPostgres
from memgui.core.model import SearchResult, TraceFilter
from memgui.core.progress import Job
from memgui.core.search.hybrid import BACKFILL_BATCH, BackfillReport, Embedder
from memgui.core.storage import postgres_vectors

if TYPE_CHECKING:
    import psycopg

    from memgui.core.shared_brain import SharedBrain


class SharedBrainMeaning:
    """Mixed into `SharedBrain`, which has the connection and the brain id."""

    conn: psycopg.Connection[tuple[Any, ...]]
    brain_id: str
    embedder: Embedder | None

    def _brain(self) -> SharedBrain:
        from memgui.core.shared_brain import SharedBrain

        assert isinstance(self, SharedBrain)
        return self

    def search(
        self,
        query: str,
        flt: TraceFilter | None = None,
        limit: int = 50,
        mode: str = "auto",
        expand_links: bool = False,
        record_recall: bool = True,
        mood: float | None = None,
    ) -> SearchResult:
        """By keyword (`_tsv`, `websearch_to_tsquery`, best `ts_rank` first), by meaning or
        hybrid once the brain holds vectors and an embedder is set (`use_embedder`), as
        `core/shared_search.py` says; the traces returned are noted as recalled unless
        `record_recall` is false."""
        if mood is not None:
            raise NotOnPostgres("search with a mood")
        return shared_search.search(
            self._brain(), query, flt or TraceFilter(), limit, mode, expand_links, record_recall
        )

    def use_embedder(self, embedder: Embedder | None) -> None:
        """The embedder that search by meaning and `backfill` use (none: keyword only)."""
        self.embedder = embedder

    def embedding_info(self) -> dict[str, Any]:
        model, dims = postgres_vectors.pinned_model(self.conn, self.brain_id)
        pending = postgres_vectors.count_pending(self.conn, self.brain_id)
        return {"model": model, "dimensions": dims, "pending": pending}

    def backfill(self, batch: int = BACKFILL_BATCH) -> Job[BackfillReport]:
        """A job: embed the live traces without a vector (`shared_vectors.backfill`)."""
        if self.embedder is None:
            raise InvalidArgument("embedder", "must be set to embed (use_embedder; got none)")
        return shared_vectors.backfill(self.conn, self.brain_id, self.embedder, batch)
