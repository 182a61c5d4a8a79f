"""AgentOS's archive of verbatim texts (`archived_traces`): what `rehydrate_memory` reads.

AgentOS's temporal gist shortens an old trace's content and keeps the original here. Reading
it back checks the stored SHA-256 (a mismatch reads as nothing, as AgentOS answers) and notes
the access in `archive_access_log`, so AgentOS's retention sweep keeps a text still in use.
The note is bookkeeping, like a recall: no journal row, no version bump.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memgui.core.model import check_id

if TYPE_CHECKING:
    from memgui.core.brain import Brain

REQUEST_CONTEXT = "rehydrate_memory_tool"  # what AgentOS's tool writes as the access's context


@dataclass(frozen=True)
class Archived:
    verbatim_content: str | None
    archived_at: int | None


def rehydrate(brain: Brain, trace_id: str) -> Archived:
    """The original text of an archived trace, or nothing (not archived, or altered)."""
    check_id("traceId", trace_id)
    db = brain.db
    if "archived_traces" not in db.tables:
        return Archived(None, None)
    with db.reading("reading the archive"), db.lock:
        row = db.conn.execute(
            "SELECT verbatim_content, content_hash, archived_at FROM archived_traces "
            "WHERE brain_id = ? AND trace_id = ?",
            (brain.brain_id, trace_id),
        ).fetchone()
    found = verified(row)
    if found.verbatim_content is None:
        return found
    if not brain.read_only and "archive_access_log" in db.tables:
        with brain.write("rehydrate", kind="recall"):
            db.conn.execute(
                "INSERT OR IGNORE INTO archive_access_log "
                "(brain_id, trace_id, accessed_at, request_context) VALUES (?, ?, ?, ?)",
                (brain.brain_id, trace_id, brain.now(), REQUEST_CONTEXT),
            )
    return found


def verified(row: tuple[Any, ...] | None) -> Archived:
    """An archive row (verbatim_content, content_hash, archived_at) read on either engine:
    its text if the stored SHA-256 still matches it, else nothing (as AgentOS answers)."""
    if row is None or not isinstance(row[0], str):
        return Archived(None, None)
    text, stored_hash, archived_at = row
    if hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() != stored_hash:
        return Archived(None, None)
    return Archived(text, archived_at if isinstance(archived_at, int) else None)
