"""Writing traces: add, merge-patch update, forget, restore, purge, merge (DESIGN.md §4).

Every call validates all of its input before it writes, then changes the row, its journal
rows and its index marks in one transaction; a rejection writes nothing. Each returns what
it changed: the trace it leaves, carrying its `changes`, or the `Changes` alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import apsw

from memgui.core import decay, journal, links, merge_moves
from memgui.core.errors import InvalidArgument, RefusedByBrain
from memgui.core.model import (
    EDITABLE_FIELDS,
    SCOPES,
    TYPES,
    Changes,
    Trace,
    check_category,
    check_choice,
    check_content,
    check_id,
    check_strength,
    check_tags,
    check_text,
    check_ttl,
    new_trace_id,
    with_changes,
)
from memgui.core.storage import store

if TYPE_CHECKING:
    from memgui.core.brain_write import BrainContext
    from memgui.core.storage.db import WriteBatch

PATCH_FIELDS = frozenset({*EDITABLE_FIELDS, "ttl_secs"})


def new_snapshot(
    now: int,
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
) -> dict[str, Any]:
    """A new trace's snapshot, its arguments checked (every engine adds through this)."""
    check_content(content)
    check_choice("type", type, TYPES)
    check_choice("scope", scope, SCOPES)
    scope_id = _check_scope_id(scope_id)
    category = check_category(category)
    tag_list = list(check_tags(tags))
    if ttl_secs is not None:
        check_ttl(ttl_secs)
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidArgument("metadata", f"must be a JSON object (got {metadata!r})")
    if metadata:  # refused here, not halfway through the write's serialisation
        store.check_json("metadata", metadata)
    strength = check_strength(strength)
    if id is not None and (not isinstance(id, str) or not id):
        raise InvalidArgument("id", f"must be a non-empty string (got {id!r})", id)
    if id is not None:
        check_text("id", id)
    snap = {
        "id": id or new_trace_id(),
        "type": type,
        "scope": scope,
        "scope_id": scope_id,
        "content": content,
        "strength": strength,
        "created_at": now,
        "last_accessed": None,
        "retrieval_count": 0,
        "tags": tag_list,
        "emotions": {},
        "metadata": decay.pinned_explicitly(dict(metadata or {}), category),
        "deleted": False,
        "expires_at": now + ttl_secs * 1000 if ttl_secs is not None else None,
        "category": category,
        "version": 1,
        "updated_at": now,
        "embedding_status": 0,
    }
    return snap


