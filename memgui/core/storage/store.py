"""Row-level reads and writes of traces, each keeping both full-text indexes in step.

Every write goes through here so that the journal, the AgentOS FTS index, memgui's own
index and the vector index never drift from the rows (no triggers: AgentOS keeps its index
by hand, and a trigger would enter every row twice).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import reprlib
from typing import Any, TypeVar

import orjson

from memgui.core import decay
from memgui.core.changes import TRACE
from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.model import Trace, check_id, now_ms, trace_from_fields
from memgui.core.search import fulltext, vectors
from memgui.core.storage import journal_rows, schema
from memgui.core.storage.db import Database, WriteBatch
from memgui.core.storage.journal_rows import journal
from memgui.core.storage.journal_states import changed_fields
from memgui.core.storage.json_text import dumps

# A trace's whole snapshot (everything but the embedding BLOB): what `JournalEntry` states
# read back hold, and what the journal keeps of a trace removed (`journal_states`).
SNAPSHOT_FIELDS = (
    "id",
    "type",
    "scope",
    "scope_id",
    "content",
    "strength",
    "created_at",
    "last_accessed",
    "retrieval_count",
    "tags",
    "emotions",
    "metadata",
    "deleted",
    "expires_at",
    "category",
    "version",
    "updated_at",
    "embedding_status",
)

_CURRENT_COLUMNS = (
    "rowid, id, type, scope, scope_id, content, strength, created_at, last_accessed, "
    "retrieval_count, tags, emotions, metadata, deleted, expires_at, category, version, "
    "updated_at, embedding_status"
)
# What an agent's search result needs of a row, each column in its `select_columns` place
# up to the last of them (the others NULL): a row read ~a fifth quicker than all 19.
_BRIEF_FIELDS = ("id", "type", "scope", "content", "strength", "tags")
BRIEF_COLUMNS = "rowid, " + ", ".join(
    name if name in _BRIEF_FIELDS else "NULL"
    for name in SNAPSHOT_FIELDS[: SNAPSHOT_FIELDS.index(_BRIEF_FIELDS[-1]) + 1]
)
# An AgentOS brain not yet migrated: memgui's columns derived from what it has. Its traces
# read as version 1, the version the migration gives them, so a version read now is the one
# to pass back to a compare-and-set.
_LEGACY_COLUMNS = (
    "rowid, id, type, scope, "
    "coalesce(CASE WHEN json_valid(metadata) AND json_type(metadata, '$.scopeId') = 'text' "
    "THEN json_extract(metadata, '$.scopeId') END, '') AS scope_id, "
    "content, strength, created_at, last_accessed, retrieval_count, tags, emotions, metadata, "
    "deleted, NULL AS expires_at, NULL AS category, 1 AS version, NULL AS updated_at, "
    "(embedding IS NOT NULL) AS embedding_status"
)


def select_columns(db: Database) -> str:
    return _CURRENT_COLUMNS if "version" in db.trace_columns else _LEGACY_COLUMNS


class _NotJson(TypeError):
    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.value = value


def _refuse(value: Any) -> Any:
    raise _NotJson(value)


def check_json(field_name: str, value: Any) -> None:
    """Refuse a value `dumps` cannot store, before a write starts (a set, an object, a lone
    surrogate that SQLite cannot bind as UTF-8), naming the field and the bad part."""
    try:
        orjson.dumps(value)  # the quick path: what orjson writes is stored as it is
        return
    except TypeError:
        pass
    try:
        json.dumps(value, ensure_ascii=False, default=_refuse).encode()
    except _NotJson as exc:
        problem = f"must hold only JSON values (got {reprlib.repr(exc.value)})"
    except UnicodeEncodeError:
        problem = f"must be valid Unicode text (got {reprlib.repr(value)})"
    except (TypeError, ValueError, RecursionError) as exc:  # odd keys, a cycle, too deep
        problem = f"must hold only JSON values (got {reprlib.repr(value)}: {exc})"
    else:
        return
    raise InvalidArgument(field_name, problem, value)


# orjson reads an integer past 64 bits as a float; such text is read by json, which keeps it.
_LONG_NUMBER = re.compile(r"\d{19}")


def _loads(text: Any, default: Any) -> Any:
    """A JSON column as json reads it (orjson, 5x quicker, for the text it reads the same)."""
    if not isinstance(text, str):
        return default
    try:
        value = orjson.loads(text) if _LONG_NUMBER.search(text) is None else json.loads(text)
    except ValueError:  # orjson refuses lone surrogates, NaN and 1e400, which json reads
        try:
            value = json.loads(text)
        except ValueError:
            return default
    return value if isinstance(value, type(default)) else default


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()


def row_tags(text: Any) -> list[str]:
    """A row's `tags` column as its snapshot holds it (a list of strings)."""
    if type(text) is str and len(text) <= _TAGS_KEPT_CHARS:
        return list(_short_tags(text))
    return [t for t in _loads(text, []) if isinstance(t, str)]


