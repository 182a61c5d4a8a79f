"""The facade: everything a person or an agent can do to a brain (docs/core-api.md)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memgui.core import (
    activity,
    brain_info,
    conversations,
    graph,
    journal,
    links,
    scopes,
    traces,
    undo,
)
from memgui.core.activity_file import FileActivity
from memgui.core.brain_file import BrainFile
from memgui.core.brain_write import Batch, BrainWrite
from memgui.core.changes import ChangesWithCount, ChangesWithId
from memgui.core.errors import (
    BrainBusy,
    BrainFileLost,
    BrainIdRequired,
    EmbeddingUnavailable,
    StorageError,
)
from memgui.core.model import (
    MAX_NEIGHBOURS,
    Changes,
    JournalEntry,
    Neighbour,
    RelatedSummary,
    SearchResult,
    Trace,
    TraceFilter,
    changes_of,
    check_after,
    check_filter,
    check_id,
    check_int_range,
    check_limit,
    check_lookup_ids,
    check_seconds,
    now_ms,
    with_changes,
)
from memgui.core.progress import run_to_end
from memgui.core.scopes import SweepReport
from memgui.core.search import cognitive, fulltext, hybrid, searching, vectors
from memgui.core.search.embed import unpack_vector
from memgui.core.search.semantic import MeaningSearch, SemanticSearch
from memgui.core.storage import reads, store
from memgui.core.storage.db import Database

ORDER_COLUMNS = reads.ORDER_COLUMNS  # the sort keys of `list_traces` and `list_ids`


MAX_JOURNAL_LIMIT = 10_000  # rows per journal_since call (the app pages by 200)
EMBED_NOW_MAX = 32  # traces a revert embeds in the call; more wait for the backfill
MAX_WRITE_WAIT_S = 86_400.0  # a day: a write waits for another's lock at most so long


class Brain(BrainFile, activity.ActivityReview):
    """One brain (one `brain_id`) in one SQLite file."""

    def __init__(self, db: Database, brain_id: str, actor: str) -> None:
        self.db = db
        self.brain_id = brain_id
        self.actor = actor
        self.clock: Callable[[], int] = now_ms
        # Search by meaning (a SemanticSearch over the embedder `use_embedder` is given).
        self.semantic: MeaningSearch | None = None
        self.auto_embed = False  # embed each add/edit right away (the CLI); the app backfills

    # --- opening ---------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        brain_id: str | None = None,
        *,
        actor: str = "cli",
        create: bool = True,
    ) -> Brain:
        """Open (or, with `create`, make) the brain file at `path`. A second connection on a
        file already open passes `create=False`: if the file went, it says so (`BrainFileLost`)
        instead of making an empty brain there."""
        if brain_id is not None:  # checked before the file is opened, or made
            check_id("brain_id", brain_id, "brain id")
        db = Database(path, create=create)
        try:
            db.check_not_too_new()
            ids = db.brain_ids()
            if brain_id is None:
                if len(ids) > 1:
                    raise BrainIdRequired(str(db.path), ids)
                brain_id = ids[0] if ids else Path(path).stem
            elif ids and brain_id not in ids and not db.created:
                raise BrainIdRequired(str(db.path), ids, given=brain_id)
        except BaseException:
            db.close()
            raise
        return cls(db, brain_id, actor)

    def use_embedder(self, embedder: hybrid.Embedder | None, auto_embed: bool = False) -> None:
        """Turn on search by meaning with an embedder (`core.search.embed.OllamaEmbedder`)."""
        self.semantic = SemanticSearch(embedder) if embedder is not None else None
        self.auto_embed = auto_embed and embedder is not None

    def _embed_now(self, trace_ids: list[str]) -> None:
        # Best effort, after the write committed: Ollama down leaves the traces pending.
        if self.auto_embed and self.semantic is not None:
            self.semantic.embed_now(self, trace_ids)

    def close(self) -> None:
        try:
            if self.db.lost is None and not self.db.readonly and not self.db.index_later:
                with self.db.reading("indexing before closing"):
                    # Else the marks wait on disk for the next open (as when it is busy).
                    fulltext.flush(self.db, self.db.bookkeeping_wait_s)
        except (BrainBusy, BrainFileLost, StorageError):
            pass  # logged; closing goes on
        finally:
            self.db.close()

    def flush_index(self) -> int:
        """Bring the full-text indexes up to date now (searches do this themselves)."""
        return fulltext.flush(self.db)

    @property
    def indexes_later(self) -> bool:
        """Whether this connection leaves the full-text indexing to another (`index_later`)."""
        return self.db.index_later

    def index_later(self, on: bool = True) -> None:
        """Leave the rows this connection's writes mark for the full-text indexes to another
        connection's upkeep (`Maintainer(index_pending=True)`): no write, search or close of
        this one indexes them then (a search matches them without), unless another program
        writes the brain too (its index is kept current at every write, as before)."""
        self.db.index_later = on

    def __enter__(self) -> Brain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def read_only(self) -> bool:
        """Opened read-only (no write bits, read-only media), or its file was found lost
        (`file_lost`): reads and searches only."""
        return self.db.readonly or self.db.lost is not None

    @property
    def read_only_reason(self) -> str | None:
        """Why the brain cannot be written, in words, or None when it can."""
        return brain_info.read_only_reason(self)

    @property
    def foreign_triggers(self) -> list[str]:
        """Triggers in the file that memgui did not make, as `name on table`: they run on
        every write to their table, memgui's too, and a SQLite export leaves them out."""
        return list(self.db.foreign_triggers)

    def file_lost(self) -> str | None:
        """Why the file is no longer the one this brain writes (deleted, moved, replaced,
        damaged), or None; once lost, every write is refused with `BrainFileLost`."""
        return self.db.check_file(force=True)

    @property
    def path(self) -> Path:
        return self.db.path

    def now(self) -> int:
        return self.clock()

    # --- writing ---------------------------------------------------------------------------

    def write(
        self,
        operation: str,
        kind: str = "edit",
        actor: str | None = None,
        wait_s: float | None = None,
    ) -> BrainWrite:
        """A transaction with one journal batch; migrates an older brain first. `wait_s`:
        how long to wait for another connection's write lock (default `write_wait_s`).
        Once it ended, the write's `changes` say what it changed."""
        return BrainWrite(self, operation, kind, actor, wait_s)

    @property
    def write_wait_s(self) -> float:
        """How long a write waits for another connection's write lock before `BrainBusy`."""
        return self.db.write_wait_s

    @write_wait_s.setter
    def write_wait_s(self, seconds: float) -> None:
        self.db.write_wait_s = check_seconds("write_wait_s", seconds, MAX_WRITE_WAIT_S)

    @contextmanager
    def batch(self, actor: str | None = None, kind: str = "batch") -> Iterator[Batch]:
        """Group several calls in one transaction and one journal batch (revertible as one).
        Each call in it returns what it changed itself; once the batch committed, its
        `changes` hold what they changed together (empty, with no batch id, if nothing)."""
        write = self.write("batch", kind=kind, actor=actor)
        with write as open_batch:
            handle = Batch(open_batch.batch_id, kind)
            yield handle
        handle.changes = write.changes

    # --- reading traces --------------------------------------------------------------------

    def _row(self, trace_id: str) -> tuple[Any, ...]:
        return store.require_row(self.db, self.brain_id, trace_id)

    def get(self, trace_id: str) -> Trace:
        with self.db.lock:
            return store.row_to_trace(self._row(trace_id), self.now())

    def get_many(self, ids: list[str]) -> dict[str, Trace]:
        """The traces of `ids` that exist (an unknown id is simply absent), by id."""
        check_lookup_ids(ids)
        out: dict[str, Trace] = {}
        with self.db.lock:
            now = self.now()
            for row in reads.rows_of_ids(self.db, self.brain_id, ids):
                trace = store.row_to_trace(row, now)
                out[trace.id] = trace
        return out

    def _where(self, flt: TraceFilter) -> tuple[str, list[Any]]:
        check_filter(flt)
        return reads.where_sql(self.db, self.brain_id, flt)

    def list_traces(
        self,
        flt: TraceFilter | None = None,
        limit: int | None = None,
        offset: int = 0,
        order: str = "created_at",
        descending: bool = True,
        after: tuple[int, str] | None = None,
    ) -> list[Trace]:
        """Traces in `order`; `after` = (created_at, id) of a trace already seen starts the
        page just past it (a keyset page: traces added or forgotten meanwhile shift nothing)."""
        if limit is not None:
            check_limit(limit)
        check_int_range("offset", offset, 0, 2**62)
        where = self._where(flt or TraceFilter())
        if after is not None:
            where = reads.after_where(where, check_after(after, order), descending)
        order_by = reads.order_sql(self.db, order, descending)
        with self.db.lock:
            rows = reads.listed_rows(self.db, where, order_by, limit, offset)
            now = self.now()
            return [store.row_to_trace(r, now) for r in rows]

    def list_ids(
        self, flt: TraceFilter | None = None, order: str = "created_at", descending: bool = True
    ) -> list[str]:
        where = self._where(flt or TraceFilter())
        order_by = reads.order_sql(self.db, order, descending)
        with self.db.lock:
            return reads.listed_ids(self.db, where, order_by)

    def list_id_slices(
        self,
        flt: TraceFilter | None = None,
        order: str = "created_at",
        descending: bool = True,
        size: int = 20_000,
    ) -> Iterator[list[str]]:
        """The ids of `list_ids`, in order, as lists of at most about `size` ids.

        All the ids are read as one text in one call (`reads.joined_ids`: it runs without the
        GIL); the slices are split out of it one at a time, so a caller in a worker can pause
        between them.
        """
        check_int_range("size", size, 1, 2**62)
        where = self._where(flt or TraceFilter())
        order_by = reads.order_sql(self.db, order, descending)
        with self.db.lock:
            count, unsplittable, text = reads.joined_ids(self.db, where, order_by)
        if not count:
            return
        if unsplittable:  # an id holding the separator: read them row by row instead
            ids = self.list_ids(flt, order, descending)
            for start in range(0, len(ids), size):
                yield ids[start : start + size]
            return
        yield from reads.split_ids(text, count, size)

    def count(self, flt: TraceFilter | None = None) -> int:
        where = self._where(flt or TraceFilter())
        with self.db.lock:
            return reads.count(self.db, where)

    # --- writing traces --------------------------------------------------------------------

    def add(
        self,
        content: str,
        *,
        type: str = "episodic",
        scope: str = "user",
        scope_id: str = "",
        category: str | None = None,
        tags: list[str] | tuple[str, ...] | None = None,
        ttl_secs: int | None = None,
        metadata: dict[str, Any] | None = None,
        strength: float = 1.0,
        id: str | None = None,
        actor: str | None = None,
    ) -> Trace:
        """A new trace; its `changes` name it as added."""
        trace = traces.add(
            self,
            content,
            type=type,
            scope=scope,
            scope_id=scope_id,
            category=category,
            tags=tags,
            ttl_secs=ttl_secs,
            metadata=metadata,
            strength=strength,
            id=id,
            actor=actor,
        )
        if self.auto_embed:
            self._embed_now([trace.id])
            # As stored after embedding (its embedding status), with what the add changed.
            trace = with_changes(self.get(trace.id), changes_of(trace))
        return trace

    def update(
        self,
        trace_id: str,
        patch: dict[str, Any],
        expect_version: int | None = None,
        actor: str | None = None,
    ) -> Trace:
        """Merge-patch a trace; with `expect_version`, compare-and-set on it."""
        trace = traces.update(self, trace_id, patch, expect_version, actor)
        if isinstance(patch, dict) and "content" in patch:
            self._embed_now([trace_id])  # its text changed: embedded again (pending only)
        return trace

    def forget(
        self, trace_id: str, expect_version: int | None = None, actor: str | None = None
    ) -> Trace:
        """Into the trash (a soft delete); a forgotten trace is left as it is (no changes)."""
        return traces.set_deleted(self, trace_id, True, expect_version, actor)

    def restore(
        self, trace_id: str, expect_version: int | None = None, actor: str | None = None
    ) -> Trace:
        """Out of the trash; as `forget`, a live trace is left as it is."""
        return traces.set_deleted(self, trace_id, False, expect_version, actor)

    def purge(
        self, trace_id: str, expect_version: int | None = None, actor: str | None = None
    ) -> Changes:
        """Remove for good, with its links and the rows naming it (journaled: revertible)."""
        return traces.purge(self, trace_id, expect_version, actor)

    def merge(
        self,
        ids: list[str],
        content: str | None = None,
        actor: str | None = None,
        *,
        keep: str | None = None,
    ) -> Trace:
        """Merge live traces into `keep` (default: the most retrieved; tie: the first given),
        which takes the others' links and knowledge-graph edges; the survivor, its `changes`
        naming the merged traces (forgotten) and the links and edges moved too."""
        kept = traces.merge(self, ids, content, actor, keep=keep)
        self._embed_now([kept.id])  # pending only: its text changed
        return kept

    # --- search ----------------------------------------------------------------------------

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
        """`mode` cognitive: AgentOS's composite score, its `parts` on each hit (`mood`)."""
        flt = flt or TraceFilter()
        return cognitive.in_mode(self, query, flt, limit, mode, expand_links, record_recall, mood)

    def note_recalls(self, traces: list[Trace], flt: TraceFilter | None = None) -> None:
        """Record that a search returned these traces (the spaced-repetition update), for a
        caller that searched with `record_recall=False` to answer first, as agent-memory's
        recency bump is written after the answer. A trace that no longer passes `flt`
        (forgotten meanwhile) is left as it is."""
        if traces and not self.read_only:
            scored = [(0.0, t.rowid, {"id": t.id}) for t in traces]
            searching.record_recalls(self, scored, check_filter(flt or TraceFilter()))

    # --- links, graph, journal, scopes ------------------------------------------------------

    def link(self, from_id: str, to_id: str, kind: str, actor: str | None = None) -> Changes:
        """Link two traces. What changed: the link, or nothing (false) if it was there."""
        return links.link(self, from_id, to_id, kind, actor)

    def unlink(self, from_id: str, to_id: str, kind: str, actor: str | None = None) -> Changes:
        """Remove a link. What changed: the link, or nothing (false) if there was none."""
        return links.unlink(self, from_id, to_id, kind, actor)

    def related(self, trace_id: str, limit: int = 10) -> list[RelatedSummary]:
        check_limit(limit)
        with self.db.lock:
            self._row(trace_id)  # an unknown trace is NotFound, as for get, not "no links"
        return links.related(self, trace_id, limit)

    def add_node(
        self, label: str, type: str, properties: dict[str, Any] | None = None
    ) -> ChangesWithId:
        """A knowledge-graph node; `.id` is the new node's."""
        return graph.add_node(self, label, type, properties)

    def add_edge(
        self, source_id: str, target_id: str, type: str, weight: float = 1.0
    ) -> ChangesWithId:
        """A knowledge-graph edge between two nodes; `.id` is the new edge's."""
        return graph.add_edge(self, source_id, target_id, type, weight)

    def nodes(self, limit: int = 200, offset: int = 0) -> list[dict[str, Any]]:
        return graph.nodes(self, limit, offset)

    def edges(self, limit: int = 200, offset: int = 0) -> list[dict[str, Any]]:
        return graph.edges(self, limit, offset)

    def neighbours(
        self, start_id: str, depth: int = 1, limit: int = MAX_NEIGHBOURS
    ) -> list[Neighbour]:
        return graph.neighbours(self, start_id, depth, limit)

    def neighbours_and_more(
        self, start_id: str, depth: int = 1, limit: int = MAX_NEIGHBOURS
    ) -> tuple[list[Neighbour], bool]:
        """`neighbours`, and whether the graph holds more within `depth` than `limit`."""
        return graph.neighbours_and_more(self, start_id, depth, limit)

    def history(self, trace_id: str) -> list[JournalEntry]:
        return journal.history(self, trace_id)

    def journal_since(
        self, after_id: int, limit: int = 1000, states: bool = True
    ) -> list[JournalEntry]:
        """Journal rows after `after_id`, oldest first; `states=False` skips a trace's
        before/after (a link row keeps its link)."""
        check_int_range("after_id", after_id, 0, 2**63 - 1)
        # Bounded like every limit: -1 would read the whole journal in one call.
        check_int_range("limit", limit, 1, MAX_JOURNAL_LIMIT)
        with self.db.reading("reading the journal"):
            return journal.since(self, after_id, limit, states)

    def last_journal_id(self) -> int:
        """Where the journal ends now (a live view starts watching from here)."""
        return journal.last_id(self)

    def batch_entries(self, batch_id: str) -> list[JournalEntry]:
        return journal.batch_entries(self, batch_id)

    # --- agent activity: what others wrote, and what a person has reviewed ------------

    def activity_rows(self) -> FileActivity:
        return FileActivity(self)

    # --- conversations -----------------------------------------------------------------

    def conversation(self, conversation_id: str) -> dict[str, Any]:
        """A conversation with its messages in order (imported chats)."""
        return conversations.conversation(self, conversation_id)

    def conversation_of(self, trace_id: str) -> dict[str, Any] | None:
        """The conversation a trace was imported from, or None."""
        return conversations.conversation_of(self, trace_id)

    def revert(
        self, batch_id: str, actor: str | None = None, entry_ids: list[int] | None = None
    ) -> Changes:
        """Undo a batch as a new batch (which can be reverted in turn); with `entry_ids`,
        only those changes of it (a trace's removal with the links and rows that went with
        it). A trace, link or graph row changed since is a `Conflict`: nothing changes."""
        return self._embedded(journal.revert(self, batch_id, actor, entry_ids))

    def undo(self, batch_id: str, actor: str | None = None) -> Changes:
        """`revert`, tolerant of versions moved by undo steps alone (`core/undo.py`): what an
        undo stack, the CLI or an agent's undo calls. A real change since still conflicts."""
        return undo.undo_batch(self, batch_id, actor)

    def restore_version(
        self,
        trace_id: str,
        snapshot: dict[str, Any],
        expect_version: int | None = None,
        actor: str | None = None,
    ) -> Trace:
        """Bring a trace back to a version from its history (a journal snapshot), as a new
        version; already equal, nothing changes (empty `changes`)."""
        return undo.restore_version(self, trace_id, snapshot, expect_version, actor)

    def _embedded(self, changes: Changes) -> Changes:
        # Text a revert brought back is embedded at once, as an edit's is; a big batch's
        # (an import's) waits for the backfill rather than hold this call up.
        written = changes.added | changes.edited
        if self.auto_embed and 0 < len(written) <= EMBED_NOW_MAX:
            self._embed_now(sorted(written))
        return changes

    def delete_scope(
        self, scope: str, scope_id: str, user_id: str | None = None, actor: str | None = None
    ) -> ChangesWithCount:
        """Remove one scope id's traces for good; `.count` is how many."""
        return scopes.delete_scope(self, scope, scope_id, user_id, actor)

    def refile_scope(
        self, scope: str, from_scope_id: str, to_scope_id: str, actor: str | None = None
    ) -> ChangesWithCount:
        """Move one scope id's traces to another scope id; `.count` is how many."""
        return scopes.refile_scope(self, scope, from_scope_id, to_scope_id, actor)

    def sweep(self, actor: str = "sweep") -> SweepReport:
        """Expire traces past their TTL, then embed pending traces when Ollama answers."""
        expired = scopes.expire(self, actor)
        embedded = 0
        if self.semantic is not None:
            try:
                embedded = run_to_end(self.semantic.backfill(self)).embedded
            except (EmbeddingUnavailable, vectors.EmbeddingModelMismatch):
                embedded = 0
        return SweepReport(expired=expired.count, embedded=embedded, changes=expired)

    # --- embeddings --------------------------------------------------------------------

    def embedding(self, trace_id: str) -> list[float] | None:
        """The stored vector of a trace (float32 BLOB, or AgentOS's legacy JSON array)."""
        with self.db.lock:
            self._row(trace_id)
            blob = reads.embedding_blob(self.db, self.brain_id, trace_id)
        vector = unpack_vector(blob)
        return None if vector is None else [float(x) for x in vector]

    def similar(self, trace_id: str, limit: int = 10) -> list[tuple[Trace, float]]:
        """Nearest neighbours of a trace by its stored vector ("similar memories")."""
        check_limit(limit)
        with self.db.lock:
            self._row(trace_id)
            # One more than asked: the ranking may count the trace itself before dropping it.
            ranked = hybrid.similar_traces(self.db.conn, self.brain_id, trace_id, limit + 1)
        found = self.get_many([i for i, _ in ranked])
        return [(found[i], score) for i, score in ranked if i in found and i != trace_id][:limit]

    def has_vectors(self) -> bool:
        """Whether any live trace has a vector (search by meaning has something to rank).
        Reads every trace when none has one: callers on a hot path keep the answer."""
        if "memory_traces" not in self.db.tables:
            return False
        with self.db.lock:
            return hybrid.has_embeddings(self.db.conn, self.brain_id)

    def embedding_info(self) -> dict[str, Any]:
        return brain_info.embedding_info(self)

    def info(self) -> dict[str, Any]:
        return brain_info.info(self)
