"""Search and search by meaning on a shared brain: the calls `SharedBrain` takes in from
here (`shared_search.py`, `shared_vectors.py`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memgui.core import shared_search, shared_vectors
from memgui.core.errors import InvalidArgument
from memgui.core.model import SearchResult, Trace, TraceFilter, check_limit
from memgui.core.progress import Job
from memgui.core.search.embed import unpack_vector
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
        raise NotImplementedError  # SharedBrain's: itself, as the helpers take it

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
        `core/shared_search.py` says; `cognitive`: AgentOS's composite score, its `parts` on
        each hit (`mood`, `core/shared_cognitive.py`). The traces returned are noted as
        recalled unless `record_recall` is false."""
        return shared_search.search(
            self._brain(),
            query,
            flt or TraceFilter(),
            limit,
            mode,
            expand_links,
            record_recall,
            mood,
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

    def rebuild_vectors(
        self,
        embedder: Embedder,
        batch: int = BACKFILL_BATCH,
        cancel_requested: Callable[[], bool] | None = None,
    ) -> Job[BackfillReport]:
        """A job (`memgui embed --rebuild --model M`): drop every vector of the brain and its
        pinned model, then embed every live trace with `embedder`, as on a file
        (`hybrid.rebuild`). The embedder is asked first, so a missing model or a server
        that does not answer changes nothing; the drop is one transaction under the brain's
        lock for long work (refused while an import or a merge holds it); each batch after
        it commits on its own, so a cancel keeps those written and leaves the rest pending."""
        embedder.embed(["dimension probe"])
        with self._brain().writing(None, kind="embed", lock="embed --rebuild"):
            postgres_vectors.clear(self.conn, self.brain_id)
        return (
            yield from shared_vectors.backfill(
                self.conn, self.brain_id, embedder, batch, cancel_requested
            )
        )

    def reindex_vectors(
        self, chunk: int = 2000, cancel_requested: Callable[[], bool] | None = None
    ) -> Job[int]:
        """A job (`memgui embed --reindex`): a shared brain's vector index is each program's
        matrix in memory, kept in step with the server by itself (`shared_vectors`); this
        checks every stored vector against the brain's pinned dimension (pinned from the
        first vector when none is), makes those that do not fit (or cannot be read) pending
        for `embed`, and reads this program's matrix again. One transaction under the
        brain's lock for long work: a cancel changes nothing. Returns the vectors indexed."""
        with self._brain().writing(None, kind="embed", lock="embed --reindex"):
            indexed = yield from shared_vectors.reindex(
                self.conn, self.brain_id, chunk, cancel_requested
            )
        shared_vectors.forget_cache(self.brain_id)
        return indexed

    def similar(self, trace_id: str, limit: int = 10) -> list[tuple[Trace, float]]:
        """Nearest live traces of a trace by its stored vector ("similar memories"), best
        first, as (trace, cosine); none when it has no vector (not embedded yet)."""
        check_limit(limit)
        brain = self._brain()
        brain.get(trace_id)  # an unknown trace is NotFound, not "nothing similar"
        stored = postgres_vectors.vectors_of(self.conn, self.brain_id, [trace_id])
        vector = unpack_vector(stored[0][1]) if stored else None
        dims = postgres_vectors.pinned_model(self.conn, self.brain_id)[1]
        if vector is None or len(vector) != dims:
            return []  # not embedded, or not of the brain's dimension: never ranked
        key = (brain.address.conninfo, self.brain_id)
        # One more than asked: the ranking counts the trace itself before it is dropped.
        ranked = shared_vectors.rank(self.conn, key, vector.tolist(), limit + 1, None)
        found = brain.get_many([tid for tid, _ in ranked if tid != trace_id])
        return [(found[t], score) for t, score in ranked if t in found][:limit]
