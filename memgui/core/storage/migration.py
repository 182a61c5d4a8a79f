"""Creating memgui's tables and migrating an older brain, for `Database`.

Schema 1 adds memgui's columns to AgentOS's `memory_traces` and memgui's own tables; schema 2
adds the triggers that catch another program's writes (docs/interop.md); schema 3 makes
`memgui_fts` again with a title column; schema 4 keeps each node's degree in
`memgui_degrees` by triggers (core/storage/degrees.py); schema 5 journals a trace's changed
fields instead of two snapshots (`journal_states`), and rewrites nothing: the rows written
before stay whole snapshots, which every reader takes as they are; schema 6 has `memgui_fts`
merge its segments only when asked; schema 7 indexes knowledge edges by both ends; schema 8
indexes links by their target with every key column, so reading them needs no row; schema 9
adds `memgui_stems`, the full text with one Porter stem per word, filled from the rows by the
migrating write. A brain is migrated by its first write, after an online backup beside it
(docs/architecture.md).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import apsw

from memgui.core.errors import InvalidArgument, MigrationError, ReadOnlyBrain
from memgui.core.storage import degrees, leftovers, schema

if TYPE_CHECKING:
    from memgui.core.storage.db import Database


def create_tables(conn: apsw.Connection) -> None:
    """A new file's tables, at the current schema (inside the caller's transaction)."""
    conn.execute(schema.AGENTOS_TABLES)
    conn.execute(schema.AGENTOS_FTS)
    _apply_1(conn)
    _apply_2(conn)
    _apply_3(conn)
    _apply_4(conn)
    _apply_5(conn)
    _apply_6(conn)
    _apply_7(conn)
    _apply_8(conn)
    _apply_9(conn)


def _apply_1(conn: apsw.Connection) -> None:
    existing = {r[1] for r in conn.execute("PRAGMA table_info(memory_traces)")}
    for name, decl in schema.TRACE_COLUMNS:
        if name not in existing:
            conn.execute(f"ALTER TABLE memory_traces ADD COLUMN {name} {decl}")
    conn.execute(
        "UPDATE memory_traces SET scope_id = coalesce(json_extract(metadata, '$.scopeId'), '')"
        " WHERE scope_id = '' AND json_valid(metadata)"
        " AND json_type(metadata, '$.scopeId') = 'text'"
    )
    conn.execute("UPDATE memory_traces SET embedding_status = (embedding IS NOT NULL), version = 1")
    conn.execute(schema.MEMGUI_TABLES)


def _apply_2(conn: apsw.Connection) -> None:
    # Rows another program added since migration 1 get their scope id column too.
    conn.execute(
        "UPDATE memory_traces SET scope_id = json_extract(metadata, '$.scopeId')"
        " WHERE scope_id = '' AND json_valid(metadata)"
        " AND json_type(metadata, '$.scopeId') = 'text'"
    )
    conn.execute(schema.MEMGUI_TRIGGERS)


def _apply_3(conn: apsw.Connection) -> None:
    # memgui_fts has a title column: made again, filled by `index_all`.
    # (A trigger of schema 2 that marks changed rows is made again in its new form too.)
    conn.execute("DROP TABLE IF EXISTS memgui_fts")
    conn.execute(schema.MEMGUI_FTS)
    conn.execute("DROP TRIGGER IF EXISTS memgui_fts_mark_update")
    conn.execute(schema.MEMGUI_TRIGGER_SQL["memgui_fts_mark_update"])


def _apply_4(conn: apsw.Connection) -> None:
    # Each node's degree, counted once here from the link and edge indexes, then kept by
    # triggers whoever writes (a million traces: seconds, inside the migrating write).
    degrees.install(conn)


def _apply_5(conn: apsw.Connection) -> None:
    """Nothing to rewrite: the journal's older rows (whole snapshots) are read as they are,
    beside the changed-fields rows written from now on. The number is what matters: a memgui
    of an earlier schema opens the brain read-only instead of misreading the new rows. Rewriting the
    old rows would cost a pass over the whole journal for no read that needs it: whole rows
    are read with no more work than the new ones."""
    del conn


def _apply_6(conn: apsw.Connection) -> None:
    # memgui_fts merges in small steps off the writers' path (search/fts_merge.py): FTS5
    # stores these in memgui_fts_config, inside this transaction.
    for statement in schema.MEMGUI_FTS_CONFIG:
        conn.execute(statement)


def _apply_7(conn: apsw.Connection) -> None:
    # Two indexes on knowledge_edges: built once from the rows (400,000 edges: about a
    # second, inside the migrating write), then kept by SQLite whoever writes.
    if conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'knowledge_edges'"
    ).fetchone():
        conn.execute(schema.EDGE_PAIR_INDEXES)


def _apply_8(conn: apsw.Connection) -> None:
    # A covering index of the links by target: built once from the rows (2.5 million links:
    # seconds, inside the migrating write), then kept by SQLite whoever writes.
    if conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memory_links'"
    ).fetchone():
        conn.execute(schema.LINK_TARGET_INDEX_SQL)


def _apply_9(conn: apsw.Connection) -> None:
    # The stemmed index, empty, with memgui_fts's merge settings; `apply` has it filled.
    conn.execute(schema.MEMGUI_STEMS)
    for statement in schema.MEMGUI_STEMS_CONFIG:
        conn.execute(statement)


def agentos_version(conn: apsw.Connection) -> int | None:
    """AgentOS's own `schema_version` of the file (the highest of its brains), or None."""
    if not conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'brain_meta'"
    ).fetchone():
        return None
    row = conn.execute(
        "SELECT max(CAST(value AS INTEGER)) FROM brain_meta WHERE key = 'schema_version'"
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def agentos_too_new(found: int | None) -> str | None:
    """Why a brain of AgentOS schema `found` is not written, or None when it may be: memgui
    knows AgentOS's layout up to `schema.AGENTOS_SCHEMA_VERSION`, and would migrate and
    write a newer one blind."""
    known = int(schema.AGENTOS_SCHEMA_VERSION)
    if found is None or found <= known:
        return None
    return f"has AgentOS schema version {found}, newer than the {known} this memgui knows"


def examine(conn: apsw.Connection, path: Path, readonly: bool) -> tuple[bool, str | None]:
    """What an existing file holds, before anything reads it: (no table at all, why it must
    not be written). No table (0 bytes, as `touch` leaves it, or a database never written)
    is a new brain, made as for a missing file; a database of other tables is not a brain,
    and memgui never makes one in it; a brain of a newer AgentOS schema is read-only."""
    tables = {
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'"
        )
    }
    if not tables:
        if readonly:
            raise InvalidArgument(
                "brain",
                f"is an empty file memgui cannot write: no brain is in it (got '{path}')",
                str(path),
            )
        return True, None
    if "memory_traces" not in tables and "brain_meta" not in tables:
        if "memories" in tables:  # agent-memory's own database, as $AGENT_MEMORY_DB may name
            raise InvalidArgument(
                "brain",
                f"is an agent-memory database, not a memgui brain (got '{path}'); export it "
                "with `agent-memory export --output memories.jsonl`, import that with "
                "`memgui import memories.jsonl`, and use the brain",
                str(path),
            )
        raise InvalidArgument(
            "brain",
            "is a SQLite database but not a brain: it has no memory_traces table, and "
            f"memgui does not write it (got '{path}')",
            str(path),
        )
    return False, agentos_too_new(agentos_version(conn))


