"""Typed links between traces: relates_to (symmetric), supersedes, caused_by."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Any

from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.model import Changes, RelatedSummary, check_id, check_link_kind, title_of
from memgui.core.storage import journal_rows, store

if TYPE_CHECKING:
    from memgui.core.brain_write import BrainContext
    from memgui.core.storage.db import WriteBatch

SNIPPET_CHARS = 160
MAX_RELATED = 10

# How a link reads from the side of its target.
_INVERSE = {"supersedes": "superseded_by", "caused_by": "caused", "relates_to": "relates_to"}


def normalised(from_id: str, to_id: str, kind: str) -> tuple[str, str]:
    """A symmetric link is stored one way: its smaller id first."""
    if kind == "relates_to" and to_id < from_id:
        return to_id, from_id
    return from_id, to_id


def check_ends(from_id: str, to_id: str, kind: str) -> None:
    """A link's arguments, on any engine: a known kind, two ids, not the same one."""
    check_link_kind(kind)
    check_id("from_id", from_id)
    check_id("to_id", to_id)
    if from_id == to_id:
        raise InvalidArgument("to_id", f"must differ from from_id (got {to_id!r})", to_id)


def _check(brain: BrainContext, from_id: str, to_id: str, kind: str) -> tuple[str, str]:
    check_ends(from_id, to_id, kind)
    for trace_id in (from_id, to_id):
        if store.fetch_row(brain.db, brain.brain_id, trace_id) is None:
            raise NotFound(trace_id)
    return normalised(from_id, to_id, kind)


def link(brain: BrainContext, from_id: str, to_id: str, kind: str, actor: str | None) -> Changes:
    """Create a link; linking twice is a no-op. Returns what changed: the link made, or
    nothing (false) when it was there."""
    check_link_kind(kind)
    write = brain.write("link", actor=actor)
    with write as batch:
        a, b = _check(brain, from_id, to_id, kind)
        exists = brain.db.conn.execute(
            "SELECT 1 FROM memory_links WHERE brain_id = ? AND from_id = ? AND to_id = ? "
            "AND kind = ?",
            (brain.brain_id, a, b, kind),
        ).fetchone()
        if not exists:
            _insert(brain, batch, a, b, kind)
    return write.changes


def _insert(brain: BrainContext, batch: WriteBatch, a: str, b: str, kind: str) -> None:
    now = brain.now()
    brain.db.conn.execute(
        "INSERT INTO memory_links (brain_id, from_id, to_id, kind, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        (brain.brain_id, a, b, kind, now),
    )
    row = {"from_id": a, "to_id": b, "kind": kind, "created_at": now}
    journal_rows.journal(brain.db, batch, brain.brain_id, "link", a, None, row)


def carry_over(brain: BrainContext, batch: WriteBatch, merged: list[str], survivor: str) -> None:
    """A merge: the links the merged traces have to other traces move to the survivor, in
    the merge's batch (each journaled as unlinked, then linked from the survivor), so a
    revert puts them back. A link the survivor has already is not made twice; a link among
    the merged traces themselves (it would link the survivor to itself) only goes."""
    conn, bid = brain.db.conn, brain.brain_id
    group = {survivor, *merged}
    for gone in merged:
        rows: list[tuple[Any, ...]] = conn.execute(
            "SELECT from_id, to_id, kind, created_at FROM memory_links WHERE brain_id = ?1 AND "
            "(from_id = ?2 OR to_id = ?2) ORDER BY created_at, rowid",
            (bid, gone),
        ).fetchall()
        for from_id, to_id, kind, created_at in rows:
            _delete(brain, batch, from_id, to_id, kind, created_at)
            if from_id in group and to_id in group:
                continue
            a, b = normalised(
                survivor if from_id == gone else from_id,
                survivor if to_id == gone else to_id,
                kind,
            )
            exists = conn.execute(
                "SELECT 1 FROM memory_links WHERE brain_id = ? AND from_id = ? AND to_id = ? "
                "AND kind = ?",
                (bid, a, b, kind),
            ).fetchone()
            if not exists:
                _insert(brain, batch, a, b, kind)


