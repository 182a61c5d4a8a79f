"""Readers of AgentOS brains: the JSON export (`export.json`) and the SQLite brain file.

Each yields `Progress` and one `ImportRecord` per row: traces (live before soft-deleted, so
a live record wins over its forgotten twin), knowledge nodes and edges, documents, chunks,
images, conversations and messages. A source that cannot be read at all gives one `error`
record of kind `unread`; a file holding several brains raises `BrainIdRequired` unless the
caller names one. The source file is never modified: SQLite is opened read-only.
"""

from __future__ import annotations

import gc
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import apsw
import orjson

from memgui.core.errors import InvalidArgument
from memgui.core.io.readers import agentos_rows as rows
from memgui.core.io.readers.text_utils import option, unexpected
from memgui.core.io.records import (
    CHUNK,
    CONVERSATION,
    DOCUMENT,
    EDGE,
    IMAGE,
    MESSAGE,
    NEW,
    NODE,
    TRACE,
    UNREAD,
    ImportRecord,
)
from memgui.core.progress import Progress
from memgui.core.search.vectors import MODEL_KEY

Event = Progress | ImportRecord

# JSON key -> brain table, in the order parents come before children.
SECTIONS = (
    ("traces", "memory_traces"),
    ("nodes", "knowledge_nodes"),
    ("edges", "knowledge_edges"),
    ("documents", "documents"),
    ("chunks", "document_chunks"),
    ("images", "document_images"),
    ("conversations", "conversations"),
    ("messages", "messages"),
)
PROGRESS_EVERY = 250
KINDS = {
    "traces": TRACE,
    "nodes": NODE,
    "edges": EDGE,
    "documents": DOCUMENT,
    "chunks": CHUNK,
    "images": IMAGE,
    "conversations": CONVERSATION,
    "messages": MESSAGE,
}


def file_error(path: Path | str, reason: str, problem_field: str | None = None) -> ImportRecord:
    record = ImportRecord(source=str(path), kind=UNREAD).fail(reason)
    record.problem_field = problem_field
    return record


def source_file(path: str | Path) -> Path:
    source = Path(path)
    if not source.exists():
        raise InvalidArgument("path", f"does not exist (got '{source}')", str(source))
    if source.is_dir():
        raise InvalidArgument("path", f"must be a file, not a folder (got '{source}')", str(source))
    if not source.is_file():
        raise InvalidArgument(
            "path", f"must be a regular file, not a device or pipe (got '{source}')", str(source)
        )
    return source