@dataclass(frozen=True)
class MigrationPlan:
    """What the first write to an older brain will do to it, said before it does."""

    from_version: int
    to_version: int
    backup: Path  # written beside the file before anything changes
    changes: tuple[str, ...]  # in a person's words

    @property
    def agentos(self) -> bool:
        """A brain AgentOS made (memgui has never written it)."""
        return self.from_version == 0


_TITLES_INDEXED = "memgui's full-text index takes each memory's title, so a search finds it"
_MERGED_APART = "memgui's full-text index tidies itself in the background, never during a write"
_EDGES_INDEXED = (
    "the knowledge graph's edges are indexed by both their ends, so the graph finds the edge "
    "between two nodes at once"
)
_LINKS_COVERED = (
    "links are indexed by the memory they point to with both their ends and kind, so the "
    "graph reads a memory's incoming links from the index alone"
)
_EDITS_JOURNALED = (
    "the journal keeps only what each later edit changed, not the memory twice (history "
    "and undo of earlier edits go on working; an older memgui opens the brain read-only)"
)
_DEGREES_KEPT = (
    "each node's count of links and edges is kept in a table of memgui's, so the graph's "
    "overview ranks a large brain at once"
)
_STEMS_INDEXED = (
    "memgui's full-text index gains a second part holding each English word's stem, so a "
    "search of plain words asks one term per word (the whole text is indexed once, inside "
    "this write: about ten seconds for a million short memories)"
)
_CHANGES_FROM = {
    0: (
        "memgui's columns are added to the memories (version, scope id, category, expiry, "
        "embedding status); nothing AgentOS stores is changed or removed",
        "memgui's tables are added: the journal (history and undo), links, and a full-text "
        "index that finds words in every script and each memory's title",
        "triggers are added that note other programs' writes; AgentOS keeps reading and "
        "writing the brain",
        _DEGREES_KEPT,
        _MERGED_APART,
        _EDGES_INDEXED,
        _LINKS_COVERED,
        _STEMS_INDEXED,
    ),
    1: (
        "triggers are added that note other programs' writes (AgentOS's among them)",
        _TITLES_INDEXED,
        _DEGREES_KEPT,
        _EDITS_JOURNALED,
        _MERGED_APART,
        _EDGES_INDEXED,
        _LINKS_COVERED,
        _STEMS_INDEXED,
    ),
    2: (
        _TITLES_INDEXED,
        _DEGREES_KEPT,
        _EDITS_JOURNALED,
        _MERGED_APART,
        _EDGES_INDEXED,
        _LINKS_COVERED,
        _STEMS_INDEXED,
    ),
    3: (
        _DEGREES_KEPT,
        _EDITS_JOURNALED,
        _MERGED_APART,
        _EDGES_INDEXED,
        _LINKS_COVERED,
        _STEMS_INDEXED,
    ),
    4: (_EDITS_JOURNALED, _MERGED_APART, _EDGES_INDEXED, _LINKS_COVERED, _STEMS_INDEXED),
    5: (_MERGED_APART, _EDGES_INDEXED, _LINKS_COVERED, _STEMS_INDEXED),
    6: (_EDGES_INDEXED, _LINKS_COVERED, _STEMS_INDEXED),
    7: (_LINKS_COVERED, _STEMS_INDEXED),
    8: (_STEMS_INDEXED,),
}


