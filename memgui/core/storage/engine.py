"""The storage engines: a brain is a SQLite file or a PostgreSQL database with a brain id,
chosen by its address, and `BrainStore` is what the rest of memgui may ask of either.

SQLite serves the whole of `Brain`; PostgreSQL serves `BrainStore` (docs/shared-brains.md
says what is not there yet): traces, links, the journal, the knowledge graph, merge, scopes
and sweep. A front end that needs only these operations takes a
`BrainStore` and works on both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from memgui.core.changes import ChangesWithCount, ChangesWithId
from memgui.core.errors import InvalidArgument
from memgui.core.model import (
    MAX_NEIGHBOURS,
    Changes,
    JournalEntry,
    Neighbour,
    RelatedSummary,
    SearchResult,
    Trace,
    TraceFilter,
    check_id,
)

POSTGRES_SCHEMES = ("postgresql", "postgres")


def is_postgres_address(address: str) -> bool:
    """Whether `address` names a PostgreSQL brain (`postgresql://…`), not a file."""
    return urlsplit(address).scheme.lower() in POSTGRES_SCHEMES and "://" in address


@dataclass(frozen=True)
class PostgresAddress:
    """A PostgreSQL brain: the server's connection string and the brain id within it."""

    conninfo: str  # the address without brain_id, as libpq takes it (password included)
    brain_id: str
    shown: str  # the address as memgui prints it: never its password

    def __str__(self) -> str:
        return self.shown


def parse_postgres_address(address: str, brain_id: str | None = None) -> PostgresAddress:
    """`postgresql://user@host:port/db?brain_id=NAME`: one database holds many brains, so the
    brain id is required, in the address or given (`--brain-id`); both must agree."""
    parts = urlsplit(address)
    if parts.scheme.lower() not in POSTGRES_SCHEMES:
        raise InvalidArgument(
            "brain", f"must be a postgresql:// address (got {parts.scheme!r})", address
        )
    query = parse_qsl(parts.query, keep_blank_values=True)
    in_address = [value for key, value in query if key == "brain_id"]
    rest = [(key, value) for key, value in query if key != "brain_id"]
    if len(in_address) > 1:
        raise InvalidArgument("brain_id", f"must be given once (got {in_address})", in_address)
    chosen = in_address[0] if in_address else brain_id
    if in_address and brain_id is not None and brain_id != in_address[0]:
        raise InvalidArgument(
            "brain_id",
            f"must agree with the address's brain_id {in_address[0]!r} (got {brain_id!r})",
            brain_id,
        )
    if chosen is None:
        raise InvalidArgument(
            "brain_id",
            "is required for a PostgreSQL brain, which holds many: add ?brain_id=NAME to the "
            "address or pass --brain-id (got none)",
        )
    check_id("brain_id", chosen, "brain id")
    conninfo = urlunsplit(parts._replace(query=urlencode(rest)))
    netloc = parts.netloc
    if parts.password:
        netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
    shown = urlunsplit(
        parts._replace(netloc=netloc, query=urlencode([*rest, ("brain_id", chosen)]))
    )
    return PostgresAddress(conninfo=conninfo, brain_id=chosen, shown=shown)


def with_password(conninfo: str, password: str | None) -> str:
    """The connection string with a typed password added (libpq's own lookup otherwise)."""
    if password is None:
        return conninfo
    from psycopg.conninfo import make_conninfo

    return make_conninfo(conninfo, password=password)


class Swept(Protocol):
    """What a sweep did (`core.scopes.SweepReport`)."""

    @property
    def expired(self) -> int: ...

    @property
    def embedded(self) -> int: ...

    def to_json(self) -> dict[str, int]: ...


class BrainStore(Protocol):
    """What both engines serve: traces and their journal. `Brain` (SQLite) meets it, and so
    does `core.shared_brain.SharedBrain` (PostgreSQL)."""

    brain_id: str
    actor: str

    def close(self) -> None: ...

    def get(self, trace_id: str) -> Trace: ...

    def get_many(self, ids: list[str]) -> dict[str, Trace]: ...

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
    ) -> Trace: ...

    def update(
        self,
        trace_id: str,
        patch: dict[str, Any],
        expect_version: int | None = None,
        actor: str | None = None,
    ) -> Trace: ...

    def forget(
        self, trace_id: str, expect_version: int | None = None, actor: str | None = None
    ) -> Trace: ...

    def restore(
        self, trace_id: str, expect_version: int | None = None, actor: str | None = None
    ) -> Trace: ...

    def purge(
        self, trace_id: str, expect_version: int | None = None, actor: str | None = None
    ) -> Changes: ...

    def list_traces(
        self,
        flt: TraceFilter | None = None,
        limit: int | None = None,
        offset: int = 0,
        order: str = "created_at",
        descending: bool = True,
        after: tuple[int, str] | None = None,
    ) -> list[Trace]: ...

    def count(self, flt: TraceFilter | None = None) -> int: ...

    def search(
        self,
        query: str,
        flt: TraceFilter | None = None,
        limit: int = 50,
        mode: str = "auto",
        expand_links: bool = False,
        record_recall: bool = True,
        mood: float | None = None,
    ) -> SearchResult: ...

    def similar(self, trace_id: str, limit: int = 10) -> list[tuple[Trace, float]]: ...

    def link(self, from_id: str, to_id: str, kind: str, actor: str | None = None) -> Changes: ...

    def unlink(self, from_id: str, to_id: str, kind: str, actor: str | None = None) -> Changes: ...

    def related(self, trace_id: str, limit: int = 10) -> list[RelatedSummary]: ...

    def history(self, trace_id: str) -> list[JournalEntry]: ...

    def batch_entries(self, batch_id: str) -> list[JournalEntry]: ...

    def revert(
        self, batch_id: str, actor: str | None = None, entry_ids: list[int] | None = None
    ) -> Changes: ...

    def info(self) -> dict[str, Any]: ...

    # --- the knowledge graph, merge, scopes, sweep ---------------------------------------

    def add_node(
        self, label: str, type: str, properties: dict[str, Any] | None = None
    ) -> ChangesWithId: ...

    def add_edge(
        self, source_id: str, target_id: str, type: str, weight: float = 1.0
    ) -> ChangesWithId: ...

    def nodes(self, limit: int = 200, offset: int = 0) -> list[dict[str, Any]]: ...

    def edges(self, limit: int = 200, offset: int = 0) -> list[dict[str, Any]]: ...

    def neighbours(
        self, start_id: str, depth: int = 1, limit: int = MAX_NEIGHBOURS
    ) -> list[Neighbour]: ...

    def neighbours_and_more(
        self, start_id: str, depth: int = 1, limit: int = MAX_NEIGHBOURS
    ) -> tuple[list[Neighbour], bool]: ...

    def merge(
        self,
        ids: list[str],
        content: str | None = None,
        actor: str | None = None,
        *,
        keep: str | None = None,
    ) -> Trace: ...

    def delete_scope(
        self, scope: str, scope_id: str, user_id: str | None = None, actor: str | None = None
    ) -> ChangesWithCount: ...

    def refile_scope(
        self, scope: str, from_scope_id: str, to_scope_id: str, actor: str | None = None
    ) -> ChangesWithCount: ...

    def sweep(self, actor: str = "sweep") -> Swept: ...