# The same few tag lists come back row after row (a page, a search's results): a short one
# is read once (6 of a 10-row search's 9.5 µs of results were their tags).
_TAGS_KEPT_CHARS = 200


@functools.lru_cache(maxsize=2048)
def _short_tags(text: str) -> tuple[str, ...]:
    return tuple(t for t in _loads(text, []) if isinstance(t, str))


def row_strength(value: Any) -> float:
    """A row's stored `strength` as its snapshot holds it."""
    if type(value) is float and value - value == 0.0:  # finite: the common case, first
        return value
    return _float(value, 1.0)


def row_to_snapshot(row: tuple[Any, ...]) -> dict[str, Any]:
    snap = {
        "id": row[1],
        "type": row[2],
        "scope": row[3],
        "scope_id": row[4] or "",
        "content": row[5],
        # Numbers another program wrote are read leniently: one odd row never stops a list.
        "strength": row_strength(row[6]),
        "created_at": _int(row[7]),
        "last_accessed": _int_or_none(row[8]),
        "retrieval_count": _int(row[9]),
        "tags": row_tags(row[10]),
        "emotions": _loads(row[11], {}),
        "metadata": _loads(row[12], {}),
        "deleted": bool(row[13]),
        "expires_at": row[14],
        "category": row[15],
        "version": _int(row[16]),
        "updated_at": row[17],
        "embedding_status": _int(row[18]),
    }
    return snap


# What a column's number is kept within when read: SQLite's integers stop at 2**63 - 1, and
# a REAL beyond (another program's 1e20) must still fit when memgui writes it back + 1.
_INT_BOUND = 2**62


def _int(value: Any) -> int:
    if type(value) is int and -_INT_BOUND <= value <= _INT_BOUND:
        return value  # the common case, first
    number = _float(value, 0.0)
    return int(max(-_INT_BOUND, min(_INT_BOUND, number)))


def _int_or_none(value: Any) -> int | None:
    return None if _float(value, None) is None else _int(value)


_Default = TypeVar("_Default", float, None)


def _float(value: Any, default: _Default) -> float | _Default:
    """A finite number stored in a column (REAL, INTEGER or numeric text), else `default`."""
    if isinstance(value, bool) or value is None:
        return default
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return default
    return number if math.isfinite(number) else default


def snapshot_to_trace(snap: dict[str, Any], rowid: int, now: int) -> Trace:
    strength = decay.current_strength(
        snap["strength"],
        snap["created_at"],
        snap["last_accessed"],
        snap["metadata"],
        snap["category"],
        now,
    )
    return trace_from_fields(
        {
            "id": snap["id"],
            "type": snap["type"],
            "scope": snap["scope"],
            "scope_id": snap["scope_id"],
            "content": snap["content"],
            "tags": tuple(snap["tags"]),
            "strength": strength,
            "stored_strength": snap["strength"],
            "created_at": snap["created_at"],
            "last_accessed": snap["last_accessed"],
            "retrieval_count": snap["retrieval_count"],
            "expires_at": snap["expires_at"],
            "deleted": snap["deleted"],
            "version": snap["version"],
            "category": snap["category"],
            "updated_at": snap["updated_at"],
            "embedding_status": snap["embedding_status"],
            "metadata": snap["metadata"],
            "emotions": snap["emotions"],
            "rowid": rowid,
        }
    )