def pending(db: Database) -> MigrationPlan | None:
    """What the first write will migrate, or None (a current brain, or one never written)."""
    if db.readonly or db.is_current or db.schema_version > schema.SCHEMA_VERSION:
        return None
    found = db.schema_version
    return MigrationPlan(
        found,
        schema.SCHEMA_VERSION,
        backup_path(db.path, schema.SCHEMA_VERSION),
        _CHANGES_FROM.get(found, _CHANGES_FROM[1] if found < 3 else _CHANGES_FROM[3]),
    )


def prepare(db: Database) -> Path | None:
    """Before the first write to an older brain: its backup, under a temporary name.

    None when the brain is current. The backup takes its final name (`keep_backup`) only
    when the migrating transaction is about to commit; a write that fails deletes it, so
    a rejected first write leaves nothing behind.
    """
    db.check_not_too_new()
    if db.is_current:
        return None
    if db.readonly:
        raise ReadOnlyBrain(str(db.path), db.readonly_reason)
    target = schema.SCHEMA_VERSION
    backup = backup_path(db.path, target)
    # Hidden, and named as unfinished: a backup cut short by a kill never passes for one;
    # the next migration removes those whose process is gone.
    leftovers.remove_stale_files(db.path.parent, _unfinished_backups(db.path))
    pending = backup.with_name(f".{backup.name}.tmp-{os.getpid()}")
    try:
        _backup_to(db.conn, pending)
    except (OSError, apsw.Error) as exc:
        raise MigrationError(
            f"cannot write the backup {backup.name} before migrating to schema {target}: "
            f"{exc}; nothing was migrated"
        ) from exc
    mode = db.conn.execute("PRAGMA journal_mode").get
    if mode.lower() != "wal":
        db.conn.execute("PRAGMA journal_mode = WAL")
    return pending


