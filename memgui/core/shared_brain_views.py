"""What the app's window asks of a shared brain besides `BrainStore`: every id of a view in
order (in slices), the filter lists' counts, and the file-only questions answered as a
server's brain answers them (no migration to agree to, no foreign triggers, never a lost
file).

`SharedBrain` inherits these; the SQL is in `storage/postgres_views.py`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from memgui.core.brain_file import MAX_FACET_TAGS
from memgui.core.model import Facets, TraceFilter, check_int_range
from memgui.core.storage import postgres_views

if TYPE_CHECKING:
    import psycopg


class SharedBrainViews:
    """Mixed into `SharedBrain`, which has the connection, the brain id and the filters."""

    conn: psycopg.Connection[tuple[Any, ...]]
    brain_id: str

    def where(self, flt: TraceFilter) -> tuple[str, list[Any]]:
        raise NotImplementedError  # SharedBrain's

    def list_ids(
        self,
        flt: TraceFilter | None = None,
        order: str = "created_at",
        descending: bool = True,
    ) -> list[str]:
        """The ids of `list_traces` without a limit, in its order."""
        where = self.where(flt or TraceFilter())
        order_by = postgres_views.order_sql(order, descending)
        return postgres_views.listed_ids(self.conn, where, order_by)

    def list_id_slices(
        self,
        flt: TraceFilter | None = None,
        order: str = "created_at",
        descending: bool = True,
        size: int = 20_000,
    ) -> Iterator[list[str]]:
        """The ids of `list_ids` as lists of at most `size`, read from the server a slice
        at a time (a server-side cursor), so a caller in a worker can stop between them."""
        check_int_range("size", size, 1, 10_000_000)
        where = self.where(flt or TraceFilter())
        order_by = postgres_views.order_sql(order, descending)
        yield from postgres_views.id_slices(self.conn, where, order_by, size)

    def facets(self, deleted: bool = False, tag_limit: int = MAX_FACET_TAGS) -> Facets:
        """The live (or trashed) memories counted by type, scope, category and tag."""
        check_int_range("tag_limit", tag_limit, 1, MAX_FACET_TAGS)
        groups, tags = postgres_views.facet_counts(self.conn, self.brain_id, deleted, tag_limit)
        types: dict[str, int] = {}
        scopes: dict[str, int] = {}
        categories: dict[str, int] = {}
        for type_, scope, category, count in groups:
            types[type_] = types.get(type_, 0) + count
            scopes[scope] = scopes.get(scope, 0) + count
            if category:
                categories[category] = categories.get(category, 0) + count
        return Facets(types, scopes, categories, dict(tags), sum(types.values()))

    # --- what only a file has: answered as a server's brain answers ----------------------

    @property
    def read_only_reason(self) -> str | None:
        return None

    @property
    def foreign_triggers(self) -> list[str]:
        return []  # memgui's own change triggers are no one else's

    def file_lost(self) -> str | None:
        return None

    def pending_migration(self) -> None:
        return None  # the layout is made or upgraded as the connection opens
