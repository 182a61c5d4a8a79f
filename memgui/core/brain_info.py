"""What a brain is, for `Brain.info`, `Brain.embedding_info`, `Brain.read_only_reason` and
`Brain.facets`: its ids, schema versions, counts, whether it can be written and why not, the
triggers memgui did not make, and its memories counted by type, scope, category and tag."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core.model import Facets
from memgui.core.search import hybrid, vectors
from memgui.core.storage import migration, reads

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.storage.db import Database


def read_only_reason(brain: Brain) -> str | None:
    """Why the brain cannot be written, in words, or None when it can."""
    db = brain.db
    if db.lost is not None:
        return f"its file {db.lost}"
    if db.readonly_reason is not None:
        return f"it {db.readonly_reason}"
    if db.readonly:
        return "its file cannot be written (no write permission, or read-only media)"
    return None


def info(brain: Brain) -> dict[str, Any]:
    db = brain.db
    with db.lock:
        total, deleted = reads.trace_counts(db, brain.brain_id)
        return {
            "path": str(brain.path),
            "brain_id": brain.brain_id,
            "brain_ids": db.brain_ids() or [brain.brain_id],
            "schema_version": db.schema_version,
            "agentos_schema_version": migration.agentos_version(db.conn),
            "traces": total,
            "live": total - deleted,
            "deleted": deleted,
            "read_only": brain.read_only,
            "read_only_reason": read_only_reason(brain),
            "foreign_triggers": list(db.foreign_triggers),
        }


def embedding_info(brain: Brain) -> dict[str, Any]:
    db = brain.db
    if "memory_traces" not in db.tables or "brain_meta" not in db.tables:
        return {"model": None, "dimensions": None, "pending": None}
    with db.lock:  # an AgentOS brain not migrated yet counts by its BLOBs
        model, dims = vectors.pinned_model(db.conn, brain.brain_id)
        pending = hybrid.count_pending(db.conn, brain.brain_id)
    return {"model": model, "dimensions": dims, "pending": pending}


def facets(db: Database, brain_id: str, deleted: bool, tag_limit: int) -> Facets:
    with db.lock:
        groups, tags = reads.facet_counts(db, brain_id, deleted, tag_limit)
    types: dict[str, int] = {}
    scopes: dict[str, int] = {}
    categories: dict[str, int] = {}
    for type_, scope, category, count in groups:
        types[type_] = types.get(type_, 0) + count
        scopes[scope] = scopes.get(scope, 0) + count
        if category:
            categories[category] = categories.get(category, 0) + count
    return Facets(types, scopes, categories, dict(tags), sum(types.values()))
