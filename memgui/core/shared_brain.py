"""A shared brain: one brain id in a PostgreSQL database (docs/shared-brains.md).

`SharedBrain` is the PostgreSQL engine's facade for what `storage.engine.BrainStore` names:
traces (add, get, update, forget, restore, purge, list, count), search by keyword on the
`_tsv` full-text column, the journal and revert. It checks arguments with the same rules as
`Brain` (`traces.new_snapshot`, `traces.checked_patch`, `journal.trace_undo`), so both engines
accept, refuse and write the same things; the SQL is in `storage/postgres.py`. Search and
vectors are `shared_brain_meaning.py`'s, the knowledge graph, merge, scopes and sweep
`shared_brain_graph.py`'s, the agent activity review `shared_activity.py`'s. The app
reaches a shared brain's addresses and change notices through this module too
(`is_postgres_address`, `parse_postgres_address`, `ChangeListener`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memgui.core import (
    journal,
    links,
    shared_links,
    shared_reconnect,
    shared_revert,
    traces,
    undo,
)
from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.model import (
    Changes,
    JournalEntry,
    RelatedSummary,
    Trace,
    TraceFilter,
    check_after,
    check_filter,
    check_id,
    check_int_range,
    check_limit,
    check_link_kind,
    check_lookup_ids,
    now_ms,
    with_changes,
)
from memgui.core.search.hybrid import Embedder
from memgui.core.shared_activity import SharedActivity
from memgui.core.shared_archive import SharedArchive
from memgui.core.shared_brain_graph import SharedBrainGraph
from memgui.core.shared_brain_meaning import SharedBrainMeaning
from memgui.core.shared_brain_views import SharedBrainViews
from memgui.core.shared_conversations import SharedConversations
from memgui.core.shared_transaction import SharedTransactions
from memgui.core.storage import postgres, store
from memgui.core.storage.engine import PostgresAddress as PostgresAddress
from memgui.core.storage.engine import is_postgres_address as is_postgres_address
from memgui.core.storage.engine import parse_postgres_address as parse_postgres_address
from memgui.core.storage.postgres_notify import ChangeListener as ChangeListener
from memgui.core.storage.postgres_notify import ChangeNotice as ChangeNotice
from memgui.core.storage.postgres_views import order_sql
from memgui.core.storage.transaction import WriteBatch

if TYPE_CHECKING:
    import psycopg


@shared_reconnect.reconnecting
class SharedBrain(
    SharedTransactions,
    SharedBrainMeaning,
    SharedBrainGraph,
    SharedActivity,
    SharedBrainViews,
    SharedConversations,
    SharedArchive,
):
    """One brain id in a PostgreSQL database, over one connection (one thread at a time)."""

    def __init__(
        self,
        conn: psycopg.Connection[tuple[Any, ...]],
        address: PostgresAddress,
        actor: str,
        marked: bool = False,
        *,
        connect: Callable[[], psycopg.Connection[tuple[Any, ...]]] | None = None,
    ) -> None:
        self.conn = conn
        self.backend_pid = conn.info.backend_pid  # the server process it writes through
        # What makes a new connection when this one is lost (`shared_reconnect`): a new
        # one with the password typed (kept in memory only), or the pool's next; None: none.
        self.connect = connect
        self.calls_open = 0  # public calls running (the outermost one reconnects)
        self.address = address
        self.brain_id = address.brain_id
        self.actor = actor
        self.clock: Callable[[], int] = now_ms
        # Whether this brain id's meta rows are written (its first write writes them).
        self.marked = marked
        self._open_batch: WriteBatch | None = None  # inside `batch()`
        self.embedder: Embedder | None = None

    @classmethod
    def open(
        cls,
        address: str,
        brain_id: str | None = None,
        *,
        actor: str = "cli",
        password: str | None = None,
    ) -> SharedBrain:
        """Connect to `postgresql://…?brain_id=NAME`, making memgui's tables if missing;
        `password` when the person typed one (else libpq's PGPASSWORD, ~/.pgpass)."""
        parsed = parse_postgres_address(address, brain_id)
        return cls(
            postgres.connect(parsed, password),
            parsed,
            actor,
            connect=lambda: postgres.connect(parsed, password),
        )

    def close(self) -> None:
        self.conn.close()

    def _brain(self) -> SharedBrain:
        return self

    def __enter__(self) -> SharedBrain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def read_only(self) -> bool:
        return False

    # --- reading -------------------------------------------------------------------------

    def _snapshot(self, trace_id: str, lock: bool = False) -> dict[str, Any]:
        check_id("id", trace_id)
        row = postgres.fetch_row(self.conn, self.brain_id, trace_id, lock)
        if row is None:
            raise NotFound(trace_id)
        return store.row_to_snapshot(row)

    def get(self, trace_id: str) -> Trace:
        return store.snapshot_to_trace(self._snapshot(trace_id), 0, self.now())

    def get_many(self, ids: list[str]) -> dict[str, Trace]:
        """The traces of `ids` that exist (an unknown id is simply absent), by id."""
        check_lookup_ids(ids)
        now = self.now()
        rows = postgres.rows_of_ids(self.conn, self.brain_id, ids)
        return {trace.id: trace for trace in (store.row_to_trace(r, now) for r in rows)}

    def where(self, flt: TraceFilter) -> tuple[str, list[Any]]:
        """The SQL of a filter on this brain, checked."""
        check_filter(flt)
        return postgres.where_sql(self.brain_id, flt)

    def list_traces(
        self,
        flt: TraceFilter | None = None,
        limit: int | None = None,
        offset: int = 0,
        order: str = "created_at",
        descending: bool = True,
        after: tuple[int, str] | None = None,
    ) -> list[Trace]:
        """Traces in `order` (a column of `reads.ORDER_COLUMNS`), ties broken by id."""
        if limit is not None:
            check_limit(limit)
        check_int_range("offset", offset, 0, 2**62)
        sql, params = self.where(flt or TraceFilter())
        if after is not None:
            created_at, after_id = check_after(after, order)
            sql += f" AND (created_at, id) {'<' if descending else '>'} (%s, %s)"
            params = [*params, created_at, after_id]
        rows = postgres.listed_rows(
            self.conn, (sql, params), order_sql(order, descending), limit, offset
        )
        now = self.now()
        return [store.row_to_trace(r, now) for r in rows]

    def count(self, flt: TraceFilter | None = None) -> int:
        return postgres.count(self.conn, self.where(flt or TraceFilter()))

    def related(self, trace_id: str, limit: int = links.MAX_RELATED) -> list[RelatedSummary]:
        """A trace's links to live traces, newest first, each read from its side."""
        check_limit(limit)
        self._snapshot(trace_id)  # an unknown trace is NotFound, not "no links"
        return shared_links.related(self.conn, self.brain_id, trace_id, limit)

    def history(self, trace_id: str) -> list[JournalEntry]:
        check_id("id", trace_id)
        entries = postgres.trace_history(self.conn, self.brain_id, trace_id)
        if not entries:
            self._snapshot(trace_id)  # NotFound for an unknown id, as on SQLite
        return entries

    def batch_entries(self, batch_id: str) -> list[JournalEntry]:
        return postgres.batch_entries(self.conn, self.brain_id, batch_id)

    def info(self) -> dict[str, Any]:
        total, deleted = postgres.trace_counts(self.conn, self.brain_id)
        return {
            "path": str(self.address),
            "engine": "postgresql",
            "brain_id": self.brain_id,
            "brain_ids": postgres.brain_ids(self.conn) or [self.brain_id],
            "schema_version": postgres.SCHEMA_VERSION,
            "traces": total,
            "live": total - deleted,
            "deleted": deleted,
            "read_only": False,
            "read_only_reason": None,
        }

    # --- writing -------------------------------------------------------------------------

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
        snap = traces.new_snapshot(
            self.now(),
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
        )
        _refuse_nul(snap)
        with self.writing(actor, order_late=True) as batch:
            if postgres.fetch_row(self.conn, self.brain_id, snap["id"]) is not None:
                raise InvalidArgument("id", f"already exists (got {snap['id']!r})", snap["id"])
            postgres.insert_trace(self.conn, batch, self.brain_id, snap)
        return with_changes(store.snapshot_to_trace(snap, 0, snap["created_at"]), batch.changes())

    def update(
        self,
        trace_id: str,
        patch: dict[str, Any],
        expect_version: int | None = None,
        actor: str | None = None,
    ) -> Trace:
        """Merge-patch a trace; with `expect_version`, compare-and-set on it."""
        check_id("id", trace_id)
        wanted = traces.checked_patch(patch)
        _refuse_nul(wanted)
        with self.writing(actor, order_late=True) as batch:
            before = self._snapshot(trace_id, lock=True)
            journal.check_version(before, expect_version)
            now = self.now()
            after = traces.patched_snapshot(before, wanted, now)
            postgres.update_trace(self.conn, batch, self.brain_id, before, after, "update")
        return with_changes(store.snapshot_to_trace(after, 0, now), batch.changes())

    def _set_deleted(
        self, trace_id: str, deleted: bool, expect_version: int | None, actor: str | None
    ) -> Trace:
        op = "forget" if deleted else "restore"
        with self.writing(actor, order_late=True) as batch:
            before = self._snapshot(trace_id, lock=True)
            journal.check_version(before, expect_version)
            now = self.now()
            after = before
            if before["deleted"] != deleted:  # already so: idempotent, nothing journaled
                after = dict(before, deleted=deleted, version=before["version"] + 1, updated_at=now)
                postgres.update_trace(self.conn, batch, self.brain_id, before, after, op)
        return with_changes(store.snapshot_to_trace(after, 0, now), batch.changes())

    def forget(
        self, trace_id: str, expect_version: int | None = None, actor: str | None = None
    ) -> Trace:
        """Into the trash (a soft delete); a forgotten trace is left as it is (no changes)."""
        return self._set_deleted(trace_id, True, expect_version, actor)

    def restore(
        self, trace_id: str, expect_version: int | None = None, actor: str | None = None
    ) -> Trace:
        """Out of the trash; as `forget`, a live trace is left as it is."""
        return self._set_deleted(trace_id, False, expect_version, actor)

    def purge(
        self, trace_id: str, expect_version: int | None = None, actor: str | None = None
    ) -> Changes:
        """Remove for good, with its links (journaled: revertible)."""
        with self.writing(actor) as batch:
            before = self._snapshot(trace_id, lock=True)
            journal.check_version(before, expect_version)
            postgres.delete_trace(self.conn, batch, self.brain_id, before, "purge")
        return batch.changes()

    def link(self, from_id: str, to_id: str, kind: str, actor: str | None = None) -> Changes:
        """Link two traces. What changed: the link, or nothing (false) if it was there."""
        check_link_kind(kind)
        with self.writing(actor) as batch:
            ids = shared_links.checked(self.conn, self.brain_id, from_id, to_id, kind)
            shared_links.link(self.conn, batch, self.brain_id, ids, kind, self.now())
        return batch.changes()

    def unlink(self, from_id: str, to_id: str, kind: str, actor: str | None = None) -> Changes:
        """Remove a link. What changed: the link, or nothing (false) if there was none."""
        check_link_kind(kind)
        with self.writing(actor) as batch:
            ids = shared_links.checked(self.conn, self.brain_id, from_id, to_id, kind)
            shared_links.unlink(self.conn, batch, self.brain_id, ids, kind)
        return batch.changes()

    def undo(self, batch_id: str, actor: str | None = None) -> Changes:
        """`revert`, tolerant of versions moved by undo steps alone (`core/undo.py`): what
        the app's undo stack calls."""
        return undo.undo_batch(self, batch_id, actor)

    def restore_version(
        self,
        trace_id: str,
        snapshot: dict[str, Any],
        expect_version: int | None = None,
        actor: str | None = None,
    ) -> Trace:
        """Bring a trace back to a version from its history, as a new update."""
        return undo.restore_version(self, trace_id, snapshot, expect_version, actor)

    def revert(
        self, batch_id: str, actor: str | None = None, entry_ids: list[int] | None = None
    ) -> Changes:
        """Undo a batch as a new batch, or with `entry_ids` only those of its changes (a
        trace's removal with the rows that went with it), with the rules of a file: a trace,
        link or graph row changed since is a `Conflict`, nothing changes."""
        return shared_revert.revert(self, batch_id, actor, entry_ids)


_TEXT_FIELDS = ("id", "content", "scope_id", "category")


def _refuse_nul(fields: dict[str, Any]) -> None:
    """PostgreSQL's text holds no NUL character, which SQLite's does: refused, named."""
    for name in _TEXT_FIELDS:
        value = fields.get(name)
        if isinstance(value, str) and "\x00" in value:
            raise InvalidArgument(
                name, f"must hold no NUL character on a PostgreSQL brain (got {value!r})", value
            )
    for tag in fields.get("tags") or ():
        if "\x00" in tag:
            raise InvalidArgument(
                "tags", f"must hold no NUL character on a PostgreSQL brain (got {tag!r})", tag
            )
