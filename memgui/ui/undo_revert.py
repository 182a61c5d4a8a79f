"""Undo and redo of one journal batch, tolerant of version drift from the undo stack itself.

`Brain.revert(batch)` restores the exact rows a batch changed, and refuses (a `Conflict`)
when a trace's version is not the one the batch left. On an undo stack that is too strict:
edit a trace twice, undo both, and the first undo's revert bumped the version the older
batch expects. So when revert refuses, the traces are compared field by field with the
state the batch left; if only the version moved (nobody changed the content), the batch is
undone by inverse calls instead (compare-and-set updates, forget/restore, purge, unlink).
A real change by someone else still refuses, and nothing is written.
"""

from __future__ import annotations

from typing import Any

from memgui.core.errors import Conflict
from memgui.core.model import MAX_TTL_SECS, JournalEntry, Trace, now_ms
from memgui.ui.session import ACTOR, BrainSession

COMPARED = ("content", "tags", "type", "scope", "scope_id", "category", "deleted", "expires_at")
PATCHABLE = ("content", "tags", "type", "scope", "scope_id", "category")
LINK_OPS = ("link", "unlink")


def same_state(current: Trace, snapshot: dict[str, Any]) -> bool:
    """Do `current`'s person-visible fields equal the journal snapshot's?"""
    for name in COMPARED:
        have = getattr(current, name)
        wanted = snapshot.get(name)
        if name == "tags":
            have, wanted = list(have), list(wanted or [])
        elif name == "deleted":
            wanted = bool(wanted)
        if have != wanted:
            return False
    return True


def revert_batch(session: BrainSession, batch_id: str, initiator: object = None) -> str:
    """Undo `batch_id`; return the id of the batch that did it."""
    brain = session.brain
    try:
        changes, _ = session.record(lambda: brain.revert(batch_id, actor=ACTOR), initiator)
        return changes.batch_id
    except Conflict:
        entries = brain.batch_entries(batch_id)
        if not _only_versions_moved(session, entries):
            raise
    _, new_batch = session.record_batch(lambda: _apply_inverse(session, entries), initiator)
    return new_batch


def _only_versions_moved(session: BrainSession, entries: list[JournalEntry]) -> bool:
    ids = [e.trace_id for e in entries if e.op not in LINK_OPS]
    current = session.brain.get_many(ids)
    for entry in entries:
        if entry.op in LINK_OPS:
            continue
        trace = current.get(entry.trace_id)
        if entry.after is None:
            if trace is not None:
                return False
        elif (
            entry.before is None
            and trace is None
            or trace is None
            or not same_state(trace, entry.after)
        ):
            return False
        if entry.before is not None and entry.after is None:
            return False  # a purge: only the core's revert can bring the row back
    return True


def _apply_inverse(session: BrainSession, entries: list[JournalEntry]) -> None:
    brain = session.brain
    for entry in reversed(entries):
        if entry.op in LINK_OPS:
            link = entry.after or entry.before or {}
            ends = (link.get("from_id"), link.get("to_id"), link.get("kind"))
            if entry.op == "link":
                brain.unlink(*ends, actor=ACTOR)
            else:
                brain.link(*ends, actor=ACTOR)
            continue
        current = brain.get(entry.trace_id)
        if entry.before is None:
            brain.purge(entry.trace_id, expect_version=current.version, actor=ACTOR)
            continue
        before = entry.before
        patch = {}
        for name in PATCHABLE:
            wanted = before.get(name)
            have = getattr(current, name)
            if name == "tags":
                wanted, have = list(wanted or []), list(have)
            if wanted != have:
                patch[name] = wanted
        if before.get("expires_at") != current.expires_at:
            patch["ttl_secs"] = _ttl_until(before.get("expires_at"))
        if patch:
            current = brain.update(
                entry.trace_id, patch, expect_version=current.version, actor=ACTOR
            )
        if bool(before.get("deleted")) != current.deleted:
            call = brain.forget if before.get("deleted") else brain.restore
            call(entry.trace_id, expect_version=current.version, actor=ACTOR)


def _ttl_until(expires_at: int | None) -> int | None:
    if expires_at is None:
        return None
    seconds = (expires_at - now_ms()) // 1000
    return min(max(1, seconds), MAX_TTL_SECS)
