"""The SQLite export: a new, complete brain file holding this brain's rows only.

The file gets the source's schema statement by statement, in the source's order (AgentOS's
`VACUUM INTO` moves every index after the tables), and then, table by table, the rows of
this brain (`brain_id`), rowids kept, in one read snapshot of the source: traces with their
embeddings and deleted flag, the knowledge graph, documents, chunks, images, conversations,
messages, feedback, the consolidation log, the archive, and memgui's links and journal.
Derived data is rebuilt rather than copied: both full-text indexes, and the sqlite-vec index
when sqlite-vec loads (else memgui builds it on first use); derived tables (the rows waiting
for the full-text indexes, the vector log) are made empty. The export is a brain like any
other: memgui and AgentOS open it, write it and search it. memgui's own triggers are made
from its own code; triggers memgui did not make (another program's, a hostile file's) are
left out, so they never run on the export's writes.

It is written to a private (0600) temporary file beside the destination and linked into
place only when complete, so the path never holds a partial brain, and an existing path is
refused, never replaced. The result is in WAL mode: it is a brain that memgui and AgentOS
open as they open any brain, often from several processes at once, and memgui never changes
a file's journal mode when it only opens it. It is closed cleanly, so it is one file with no
`-wal`/`-shm` beside it, ready to copy.

A selection limits the traces; rows that belong to a trace left out (its memory-graph node,
edges naming it, its links, journal and feedback rows, its archive) are left out too, and a
chunk's pointer to such a trace is cleared.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from memgui.core.errors import InvalidArgument
from memgui.core.io.exporters.export_common import (
    ExportOptions,
    ExportResult,
    Refusals,
    Selected,
    check_folder,
    columns,
    link_into_place,
    refuse_missing,
    select_traces,
    unwritable,
)
from memgui.core.io.exporters.export_sqlite_pages import clean_copy, copy_pages
from memgui.core.progress import Job, Progress
from memgui.core.search import fulltext, vectors
from memgui.core.storage import degrees, leftovers, schema

if TYPE_CHECKING:
    from memgui.core.brain import Brain

log = logging.getLogger(__name__)

CHUNK_ROWS = 5000
# Derived tables: rebuilt in the new file, never copied.
DERIVED = frozenset({"memgui_fts_pending", vectors.LOG_TABLE, *degrees.TABLE_NAMES})
REBUILT_VIRTUAL = frozenset({"memory_traces_fts", "memgui_fts", "memgui_stems", vectors.VEC_TABLE})
# Columns naming a trace: with a selection, a row naming a trace left out is left out.
TRACE_REFERENCES = {
    "knowledge_nodes": ("id",),
    "knowledge_edges": ("source_id", "target_id"),
    "memory_links": ("from_id", "to_id"),
    "memgui_journal": ("trace_id",),
    "retrieval_feedback": ("trace_id",),
    "archived_traces": ("trace_id",),
    "archive_access_log": ("trace_id",),
}


# Tables of a brain that are never a virtual table's shadow, whatever their names begin with
# (`memgui_fts_pending` begins as `memgui_fts`'s shadow tables do).
OWN_TABLES = frozenset({"memgui_fts_pending", vectors.LOG_TABLE})


@dataclass
class _Schema:
    statements: list[tuple[str, str, str]]  # (type, name, sql) in source order, no trigger
    ordinary: list[str]  # tables whose rows are copied
    virtual: set[str]
    memgui_triggers: bool  # the source has memgui's triggers: the export gets them too
    left_out: list[str]  # triggers memgui did not make


def _read_schema(conn: apsw.Connection) -> _Schema:
    rows = list(
        conn.execute(
            "SELECT type, name, sql FROM src.sqlite_master WHERE sql IS NOT NULL ORDER BY rowid"
        )
    )
    virtual = {
        name
        for kind, name, sql in rows
        if kind == "table" and sql.upper().startswith("CREATE VIRTUAL")
    }
    # SQLite knows the shadow tables of the modules loaded here (fts5); the name rule covers
    # a module that is not (sqlite-vec's, when it cannot load).
    shadow = {r[1] for r in conn.execute("PRAGMA src.table_list") if r[2] == "shadow"}
    statements, ordinary, left_out = [], [], []
    memgui_triggers = False
    for kind, name, sql in rows:
        if name.startswith("sqlite_"):
            continue
        if kind == "trigger":
            if schema.is_memgui_trigger(name):
                memgui_triggers = True  # made from memgui's own text, whatever the file says
            else:
                left_out.append(name)
            continue
        if kind == "table" and _is_shadow(name, virtual, shadow):
            continue  # a virtual table's shadow table: made by the virtual table itself
        statements.append((kind, name, sql))
        if kind == "table" and name not in virtual:
            ordinary.append(name)
    return _Schema(statements, ordinary, virtual, memgui_triggers, left_out)


def _is_shadow(name: str, virtual: set[str], shadow: set[str]) -> bool:
    if name in virtual or name in OWN_TABLES:
        return False
    return name in shadow or any(name.startswith(v + "_") for v in virtual)


def _create(out: apsw.Connection, layout: _Schema, kinds: set[str]) -> bool:
    """Run the source's statements of these kinds; False when the vec table was left out."""
    vec_made = False
    for kind, name, sql in layout.statements:
        if kind not in kinds:
            continue
        if name == vectors.VEC_TABLE:
            if not vectors.vec_available(out):
                continue  # derived: memgui builds it again when it is missing
            vec_made = True
        out.execute(sql)
    return vec_made