def mark_brain(db: Database, brain_id: str, now: int) -> None:
    """A brain id's meta rows (AgentOS's schema version, its creation, memgui's schema), if
    it has none yet: written on its first write, never on open."""
    db.conn.execute(
        "INSERT OR IGNORE INTO brain_meta(brain_id, key, value) VALUES (?, ?, ?), (?, ?, ?),"
        " (?, ?, ?)",
        (
            brain_id,
            "schema_version",
            schema.AGENTOS_SCHEMA_VERSION,
            brain_id,
            "created_at",
            str(now),
            brain_id,
            schema.SCHEMA_KEY,
            str(schema.SCHEMA_VERSION),
        ),
    )


def fetch_row(db: Database, brain_id: str, trace_id: str) -> tuple[Any, ...] | None:
    return db.conn.execute(
        f"SELECT {select_columns(db)} FROM memory_traces WHERE brain_id = ? AND id = ?",
        (brain_id, trace_id),
    ).fetchone()


def require_row(db: Database, brain_id: str, trace_id: str) -> tuple[Any, ...]:
    """A trace's row; `NotFound` when there is none (an empty id is a mistake, not an id)."""
    check_id("id", trace_id)
    row = fetch_row(db, brain_id, trace_id)
    if row is None:
        raise NotFound(trace_id)
    return row


def row_to_trace(row: tuple[Any, ...], now: int) -> Trace:
    return snapshot_to_trace(row_to_snapshot(row), row[0], now)


# --- index maintenance ---------------------------------------------------------------------


# --- writes --------------------------------------------------------------------------------


def prepared_metadata(snap: dict[str, Any]) -> dict[str, Any]:
    meta = dict(snap["metadata"])
    # AgentOS reads the scope id and dedups by content hash from the metadata.
    if snap["scope_id"]:
        meta["scopeId"] = snap["scope_id"]
    else:
        meta.pop("scopeId", None)
    meta["content_hash"] = content_hash(snap["content"])
    return meta


_INSERT_COLUMNS = (
    "rowid, brain_id, id, type, scope, scope_id, content, embedding, strength, created_at, "
    "last_accessed, retrieval_count, tags, emotions, metadata, deleted, expires_at, category, "
    "version, updated_at, embedding_status"
)
INSERT_SQL = (
    f"INSERT INTO memory_traces ({_INSERT_COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def row_values(
    rowid: int | None, brain_id: str, snap: dict[str, Any], embedding: bytes | None
) -> tuple[Any, ...]:
    """The INSERT parameters of a new trace (its metadata prepared for AgentOS)."""
    snap["metadata"] = prepared_metadata(snap)
    return (
        rowid,
        brain_id,
        snap["id"],
        snap["type"],
        snap["scope"],
        snap["scope_id"],
        snap["content"],
        embedding,
        snap["strength"],
        snap["created_at"],
        snap["last_accessed"],
        snap["retrieval_count"],
        dumps(snap["tags"]),
        dumps(snap["emotions"]),
        dumps(snap["metadata"]),
        int(snap["deleted"]),
        snap["expires_at"],
        snap["category"],
        snap["version"],
        snap["updated_at"],
        1 if embedding is not None else snap["embedding_status"],
    )