def load_json(data: bytes) -> Any:
    """orjson with the collector paused: a big export parses ~5x faster."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return orjson.loads(data)
    finally:
        if was_enabled:
            gc.enable()


class _RowConverter:
    """Converts rows section by section, remembering the ids children may name."""

    def __init__(self, embedding_model: Any = None) -> None:
        self.ids: dict[str, set[str]] = {key: set() for key, _ in SECTIONS}
        self.embedding_model = embedding_model if isinstance(embedding_model, str) else None

    def convert(self, key: str, row: dict[str, Any], source: str) -> ImportRecord:
        ids = self.ids
        converters: dict[str, Callable[[], ImportRecord]] = {
            "traces": lambda: rows.trace_record(row, source),
            "nodes": lambda: rows.node_record(row, source),
            "edges": lambda: rows.edge_record(row, source, ids["nodes"]),
            "documents": lambda: rows.document_record(row, source),
            "chunks": lambda: rows.chunk_record(row, source, ids["documents"], ids["traces"]),
            "images": lambda: rows.image_record(row, source, ids["documents"], ids["chunks"]),
            "conversations": lambda: rows.conversation_record(row, source),
            "messages": lambda: rows.message_record(row, source, ids["conversations"]),
        }
        try:
            record = converters[key]()
        except Exception as exc:  # a row no rule foresaw is lost alone, never the import
            return unexpected(ImportRecord(source=source, kind=KINDS[key]), exc)
        if record.verdict == NEW and record.fields.get("id") is not None:
            ids[key].add(record.fields["id"])
        if key == "traces" and record.fields.get("embedding") is not None:
            record.embedding_model = self.embedding_model
        return record


# --- JSON ------------------------------------------------------------------------------


def read_agentos_json(
    path: str | Path, *, options: Any = None, brain_id: str | None = None
) -> Iterator[Event]:
    """Read an AgentOS JSON export (`export.json`, `export-embeddings.json`): the brain
    `brain_id` (else `options.brain_id`) of it, or its only one."""
    brain_id = brain_id if brain_id is not None else option(options, "brain_id")
    source = source_file(path)
    yield Progress(0, None, f"reading {source.name}")
    try:
        payload = load_json(source.read_bytes())
    except orjson.JSONDecodeError as exc:
        yield file_error(source, f"is not valid JSON: {exc}")
        return
    except OSError as exc:
        yield file_error(source, f"cannot be read: {exc.strerror or exc}")
        return
    if not isinstance(payload, dict) or not isinstance(payload.get("traces"), list):
        yield file_error(source, 'missing top-level "traces" array', "traces")
        return

    sections: dict[str, list[Any]] = {}
    for key, _table in SECTIONS:
        value = payload.get(key)
        if value is None:
            value = []
        if not isinstance(value, list):
            yield file_error(f"{source}#{key}", f'"{key}" must be an array', key)
            value = []
        sections[key] = value
    held = (
        row["brain_id"]
        for section in sections.values()
        for row in section
        if isinstance(row, dict) and isinstance(row.get("brain_id"), str)
    )
    chosen = rows.choose_brain(str(source), held, brain_id)

    total = sum(len(section) for section in sections.values())
    meta = payload.get("meta")
    converter = _RowConverter(meta.get("embedding_model") if isinstance(meta, dict) else None)
    done = 0
    yield Progress(0, total, f"reading {source.name}")
    for key, _table in SECTIONS:
        for index, row in _ordered(key, sections[key]):
            done += 1
            if done % PROGRESS_EVERY == 0:
                yield Progress(done, total, f"{key}: {done} of {total} rows")
            where = f"{source}#{key}[{index}]"
            if not isinstance(row, dict):
                yield file_error(where, f"{key}[{index}] is not an object")
                continue
            if chosen is not None and row.get("brain_id", chosen) != chosen:
                continue
            yield converter.convert(key, row, where)
    yield Progress(total, total, f"read {total} rows from {source.name}")


def _ordered(key: str, section: list[Any]) -> Iterator[tuple[int, Any]]:
    """Live traces first, then forgotten ones; other sections in file order."""
    if key != "traces":
        yield from enumerate(section)
        return
    deleted = [i for i, row in enumerate(section) if isinstance(row, dict) and row.get("deleted")]
    gone = set(deleted)
    yield from ((i, row) for i, row in enumerate(section) if i not in gone)
    yield from ((i, section[i]) for i in deleted)


# --- SQLite ----------------------------------------------------------------------------


def open_read_only(path: Path) -> apsw.Connection:
    """Open a brain file without ever writing next to it.

    `immutable=1` creates no -shm/-wal file; it is used unless the brain has a WAL file
    (it is open elsewhere, or was not checkpointed), whose pages only `mode=ro` reads.
    """
    base = "file:" + urllib.parse.quote(str(path.resolve()), safe="/")
    flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    if path.with_name(path.name + "-wal").exists():
        try:
            return apsw.Connection(base + "?mode=ro", flags=flags)
        except apsw.CantOpenError:
            pass  # a read-only folder without -shm: read the main file as it is
    return apsw.Connection(base + "?immutable=1", flags=flags)


def read_agentos_sqlite(
    path: str | Path, *, options: Any = None, brain_id: str | None = None
) -> Iterator[Event]:
    """Read an AgentOS brain file (`brain.sqlite`, a `.db`, a SQLite export): the brain
    `brain_id` (else `options.brain_id`) of it, or its only one.

    A damaged file is the source's problem, never the brain's: what SQLite cannot read
    (`CorruptError`, a schema that is not UTF-8) is an `error` record of kind `unread`
    naming it, and the rows read before it stay in the plan; a row whose text is not UTF-8
    is an `error` of its own and the rows after it are read.
    """
    brain_id = brain_id if brain_id is not None else option(options, "brain_id")
    source = source_file(path)
    yield Progress(0, None, f"opening {source.name}")
    try:
        connection = open_read_only(source)
    except apsw.Error as exc:
        yield file_error(source, f"cannot be opened as SQLite: {exc}")
        return
    state = {"rows": 0}
    try:
        yield from _read_brain(connection, source, brain_id, state)
    except (apsw.Error, UnicodeDecodeError) as exc:
        read = state["rows"]
        before = {0: "", 1: "; the row before it was read"}
        rest = before.get(read, f"; the {read} rows before it were read")
        yield file_error(source, f"{_damage(exc)}{rest}")
    finally:
        connection.close()


def _damage(exc: Exception) -> str:
    """Why SQLite could not read the file, as the person reads it."""
    if isinstance(exc, apsw.NotADBError):
        return f"is not a SQLite database: {exc}"
    if isinstance(exc, UnicodeDecodeError):
        return f"is damaged: its schema is not UTF-8 text ({exc.reason} at byte {exc.start})"
    if isinstance(exc, apsw.CorruptError):
        return f"is damaged: {exc}"
    return f"cannot be read as SQLite: {str(exc) or type(exc).__name__}"


def _read_brain(
    connection: apsw.Connection, source: Path, brain_id: str | None, state: dict[str, int]
) -> Iterator[Event]:
    tables = _columns_by_table(connection)
    if "memory_traces" not in tables:
        yield file_error(source, "holds no memory_traces table: it is not an AgentOS brain")
        return

    present = [(key, table) for key, table in SECTIONS if table in tables]
    chosen = rows.choose_brain(str(source), _brain_ids(connection, tables), brain_id)
    plans = []
    for key, table in present:
        where: str = ""
        params: tuple[str, ...] = ()
        if chosen is not None and "brain_id" in tables[table]:
            where, params = " WHERE brain_id = ?", (chosen,)
        order = " ORDER BY deleted, rowid" if "deleted" in tables[table] else ""
        plans.append((key, table, where, params, order))
    total = sum(
        connection.execute(f'SELECT count(*) FROM "{table}"{where}', params).get
        for _key, table, where, params, _order in plans
    )

    converter = _RowConverter(_pinned_model(connection, tables, chosen))
    done = 0
    yield Progress(0, total, f"reading {source.name}")
    for key, table, where, params, order in plans:
        cursor = connection.execute(f'SELECT * FROM "{table}"{where}{order}', params)
        names: list[str] | None = None
        for position, values in enumerate(_rows(cursor)):
            done += 1
            if done % PROGRESS_EVERY == 0:
                yield Progress(done, total, f"{table}: {done} of {total} rows")
            if isinstance(values, UnicodeDecodeError):
                reason = f"holds text that is not UTF-8 ({values.reason} at byte {values.start})"
                yield file_error(f"{source}#{table}[{position}]", reason)
                continue
            if names is None:  # asked while a row is there (none: no description to ask)
                names = [column[0] for column in cursor.get_description()]
            row = dict(zip(names, values, strict=True))
            yield converter.convert(key, row, f"{source}#{table}/{row.get('id')}")
            state["rows"] = done
    yield Progress(total, total, f"read {total} rows from {source.name}")


def _rows(cursor: apsw.Cursor) -> Iterator[tuple[Any, ...] | UnicodeDecodeError]:
    """A cursor's rows; a row whose text is not UTF-8 as its error (the next rows still read)."""
    while True:
        try:
            yield next(cursor)
        except StopIteration:
            return
        except UnicodeDecodeError as exc:
            yield exc


