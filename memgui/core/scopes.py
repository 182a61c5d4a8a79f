"""Scope operations (seed 004): delete a scope's traces, re-file a scope id; TTL expiry."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memgui.core.errors import InvalidArgument
from memgui.core.graph import node_properties
from memgui.core.model import SCOPES, check_choice, check_text
from memgui.core.storage import journal_rows, store

if TYPE_CHECKING:
    from memgui.core.brain import Brain
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


def delete_scope(
    brain: Brain, scope: str, scope_id: str, user_id: str | None, actor: str | None
) -> int:
    """Delete for good every trace of one scope id (soft-deleted ones included)."""
    check_choice("scope", scope, SCOPES)
    _scope_id("scope_id", scope_id)
    if user_id is not None and (not isinstance(user_id, str) or not user_id):
        raise InvalidArgument("user_id", f"must be a non-empty string (got {user_id!r})")
    if user_id is not None:
        check_text("user_id", user_id)
    count = 0
    with brain.write("delete scope", kind="scope", actor=actor) as batch:
        sql = (
            f"SELECT {store.select_columns(brain.db)} FROM memory_traces "
            "WHERE brain_id = ?2 AND scope = ?3 AND scope_id = ?4"
        )
        params: tuple[object, ...] = (user_id or "", brain.brain_id, scope, scope_id)
        if user_id is not None:
            sql += f" AND json_valid(metadata) AND {_USER_MATCH}"
        for row in brain.db.conn.execute(sql, params).fetchall():
            store.delete_trace(
                brain.db, batch, brain.brain_id, row[0], store.row_to_snapshot(row), "purge"
            )
            count += 1
    return count


def refile_scope(
    brain: Brain, scope: str, from_scope_id: str, to_scope_id: str, actor: str | None
) -> int:
    """Move one scope id's traces, soft-deleted ones included, to another scope id.

    Returns how many traces moved: 0 when `from_scope_id == to_scope_id` (nothing is written).
    """
    check_choice("scope", scope, SCOPES)
    _scope_id("from_scope_id", from_scope_id)
    _scope_id("to_scope_id", to_scope_id)
    if from_scope_id == to_scope_id:
        # Nothing moves: no write at all, so no version bump makes other writers' reads stale.
        return 0
    count = 0
    with brain.write("refile scope", kind="scope", actor=actor) as batch:
        rows = brain.db.conn.execute(
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
    return count


def _refile_graph_copy(brain: Brain, batch: WriteBatch, trace_id: str, scope_id: str) -> None:
    """A live trace's knowledge-graph copy (AgentOS's memory_graph node, whose id is the
    trace's) is recorded under the new scope id too (seed 004, refileScope), journaled."""
    if "knowledge_nodes" not in brain.db.tables:
        return
    row = brain.db.conn.execute(
        "SELECT properties FROM knowledge_nodes WHERE brain_id = ? AND id = ?",
        (brain.brain_id, trace_id),
    ).fetchone()
    properties = node_properties(row[0]) if row is not None else None
    if not properties or properties.get("scopeId") == scope_id or "scopeId" not in properties:
        return
    journal_rows.update_row(
        brain.db,
        batch,
        brain.brain_id,
        "node",
        {"id": trace_id, "properties": properties},
        {"id": trace_id, "properties": dict(properties, scopeId=scope_id)},
    )


def expire(brain: Brain, actor: str) -> int:
    """Remove traces whose TTL has passed (`expires_at < now`, strictly) and their links."""
    if "expires_at" not in brain.db.trace_columns:
        return 0
    now = brain.now()
    with brain.db.lock:
        due = brain.db.conn.execute(
            "SELECT count(*) FROM memory_traces WHERE brain_id = ? AND expires_at IS NOT NULL "
            "AND expires_at < ?",
            (brain.brain_id, now),
        ).fetchone()[0]
    if not due:
        return 0
    count = 0
    with brain.write("sweep", kind="expire", actor=actor) as batch:
        rows = brain.db.conn.execute(
            f"SELECT {store.select_columns(brain.db)} FROM memory_traces "
            "WHERE brain_id = ? AND expires_at IS NOT NULL AND expires_at < ?",
            (brain.brain_id, now),
        ).fetchall()
        for row in rows:
            store.delete_trace(
                brain.db, batch, brain.brain_id, row[0], store.row_to_snapshot(row), "expire"
            )
            count += 1
    return count
