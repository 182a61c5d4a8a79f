"""What every exporter shares: options, the result, a read snapshot, the selection, files.

An export reads the brain through a connection of its own, inside one read transaction, so
it sees one consistent state of the file however long it runs, and never holds up the
brain's writer (WAL readers do not block writers). What it exports is everything, the
traces a `TraceFilter` matches, or an explicit list of ids; the selection is put in a
temporary table once, and each exporter reads the traces it names with plain SQL.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

import apsw

from memgui.core.errors import InvalidArgument, MemguiError
from memgui.core.model import TraceFilter, check_text
from memgui.core.search import searching
from memgui.core.storage import leftovers, store

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.storage.db import Database

BUSY_TIMEOUT_MS = 10_000
Selection = TraceFilter | Sequence[str] | None


@dataclass(frozen=True)
class ExportOptions:
    """How to export. `selection`: None (everything), a TraceFilter, or a list of trace ids."""

    include_embeddings: bool = False  # JSON only: embeddings as base64 (SQLite always has them)
    include_conversations: bool = True  # JSON only: the conversation and message rows
    selection: Selection = None
    # epoch ms for `exported_at` (or a callable giving them); default: the brain's clock
    clock: int | Callable[[], int] | None = None


@dataclass(frozen=True)
class Refusal:
    """A trace left out of an export: which one, which of its fields, and why."""

    id: str
    field: str
    problem: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "field": self.field, "problem": self.problem}


@dataclass(frozen=True)
class ExportResult:
    exported: int
    refused: tuple[Refusal, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"exported": self.exported, "refused": [r.to_json() for r in self.refused]}


class ExportIncomplete(MemguiError):
    """Some files could not be written (a full disk, a permission); every other one was."""

    def __init__(self, result: ExportResult, failures: int, first: str) -> None:
        self.result = result
        super().__init__(
            f"export incomplete: {failures} file{'s' if failures != 1 else ''} could not be "
            f"written (first: {first}); {result.exported} were"
        )


@dataclass
class Refusals:
    """Collects refusals as an export goes."""

    items: list[Refusal] = field(default_factory=list)

    def add(self, trace_id: str, field_name: str, problem: str) -> None:
        self.items.append(Refusal(trace_id, field_name, problem))

    def result(self, exported: int) -> ExportResult:
        return ExportResult(exported, tuple(self.items))


# --- the read snapshot ---------------------------------------------------------------------


def open_snapshot(path: Path) -> apsw.Connection:
    """A read-only connection on the brain file, inside a read transaction (one snapshot)."""
    uri = path.resolve().as_uri()
    flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    try:
        conn = apsw.Connection(f"{uri}?mode=ro", flags=flags)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
    except apsw.Error:
        # A WAL file on read-only media cannot create its -shm: read it as it is.
        conn = apsw.Connection(f"{uri}?immutable=1", flags=flags)
    conn.setbusytimeout(BUSY_TIMEOUT_MS)
    conn.execute("BEGIN")
    conn.execute("SELECT count(*) FROM sqlite_master").fetchall()  # the snapshot starts here
    return conn


def close_snapshot(conn: apsw.Connection) -> None:
    try:
        if not conn.getautocommit():
            conn.execute("ROLLBACK")
    finally:
        conn.close()


def tables(conn: apsw.Connection, schema: str = "main") -> set[str]:
    return {
        r[0] for r in conn.execute(f"SELECT name FROM {schema}.sqlite_master WHERE type = 'table'")
    }


def columns(conn: apsw.Connection, table: str, schema: str = "main") -> list[str]:
    return [r[1] for r in conn.execute(f'PRAGMA {schema}.table_info("{table}")')]


@dataclass
class _Columns:
    """What `store.select_columns` and `searching.filter_sql` read of a Database."""

    trace_columns: set[str]


def trace_select(conn: apsw.Connection, schema: str = "main") -> str:
    """The column list `store.row_to_snapshot` reads, for this file's memory_traces."""
    known = _Columns(set(columns(conn, "memory_traces", schema)))
    return store.select_columns(cast("Database", known))


# --- the selection -------------------------------------------------------------------------


@dataclass(frozen=True)
class Selected:
    """The traces an export covers, as a WHERE clause over `memory_traces` columns.

    `limited`: a selection was given, so rows that belong to a trace left out (its memory-
    graph node, edges naming it, links, journal rows) are left out too; `temp.export_out`
    then holds the ids of the brain's traces outside the selection.
    """

    where: str
    params: tuple[Any, ...]
    limited: bool
    missing: tuple[str, ...] = ()