def _pinned_model(
    connection: apsw.Connection, tables: dict[str, set[str]], brain_id: str | None
) -> str | None:
    """The embedding model the source brain names for its vectors, if it names one."""
    if not {"brain_id", "key", "value"} <= tables.get("brain_meta", set()):
        return None
    row = connection.execute(
        "SELECT value FROM brain_meta WHERE key = ?1 AND (?2 IS NULL OR brain_id = ?2)",
        (MODEL_KEY, brain_id),
    ).fetchone()
    return row[0] if row and isinstance(row[0], str) and row[0] else None


def _columns_by_table(connection: apsw.Connection) -> dict[str, set[str]]:
    # Virtual tables are left out: the reader needs none of them, and one whose module is
    # not loaded here (sqlite-vec's vector index) cannot even list its columns.
    names = [
        name
        for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND coalesce(sql, '') NOT LIKE 'CREATE VIRTUAL TABLE%'"
        )
    ]
    return {
        name: {info[1] for info in connection.execute(f'PRAGMA table_info("{name}")')}
        for name in names
        if '"' not in name
    }


def _brain_ids(connection: apsw.Connection, tables: dict[str, set[str]]) -> list[str]:
    """Brains that hold rows; `brain_meta` alone (an open by another name) does not count."""
    found: set[str] = set()
    for _key, table in SECTIONS:
        if table in tables and "brain_id" in tables[table]:
            found.update(
                value for (value,) in connection.execute(f'SELECT DISTINCT brain_id FROM "{table}"')
            )
    if not found and "brain_id" in tables.get("brain_meta", set()):
        found.update(v for (v,) in connection.execute("SELECT DISTINCT brain_id FROM brain_meta"))
    return sorted(str(v) for v in found if v is not None)
