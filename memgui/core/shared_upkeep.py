"""Merge, scopes and sweep on a shared brain, with the rules of a file (`core/traces.py`'s
merge, `core/scopes.py`): the same checks, the same rows written and journaled, so `revert`
undoes each as on a file. Each is one transaction holding the brain id's advisory lock
(`storage/postgres_locks.py`): a second long operation on the brain is refused meanwhile."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core import scopes, shared_graph, shared_links, traces
from memgui.core.changes import ChangesWithCount, with_count
from memgui.core.errors import NotFound
from memgui.core.model import Trace, with_changes
from memgui.core.storage import postgres, postgres_graph, postgres_scopes, store

if TYPE_CHECKING:
    from memgui.core.shared_brain import SharedBrain
    from memgui.core.storage.transaction import WriteBatch


def merge(
    brain: SharedBrain,
    ids: list[str],
    content: str | None,
    actor: str | None,
    keep: str | None,
    verified: bool = False,
) -> Trace:
    """`Brain.merge` on PostgreSQL: the survivor takes the others' links and edges."""
    ids = traces.check_merge(ids, content, keep)
    with brain.writing(actor, lock="merge") as batch:
        after = merge_in(brain, batch, ids, content, keep, verified)
    return with_changes(store.snapshot_to_trace(after, 0, after["updated_at"]), batch.changes())


def merge_in(
    brain: SharedBrain,
    batch: WriteBatch,
    ids: list[str],
    content: str | None,
    keep: str | None,
    verified: bool,
) -> dict[str, Any]:
    """A merge inside the caller's transaction (`ids` checked); the survivor's snapshot."""
    conn, bid = brain.conn, brain.brain_id
    snaps = []
    for trace_id in ids:
        row = postgres.fetch_row(conn, bid, trace_id, lock=True)
        if row is None:
            raise NotFound(trace_id)
        snaps.append(store.row_to_snapshot(row))
    now = brain.now()
    best, after, gone = traces.merged(snaps, ids, content, keep, now, verified)
    kept = snaps[best]
    postgres.update_trace(conn, batch, bid, kept, after, "merge")
    for snap in snaps:
        if snap is not kept:
            postgres.update_trace(conn, batch, bid, snap, gone[snap["id"]], "forget")
    absorbed = [s["id"] for s in snaps if s is not kept]
    shared_links.carry_over(conn, batch, bid, absorbed, kept["id"], now)
    shared_graph.move_edges(conn, batch, bid, absorbed, kept, now)
    return after


def delete_scope(
    brain: SharedBrain, scope: str, scope_id: str, user_id: str | None, actor: str | None
) -> ChangesWithCount:
    """Remove one scope id's traces for good (forgotten ones too); `.count` is how many."""
    scopes.check_delete_scope(scope, scope_id, user_id)
    conn, bid = brain.conn, brain.brain_id
    with brain.writing(actor, "scope", lock="scope-delete") as batch:
        rows = postgres_scopes.scope_rows(conn, bid, scope, scope_id, user_id)
        for row in rows:
            postgres.delete_trace(conn, batch, bid, store.row_to_snapshot(row), "purge")
    return with_count(batch.changes(), len(rows))


def refile_scope(
    brain: SharedBrain, scope: str, from_scope_id: str, to_scope_id: str, actor: str | None
) -> ChangesWithCount:
    """Move one scope id's traces to another; a live trace's memory_graph node follows."""
    scopes.check_refile(scope, from_scope_id, to_scope_id)
    if from_scope_id == to_scope_id:  # nothing moves: no write at all
        return ChangesWithCount(kind="scope", actor=actor or brain.actor)
    conn, bid = brain.conn, brain.brain_id
    with brain.writing(actor, "scope", lock="scope-refile") as batch:
        rows = postgres_scopes.scope_rows(conn, bid, scope, from_scope_id)
        now = brain.now()
        for row in rows:
            before = store.row_to_snapshot(row)
            after = dict(
                before, scope_id=to_scope_id, version=before["version"] + 1, updated_at=now
            )
            postgres.update_trace(conn, batch, bid, before, after, "refile")
            if before["deleted"]:
                continue
            raw = postgres_graph.node_properties(conn, bid, before["id"])
            moved = scopes.refiled_node(raw, to_scope_id)
            if moved is not None:
                postgres_graph.update_row(
                    conn,
                    batch,
                    bid,
                    "node",
                    {"id": before["id"], "properties": moved[0]},
                    {"id": before["id"], "properties": moved[1]},
                )
    return with_count(batch.changes(), len(rows))


def expire(brain: SharedBrain, actor: str) -> ChangesWithCount:
    """Remove the traces whose time to live has passed, with their links and graph rows."""
    conn, bid = brain.conn, brain.brain_id
    now = brain.now()
    if not postgres_scopes.expired_rows(conn, bid, now):  # nothing due: no write, no lock
        return ChangesWithCount(kind="expire", actor=actor)
    with brain.writing(actor, "expire", lock="sweep") as batch:
        rows = postgres_scopes.expired_rows(conn, bid, now)
        for row in rows:
            postgres.delete_trace(conn, batch, bid, store.row_to_snapshot(row), "expire")
    return with_count(batch.changes(), len(rows))
