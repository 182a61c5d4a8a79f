"""The journal: history of a trace, changes since a point, and reverting a batch.

Every change writes journal rows in its own transaction. Reverting a batch applies the
inverse of each row, newest first, as a new batch (so a revert can itself be reverted). A
row whose trace, link or graph row changed since the batch is a conflict: nothing is
reverted.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from memgui.core import decay
from memgui.core.errors import Conflict, InvalidArgument, NotFound
from memgui.core.model import Changes, JournalEntry, check_id, check_int_range
from memgui.core.search import vectors
from memgui.core.storage import journal_rows, journal_states, review_rows, store

if TYPE_CHECKING:
    from memgui.core.brain_write import BrainContext
    from memgui.core.storage.db import WriteBatch

_COLUMNS = "id, at, actor, batch_id, op, trace_id, before, after"
_LINK_ROW = "op IN ('link', 'unlink')"
_COLUMNS_LINKS_ONLY = (
    f"id, at, actor, batch_id, op, trace_id, CASE WHEN {_LINK_ROW} THEN before END, "
    f"CASE WHEN {_LINK_ROW} THEN after END"
)


def check_version(snap: dict[str, Any], expected: int | None) -> None:
    if expected is None:
        return
    if isinstance(expected, bool) or not isinstance(expected, int):
        raise InvalidArgument("expect_version", f"must be an integer (got {expected!r})", expected)
    if expected < 0:  # no trace ever has such a version: a mistake, not a conflict
        raise InvalidArgument("expect_version", f"must be 0 or more (got {expected})", expected)
    if snap["version"] != expected:
        raise Conflict(snap["id"], expected, snap["version"])


def history(brain: BrainContext, trace_id: str) -> list[JournalEntry]:
    check_id("id", trace_id)
    if "memgui_journal" not in brain.db.tables:
        with brain.db.lock:
            store.require_row(brain.db, brain.brain_id, trace_id)  # NotFound for an unknown id
        return []
    with brain.db.lock:
        # Link rows are filed under their first trace; the second finds them through an
        # index on the link's to_id, so history never scans the whole journal.
        rows = brain.db.conn.execute(
            f"SELECT {_COLUMNS} FROM memgui_journal WHERE brain_id = ?1 AND trace_id = ?2 "
            f"UNION ALL SELECT {_COLUMNS} FROM memgui_journal WHERE brain_id = ?1 "
            "AND op IN ('link', 'unlink') "
            "AND json_extract(coalesce(after, before), '$.to_id') = ?2 AND trace_id != ?2 "
            "ORDER BY id",
            (brain.brain_id, trace_id),
        ).fetchall()
        entries = [journal_rows.row_to_entry(r) for r in rows]
        row = store.fetch_row(brain.db, brain.brain_id, trace_id)
    if not rows and row is None:
        raise NotFound(trace_id)
    if not any(journal_states.is_partial(e) for e in entries):
        return entries
    current = store.row_to_snapshot(row) if row is not None else None
    whole = journal_states.expand_trace([e for e in entries if e.trace_id == trace_id], current)
    return [whole.get(e.id, e) for e in entries]


def since(
    brain: BrainContext, after_id: int, limit: int, states: bool = True
) -> list[JournalEntry]:
    """Journal rows after `after_id`; without `states`, a trace's before/after are not read
    (cheap). A link row keeps its link either way: it is small, and names the link."""
    if "memgui_journal" not in brain.db.tables:
        return []
    columns = _COLUMNS if states else _COLUMNS_LINKS_ONLY
    with brain.db.lock:
        rows = brain.db.conn.execute(
            f"SELECT {columns} FROM memgui_journal WHERE brain_id = ? AND id > ? "
            "ORDER BY id LIMIT ?",
            (brain.brain_id, after_id, limit),
        ).fetchall()
        return whole_states(brain, [journal_rows.row_to_entry(r) for r in rows])


def last_id(brain: BrainContext) -> int:
    if "memgui_journal" not in brain.db.tables:
        return 0
    with brain.db.lock:
        row = brain.db.conn.execute("SELECT max(id) FROM memgui_journal").fetchone()
    return int(row[0] or 0) if row is not None else 0


def batch_entries(brain: BrainContext, batch_id: str) -> list[JournalEntry]:
    check_id("batch_id", batch_id, "batch id")
    if "memgui_journal" not in brain.db.tables:
        return []
    with brain.db.lock:
        rows = brain.db.conn.execute(
            f"SELECT {_COLUMNS} FROM memgui_journal WHERE brain_id = ? AND batch_id = ? "
            "ORDER BY id",
            (brain.brain_id, batch_id),
        ).fetchall()
        return whole_states(brain, [journal_rows.row_to_entry(r) for r in rows])


def batch_page(brain: BrainContext, batch_id: str, after_id: int, limit: int) -> list[JournalEntry]:
    """A batch's rows after journal id `after_id`, in order, at most `limit`."""
    with brain.db.lock:
        rows = brain.db.conn.execute(
            f"SELECT {_COLUMNS} FROM memgui_journal WHERE batch_id = ? AND id > ? "
            "ORDER BY id LIMIT ?",
            (batch_id, after_id, limit),
        ).fetchall()
        return whole_states(brain, [journal_rows.row_to_entry(r) for r in rows])