@dataclass(frozen=True)
class _Table:
    name: str
    names: list[str]
    has_rowid: bool  # False: a WITHOUT ROWID table
    rowid_alias: bool  # an INTEGER PRIMARY KEY column is the rowid: copying it keeps it


def _table(out: apsw.Connection, name: str) -> _Table:
    info = list(out.execute(f'PRAGMA src.table_info("{name}")'))
    pks = [row for row in info if row[5]]
    alias = len(pks) == 1 and str(pks[0][2]).upper() == "INTEGER"
    listed = list(out.execute(f'PRAGMA src.table_list("{name}")'))
    without_rowid = bool(listed and listed[0][4])
    return _Table(name, [row[1] for row in info], not without_rowid, alias)


def _where(table: _Table, selected: Selected) -> tuple[str, tuple[Any, ...]]:
    if table.name == "memory_traces":
        return selected.where, selected.params
    where = "brain_id = ?"
    if selected.limited:
        for col in TRACE_REFERENCES.get(table.name, ()):
            where += f' AND "{col}" NOT IN (SELECT id FROM temp.export_out)'
    return where, selected.params[:1]


def _copy(out: apsw.Connection, table: _Table, selected: Selected, brains: int) -> Job[int]:
    """Copy one table's rows for this brain, in chunks; returns the count."""
    if "brain_id" not in table.names and brains != 1:
        return 0  # rows that name no brain cannot be told apart in a file of several
    if "brain_id" in table.names:
        where, params = _where(table, selected)
    else:
        where, params = "1", ()
    target = ", ".join(f'"{n}"' for n in table.names)
    source = target
    if table.name == "document_chunks" and selected.limited and "trace_id" in table.names:
        source = source.replace(
            '"trace_id"',
            "CASE WHEN trace_id IN (SELECT id FROM temp.export_out) THEN NULL ELSE trace_id END",
        )
    quoted = f'"{table.name}"'
    if not table.has_rowid:
        out.execute(
            f"INSERT INTO main.{quoted} ({target}) SELECT {source} FROM src.{quoted} WHERE {where}",
            params,
        )
        return out.changes()
    # Rowids are kept: the full-text and vector indexes key traces by rowid.
    into, take = (target, source) if table.rowid_alias else (f"rowid, {target}", f"rowid, {source}")
    copied, last = 0, None
    while True:
        after = "" if last is None else " AND rowid > ?"
        # Each chunk walks the rowids from where the last one ended: an index on `brain_id`
        # would make every chunk read the whole table again (and sort it).
        out.execute(
            f"INSERT INTO main.{quoted} ({into}) SELECT {take} FROM src.{quoted} NOT INDEXED "
            f"WHERE ({where}){after} ORDER BY rowid LIMIT {CHUNK_ROWS}",
            params if last is None else (*params, last),
        )
        changed = out.changes()
        if not changed:
            return copied
        copied += changed
        last = out.execute(f"SELECT max(rowid) FROM main.{quoted}").get
        yield Progress(copied, None, f"{table.name}: {copied} rows")


def _brain_count(out: apsw.Connection, ordinary: list[str]) -> int:
    found: set[str] = set()
    for name in ordinary:
        if "brain_id" in columns(out, name, "src"):
            found.update(r[0] for r in out.execute(f'SELECT DISTINCT brain_id FROM src."{name}"'))
    return len(found)


def _rebuild(out: apsw.Connection, brain_id: str, names: set[str], vec_made: bool) -> Job[None]:
    if "memory_traces_fts" in names:
        yield Progress(0, None, "rebuilding the AgentOS full-text index")
        out.execute("INSERT INTO memory_traces_fts(memory_traces_fts) VALUES ('rebuild')")
    if "memgui_fts" in names:
        yield Progress(0, None, "rebuilding memgui's full-text index")
        fulltext.rebuild_memgui_index(out)
    if vec_made:
        yield from vectors.reindex(out, brain_id)
    if "memgui_degrees" in names:  # counted for what was copied, then kept by its triggers
        yield Progress(0, None, "counting each node's links and edges")
        degrees.install(out)