def apply(
    db: Database,
    brain_ids: list[str],
    index_all: Callable[[], object],
    index_stems: Callable[[], object],
) -> bool:
    """Inside the first write's transaction: the schema changes, undone if it rolls back.
    `index_all` fills memgui_fts from every row, `index_stems` memgui_stems (the search
    layer's, `fulltext.index_all` and `stems.create_and_fill`).

    False when another process migrated the brain meanwhile (nothing to do)."""
    conn = db.conn
    target = schema.SCHEMA_VERSION
    db.refresh_schema_state()
    found = db.schema_version
    if found >= target:
        return False
    if found < 1:
        if "memory_traces" not in db.tables:
            conn.execute(schema.AGENTOS_TABLES)
        _apply_1(conn)
        # A brain AgentOS made: AgentOS writes it too.
        for bid in brain_ids or ["brain"]:
            conn.execute(
                "INSERT OR IGNORE INTO brain_meta(brain_id, key, value) VALUES (?, ?, '1')",
                (bid, schema.SHARED_KEY),
            )
        db.mark_shared()
    if found < 3:
        _apply_2(conn)
        _apply_3(conn)
    # Schema 6's merge settings before the index is filled: a rebuild merges as they say.
    _apply_6(conn)
    if found < 3:
        # From 0: the index is new. From 1: rows another program wrote meanwhile (no
        # trigger marked them) and rows indexed before text was composed are indexed again.
        # From 2: the index is new (with titles). From 3 on the index stays as it is.
        index_all()
    if found < 4:
        _apply_4(conn)
    if found < 5:
        _apply_5(conn)
    _apply_7(conn)
    _apply_8(conn)
    if found < 9:
        index_stems()
    for bid in brain_ids or ["brain"]:
        conn.execute(
            "INSERT OR REPLACE INTO brain_meta(brain_id, key, value) VALUES (?, ?, ?)",
            (bid, schema.SCHEMA_KEY, str(target)),
        )
    db.refresh_schema_state()
    return True


def keep_backup(db: Database, pending: Path) -> None:
    """Give the backup its final name (atomically: a re-run replaces an earlier one)."""
    backup = backup_path(db.path, schema.SCHEMA_VERSION)
    try:
        os.replace(pending, backup)
    except OSError as exc:
        raise MigrationError(
            f"cannot write the backup {backup.name} before migrating to schema "
            f"{schema.SCHEMA_VERSION}: {exc}; nothing was migrated"
        ) from exc


def _unfinished_backups(path: Path) -> re.Pattern[str]:
    return re.compile(
        rf"\.?{re.escape(path.name)}\.backup-pre-\d+-\d{{8}}\.tmp-(?P<pid>\d+)(?:-journal|-wal|-shm)?"
    )


def backup_path(path: Path, target: int) -> Path:
    stamp = dt.date.today().strftime("%Y%m%d")
    return path.with_name(f"{path.name}.backup-pre-{target}-{stamp}")


def _backup_to(conn: apsw.Connection, dest: Path) -> None:
    dest.unlink(missing_ok=True)
    try:
        out = apsw.Connection(str(dest))
        try:
            # A file deleted if anything fails needs no journal: nothing but it is left.
            out.execute("PRAGMA journal_mode = OFF")
            with out.backup("main", conn, "main") as b:
                while not b.done:
                    b.step(1000)
        finally:
            out.close()
    except BaseException:
        for leftover in (dest, Path(f"{dest}-journal"), Path(f"{dest}-wal")):
            leftover.unlink(missing_ok=True)
        raise
