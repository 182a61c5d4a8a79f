"""Opening a brain file: pragmas, read-only browsing, migrations with backups, the file's
identity; its write transactions are `transaction.WriteTransaction`.

Opening and reading never write: an older brain (a real AgentOS brain is one) is read as it
is and migrated by the first write, after an online backup beside the file. One writer per
process (an RLock around `BEGIN IMMEDIATE … COMMIT`); other processes wait on SQLite's busy
timeout, never see "database is locked".
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw

from memgui.core.errors import (
    BrainFileLost,
    DamagedBrain,
    InvalidArgument,
    SchemaTooNew,
    StorageError,
)
from memgui.core.search import bm25, vectors
from memgui.core.storage import busy_wait, commit_count, degrees, migration, schema
from memgui.core.storage.checkpoint import Checkpointer, file_identity
from memgui.core.storage.transaction import (
    BUSY_TIMEOUT_MS,
    DAMAGED,
    WriteBatch,
    WriteTransaction,
    begin_immediate,
)

__all__ = ["DAMAGED", "Database", "WriteBatch", "WriteTransaction"]

log = logging.getLogger(__name__)

# How long a write waits for another connection's write lock before it says the brain is
# busy (an import of a million rows holds it for ~40 s here).
WRITE_WAIT_S = 200.0
BOOKKEEPING_WAIT_S = 2.0
# Each connection's page cache (KiB): what better-sqlite3, AgentOS's driver, builds SQLite
# with. SQLite's own 2,000 held less than a 5k-trace brain's index and rows, and a search
# read pages again from the OS that the one before had read (2-5 % of a search at 20k).
CACHE_KIB = 16_000


def _writable(path: Path) -> bool:
    """Whether memgui may write the file: permitted, and not marked read-only.

    root may write any file, so a file without write bits (a fixture, a file a person
    protected) counts as read-only even when the OS would allow the write.
    """
    mode = path.stat().st_mode
    return bool(mode & 0o222) and os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


SHARED_CHECK_S = 1.0  # how stale "no other program writes this brain" may be
FILE_CHECK_S = 0.05  # how stale "the file at the path is the one open" may be


def _check_brain_path(path: Path, missing: bool) -> None:
    """A folder, or a path below a file, is the caller's mistake: said so, naming it."""
    if path.is_dir():
        raise InvalidArgument("brain", f"is a folder, not a brain file (got '{path}')", str(path))
    if missing:
        there = next((p for p in path.parents if os.path.lexists(p)), None)
        if there is not None and not there.is_dir():
            raise InvalidArgument(
                "brain", f"is below '{there}', which is not a folder (got '{path}')", str(path)
            )