def unlink(brain: BrainContext, from_id: str, to_id: str, kind: str, actor: str | None) -> Changes:
    """Remove a link. Returns what changed: the link removed, or nothing (false) when there
    was no such link."""
    check_link_kind(kind)
    write = brain.write("unlink", actor=actor)
    with write as batch:
        a, b = _check(brain, from_id, to_id, kind)
        row = brain.db.conn.execute(
            "SELECT created_at FROM memory_links WHERE brain_id = ? AND from_id = ? "
            "AND to_id = ? AND kind = ?",
            (brain.brain_id, a, b, kind),
        ).fetchone()
        if row is not None:
            _delete(brain, batch, a, b, kind, row[0])
    return write.changes


def _delete(
    brain: BrainContext, batch: WriteBatch, a: str, b: str, kind: str, created_at: int
) -> None:
    brain.db.conn.execute(
        "DELETE FROM memory_links WHERE brain_id = ? AND from_id = ? AND to_id = ? AND kind = ?",
        (brain.brain_id, a, b, kind),
    )
    before = {"from_id": a, "to_id": b, "kind": kind, "created_at": created_at}
    journal_rows.journal(brain.db, batch, brain.brain_id, "unlink", a, before, None)


def snippet(text: str) -> str:
    """The first 160 characters and `…` when cut; the cut moves back to the start of a
    character sequence it would split (an accent, a skin tone, a ZWJ emoji)."""
    if len(text) <= SNIPPET_CHARS:
        return text
    cut = SNIPPET_CHARS
    while cut > 1 and (_continues(text[cut]) or text[cut - 1] == _ZWJ):
        cut -= 1
    return text[:cut] + "…"


_ZWJ = "\u200d"


def _continues(char: str) -> bool:
    """Whether `char` belongs to the character before it."""
    code = ord(char)
    return (
        char == _ZWJ
        or unicodedata.combining(char) != 0
        or 0xFE00 <= code <= 0xFE0F  # variation selectors
        or 0x1F3FB <= code <= 0x1F3FF  # skin tones
        or 0xE0020 <= code <= 0xE007F  # tag characters (flags of regions)
    )


def related(brain: BrainContext, trace_id: str, limit: int = MAX_RELATED) -> list[RelatedSummary]:
    """Links of a trace to live traces, newest first, each read from this trace's side."""
    db = brain.db
    if "memory_links" not in db.tables:
        return []
    with db.lock:
        rows: list[tuple[Any, ...]] = db.conn.execute(
            "SELECT l.from_id, l.to_id, l.kind, l.created_at, t.content, t.metadata "
            "FROM memory_links l "
            "JOIN memory_traces t ON t.brain_id = l.brain_id AND t.deleted = 0 AND "
            "t.id = CASE WHEN l.from_id = ?1 THEN l.to_id ELSE l.from_id END "
            "WHERE l.brain_id = ?2 AND (l.from_id = ?1 OR l.to_id = ?1) "
            "ORDER BY l.created_at DESC, l.rowid DESC LIMIT ?3",
            (trace_id, brain.brain_id, limit),
        ).fetchall()
    return summaries(trace_id, rows)


def summaries(trace_id: str, rows: list[tuple[Any, ...]]) -> list[RelatedSummary]:
    """Link rows (from_id, to_id, kind, created_at, the other trace's content and metadata),
    each read from the side of `trace_id`."""
    out = []
    for from_id, to_id, kind, created_at, content, metadata in rows:
        outgoing = from_id == trace_id
        other = to_id if outgoing else from_id
        if kind == "relates_to":
            direction = "out" if outgoing else "in"
            seen = kind
        else:
            direction = "out" if outgoing else "in"
            seen = kind if outgoing else _INVERSE[kind]
        title = title_of(store._loads(metadata, {})) if metadata and "title" in metadata else None
        out.append(RelatedSummary(other, seen, direction, snippet(content), created_at, title))
    return out


def links_of(brain: BrainContext, trace_id: str) -> list[dict[str, object]]:
    """Every link row of a trace (live or not), for exports and the app's links tab."""
    db = brain.db
    if "memory_links" not in db.tables:
        return []
    with db.lock:
        rows = db.conn.execute(
            "SELECT from_id, to_id, kind, created_at FROM memory_links "
            "WHERE brain_id = ? AND (from_id = ? OR to_id = ?) ORDER BY created_at DESC",
            (brain.brain_id, trace_id, trace_id),
        ).fetchall()
    return [{"from_id": r[0], "to_id": r[1], "kind": r[2], "created_at": r[3]} for r in rows]