def add(
    brain: BrainContext,
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
    snap = new_snapshot(
        brain.now(),
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
    write = brain.write("add", actor=actor)
    try:
        with write as batch:
            rowid = store.insert_trace(brain.db, batch, brain.brain_id, snap)
    except apsw.ConstraintError as exc:
        if getattr(exc, "extendedresult", None) == apsw.SQLITE_CONSTRAINT_PRIMARYKEY:
            raise InvalidArgument("id", f"already exists (got {snap['id']!r})", snap["id"]) from exc
        # Not memgui's key: a constraint of another program's (a UNIQUE index of its own).
        raise RefusedByBrain(
            str(brain.db.path), "add", "a constraint memgui did not make", str(exc)
        ) from exc
    return with_changes(store.added_trace(snap, rowid), write.changes)


def update(
    brain: BrainContext,
    trace_id: str,
    patch: dict[str, Any],
    expect_version: int | None = None,
    actor: str | None = None,
) -> Trace:
    """Merge-patch a trace; with `expect_version`, compare-and-set on it."""
    check_id("id", trace_id)
    wanted = checked_patch(patch)
    write = brain.write("update", actor=actor)
    with write as batch:
        row = store.require_row(brain.db, brain.brain_id, trace_id)
        before = store.row_to_snapshot(row)
        journal.check_version(before, expect_version)
        now = brain.now()
        after = patched_snapshot(before, wanted, now)
        store.update_trace(brain.db, batch, brain.brain_id, row[0], before, after, "update")
    return with_changes(store.snapshot_to_trace(after, row[0], now), write.changes)


def set_deleted(
    brain: BrainContext,
    trace_id: str,
    deleted: bool,
    expect_version: int | None,
    actor: str | None,
) -> Trace:
    check_id("id", trace_id)
    op = "forget" if deleted else "restore"
    write = brain.write(op, actor=actor)
    with write as batch:
        row = store.require_row(brain.db, brain.brain_id, trace_id)
        now = brain.now()
        if deleted and expect_version is None and not row[13]:  # a live trace's forget
            after = store.forget_row(brain.db, batch, brain.brain_id, row, op, now)
            trace = store.snapshot_to_trace(after, row[0], now)
        else:
            trace = _set_deleted(brain, batch, row, deleted, expect_version, op, now)
    return with_changes(trace, write.changes)


def _set_deleted(
    brain: BrainContext,
    batch: WriteBatch,
    row: tuple[Any, ...],
    deleted: bool,
    expect_version: int | None,
    op: str,
    now: int,
) -> Trace:
    before = store.row_to_snapshot(row)
    journal.check_version(before, expect_version)
    if before["deleted"] == deleted:  # already there: idempotent, nothing journaled
        return store.snapshot_to_trace(before, row[0], now)
    after = dict(before, deleted=deleted, version=before["version"] + 1, updated_at=now)
    store.update_trace(brain.db, batch, brain.brain_id, row[0], before, after, op)
    return store.snapshot_to_trace(after, row[0], now)


def purge(
    brain: BrainContext,
    trace_id: str,
    expect_version: int | None = None,
    actor: str | None = None,
) -> Changes:
    check_id("id", trace_id)
    write = brain.write("purge", actor=actor)
    with write as batch:
        row = store.require_row(brain.db, brain.brain_id, trace_id)
        before = store.row_to_snapshot(row)
        journal.check_version(before, expect_version)
        store.delete_trace(brain.db, batch, brain.brain_id, row[0], before, "purge")
    return write.changes


def merge(
    brain: BrainContext,
    ids: list[str],
    content: str | None = None,
    actor: str | None = None,
    *,
    keep: str | None = None,
    verified: bool = False,
) -> Trace:
    """Merge live traces into `keep` (one of `ids`; by default the most retrieved, on a tie
    the first given). The survivor takes the others' links and knowledge-graph edges
    (`merge_moves`); the others go to the trash. `verified` counts the merge as AgentOS's
    consolidation does: the survivor's `verificationCount` becomes the sum of the merged
    traces' plus one per trace merged into it, and `lastVerifiedAt` now."""
    ids = check_merge(ids, content, keep)
    write = brain.write("merge", actor=actor)
    with write as batch:
        rows = [store.require_row(brain.db, brain.brain_id, i) for i in ids]
        snaps = [store.row_to_snapshot(r) for r in rows]
        now = brain.now()
        best, after, gone = merged(snaps, ids, content, keep, now, verified)
        kept = snaps[best]
        store.update_trace(brain.db, batch, brain.brain_id, rows[best][0], kept, after, "merge")
        for row, snap in zip(rows, snaps, strict=True):
            if snap is not kept:
                store.update_trace(
                    brain.db, batch, brain.brain_id, row[0], snap, gone[snap["id"]], "forget"
                )
        absorbed = [s["id"] for s in snaps if s is not kept]
        links.carry_over(brain, batch, absorbed, kept["id"])
        merge_moves.move_edges(brain, batch, absorbed, kept)
    return with_changes(store.snapshot_to_trace(after, rows[best][0], now), write.changes)


def check_merge(ids: object, content: object, keep: object) -> list[str]:
    """A merge's arguments, on either engine: the distinct ids, in the order given."""
    if isinstance(ids, list | tuple):
        for i, trace_id in enumerate(ids):
            check_id(f"ids[{i}]", trace_id)
    if not isinstance(ids, list | tuple):
        raise InvalidArgument("ids", f"must be a list of trace ids (got {ids!r})", ids)
    if len(set(ids)) < 2:
        raise InvalidArgument(
            "ids", f"must name at least 2 different live traces (got {list(ids or [])})"
        )
    if content is not None:
        check_content(content)
    ids = list(dict.fromkeys(ids))
    if keep is not None and keep not in ids:
        raise InvalidArgument("keep", f"must be one of ids (got {keep!r})", keep)
    return ids


def merged(
    snaps: list[dict[str, Any]],
    ids: list[str],
    content: str | None,
    keep: str | None,
    now: int,
    verified: bool,
) -> tuple[int, dict[str, Any], dict[str, dict[str, Any]]]:
    """What a merge of `snaps` (the traces of `ids`, in order) writes, on either engine: the
    survivor's index, its new snapshot, and the forgotten snapshot of each other trace."""
    dead = [s["id"] for s in snaps if s["deleted"]]
    if dead:
        raise InvalidArgument("ids", f"must name live traces only (deleted: {', '.join(dead)})")
    best = (
        ids.index(keep)
        if keep is not None
        else max(range(len(snaps)), key=lambda i: (snaps[i]["retrieval_count"], -i))
    )
    kept = snaps[best]
    tags: list[str] = []
    for s in snaps:
        tags.extend(t for t in s["tags"] if t not in tags)
    accessed = [s["last_accessed"] for s in snaps if s["last_accessed"] is not None]
    strength, metadata = decay.merged_state(snaps, kept)
    after = dict(
        kept,
        content=content if content is not None else " | ".join(s["content"] for s in snaps),
        tags=tags,
        strength=strength,
        retrieval_count=sum(s["retrieval_count"] for s in snaps),
        last_accessed=max(accessed) if accessed else None,
        version=kept["version"] + 1,
        updated_at=now,
        metadata=dict(
            metadata, merged_from=[s["id"] for s in snaps], **_verified(snaps, now, verified)
        ),
        emotions=_averaged_emotions(snaps, kept),
        # What one merged trace keeps for good, the merge keeps: no expiry if one has
        # none (else the latest), and a category if the survivor has none.
        expires_at=None
        if any(s["expires_at"] is None for s in snaps)
        else max(s["expires_at"] for s in snaps),
        category=kept["category"] or next((s["category"] for s in snaps if s["category"]), None),
    )
    gone = {
        s["id"]: dict(s, deleted=True, version=s["version"] + 1, updated_at=now)
        for s in snaps
        if s is not kept
    }
    return best, after, gone


def _verified(snaps: list[dict[str, Any]], now: int, verified: bool) -> dict[str, int]:
    if not verified:
        return {}
    counts = [s["metadata"].get("verificationCount") for s in snaps]
    total = sum(c for c in counts if isinstance(c, int) and not isinstance(c, bool))
    return {"verificationCount": total + len(snaps) - 1, "lastVerifiedAt": now}


def _averaged_emotions(snaps: list[dict[str, Any]], survivor: dict[str, Any]) -> dict[str, Any]:
    """Each numeric emotion averaged over the merged traces, a missing one counting as 0
    (upstream-notes §B.4); a value that is not a number stays as the survivor had it."""
    keys = {k for s in snaps if isinstance(s["emotions"], dict) for k in s["emotions"]}
    out = dict(survivor["emotions"]) if isinstance(survivor["emotions"], dict) else {}
    for key in keys:
        values = [
            s["emotions"].get(key, 0) if isinstance(s["emotions"], dict) else 0 for s in snaps
        ]
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            out[key] = sum(values) / len(values)
    return out


def checked_patch(patch: dict[str, Any]) -> dict[str, Any]:
    """An update's merge-patch, checked: known fields only, each value valid."""
    if not isinstance(patch, dict) or not patch:
        raise InvalidArgument("patch", f"must name at least one field (got {patch!r})")
    unknown = set(patch) - PATCH_FIELDS
    if unknown:
        raise InvalidArgument(
            "patch",
            # Sorted by repr: the keys may mix types (1 and "a") that do not compare.
            f"may only set {', '.join(sorted(PATCH_FIELDS))} (got {sorted(unknown, key=repr)})",
        )
    return _validated_patch(patch)


def patched_snapshot(before: dict[str, Any], wanted: dict[str, Any], now: int) -> dict[str, Any]:
    """The trace after a checked patch, its version moved on (every engine updates so)."""
    after = dict(before, metadata=dict(before["metadata"]))
    for key, value in wanted.items():
        if key == "ttl_secs":
            after["expires_at"] = None if value is None else now + value * 1000
        else:
            after[key] = value
    if "category" in wanted:
        after["metadata"] = decay.repinned(after["metadata"], before["category"], after["category"])
    after["version"] = before["version"] + 1
    after["updated_at"] = now
    return after


def _check_scope_id(value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidArgument("scope_id", f"must be a string (got {value!r})", value)
    return check_text("scope_id", value)


def _validated_patch(patch: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in patch.items():
        if key == "content":
            out[key] = check_content(value)
        elif key == "tags":
            out[key] = list(check_tags(value))
        elif key == "type":
            out[key] = check_choice("type", value, TYPES)
        elif key == "scope":
            out[key] = check_choice("scope", value, SCOPES)
        elif key == "scope_id":
            out[key] = _check_scope_id(value)
        elif key == "category":
            out[key] = check_category(value)
        elif key == "ttl_secs":
            out[key] = None if value is None else check_ttl(value)
    return out