def whole_states(brain: BrainContext, entries: list[JournalEntry]) -> list[JournalEntry]:
    """`entries` with each partial row made whole (`journal_states`); inside the caller's
    hold of the lock, so the rows and the traces are read at one moment."""
    db, bid = brain.db, brain.brain_id

    def later_rows(trace_ids: list[str], after_id: int) -> list[JournalEntry]:
        out: list[JournalEntry] = []
        for part in _chunks(trace_ids):
            found = db.conn.execute(
                f"SELECT {_COLUMNS} FROM memgui_journal WHERE brain_id = ? AND id > ? "
                f"AND trace_id IN ({','.join('?' * len(part))})",
                (bid, after_id, *part),
            )
            out += [journal_rows.row_to_entry(r) for r in found]
        return sorted(out, key=lambda e: e.id)

    def currents(trace_ids: list[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for part in _chunks(trace_ids):
            found = db.conn.execute(
                f"SELECT {store.select_columns(db)} FROM memory_traces WHERE brain_id = ? "
                f"AND id IN ({','.join('?' * len(part))})",
                (bid, *part),
            )
            out.update((row[1], store.row_to_snapshot(row)) for row in found)
        return out

    return journal_states.expand(entries, later_rows, currents)


def _chunks(ids: list[str], size: int = 500) -> list[list[str]]:
    return [ids[i : i + size] for i in range(0, len(ids), size)]


def revert(
    brain: BrainContext,
    batch_id: str,
    actor: str | None,
    entry_ids: Collection[int] | None = None,
) -> Changes:
    """Undo a batch, or with `entry_ids` only those of its journal rows, as a new batch."""
    if not isinstance(batch_id, str) or not batch_id:
        raise InvalidArgument("batch_id", f"must be a batch id (got {batch_id!r})", batch_id)
    wanted = check_entry_ids(entry_ids)
    with brain.db.reading("reading the batch"):  # a damaged file says so, as a write does
        entries = batch_entries(brain, batch_id)
    if not entries:
        raise NotFound(batch_id, "batch")
    if wanted is not None:
        entries = chosen_entries(batch_id, entries, wanted)
    write = brain.write("revert", kind="revert", actor=actor)
    with write as batch:
        for entry in reversed(entries):
            _undo(brain, batch, entry)
    return write.changes


def chosen_entries(
    batch_id: str, entries: list[JournalEntry], wanted: set[int]
) -> list[JournalEntry]:
    """The rows of a batch a partial revert undoes, on either engine: those `wanted`, each
    trace's removal with the rows that went with it."""
    missing = wanted - {e.id for e in entries}
    if missing:
        raise InvalidArgument(
            "entry_ids",
            f"must be journal ids of batch {batch_id} (got {sorted(missing)[:5]})",
            sorted(missing),
        )
    wanted = _with_companions(entries, wanted)
    return [e for e in entries if e.id in wanted]


def check_entry_ids(entry_ids: Collection[int] | None) -> set[int] | None:
    if entry_ids is None:
        return None
    if isinstance(entry_ids, str) or not isinstance(entry_ids, Collection) or not entry_ids:
        raise InvalidArgument(
            "entry_ids", f"must be a non-empty list of journal ids (got {entry_ids!r})", entry_ids
        )
    for i, entry_id in enumerate(entry_ids):
        check_int_range(f"entry_ids[{i}]", entry_id, 1, 2**63 - 1)
    return set(entry_ids)


def _with_companions(entries: list[JournalEntry], wanted: set[int]) -> set[int]:
    """A trace's removal comes with the rows that went with it, written just before it (its
    links, its document chunks' and feedback's references, its graph copy): reverting the
    removal alone puts all of them back."""
    out = set(wanted)
    position = {e.id: i for i, e in enumerate(entries)}
    for entry_id in wanted:
        i = position[entry_id]
        removed = entries[i]
        if removed.after is not None or removed.op in ("link", "unlink", review_rows.OP):
            continue
        if removed.op in journal_rows.ROW_OPS:
            continue
        i -= 1
        while i >= 0 and _went_with(entries[i], removed.trace_id):
            out.add(entries[i].id)
            i -= 1
    return out


def _went_with(entry: JournalEntry, trace_id: str) -> bool:
    row = entry.before or {}
    if entry.op == "unlink":
        return trace_id in (row.get("from_id"), row.get("to_id"))
    if entry.op in ("chunk", "feedback"):
        return row.get("trace_id") == trace_id
    if entry.op == "edge":
        return trace_id in (row.get("source_id"), row.get("target_id"))
    return entry.op == "node" and row.get("id") == trace_id


def _undo(brain: BrainContext, batch: WriteBatch, entry: JournalEntry) -> None:
    if entry.op == review_rows.OP:  # a review mark: the one it replaced comes back
        review_rows.undo(brain.db, brain.brain_id, batch, entry)
        return
    if entry.op in journal_rows.ROW_OPS:  # graph, document, conversation rows of an import
        journal_rows.undo(brain.db, brain.brain_id, batch, entry)
        return
    db, bid = brain.db, brain.brain_id
    if entry.op in ("link", "unlink"):
        _undo_link(brain, batch, entry)
        return
    row = store.fetch_row(db, bid, entry.trace_id)
    current = store.row_to_snapshot(row) if row is not None else None
    action, restored = trace_undo(entry, current, brain.now())
    if action == "delete":
        assert row is not None and current is not None  # the batch added it: still there
        if _has_links(brain, entry.trace_id):  # linked since: removing it would drop them
            raise Conflict.because(
                entry.trace_id, f"trace {entry.trace_id} was linked since the batch"
            )
        store.delete_trace(db, batch, bid, row[0], current, "revert")
    elif action == "insert":
        rowid = store.insert_trace(db, batch, bid, restored, op="revert")
        vectors.sync_rows(db.conn, bid, [rowid])
    else:
        assert row is not None and current is not None
        store.update_trace(db, batch, bid, row[0], current, restored, "revert")


def trace_undo(
    entry: JournalEntry, current: dict[str, Any] | None, now: int
) -> tuple[str, dict[str, Any]]:
    """What undoing one trace row of a batch writes, on any engine: `("delete", current)`,
    `("insert", restored)` or `("update", restored)`; a `Conflict` when the trace is no
    longer as the batch left it."""
    if entry.after is not None:
        # The batch left the trace at `after`: it must still be there with those edits.
        # Only the edits count: a later revert or a recall moves the version or the
        # access bookkeeping without changing what the batch wrote.
        if current is None:
            raise gone(entry.trace_id, entry.after.get("version", 0))
        if _edit_fields(current) != _edit_fields(entry.after):
            raise Conflict(entry.trace_id, entry.after.get("version", 0), current["version"])
    elif current is not None:
        raise Conflict(entry.trace_id, -1, current["version"])
    if entry.before is None:
        assert current is not None  # the batch added it: still there (checked above)
        return "delete", current
    if current is None:
        restored = dict(entry.before, updated_at=now)
        restored["version"] = int(entry.before.get("version", 0)) + 1
        restored["tags"] = list(restored.get("tags", []))
        # The journal keeps no vector: the backfill embeds the trace again.
        restored["embedding_status"] = 0
        return "insert", restored
    after = entry.after or {}  # there, and as the batch left it (checked above)
    restored = dict(entry.before, version=current["version"] + 1, updated_at=now)
    for name in ACCESS_FIELDS:
        # Bookkeeping a recall changed since the batch stays as the recall left it.
        if current.get(name) != after.get(name):
            restored[name] = current.get(name)
    # Recalls since the batch add to the count the batch found (a merge summed it).
    since = int(current["retrieval_count"]) - int(after.get("retrieval_count", 0))
    restored["retrieval_count"] = max(0, int(entry.before.get("retrieval_count", 0)) + since)
    now_decay = (current.get("metadata") or {}).get("decay")
    if now_decay != (after.get("metadata") or {}).get("decay"):
        restored["metadata"] = dict(restored.get("metadata") or {}, decay=now_decay)
        # A recall since kept the batch's pinning in its stability: undo that too.
        restored["metadata"] = decay.repinned(
            restored["metadata"], current.get("category"), restored.get("category")
        )
    return "update", restored


def gone(trace_id: str, expected: int) -> Conflict:
    return Conflict.because(trace_id, f"trace {trace_id} no longer exists", expected, -1)


def _has_links(brain: BrainContext, trace_id: str) -> bool:
    return (
        brain.db.conn.execute(
            "SELECT 1 FROM memory_links WHERE brain_id = ?1 AND (from_id = ?2 OR to_id = ?2) "
            "LIMIT 1",
            (brain.brain_id, trace_id),
        ).fetchone()
        is not None
    )


# What a recall changes without it being an edit.
ACCESS_FIELDS = ("strength", "last_accessed", "retrieval_count")
_NOT_EDITS = frozenset({"version", "updated_at", "embedding_status", *ACCESS_FIELDS})


def same_edits(snap: dict[str, Any], other: dict[str, Any]) -> bool:
    """Whether two snapshots of a trace hold the same edits (recall bookkeeping aside)."""
    return _edit_fields(snap) == _edit_fields(other)


def _edit_fields(snap: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in snap.items() if k not in _NOT_EDITS}
    meta = dict(out.get("metadata") or {})
    meta.pop("decay", None)  # the recall's spaced-repetition state
    out["metadata"] = meta
    out["tags"] = list(out.get("tags") or [])
    out["deleted"] = bool(out.get("deleted"))
    return out


def _undo_link(brain: BrainContext, batch: WriteBatch, entry: JournalEntry) -> None:
    """Remove a link the batch made, or put back one it removed, if nobody touched it since."""
    db, bid = brain.db, brain.brain_id
    link = entry.after if entry.op == "link" else entry.before
    if link is None:
        return
    key = (bid, link["from_id"], link["to_id"], link["kind"])
    name = f"link {link['from_id']} -{link['kind']}-> {link['to_id']}"
    exists = db.conn.execute(
        "SELECT 1 FROM memory_links WHERE brain_id = ? AND from_id = ? AND to_id = ? AND kind = ?",
        key,
    ).fetchone()
    if entry.op == "link" and exists is None:
        raise Conflict.because(link["from_id"], f"{name} no longer exists")
    if entry.op == "unlink":
        if exists is not None:
            raise Conflict.because(link["from_id"], f"{name} exists again")
        for trace_id in (link["from_id"], link["to_id"]):
            if store.fetch_row(db, bid, trace_id) is None:
                raise gone(trace_id, -1)
    if _link_changed_since(brain, batch, entry, link):
        raise Conflict.because(link["from_id"], f"{name} was changed by a later batch")
    if entry.op == "link":
        db.conn.execute(
            "DELETE FROM memory_links WHERE brain_id = ? AND from_id = ? AND to_id = ? "
            "AND kind = ?",
            key,
        )
        journal_rows.journal(db, batch, bid, "unlink", link["from_id"], link, None)
    else:
        db.conn.execute(
            "INSERT INTO memory_links (brain_id, from_id, to_id, kind, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (*key, link["created_at"]),
        )
        journal_rows.journal(db, batch, bid, "link", link["from_id"], None, link)


def _link_changed_since(
    brain: BrainContext, batch: WriteBatch, entry: JournalEntry, link: dict[str, Any]
) -> bool:
    """A later batch linked or unlinked the same pair (a relink may keep the same time)."""
    return (
        brain.db.conn.execute(
            "SELECT 1 FROM memgui_journal WHERE brain_id = ?1 AND trace_id = ?2 AND id > ?3 "
            "AND batch_id NOT IN (?4, ?5) AND op IN ('link', 'unlink') "
            "AND json_extract(coalesce(after, before), '$.to_id') = ?6 "
            "AND json_extract(coalesce(after, before), '$.kind') = ?7 LIMIT 1",
            (
                brain.brain_id,
                link["from_id"],
                entry.id,
                entry.batch_id,
                batch.batch_id,
                link["to_id"],
                link["kind"],
            ),
        ).fetchone()
        is not None
    )