def insert_trace(
    db: Database,
    batch: WriteBatch,
    brain_id: str,
    snap: dict[str, Any],
    op: str = "add",
    embedding: bytes | None = None,
) -> int:
    conn = db.conn
    conn.execute(INSERT_SQL, row_values(None, brain_id, snap, embedding))
    rowid = conn.last_insert_rowid()
    fulltext.mark_new(db, rowid)
    if embedding is not None:
        vectors.sync_rows(conn, brain_id, [rowid])
    # `journal(…, None, journal_states.added(snap))`, its JSON and event written directly.
    conn.execute(
        journal_rows.INSERT_SQL,
        (brain_id, now_ms(), batch.actor, batch.batch_id, op, snap["id"], None,
         ADDED % snap["version"]),
    )  # fmt: skip
    batch.events.append((TRACE, snap["id"], False, True))
    return rowid


def added_trace(snap: dict[str, Any], rowid: int) -> Trace:
    """The `Trace` of a snapshot just added (`created_at` now, never recalled): its strength
    has not decayed yet, so it is the stored one (`current_strength` at elapsed 0)."""
    fields = {name: snap[name] for name in _TRACE_FIELDS}
    fields["tags"] = tuple(snap["tags"])
    fields["stored_strength"] = snap["strength"]
    fields["rowid"] = rowid
    return trace_from_fields(fields)


# `journal_states.added` as JSON text: the journal keeps a new trace's version, not a copy.
ADDED = '{"version":%d}'


# The Trace fields a snapshot holds as they are (`snapshot_to_trace`).
_TRACE_FIELDS = (
    "id", "type", "scope", "scope_id", "content", "strength", "created_at", "last_accessed",
    "retrieval_count", "expires_at", "deleted", "version", "category", "updated_at",
    "embedding_status", "metadata", "emotions",
)  # fmt: skip