def select_traces(
    conn: apsw.Connection, brain_id: str, selection: Selection, schema: str = "main"
) -> Selected:
    if selection is None:
        return Selected("brain_id = ?", (brain_id,), False)
    traces = f"{schema}.memory_traces"
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS export_sel (id TEXT PRIMARY KEY)")
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS export_out (id TEXT PRIMARY KEY)")
    missing: tuple[str, ...] = ()
    if isinstance(selection, TraceFilter):
        known = _Columns(set(columns(conn, "memory_traces", schema)))
        where, params = searching.filter_sql(
            cast("Database", known), brain_id, selection.validated(), alias=""
        )
        conn.execute(
            f"INSERT OR IGNORE INTO temp.export_sel SELECT id FROM {traces} WHERE {where}", params
        )
    else:
        ids = _check_ids(selection)
        conn.executemany(
            "INSERT OR IGNORE INTO temp.export_sel (id) VALUES (?)", ((i,) for i in ids)
        )
        missing = tuple(
            r[0]
            for r in conn.execute(
                f"SELECT id FROM temp.export_sel WHERE id NOT IN "
                f"(SELECT id FROM {traces} WHERE brain_id = ?)",
                (brain_id,),
            )
        )
    conn.execute(
        f"INSERT OR IGNORE INTO temp.export_out SELECT id FROM {traces} "
        "WHERE brain_id = ? AND id NOT IN (SELECT id FROM temp.export_sel)",
        (brain_id,),
    )
    return Selected(
        "brain_id = ? AND id IN (SELECT id FROM temp.export_sel)", (brain_id,), True, missing
    )


def _check_ids(selection: object) -> list[str]:
    if isinstance(selection, str | bytes) or not isinstance(selection, Sequence):
        raise InvalidArgument(
            "selection", f"must be a TraceFilter or a list of trace ids (got {selection!r})"
        )
    for i, value in enumerate(selection):
        if not isinstance(value, str):
            raise InvalidArgument(f"selection[{i}]", f"must be a trace id (got {value!r})", value)
        check_text(f"selection[{i}]", value)
    return list(selection)


def refuse_missing(refusals: Refusals, selected: Selected) -> None:
    for trace_id in selected.missing:
        refusals.add(trace_id, "id", "no such trace in this brain")


def export_clock(brain: Brain, options: ExportOptions) -> int:
    """`exported_at`: the options' clock (epoch ms, or a callable giving them), else now."""
    clock = options.clock
    value = brain.now() if clock is None else clock() if callable(clock) else clock
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 2**63:
        raise InvalidArgument("clock", f"must be epoch milliseconds (got {value!r})", value)
    return int(value)


# --- files ---------------------------------------------------------------------------------


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return Path(".")


def check_folder(folder: Path, dest: Path, *, made: bool) -> None:
    """`dest` is written in `folder`: no file in the way, and the folder can be written.

    `made`: the export makes `folder` (and its missing parents) when it is not there. Checked
    before anything is written, so a destination below a file or in a folder without write
    permission is a clear InvalidArgument naming the path, and nothing is left behind.
    """
    there = _nearest_existing(folder)
    if not there.is_dir():
        raise InvalidArgument(
            "path", f"is below '{there}', which is not a folder (got '{dest}')", str(dest)
        )
    if there != folder and not made:
        raise InvalidArgument(
            "path", f"names a folder that does not exist (got '{folder}')", str(dest)
        )
    if not os.access(there, os.W_OK | os.X_OK):
        raise InvalidArgument(
            "path",
            f"cannot be written: no permission to write in '{there}' (got '{dest}')",
            str(dest),
        )


def unwritable(dest: Path, error: OSError) -> InvalidArgument:
    """An OSError making the destination (a race past `check_folder`, a read-only disk)."""
    reason = error.strerror or str(error)
    return InvalidArgument("path", f"cannot be written: {reason} (got '{dest}')", str(dest))


def check_file_destination(dest: Path) -> None:
    if dest.is_dir():
        raise InvalidArgument("path", f"is a folder, not a file (got '{dest}')", str(dest))
    if os.path.lexists(dest) and not stat.S_ISREG(os.lstat(dest).st_mode):
        # The export replaces its file whole: a device, a pipe or a link would be replaced
        # by a plain file (`/dev/null` itself, as root), never written through.
        raise InvalidArgument(
            "path",
            f"is not a regular file (a device, pipe, socket or link; got '{dest}')",
            str(dest),
        )
    check_folder(dest.parent, dest, made=False)


@contextmanager
def private_atomic_file(dest: Path) -> Iterator[BinaryIO]:
    """Write `dest` through `dest.export-tmp-<pid>`: mode 0600 from creation, synced, then
    renamed over `dest` in one step; an interrupted export leaves no partial `dest`."""
    check_file_destination(dest)
    # What an export to this file that was killed left (only its process could remove it).
    leftovers.remove_stale_files(
        dest.parent, re.compile(re.escape(dest.name) + r"\.export-tmp-(?P<pid>\d+)")
    )
    tmp = dest.with_name(f"{dest.name}.export-tmp-{os.getpid()}")
    tmp.unlink(missing_ok=True)  # left by an earlier run of this process id
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(tmp, flags | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as error:
        raise unwritable(dest, error) from None
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def link_into_place(tmp: Path, dest: Path) -> bool:
    """Give the finished file `tmp` the name `dest` unless something is there (then False):
    a hard link never replaces what appeared there meanwhile; a file system without hard
    links gets a rename after a last look."""
    try:
        os.link(tmp, dest)
    except FileExistsError:
        return False
    except OSError:
        if os.path.lexists(dest):
            return False
        os.rename(tmp, dest)
    return True
