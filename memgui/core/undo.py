"""Undo that tolerates version drift, and bringing a trace back to a version of its history.

`Brain.revert(batch)` restores the exact rows a batch changed, and refuses (a `Conflict`)
when a trace is no longer as the batch left it, its version included. For an undo stack
that is too strict: edit a trace twice, undo both, and the first undo's revert bumped the
version the older batch expects. So `undo_batch`, when revert refuses, compares the traces
field by field with the state the batch left; if only the version moved (nobody changed what
a person sees), the batch is undone by inverse calls instead (compare-and-set updates,
forget/restore, purge, unlink), in one batch of its own. A real change by someone else still
refuses, and nothing is written. The app's undo stack, the command line and an agent's undo
all go through here (`Brain.undo`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core.changes import Changes
from memgui.core.errors import Conflict
from memgui.core.model import (
    EDITABLE_FIELDS,
    MAX_TTL_SECS,
    JournalEntry,
    Trace,
    now_ms,
    with_changes,
)

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.shared_brain import SharedBrain

# What a person sees of a trace: equal in these, two states are the same to them.
COMPARED = (*EDITABLE_FIELDS, "deleted", "expires_at")
# What an update can set back (the expiry travels as a TTL, `deleted` by forget/restore).
PATCHABLE = EDITABLE_FIELDS
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


def undo_batch(brain: Brain | SharedBrain, batch_id: str, actor: str | None = None) -> Changes:
    """Undo `batch_id` (see the module docstring); what the undo changed, in its own batch."""
    try:
        return brain.revert(batch_id, actor=actor)
    except Conflict:
        entries = brain.batch_entries(batch_id)
        if not only_versions_moved(brain, entries):
            raise
    with brain.batch(actor=actor, kind="revert") as batch:
        _apply_inverse(brain, entries, actor)
    return batch.changes


def only_versions_moved(brain: Brain | SharedBrain, entries: list[JournalEntry]) -> bool:
    """Whether every trace the batch wrote is still as it left it, but for its version.

    A purge is never undone this way: only the core's revert can bring the row back."""
    current = brain.get_many([e.trace_id for e in entries if e.op not in LINK_OPS])
    for entry in entries:
        if entry.op in LINK_OPS:
            continue
        trace = current.get(entry.trace_id)
        if entry.after is None:  # the batch removed it
            return False
        if trace is None or not same_state(trace, entry.after):
            return False
    return True


def _apply_inverse(
    brain: Brain | SharedBrain, entries: list[JournalEntry], actor: str | None
) -> None:
    for entry in reversed(entries):
        if entry.op in LINK_OPS:
            link = entry.after or entry.before or {}
            ends = (link["from_id"], link["to_id"], link["kind"])
            if entry.op == "link":
                brain.unlink(*ends, actor=actor)
            else:
                brain.link(*ends, actor=actor)
            continue
        current = brain.get(entry.trace_id)
        if entry.before is None:  # the batch added it
            brain.purge(entry.trace_id, expect_version=current.version, actor=actor)
            continue
        before = entry.before
        patch = {
            name: _wanted(before, name) for name in PATCHABLE if _differs(current, before, name)
        }
        if before.get("expires_at") != current.expires_at:
            patch["ttl_secs"] = _ttl_until(before.get("expires_at"), brain.now())
        if patch:
            current = brain.update(
                entry.trace_id, patch, expect_version=current.version, actor=actor
            )
        if bool(before.get("deleted")) != current.deleted:
            call = brain.forget if before.get("deleted") else brain.restore
            call(entry.trace_id, expect_version=current.version, actor=actor)


def _wanted(snapshot: dict[str, Any], name: str) -> Any:
    wanted = snapshot.get(name)
    return list(wanted or []) if name == "tags" else wanted


def _differs(current: Trace, snapshot: dict[str, Any], name: str) -> bool:
    have = getattr(current, name)
    return bool(_wanted(snapshot, name) != (list(have) if name == "tags" else have))


def _ttl_until(expires_at: int | None, now: int) -> int | None:
    if expires_at is None:
        return None
    seconds = (expires_at - now) // 1000
    return min(max(1, seconds), MAX_TTL_SECS)


def restore_version(
    brain: Brain | SharedBrain,
    trace_id: str,
    snapshot: dict[str, Any],
    expect_version: int | None,
    actor: str | None,
) -> Trace:
    """`Brain.restore_version`: an update by `patch_towards`; none when nothing differs."""
    current = brain.get(trace_id)
    patch = patch_towards(current, snapshot, brain.now())
    if not patch:
        return with_changes(current, Changes(kind="edit", actor=actor or brain.actor))
    return brain.update(trace_id, patch, expect_version, actor)


def patch_towards(
    current: Trace, snapshot: dict[str, Any], now: int | None = None
) -> dict[str, Any]:
    """The update patch that brings `current` back to a journal snapshot's fields.

    The expiry travels as a TTL from `now` (default: the clock): no expiry comes back as
    none, a future one as the seconds left until it; one already past is left as it is (it
    would expire at once).
    """
    patch: dict[str, Any] = {}
    if "expires_at" in snapshot and snapshot["expires_at"] != current.expires_at:
        wanted_expiry = snapshot["expires_at"]
        at = now_ms() if now is None else now
        if wanted_expiry is None:
            patch["ttl_secs"] = None
        elif isinstance(wanted_expiry, int) and wanted_expiry > at:
            patch["ttl_secs"] = -(-(wanted_expiry - at) // 1000)  # whole seconds, rounded up
    for name in PATCHABLE:
        if name in snapshot and _differs(current, snapshot, name):
            patch[name] = _wanted(snapshot, name)
    return patch