def prepare_update(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """`after` made ready to be written over `before` (its metadata prepared for AgentOS; a
    new text's vector pending, its import hash gone); whether the text changed."""
    after["metadata"] = prepared_metadata(after)
    text_changed = after["content"] != before["content"]
    if text_changed:
        after["embedding_status"] = 0
        after["metadata"].pop("import_hash", None)
    return text_changed


def update_trace(
    db: Database,
    batch: WriteBatch,
    brain_id: str,
    rowid: int,
    before: dict[str, Any],
    after: dict[str, Any],
    op: str,
    journaled: bool = True,
) -> None:
    """Write `after` over the row; reindex and drop a stale vector when the text changed."""
    text_changed = prepare_update(before, after)
    if after["deleted"] and all(after[k] == before[k] for k in _KEPT_BY_TRASHING):
        _trash_trace(db, batch, brain_id, rowid, before, after, op, journaled, True)
        return
    if text_changed or after["tags"] != before["tags"]:
        fulltext.mark_changed(db, rowid)
    db.conn.execute(
        "UPDATE memory_traces SET type = ?, scope = ?, scope_id = ?, content = ?, strength = ?, "
        "created_at = ?, last_accessed = ?, retrieval_count = ?, tags = ?, emotions = ?, "
        "metadata = ?, deleted = ?, expires_at = ?, category = ?, version = ?, updated_at = ?, "
        "embedding_status = ?" + (", embedding = NULL" if text_changed else "") + " "
        "WHERE rowid = ?",
        (
            after["type"],
            after["scope"],
            after["scope_id"],
            after["content"],
            after["strength"],
            after["created_at"],
            after["last_accessed"],
            after["retrieval_count"],
            dumps(after["tags"]),
            dumps(after["emotions"]),
            dumps(after["metadata"]),
            int(after["deleted"]),
            after["expires_at"],
            after["category"],
            after["version"],
            after["updated_at"],
            after["embedding_status"],
            rowid,
        ),
    )
    if text_changed or after["deleted"] != before["deleted"]:
        vectors.sync_rows(db.conn, brain_id, [rowid])
    if journaled:
        journal(db, batch, brain_id, op, after["id"], *changed_fields(before, after))


_SET_BY_TRASHING = ("deleted", "version", "updated_at")
# What a forget leaves as it was: only `deleted`, `version`, `updated_at` (and the metadata
# as every write prepares it) are written.
_KEPT_BY_TRASHING = (
    "type", "scope", "scope_id", "content", "strength", "created_at", "last_accessed",
    "retrieval_count", "tags", "emotions", "expires_at", "category", "embedding_status",
)  # fmt: skip


def forget_row(
    db: Database, batch: WriteBatch, brain_id: str, row: tuple[Any, ...], op: str, now: int
) -> dict[str, Any]:
    """`update_trace` for a live trace's row (as `fetch_row` read it) going to the trash,
    without comparing the fields a forget leaves alone; returns the trace's new snapshot.
    A row whose stored `embedding_status` is 0 holds no vector in any index or cache (every
    write that clears a vector logs it), so its forget writes no vector-cache log row."""
    before = row_to_snapshot(row)
    after = dict(before, deleted=True, version=before["version"] + 1, updated_at=now)
    after["metadata"] = prepared_metadata(after)
    _trash_trace(db, batch, brain_id, row[0], before, after, op, True, row[18] != 0)
    return after


def _trash_trace(
    db: Database,
    batch: WriteBatch,
    brain_id: str,
    rowid: int,
    before: dict[str, Any],
    after: dict[str, Any],
    op: str,
    journaled: bool,
    may_have_vector: bool,
) -> None:
    """`update_trace` for a forget: three or four columns written (the metadata only when
    preparing it changed it), the text's indexes untouched (a search filters out the
    forgotten) and the vector dropped without reading the row; the journal row holds the
    changed fields alone."""
    # The fields a forget changes, known without comparing the other fourteen.
    old = {name: before[name] for name in _SET_BY_TRASHING}
    new = {name: after[name] for name in _SET_BY_TRASHING}
    if after["metadata"] != before["metadata"]:
        old["metadata"], new["metadata"] = before["metadata"], after["metadata"]
    if "metadata" in new:
        db.conn.execute(
            "UPDATE memory_traces SET deleted = 1, version = ?, updated_at = ?, metadata = ? "
            "WHERE rowid = ?",
            (after["version"], after["updated_at"], dumps(after["metadata"]), rowid),
        )
    else:
        db.conn.execute(
            "UPDATE memory_traces SET deleted = 1, version = ?, updated_at = ? WHERE rowid = ?",
            (after["version"], after["updated_at"], rowid),
        )
    if may_have_vector and not before["deleted"]:
        vectors.drop_rows(db.conn, brain_id, [rowid])
    if journaled:
        journal(db, batch, brain_id, op, after["id"], old, new)


def delete_trace(
    db: Database, batch: WriteBatch, brain_id: str, rowid: int, before: dict[str, Any], op: str
) -> None:
    """Hard delete: the row, its index entries, its vector and its links, journaled."""
    links = list(
        db.conn.execute(
            "SELECT from_id, to_id, kind, created_at FROM memory_links "
            "WHERE brain_id = ? AND (from_id = ? OR to_id = ?)",
            (brain_id, before["id"], before["id"]),
        )
    )
    for from_id, to_id, kind, created_at in links:
        link = {"from_id": from_id, "to_id": to_id, "kind": kind, "created_at": created_at}
        journal(db, batch, brain_id, "unlink", from_id, link, None)
    db.conn.execute(
        "DELETE FROM memory_links WHERE brain_id = ? AND (from_id = ? OR to_id = ?)",
        (brain_id, before["id"], before["id"]),
    )
    journal_rows.let_go_of_trace(db, batch, brain_id, before["id"])
    fulltext.mark_changed(db, rowid)
    db.conn.execute("DELETE FROM memory_traces WHERE rowid = ?", (rowid,))
    vectors.sync_rows(db.conn, brain_id, [rowid])
    journal(db, batch, brain_id, op, before["id"], before, None)
