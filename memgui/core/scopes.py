"""Scope operations (seed 004): delete a scope's traces, re-file a scope id; TTL expiry."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memgui.core.changes import Changes, ChangesWithCount, with_count
from memgui.core.errors import InvalidArgument
from memgui.core.graph import node_properties
from memgui.core.model import SCOPES, check_choice, check_text
from memgui.core.storage import journal_rows, store

if TYPE_CHECKING:
    from memgui.core.brain_write import BrainContext
    from memgui.core.storage.db import WriteBatch

# Where a trace names the users it came from (AgentOS turnUserId / contributors).
_USER_MATCH = (
    "(json_extract(metadata, '$.userId') = ?1 OR json_extract(metadata, '$.turnUserId') = ?1 "
    "OR EXISTS (SELECT 1 FROM json_each(CASE WHEN json_type(metadata, '$.contributors') = "
    "'array' THEN json_extract(metadata, '$.contributors') ELSE '[]' END) WHERE value = ?1))"
)


def _scope_id(field: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgument(
            field,
            f"must be a non-empty scope id (got {value!r}); an empty id would touch every "
            "trace filed under no scope id",
            value,
        )
    return check_text(field, value)


def check_delete_scope(scope: object, scope_id: object, user_id: object) -> None:
    """A scope deletion's arguments, on either engine."""
    check_choice("scope", scope, SCOPES)
    _scope_id("scope_id", scope_id)
    if user_id is not None and (not isinstance(user_id, str) or not user_id):
        raise InvalidArgument("user_id", f"must be a non-empty string (got {user_id!r})")
    if user_id is not None:
        check_text("user_id", user_id)


def check_refile(scope: object, from_scope_id: object, to_scope_id: object) -> None:
    """A re-filing's arguments, on either engine."""
    check_choice("scope", scope, SCOPES)
    _scope_id("from_scope_id", from_scope_id)
    _scope_id("to_scope_id", to_scope_id)


def refiled_node(raw: str | None, scope_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A memory_graph node's properties before and after its trace moves to `scope_id`, or
    None when they name no scope id or that one already."""
    properties = node_properties(raw) if raw is not None else None
    if not properties or properties.get("scopeId") == scope_id or "scopeId" not in properties:
        return None
    return properties, dict(properties, scopeId=scope_id)


def delete_scope(
    brain: BrainContext, scope: str, scope_id: str, user_id: str | None, actor: str | None
) -> ChangesWithCount:
    """Delete for good every trace of one scope id (soft-deleted ones included); the count
    is of the traces deleted."""
    check_delete_scope(scope, scope_id, user_id)
    count = 0
    write = brain.write("delete scope", kind="scope", actor=actor)
    with write as batch:
        sql = (
            f"SELECT {store.select_columns(brain.db)} FROM memory_traces "
            "WHERE brain_id = ?2 AND scope = ?3 AND scope_id = ?4"
        )
        params: tuple[object, ...] = (user_id or "", brain.brain_id, scope, scope_id)
        if user_id is not None:
            sql += f" AND json_valid(metadata) AND {_USER_MATCH}"
        rows: list[tuple[Any, ...]] = brain.db.conn.execute(sql, params).fetchall()
        for row in rows:
            store.delete_trace(
                brain.db, batch, brain.brain_id, row[0], store.row_to_snapshot(row), "purge"
            )
            count += 1
    return with_count(write.changes, count)


def refile_scope(
    brain: BrainContext, scope: str, from_scope_id: str, to_scope_id: str, actor: str | None
) -> ChangesWithCount:
    """Move one scope id's traces, soft-deleted ones included, to another scope id.

    The count is of the traces moved: 0 when `from_scope_id == to_scope_id` (nothing is
    written).
    """
    check_refile(scope, from_scope_id, to_scope_id)
    if from_scope_id == to_scope_id:
        # Nothing moves: no write at all, so no version bump makes other writers' reads stale.
        return ChangesWithCount(kind="scope", actor=actor or brain.actor)
    count = 0
    write = brain.write("refile scope", kind="scope", actor=actor)
    with write as batch:
        rows: list[tuple[Any, ...]] = brain.db.conn.execute(
            f"SELECT {store.select_columns(brain.db)} FROM memory_traces "
            "WHERE brain_id = ? AND scope = ? AND scope_id = ?",
            (brain.brain_id, scope, from_scope_id),
        ).fetchall()
        now = brain.now()
        for row in rows:
            before = store.row_to_snapshot(row)
            after = dict(
                before, scope_id=to_scope_id, version=before["version"] + 1, updated_at=now
            )
            store.update_trace(brain.db, batch, brain.brain_id, row[0], before, after, "refile")
            if not before["deleted"]:
                _refile_graph_copy(brain, batch, before["id"], to_scope_id)
            count += 1
    return with_count(write.changes, count)


def _refile_graph_copy(
    brain: BrainContext, batch: WriteBatch, trace_id: str, scope_id: str
) -> None:
    """A live trace's knowledge-graph copy (AgentOS's memory_graph node, whose id is the
    trace's) is recorded under the new scope id too (seed 004, refileScope), journaled."""
    if "knowledge_nodes" not in brain.db.tables:
        return
    row = brain.db.conn.execute(
        "SELECT properties FROM knowledge_nodes WHERE brain_id = ? AND id = ?",
        (brain.brain_id, trace_id),
    ).fetchone()
    moved = refiled_node(row[0] if row is not None else None, scope_id)
    if moved is None:
        return
    journal_rows.update_row(
        brain.db,
        batch,
        brain.brain_id,
        "node",
        {"id": trace_id, "properties": moved[0]},
        {"id": trace_id, "properties": moved[1]},
    )


@dataclass(frozen=True)
class SweepReport:
    """What `Brain.sweep` did: the traces expired and those embedded."""

    expired: int
    embedded: int = 0
    # What the expiry changed (the traces removed, their links and graph rows).
    changes: Changes = field(default=Changes(kind="expire"), compare=False, repr=False)

    def to_json(self) -> dict[str, int]:
        return {"expired": self.expired, "embedded": self.embedded}


def expire(brain: BrainContext, actor: str) -> ChangesWithCount:
    """Remove traces whose TTL has passed (`expires_at < now`, strictly) and their links;
    the count is of the traces removed."""
    nothing = ChangesWithCount(kind="expire", actor=actor)
    if "expires_at" not in brain.db.trace_columns:
        return nothing
    now = brain.now()
    with brain.db.lock:
        due: tuple[Any, ...] | None = brain.db.conn.execute(
            "SELECT count(*) FROM memory_traces WHERE brain_id = ? AND expires_at IS NOT NULL "
            "AND expires_at < ?",
            (brain.brain_id, now),
        ).fetchone()
    if due is None or not due[0]:
        return nothing
    count = 0
    write = brain.write("sweep", kind="expire", actor=actor)
    with write as batch:
        rows: list[tuple[Any, ...]] = brain.db.conn.execute(
            f"SELECT {store.select_columns(brain.db)} FROM memory_traces "
            "WHERE brain_id = ? AND expires_at IS NOT NULL AND expires_at < ?",
            (brain.brain_id, now),
        ).fetchall()
        for row in rows:
            store.delete_trace(
                brain.db, batch, brain.brain_id, row[0], store.row_to_snapshot(row), "expire"
            )
            count += 1
    return with_count(write.changes, count)