class Database:
    """One apsw connection on one brain file, with the schema state it found."""

    def __init__(self, path: str | os.PathLike[str], create: bool = True) -> None:
        """`create=False` (a second connection on a file already open) refuses a missing
        file instead of making an empty brain where it was."""
        # Absolute: a later chdir must not point the identity check or the checkpoint thread
        # at another file (symlinks are kept as named).
        self.path = Path(os.path.abspath(path))
        self.lock = threading.RLock()
        self.write_wait_s = WRITE_WAIT_S
        self._batch: WriteBatch | None = None
        self._depth = 0
        self.pending_marks = 0  # rows marked for the full-text indexes since the last flush
        # Writes and searches never flush: another connection indexes (`fulltext.flush_step`).
        self.index_later = False
        self.meta_written: set[str] = set()  # brain ids whose first write here marked them
        self.created = not self.path.exists()
        self.readonly = False
        self.readonly_reason: str | None = None  # why, when not the file mode (ReadOnlyBrain)
        self.lost: str | None = None  # why the file can no longer be written, once known
        self._shared = False  # another program writes this brain too (once seen, for good)
        self._shared_checked = -1.0  # when `is_shared` last read the flag (monotonic s)
        self._file_checked = -1.0  # when `check_file` last compared the file (monotonic s)
        if self.created and not create:
            raise BrainFileLost(str(self.path), "does not exist any more (deleted or moved)")
        _check_brain_path(self.path, self.created)
        # An immutable connection's view of the file (see `conn`); None for any other.
        self._frozen: tuple[object, ...] | None = None
        if self.created:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = apsw.Connection(str(self.path))
        elif _writable(self.path):
            self._conn = apsw.Connection(str(self.path), flags=apsw.SQLITE_OPEN_READWRITE)
        else:
            self.readonly = True
            self._conn = self._open_readonly()
        self._identity = file_identity(self.path)
        try:
            self._configure()
            if not self.created:
                self._examine()
        except BaseException as exc:
            self._conn.close()
            if isinstance(exc, DAMAGED):
                raise DamagedBrain(str(self.path), exc) from exc
            raise
        # Checkpoints run on a thread of their own (see `checkpoint`), not in the commit.
        self.checkpointer: Checkpointer | None = None
        if not self.readonly:
            self.checkpointer = Checkpointer(self.path, self.lock, self._identity)
            self.conn.set_wal_hook(self.checkpointer.on_commit)
        if self.created:
            self._create_schema()
        self.refresh_schema_state()
        self._load_vector_extension()
        # Until closed: the WAL index is read through a descriptor kept open while then.
        commit_count.brain_opened(self._identity)
        self._counted = True

    def _configure(self) -> None:
        # Keyword search's ranking function (search/bm25.py); FTS5's bm25 when not built.
        bm25.load(self._conn)
        # With it comes a busy handler that looks for the lock every millisecond.
        busy_wait.set_wait(self._conn, BUSY_TIMEOUT_MS)
        self._conn.execute("PRAGMA foreign_keys = ON")
        # In WAL, NORMAL syncs at checkpoints, not at every commit: a crash never corrupts
        # the file or loses a committed transaction; only a power cut may lose the last few.
        self._conn.execute("PRAGMA synchronous = NORMAL")
        # A statement that fires a trigger keeps a statement journal; in a file it cost each
        # add ~8 µs more than in memory (and sorts and TEMP indexes are quicker there too).
        self._conn.execute("PRAGMA temp_store = MEMORY")
        self._conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        # A statement is planned once, not for each value bound to it: SQLite otherwise
        # compiles a statement again at every run whose `LIMIT ?` it read as a constant, and
        # FTS5's lookup of a term's page in each segment at every term of every search, a
        # quarter to half of a keyword ranking (docs/performance.md, "Statements planned
        # once").
        self._conn.config(apsw.SQLITE_DBCONFIG_ENABLE_QPSG, 1)

    def _examine(self) -> None:
        """What an existing file holds, before anything reads it (`migration.examine`)."""
        empty, too_new = migration.examine(self._conn, self.path, self.readonly)
        if empty:
            self.created = True  # made as for a missing file
        elif too_new is not None:  # read, never written: as a file memgui may not write
            log.warning("%s %s: opened read-only", self.path, too_new)
            self.readonly_reason = too_new
            if not self.readonly:
                self.readonly = True
                self._conn.close()
                self._conn = self._open_readonly()
                self._configure()

    @property
    def conn(self) -> apsw.Connection:
        """The connection. One opened `immutable` (a file memgui may not write, while no
        writer was at work) reads as if the file never changed, and would read torn pages
        once a writer starts: it is opened again as soon as the file or its WAL changes."""
        if self._frozen is not None and self._file_state() != self._frozen:
            with self.lock:
                if self._frozen is not None and self._file_state() != self._frozen:
                    self._frozen = None
                    # The old connection is not closed: a cursor may still be reading it.
                    self._conn = self._open_readonly()
                    self._configure()
                    self._load_vector_extension()
        return self._conn

    def _file_state(self) -> tuple[object, ...]:
        try:
            stat = os.stat(self.path)
        except OSError:
            return ()
        wal = os.path.exists(f"{self.path}-wal")
        return stat.st_ino, stat.st_size, stat.st_mtime_ns, wal

    @contextmanager
    def reading(self, operation: str) -> Iterator[None]:
        """Around a read that another program's damage can reach (live refresh): SQLite's
        errors become `BrainFileLost` (a damaged file) or `StorageError`."""
        try:
            yield
        except DAMAGED as exc:
            raise self.damaged() from exc
        except apsw.Error as exc:
            log.warning("%s: %s", operation, exc)
            raise StorageError(operation) from exc

    def is_shared(self) -> bool:
        """Whether another program (an AgentOS agent) writes this brain too: a trigger saw
        one of its writes, or it was an AgentOS brain when memgui migrated it. Once true it
        stays true; until then the flag is read at most every `SHARED_CHECK_S` (a query per
        write cost ~10 µs of a ~250 µs add)."""
        if not self._shared:
            now = time.monotonic()
            if now - self._shared_checked >= SHARED_CHECK_S:
                self._shared_checked = now
                self._shared = "brain_meta" in self.tables and (
                    self.conn.execute(
                        "SELECT 1 FROM brain_meta WHERE key = ? LIMIT 1", (schema.SHARED_KEY,)
                    ).fetchone()
                    is not None
                )
        return self._shared

    def mark_shared(self) -> None:
        self._shared = True

    def damaged(self) -> BrainFileLost:
        """SQLite found the file damaged: it is lost for writing (the error to raise)."""
        self.lost = "is damaged: it is not a readable brain any more"
        return BrainFileLost(str(self.path), self.lost)

    def check_file(self, force: bool = False) -> str | None:
        """Why the file this connection writes is no longer the file at its path (deleted,
        moved away, replaced, damaged), or None; unless `force`d, compared again only after
        `FILE_CHECK_S`. SQLite would go on writing into a deleted
        or renamed-over file, where nobody would ever read it again."""
        if self.lost is None:
            now = time.monotonic()
            if not force and now - self._file_checked < FILE_CHECK_S:
                return None  # compared a moment ago: a stat() per add cost ~2 % of it
            self._file_checked = now
            try:
                identity = file_identity(self.path)
            except OSError as exc:
                self.lost = f"cannot be reached any more ({exc.strerror})"
            else:
                if identity is None:
                    self.lost = "was deleted or moved after it was opened"
                elif identity != self._identity:
                    self.lost = "was replaced by another file after it was opened"
        return self.lost

    def _open_readonly(self) -> apsw.Connection:
        flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
        uri = self.path.resolve().as_uri()
        if not Path(f"{self.path}-wal").exists():
            # No writer is active: immutable reads create no -wal/-shm beside the file.
            self._frozen = self._file_state()
            return apsw.Connection(f"{uri}?immutable=1", flags=flags)
        try:
            conn = apsw.Connection(f"{uri}?mode=ro", flags=flags)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
            return conn
        except apsw.Error:
            # A WAL file on read-only media cannot create its -shm: read it as immutable.
            self._frozen = self._file_state()
            return apsw.Connection(f"{uri}?immutable=1", flags=flags)

    def _load_vector_extension(self) -> None:
        # Loading an extension writes nothing; without it a brain that has a vector index
        # could not edit or purge a trace (the index is a sqlite-vec virtual table). A file
        # without one loads it when a vector is first indexed (`vectors.ensure_index`), so
        # opening it never pays for the module's import (~0.1 s, numpy with it).
        if vectors.VEC_TABLE not in self.tables:
            return
        try:
            vectors.load_sqlite_vec(self.conn)
        except vectors.VectorIndexUnavailable:
            log.warning("sqlite-vec is not available: search by meaning is off")

    # --- schema state ----------------------------------------------------------------------

    def refresh_schema_state(self) -> None:
        self._schema_cookie = self._read_schema_cookie()
        tables: set[str] = set()
        triggers: set[str] = set()
        indexes: set[str] = set()
        foreign: list[str] = []
        kinds = {"table": tables, "trigger": triggers, "index": indexes}
        for name, kind, table in self.conn.execute(
            "SELECT name, type, tbl_name FROM sqlite_master "
            "WHERE type IN ('table', 'trigger', 'index')"
        ):
            kinds[kind].add(name)
            if kind == "trigger" and not schema.is_memgui_trigger(name):
                foreign.append(f"{name} on {table}")
        self._triggers = triggers
        self._indexes = indexes
        self.foreign_triggers = sorted(foreign)
        cols: set[str] = set()
        if "memory_traces" in tables:
            cols = {r[1] for r in self.conn.execute("PRAGMA table_info(memory_traces)")}
        self._tables, self._trace_columns = tables, cols
        self._schema_version = self._read_schema_version(tables, cols)
        self._current = self._schema_version >= schema.SCHEMA_VERSION

    def _read_schema_cookie(self) -> int:
        return int(self.conn.execute("PRAGMA schema_version").get)

    def _fresh(self) -> None:
        # An older brain may be migrated by another process while this connection has it
        # open: until this one sees the current schema, every look at the schema state
        # compares SQLite's schema cookie (a header read) and reads the state again when it
        # moved, so versions, categories, the journal and live refresh appear at once.
        if not self._current and self._read_schema_cookie() != self._schema_cookie:
            self.refresh_schema_state()

    @property
    def tables(self) -> set[str]:
        self._fresh()
        return self._tables

    @property
    def triggers(self) -> set[str]:
        self._fresh()
        return self._triggers

    @property
    def indexes(self) -> set[str]:
        self._fresh()
        return self._indexes

    @property
    def trace_columns(self) -> set[str]:
        self._fresh()
        return self._trace_columns

    @property
    def schema_version(self) -> int:
        self._fresh()
        return self._schema_version

    @property
    def has_agentos_fts(self) -> bool:
        return "memory_traces_fts" in self.tables

    def _read_schema_version(self, tables: set[str], trace_columns: set[str]) -> int:
        if "brain_meta" not in tables:
            return 0
        row = self.conn.execute(
            "SELECT max(CAST(value AS INTEGER)) FROM brain_meta WHERE key = ?",
            (schema.SCHEMA_KEY,),
        ).fetchone()
        if row and row[0] is not None:
            return int(row[0])
        # A file memgui created has its tables before any brain has meta rows.
        if "memgui_journal" not in tables or "version" not in trace_columns:
            return 0
        if not set(schema.SCHEMA_2_TRIGGER_NAMES) <= self._triggers:
            return 1
        # Schemas 4 and 5 differ in the journal rows memgui writes, and a file without meta
        # rows has had none written: with the degrees' table, it is of the newer; 6 set
        # memgui_fts's merge settings, 7 the edge pair indexes, 8 the links' target cover, 9 the
        # stemmed index.
        if "memgui_degrees" in tables:
            if schema.STEMS_TABLE in tables:
                return 9
            if schema.LINK_TARGET_INDEX in self._indexes:
                return 8
            if schema.EDGE_SOURCE_TARGET_INDEX in self._indexes:
                return 7
            return 6 if self._fts_merges_when_asked() else 5
        return 3 if self._fts_has_title() else 2

    def _fts_has_title(self) -> bool:
        """Whether memgui_fts is schema 3's (a title column): a file memgui made, not yet
        written, has no meta row to say its schema."""
        row = self.conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'memgui_fts'"
        ).fetchone()
        return row is not None and "title" in (row[0] or "")

    @property
    def identity(self) -> tuple[int, int] | None:
        """(device, inode) of the file this connection opened."""
        return self._identity

    def _fts_merges_when_asked(self) -> bool:
        """Whether memgui_fts has schema 6's automerge 0 (a file memgui made, not yet
        written, has no meta row to say its schema)."""
        try:
            row = self.conn.execute(
                "SELECT v FROM memgui_fts_config WHERE k = 'automerge'"
            ).fetchone()
        except apsw.SQLError:
            return False
        return row is not None and row[0] == schema.MEMGUI_FTS_AUTOMERGE

    def ensure_triggers(self) -> None:
        """Inside a write transaction of a current brain: make the triggers a brain of this
        schema made by an earlier memgui lacks or has in an earlier form (they only mark
        rows; no data changes)."""
        if not self.is_current:
            return
        stored = dict(
            self.conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")
        )
        changed = recount = False
        for name in schema.MEMGUI_TRIGGER_NAMES:
            if name in stored and schema.same_trigger(stored[name] or "", name):
                continue
            if name in stored:
                self.conn.execute(f"DROP TRIGGER {name}")
            self.conn.execute(schema.MEMGUI_TRIGGER_SQL[name])
            changed = True
            if name in degrees.TRIGGER_NAMES:
                recount = True  # writes went by while it was missing: the counts may be off
        if recount:
            degrees.install(self.conn)
        if changed:
            self.refresh_schema_state()

    @property
    def is_current(self) -> bool:
        self._fresh()
        return self._current

    def check_not_too_new(self) -> None:
        if self.schema_version > schema.SCHEMA_VERSION:
            raise SchemaTooNew(str(self.path), self.schema_version, schema.SCHEMA_VERSION)

    def brain_ids(self) -> list[str]:
        """The brain ids in the file, one index lookup per id (no scan of a large table)."""
        ids: set[str] = set()
        for table in ("brain_meta", "memory_traces", "knowledge_nodes"):
            if table not in self.tables:
                continue
            # Every table's primary key starts with brain_id: skip from one id to the next.
            row = self.conn.execute(f"SELECT min(brain_id) FROM {table}").fetchone()
            while row is not None and row[0] is not None:
                ids.add(row[0])
                row = self.conn.execute(
                    f"SELECT brain_id FROM {table} WHERE brain_id > ? ORDER BY brain_id LIMIT 1",
                    (row[0],),
                ).fetchone()
        return sorted(ids)

    # --- creating and migrating (memgui/core/storage/migration.py) ---------------------------

    def _create_schema(self) -> None:
        self.conn.execute("PRAGMA journal_mode = WAL")
        with self._raw_transaction():
            migration.create_tables(self.conn)

    def prepare_migration(self) -> Path | None:
        """Before the first write to an older brain: its backup, under a temporary name
        (None when the brain is current); see `migration.prepare`."""
        return migration.prepare(self)

    def apply_migration(
        self,
        brain_ids: list[str],
        index_all: Callable[[], object],
        index_stems: Callable[[], object],
    ) -> bool:
        """Inside the first write's transaction: the schema changes, undone if it rolls back.
        False when another process migrated the brain meanwhile (nothing to do)."""
        return migration.apply(self, brain_ids, index_all, index_stems)

    def keep_backup(self, pending: Path) -> None:
        """Give the backup its final name (atomically: a re-run replaces an earlier one)."""
        migration.keep_backup(self, pending)

    def backup_path(self, target: int) -> Path:
        return migration.backup_path(self.path, target)

    # --- transactions ----------------------------------------------------------------------

    @contextmanager
    def _raw_transaction(self) -> Iterator[None]:
        with self.lock:
            begin_immediate(self, "write", None)
            try:
                yield
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def write(
        self, actor: str, operation: str, kind: str = "edit", wait_s: float | None = None
    ) -> WriteTransaction:
        """A write transaction with one journal batch; nested calls join the outer one.
        `wait_s`: how long to wait for another connection's write lock (default
        `write_wait_s`)."""
        return WriteTransaction(self, actor, operation, kind, wait_s)

    @property
    def bookkeeping_wait_s(self) -> float:
        """How long bookkeeping (a search's recalls, indexing before a search or at close)
        waits for another connection's write lock: past it, it is left for later."""
        return min(BOOKKEEPING_WAIT_S, self.write_wait_s)

    @property
    def in_write(self) -> bool:
        return self._batch is not None

    def data_version(self) -> int:
        with self.reading("checking for changes"):
            return int(self.conn.execute("PRAGMA data_version").get)

    def commit_counts(self) -> commit_count.CommitCounts:
        """Commits to the file by anyone and by this process, to tell another program's
        change from this process's own (`commit_count.who_changed`)."""
        return commit_count.CommitCounts(
            commit_count.commits_in_wal_index(Path(os.path.realpath(self.path))),
            commit_count.local_commits(self._identity),
        )

    def checkpoint(self) -> None:
        """Copy the WAL back into the file now, in this thread (under the writer lock)."""
        try:
            self.conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
        except apsw.BusyError:
            pass  # another connection is checkpointing
        except apsw.Error:
            log.exception("%s: checkpoint failed", self.path)

    def close(self) -> None:
        if self.checkpointer is not None:
            self.checkpointer.close()  # first: its last pass may wait for the writer lock
        with self.lock:
            if not self.readonly and file_identity(self.path) is None:
                self._fold_into_moved_file()
            self.conn.close()
            if self._counted:  # once, should it be closed twice
                self._counted = False
                commit_count.brain_closed(self._identity)

    def _fold_into_moved_file(self) -> None:
        """The file was moved away (or deleted) while open. SQLite does not checkpoint a
        moved file at close, which would leave its last writes in the `-wal` at the old
        path; copied through this connection, they go into the file wherever it is now, and
        the WAL left at the path is empty (nobody else can be using it: nothing is there)."""
        try:
            self.conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)
        except apsw.Error as exc:
            log.warning(
                "%s: moved away while open; its last writes stay in %s-wal (%s)",
                self.path,
                self.path,
                exc,
            )