def export_sqlite(brain: Brain, dest: str | Path, options: ExportOptions) -> Job[ExportResult]:
    """Write this brain into a new SQLite file at `dest` (see the module docstring)."""
    dest = Path(dest)
    # What an export to this file that was killed left (only its process could remove it).
    leftovers.remove_stale_files(
        dest.parent,
        re.compile(rf"\.{re.escape(dest.name)}\.export-tmp-(?P<pid>\d+)(?:-wal|-shm|-journal)?"),
    )
    if os.path.lexists(dest):
        raise InvalidArgument(
            "path",
            f"already exists; a SQLite export never replaces a file (got '{dest}')",
            str(dest),
        )
    check_folder(dest.parent, dest, made=False)
    tmp = dest.with_name(f".{dest.name}.export-tmp-{os.getpid()}")
    _remove(tmp)
    try:  # private from the start
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as error:
        raise unwritable(dest, error) from None
    refusals = Refusals()
    try:
        out = apsw.Connection(str(tmp), flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_URI)
        try:
            traces = yield from _fill(out, brain, options, refusals)
            out.execute("PRAGMA journal_mode = WAL")
        finally:
            out.close()
        _link_into_place(tmp, dest)
    finally:
        _remove(tmp)
    yield Progress(traces, traces, f"exported {traces} traces to {dest.name}")
    return refusals.result(traces)


def _fill(
    out: apsw.Connection, brain: Brain, options: ExportOptions, refusals: Refusals
) -> Job[int]:
    # A temporary file that is deleted on any failure: no journal, no syncs while filling.
    out.execute("PRAGMA journal_mode = OFF")
    out.execute("PRAGMA synchronous = OFF")
    out.execute("PRAGMA foreign_keys = OFF")  # rows are copied as they are
    if options.selection is None:
        yield Progress(0, None, "copying the brain file")
        if copy_pages(out, brain.path, brain.brain_id):
            return (yield from _clean_page_copy(out, brain))
    out.execute("ATTACH DATABASE ? AS src", (brain.path.resolve().as_uri() + "?mode=ro",))
    out.setbusytimeout(10_000)
    out.execute("BEGIN")
    try:
        source = _read_schema(out)
        if "memory_traces" not in source.ordinary:
            raise InvalidArgument("brain", f"{brain.path} holds no memory_traces table")
        selected = select_traces(out, brain.brain_id, options.selection, schema="src")
        refuse_missing(refusals, selected)
        vec_made = _create(out, source, {"table", "index", "view"})
        brains = _brain_count(out, source.ordinary)
        traces = 0
        for name in source.ordinary:
            if name in DERIVED:
                continue
            yield Progress(traces, None, f"copying {name}")
            copied = yield from _copy(out, _table(out, name), selected, brains)
            if name == "memory_traces":
                traces = copied
        if source.memgui_triggers:  # after the rows, so no trigger fires on the copy
            out.execute(schema.MEMGUI_TRIGGERS)
        if source.left_out:
            log.warning(
                "%s: left out of the export: triggers memgui did not make (%s)",
                brain.path,
                ", ".join(source.left_out),
            )
        names = {name for _, name, _ in source.statements}
        yield from _rebuild(out, brain.brain_id, names, vec_made)
        out.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(apsw.Error):
            out.execute("ROLLBACK")
        raise
    out.execute("DETACH DATABASE src")
    return traces


def _clean_page_copy(out: apsw.Connection, brain: Brain) -> Job[int]:
    out.execute("BEGIN")
    try:
        names = clean_copy(out, brain.path, DERIVED)
        yield from _rebuild(out, brain.brain_id, names, vectors.VEC_TABLE in names)
        traces = out.execute(
            "SELECT count(*) FROM memory_traces WHERE brain_id = ?", (brain.brain_id,)
        ).get
        out.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(apsw.Error):
            out.execute("ROLLBACK")
        raise
    return int(traces)


def _link_into_place(tmp: Path, dest: Path) -> None:
    """Give the finished file its name without ever replacing what appeared there meanwhile."""
    if not link_into_place(tmp, dest):
        raise InvalidArgument(
            "path", f"already exists; a SQLite export never replaces a file (got '{dest}')"
        )


def _remove(tmp: Path) -> None:
    for leftover in (tmp, *(tmp.with_name(tmp.name + s) for s in ("-wal", "-shm", "-journal"))):
        leftover.unlink(missing_ok=True)
